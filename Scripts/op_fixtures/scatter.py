"""NumPy references for scatter, scatterND, scatterAlongAxis, reverse, reverseSequence, argsort,
einsum, slidingWindows and nonMaximumSuppression (MIL scatter, scatter_nd, scatter_along_axis,
reverse, reverse_sequence, argsort, einsum, sliding_windows, non_maximum_suppression in
coremltools converters/mil/mil/ops/defs/iOS15).

Conventions checked here (see the ops' docs in Sources/MLGraph/Op.swift):
- scatters apply updates one at a time in row-major order (duplicates accumulate: NumPy
  `ufunc.at`; `update` keeps the last), negative indices wrap once, out-of-range indices are
  skipped; integer division truncates toward zero and a zero divisor gives 0;
- reverseSequence clamps lengths to 0..n;
- argsort is stable, descending by default, NaN ranks above +inf;
- NMS pads rows past the count with zeros (boxes, scores) and -1 (indices).
Each scatter reference is computed twice where NumPy can (an explicit loop and `ufunc.at`), and
the two must agree.
"""
import numpy as np

rng = np.random.default_rng(91)

UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum, "min": np.minimum}


def f32(*shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def ints(*shape, lo=-5, hi=6, dtype=np.int32):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def num(v):
    return int(v) if float(v).is_integer() else float(v)


def combine(v, u, mode):
    """One scatter step on NumPy scalars of the data's dtype."""
    if mode == "update":
        return u
    if np.issubdtype(type(v), np.integer):
        v, u = int(v), int(u)
        if mode == "div":
            if u == 0:
                return 0
            q = abs(v) // abs(u)
            return q if (v >= 0) == (u >= 0) else -q
        return {"add": v + u, "sub": v - u, "mul": v * u, "max": max(v, u), "min": min(v, u)}[mode]
    return UFUNC[mode](v, u)


def sequential(data, steps, mode):
    """Applies (position tuple, update value) steps in order; positions None are skipped."""
    out = data.copy()
    for pos, u in steps:
        if pos is not None:
            out[pos] = combine(out[pos], u, mode)
    return out


def wrap(i, n):
    j = i + n if i < 0 else i
    return j if 0 <= j < n else None


def ref_scatter(data, indices, updates, axis, mode):
    axis = axis % data.ndim
    ind = indices.reshape(-1)
    upd = np.moveaxis(updates.reshape(data.shape[:axis] + (ind.size,) + data.shape[axis + 1:]), axis, 0)
    steps = []
    outer = np.ndindex(*data.shape[:axis])
    for o in outer:
        for j, i in enumerate(ind):
            k = wrap(int(i), data.shape[axis])
            for rest in np.ndindex(*data.shape[axis + 1:]):
                pos = None if k is None else o + (k,) + rest
                steps.append((pos, upd[(j,) + o + rest]))
    out = sequential(data, steps, mode)
    if mode in UFUNC and not (mode == "div" and np.issubdtype(data.dtype, np.integer)):
        valid = np.array([wrap(int(i), data.shape[axis]) is not None for i in ind])
        alt = data.copy()
        sl = (slice(None),) * axis
        u = np.moveaxis(upd[valid], 0, axis)
        UFUNC[mode].at(alt, sl + (ind[valid],), u)
        assert np.array_equal(alt, out, equal_nan=True), "scatter: loop and ufunc.at disagree"
    return out


def ref_scatter_nd(data, indices, updates, mode):
    k = indices.shape[-1]
    tuples = indices.reshape(-1, k)
    slice_shape = data.shape[k:]
    upd = updates.reshape((tuples.shape[0],) + slice_shape)
    steps = []
    for t, tu in enumerate(tuples):
        ws = [wrap(int(v), data.shape[d]) for d, v in enumerate(tu)]
        for rest in np.ndindex(*slice_shape):
            pos = None if any(w is None for w in ws) else tuple(ws) + rest
            steps.append((pos, upd[(t,) + rest]))
    return sequential(data, steps, mode)


def ref_scatter_along_axis(data, indices, updates, axis, mode):
    axis = axis % data.ndim
    steps = []
    for p in np.ndindex(*indices.shape):
        k = wrap(int(indices[p]), data.shape[axis])
        pos = None if k is None else p[:axis] + (k,) + p[axis + 1:]
        steps.append((pos, updates[p]))
    out = sequential(data, steps, mode)
    if mode in UFUNC and not (mode == "div" and np.issubdtype(data.dtype, np.integer)) and all(s[0] is not None for s in steps):
        alt = data.copy()
        index = list(np.indices(indices.shape, sparse=True))
        index[axis] = indices
        UFUNC[mode].at(alt, tuple(index), updates)
        assert np.array_equal(alt, out, equal_nan=True), "scatterAlongAxis: loop and ufunc.at disagree"
    return out


def ref_reverse_sequence(x, lengths, seq_axis, batch_axis):
    seq_axis %= x.ndim
    batch_axis %= x.ndim
    out = x.copy()
    n = x.shape[seq_axis]
    for b in range(x.shape[batch_axis]):
        length = min(max(int(lengths[b]), 0), n)
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[seq_axis] = slice(0, length)
        dst = list(src)
        # after fixing the batch axis, the sequence axis index shifts if it came after it
        s = seq_axis - (1 if seq_axis > batch_axis else 0)
        out[tuple(dst)] = np.flip(x[tuple(src)], axis=s)
    return out


def ref_argsort(x, axis, ascending):
    """Stable; NaN above +inf (ascending: last, descending: first)."""
    xm = np.moveaxis(x, axis, -1)
    out = np.empty(xm.shape, dtype=np.int32)
    for p in np.ndindex(*xm.shape[:-1]):
        row = [float(v) for v in xm[p]]
        def key(j):
            v = row[j]
            rank = (1, 0.0) if np.isnan(v) else (0, v)
            return rank if ascending else (-rank[0], -rank[1])
        out[p] = sorted(range(len(row)), key=key)  # Python's sort is stable
    return np.moveaxis(out, -1, axis)


def ref_sliding_windows(x, axis, size, stride):
    axis %= x.ndim
    v = np.lib.stride_tricks.sliding_window_view(x, size, axis=axis)  # window axis last
    v = np.moveaxis(v, -1, axis + 1)
    sl = [slice(None)] * v.ndim
    sl[axis] = slice(None, None, stride)
    return np.ascontiguousarray(v[tuple(sl)])


def iou(a, b):
    """a, b: (cx, cy, w, h) in float64."""
    ax1, ax2 = sorted([a[0] - a[2] / 2, a[0] + a[2] / 2])
    ay1, ay2 = sorted([a[1] - a[3] / 2, a[1] + a[3] / 2])
    bx1, bx2 = sorted([b[0] - b[2] / 2, b[0] + b[2] / 2])
    by1, by2 = sorted([b[1] - b[3] / 2, b[1] + b[3] / 2])
    inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return inter / union if union > 0 else 0.0


def ref_nms(boxes, scores, iou_threshold, score_threshold, max_boxes, per_class):
    nb, n, k = scores.shape
    out_boxes = np.zeros((nb, max_boxes, 4), np.float32)
    out_scores = np.zeros((nb, max_boxes, k), np.float32)
    out_idx = -np.ones((nb, max_boxes), np.int32)
    out_count = np.zeros((nb,), np.int32)
    for b in range(nb):
        score = scores[b].max(axis=-1)
        cls = scores[b].argmax(axis=-1)
        bx = boxes[b].astype(np.float64)
        cand = [i for i in np.argsort(-score, kind="stable") if score[i] > np.float32(score_threshold)]
        kept = []
        for i in cand:
            if len(kept) == max_boxes:
                break
            ious = [iou(bx[i], bx[j]) for j in kept if not per_class or cls[j] == cls[i]]
            for v in ious:
                assert abs(v - iou_threshold) > 1e-4, "IoU too close to the threshold for a stable fixture"
            if all(v <= iou_threshold for v in ious):
                kept.append(i)
        for r, i in enumerate(kept):
            out_boxes[b, r] = boxes[b, i]
            out_scores[b, r] = scores[b, i]
            out_idx[b, r] = i
        out_count[b] = len(kept)
    return [out_boxes, out_scores, out_idx, out_count]


def _cases():
    # scatter (MIL scatter): duplicates, negative and out-of-range indices, every mode, size-1 axes
    d = f32(5, 3)
    ind = np.array([1, -1, 1, 0], np.int32)
    u = f32(4, 3)
    yield dict(name="scatter_axis0_add_dup_neg", op="scatter", attributes={"axis": 0, "mode": "add"},
               inputs=[d, ind, u], outputs=[ref_scatter(d, ind, u, 0, "add")])
    d = f32(2, 4, 3)
    ind = np.array([2, -4, 2], np.int64)
    u = f32(2, 3, 3)
    yield dict(name="scatter_axis1_update_dup_last_wins", op="scatter", attributes={"axis": 1, "mode": "update"},
               inputs=[d, ind, u], outputs=[ref_scatter(d, ind, u, 1, "update")])
    d = f32(3, 4)
    ind = np.array([0, 3, 0, -2], np.int32)
    for mode in ["sub", "mul", "div", "max", "min"]:
        u = f32(3, 4, lo=0.5, hi=2.0) * np.where(rng.random((3, 4)) < 0.5, -1, 1).astype(np.float32)
        yield dict(name=f"scatter_axis-1_{mode}", op="scatter", attributes={"axis": -1, "mode": mode},
                   inputs=[d, ind, u], outputs=[ref_scatter(d, ind, u, -1, mode)])
    di = ints(4, 2, lo=-20, hi=20)
    ind2 = np.array([[0, 3], [3, -2]], np.int32)
    ui = ints(2, 2, 2, lo=-9, hi=10)
    yield dict(name="scatter_int32_indices_rank2_add", op="scatter", attributes={"axis": 0, "mode": "add"},
               inputs=[di, ind2, ui], outputs=[ref_scatter(di, ind2, ui, 0, "add")])
    ud = np.array([[[3, 0], [-4, 7]], [[2, -3], [0, 5]]], np.int32)
    yield dict(name="scatter_int32_div_trunc_zero_divisor", op="scatter", attributes={"axis": 0, "mode": "div"},
               inputs=[di, ind2, ud], outputs=[ref_scatter(di, ind2, ud, 0, "div")])
    d = f32(5, 2)
    ind = np.array([0, 7, -9, 2, -5], np.int32)
    u = f32(5, 2)
    yield dict(name="scatter_out_of_range_skipped", op="scatter", attributes={"axis": 0, "mode": "add"},
               inputs=[d, ind, u], outputs=[ref_scatter(d, ind, u, 0, "add")])
    d = f32(1, 3)
    ind = np.array([0, 0, -1], np.int64)
    u = f32(3, 3)
    yield dict(name="scatter_size1_axis_mul", op="scatter", attributes={"axis": 0, "mode": "mul"},
               inputs=[d, ind, u], outputs=[ref_scatter(d, ind, u, 0, "mul")])
    d16 = f32(3, 2).astype(np.float16)
    ind = np.array([2, 2], np.int32)
    u16 = f32(2, 2).astype(np.float16)
    yield dict(name="scatter_fp16_add", op="scatter", attributes={"axis": 0, "mode": "add"},
               inputs=[d16, ind, u16], outputs=[ref_scatter(d16, ind, u16, 0, "add")], tolerance=1e-3)

    # scatterND (MIL scatter_nd)
    d = f32(4, 3)
    ind = np.array([[1], [3], [1], [-1]], np.int32)
    u = f32(4, 3)
    yield dict(name="scatterND_add_dup_neg", op="scatterND", attributes={"mode": "add"},
               inputs=[d, ind, u], outputs=[ref_scatter_nd(d, ind, u, "add")])
    d = ints(3, 4, lo=-50, hi=50, dtype=np.int64)
    ind = np.array([[0, 1], [2, -1], [5, 0], [0, 1], [-3, -4]], np.int64)
    u = ints(5, lo=-50, hi=50, dtype=np.int64)
    yield dict(name="scatterND_int64_update_full_tuples_oob", op="scatterND", attributes={"mode": "update"},
               inputs=[d, ind, u], outputs=[ref_scatter_nd(d, ind, u, "update")])
    d = f32(2, 3, 4)
    ind = np.array([[1, 2], [0, -3]], np.int32)
    u = f32(2, 4)
    yield dict(name="scatterND_mul_slices", op="scatterND", attributes={"mode": "mul"},
               inputs=[d, ind, u], outputs=[ref_scatter_nd(d, ind, u, "mul")])
    d = f32(3, 2)
    ind = np.array([[[0], [2]], [[-3], [1]]], np.int32)
    for mode in ["max", "min", "sub"]:
        u = f32(2, 2, 2)
        yield dict(name=f"scatterND_indices_rank3_{mode}", op="scatterND", attributes={"mode": mode},
                   inputs=[d, ind, u], outputs=[ref_scatter_nd(d, ind, u, mode)])
    d = f32(1, 1, 3)
    ind = np.array([[0, 0, 2], [0, -1, -1]], np.int32)
    u = f32(2)
    yield dict(name="scatterND_size1_dims_div", op="scatterND", attributes={"mode": "div"},
               inputs=[d, ind, u], outputs=[ref_scatter_nd(d, ind, u, "div")])

    # scatterAlongAxis (MIL scatter_along_axis)
    d = f32(2, 4, 3)
    ind = ints(2, 2, 3, lo=-4, hi=4)
    u = f32(2, 2, 3)
    yield dict(name="scatterAlongAxis_axis1_add", op="scatterAlongAxis", attributes={"axis": 1, "mode": "add"},
               inputs=[d, ind, u], outputs=[ref_scatter_along_axis(d, ind, u, 1, "add")])
    di = ints(3, 2, lo=-9, hi=9)
    ind = np.array([[0, 2], [0, 2], [-1, 1], [1, -3]], np.int32)
    ui = ints(4, 2, lo=-9, hi=9)
    yield dict(name="scatterAlongAxis_axis0_int32_update_dup", op="scatterAlongAxis", attributes={"axis": 0, "mode": "update"},
               inputs=[di, ind, ui], outputs=[ref_scatter_along_axis(di, ind, ui, 0, "update")])
    d = f32(3, 5)
    ind = ints(3, 4, lo=-5, hi=5, dtype=np.int64)
    for mode in ["sub", "mul", "div", "max", "min"]:
        u = f32(3, 4, lo=0.5, hi=2.0)
        yield dict(name=f"scatterAlongAxis_axis-1_{mode}", op="scatterAlongAxis", attributes={"axis": -1, "mode": mode},
                   inputs=[d, ind, u], outputs=[ref_scatter_along_axis(d, ind, u, -1, mode)])
    d = f32(2, 3)
    ind = np.array([[0, 9, -1], [-7, 1, 3]], np.int32)
    u = f32(2, 3)
    yield dict(name="scatterAlongAxis_out_of_range_skipped", op="scatterAlongAxis", attributes={"axis": 1, "mode": "add"},
               inputs=[d, ind, u], outputs=[ref_scatter_along_axis(d, ind, u, 1, "add")])

    # reverse (MIL reverse; axes [] = every axis)
    x = f32(2, 3, 4)
    yield dict(name="reverse_axes_1_-1", op="reverse", attributes={"axes": [1, -1]}, inputs=[x], outputs=[np.flip(x, axis=(1, 2))])
    xi = ints(3, 2)
    yield dict(name="reverse_all_axes_int32", op="reverse", attributes={"axes": []}, inputs=[xi], outputs=[np.flip(xi)])
    x = f32(1, 4)
    yield dict(name="reverse_size1_axis", op="reverse", attributes={"axes": [0]}, inputs=[x], outputs=[np.flip(x, axis=0)])
    xb = rng.integers(0, 2, size=(2, 3)).astype(bool)
    yield dict(name="reverse_bool_axis0", op="reverse", attributes={"axes": [-2]}, inputs=[xb], outputs=[np.flip(xb, axis=0)])
    x = f32(5)
    yield dict(name="reverse_rank1", op="reverse", attributes={"axes": [0]}, inputs=[x], outputs=[np.flip(x)])

    # reverseSequence (MIL reverse_sequence; lengths clamped to 0..n)
    x = f32(3, 5, 2)
    lengths = np.array([2, 5, 0], np.int32)
    yield dict(name="reverseSequence_seq1_batch0", op="reverseSequence", attributes={"seq_axis": 1, "batch_axis": 0},
               inputs=[x, lengths], outputs=[ref_reverse_sequence(x, lengths, 1, 0)])
    xl = ints(4, 3, dtype=np.int64)
    lengths = np.array([1, 4, 3], np.int64)
    yield dict(name="reverseSequence_seq0_batch1_int64", op="reverseSequence", attributes={"seq_axis": 0, "batch_axis": 1},
               inputs=[xl, lengths], outputs=[ref_reverse_sequence(xl, lengths, 0, 1)])
    x = f32(2, 3)
    lengths = np.array([7, -2], np.int32)
    yield dict(name="reverseSequence_lengths_clamped", op="reverseSequence", attributes={"seq_axis": 1, "batch_axis": 0},
               inputs=[x, lengths], outputs=[ref_reverse_sequence(x, lengths, 1, 0)])
    x = f32(2, 3, 4)
    lengths = np.array([3, 1, 4], np.int32)
    yield dict(name="reverseSequence_negative_axes", op="reverseSequence", attributes={"seq_axis": -1, "batch_axis": -2},
               inputs=[x, lengths], outputs=[ref_reverse_sequence(x, lengths, -1, -2)])

    # argsort (MIL argsort: descending by default; stable here)
    xt = np.round(f32(3, 6)).astype(np.float32)  # ties
    yield dict(name="argsort_desc_ties_axis-1", op="argsort", attributes={"axis": -1, "ascending": False},
               inputs=[xt], outputs=[ref_argsort(xt, -1, False)])
    assert np.array_equal(ref_argsort(xt, -1, False), np.argsort(-xt, axis=-1, kind="stable"))
    xt = np.round(f32(5, 3)).astype(np.float32)
    yield dict(name="argsort_asc_ties_axis0", op="argsort", attributes={"axis": 0, "ascending": True},
               inputs=[xt], outputs=[ref_argsort(xt, 0, True)])
    assert np.array_equal(ref_argsort(xt, 0, True), np.argsort(xt, axis=0, kind="stable"))
    xi = ints(2, 7, lo=-3, hi=3)
    yield dict(name="argsort_int32_desc", op="argsort", attributes={"axis": 1, "ascending": False},
               inputs=[xi], outputs=[ref_argsort(xi, 1, False)])
    xn = np.array([[1.0, np.nan, -np.inf, np.inf, 0.0, np.nan, -0.0]], np.float32)
    for asc in [True, False]:
        yield dict(name=f"argsort_nan_inf_{'asc' if asc else 'desc'}", op="argsort", attributes={"axis": -1, "ascending": asc},
                   inputs=[xn], outputs=[ref_argsort(xn, -1, asc)])
    x = f32(4, 1)
    yield dict(name="argsort_size1_axis", op="argsort", attributes={"axis": 1, "ascending": False},
               inputs=[x], outputs=[np.zeros((4, 1), np.int32)])
    xh = f32(2, 2, 5).astype(np.float16)
    yield dict(name="argsort_fp16_axis-2", op="argsort", attributes={"axis": -2, "ascending": True},
               inputs=[xh], outputs=[ref_argsort(xh, -2, True)])

    # einsum (general, up to two operands, no ellipsis)
    eqs = [
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ij,kj", [(2, 3), (4, 3)]),
        ("ii->i", [(4, 4)]),
        ("ij->ji", [(2, 5)]),
        ("ijk->ki", [(2, 3, 4)]),
        ("i,j->ij", [(3,), (4,)]),
        ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
        ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
        ("ab,bc->ac", [(1, 3), (3, 1)]),
        ("ij,ij->i", [(3, 4), (3, 4)]),
        ("Ab,bC->AC", [(2, 3), (3, 2)]),
        ("ijk", [(2, 1, 3)]),
        ("ji,ij->j", [(3, 2), (2, 3)]),
    ]
    for k, (eq, shapes) in enumerate(eqs):
        ops = [f32(*s) for s in shapes]
        y = np.einsum(eq, *[o.astype(np.float64) for o in ops]).astype(np.float32)
        safe = eq.replace(",", "_").replace("->", "_to_")
        yield dict(name=f"einsum_{k:02d}_{safe}", op="einsum", attributes={"equation": eq}, inputs=ops, outputs=[y])

    # slidingWindows (MIL sliding_windows)
    for name, shape, axis, size, stride, dtype in [
        ("axis1_size3_stride2", (2, 7, 3), 1, 3, 2, np.float32),
        ("axis-1_size2_int32", (3, 4), -1, 2, 1, np.int32),
        ("single_window", (4, 5), 0, 4, 3, np.float32),
        ("rank1_stride_gt_size", (10,), 0, 2, 4, np.float32),
        ("size1", (2, 3), -2, 1, 1, np.float32),
    ]:
        x = f32(*shape) if dtype == np.float32 else ints(*shape)
        yield dict(name=f"slidingWindows_{name}", op="slidingWindows", attributes={"axis": axis, "size": size, "stride": stride},
                   inputs=[x], outputs=[ref_sliding_windows(x, axis, size, stride)])

    # nonMaximumSuppression (MIL non_maximum_suppression iOS15)
    boxes = np.array([[[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]], np.float32)
    scores = np.array([[[-3.5], [9.4], [2.3], [0.7]]], np.float32)
    nms_cases = [("mil_example", boxes, scores, 0.2, 0.4, 2, True)]
    centers = rng.uniform(0, 10, size=(2, 9, 2))
    sizes = rng.uniform(1, 5, size=(2, 9, 2))
    rboxes = np.concatenate([centers, sizes], axis=-1).astype(np.float32)
    rscores = rng.uniform(0, 1, size=(2, 9, 3)).astype(np.float32)
    nms_cases += [
        ("random", rboxes, rscores, 0.3, 0.35, 5, False),
        ("random_per_class", rboxes, rscores, 0.3, 0.35, 5, True),
        ("none_pass_padded", rboxes, rscores, 0.5, 2.0, 3, False),
        ("max_boxes_gt_n", rboxes[:1, :4], rscores[:1, :4], 0.9, -1.0, 6, False),
    ]
    neg = rboxes[:1, :3].copy()
    neg[0, 1, 2:] = -neg[0, 1, 2:]  # negative width/height: the absolute size
    neg[0, 1, :2] = neg[0, 0, :2]
    nms_cases.append(("negative_size", neg, rscores[:1, :3], 0.5, 0.0, 3, False))
    for name, bx, sc, it, st, mb, pc in nms_cases:
        yield dict(name=f"nonMaximumSuppression_{name}", op="nonMaximumSuppression",
                   attributes={"iou_threshold": num(it), "score_threshold": num(st), "max_boxes": mb,
                               "per_class_suppression": pc},
                   inputs=[bx, sc], outputs=ref_nms(bx, sc, it, st, mb, pc))


def cases():
    """The cases with every array C-contiguous (the .npy reader takes row-major arrays only)."""
    for c in _cases():
        c["inputs"] = [np.ascontiguousarray(a) for a in c["inputs"]]
        c["outputs"] = [np.ascontiguousarray(a) for a in c["outputs"]]
        yield c
