"""NumPy references for the run-time shape ops: `shape` (MIL shape: int32 dimensions of any
tensor) and `fill` whose shape comes from an input tensor (MIL fill with a tensor shape: the value
cast to dtype like MIL cast, float -> int truncating toward zero). The dynamic fill's output
shape is unknown until prediction, so OpFixtureTests runs these cases through Model (dynamic
executor). cond, whileLoop and the list ops own blocks or take lists, which .npy cannot hold:
Tests/MLRuntimeTests/ControlFlowTests.swift computes their references in Swift.
"""
import numpy as np

rng = np.random.default_rng(91)


def num(v):
    return int(v) if float(v).is_integer() else float(v)


def cases():
    for name, x in [("rank1_f32", rng.standard_normal(5).astype(np.float32)),
                    ("rank4_i64", rng.integers(-5, 5, size=(1, 2, 3, 4)).astype(np.int64)),
                    ("rank3_bool", rng.integers(0, 2, size=(3, 1, 2)).astype(bool)),
                    ("rank2_f16", rng.standard_normal((4, 7)).astype(np.float16))]:
        yield dict(name=f"shape_{name}", op="shape", attributes={}, inputs=[x],
                   outputs=[np.array(x.shape, dtype=np.int32)])
    for name, shape, sdt, value, dt, npdt in [
            ("i32_fp32", [2, 3], np.int32, 1.5, "fp32", np.float32),
            ("i64_int64", [4], np.int64, 7.0, "int64", np.int64),
            ("f32_int32_trunc", [1, 3, 2], np.float32, -2.5, "int32", np.int32),
            ("i32_bool", [2, 1, 1, 2], np.int32, 0.5, "bool", bool)]:
        if npdt is bool:
            y = np.full(shape, value != 0, dtype=bool)
        elif np.issubdtype(npdt, np.integer):
            y = np.full(shape, np.trunc(value), dtype=npdt)
        else:
            y = np.full(shape, value, dtype=npdt)
        yield dict(name=f"fill_dynamic_{name}", op="fill", attributes={"shape": [], "value": num(value), "dtype": dt},
                   inputs=[np.array(shape, dtype=sdt)], outputs=[y])
