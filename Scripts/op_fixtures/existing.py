"""NumPy references for ops that predate the fixture script (softmax, elementwise broadcasting)."""
import numpy as np

rng = np.random.default_rng(9)


def f32(*shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def cases():
    for axis in (1, 2):
        x = f32(2, 3, 5)
        yield dict(name=f"softmax_axis{axis}", op="softmax", attributes={"axis": axis},
                   inputs=[x], outputs=[softmax(x.astype(np.float64), axis).astype(np.float32)])
    a, b = f32(2, 1, 4), f32(3, 1)
    for kind, fn in [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                     ("maximum", np.maximum), ("minimum", np.minimum)]:
        yield dict(name=f"elementwise_{kind}_broadcast", op="elementwise", attributes={"kind": kind},
                   inputs=[a, b], outputs=[fn(a, b)])
