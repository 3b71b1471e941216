"""NumPy references for conv1d / conv3d (channels last, weight [Cout, Cin/groups, k...]), pool1d /
pool3d (average excludes padding), and softmax / concat with negative axes (MIL convention:
-1 is the last axis). Formulas: coremltools MIL `conv`, `max_pool`, `avg_pool`
(ops/defs/iOS15/conv.py, pool.py) on NWC / NDHWC; TensorFlow / Keras 'same' padding (the odd
element at the end)."""
import itertools
import numpy as np

rng = np.random.default_rng(93)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def pads_for(padding, size, k, s, d):
    """(before, after) per spatial axis, as SpatialPadding.resolve."""
    if padding == "valid":
        return [(0, 0)] * len(size)
    if padding == "same":
        out = []
        for n, kk, ss, dd in zip(size, k, s, d):
            ek = (kk - 1) * dd + 1
            o = -(-n // ss)
            total = max((o - 1) * ss + ek - n, 0)
            out.append((total // 2, total - total // 2))
        return out
    r = len(size)
    return list(zip(padding[:r], padding[r:]))


def conv(x, w, b, k, s, d, padding, groups, act=None):
    """x [N, spatial..., Cin], w [Cout, Cin/g, k...] -> [N, out..., Cout], in float64."""
    x = x.astype(np.float64); w = w.astype(np.float64)
    r = x.ndim - 2
    pads = pads_for(padding, x.shape[1:-1], k, s, d)
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    cout, cg = w.shape[0], w.shape[1]
    outs = [(xp.shape[1 + i] - ((k[i] - 1) * d[i] + 1)) // s[i] + 1 for i in range(r)]
    y = np.zeros([x.shape[0]] + outs + [cout])
    coutg = cout // groups
    for oc in range(cout):
        g = oc // coutg
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + (outs[i] - 1) * s[i] + 1, s[i]) for i in range(r))
            patch = xp[(slice(None),) + sl + (slice(g * cg, (g + 1) * cg),)]  # [N, out..., Cg]
            y[..., oc] += patch @ w[(oc, slice(None)) + tap]
    if b is not None:
        y += b.astype(np.float64)
    if act == "relu":
        y = np.maximum(y, 0)
    elif act == "tanh":
        y = np.tanh(y)
    return y.astype(np.float32)


def pool(x, kind, k, s, padding):
    """Max / average (excluding padding) over windows of [N, spatial..., C]."""
    r = x.ndim - 2
    size = x.shape[1:-1]
    pads = pads_for(padding, size, k, s, [1] * r)
    outs = [(size[i] + pads[i][0] + pads[i][1] - k[i]) // s[i] + 1 for i in range(r)]
    y = np.zeros([x.shape[0]] + outs + [x.shape[-1]], dtype=np.float64)
    for o in itertools.product(*[range(n) for n in outs]):
        sl = []
        for i in range(r):
            start = o[i] * s[i] - pads[i][0]
            sl.append(slice(max(start, 0), min(start + k[i], size[i])))
        win = x[(slice(None),) + tuple(sl) + (slice(None),)].astype(np.float64)
        win = win.reshape(x.shape[0], -1, x.shape[-1])
        y[(slice(None),) + o + (slice(None),)] = win.max(axis=1) if kind == "max" else win.mean(axis=1)
    return y.astype(np.float32)


def conv_case(name, op, x, cout, k, s, d, padding, groups, act=None, bias=True):
    cg = x.shape[-1] // groups
    w = f32(cout, cg, *k, lo=-1, hi=1)
    b = f32(cout) if bias else None
    attrs = {"kernel": k, "strides": s, "dilations": d, "padding": padding, "groups": groups, "outputChannels": cout,
             "activation": {"function": act} if act else None}
    weights = {"weight": w}
    if bias:
        weights["bias"] = b
    return dict(name=name, op=op, attributes=attrs, inputs=[x], outputs=[conv(x, w, b, k, s, d, padding, groups, act)],
                weights=weights, tolerance=1e-4)


def deconv3d(x, w, b, k, s, d, padding, out_pad, groups, act=None):
    """Transposed convolution as DeconvNDAttributes: scatter into the full output
    (in-1)*s + (k-1)*d + 1 + out_pad, then crop (valid: none; same: output in*s + out_pad,
    start max(full - out, 0)//2; explicit: befores then afters). w [Cin, Cout/g, k...]."""
    x = x.astype(np.float64); w = w.astype(np.float64)
    n, cin = x.shape[0], x.shape[-1]
    og = w.shape[1]; cout = og * groups; cg = cin // groups
    ins = x.shape[1:4]
    full = [(ins[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 + out_pad[i] for i in range(3)]
    y = np.zeros([n] + full + [cout])
    for idx in itertools.product(*[range(v) for v in ins]):
        for tap in itertools.product(*[range(v) for v in k]):
            pos = tuple(idx[i] * s[i] + tap[i] * d[i] for i in range(3))
            for g in range(groups):
                xv = x[(slice(None),) + idx + (slice(g * cg, (g + 1) * cg),)]  # [N, cg]
                y[(slice(None),) + pos + (slice(g * og, (g + 1) * og),)] += xv @ w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap]
    if padding == "valid":
        start, out = [0] * 3, full
    elif padding == "same":
        out = [ins[i] * s[i] + out_pad[i] for i in range(3)]
        start = [max(full[i] - out[i], 0) // 2 for i in range(3)]
    else:
        start = padding[:3]
        out = [full[i] - padding[i] - padding[3 + i] for i in range(3)]
    yp = np.pad(y, [(0, 0)] + [(0, max(0, start[i] + out[i] - full[i])) for i in range(3)] + [(0, 0)])
    y = yp[:, start[0]:start[0] + out[0], start[1]:start[1] + out[1], start[2]:start[2] + out[2], :]
    if b is not None:
        y = y + b.astype(np.float64)
    if act == "relu":
        y = np.maximum(y, 0)
    return y.astype(np.float32)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def cases():
    # conv1d: NWC, weight [Cout, Cin/g, kW]
    yield conv_case("conv1d_valid", "conv1d", f32(2, 9, 3), 4, [3], [1], [1], "valid", 1)
    yield conv_case("conv1d_same_stride2_relu", "conv1d", f32(1, 10, 4), 5, [4], [2], [1], "same", 1, act="relu")
    yield conv_case("conv1d_same_dilated", "conv1d", f32(2, 8, 2), 3, [3], [1], [2], "same", 1)
    yield conv_case("conv1d_explicit_groups", "conv1d", f32(1, 7, 4), 6, [2], [3], [1], [2, 1], 2, bias=False)
    yield conv_case("conv1d_depthwise", "conv1d", f32(2, 6, 3), 6, [3], [1], [1], "same", 3, act="tanh")
    yield conv_case("conv1d_length1_kernel1", "conv1d", f32(3, 1, 5), 2, [1], [1], [1], "valid", 1)
    # conv3d: NDHWC, weight [Cout, Cin/g, kD, kH, kW]
    yield conv_case("conv3d_valid", "conv3d", f32(1, 4, 5, 3, 2), 3, [2, 3, 2], [1, 1, 1], [1, 1, 1], "valid", 1)
    yield conv_case("conv3d_same_strided_relu", "conv3d", f32(2, 5, 4, 4, 3), 4, [3, 3, 3], [2, 1, 2], [1, 1, 1], "same", 1, act="relu")
    yield conv_case("conv3d_dilated_groups", "conv3d", f32(1, 5, 5, 5, 4), 2, [2, 2, 2], [1, 2, 1], [2, 1, 2], "same", 2)
    yield conv_case("conv3d_explicit", "conv3d", f32(1, 3, 4, 2, 2), 2, [2, 1, 3], [1, 1, 1], [1, 1, 1],
                    [1, 0, 2, 0, 1, 1], 1, bias=False)
    yield conv_case("conv3d_depth1", "conv3d", f32(1, 1, 3, 3, 2), 2, [1, 2, 2], [1, 1, 1], [1, 1, 1], "valid", 2)
    # pool1d / pool3d
    for kind in ("max", "average"):
        for name, x, k, s, padding in [
            ("k3s2_same", f32(2, 7, 3), [3], [2], "same"),
            ("k2s1_valid", f32(1, 5, 2), [2], [1], "valid"),
            ("k3s1_explicit", f32(1, 4, 3), [3], [1], [1, 2]),
            ("k1_length1", f32(2, 1, 4), [1], [1], "same"),
        ]:
            yield dict(name=f"pool1d_{kind}_{name}", op="pool1d",
                       attributes={"kind": kind, "kernel": k, "strides": s, "padding": padding},
                       inputs=[x], outputs=[pool(x, kind, k, s, padding)])
        for name, x, k, s, padding in [
            ("k2s2_same", f32(1, 3, 5, 4, 2), [2, 2, 2], [2, 2, 2], "same"),
            ("k3_s1_valid", f32(2, 3, 4, 3, 3), [3, 2, 1], [1, 1, 1], "valid"),
            ("k3_s2_same_odd", f32(1, 5, 5, 5, 2), [3, 3, 3], [2, 2, 2], "same"),
            ("explicit", f32(1, 2, 3, 3, 2), [2, 2, 2], [1, 2, 1], [1, 0, 1, 0, 1, 1]),
        ]:
            yield dict(name=f"pool3d_{kind}_{name}", op="pool3d",
                       attributes={"kind": kind, "kernel": k, "strides": s, "padding": padding},
                       inputs=[x], outputs=[pool(x, kind, k, s, padding)])
    # deconv3d: NDHWC, weight [Cin, Cout/g, kD, kH, kW]
    for name, x, cout, k, st, d, padding, op_, groups, act, bias in [
        ("deconv3d_valid", f32(1, 2, 3, 2, 3), 2, [2, 2, 3], [1, 2, 1], [1, 1, 1], "valid", [0, 0, 0], 1, None, True),
        ("deconv3d_same_stride2_relu", f32(2, 2, 3, 3, 2), 3, [3, 3, 3], [2, 2, 2], [1, 1, 1], "same", [0, 0, 0], 1, "relu", True),
        ("deconv3d_same_outpad_groups", f32(1, 3, 2, 2, 4), 4, [2, 3, 2], [2, 2, 1], [1, 1, 1], "same", [1, 1, 0], 2, None, False),
        ("deconv3d_explicit_dilated", f32(1, 2, 2, 3, 2), 2, [2, 2, 2], [1, 2, 2], [2, 1, 1], [1, 0, 1, 0, 1, 0], [0, 1, 1], 1, None, True),
        ("deconv3d_same_kernel_below_stride", f32(1, 2, 2, 2, 1), 2, [1, 2, 1], [2, 3, 2], [1, 1, 1], "same", [0, 0, 0], 1, None, True),
    ]:
        w = f32(x.shape[-1], cout // groups, *k, lo=-1, hi=1)
        b = f32(cout) if bias else None
        weights = {"weight": w}
        if bias:
            weights["bias"] = b
        yield dict(name=name, op="deconv3d",
                   attributes={"kernel": k, "strides": st, "dilations": d, "padding": padding, "outputPadding": op_,
                               "groups": groups, "outputChannels": cout, "activation": {"function": act} if act else None},
                   inputs=[x], outputs=[deconv3d(x, w, b, k, st, d, padding, op_, groups, act)], weights=weights, tolerance=1e-4)
    # softmax with negative axes (MIL default axis = -1)
    for shape, axis in [((2, 3, 5), -1), ((2, 3, 5), -2), ((4, 6), -2), ((1, 2, 3, 4), -3), ((7,), -1)]:
        x = f32(*shape, lo=-4, hi=4)
        yield dict(name=f"softmax_negaxis_r{len(shape)}_{-axis}", op="softmax", attributes={"axis": axis},
                   inputs=[x], outputs=[softmax(x.astype(np.float64), axis).astype(np.float32)])
    # concat with negative axes
    for shapes, axis in [([(2, 3, 4), (2, 3, 1)], -1), ([(2, 1, 4), (2, 3, 4), (2, 2, 4)], -2), ([(1, 2), (3, 2)], -2),
                         ([(1, 2, 2, 3), (1, 2, 2, 2)], -1)]:
        xs = [f32(*s) for s in shapes]
        yield dict(name=f"concat_negaxis_r{len(shapes[0])}_{-axis}_{len(xs)}", op="concat", attributes={"axis": axis},
                   inputs=xs, outputs=[np.concatenate(xs, axis=axis)])
    # deconv1d: NWC, weight [Cin, Cout/g, k]; the reference lifts it to deconv3d with D = H = 1.
    # Own generator, so the cases above keep their values.
    r1 = np.random.default_rng(31)
    for name, shape, cout, k, st, d, padding, op_, groups, act in [
        ("deconv1d_valid", (1, 5, 3), 2, 3, 1, 1, "valid", 0, 1, None),
        ("deconv1d_same_stride2_relu", (2, 4, 2), 3, 3, 2, 1, "same", 1, 1, "relu"),
        ("deconv1d_explicit_groups", (1, 6, 4), 4, 2, 2, 1, [1, 0], 0, 2, None),
        ("deconv1d_dilated", (1, 4, 2), 2, 2, 1, 2, "valid", 0, 1, None),
    ]:
        x = r1.uniform(-2, 2, shape).astype(np.float32)
        w = r1.uniform(-1, 1, (shape[-1], cout // groups, k)).astype(np.float32)
        b = r1.uniform(-1, 1, cout).astype(np.float32)
        pad3 = padding if isinstance(padding, str) else [0, 0, padding[0], 0, 0, padding[1]]
        y = deconv3d(x[:, None, None], w[:, :, None, None], b, [1, 1, k], [1, 1, st], [1, 1, d], pad3, [0, 0, op_], groups, act)
        yield dict(name=name, op="deconv1d",
                   attributes={"kernel": [k], "strides": [st], "dilations": [d], "padding": padding, "outputPadding": [op_],
                               "groups": groups, "outputChannels": cout, "activation": {"function": act} if act else None},
                   inputs=[x], outputs=[y[:, 0, 0]], weights={"weight": w, "bias": b}, tolerance=1e-4)

