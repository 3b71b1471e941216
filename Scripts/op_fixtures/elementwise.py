"""NumPy references for the elementwise math ops (issue 9): unary, binary, clip, and the
activations added with them. Formulas follow coremltools' MIL definitions
(converters/mil/mil/ops/defs/iOS15/elementwise_unary.py, elementwise_binary.py, activation.py):
round is np.round (half to even), mod is np.mod (sign of the divisor), floor_div is
np.floor_divide, clip is np.minimum(np.maximum(x, alpha), beta). float32 throughout, as MIL's
value inference on float32 tensors."""
import math
import numpy as np

rng = np.random.default_rng(19)
F = np.float32


def f32(*shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(F)


def unary_attrs(fn, alpha=0.0, epsilon=0.0, scale=1.0, shift=0.0):
    return {"function": fn, "alpha": alpha, "epsilon": epsilon, "scale": scale, "shift": shift}


def erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64)).astype(F)


UNARY = {
    "abs": lambda x, a, e: np.abs(x),
    "neg": lambda x, a, e: -x,
    "sqrt": lambda x, a, e: np.sqrt(x),
    "rsqrt": lambda x, a, e: F(1) / np.sqrt(x + F(e)),
    "inverse": lambda x, a, e: F(1) / (x + F(e)),
    "exp": lambda x, a, e: np.exp(x),
    "exp2": lambda x, a, e: np.exp2(x),
    "log": lambda x, a, e: np.log(x + F(e)),
    "sin": lambda x, a, e: np.sin(x),
    "cos": lambda x, a, e: np.cos(x),
    "tan": lambda x, a, e: np.tan(x),
    "erf": lambda x, a, e: erf(x),
    "floor": lambda x, a, e: np.floor(x),
    "ceil": lambda x, a, e: np.ceil(x),
    "round": lambda x, a, e: np.round(x),
    "sign": lambda x, a, e: np.sign(x),
    "square": lambda x, a, e: x * x,
    "threshold": lambda x, a, e: np.maximum(x, F(a)),
    "power": lambda x, a, e: np.power(x, F(a)),
}

POSITIVE = {"sqrt", "rsqrt", "log", "power"}


def unary_cases():
    for fn, f in UNARY.items():
        lo, hi = (0.05, 4.0) if fn in POSITIVE else (-4.0, 4.0)
        if fn == "tan":
            lo, hi = -1.4, 1.4
        x = f32(2, 3, 4, lo=lo, hi=hi)
        alpha = {"threshold": 0.3, "power": 2.5}.get(fn, 0.0)
        eps = {"rsqrt": 1e-12, "inverse": 1e-4, "log": 1e-45}.get(fn, 0.0)  # MIL defaults
        if fn == "round":
            x.flat[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -3.5], dtype=F)
        if fn == "sign":
            x.flat[:3] = np.array([0.0, -0.0, 2.0], dtype=F)
        if fn in ("abs", "exp", "sin", "square"):
            x.flat[:2] = np.array([30.0, -40.0], dtype=F) if fn != "exp" else np.array([60.0, -80.0], dtype=F)  # large magnitudes
        tol = 3e-5 if fn in ("tan", "exp", "exp2", "power", "erf") else 1e-5
        yield dict(name=f"unary_{fn}", op="unary", attributes=unary_attrs(fn, alpha, eps), inputs=[x],
                   outputs=[f(x, alpha, eps).astype(F)], tolerance=tol)
    # Core ML form: f(scale·x + shift).
    x = f32(1, 2, 3, 4)
    for fn, alpha, eps, scale, shift in [("sqrt", 0.0, 0.0, 2.0, 7.0), ("rsqrt", 0.0, 1e-6, 0.5, 2.0),
                                         ("inverse", 0.0, 1e-6, -1.5, 5.0), ("power", 3.0, 0.0, 0.5, -0.25),
                                         ("exp", 0.0, 0.0, -0.5, 1.0), ("log", 0.0, 0.0, 1.0, 3.5),
                                         ("abs", 0.0, 0.0, 2.0, -1.0), ("threshold", -0.2, 0.0, 1.5, 0.5)]:
        xs = (F(scale) * x + F(shift)).astype(F)
        yield dict(name=f"unary_{fn}_scale_shift", op="unary", attributes=unary_attrs(fn, alpha, eps, scale, shift),
                   inputs=[x], outputs=[UNARY[fn](xs, alpha, eps).astype(F)], tolerance=3e-5)
    # Zeros with epsilon: finite thanks to epsilon; without it, inf (and -inf for log).
    z = np.array([[0.0, 0.0, 1.0, 4.0], [0.25, 0.0, 9.0, 0.0]], dtype=F)
    for fn, eps in [("rsqrt", 1e-6), ("inverse", 1e-4), ("log", 1e-6), ("rsqrt", 0.0), ("inverse", 0.0), ("log", 0.0)]:
        with np.errstate(divide="ignore"):
            y = UNARY[fn](z, 0.0, eps).astype(F)
        yield dict(name=f"unary_{fn}_zeros_eps{eps:g}", op="unary", attributes=unary_attrs(fn, 0.0, eps),
                   inputs=[z], outputs=[y], tolerance=1e-5)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "real_div": np.divide, "floor_div": np.floor_divide,
    "mod": np.mod, "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
}


