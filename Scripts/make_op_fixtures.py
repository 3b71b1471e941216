#!/usr/bin/env python3
"""Makes Fixtures/ops/: NumPy references of each IR op's formula, the specification the reference
kernels are checked against (Tests/MLRuntimeTests/OpFixtureTests.swift).

    PY=$(Scripts/python-env) && "$PY" Scripts/make_op_fixtures.py   # or any python3 with numpy

Each module in Scripts/op_fixtures/ defines cases() yielding dicts:
    name        folder name under Fixtures/ops/ (unique; prefix it with the op kind)
    op          the OpKind raw value (e.g. "unary")
    attributes  the op's attributes in the bundle encoding (docs/BUNDLE_FORMAT.md, OpDefinition)
    inputs      list of numpy arrays (graph inputs in0, in1, ...); saved in their dtype (float32,
                float16, int32, int64, bool: the op's input element types; float64 reads as float32)
    outputs     list of numpy arrays (expected outputs out0, ...), saved in their dtype: the
                inferred output element types must match; int/bool outputs are compared exactly
    weights     optional dict role -> numpy array (float32)
    tolerance   optional max |ours - numpy| allowed, relative to max(1, |numpy|) (default 1e-5)
The folder gets in<i>.npy, out<i>.npy, w_<role>.npy and case.json. Deterministic: seeded.
Formulas follow coremltools' MIL op definitions (converters/mil/mil/ops/defs) where MIL has the op.
"""
import importlib.util, json, os, shutil, sys
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "ops")
GROUPS = os.path.join(ROOT, "Scripts", "op_fixtures")


def load_groups():
    for fn in sorted(os.listdir(GROUPS)):
        if fn.endswith(".py") and not fn.startswith("_"):
            spec = importlib.util.spec_from_file_location(fn[:-3], os.path.join(GROUPS, fn))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            yield fn[:-3], mod


def main():
    only = set(sys.argv[1:])  # optional group names: regenerate those groups only
    names = set()
    for group, mod in load_groups():
        if only and group not in only:
            continue
        for case in mod.cases():
            name = case["name"]
            assert name not in names, f"duplicate case {name}"
            names.add(name)
            d = os.path.join(OUT, name)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            for i, a in enumerate(case["inputs"]):
                np.save(os.path.join(d, f"in{i}.npy"), np.asarray(a))
            for i, a in enumerate(case["outputs"]):
                np.save(os.path.join(d, f"out{i}.npy"), np.asarray(a))
            for role, a in case.get("weights", {}).items():
                np.save(os.path.join(d, f"w_{role}.npy"), np.asarray(a, dtype=np.float32))
            meta = {"group": group, "op": case["op"], "attributes": case["attributes"],
                    "inputs": len(case["inputs"]), "outputs": len(case["outputs"]),
                    "weights": sorted(case.get("weights", {})), "tolerance": case.get("tolerance", 1e-5)}
            with open(os.path.join(d, "case.json"), "w") as f:
                json.dump(meta, f, indent=1, sort_keys=True)
                f.write("\n")
    print(f"make_op_fixtures: {len(names)} cases in {OUT}")


if __name__ == "__main__":
    main()
