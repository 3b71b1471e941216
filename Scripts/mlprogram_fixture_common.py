"""Helpers shared by the ML program fixture scripts (make_mlprogram_fixtures*.py).

Import-safe: needs only NumPy and the standard library; it writes nothing on import.
"""
import json
import os
import shutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "mlprogram")


def write_case(d, mlmodel, inputs, outputs, meta, input_dtype=np.float32):
    """Replaces directory `d` with model.mlpackage (`mlmodel.save`), input_<name>.npy (as
    `input_dtype`; None keeps each array's own dtype), expected_<name>.npy (float32) and case.json
    (`meta`). Returns the bytes written."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    mlmodel.save(os.path.join(d, "model.mlpackage"))
    for k, v in inputs.items():
        arr = np.ascontiguousarray(v) if input_dtype is None else np.ascontiguousarray(v, dtype=input_dtype)
        np.save(os.path.join(d, f"input_{k}.npy"), arr)
    for k, v in outputs.items():
        np.save(os.path.join(d, f"expected_{k}.npy"), np.ascontiguousarray(v, dtype=np.float32))
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(d) for x in fs)


def case_meta(inputs, outputs, precision="fp32", source="numpy"):
    """The case.json of a Fixtures/mlprogram case."""
    return {"inputs": list(inputs), "outputs": list(outputs), "precision": precision, "source": source}


def run_selected(groups, argv=None):
    """Runs the generators of `groups` ({name: function}, in order) named on the command line, or
    all of them when none is named."""
    want = set(sys.argv[1:] if argv is None else argv)
    for name, generate in groups.items():
        if not want or name in want:
            generate()
