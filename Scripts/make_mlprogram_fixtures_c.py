"""ML program fixtures for the iOS17 / iOS18 ops quantize, dequantize, scaled_dot_product_attention
and slice_update (MILOpsMoreC.swift), with NumPy references of each op's formula.

Run (from the repository root):

    PY=$(Scripts/coremltools8-env)   # coremltools 8.3
    $PY Scripts/make_mlprogram_fixtures_c.py

Writes Fixtures/mlprogram/opc_<case>/ in the layout of Scripts/make_mlprogram_fixtures.py
(model.mlpackage, input_<name>.npy, expected_<name>.npy as float32, case.json), which
MILProgramRunTests discovers, and Fixtures/mlprogram_state_kv/ (a stateful KV cache written with
slice_update at a run-time position; MILOpsMoreCTests). Programs are built with coremltools' MIL Builder for iOS17
(quantize / dequantize) or iOS18 (scaled_dot_product_attention, slice_update), FLOAT32 precision.
References (float64 NumPy):
  quantize     q = clip(round_half_even(x / scale) + zero_point, lo, hi), int8 [-128, 127] or
               uint8 [0, 255]; per tensor (scalar scale / zero_point) or per axis (vectors on axis)
  dequantize   y = (q - zero_point) * scale
  sdpa         softmax(Q K^T / sqrt(E) + mask) V; a bool mask puts -inf where it is false
  slice_update x[slice_by_index(begin, end, stride, masks)] = update
"""
import os
import shutil
import sys

import numpy as np

import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlprogram_fixture_common import OUT, ROOT, case_meta, run_selected, write_case  # noqa: E402


def save_case(name, prog, target, inputs, outputs, keep_dequantize=False):
    pipeline = ct.PassPipeline.DEFAULT
    if keep_dequantize:  # keep a dequantize of a constant (not folded into constexpr_affine_dequantize)
        pipeline.remove_passes({"common::dequantize_to_constexpr"})
    ml = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target, compute_precision=ct.precision.FLOAT32,
                    pass_pipeline=pipeline)
    write_case(os.path.join(OUT, name), ml, inputs, outputs, case_meta(inputs, outputs))
    print(name, "written")


# ---- quantize / dequantize (iOS17) -------------------------------------------------------------

def quant_ref(x, scale, zp, axis, lo, hi):
    shape = [1] * x.ndim
    if axis is not None:
        shape[axis] = x.shape[axis]
    s = np.asarray(scale, np.float64).reshape(shape)
    z = np.zeros(shape) if zp is None else np.asarray(zp, np.float64).reshape(shape)
    q = np.clip(np.around(x.astype(np.float64) / s) + z, lo, hi)
    return q, (q - z) * s


def quant_cases():
    rng = np.random.RandomState(61)
    x = rng.uniform(-4, 4, (2, 3, 5)).astype(np.float32)
    configs = [
        # name, dtype, scale, zero_point, axis
        ("int8_tensor", "int8", np.float32(0.04), np.int8(3), None),
        ("uint8_tensor", "uint8", np.float32(0.03), np.uint8(128), None),
        ("int8_axis", "int8", np.array([0.02, 0.05, 0.03], np.float32), None, 1),
        ("uint8_axis", "uint8", np.array([0.02, 0.01, 0.04, 0.03, 0.05], np.float32),
         np.array([100, 128, 90, 140, 120], np.uint8), -1),
    ]
    for name, dtype, scale, zp, axis in configs:
        lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
        kw = {} if zp is None else {"zero_point": zp}
        if axis is not None:
            kw["axis"] = axis

        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=ct.target.iOS17)
        def prog(x_in):
            q = mb.quantize(input=x_in, scale=scale, output_dtype=dtype, **kw)
            y = mb.dequantize(input=q, scale=scale, **kw, name="y")
            return y, mb.cast(x=q, dtype="int32", name="q")
        q, y = quant_ref(x, scale, zp, axis, lo, hi)
        save_case(f"opc_quantize_{name}", prog, ct.target.iOS17, {"x_in": x}, {"y": y, "q": q})

    # dequantize of a constant int8 weight, per axis (PyTorch quantized linear layers).
    w = rng.randint(-128, 128, (4, 5)).astype(np.int8)
    ws = np.array([0.1, 0.2, 0.05, 0.15], np.float32)
    wz = np.array([1, -2, 0, 3], np.int8)

    @mb.program(input_specs=[mb.TensorSpec(shape=(2, 5))], opset_version=ct.target.iOS17)
    def dq_prog(x_in):
        wd = mb.dequantize(input=w, scale=ws, zero_point=wz, axis=0)
        return mb.linear(x=x_in, weight=wd, name="y")
    xl = rng.uniform(-1, 1, (2, 5)).astype(np.float32)
    wref = (w.astype(np.float64) - wz[:, None]) * ws[:, None]
    save_case("opc_dequantize_const_weight", dq_prog, ct.target.iOS17, {"x_in": xl}, {"y": xl.astype(np.float64) @ wref.T},
              keep_dequantize=True)


