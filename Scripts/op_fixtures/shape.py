"""NumPy references for matmul, constant and the data-movement ops (issue 9), following
coremltools' MIL definitions (ops/defs/iOS15/linear.py, tensor_transformation.py,
tensor_operation.py, image_resizing.py). Resize, space/depth ops are on NHWC."""
import numpy as np

rng = np.random.default_rng(90)


def f32(*shape):
    return rng.uniform(-3.0, 3.0, size=shape).astype(np.float32)


def mm(x, y, tx, ty):
    if tx:
        x = np.swapaxes(x, -1, -2)
    if ty and y.ndim > 1:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)


def slice_by_index(x, begin, end, stride, bm, em, sm):
    sl, sq = [], []
    for d in range(x.ndim):
        b = None if bm[d] else begin[d]
        e = None if em[d] else end[d]
        s = stride[d]
        if sm[d]:
            e, s = None, 2147483647
            sq.append(d)
        sl.append(slice(b, e, s))
    r = x[tuple(sl)]
    return np.squeeze(r, axis=tuple(sq)) if sq else r


def s2d(x, b):  # NHWC, DCR (TF space_to_depth)
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // b, w // b, b * b * c)


def d2s(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * b, w * b, c // (b * b))


def coord(mode, i, xin, xout):
    i = np.float64(i)
    if mode == "ALIGN_CORNERS":
        g = (xin - 1) / 2 if xout == 1 else i * (xin - 1) / (xout - 1)
    elif mode == "STRICT_ALIGN_CORNERS":
        g = 0.0 if xout == 1 else i * (xin - 1) / (xout - 1)
    elif mode == "HALF_PIXEL":
        g = (i + 0.5) * xin / xout - 0.5
    else:
        g = i * xin / xout
    return min(xin - 1, max(0.0, g))


def nearest(mode, i, xin, xout):
    if mode == "ASYMMETRIC":
        v = np.floor(i * xin / xout)
    elif mode == "HALF_PIXEL":
        v = np.floor((i + 0.5) * xin / xout)
    else:
        g = coord(mode, i, xin, xout)
        v = np.floor(g + 0.5)  # g >= 0: half away from zero
    return int(min(xin - 1, max(0, v)))


def resize(x, method, mode, oh, ow):
    n, h, w, c = x.shape
    xd = x.astype(np.float64)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            if method == "nearest":
                out[:, i, j] = xd[:, nearest(mode, i, h, oh), nearest(mode, j, w, ow)]
                continue
            gy, gx = coord(mode, i, h, oh), coord(mode, j, w, ow)
            y0, x0 = int(np.floor(gy)), int(np.floor(gx))
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            fy, fx = gy - y0, gx - x0
            top = xd[:, y0, x0] * (1 - fx) + xd[:, y0, x1] * fx
            bot = xd[:, y1, x0] * (1 - fx) + xd[:, y1, x1] * fx
            out[:, i, j] = top * (1 - fy) + bot * fy
    return out.astype(np.float32)


def band_part(x, lower, upper):
    m, n = x.shape[-2:]
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, 0).astype(np.float32)


def cumsum(x, axis, exclusive, reverse):
    v = x.astype(np.float64)
    if reverse:
        v = np.flip(v, axis)
    c = np.cumsum(v, axis=axis)
    if exclusive:
        c = c - v
    if reverse:
        c = np.flip(c, axis)
    return c.astype(np.float32)


