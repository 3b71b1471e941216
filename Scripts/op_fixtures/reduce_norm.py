"""NumPy references for reductions and normalisations: reduce (MIL reduce_*), logSoftmax,
layerNorm (MIL layer_norm), instanceNorm (MIL instance_norm, channels-last), l2Norm (MIL l2_norm),
localResponseNorm (MIL local_response_norm / Core ML lrn, channels-last).

Formulas follow coremltools converters/mil/mil/ops/defs/iOS15/{reduction,normalization}.py.
A full reduction without keep_dims gives a rank-0 tensor (shape ()), as MIL and NumPy."""
import numpy as np

rng = np.random.default_rng(2024)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


REDUCE = {
    "sum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "mean": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
    "prod": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "max": lambda x, a, k: np.max(x, axis=a, keepdims=k),
    "min": lambda x, a, k: np.min(x, axis=a, keepdims=k),
    "l1_norm": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
    "l2_norm": lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
    "log_sum_exp": lambda x, a, k: np.log(np.sum(np.exp(x), axis=a, keepdims=k)),
    "sum_square": lambda x, a, k: np.sum(x * x, axis=a, keepdims=k),
}


def reduce_ref(fn, x, axes, keep):
    a = tuple(axes) if axes else None
    y = REDUCE[fn](x.astype(np.float64), a, keep)
    y = np.asarray(y, dtype=np.float32)
    return y


def resolve(axes, rank):
    return sorted(a + rank if a < 0 else a for a in axes) if axes else list(range(rank))