def binary_operands(fn, shape):
    if fn == "pow":
        return f32(*shape, lo=0.1, hi=3.0)
    if fn in ("real_div", "floor_div", "mod"):
        y = f32(*shape, lo=0.25, hi=3.0)
        return y * np.where(rng.uniform(size=shape) < 0.5, F(-1), F(1)).astype(F)  # both signs, no zeros
    return f32(*shape)


def binary_cases():
    shapes = [("same", (2, 3, 4), (2, 3, 4)), ("size1", (2, 1, 4), (3, 1)), ("rank1_rank4", (2, 3, 4, 5), (5,)),
              ("rank4_rank1", (5,), (2, 3, 4, 5)), ("scalar", (2, 3), (1,))]
    for fn, f in BINARY.items():
        for label, sa, sb in shapes:
            a = f32(*sa, lo=-6, hi=6) if fn != "pow" else f32(*sa, lo=-2, hi=2)
            b = binary_operands(fn, sb)
            if fn == "pow":
                a = np.abs(a) + F(0.1)  # non-integer exponents of negative bases are NaN
            with np.errstate(all="ignore"):
                y = f(a, b).astype(F)
            yield dict(name=f"binary_{fn}_{label}", op="binary", attributes={"function": fn}, inputs=[a, b], outputs=[y],
                       tolerance=3e-5 if fn == "pow" else 1e-5)
    # Python semantics of floor_div / mod with negative operands and exact multiples.
    a = np.array([7, -7, 7, -7, 6, -6, 1, 0.5, -0.5, 5.5], dtype=F)
    b = np.array([2, 2, -2, -2, 3, 3, 0.1, 1, 1, -2], dtype=F)
    for fn in ("floor_div", "mod"):
        yield dict(name=f"binary_{fn}_signs", op="binary", attributes={"function": fn}, inputs=[a, b], outputs=[BINARY[fn](a, b)])
    # Large magnitudes and a NaN for maximum / minimum (NaN propagates as np.maximum).
    a = np.array([1e30, -1e30, np.nan, 3.0, -0.0], dtype=F)
    b = np.array([-1e30, 1e30, 1.0, np.nan, 0.0], dtype=F)
    for fn in ("maximum", "minimum", "add", "mul"):
        with np.errstate(all="ignore"):
            y = BINARY[fn](a, b).astype(F)
        yield dict(name=f"binary_{fn}_extremes", op="binary", attributes={"function": fn}, inputs=[a, b], outputs=[y])
    # Constant second operand (weight "y").
    x = f32(2, 3, 4)
    for fn, w in [("mul", f32(3, 1)), ("add", f32(4)), ("sub", f32(1)), ("real_div", binary_operands("real_div", (4,))),
                  ("maximum", f32(1, 3, 1)), ("pow", np.array([2.0], dtype=F)), ("mod", binary_operands("mod", (3, 4)))]:
        yield dict(name=f"binary_{fn}_constant", op="binary", attributes={"function": fn}, inputs=[x], outputs=[BINARY[fn](x, w).astype(F)],
                   weights={"y": w})


def clip_cases():
    x = f32(2, 3, 5, lo=-5, hi=5)
    x.flat[:2] = np.array([1e30, -1e30], dtype=F)
    for label, lo, hi in [("sym", -1.0, 1.0), ("relu6", 0.0, 6.0), ("neg", -3.0, -1.0), ("lo_only", -0.5, float("inf")),
                          ("hi_only", float("-inf"), 0.25)]:
        y = np.minimum(np.maximum(x, F(lo)), F(hi)).astype(F)
        yield dict(name=f"clip_{label}", op="clip", attributes={"alpha": lo if math.isfinite(lo) else "-inf" if lo < 0 else "inf",
                                                               "beta": hi if math.isfinite(hi) else "-inf" if hi < 0 else "inf"},
                   inputs=[x], outputs=[y])


def softplus(x):
    return np.logaddexp(0, x)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def activation_cases():
    x = f32(2, 3, 7, lo=-6, hi=6).astype(np.float64)
    x.flat[:4] = [30.0, -30.0, 0.0, -3.0]
    acts = [
        ({"function": "mish"}, x * np.tanh(softplus(x))),
        ({"function": "hardSwish"}, x * np.clip(x + 3, 0, 6) / 6),
        ({"function": "parametricSoftplus", "alpha": 1.5, "beta": 0.75}, 1.5 * softplus(0.75 * x)),
        ({"function": "scaledTanh", "alpha": 1.7159, "beta": 0.6667}, 1.7159 * np.tanh(0.6667 * x)),
        ({"function": "geluSigmoid"}, x * sigmoid(1.702 * x)),
        ({"function": "logSigmoid"}, -softplus(-x)),
    ]
    for attrs, y in acts:
        yield dict(name=f"activation_{attrs['function']}", op="activation", attributes={"function": attrs},
                   inputs=[x.astype(F)], outputs=[y.astype(F)], tolerance=2e-5)


def cases():
    yield from unary_cases()
    yield from binary_cases()
    yield from clip_cases()
    yield from activation_cases()
