"""NumPy references for the typed (integer / bool-valued) ops: cast, argmax/argmin, compare,
logical, select, gather, gatherND, gatherAlongAxis, oneHot, range1d, fill, topk.

Arrays keep their dtypes (int32 <i4, int64 <i8, bool |b1, float16 <f2, float32 <f4); integer and
bool outputs are compared exactly by OpFixtureTests. Formulas follow coremltools' MIL op
definitions (converters/mil/mil/ops/defs: cast, reduce_argmax, equal…, logical_*, select, gather,
gather_nd, gather_along_axis, one_hot, range_1d, fill, topk). Float attribute values are written
as JSON integers when integral (the IR's canonical encoding of these attributes).
"""
import numpy as np

rng = np.random.default_rng(90)


def f32(*shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i32(*shape, lo=-3, hi=4):
    return rng.integers(lo, hi, size=shape).astype(np.int32)


def boolean(*shape):
    return rng.integers(0, 2, size=shape).astype(bool)


def num(v):
    return int(v) if float(v).is_integer() else float(v)


def mil_cast(x, dtype):
    """MIL cast: float -> int truncates toward zero."""
    if np.issubdtype(x.dtype, np.floating) and dtype in (np.int32, np.int64):
        return np.trunc(x).astype(dtype)
    return x.astype(dtype)


def cases():
    # cast
    x = np.array([[-2.7, -0.5, -0.0, 0.0, 0.4, 2.7], [1e3, -1e3, 7.99, -7.99, 0.5, 65519.0]], dtype=np.float32)
    for name, dt, dtype in [("int32", "int32", np.int32), ("int64", "int64", np.int64), ("fp16", "fp16", np.float16),
                            ("bool", "bool", bool)]:
        yield dict(name=f"cast_fp32_to_{name}", op="cast", attributes={"dtype": dt}, inputs=[x], outputs=[mil_cast(x, dtype)])
    xb = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30], dtype=np.float32)
    yield dict(name="cast_fp32_specials_to_bool", op="cast", attributes={"dtype": "bool"}, inputs=[xb], outputs=[xb.astype(bool)])
    xi = i32(3, 4, lo=-100000, hi=100000)
    yield dict(name="cast_int32_to_fp32", op="cast", attributes={"dtype": "fp32"}, inputs=[xi], outputs=[xi.astype(np.float32)])
    yield dict(name="cast_int32_to_int64", op="cast", attributes={"dtype": "int64"}, inputs=[xi], outputs=[xi.astype(np.int64)])
    xi2 = i32(2, 5, lo=-2, hi=3)
    yield dict(name="cast_int32_to_bool", op="cast", attributes={"dtype": "bool"}, inputs=[xi2], outputs=[xi2.astype(bool)])
    x64 = np.array([[-(2**40), 2**31 + 5, -7], [0, 2**24 + 1, 123456789012]], dtype=np.int64)
    yield dict(name="cast_int64_to_int32_wraps", op="cast", attributes={"dtype": "int32"}, inputs=[x64],
               outputs=[x64.astype(np.int32)])
    yield dict(name="cast_int64_to_fp32", op="cast", attributes={"dtype": "fp32"}, inputs=[x64], outputs=[x64.astype(np.float32)])
    bb = boolean(3, 4)
    yield dict(name="cast_bool_to_int64", op="cast", attributes={"dtype": "int64"}, inputs=[bb], outputs=[bb.astype(np.int64)])
    yield dict(name="cast_bool_to_fp32", op="cast", attributes={"dtype": "fp32"}, inputs=[bb], outputs=[bb.astype(np.float32)])
    h = f32(2, 3).astype(np.float16)
    yield dict(name="cast_fp16_to_int32", op="cast", attributes={"dtype": "int32"}, inputs=[h], outputs=[mil_cast(h, np.int32)])

    # argmax / argmin (ties -> first index; NaN wins, as NumPy)
    xt = np.round(f32(2, 3, 4)).astype(np.float32)  # rounding makes ties
    for fn, op in [(np.argmax, "argmax"), (np.argmin, "argmin")]:
        for axis, keep in [(1, False), (-1, True), (0, False), (2, False)]:
            y = fn(xt, axis=axis)
            if keep:
                y = np.expand_dims(y, axis)
            yield dict(name=f"{op}_axis{axis}_keep{int(keep)}", op=op, attributes={"axis": axis, "keep_dims": keep},
                       inputs=[xt], outputs=[y.astype(np.int32)])
        xn = f32(3, 5)
        xn[1, 3] = np.nan; xn[1, 4] = np.nan; xn[2, 0] = np.nan
        yield dict(name=f"{op}_nan", op=op, attributes={"axis": -1, "keep_dims": False}, inputs=[xn],
                   outputs=[fn(xn, axis=-1).astype(np.int32)])
        xs = i32(4, 1, 3)
        yield dict(name=f"{op}_int32_size1_axis", op=op, attributes={"axis": 1, "keep_dims": True}, inputs=[xs],
                   outputs=[np.expand_dims(fn(xs, axis=1), 1).astype(np.int32)])
        x1 = i32(6)
        yield dict(name=f"{op}_rank1_keep", op=op, attributes={"axis": 0, "keep_dims": True}, inputs=[x1],
                   outputs=[np.array([fn(x1)], dtype=np.int32)])

    # compare (broadcasting, ints with ties, NaN and signed zeros)
    a, b = np.round(f32(2, 1, 4)), np.round(f32(3, 1))
    a[0, 0, 0] = np.nan; b[1, 0] = -0.0; a[1, 0, 2] = 0.0
    ia, ib = i32(3, 4), i32(4)
    for fn, np_fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less), ("less_equal", np.less_equal),
                      ("greater", np.greater), ("greater_equal", np.greater_equal)]:
        yield dict(name=f"compare_{fn}_broadcast", op="compare", attributes={"function": fn}, inputs=[a, b], outputs=[np_fn(a, b)])
        yield dict(name=f"compare_{fn}_int32", op="compare", attributes={"function": fn}, inputs=[ia, ib], outputs=[np_fn(ia, ib)])
    la, lb = boolean(2, 1, 3), boolean(4, 1)
    for fn, np_fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]:
        yield dict(name=f"logical_{fn[8:]}_broadcast", op="logical", attributes={"function": fn}, inputs=[la, lb], outputs=[np_fn(la, lb)])
    yield dict(name="logical_not", op="logical", attributes={"function": "logical_not"}, inputs=[la], outputs=[np.logical_not(la)])

    # select
    c = boolean(2, 1, 4)
    sa, sb = f32(3, 4), f32(2, 3, 1)
    yield dict(name="select_broadcast", op="select", attributes={}, inputs=[c, sa, sb], outputs=[np.where(c, sa, sb)])
    ja, jb = i32(4, lo=-9, hi=9).astype(np.int64), i32(2, 1, 1).astype(np.int64)
    yield dict(name="select_int64", op="select", attributes={}, inputs=[c, ja, jb], outputs=[np.where(c, ja, jb)])

    # gather (negative indices wrap once)
    xg = f32(2, 4, 3)
    ind = np.array([[0, -1, 2], [3, -4, 1]], dtype=np.int32)
    yield dict(name="gather_axis1_neg", op="gather", attributes={"axis": 1}, inputs=[xg, ind], outputs=[np.take(xg, ind, axis=1)])
    ind2 = np.array([2, 0, -1, 1, 1], dtype=np.int64)
    yield dict(name="gather_axis_minus1_int64", op="gather", attributes={"axis": -1}, inputs=[xg, ind2],
               outputs=[np.take(xg, ind2, axis=-1)])
    xgi = i32(5, 2)
    ind3 = np.array([4], dtype=np.int32)
    yield dict(name="gather_axis0_int32_data", op="gather", attributes={"axis": 0}, inputs=[xgi, ind3], outputs=[np.take(xgi, ind3, axis=0)])

    # gather_nd
    xn = f32(3, 4, 5)
    idx = np.array([[0, 1], [2, -1], [-3, 3]], dtype=np.int32)
    yield dict(name="gatherND_slices", op="gatherND", attributes={}, inputs=[xn, idx],
               outputs=[xn[tuple(idx.T)]])
    idx3 = np.stack([rng.integers(0, 3, (2, 3)), rng.integers(0, 4, (2, 3)), rng.integers(-5, 5, (2, 3))], axis=-1).astype(np.int64)
    yield dict(name="gatherND_full_int64", op="gatherND", attributes={}, inputs=[xn, idx3], outputs=[xn[tuple(np.moveaxis(idx3, -1, 0))]])
    xbn = boolean(4, 2)
    idx1 = np.array([[3], [0], [-1]], dtype=np.int32)
    yield dict(name="gatherND_bool_data", op="gatherND", attributes={}, inputs=[xbn, idx1], outputs=[xbn[tuple(idx1.T)]])

    # gather_along_axis
    xa = f32(2, 4, 3)
    ia1 = rng.integers(-4, 4, (2, 5, 3)).astype(np.int32)
    yield dict(name="gatherAlongAxis_axis1", op="gatherAlongAxis", attributes={"axis": 1}, inputs=[xa, ia1],
               outputs=[np.take_along_axis(xa, ia1, axis=1)])
    ia2 = rng.integers(0, 3, (2, 4, 1)).astype(np.int64)
    yield dict(name="gatherAlongAxis_last_int64", op="gatherAlongAxis", attributes={"axis": -1}, inputs=[xa, ia2],
               outputs=[np.take_along_axis(xa, ia2, axis=-1)])

    # one_hot (out-of-range and negative indices: all off, as TF / MIL)
    oi = np.array([[0, 3, 1], [4, -1, 2]], dtype=np.int32)
    for axis in (-1, 0, 1):
        for on, off in [(1.0, 0.0), (2.5, -0.5)]:
            hot = np.expand_dims(oi, -1) == np.arange(4)
            y = np.where(hot, on, off).astype(np.float32)
            y = np.moveaxis(y, -1, axis if axis >= 0 else 2)
            yield dict(name=f"oneHot_axis{axis}_on{num(on)}", op="oneHot",
                       attributes={"depth": 4, "axis": axis, "on_value": num(on), "off_value": num(off)},
                       inputs=[oi], outputs=[y])
    yield dict(name="oneHot_int64_rank1", op="oneHot", attributes={"depth": 3, "axis": 0, "on_value": 1, "off_value": 0},
               inputs=[np.array([2, 0], dtype=np.int64)], outputs=[np.eye(3, dtype=np.float32)[[2, 0]].T.copy()])

    # range_1d
    for start, end, step, dt in [(0.5, 3.25, 0.5, "fp32"), (2.5, -1.5, -0.75, "fp32"), (0, 7, 2, "int32"), (5, -3, -3, "int32"),
                                 (-1, 1, 0.1, "fp32")]:
        y = np.arange(start, end, step, dtype=np.float64)
        y = y.astype(np.int32) if dt == "int32" else y.astype(np.float32)
        yield dict(name=f"range1d_{dt}_{num(start)}_{num(end)}_{num(step)}", op="range1d",
                   attributes={"start": num(start), "end": num(end), "step": num(step), "dtype": dt}, inputs=[], outputs=[y])

    # fill
    for shape, value, dt, dtype in [([2, 3], 1.5, "fp32", np.float32), ([4], 7, "int64", np.int64), ([1, 2, 2], -2.5, "int32", np.int32),
                                    ([3], 3, "bool", bool), ([2, 2], 0.1, "fp16", np.float16)]:
        y = mil_cast(np.full(shape, value, dtype=np.float32), dtype)
        yield dict(name=f"fill_{dt}", op="fill", attributes={"shape": shape, "value": num(value), "dtype": dt}, inputs=[], outputs=[y])

    # topk (ties -> lower index first)
    xk = f32(2, 5)
    order = np.argsort(-xk, axis=-1, kind="stable")[:, :2]
    yield dict(name="topk_k2_last", op="topk", attributes={"k": 2, "axis": -1, "ascending": False}, inputs=[xk],
               outputs=[np.take_along_axis(xk, order, -1), order.astype(np.int32)])
    xki = i32(4, 3, lo=-2, hi=2)
    order = np.argsort(xki, axis=0, kind="stable")[:3]
    yield dict(name="topk_k3_axis0_ascending_int32_ties", op="topk", attributes={"k": 3, "axis": 0, "ascending": True}, inputs=[xki],
               outputs=[np.take_along_axis(xki, order, 0), order.astype(np.int32)])
    order = np.argsort(-xki, axis=-1, kind="stable")
    yield dict(name="topk_full_descending_int32_ties", op="topk", attributes={"k": 3, "axis": 1, "ascending": False}, inputs=[xki],
               outputs=[np.take_along_axis(xki, order, 1), order.astype(np.int32)])
