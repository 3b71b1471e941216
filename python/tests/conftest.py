import json
import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "Fixtures"
SHARED = REPO.parent / "shared"


def fixture(*parts):
    return FIXTURES.joinpath(*parts)


def classical_case(name):
    d = fixture("classical", name)
    case = json.loads((d / "case.json").read_text())
    return d / "model.mlmodel", json.loads((d / "inputs.json").read_text()), json.loads((d / "expected.json").read_text()), case


def decode_json_value(v):
    """Fixtures/classical/README.md: "NaN" strings stand for NaN doubles."""
    if isinstance(v, str) and v == "NaN":
        return float("nan")
    if isinstance(v, list):
        return [decode_json_value(x) for x in v]
    return v


def assert_close(got, expected, rel, abs_, what):
    """|got − expected| ≤ abs + rel·|expected| (Fixtures/classical/README.md), NaN equal to NaN."""
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(decode_json_value(expected), dtype=np.float64)
    assert g.shape == e.shape, f"{what}: shape {g.shape}, expected {e.shape}"
    ok = (np.abs(g - e) <= abs_ + rel * np.abs(e)) | (np.isnan(g) & np.isnan(e))
    assert ok.all(), f"{what}: got {g[~ok]}, expected {e[~ok]}"


def assert_row_matches(got, expected, case, what, int_keys=False):
    """Compares one prediction with a recorded row: same keys, same Python types as Core ML
    returns (int / str labels, dict probabilities, float doubles, NumPy arrays), values within the
    case's tolerance."""
    tol = case["tolerance"]
    rel, abs_ = tol["relative"], tol["absolute"]
    assert set(expected) <= set(got), f"{what}: outputs {sorted(got)}, expected {sorted(expected)}"
    for name, e in expected.items():
        g = got[name]
        w = f"{what}: {name}"
        if isinstance(e, dict):
            assert isinstance(g, dict), f"{w}: {type(g)}"
            keys = {(int(k) if int_keys else k) for k in e}
            assert set(g) == keys, f"{w}: keys {sorted(g)}, expected {sorted(keys)}"
            for k, v in e.items():
                assert isinstance(g[int(k) if int_keys else k], float)
                assert_close(g[int(k) if int_keys else k], v, rel, abs_, f"{w}[{k}]")
        elif isinstance(e, str):
            assert isinstance(g, str) and g == e, f"{w}: {g!r}, expected {e!r}"
        elif isinstance(e, bool) or isinstance(e, int):
            if isinstance(g, np.ndarray):
                assert_close(g, e, rel, abs_, w)
            else:
                assert isinstance(g, int), f"{w}: {type(g)}"
                assert g == e, f"{w}: {g}, expected {e}"
        elif isinstance(e, list):
            assert isinstance(g, (np.ndarray, list)), f"{w}: {type(g)}"
            if isinstance(g, np.ndarray):
                assert g.dtype in (np.float64, np.float32, np.int32), f"{w}: {g.dtype}"
            assert_close(g, e, rel, abs_, w)
        else:
            assert isinstance(g, (float, np.ndarray)), f"{w}: {type(g)}"
            assert_close(g, e, rel, abs_, w)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("mlconv-cache")
    os.environ["MLCONV_CACHE_DIR"] = str(d)
    return d
