#!/usr/bin/env python3
"""Makes Fixtures/crashes/: inputs that once crashed mlconv, rebuilt from their description.

    /root/.cache/mlconv-venv/bin/python Scripts/make_crash_fixtures.py   # any python with numpy and h5py
    (PY=$(Scripts/python-env) gives that venv; crash_fixtures/keras.py writes HDF5 files with h5py)

Each module in Scripts/crash_fixtures/ defines cases() yielding dicts:
    file      path under Fixtures/crashes/ (e.g. "mlmodel/varint_2p63_channels.mlmodel")
    data      the file's bytes
    commands  list of mlconv argument lists; "{file}", "{tmp}" and "{fixtures}" are substituted
    why       what the input exercises (the crash it once caused)
Writes the files and Fixtures/crashes/cases.json (sorted by file), replayed by
Tests/MLConvCLITests/CrashRegressionTests.swift. Deterministic.
"""
import importlib.util, json, os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "crashes")
GROUPS = os.path.join(ROOT, "Scripts", "crash_fixtures")


def main():
    cases = []
    for fn in sorted(os.listdir(GROUPS)):
        if not fn.endswith(".py") or fn.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(fn[:-3], os.path.join(GROUPS, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for c in mod.cases():
            path = os.path.join(OUT, c["file"])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(c["data"])
            cases.append({"file": c["file"], "commands": c["commands"], "why": c["why"]})
    cases.sort(key=lambda c: c["file"])
    assert len({c["file"] for c in cases}) == len(cases), "duplicate file names"
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    print(f"make_crash_fixtures: {len(cases)} cases in {OUT}")


if __name__ == "__main__":
    main()
