"""NumPy references for the inverse-trigonometric and hyperbolic functions of `Op.unary` (asin,
acos, atan, sinh, cosh, tanh, asinh, acosh, atanh), added for Core ML's NeuralNetwork v2 layers of
those names (NeuralNetwork.proto: elementwise y = f(x)). MIL defines asin … atanh the same way
(converters/mil/mil/ops/defs/iOS15/elementwise_unary.py). Inputs are drawn inside each domain,
plus the domain edges and points outside it (NaN, ±inf), which must match NumPy too. float32."""
import numpy as np

rng = np.random.default_rng(23)
F = np.float32

# function -> (numpy function, (lo, hi) of the random inputs, special inputs)
TRIG = {
    "asin": (np.arcsin, (-1.0, 1.0), [-1.0, 1.0, 0.0, 1.5]),
    "acos": (np.arccos, (-1.0, 1.0), [-1.0, 1.0, 0.0, -2.0]),
    "atan": (np.arctan, (-6.0, 6.0), [0.0, 1e6, -1e6, 1.0]),
    "sinh": (np.sinh, (-4.0, 4.0), [0.0, 1e-4, -1e-4, 100.0]),
    "cosh": (np.cosh, (-4.0, 4.0), [0.0, 1e-4, -100.0, 3.0]),
    "tanh": (np.tanh, (-4.0, 4.0), [0.0, 1e-4, 20.0, -20.0]),
    "asinh": (np.arcsinh, (-6.0, 6.0), [0.0, 1e-4, -1e-4, -1e6]),
    "acosh": (np.arccosh, (1.0, 6.0), [1.0, 1e6, 0.5, 2.0]),
    "atanh": (np.arctanh, (-0.99, 0.99), [1.0, -1.0, 0.0, 2.0]),
}


def cases():
    for fn, (f, (lo, hi), special) in TRIG.items():
        x = rng.uniform(lo, hi, size=(2, 3, 4)).astype(F)
        x.flat[:len(special)] = np.array(special, dtype=F)
        with np.errstate(all="ignore"):
            y = f(x).astype(F)
        yield dict(name=f"unary_{fn}", op="unary",
                   attributes={"function": fn, "alpha": 0.0, "epsilon": 0.0, "scale": 1.0, "shift": 0.0},
                   inputs=[x], outputs=[y], tolerance=2e-5)
    # The affine form Core ML's unary layer has, on one function: f(scale·x + shift).
    x = rng.uniform(-1.0, 1.0, size=(1, 2, 3, 4)).astype(F)
    xs = (F(0.5) * x + F(0.25)).astype(F)
    yield dict(name="unary_asin_scale_shift", op="unary",
               attributes={"function": "asin", "alpha": 0.0, "epsilon": 0.0, "scale": 0.5, "shift": 0.25},
               inputs=[x], outputs=[np.arcsin(xs).astype(F)], tolerance=2e-5)