def cases():
    # matmul: both operands activations, then a constant "y".
    mats = [("2d", (3, 4), (4, 5), False, False), ("rank1_x_rank3", (4,), (2, 4, 3), False, False),
            ("rank3_x_rank1", (2, 3, 4), (4,), False, False), ("batch_broadcast", (2, 1, 3, 4), (5, 4, 2), False, False),
            ("transpose_both", (2, 4, 3), (2, 5, 4), True, True), ("transpose_x", (1, 4, 3), (3, 4, 2), True, False),
            ("transpose_y_rank5", (2, 1, 2, 3, 4), (3, 1, 5, 4), False, True), ("size1_dims", (1, 1, 4), (1, 4, 1), False, False)]
    for name, xs, ys, tx, ty in mats:
        x, y = f32(*xs), f32(*ys)
        yield dict(name=f"matmul_{name}", op="matmul", attributes={"transpose_x": tx, "transpose_y": ty},
                   inputs=[x, y], outputs=[mm(x, y, tx, ty)], tolerance=1e-5)
    for name, xs, ys, tx, ty in [("const_2d", (3, 4), (4, 5), False, False), ("const_broadcast_ty", (2, 3, 4), (6, 4), False, True),
                                 ("const_batched", (2, 3, 4), (2, 4, 5), False, False)]:
        x, y = f32(*xs), f32(*ys)
        yield dict(name=f"matmul_{name}", op="matmul", attributes={"transpose_x": tx, "transpose_y": ty},
                   inputs=[x], weights={"y": y}, outputs=[mm(x, y, tx, ty)])

    v = f32(2, 3, 4)
    yield dict(name="constant_rank3", op="constant", attributes={}, inputs=[], weights={"value": v}, outputs=[v])

    for name, shape, axes in [("neg_axis", (2, 1, 3, 1), [-1]), ("all", (1, 3, 1, 4, 1), []), ("two", (2, 1, 1, 3), [1, -2]),
                              ("rank5_keep1", (1, 2, 1, 3, 1), [0, 4])]:
        x = f32(*shape)
        out = np.squeeze(x) if not axes else np.squeeze(x, axis=tuple(axes))
        yield dict(name=f"squeeze_{name}", op="squeeze", attributes={"axes": axes}, inputs=[x], outputs=[out])

    for name, shape, axes in [("front_back", (2, 3), [0, -1]), ("neg_middle", (2, 3, 4), [-3]), ("rank1", (5,), [1, 0])]:
        x = f32(*shape)
        out_rank = x.ndim + len(axes)
        res = list(x.shape)
        for a in sorted(a + out_rank if a < 0 else a for a in axes):
            res.insert(a, 1)
        yield dict(name=f"expandDims_{name}", op="expandDims", attributes={"axes": axes}, inputs=[x], outputs=[x.reshape(res)])

    for name, shape, axis, n in [("axis0", (2, 3), 0, 3), ("last_neg", (2, 3), -1, 2), ("rank1", (4,), 1, 2), ("rank4_mid", (1, 2, 3, 2), 2, 3)]:
        xs = [f32(*shape) for _ in range(n)]
        yield dict(name=f"stack_{name}", op="stack", attributes={"axis": axis}, inputs=xs, outputs=[np.stack(xs, axis=axis)])

    x = f32(2, 6, 3)
    yield dict(name="split_num", op="split", attributes={"axis": 1, "num_splits": 3}, inputs=[x], outputs=np.split(x, 3, axis=1))
    yield dict(name="split_uneven_sizes", op="split", attributes={"axis": -2, "split_sizes": [1, 4, 1]}, inputs=[x],
               outputs=np.split(x, [1, 5], axis=1))
    x1 = f32(7)
    yield dict(name="split_rank1", op="split", attributes={"axis": 0, "split_sizes": [2, 5]}, inputs=[x1], outputs=np.split(x1, [2]))

    sl = [("basic", (4, 5), [1, 0], [3, 5], [1, 2], [False] * 2, [False] * 2, [False] * 2),
          ("neg_stride", (4, 6), [-1, 5], [0, -7], [-1, -2], [False] * 2, [False, False], [False] * 2),
          ("masks", (3, 4, 5), [2, 1, 4], [0, 3, 0], [1, 1, -1], [True, False, False], [True, False, True], [False] * 3),
          ("squeeze", (3, 4, 5), [1, -2, 0], [2, 0, 5], [1, 1, 2], [False, False, True], [False, True, False], [True, False, False]),
          ("clamp", (4, 5), [-10, 2], [10, 100], [3, 1], [False] * 2, [False] * 2, [False] * 2),
          ("rank1_rev", (6,), [0], [0], [-1], [True], [True], [False]),
          ("rank5", (2, 3, 1, 4, 2), [0, 2, 0, 3, 0], [2, 0, 1, 0, 2], [1, -1, 1, -2, 1], [False] * 5, [False] * 5, [False] * 5)]
    for name, shape, b, e, s, bm, em, sm in sl:
        x = f32(*shape)
        yield dict(name=f"sliceByIndex_{name}", op="sliceByIndex",
                   attributes={"begin": b, "end": e, "stride": s, "begin_mask": bm, "end_mask": em, "squeeze_mask": sm},
                   inputs=[x], outputs=[slice_by_index(x, b, e, s, bm, em, sm)])

    for name, shape, b, s in [("to_end", (3, 5), [1, 2], [-1, -1]), ("neg_begin", (2, 4, 5), [0, -3, 1], [2, 2, 3]), ("rank1", (6,), [2], [3])]:
        x = f32(*shape)
        idx = tuple(slice(bb % n, (bb % n) + (n - bb % n if ss == -1 else ss)) for bb, ss, n in zip(b, s, shape))
        yield dict(name=f"sliceBySize_{name}", op="sliceBySize", attributes={"begin": b, "size": s}, inputs=[x], outputs=[x[idx]])

    for name, shape, reps in [("ones", (2, 3), [1, 1]), ("mixed", (2, 1, 3), [2, 3, 1]), ("short_reps", (2, 3), [2]),
                              ("long_reps", (3,), [2, 1, 2]), ("rank4", (1, 2, 2, 1), [1, 2, 1, 3])]:
        x = f32(*shape)
        yield dict(name=f"tile_{name}", op="tile", attributes={"reps": reps}, inputs=[x], outputs=[np.tile(x, reps)])

    for b, shape in [(2, (1, 4, 6, 3)), (3, (2, 3, 3, 1))]:
        x = f32(*shape)
        yield dict(name=f"spaceToDepth_b{b}", op="spaceToDepth", attributes={"block_size": b}, inputs=[x], outputs=[s2d(x, b)])
    for b, shape in [(2, (1, 2, 3, 8)), (3, (2, 1, 2, 9))]:
        x = f32(*shape)
        yield dict(name=f"depthToSpace_b{b}", op="depthToSpace", attributes={"block_size": b}, inputs=[x], outputs=[d2s(x, b)])

    x = f32(2, 4, 5, 3)
    modes = ["ALIGN_CORNERS", "STRICT_ALIGN_CORNERS", "HALF_PIXEL", "ASYMMETRIC"]
    for method in ["nearest", "bilinear"]:
        for mode in modes:
            for tag, size in [("up", [7, 9]), ("down", [3, 2]), ("to1", [1, 1])]:
                yield dict(name=f"resize_{method}_{mode.lower()}_{tag}", op="resize",
                           attributes={"method": method, "sampling_mode": mode, "size": size},
                           inputs=[x], outputs=[resize(x, method, mode, *size)])
            for tag, scale in [("scale_frac", [1.5, 0.7]), ("scale_int", [2, 3])]:
                oh = int(np.floor(np.float32(x.shape[1]) * np.float32(scale[0])))
                ow = int(np.floor(np.float32(x.shape[2]) * np.float32(scale[1])))
                yield dict(name=f"resize_{method}_{mode.lower()}_{tag}", op="resize",
                           attributes={"method": method, "sampling_mode": mode, "scale": scale},
                           inputs=[x], outputs=[resize(x, method, mode, oh, ow)])

    for name, shape, lo, up in [("lower_tri", (4, 4), -1, 0), ("upper_tri", (2, 3, 5), 0, -1), ("band", (2, 5, 4), 1, 2),
                                ("diag", (3, 3), 0, 0), ("all", (1, 2, 3, 4), -1, -1)]:
        x = f32(*shape)
        yield dict(name=f"bandPart_{name}", op="bandPart", attributes={"lower": lo, "upper": up}, inputs=[x],
                   outputs=[band_part(x, lo, up)])

    for name, shape, axis, ex, rev in [("axis0", (4, 3), 0, False, False), ("neg_exclusive", (2, 3, 5), -1, True, False),
                                       ("reverse", (2, 4, 3), 1, False, True), ("both", (3, 4), -2, True, True), ("rank1", (6,), 0, False, False)]:
        x = f32(*shape)
        yield dict(name=f"cumsum_{name}", op="cumsum", attributes={"axis": axis, "exclusive": ex, "reverse": rev}, inputs=[x],
                   outputs=[cumsum(x, axis, ex, rev)])

    # Rank-0 results (shape ()): a dot product and a squeeze of every axis. Own generator, so the
    # cases above keep their values.
    r0 = np.random.default_rng(70)
    x, y = r0.uniform(-2, 2, 5).astype(np.float32), r0.uniform(-2, 2, 5).astype(np.float32)
    yield dict(name="matmul_rank1_dot_rank0", op="matmul", attributes={"transpose_x": False, "transpose_y": False},
               inputs=[x, y], outputs=[mm(x, y, False, False)])
    z = r0.uniform(-2, 2, (1, 1, 1)).astype(np.float32)
    yield dict(name="squeeze_to_rank0", op="squeeze", attributes={"axes": []}, inputs=[z], outputs=[np.squeeze(z)])

    # reshapeND (MIL reshape: the full shape, batch included; -1 inferred; rank 0 allowed).
    for name, shape, target in [("batch_merge", (2, 3, 4), [6, -1]), ("to_rank1", (2, 3), [-1]), ("split_batch", (6, 2), [2, 3, 2]),
                                ("to_rank0", (1, 1), [])]:
        x = r0.uniform(-2, 2, shape).astype(np.float32)
        yield dict(name=f"reshapeND_{name}", op="reshapeND", attributes={"shape": target}, inputs=[x],
                   outputs=[x.reshape(target if target else ())])