def layer_norm(x, axes, gamma, beta, eps):
    x = x.astype(np.float64)
    r = resolve(axes, x.ndim)
    shape = [x.shape[i] if i in r else 1 for i in range(x.ndim)]
    mean = x.mean(axis=tuple(r), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=tuple(r), keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma.astype(np.float64).reshape(shape)
    if beta is not None:
        y = y + beta.astype(np.float64).reshape(shape)
    return y.astype(np.float32)


def instance_norm(x, gamma, beta, eps):
    x = x.astype(np.float64)
    axes = tuple(range(1, x.ndim - 1))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma.astype(np.float64)
    if beta is not None:
        y = y + beta.astype(np.float64)
    return y.astype(np.float32)


def l2_norm(x, axes, eps):
    x = x.astype(np.float64)
    r = tuple(resolve(axes, x.ndim))
    return (x / np.sqrt(np.sum(x * x, axis=r, keepdims=True) + eps)).astype(np.float32)


def lrn(x, size, alpha, beta, k):
    # channels last; window [c - floor((size-1)/2), c + ceil((size-1)/2)] (ONNX / Caffe / oneDNN)
    x = x.astype(np.float64)
    c = x.shape[-1]
    sq = x * x
    acc = np.zeros_like(x)
    lo, hi = (size - 1) // 2, size // 2
    for i in range(c):
        acc[..., i] = sq[..., max(0, i - lo):min(c - 1, i + hi) + 1].sum(axis=-1)
    return (x / (k + alpha / size * acc) ** beta).astype(np.float32)


def log_softmax(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return (x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).astype(np.float32)


def cases():
    # reduce: every function × axes sets × keep_dims, ranks 1..4, size-1 axes
    shapes_axes = [
        ((7,), [0]), ((7,), []),
        ((3, 5), [1]), ((3, 5), [-2]),
        ((2, 3, 4), [0, 2]), ((2, 3, 4), [-1, 1]),
        ((2, 1, 3, 4), [1]), ((2, 1, 3, 4), [1, 2]), ((2, 3, 1, 5), [-3, -2, -1]), ((2, 3, 4, 2), []),
    ]
    for fn in REDUCE:
        for si, (shape, axes) in enumerate(shapes_axes):
            for keep in (False, True):
                lo, hi = (0.5, 1.5) if fn == "prod" else (-2.0, 2.0)
                x = f32(*shape, lo=lo, hi=hi)
                yield dict(name=f"reduce_{fn}_{si}_{'keep' if keep else 'drop'}", op="reduce",
                           attributes={"function": fn, "axes": axes, "keep_dims": keep},
                           inputs=[x], outputs=[reduce_ref(fn, x, axes, keep)], tolerance=1e-5)
    # log-sum-exp of large values (max subtracted) and of a slice containing -inf
    x = f32(2, 6, lo=80, hi=100)
    yield dict(name="reduce_log_sum_exp_large", op="reduce", attributes={"function": "log_sum_exp", "axes": [-1], "keep_dims": False},
               inputs=[x], outputs=[reduce_ref("log_sum_exp", x, [-1], False)])
    x = f32(2, 4)
    x[0, 1] = -np.inf
    yield dict(name="reduce_log_sum_exp_neginf", op="reduce", attributes={"function": "log_sum_exp", "axes": [1], "keep_dims": True},
               inputs=[x], outputs=[reduce_ref("log_sum_exp", x, [1], True)])

    # logSoftmax: every axis, negative axes, size-1 axis, large values
    for axis in (0, 1, 2, -1, -3):
        x = f32(2, 3, 5, lo=-5, hi=5)
        yield dict(name=f"logsoftmax_axis{axis}", op="logSoftmax", attributes={"axis": axis},
                   inputs=[x], outputs=[log_softmax(x, axis)])
    x = f32(4, 1)
    yield dict(name="logsoftmax_size1", op="logSoftmax", attributes={"axis": -1}, inputs=[x], outputs=[log_softmax(x, -1)])
    x = f32(3, 7, lo=-200, hi=200)
    yield dict(name="logsoftmax_large", op="logSoftmax", attributes={"axis": 1}, inputs=[x], outputs=[log_softmax(x, 1)], tolerance=2e-5)

    # layerNorm: axes sets, with and without gamma/beta
    for i, (shape, axes) in enumerate([((2, 3, 4), [-1]), ((2, 3, 4), [1, 2]), ((2, 4, 3, 5), [-3, -2, -1]),
                                       ((2, 4, 3, 5), [1, 2]), ((6,), []), ((2, 1, 5), [1]), ((3, 4, 2), [0, 2])]):
        for affine in (False, True):
            x = f32(*shape, lo=-3, hi=5)
            r = resolve(axes, len(shape))
            wshape = [shape[a] for a in r]
            w = {}
            if affine:
                w = {"gamma": f32(*wshape, lo=0.5, hi=1.5), "beta": f32(*wshape)}
            yield dict(name=f"layernorm_{i}_{'affine' if affine else 'plain'}", op="layerNorm",
                       attributes={"axes": axes, "epsilon": 1e-5}, inputs=[x],
                       outputs=[layer_norm(x, axes, w.get("gamma"), w.get("beta"), 1e-5)], weights=w, tolerance=2e-5)
    x = f32(2, 3, 4)
    yield dict(name="layernorm_gamma_only", op="layerNorm", attributes={"axes": [-1], "epsilon": 0.1}, inputs=[x],
               outputs=[layer_norm(x, [-1], np.arange(1, 5, dtype=np.float32), None, 0.1)],
               weights={"gamma": np.arange(1, 5, dtype=np.float32)}, tolerance=2e-5)

    # instanceNorm: NHWC and [N, L, C], with and without gamma/beta
    for i, shape in enumerate([(2, 3, 4, 5), (1, 6, 3), (2, 1, 1, 3)]):
        for affine in (False, True):
            x = f32(*shape, lo=-1, hi=4)
            c = shape[-1]
            w = {"gamma": f32(c, lo=0.5, hi=1.5), "beta": f32(c)} if affine else {}
            yield dict(name=f"instancenorm_{i}_{'affine' if affine else 'plain'}", op="instanceNorm",
                       attributes={"epsilon": 1e-3}, inputs=[x],
                       outputs=[instance_norm(x, w.get("gamma"), w.get("beta"), 1e-3)], weights=w, tolerance=2e-5)

    # l2Norm: MIL's last three axes, other sets, epsilon dominating
    for i, (shape, axes, eps) in enumerate([((2, 3, 4, 5), [-3, -2, -1], 1e-6), ((1, 4, 4), [], 1e-6), ((3, 5), [1], 1e-6),
                                             ((2, 3, 4), [0, 2], 1e-6), ((2, 3), [-1], 100.5)]):
        x = f32(*shape)
        yield dict(name=f"l2norm_{i}", op="l2Norm", attributes={"axes": axes, "epsilon": eps}, inputs=[x],
                   outputs=[l2_norm(x, axes, eps)])

    # localResponseNorm: odd and even sizes (float attributes are kept non-integral: case.json
    # reads 2.0 back as the integer 2, and the re-encoding check compares types), window wider than C, size 1
    for i, (shape, size, alpha, beta, k) in enumerate([((1, 3, 3, 7), 5, 1e-2, 0.75, 2.5), ((2, 2, 2, 6), 4, 0.5, 0.75, 1.25),
                                                        ((1, 2, 2, 3), 7, 0.9, 0.5, 1.25), ((2, 5), 1, 2.1, 2.75, 7.5),
                                                        ((1, 4, 8), 2, 1e-1, 1.5, 0.5)]):
        x = f32(*shape, lo=-3, hi=3)
        yield dict(name=f"lrn_{i}_size{size}", op="localResponseNorm",
                   attributes={"size": size, "alpha": alpha, "beta": beta, "k": k}, inputs=[x],
                   outputs=[lrn(x, size, alpha, beta, k)], tolerance=2e-5)