# ---- scaled_dot_product_attention (iOS18) ------------------------------------------------------

def sdpa_ref(q, k, v, mask):
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask.astype(np.float64))
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v.astype(np.float64)


def sdpa_cases():
    rng = np.random.RandomState(62)
    q = rng.uniform(-1, 1, (1, 2, 4, 8)).astype(np.float32)
    k = rng.uniform(-1, 1, (1, 2, 6, 8)).astype(np.float32)
    v = rng.uniform(-1, 1, (1, 2, 6, 5)).astype(np.float32)
    bool_mask = rng.uniform(0, 1, (4, 6)) > 0.4
    bool_mask[:, 0] = True  # every query attends to something
    float_mask = rng.uniform(-2, 0, (1, 1, 4, 6)).astype(np.float32)
    specs = [mb.TensorSpec(shape=q.shape), mb.TensorSpec(shape=k.shape), mb.TensorSpec(shape=v.shape)]

    @mb.program(input_specs=specs, opset_version=ct.target.iOS18)
    def no_mask(qi, ki, vi):
        return mb.scaled_dot_product_attention(query=qi, key=ki, value=vi, name="y")

    @mb.program(input_specs=specs, opset_version=ct.target.iOS18)
    def with_bool(qi, ki, vi):
        return mb.scaled_dot_product_attention(query=qi, key=ki, value=vi, attn_mask=bool_mask, name="y")

    @mb.program(input_specs=specs + [mb.TensorSpec(shape=float_mask.shape)], opset_version=ct.target.iOS18)
    def with_float(qi, ki, vi, mi):
        return mb.scaled_dot_product_attention(query=qi, key=ki, value=vi, attn_mask=mi, name="y")
    ins = {"qi": q, "ki": k, "vi": v}
    save_case("opc_sdpa_no_mask", no_mask, ct.target.iOS18, ins, {"y": sdpa_ref(q, k, v, None)})
    save_case("opc_sdpa_bool_mask", with_bool, ct.target.iOS18, ins, {"y": sdpa_ref(q, k, v, bool_mask)})
    save_case("opc_sdpa_float_mask", with_float, ct.target.iOS18, dict(ins, mi=float_mask), {"y": sdpa_ref(q, k, v, float_mask)})


# ---- slice_update (iOS18) ----------------------------------------------------------------------

def slice_update_cases():
    rng = np.random.RandomState(63)
    x = rng.uniform(-1, 1, (2, 5, 6)).astype(np.float32)
    cases = [
        # name, begin, end, stride, begin_mask, end_mask, squeeze_mask, numpy index
        ("strided_masks", [1, 1, 4], [0, 5, 0], [1, 2, 3], [True, False, True], [True, False, True], None,
         (slice(None), slice(1, 5, 2), slice(None, None, 3))),
        ("squeeze", [1, 0, 2], [2, 5, 4], [1, 1, 1], None, [False, True, False], [True, False, False],
         (1, slice(None), slice(2, 4))),
        ("negative", [0, -1, -2], [2, 0, 6], [1, -2, 1], None, [False, True, True], None,
         (slice(0, 2), slice(-1, None, -2), slice(-2, None))),
    ]
    for name, begin, end, stride, bm, em, sm, index in cases:
        ushape = x[index].shape
        u = rng.uniform(-1, 1, ushape).astype(np.float32)
        kw = {}
        for key, val in [("begin_mask", bm), ("end_mask", em), ("squeeze_mask", sm)]:
            if val is not None:
                kw[key] = val

        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=u.shape)], opset_version=ct.target.iOS18)
        def prog(x_in, u_in):
            return mb.slice_update(x=x_in, update=u_in, begin=np.array(begin, np.int32), end=np.array(end, np.int32),
                                   stride=np.array(stride, np.int32), name="y", **kw)
        ref = x.astype(np.float64).copy()
        ref[index] = u
        save_case(f"opc_slice_update_{name}", prog, ct.target.iOS18, {"x_in": x, "u_in": u}, {"y": ref})

    # A KV-cache write at a position known at run time: cache[:, :, pos:pos+1, :] = kv.
    cache = rng.uniform(-1, 1, (1, 2, 6, 4)).astype(np.float32)
    kv = rng.uniform(-1, 1, (1, 2, 1, 4)).astype(np.float32)
    pos = np.array([3], np.int32)

    @mb.program(input_specs=[mb.TensorSpec(shape=cache.shape), mb.TensorSpec(shape=kv.shape), mb.TensorSpec(shape=(1,), dtype=types.int32)],
                opset_version=ct.target.iOS18)
    def kv_prog(cache_in, kv_in, pos_in):
        zero = np.array([0, 0], np.int32)
        begin = mb.concat(values=[zero, pos_in, np.array([0], np.int32)], axis=0)
        end = mb.add(x=begin, y=np.array([1, 2, 1, 4], np.int32))
        return mb.slice_update(x=cache_in, update=kv_in, begin=begin, end=end, name="y")
    ref = cache.astype(np.float64).copy()
    ref[:, :, 3:4, :] = kv
    save_case("opc_slice_update_runtime_begin", kv_prog, ct.target.iOS18, {"cache_in": cache, "kv_in": kv, "pos_in": pos}, {"y": ref})


# ---- a stateful KV cache (iOS18 state + slice_update) -----------------------------------------

def stateful_kv_case():
    """Fixtures/mlprogram_state_kv/: state cache (fp16 [1, 2, 4, 3], zeros at the start);
    each prediction writes kv ([1, 2, 1, 3]) at row pos (int32 [1]) with slice_update and returns
    y = 2 * cache. input_<name>_<t>.npy for three predictions, expected_y_<t>.npy."""
    d = os.path.join(ROOT, "Fixtures", "mlprogram_state_kv")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

    @mb.program(input_specs=[mb.TensorSpec((1, 2, 1, 3), dtype=types.fp16), mb.TensorSpec((1,), dtype=types.int32),
                             mb.StateTensorSpec((1, 2, 4, 3), dtype=types.fp16)], opset_version=ct.target.iOS18)
    def prog(kv, pos, cache):
        begin = mb.concat(values=[np.array([0, 0], np.int32), pos, np.array([0], np.int32)], axis=0)
        end = mb.add(x=begin, y=np.array([1, 2, 1, 3], np.int32))
        c = mb.slice_update(x=mb.read_state(input=cache), update=kv, begin=begin, end=end)
        mb.coreml_update_state(state=cache, value=c)
        return mb.mul(x=c, y=np.float16(2.0), name="y")
    ml = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18)
    ml.save(os.path.join(d, "model.mlpackage"))
    rng = np.random.RandomState(64)
    cache = np.zeros((1, 2, 4, 3))
    for t, p in enumerate([0, 2, 1]):
        kv = rng.uniform(-1, 1, (1, 2, 1, 3)).astype(np.float16).astype(np.float32)
        cache[:, :, p:p + 1, :] = kv
        np.save(os.path.join(d, f"input_kv_{t}.npy"), kv)
        np.save(os.path.join(d, f"input_pos_{t}.npy"), np.array([p], np.float32))
        np.save(os.path.join(d, f"expected_y_{t}.npy"), (2 * cache).astype(np.float32))
    print("mlprogram_state_kv written")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    run_selected({"quant": quant_cases, "sdpa": sdpa_cases, "slice_update": slice_update_cases,
                  "state": stateful_kv_case})
