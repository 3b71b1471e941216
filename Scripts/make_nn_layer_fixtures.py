"""Reference fixtures for every layer type of Core ML's NeuralNetwork.proto.

Run (from the repository root):

    PY=$(Scripts/coremltools8-env)   # Python 3.11, coremltools 8.3.0, tensorflow-cpu 2.15.1, keras 2.15.0
    $PY Scripts/make_nn_layer_fixtures.py [--only CASE ...] [--skip-keras]

It (re)writes Fixtures/coreml_layers/<case>/ for every case below, plus
Fixtures/coreml_layers/coverage.json and Fixtures/coreml_layers/README.md:

  model.mlmodel   a Core ML NeuralNetwork model made with coremltools' NeuralNetworkBuilder
                  (keras_* cases: a tf.keras 2.15 model converted with
                  convert_to="neuralnetwork" at an iOS13/iOS14 deployment target).
  input_<i>.npy   float32 inputs in model-description order, in the Core ML shape of the
                  description (v1 cases with rank-5 mapping: the declared [C,H,W] / [C]
                  shape; Core ML sees it as [1,1,C,H,W] / [1,1,C,1,1]).
  output_<i>.npy  float32 expected outputs in model-description order, same shape rule.
  case.json       layer_type (the NeuralNetworkLayer oneof member name), layers (every oneof
                  member in the model, nested networks included), version (v1 = rank-5
                  [Seq,Batch,C,H,W] blob layer, v2 = rank-N layer), shape_mapping,
                  specificationVersion, tolerance {atol, rtol} (pass if
                  |got-expected| <= atol + rtol*|expected| elementwise), reference (the formula
                  or source of the expected numbers), notes, inputs/outputs (name, file, shape).

Expected numbers come from NumPy implementations (one function per layer type, below) of the
formulas in the comments of Apple's NeuralNetwork.proto, applied to the parameters READ BACK
from the saved spec (so the proto layout, not the builder's argument layout, is what the
reference uses). keras_* cases use Keras' own predict() output instead.

Deterministic: every case seeds its own generator from its name; re-running gives the same
bytes (protobuf deterministic serialization, np.save, sorted JSON).
"""

import argparse
import json
import math
import os
import shutil
import sys
import warnings
import zlib

warnings.filterwarnings("ignore")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import coremltools as ct
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder
from coremltools.models.neural_network import quantization_utils as qu
from coremltools.proto import NeuralNetwork_pb2, Model_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "coreml_layers")
LAYER_MEMBERS = [f.name for f in NeuralNetwork_pb2.NeuralNetworkLayer.DESCRIPTOR.oneofs_by_name["layer"].fields]

CASES = {}
QM_LINEAR = "_linear_quantization"  # coremltools.models.model._QUANTIZATION_MODE_LINEAR_QUANTIZATION
QM_LUT = "_lookup_table_quantization_linear"  # ..._LOOKUP_TABLE_LINEAR


def case(name, layer, version, tol=(1e-5, 1e-4), notes="", reference=None):
    def deco(fn):
        assert name not in CASES, name
        CASES[name] = dict(fn=fn, layer=layer, version=version, tol=tol, notes=notes,
                           reference=reference or (fn.__doc__ or "").strip())
        return fn
    return deco


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def f32(a):
    return np.asarray(a, dtype=np.float32)


def builder(inputs, outputs, v2=True):
    """inputs/outputs: lists of (name, array-or-shape). v2=False keeps the rank-5 mapping."""
    def arr(n, a):
        shape = a.shape if hasattr(a, "shape") else tuple(a)
        return (n, datatypes.Array(*shape))
    return NeuralNetworkBuilder([arr(n, a) for n, a in inputs], [arr(n, a) for n, a in outputs],
                                disable_rank5_shape_mapping=v2, use_float_arraytype=True)


# ---------------------------------------------------------------- weights read back from the spec
def weights(wp, shape=None):
    """Float values of a WeightParams: floatValue, float16Value, or rawValue with linear / LUT
    quantization (the proto's WeightParams / QuantizationParams comments)."""
    if len(wp.floatValue):
        w = np.array(wp.floatValue, dtype=np.float64)
    elif len(wp.float16Value):
        w = np.frombuffer(wp.float16Value, dtype="<f2").astype(np.float64)
    elif len(wp.rawValue):
        q = wp.quantization
        nbits = q.numberOfBits
        raw = np.frombuffer(wp.rawValue, dtype=np.uint8)
        n = int(np.prod(shape))
        if nbits == 8:
            codes = raw[:n].astype(np.int64)
        else:
            # bits are packed most-significant-bit first within each byte
            bits = np.unpackbits(raw)  # MSB first
            codes = bits[: n * nbits].reshape(n, nbits).dot(1 << np.arange(nbits - 1, -1, -1))
        kind = q.WhichOneof("QuantizationType")
        if kind == "linearQuantization":
            scale = np.array(q.linearQuantization.scale, dtype=np.float64)
            bias = np.array(q.linearQuantization.bias, dtype=np.float64)
            c = codes.reshape(shape[0], -1).astype(np.float64)
            s = scale.reshape(-1, 1) if scale.size > 1 else scale
            b = bias.reshape(-1, 1) if bias.size > 1 else bias
            w = (c * s + b).reshape(-1)
        elif kind == "lookupTableQuantization":
            lut = np.array(q.lookupTableQuantization.floatValue, dtype=np.float64)
            w = lut[codes]
        else:
            raise ValueError("rawValue without quantization")
        # cross-check with coremltools' own dequantizer
        cp = NeuralNetwork_pb2.WeightParams()
        cp.CopyFrom(wp)
        qu._dequantize_wp(cp, tuple(shape))  # rewrites the copy in place as floatValue
        assert np.allclose(np.array(cp.floatValue, dtype=np.float64), w, atol=1e-6), "dequantize mismatch"
    else:
        w = np.zeros(0)
    return w.reshape(shape) if shape is not None else w


def layer_of(b, i=-1):
    return b.nn_spec.layers[i]


# ---------------------------------------------------------------- numpy helpers (proto formulas)
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def act_ref(kind, x, p=None):
    """ActivationParams members, formulas of the proto comments."""
    if kind == "ReLU": return np.maximum(x, 0)
    if kind == "leakyReLU": return np.where(x >= 0, x, p["alpha"] * x)
    if kind == "tanh": return np.tanh(x)
    if kind == "scaledTanh": return p["alpha"] * np.tanh(p["beta"] * x)
    if kind == "sigmoid": return sigmoid(x)
    if kind == "linear": return p["alpha"] * x + p["beta"]
    if kind == "sigmoidHard": return np.minimum(np.maximum(p["alpha"] * x + p["beta"], 0), 1)
    if kind == "PReLU": return np.where(x >= 0, x, p["alpha"].reshape(-1, 1, 1) * x)
    if kind == "ELU": return np.where(x >= 0, x, p["alpha"] * (np.exp(x) - 1))
    if kind == "thresholdedReLU": return np.where(x > p["alpha"], x, 0)
    if kind == "softsign": return x / (1 + np.abs(x))
    if kind == "softplus": return np.log1p(np.exp(x))
    if kind == "parametricSoftplus":
        a = p["alpha"].reshape(-1, 1, 1); bt = p["beta"].reshape(-1, 1, 1)
        return a * np.log1p(np.exp(bt * x))
    raise ValueError(kind)


def act_from_params(ap):
    """Apply an ActivationParams message (used by recurrent layers)."""
    kind = ap.WhichOneof("NonlinearityType")
    m = getattr(ap, kind)
    p = {}
    for fld in ("alpha", "beta"):
        if hasattr(m, fld):
            p[fld] = getattr(m, fld)
    return lambda x: act_ref(kind, x, p)


def pad_hw(x, t, b, l, r, value=0.0):
    return np.pad(x, [(0, 0)] * (x.ndim - 2) + [(t, b), (l, r)], constant_values=value)


def conv2d_ref(x, W, bias, stride, dil, pads, groups):
    """x [C,H,W]; W [Cout, Cin/groups, kH, kW] (ConvolutionLayerParams weights layout)."""
    t, bo, l, r = pads
    xp = pad_hw(x, t, bo, l, r)
    Cout, Cg, kh, kw = W.shape
    C, H, Wd = xp.shape
    Ho = (H - (dil[0] * (kh - 1) + 1)) // stride[0] + 1
    Wo = (Wd - (dil[1] * (kw - 1) + 1)) // stride[1] + 1
    y = np.zeros((Cout, Ho, Wo))
    og = Cout // groups
    for o in range(Cout):
        g = o // og
        xs = xp[g * Cg:(g + 1) * Cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, i * dil[0]: i * dil[0] + stride[0] * (Ho - 1) + 1: stride[0],
                           j * dil[1]: j * dil[1] + stride[1] * (Wo - 1) + 1: stride[1]]
                y[o] += np.tensordot(W[o, :, i, j], patch, axes=(0, 0))
    if bias is not None:
        y += bias.reshape(-1, 1, 1)
    return y


def deconv2d_ref(x, W, bias, stride, pads, groups, out_hw=None):
    """x [C,H,W]; W [Cin, Cout/groups, kH, kW] (deconvolution weights layout)."""
    Cin, Og, kh, kw = W.shape
    C, H, Wd = x.shape
    Hf = (H - 1) * stride[0] + kh
    Wf = (Wd - 1) * stride[1] + kw
    Cout = Og * groups
    y = np.zeros((Cout, Hf, Wf))
    cg = Cin // groups
    for c in range(Cin):
        g = c // cg
        for i in range(kh):
            for j in range(kw):
                y[g * Og:(g + 1) * Og, i:i + stride[0] * (H - 1) + 1:stride[0], j:j + stride[1] * (Wd - 1) + 1:stride[1]] += \
                    W[c, :, i, j].reshape(-1, 1, 1) * x[c][None]
    t, bo, l, r = pads
    y = y[:, t:Hf - bo, l:Wf - r]
    if out_hw is not None:
        y = y[:, :out_hw[0], :out_hw[1]]
    if bias is not None:
        y += bias.reshape(-1, 1, 1)
    return y


def same_pads(inp, k, s, mode="BOTTOM_RIGHT_HEAVY"):
    out = -(-inp // s)
    total = max(0, (out - 1) * s + k - inp)
    small = total // 2
    return (small, total - small) if mode == "BOTTOM_RIGHT_HEAVY" else (total - small, small)


def pool2d_ref(x, kind, k, s, pads, exclude_pad=True, out_hw=None):
    t, b, l, r = pads
    fill = -np.inf if kind == "MAX" else 0.0
    xp = pad_hw(x, t, b, l, r, fill)
    ones = pad_hw(np.ones_like(x), t, b, l, r, 0.0)
    C, H, W = xp.shape
    Ho = (H - k[0]) // s[0] + 1 if out_hw is None else out_hw[0]
    Wo = (W - k[1]) // s[1] + 1 if out_hw is None else out_hw[1]
    y = np.zeros((C, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            win = xp[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            cnt = ones[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            if kind == "MAX":
                y[:, i, j] = win.reshape(C, -1).max(1)
            elif kind == "AVERAGE":
                n = cnt[0].sum() if exclude_pad else k[0] * k[1]
                y[:, i, j] = win.reshape(C, -1).sum(1) / n
            else:  # L2
                y[:, i, j] = np.sqrt((win.reshape(C, -1) ** 2).sum(1))
    return y


def interp_axis(x, axis, grid):
    """Linear interpolation of x along axis at fractional positions grid (clamped to [0, X-1])."""
    X = x.shape[axis]
    g = np.clip(np.asarray(grid, dtype=np.float64), 0, X - 1)
    i0 = np.floor(g).astype(int)
    i1 = np.minimum(i0 + 1, X - 1)
    w = g - i0
    a = np.take(x, i0, axis=axis)
    b = np.take(x, i1, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    w = w.reshape(shape)
    return a * (1 - w) + b * w


def sampling_grid(mode, X, N, start=0.0, end=None):
    """SamplingMode.Method grid on the interval [start, end] (default [0, X-1])."""
    if end is None:
        end = X - 1.0
    L = end - start
    if mode == "STRICT_ALIGN_ENDPOINTS_MODE":
        return np.linspace(start, end, N)
    if mode == "ALIGN_ENDPOINTS_MODE":
        return np.full(N, start + L / 2.0) if N == 1 else np.linspace(start, end, N)
    if mode == "UPSAMPLE_MODE":
        return np.minimum(X - 1, np.linspace(0, X - X / N, N))
    if mode == "ROI_ALIGN_MODE":
        sp = max(1.0, X - 1.0) / N
        st = 0.5 * sp
        return np.minimum(X - 1, np.linspace(st, st + (N - 1) * sp, N))
    raise ValueError(mode)


def broadcast_shape(*shapes):
    return np.broadcast_shapes(*shapes)


# ================================================================= v1 layers (rank-5 mapping)
def v1_case(name, layer, **kw):
    return case(name, layer, "v1", **kw)


def v2_case(name, layer, **kw):
    return case(name, layer, "v2", **kw)


def _conv_case(name, cin, cout, hw, k, stride, dil, groups, border, pads=(0, 0, 0, 0), asym="BOTTOM_RIGHT_HEAVY", fp16=False, has_bias=True, quant=None):
    @v1_case(name, "convolution", tol=((1e-3, 1e-3) if fp16 or quant else (1e-4, 1e-4)),
             notes="weights stored [Cout, Cin/groups, kH, kW]" + ("; float16 weights" if fp16 else "") +
                   ("; %s-quantized weights" % quant if quant else ""))
    def fn():
        """convolution: y[o] = b[o] + sum_{c in group(o), i, j} W[o, c, i, j] * xpad[c, s*h + d*i, s*w + d*j]
        (ConvolutionLayerParams; valid / same padding per ValidPadding / SamePadding comments)"""
        r = rng_for(name)
        x = f32(r.normal(size=(cin,) + hw))
        Wb = f32(r.normal(size=(k[0], k[1], cin // groups, cout)) * 0.3)  # builder layout (kH, kW, Cin/g, Cout)
        bias = f32(r.normal(size=cout)) if has_bias else None
        if border == "same":
            pt, pb = same_pads(hw[0], dil[0] * (k[0] - 1) + 1, stride[0], asym)
            pl, pr = same_pads(hw[1], dil[1] * (k[1] - 1) + 1, stride[1], asym)
            pp = (pt, pb, pl, pr)
        else:
            pp = pads
        # output shape first (declared), from a dummy reference with the builder-layout weights
        Wp = Wb.transpose(3, 2, 0, 1)
        y0 = conv2d_ref(x, Wp, bias, stride, dil, pp, groups)
        b = builder([("x", x)], [("y", y0)], v2=False)
        b.add_convolution("conv", kernel_channels=cin // groups, output_channels=cout, height=k[0], width=k[1],
                          stride_height=stride[0], stride_width=stride[1], border_mode=border, groups=groups,
                          W=Wb, b=bias, has_bias=has_bias, input_name="x", output_name="y", dilation_factors=list(dil),
                          padding_top=pads[0], padding_bottom=pads[1], padding_left=pads[2], padding_right=pads[3],
                          same_padding_asymmetry_mode=asym)
        spec = b.spec
        if fp16:
            spec = qu._quantize_spec_weights(spec, 16, QM_LINEAR)
        elif quant:
            spec = qu._quantize_spec_weights(spec, 8 if quant == "linear8" else 4,
                                             QM_LINEAR if quant == "linear8" else QM_LUT)
        L = spec.neuralNetwork.layers[0].convolution
        W = weights(L.weights, (cout, cin // groups, k[0], k[1]))
        bb = weights(L.bias, (cout,)) if has_bias else None
        y = conv2d_ref(x, W, bb, stride, dil, pp, groups)
        return spec, [("x", x)], [("y", y)]


_conv_case("convolution_valid", 3, 4, (7, 6), (3, 3), (1, 1), (1, 1), 1, "valid")
_conv_case("convolution_same_stride2", 3, 4, (7, 6), (3, 2), (2, 2), (1, 1), 1, "same")
_conv_case("convolution_same_top_left_heavy", 2, 3, (6, 6), (2, 2), (1, 1), (1, 1), 1, "same", asym="TOP_LEFT_HEAVY")
_conv_case("convolution_grouped_dilated_padded", 4, 6, (8, 7), (3, 3), (1, 2), (2, 1), 2, "valid", pads=(1, 2, 0, 1))
_conv_case("convolution_fp16_weights", 3, 4, (5, 5), (3, 3), (1, 1), (1, 1), 1, "valid", fp16=True)
_conv_case("convolution_quant8_linear", 3, 4, (5, 5), (3, 3), (1, 1), (1, 1), 1, "valid", quant="linear8")
_conv_case("convolution_quant4_lut", 3, 4, (5, 5), (3, 3), (1, 1), (1, 1), 1, "valid", quant="lut4")
_conv_case("convolution_no_bias", 2, 2, (4, 5), (1, 3), (1, 1), (1, 1), 1, "valid", has_bias=False)


def _deconv_case(name, cin, cout, hw, k, stride, groups, border, out_hw=None):
    @v1_case(name, "convolution", tol=(1e-4, 1e-4),
             notes="isDeconvolution; weights stored [Cin, Cout/groups, kH, kW]; full output (H-1)*s+k, then 'same' crops to H*s")
    def fn():
        """deconvolution: y[g*Og+o, s*h+i, s*w+j] += W[c, o, i, j] * x[c, h, w] (c in group g), then the padding amounts
        are cropped (BorderAmounts comment: H_out = (H_in-1)*stride + k - pads; SamePadding: H_out = H_in*stride)"""
        r = rng_for(name)
        x = f32(r.normal(size=(cin,) + hw))
        Wb = f32(r.normal(size=(k[0], k[1], cout // groups, cin)) * 0.3)  # builder layout (kH, kW, Cout/g, Cin)
        bias = f32(r.normal(size=cout))
        if border == "same":
            Ho, Wo = hw[0] * stride[0], hw[1] * stride[1]
            th = (hw[0] - 1) * stride[0] + k[0] - Ho
            tw = (hw[1] - 1) * stride[1] + k[1] - Wo
            pp = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        else:
            pp = (0, 0, 0, 0)
        Wp = Wb.transpose(3, 2, 0, 1)
        y0 = deconv2d_ref(x, Wp, bias, stride, pp, groups)
        b = builder([("x", x)], [("y", y0)], v2=False)
        b.add_convolution("deconv", kernel_channels=cin, output_channels=cout, height=k[0], width=k[1],
                          stride_height=stride[0], stride_width=stride[1], border_mode=border, groups=groups,
                          W=Wb, b=bias, has_bias=True, is_deconv=True, input_name="x", output_name="y",
                          output_shape=out_hw)
        L = b.spec.neuralNetwork.layers[0].convolution
        W = weights(L.weights, (cin, cout // groups, k[0], k[1]))
        y = deconv2d_ref(x, W, weights(L.bias, (cout,)), stride, pp, groups)
        return b.spec, [("x", x)], [("y", y)]


_deconv_case("deconvolution_valid_stride2", 2, 3, (3, 4), (3, 3), (2, 2), 1, "valid")
_deconv_case("deconvolution_same_grouped", 4, 4, (3, 3), (2, 2), (2, 2), 2, "same", out_hw=(6, 6))


def _pool_case(name, kind, k, s, padding, pads=(0, 0, 0, 0), exclude=True, glob=False, hw=(7, 8)):
    @v1_case(name, "pooling", notes="padding=%s, exclude_pad_area=%s, global=%s" % (padding, exclude, glob))
    def fn():
        """pooling (PoolingLayerParams): MAX / AVERAGE (padded cells excluded from the count if avgPoolExcludePadding) /
        L2 = sqrt(sum x^2) over each kernel window; SAME per SamePadding; INCLUDE_LAST_PIXEL per ValidCompletePadding
        (H_out = ceil((H + 2p - k)/s) + 1, minus one if the last window starts at or past H + p)"""
        r = rng_for(name)
        x = f32(r.normal(size=(3,) + hw))
        C, H, W = x.shape
        out_hw = None
        if glob:
            pp, kk, ss = (0, 0, 0, 0), (H, W), (1, 1)
        elif padding == "SAME":
            pp = same_pads(H, k[0], s[0]) + same_pads(W, k[1], s[1])
            kk, ss = k, s
        elif padding == "INCLUDE_LAST_PIXEL":
            kk, ss = k, s
            ph, pw = pads[0], pads[2]
            outs = []
            for inp, kz, sz, pz in ((H, k[0], s[0], ph), (W, k[1], s[1], pw)):
                o = int(math.ceil(float(inp + 2 * pz - kz) / sz)) + 1
                if pz > 0 and (o - 1) * sz >= inp + pz:
                    o -= 1
                outs.append(o)
            out_hw = tuple(outs)
            # pad enough on the end for the last window (padded cells count as padding)
            extra_h = max(0, (out_hw[0] - 1) * s[0] + k[0] - (H + 2 * ph))
            extra_w = max(0, (out_hw[1] - 1) * s[1] + k[1] - (W + 2 * pw))
            pp = (ph, ph + extra_h, pw, pw + extra_w)
        else:
            pp, kk, ss = pads, k, s
        y = pool2d_ref(x.astype(np.float64), kind, kk, ss, pp, exclude, out_hw)
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_pooling("pool", height=k[0], width=k[1], stride_height=s[0], stride_width=s[1], layer_type=kind,
                      padding_type=padding, input_name="x", output_name="y", exclude_pad_area=exclude, is_global=glob,
                      padding_top=pads[0], padding_bottom=pads[1], padding_left=pads[2], padding_right=pads[3])
        return b.spec, [("x", x)], [("y", y)]


_pool_case("pooling_max_valid", "MAX", (2, 2), (2, 2), "VALID")
_pool_case("pooling_max_same_stride2", "MAX", (3, 3), (2, 2), "SAME")
_pool_case("pooling_avg_valid_padded_exclude", "AVERAGE", (3, 3), (2, 2), "VALID", pads=(1, 1, 1, 1), exclude=True)
_pool_case("pooling_avg_valid_padded_include", "AVERAGE", (3, 3), (2, 2), "VALID", pads=(1, 1, 1, 1), exclude=False)
_pool_case("pooling_l2_valid", "L2", (2, 3), (1, 2), "VALID")
_pool_case("pooling_avg_global", "AVERAGE", (1, 1), (1, 1), "VALID", glob=True)
_pool_case("pooling_max_include_last_pixel", "MAX", (3, 3), (2, 2), "INCLUDE_LAST_PIXEL", pads=(1, 1, 1, 1), hw=(8, 8))


ACTIVATIONS = [
    ("RELU", "ReLU", None), ("LEAKYRELU", "leakyReLU", [0.2]), ("TANH", "tanh", None),
    ("SCALED_TANH", "scaledTanh", [1.7, 0.6]), ("SIGMOID", "sigmoid", None), ("LINEAR", "linear", [0.5, -0.25]),
    ("SIGMOID_HARD", "sigmoidHard", [0.3, 0.4]), ("PRELU", "PReLU", "perchannel"), ("ELU", "ELU", 0.8),
    ("THRESHOLDEDRELU", "thresholdedReLU", 0.3), ("SOFTSIGN", "softsign", None), ("SOFTPLUS", "softplus", None),
    ("PARAMETRICSOFTPLUS", "parametricSoftplus", "perchannel2"),
]


@v1_case("activation_all", "activation",
         notes="one output per ActivationParams member (output name = member name); PReLU / parametricSoftplus per channel")
def _activation_all():
    """activation (ActivationParams comments): ReLU max(0,x); leakyReLU x or alpha*x; tanh; scaledTanh alpha*tanh(beta*x);
    sigmoid; linear alpha*x+beta; sigmoidHard min(max(alpha*x+beta,0),1); PReLU x or alpha[c]*x; ELU x or alpha*(e^x-1);
    thresholdedReLU x if x>alpha else 0; softsign x/(1+|x|); softplus log(1+e^x); parametricSoftplus alpha[c]*log(1+e^(beta[c]*x))"""
    r = rng_for("activation_all")
    x = f32(r.normal(size=(3, 2, 4)) * 2)
    C = x.shape[0]
    outs, calls = [], []
    for mode, member, prm in ACTIVATIONS:
        p = {}
        params = None
        if member in ("leakyReLU",):
            params = prm; p["alpha"] = prm[0]
        elif member in ("scaledTanh", "linear", "sigmoidHard"):
            params = prm; p["alpha"], p["beta"] = prm
        elif member in ("ELU", "thresholdedReLU"):
            params = prm; p["alpha"] = prm
        elif member == "PReLU":
            params = f32(r.uniform(0.05, 0.5, size=C)); p["alpha"] = params.astype(np.float64)
        elif member == "parametricSoftplus":
            a = f32(r.uniform(0.5, 1.5, size=C)); bt = f32(r.uniform(0.5, 1.5, size=C))
            params = [a, bt]; p["alpha"], p["beta"] = a.astype(np.float64), bt.astype(np.float64)
        # float32 rounding of scalar params as stored in the proto
        p = {k: (f32(v).astype(np.float64) if not isinstance(v, np.ndarray) else v) for k, v in p.items()}
        outs.append((member, act_ref(member, x.astype(np.float64), p)))
        calls.append((mode, member, params))
    b = builder([("x", x)], outs, v2=False)
    for mode, member, params in calls:
        b.add_activation("act_" + member, mode, "x", member, params=params)
    return b.spec, [("x", x)], outs


@v1_case("innerProduct", "innerProduct", notes="input [C] (rank-5 [1,1,C,1,1]); weights stored [Cout, Cin]")
def _inner_product():
    """innerProduct: y = W x + b with W [C_out, C_in] (InnerProductLayerParams)"""
    r = rng_for("innerProduct")
    x = f32(r.normal(size=(5,)))
    W = f32(r.normal(size=(3, 5))); bias = f32(r.normal(size=3))
    b = builder([("x", x)], [("y", (3,))], v2=False)
    b.add_inner_product("ip", W=W, b=bias, input_channels=5, output_channels=3, has_bias=True, input_name="x", output_name="y")
    L = b.spec.neuralNetwork.layers[0].innerProduct
    y = weights(L.weights, (3, 5)) @ x + weights(L.bias, (3,))
    return b.spec, [("x", x)], [("y", y)]


def _ip_quant(name, nbits, mode):
    @v1_case(name, "innerProduct", tol=(1e-4, 1e-4),
             notes="weights quantized by coremltools (%d-bit %s); reference dequantizes the stored rawValue "
                   "(linear: scale[c]*q + bias[c]; LUT: lut[q]; sub-byte codes packed MSB-first)" % (nbits, mode))
    def fn():
        """innerProduct with quantized WeightParams: dequantize (QuantizationParams comment), then y = W x + b"""
        r = rng_for(name)
        x = f32(r.normal(size=(6,)))
        W = f32(r.normal(size=(4, 6))); bias = f32(r.normal(size=4))
        b = builder([("x", x)], [("y", (4,))], v2=False)
        b.add_inner_product("ip", W=W, b=bias, input_channels=6, output_channels=4, has_bias=True, input_name="x", output_name="y")
        spec = qu._quantize_spec_weights(b.spec, nbits, mode)
        L = spec.neuralNetwork.layers[0].innerProduct
        y = weights(L.weights, (4, 6)) @ x + weights(L.bias, (4,))
        return spec, [("x", x)], [("y", y)]


_ip_quant("innerProduct_quant8_linear", 8, QM_LINEAR)
_ip_quant("innerProduct_quant4_lut", 4, QM_LUT)
_ip_quant("innerProduct_quant2_lut", 2, QM_LUT)


@v1_case("embedding_rank5", "embedding",
         notes="rank-N model (EXACT mapping) feeding the rank-5 index blob [S,B,1,1,1]; weights stored [outputChannels, inputDim]")
def _embedding():
    """embedding: y[s,b,:,0,0] = W[:, x[s,b,0,0,0]] + bias (EmbeddingLayerParams)"""
    r = rng_for("embedding")
    x = f32(r.integers(0, 6, size=(4, 1, 1, 1, 1)))
    W = f32(r.normal(size=(3, 6))); bias = f32(r.normal(size=3))
    b = builder([("x", x)], [("y", (4, 1, 3, 1, 1))], v2=True)
    b.add_embedding("emb", W=W, b=bias, input_dim=6, output_channels=3, has_bias=True, input_name="x", output_name="y")
    L = b.spec.neuralNetwork.layers[0].embedding
    Wr = weights(L.weights, (3, 6))
    y = (Wr[:, x.reshape(-1).astype(int)].T + weights(L.bias, (3,))).reshape(4, 1, 3, 1, 1)
    return b.spec, [("x", x)], [("y", y)]


@v1_case("batchnorm", "batchnorm", notes="given mean/variance")
def _batchnorm():
    """batchnorm: y = gamma[c] * (x - mean[c]) / sqrt(var[c] + eps) + beta[c]"""
    r = rng_for("batchnorm")
    x = f32(r.normal(size=(3, 4, 5)))
    g, be, m, v = (f32(r.normal(size=3)), f32(r.normal(size=3)), f32(r.normal(size=3)), f32(r.uniform(0.5, 2, size=3)))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    b.add_batchnorm("bn", 3, g, be, m, v, input_name="x", output_name="y", epsilon=1e-3)
    L = b.spec.neuralNetwork.layers[0].batchnorm
    gg, bb, mm, vv = (weights(L.gamma, (3, 1, 1)), weights(L.beta, (3, 1, 1)), weights(L.mean, (3, 1, 1)), weights(L.variance, (3, 1, 1)))
    y = gg * (x - mm) / np.sqrt(vv + f32(L.epsilon)) + bb
    return b.spec, [("x", x)], [("y", y)]


@v1_case("batchnorm_instance", "batchnorm", notes="computeMeanVar + instanceNormalization: statistics over H,W of each channel (population variance)")
def _batchnorm_instance():
    """batchnorm with computeMeanVar & instanceNormalization: mean/var of each channel over H,W, then the batchnorm formula"""
    r = rng_for("batchnorm_instance")
    x = f32(r.normal(size=(3, 4, 5)) * 2 + 1)
    g, be = f32(r.normal(size=3)), f32(r.normal(size=3))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    b.add_batchnorm("bn", 3, g, be, input_name="x", output_name="y", compute_mean_var=True, instance_normalization=True, epsilon=1e-5)
    m = x.mean(axis=(1, 2), keepdims=True, dtype=np.float64)
    v = x.var(axis=(1, 2), keepdims=True, dtype=np.float64)
    y = g.reshape(3, 1, 1) * (x - m) / np.sqrt(v + 1e-5) + be.reshape(3, 1, 1)
    return b.spec, [("x", x)], [("y", y)]


def _mvn_case(name, across, normvar):
    @v1_case(name, "mvn", tol=(1e-4, 1e-4),
             notes="acrossChannels=%s normalizeVariance=%s; the proto does not say where epsilon enters; the reference uses "
                   "(x-mean)/sqrt(var+eps) with population variance; data has var ~ 1 so eps=1e-6 placement is below tolerance" % (across, normvar))
    def fn():
        """mvn (MeanVarianceNormalizeLayerParams): subtract the mean over H,W per channel (or over C,H,W if acrossChannels);
        if normalizeVariance divide by sqrt(variance + eps)"""
        r = rng_for(name)
        x = f32(r.normal(size=(3, 4, 4)) * 1.5 + 0.5)
        axes = (0, 1, 2) if across else (1, 2)
        y = x - x.mean(axis=axes, keepdims=True, dtype=np.float64)
        if normvar:
            y = y / np.sqrt(x.var(axis=axes, keepdims=True, dtype=np.float64) + 1e-6)
        b = builder([("x", x)], [("y", x.shape)], v2=False)
        b.add_mvn("mvn", "x", "y", across_channels=across, normalize_variance=normvar, epsilon=1e-6)
        return b.spec, [("x", x)], [("y", y)]


_mvn_case("mvn_per_channel", False, True)
_mvn_case("mvn_across_channels", True, True)
_mvn_case("mvn_mean_only", False, False)


@v1_case("l2normalize", "l2normalize", notes="norm over C,H,W together (axes -3,-2,-1); eps placement not stated, negligible here")
def _l2():
    """l2normalize: y = x / sqrt(sum_{c,h,w} x^2 + eps)"""
    r = rng_for("l2normalize")
    x = f32(r.normal(size=(3, 2, 2)))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    b.add_l2_normalize("l2", "x", "y", epsilon=1e-6)
    y = x / np.sqrt((x.astype(np.float64) ** 2).sum() + 1e-6)
    return b.spec, [("x", x)], [("y", y)]


@v1_case("softmax", "softmax", notes="along axis -3 (channels), independently at every (h, w)")
def _softmax():
    """softmax: y[c,h,w] = exp(x[c,h,w]) / sum_c' exp(x[c',h,w])"""
    r = rng_for("softmax")
    x = f32(r.normal(size=(4, 2, 3)))
    e = np.exp(x - x.max(0, keepdims=True))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    b.add_softmax("sm", "x", "y")
    return b.spec, [("x", x)], [("y", e / e.sum(0, keepdims=True))]


def _lrn_case(name, size, alpha, beta, k):
    @v1_case(name, "lrn", notes="localSize=%d alpha=%g beta=%g k=%g; window over channels centred at c: "
             "[c - (size-1)//2, c + size//2], clipped to [0, C-1], zero beyond" % (size, alpha, beta, k))
    def fn():
        """lrn: y_c = x_c / (k + alpha/localSize * sum_{c' in window(c)} x_{c'}^2)^beta (LRNLayerParams)"""
        r = rng_for(name)
        x = f32(r.normal(size=(5, 3, 3)))
        C = x.shape[0]
        sq = x.astype(np.float64) ** 2
        s = np.zeros_like(sq)
        for c in range(C):
            lo, hi = max(0, c - (size - 1) // 2), min(C - 1, c + size // 2)
            s[c] = sq[lo:hi + 1].sum(0)
        y = x / (k + alpha / size * s) ** beta
        b = builder([("x", x)], [("y", x.shape)], v2=False)
        b.add_lrn("lrn", "x", "y", alpha=alpha, beta=beta, local_size=size, k=k)
        return b.spec, [("x", x)], [("y", y)]


_lrn_case("lrn_size3", 3, 0.5, 0.75, 2.0)
_lrn_case("lrn_size1", 1, 2.0, 3.0, 8.0)


UNARY = [("sqrt", dict(), lambda x, p: np.sqrt(x), "pos"),
         ("rsqrt", dict(epsilon=1e-4), lambda x, p: 1 / np.sqrt(x + p["epsilon"]), "pos"),
         ("inverse", dict(epsilon=1e-4), lambda x, p: 1 / (x + p["epsilon"]), "pos"),
         ("power", dict(alpha=2.5), lambda x, p: x ** p["alpha"], "pos"),
         ("exp", dict(), lambda x, p: np.exp(x), "any"),
         ("log", dict(), lambda x, p: np.log(x), "pos"),
         ("abs", dict(), lambda x, p: np.abs(x), "any"),
         ("threshold", dict(alpha=0.3), lambda x, p: np.maximum(p["alpha"], x), "any")]


def _unary_case(mode, prm, fn_, dom, shift=0.0, scale=1.0, suffix=""):
    name = "unary_" + mode + suffix

    @v1_case(name, "unary", notes="UnaryFunctionLayerParams %s, shift=%g scale=%g (applied as f(scale*x + shift)); "
             "epsilon default 1e-6 if 0" % (mode.upper(), shift, scale))
    def fn():
        """unary: f(scale * x + shift) with SQRT sqrt; RSQRT 1/sqrt(x+eps); INVERSE 1/(x+eps); POWER x^alpha; EXP; LOG; ABS;
        THRESHOLD max(alpha, x) (UnaryFunctionLayerParams)"""
        r = rng_for(name)
        x = f32(r.uniform(0.2, 3.0, size=(2, 3, 3)) if dom == "pos" else r.normal(size=(2, 3, 3)))
        p = dict(prm)
        p = {k: float(f32(v)) for k, v in p.items()}
        p.setdefault("epsilon", 1e-6)
        y = fn_(scale * x.astype(np.float64) + shift, p)
        b = builder([("x", x)], [("y", x.shape)], v2=False)
        kw = dict(alpha=prm.get("alpha", 1.0), shift=shift, scale=scale)
        if "epsilon" in prm:
            kw["epsilon"] = prm["epsilon"]
        b.add_unary("u", "x", "y", mode=mode, **kw)
        return b.spec, [("x", x)], [("y", y)]


for _m, _p, _f, _d in UNARY:
    _unary_case(_m, _p, _f, _d)
_unary_case("log", {}, lambda x, p: np.log(x), "pos", shift=0.5, scale=2.0, suffix="_shift_scale")


def _upsample_case(name, sh, sw, mode, lin="DEFAULT"):
    @v1_case(name, "upsample", notes="mode=%s linearUpsampleMode=%s scaling=(%s,%s)" % (mode, lin, sh, sw))
    def fn():
        """upsample (UpsampleLayerParams): NN repeats each pixel; BILINEAR samples the grid
        DEFAULT: i*(X-X/Xo)/(Xo-1); ALIGN_CORNERS_TRUE: i*(X-1)/(Xo-1); ALIGN_CORNERS_FALSE: (i+0.5)*X/Xo-0.5, clamped to [0,X-1]"""
        r = rng_for(name)
        x = f32(r.normal(size=(2, 3, 4)))
        C, H, W = x.shape
        Ho, Wo = int(H * sh), int(W * sw)
        if mode == "NN":
            y = x.repeat(int(sh), 1).repeat(int(sw), 2)
        else:
            def grid(X, Xo):
                i = np.arange(Xo, dtype=np.float64)
                if lin == "DEFAULT":
                    g = i * ((X - X / Xo) / (Xo - 1))
                elif lin == "ALIGN_CORNERS_TRUE":
                    g = i * ((X - 1) / (Xo - 1))
                else:
                    g = i * (X / Xo) + 0.5 * (X / Xo) - 0.5
                return np.clip(g, 0, X - 1)
            y = interp_axis(interp_axis(x.astype(np.float64), 1, grid(H, Ho)), 2, grid(W, Wo))
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_upsample("up", sh, sw, "x", "y", mode=mode, linear_upsample_mode=lin)
        return b.spec, [("x", x)], [("y", y)]


_upsample_case("upsample_nn", 2, 3, "NN")
_upsample_case("upsample_bilinear_default", 2, 2, "BILINEAR")
_upsample_case("upsample_bilinear_align_corners_true", 2, 2, "BILINEAR", "ALIGN_CORNERS_TRUE")
_upsample_case("upsample_bilinear_align_corners_false_fractional", 1.5, 2.5, "BILINEAR", "ALIGN_CORNERS_FALSE")


def _resize_case(name, mode, th, tw):
    @v1_case(name, "resizeBilinear", notes="SamplingMode %s, target (%d,%d)" % (mode, th, tw))
    def fn():
        """resizeBilinear: bilinear interpolation at the SamplingMode grid points along H and W"""
        r = rng_for(name)
        x = f32(r.normal(size=(2, 4, 5)))
        C, H, W = x.shape
        y = interp_axis(interp_axis(x.astype(np.float64), 1, sampling_grid(mode, H, th)), 2, sampling_grid(mode, W, tw))
        b = builder([("x", x)], [("y", (C, th, tw))], v2=False)
        b.add_resize_bilinear("rb", "x", "y", target_height=th, target_width=tw, mode=mode)
        return b.spec, [("x", x)], [("y", y)]


_resize_case("resizeBilinear_strict_align", "STRICT_ALIGN_ENDPOINTS_MODE", 7, 3)
_resize_case("resizeBilinear_align_endpoints_n1", "ALIGN_ENDPOINTS_MODE", 1, 8)
_resize_case("resizeBilinear_upsample_mode", "UPSAMPLE_MODE", 8, 10)
_resize_case("resizeBilinear_roi_align_mode", "ROI_ALIGN_MODE", 6, 4)


def _crop_resize_case(name, box_mode, normalized, spatial_scale, with_batch_index):
    @v1_case(name, "cropResize", notes="boxIndicesMode=%s normalized=%s spatialScale=%g; rank-N model with rank-5 blobs: "
             "features [1,B,C,H,W], boxes [N,1,4|5,1,1]; grid = STRICT_ALIGN_ENDPOINTS linspace(start, end, size) inside each box"
             % (box_mode, normalized, spatial_scale, ))
    def fn():
        """cropResize (CropResizeLayerParams): each box -> [h0,w0,h1,w1] (from the BoxCoordinatesMode; normalized coordinates times
        (H-1),(W-1); times spatialScale), bilinear samples at linspace(h0,h1,Ho) x linspace(w0,w1,Wo)"""
        r = rng_for(name)
        B = 2
        feat = f32(r.normal(size=(1, B, 2, 6, 7)))
        H, W = 6, 7
        corners = np.array([[0.5, 1.0, 4.0, 5.5], [1.0, 0.0, 5.0, 3.0], [2.0, 2.5, 3.0, 6.0]])  # h0,w0,h1,w1 in pixels
        sc = spatial_scale
        c = corners / sc
        if normalized:
            c = c / np.array([H - 1, W - 1, H - 1, W - 1])
        if box_mode == "CORNERS_HEIGHT_FIRST":
            boxes = c
        elif box_mode == "CORNERS_WIDTH_FIRST":
            boxes = c[:, [1, 0, 3, 2]]
        elif box_mode == "CENTER_SIZE_HEIGHT_FIRST":
            boxes = np.stack([(c[:, 0] + c[:, 2]) / 2, (c[:, 1] + c[:, 3]) / 2, c[:, 2] - c[:, 0], c[:, 3] - c[:, 1]], 1)
        else:
            boxes = np.stack([(c[:, 1] + c[:, 3]) / 2, (c[:, 0] + c[:, 2]) / 2, c[:, 3] - c[:, 1], c[:, 2] - c[:, 0]], 1)
        N = boxes.shape[0]
        bidx = np.array([1, 0, 1], dtype=np.float64)
        roi = np.concatenate([bidx[:, None], boxes], 1) if with_batch_index else boxes
        roi = f32(roi.reshape(N, 1, roi.shape[1], 1, 1))
        # reference from the float32 box values (what the model reads)
        bx = roi.reshape(N, -1).astype(np.float64)
        if with_batch_index:
            bsel, bx = bx[:, 0].astype(int), bx[:, 1:]
        if box_mode == "CORNERS_HEIGHT_FIRST":
            hw = bx
        elif box_mode == "CORNERS_WIDTH_FIRST":
            hw = bx[:, [1, 0, 3, 2]]
        elif box_mode == "CENTER_SIZE_HEIGHT_FIRST":
            hw = np.stack([bx[:, 0] - bx[:, 2] / 2, bx[:, 1] - bx[:, 3] / 2, bx[:, 0] + bx[:, 2] / 2, bx[:, 1] + bx[:, 3] / 2], 1)
        else:
            hw = np.stack([bx[:, 1] - bx[:, 3] / 2, bx[:, 0] - bx[:, 2] / 2, bx[:, 1] + bx[:, 3] / 2, bx[:, 0] + bx[:, 2] / 2], 1)
        if normalized:
            hw = hw * np.array([H - 1, W - 1, H - 1, W - 1])
        hw = hw * sc
        Ho, Wo = 3, 4
        outs = []
        for n in range(N):
            gh = np.linspace(hw[n, 0], hw[n, 2], Ho)
            gw = np.linspace(hw[n, 1], hw[n, 3], Wo)
            src = feat[0].astype(np.float64)  # [B,C,H,W]
            res = interp_axis(interp_axis(src, 2, gh), 3, gw)  # [B,C,Ho,Wo]
            outs.append(res[bsel[n]][None] if with_batch_index else res)
        y = np.stack(outs, 0)  # [N,B or 1,C,Ho,Wo]
        b = builder([("features", feat), ("boxes", roi)], [("y", y)], v2=True)
        b.add_crop_resize("cr", ["features", "boxes"], "y", target_height=Ho, target_width=Wo,
                          mode="STRICT_ALIGN_ENDPOINTS_MODE", normalized_roi=normalized, box_indices_mode=box_mode,
                          spatial_scale=sc)
        return b.spec, [("features", feat), ("boxes", roi)], [("y", y)]


_crop_resize_case("cropResize_corners_all_batches", "CORNERS_HEIGHT_FIRST", False, 1.0, False)
_crop_resize_case("cropResize_center_size_width_first_normalized_batch_index", "CENTER_SIZE_WIDTH_FIRST", True, 1.0, True)
_crop_resize_case("cropResize_corners_width_first_spatial_scale", "CORNERS_WIDTH_FIRST", False, 0.5, False)


def _elementwise_case(name, member, mode, shapes, alpha=None):
    @v1_case(name, member, notes="shapes %s (broadcast of [C,1,1] / [1,H,W] / [1,1,1] against [C,H,W])%s"
             % (shapes, "" if alpha is None else "; alpha=%g" % alpha))
    def fn():
        """add/multiply/average/max/min (AddLayerParams, MultiplyLayerParams, ...): elementwise over the inputs with the limited
        broadcasting of the proto; with one input, add/multiply use the constant alpha"""
        r = rng_for(name)
        xs = [f32(r.normal(size=s)) for s in shapes]
        arrs = [a.astype(np.float64) for a in xs]
        if mode == "ADD":
            y = sum(arrs) + (alpha if (alpha is not None and len(xs) == 1) else 0)
        elif mode == "MULTIPLY":
            y = arrs[0].copy()
            for a in arrs[1:]:
                y = y * a
            if alpha is not None and len(xs) == 1:
                y = y * alpha
        elif mode == "AVE":
            y = sum(np.broadcast_arrays(*arrs)) / len(arrs)
        elif mode == "MAX":
            y = np.maximum.reduce(np.broadcast_arrays(*arrs))
        else:
            y = np.minimum.reduce(np.broadcast_arrays(*arrs))
        names = ["x%d" % i for i in range(len(xs))]
        b = builder(list(zip(names, xs)), [("y", y)], v2=False)
        b.add_elementwise("ew", names if len(names) > 1 else names[0], "y", mode, alpha=alpha)
        return b.spec, list(zip(names, xs)), [("y", y)]


_elementwise_case("add_three_inputs", "add", "ADD", [(3, 2, 4)] * 3)
_elementwise_case("add_broadcast_channel", "add", "ADD", [(3, 2, 4), (3, 1, 1)])
_elementwise_case("add_alpha_single_input", "add", "ADD", [(3, 2, 4)], alpha=1.5)
_elementwise_case("multiply_broadcast_spatial", "multiply", "MULTIPLY", [(3, 2, 4), (1, 2, 4)])
_elementwise_case("multiply_alpha_single_input", "multiply", "MULTIPLY", [(3, 2, 4)], alpha=-2.0)
_elementwise_case("average", "average", "AVE", [(3, 2, 4), (3, 2, 4), (3, 1, 1)])
_elementwise_case("max", "max", "MAX", [(3, 2, 4), (3, 2, 4)])
_elementwise_case("min", "min", "MIN", [(3, 2, 4), (3, 1, 1)])


def _dot_case(name, cos):
    @v1_case(name, "dot", notes="cosineSimilarity=%s; inputs [C] (rank-5 [1,1,C,1,1]), output [1]" % cos)
    def fn():
        """dot: y = sum_c a[c] b[c], or with cosineSimilarity (a.b)/(|a||b|) (DotProductLayerParams)"""
        r = rng_for(name)
        a, c = f32(r.normal(size=(6,))), f32(r.normal(size=(6,)))
        y = np.array([np.dot(a.astype(np.float64), c)])
        if cos:
            y = y / (np.linalg.norm(a.astype(np.float64)) * np.linalg.norm(c.astype(np.float64)))
        b = builder([("a", a), ("b", c)], [("y", (1,))], v2=False)
        b.add_elementwise("dot", ["a", "b"], "y", "COS" if cos else "DOT")
        return b.spec, [("a", a), ("b", c)], [("y", y)]


_dot_case("dot_product", False)
_dot_case("dot_cosine_similarity", True)


@v1_case("concat_channels", "concat", notes="axis -3")
def _concat():
    """concat: along channels (axis -3) (ConcatLayerParams, sequenceConcat=false)"""
    r = rng_for("concat")
    a, c = f32(r.normal(size=(2, 3, 4))), f32(r.normal(size=(3, 3, 4)))
    y = np.concatenate([a, c], 0)
    b = builder([("a", a), ("b", c)], [("y", y)], v2=False)
    b.add_elementwise("cat", ["a", "b"], "y", "CONCAT")
    return b.spec, [("a", a), ("b", c)], [("y", y)]


@v1_case("concat_sequence", "concat", notes="sequenceConcat: axis -5 of rank-5 blobs; rank-N model with explicit rank-5 inputs [S,1,C,1,1]")
def _concat_seq():
    """concat with sequenceConcat: along axis -5 (Seq)"""
    r = rng_for("concat_seq")
    a, c = f32(r.normal(size=(2, 1, 3, 1, 1))), f32(r.normal(size=(4, 1, 3, 1, 1)))
    y = np.concatenate([a, c], 0)
    b = builder([("a", a), ("b", c)], [("y", y)], v2=True)
    b.add_elementwise("cat", ["a", "b"], "y", "SEQUENCE_CONCAT")
    return b.spec, [("a", a), ("b", c)], [("y", y)]


@v1_case("split_channels", "split", notes="equal split along axis -3 into 3 outputs")
def _split():
    """split: equal parts along channels (SplitLayerParams nOutputs)"""
    r = rng_for("split")
    x = f32(r.normal(size=(6, 2, 3)))
    ys = np.split(x, 3, 0)
    outs = [("y%d" % i, a) for i, a in enumerate(ys)]
    b = builder([("x", x)], outs, v2=False)
    b.add_split("split", "x", [n for n, _ in outs])
    return b.spec, [("x", x)], outs


def _flatten_case(name, mode):
    @v1_case(name, "flatten", notes="mode %s; output [C*H*W,1,1]" % mode)
    def fn():
        """flatten: CHANNEL_FIRST = row-major [C,H,W] order; CHANNEL_LAST = [H,W,C] order (FlattenLayerParams)"""
        r = rng_for(name)
        x = f32(r.normal(size=(3, 2, 4)))
        y = (x.reshape(-1) if mode == "CHANNEL_FIRST" else x.transpose(1, 2, 0).reshape(-1)).reshape(-1, 1, 1)
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_flatten("fl", 0 if mode == "CHANNEL_FIRST" else 1, "x", "y")
        return b.spec, [("x", x)], [("y", y)]


_flatten_case("flatten_channel_first", "CHANNEL_FIRST")
_flatten_case("flatten_channel_last", "CHANNEL_LAST")


def _reshape_case(name, mode, target):
    @v1_case(name, "reshape", notes="mode %s targetShape %s" % (mode, target))
    def fn():
        """reshape (ReshapeLayerParams): CHANNEL_FIRST reshapes the row-major [C,H,W] data; CHANNEL_LAST flattens in
        [H,W,C] order, reshapes to [H_out,W_out,C_out] and permutes back to [C_out,H_out,W_out]"""
        r = rng_for(name)
        x = f32(r.normal(size=(4, 3, 2)))
        C, H, W = target
        if mode == "CHANNEL_FIRST":
            y = x.reshape(target)
        else:
            y = x.transpose(1, 2, 0).reshape(-1).reshape(H, W, C).transpose(2, 0, 1)
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_reshape("rs", "x", "y", target, 0 if mode == "CHANNEL_FIRST" else 1)
        return b.spec, [("x", x)], [("y", y)]


_reshape_case("reshape_channel_first", "CHANNEL_FIRST", (2, 6, 2))
_reshape_case("reshape_channel_last", "CHANNEL_LAST", (3, 2, 4))


@v1_case("permute", "permute", notes="axis [0,3,1,2] of [Seq,C,H,W] (batch axis fixed): [C,H,W] -> [W,C,H]")
def _permute():
    """permute: axes of [Seq, C, H, W] (PermuteLayerParams, batch stays at axis 1 of the rank-5 blob)"""
    r = rng_for("permute")
    x = f32(r.normal(size=(2, 3, 4)))
    y = x.transpose(2, 0, 1)
    b = builder([("x", x)], [("y", y)], v2=False)
    b.add_permute("pm", (0, 3, 1, 2), "x", "y")
    return b.spec, [("x", x)], [("y", y)]


def s2d(x, bs):
    C, H, W = x.shape
    return x.reshape(C, H // bs, bs, W // bs, bs).transpose(2, 4, 0, 1, 3).reshape(C * bs * bs, H // bs, W // bs)


def d2s(x, bs):
    C, H, W = x.shape
    c = C // (bs * bs)
    return x.reshape(bs, bs, c, H, W).transpose(2, 3, 0, 4, 1).reshape(c, H * bs, W * bs)


def pixel_shuffle(x, bs):
    C, H, W = x.shape
    c = C // (bs * bs)
    return x.reshape(c, bs, bs, H, W).transpose(0, 3, 1, 4, 2).reshape(c, H * bs, W * bs)


def _reorg_case(name, mode, shape, bs):
    @v1_case(name, "reorganizeData", notes="mode %s blockSize %d; orders checked against the proto's worked example" % (mode, bs))
    def fn():
        """reorganizeData: SPACE_TO_DEPTH out[(i*bs+j)*C + c, h, w] = x[c, h*bs+i, w*bs+j]; DEPTH_TO_SPACE its inverse;
        PIXEL_SHUFFLE out[c, h*bs+i, w*bs+j] = x[c*bs*bs + i*bs + j, h, w] (ReorganizeDataLayerParams example)"""
        r = rng_for(name)
        x = f32(r.normal(size=shape))
        y = {"SPACE_TO_DEPTH": s2d, "DEPTH_TO_SPACE": d2s, "PIXEL_SHUFFLE": pixel_shuffle}[mode](x, bs)
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_reorganize_data("ro", "x", "y", mode=mode, block_size=bs)
        return b.spec, [("x", x)], [("y", y)]


# the proto's worked example, [C=8,H=1,W=2]
_ex = np.arange(1, 17).reshape(8, 1, 2)
assert (d2s(_ex, 2) == np.array([[[1, 5, 2, 6], [9, 13, 10, 14]], [[3, 7, 4, 8], [11, 15, 12, 16]]])).all()
assert (pixel_shuffle(_ex, 2) == np.array([[[1, 3, 2, 4], [5, 7, 6, 8]], [[9, 11, 10, 12], [13, 15, 14, 16]]])).all()
assert (s2d(d2s(_ex, 2), 2) == _ex).all()
_reorg_case("reorganizeData_space_to_depth", "SPACE_TO_DEPTH", (2, 4, 6), 2)
_reorg_case("reorganizeData_depth_to_space", "DEPTH_TO_SPACE", (8, 2, 3), 2)
_reorg_case("reorganizeData_pixel_shuffle", "PIXEL_SHUFFLE", (8, 2, 3), 2)


def _slice_case(name, axis, start, end, stride):
    @v1_case(name, "slice", notes="axis %s [%d:%d:%d] (endIndex exclusive, negatives count from the end)" % (axis, start, end, stride))
    def fn():
        """slice: x[start:end:stride] along channel / height / width (SliceLayerParams)"""
        r = rng_for(name)
        x = f32(r.normal(size=(6, 5, 7)))
        ax = {"channel": 0, "height": 1, "width": 2}[axis]
        sl = [slice(None)] * 3
        sl[ax] = slice(start, end, stride)
        y = x[tuple(sl)]
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_slice("sl", "x", "y", axis, start_index=start, end_index=end, stride=stride)
        return b.spec, [("x", x)], [("y", y)]


_slice_case("slice_channel", "channel", 1, 5, 2)
_slice_case("slice_width_negative_end", "width", 2, -1, 1)
_slice_case("slice_height_stride3", "height", 0, 5, 3)


def _reduce_case(name, axis, mode):
    @v1_case(name, "reduce", tol=(1e-4, 1e-4), notes="mode %s axis %s; output keeps the reduced axes as 1; LOGSUM uses eps=1e-6" % (mode, axis))
    def fn():
        """reduce (ReduceLayerParams): SUM, AVG, PROD, LOGSUM sum(log(x+eps)), SUMSQUARE, L1 sum|x|, L2 sqrt(sum x^2), MAX, MIN,
        ARGMAX (index along the single axis) over axes CHW / HW / C / H / W"""
        r = rng_for(name)
        x = f32(r.uniform(0.5, 1.5, size=(3, 4, 5)) if mode in ("logsum", "prod") else r.normal(size=(3, 4, 5)))
        ax = {"CHW": (0, 1, 2), "HW": (1, 2), "C": (0,), "H": (1,), "W": (2,)}[axis]
        a = x.astype(np.float64)
        f = {"sum": lambda: a.sum(ax, keepdims=True), "avg": lambda: a.mean(ax, keepdims=True),
             "prod": lambda: a.prod(ax, keepdims=True), "logsum": lambda: np.log(a + 1e-6).sum(ax, keepdims=True),
             "sumsquare": lambda: (a ** 2).sum(ax, keepdims=True), "L1": lambda: np.abs(a).sum(ax, keepdims=True),
             "L2": lambda: np.sqrt((a ** 2).sum(ax, keepdims=True)), "max": lambda: a.max(ax, keepdims=True),
             "min": lambda: a.min(ax, keepdims=True), "argmax": lambda: np.expand_dims(a.argmax(ax[0]), ax[0]).astype(np.float64)}
        y = f[mode]()
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_reduce("rd", "x", "y", axis, mode, epsilon=1e-6)
        return b.spec, [("x", x)], [("y", y)]


for _ax, _mode in [("CHW", "sum"), ("HW", "avg"), ("C", "prod"), ("H", "logsum"), ("W", "sumsquare"), ("HW", "L1"),
                   ("C", "L2"), ("W", "max"), ("H", "min"), ("C", "argmax"), ("W", "argmax")]:
    _reduce_case("reduce_%s_%s" % (_mode, _ax), _ax, _mode)


@v1_case("crop_amounts", "crop", notes="one input: cropAmounts top=1 bottom=2 left=0 right=3")
def _crop1():
    """crop: y = x[:, top:H-bottom, left:W-right] (CropLayerParams, one input)"""
    r = rng_for("crop1")
    x = f32(r.normal(size=(2, 6, 7)))
    y = x[:, 1:6 - 2, 0:7 - 3]
    b = builder([("x", x)], [("y", y)], v2=False)
    b.add_crop("crop", left=0, right=3, top=1, bottom=2, offset=[0, 0], input_names=["x"], output_name="y")
    return b.spec, [("x", x)], [("y", y)]


@v1_case("crop_reference_input", "crop", notes="two inputs: offset [2,1], output size from the second input's H,W")
def _crop2():
    """crop: y = x1[:, off0:off0+H2, off1:off1+W2] (CropLayerParams, two inputs)"""
    r = rng_for("crop2")
    x = f32(r.normal(size=(2, 6, 7)))
    ref = f32(r.normal(size=(2, 3, 4)))
    y = x[:, 2:5, 1:5]
    b = builder([("x", x), ("like", ref)], [("y", y)], v2=False)
    b.add_crop("crop", left=0, right=0, top=0, bottom=0, offset=[2, 1], input_names=["x", "like"], output_name="y")
    return b.spec, [("x", x), ("like", ref)], [("y", y)]


def _padding_case(name, ptype, t, bo, l, rr, value=0.0):
    @v1_case(name, "padding", notes="%s top=%d bottom=%d left=%d right=%d value=%g" % (ptype, t, bo, l, rr, value))
    def fn():
        """padding (PaddingLayerParams): constant value / reflection (mirror without the edge, numpy 'reflect') /
        replication (edge) on H and W"""
        r = rng_for(name)
        x = f32(r.normal(size=(2, 4, 5)))
        pw = [(0, 0), (t, bo), (l, rr)]
        y = np.pad(x, pw, mode="constant", constant_values=value) if ptype == "constant" else \
            np.pad(x, pw, mode="reflect" if ptype == "reflection" else "edge")
        b = builder([("x", x)], [("y", y)], v2=False)
        b.add_padding("pad", left=l, right=rr, top=t, bottom=bo, value=value, input_name="x", output_name="y", padding_type=ptype)
        return b.spec, [("x", x)], [("y", y)]


_padding_case("padding_constant", "constant", 1, 2, 3, 0, value=-1.5)
_padding_case("padding_reflection", "reflection", 2, 1, 1, 3)
_padding_case("padding_replication", "replication", 0, 3, 2, 1)


def _scale_case(name, shape_scale, shape_bias):
    @v1_case(name, "scale", notes="shapeScale %s shapeBias %s" % (shape_scale, shape_bias))
    def fn():
        """scale: y = W * x + b with W, b of shape [1], [C,1,1], [1,H,W] or [C,H,W] broadcast (ScaleLayerParams)"""
        r = rng_for(name)
        x = f32(r.normal(size=(3, 2, 4)))
        W = f32(r.normal(size=shape_scale)); bb = f32(r.normal(size=shape_bias)) if shape_bias else None
        b = builder([("x", x)], [("y", x.shape)], v2=False)
        b.add_scale("sc", W, bb, bb is not None, "x", "y", shape_scale=list(shape_scale), shape_bias=list(shape_bias) if shape_bias else None)
        L = b.spec.neuralNetwork.layers[0].scale
        ss = list(L.shapeScale)
        Wr = weights(L.scale, ss if len(ss) == 3 else ([ss[0], 1, 1] if len(ss) == 1 else ss))
        y = Wr * x
        if bb is not None:
            sb = list(L.shapeBias)
            y = y + weights(L.bias, sb if len(sb) == 3 else [sb[0], 1, 1])
        return b.spec, [("x", x)], [("y", y)]


_scale_case("scale_per_channel_bias", (3,), (3,))
_scale_case("scale_scalar", (1,), None)
_scale_case("scale_full_shape", (3, 2, 4), (3, 2, 4))


def _bias_case(name, shape):
    @v1_case(name, "bias", notes="shapeBias %s" % (shape,))
    def fn():
        """bias: y = x + b, b of shape [1], [C,1,1], [1,H,W] or [C,H,W] broadcast (BiasLayerParams)"""
        r = rng_for(name)
        x = f32(r.normal(size=(3, 2, 4)))
        bb = f32(r.normal(size=shape))
        b = builder([("x", x)], [("y", x.shape)], v2=False)
        b.add_bias("bias", bb, "x", "y", shape_bias=list(shape))
        L = b.spec.neuralNetwork.layers[0].bias
        sb = list(L.shape)
        y = x + weights(L.bias, sb if len(sb) == 3 else [sb[0], 1, 1])
        return b.spec, [("x", x)], [("y", y)]


_bias_case("bias_per_channel", (3,))
_bias_case("bias_full_shape", (3, 2, 4))


@v1_case("loadConstant", "loadConstant", notes="constant [C,H,W] added to the input (so the model has an input)")
def _load_constant():
    """loadConstant: the stored data with shape [C,H,W] (LoadConstantLayerParams); y = x + constant"""
    r = rng_for("loadConstant")
    x = f32(r.normal(size=(2, 3, 2)))
    c = f32(r.normal(size=(2, 3, 2)))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    b.add_load_constant("const", "c", c, (2, 3, 2))
    b.add_elementwise("add", ["x", "c"], "y", "ADD")
    y = x + weights(b.spec.neuralNetwork.layers[0].loadConstant.data, (2, 3, 2))
    return b.spec, [("x", x)], [("y", y)]


@v1_case("sequenceRepeat", "sequenceRepeat", notes="rank-N model, rank-5 input [Seq=2,1,C,H,W]; output [3*Seq,1,C,H,W] (the whole sequence tiled)")
def _seq_repeat():
    """sequenceRepeat: output = the input repeated nRepetitions times along axis -5 (whole sequence tiled, not each step)"""
    r = rng_for("sequenceRepeat")
    x = f32(r.normal(size=(2, 1, 3, 1, 2)))
    y = np.tile(x, (3, 1, 1, 1, 1))
    b = builder([("x", x)], [("y", y)], v2=True)
    b.add_sequence_repeat("sr", 3, "x", "y")
    return b.spec, [("x", x)], [("y", y)]


@v1_case("copy", "copy")
def _copy():
    """copy: y = x (CopyLayerParams)"""
    r = rng_for("copy")
    x = f32(r.normal(size=(2, 2, 3)))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    b.add_copy("copy", "x", "y")
    return b.spec, [("x", x)], [("y", x)]


# ---------------------------------------------------------------- recurrent layers (rank-5 [Seq,Batch,C,1,1])
def rnn_ref(x, W, R, bias, act, y0, reverse=False):
    S = x.shape[0]
    h = y0.copy()
    ys = []
    order = range(S - 1, -1, -1) if reverse else range(S)
    for t in order:
        h = act(np.clip(x[t] @ W.T + h @ R.T + bias, -50, 50))
        ys.append(h)
    return np.stack(ys), h


def gru_ref(x, Ws, Rs, bs, f, g, y0, reverse=False):
    (Wz, Wr, Wo), (Rz, Rr, Ro), (bz, br, bo) = Ws, Rs, bs
    h = y0.copy()
    ys = []
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in order:
        xt = x[t]
        z = f(np.clip(xt @ Wz.T + h @ Rz.T + bz, -50, 50))
        rr = f(np.clip(xt @ Wr.T + h @ Rr.T + br, -50, 50))
        c = h * rr
        o = g(np.clip(xt @ Wo.T + c @ Ro.T + bo, -50, 50))
        h = (1 - z) * o + z * h
        ys.append(h)
    return np.stack(ys), h


def lstm_ref(x, P, lp, acts, y0, c0, reverse=False):
    f, g, hh = acts
    h, c = y0.copy(), c0.copy()
    clipv = lp.cellClipThreshold or 50.0
    ys = []
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in order:
        xt = x[t]
        pre = lambda k: xt @ P["W" + k].T + h @ P["R" + k].T + P["b" + k]
        i = f(np.clip(pre("i") + P["pi"] * c, -50, 50))
        fg = f(np.clip(pre("f") + P["pf"] * c, -50, 50))
        z = g(np.clip(pre("z"), -50, 50))
        if lp.coupledInputAndForgetGate:
            c = c * (1 - i) + i * z
        else:
            c = c * fg + i * z
        c = np.clip(c, -clipv, clipv)
        o = f(np.clip(pre("o") + P["po"] * c, -50, 50))
        h = hh(c) * o
        ys.append(h)
    return np.stack(ys), h, c


def lstm_params(wp, lp, H, I):
    P = {}
    for k, nm in (("i", "inputGate"), ("f", "forgetGate"), ("z", "blockInput"), ("o", "outputGate")):
        P["W" + k] = weights(getattr(wp, nm + "WeightMatrix"), (H, I))
        P["R" + k] = weights(getattr(wp, nm + "RecursionMatrix"), (H, H))
        P["b" + k] = weights(getattr(wp, nm + "BiasVector"), (H,)) if lp.hasBiasVectors else np.zeros(H)
    if lp.forgetBias:
        P["bf"] = P["bf"] + 1.0
    for k, nm in (("i", "inputGate"), ("f", "forgetGate"), ("o", "outputGate")):
        P["p" + k] = weights(getattr(wp, nm + "PeepholeVector"), (H,)) if lp.hasPeepholeVectors else np.zeros(H)
    return P


def _rnn_case(name, seq_out, reverse, with_state):
    @v1_case(name, "simpleRecurrent", tol=(1e-4, 1e-4),
             notes="rank-N model with rank-5 input [Seq,Batch,I,1,1]; sequenceOutput=%s reverseInput=%s initial state %s; "
                   "reverseInput: the sequence is processed last-to-first (only the final output is checked: the proto does not say in which order a reversed output sequence is stored)" % (seq_out, reverse, "given" if with_state else "zero"))
    def fn():
        """simpleRecurrent: y_t = f(clip(W x_t + R y_{t-1} + b, -50, 50)), W [H,I], R [H,H]"""
        r = rng_for(name)
        S, Bt, I, H = 4, 2, 3, 5
        x = f32(r.normal(size=(S, Bt, I, 1, 1)))
        Wx = f32(r.normal(size=(H, I)) * 0.5); Wh = f32(r.normal(size=(H, H)) * 0.5); bb = f32(r.normal(size=H) * 0.1)
        h0 = f32(r.normal(size=(1, Bt, H, 1, 1)))
        ins = [("x", x)] + ([("h0", h0)] if with_state else [])
        yshape = (S if seq_out else 1, Bt, H, 1, 1)
        b = builder(ins, [("y", yshape), ("h", (1, Bt, H, 1, 1))], v2=True)
        b.add_simple_rnn("rnn", W_h=Wh, W_x=Wx, b=bb, hidden_size=H, input_size=I, activation="TANH",
                         input_names=[n for n, _ in ins], output_names=["y", "h"], output_all=seq_out, reverse_input=reverse)
        L = b.spec.neuralNetwork.layers[0].simpleRecurrent
        W = weights(L.weightMatrix, (H, I)); R = weights(L.recursionMatrix, (H, H)); bv = weights(L.biasVector, (H,))
        y0 = h0.reshape(Bt, H).astype(np.float64) if with_state else np.zeros((Bt, H))
        ys, hT = rnn_ref(x.reshape(S, Bt, I).astype(np.float64), W, R, bv, act_from_params(L.activation), y0, reverse)
        y = (ys if seq_out else ys[-1:]).reshape(yshape)
        return b.spec, ins, [("y", y), ("h", hT.reshape(1, Bt, H, 1, 1))]


_rnn_case("simpleRecurrent_last_output", False, False, False)
_rnn_case("simpleRecurrent_sequence_state", True, False, True)
_rnn_case("simpleRecurrent_reverse_last_output", False, True, True)


def _gru_case(name, seq_out, reverse, with_state):
    @v1_case(name, "gru", tol=(1e-4, 1e-4),
             notes="rank-N model with rank-5 input; activations [f,g] = [SIGMOID_HARD, TANH] (builder defaults); the reset gate "
                   "multiplies y_{t-1} BEFORE R_o (c_t = y_{t-1} * r_t, o_t = g(W_o x_t + R_o c_t + b_o)) -- Keras' reset_after=True "
                   "GRU is different; sequenceOutput=%s reverseInput=%s" % (seq_out, reverse))
    def fn():
        """gru (GRULayerParams): z = f(Wz x + Rz y + bz); r = f(Wr x + Rr y + br); c = y*r; o = g(Wo x + Ro c + bo);
        y_t = (1-z)*o + z*y_{t-1}; all pre-activations clipped to [-50,50]"""
        r = rng_for(name)
        S, Bt, I, H = 5, 1, 3, 4
        x = f32(r.normal(size=(S, Bt, I, 1, 1)))
        Wx = [f32(r.normal(size=(H, I)) * 0.5) for _ in range(3)]
        Wh = [f32(r.normal(size=(H, H)) * 0.5) for _ in range(3)]
        bb = [f32(r.normal(size=H) * 0.1) for _ in range(3)]
        h0 = f32(r.normal(size=(1, Bt, H, 1, 1)))
        ins = [("x", x)] + ([("h0", h0)] if with_state else [])
        yshape = (S if seq_out else 1, Bt, H, 1, 1)
        b = builder(ins, [("y", yshape), ("h", (1, Bt, H, 1, 1))], v2=True)
        b.add_gru("gru", W_h=Wh, W_x=Wx, b=bb, hidden_size=H, input_size=I, input_names=[n for n, _ in ins],
                  output_names=["y", "h"], output_all=seq_out, reverse_input=reverse)
        L = b.spec.neuralNetwork.layers[0].gru
        Ws = [weights(getattr(L, k + "GateWeightMatrix"), (H, I)) for k in ("update", "reset", "output")]
        Rs = [weights(getattr(L, k + "GateRecursionMatrix"), (H, H)) for k in ("update", "reset", "output")]
        Bs = [weights(getattr(L, k + "GateBiasVector"), (H,)) for k in ("update", "reset", "output")]
        y0 = h0.reshape(Bt, H).astype(np.float64) if with_state else np.zeros((Bt, H))
        ys, hT = gru_ref(x.reshape(S, Bt, I).astype(np.float64), Ws, Rs, Bs, act_from_params(L.activations[0]),
                         act_from_params(L.activations[1]), y0, reverse)
        y = (ys if seq_out else ys[-1:]).reshape(yshape)
        return b.spec, ins, [("y", y), ("h", hT.reshape(1, Bt, H, 1, 1))]


_gru_case("gru_last_output", False, False, False)
_gru_case("gru_sequence_state", True, False, True)
_gru_case("gru_reverse_last_output", False, True, False)


def _lstm_case(name, seq_out, peep, coupled, forget_bias, reverse, with_state, clip=50000.0):
    @v1_case(name, "uniDirectionalLSTM", tol=(1e-4, 1e-4),
             notes="rank-N model with rank-5 input; activations [f,g,h] = [SIGMOID,TANH,TANH]; peephole=%s coupledInputForget=%s "
                   "forgetBias=%s (adds 1 to b_f) reverseInput=%s cellClip=%g; outputs y, h_T, c_T" % (peep, coupled, forget_bias, reverse, clip))
    def fn():
        """uniDirectionalLSTM (LSTMParams): i = f(Wi x + Ri y + pi*c + bi); f = f(Wf x + Rf y + pf*c + bf); z = g(Wz x + Rz y + bz);
        c = c*f + i*z (coupled: c*(1-i) + i*z), clipped to +-cellClipThreshold; o = f(Wo x + Ro y + po*c_t + bo); y = h(c)*o"""
        r = rng_for(name)
        S, Bt, I, H = 4, 2, 3, 4
        x = f32(r.normal(size=(S, Bt, I, 1, 1)))
        Wx = [f32(r.normal(size=(H, I)) * 0.5) for _ in range(4)]
        Wh = [f32(r.normal(size=(H, H)) * 0.5) for _ in range(4)]
        bb = [f32(r.normal(size=H) * 0.1) for _ in range(4)]
        pp = [f32(r.normal(size=H) * 0.3) for _ in range(3)] if peep else None
        h0 = f32(r.normal(size=(1, Bt, H, 1, 1))); c0 = f32(r.normal(size=(1, Bt, H, 1, 1)))
        ins = [("x", x)] + ([("h0", h0), ("c0", c0)] if with_state else [])
        yshape = (S if seq_out else 1, Bt, H, 1, 1)
        b = builder(ins, [("y", yshape), ("h", (1, Bt, H, 1, 1)), ("c", (1, Bt, H, 1, 1))], v2=True)
        b.add_unilstm("lstm", W_h=Wh, W_x=Wx, b=bb, hidden_size=H, input_size=I, input_names=[n for n, _ in ins],
                      output_names=["y", "h", "c"], peep=pp, output_all=seq_out, forget_bias=forget_bias,
                      coupled_input_forget_gate=coupled, cell_clip_threshold=clip, reverse_input=reverse)
        L = b.spec.neuralNetwork.layers[0].uniDirectionalLSTM
        P = lstm_params(L.weightParams, L.params, H, I)
        acts = [act_from_params(a) for a in L.activations]
        y0 = h0.reshape(Bt, H).astype(np.float64) if with_state else np.zeros((Bt, H))
        cc0 = c0.reshape(Bt, H).astype(np.float64) if with_state else np.zeros((Bt, H))
        ys, hT, cT = lstm_ref(x.reshape(S, Bt, I).astype(np.float64), P, L.params, acts, y0, cc0, reverse)
        y = (ys if seq_out else ys[-1:]).reshape(yshape)
        return b.spec, ins, [("y", y), ("h", hT.reshape(1, Bt, H, 1, 1)), ("c", cT.reshape(1, Bt, H, 1, 1))]


_lstm_case("uniDirectionalLSTM_last_output", False, False, False, False, False, False)
_lstm_case("uniDirectionalLSTM_sequence_peephole_state", True, True, False, True, False, True)
_lstm_case("uniDirectionalLSTM_coupled_reverse_clip", False, False, True, False, True, False, clip=0.5)


@v1_case("biDirectionalLSTM_sequence", "biDirectionalLSTM", tol=(1e-4, 1e-4),
         notes="rank-N model with rank-5 input; output channels = [forward (H), backward (H)]; at step t the backward half is the "
               "backward LSTM's output after reading x_T..x_t; outputs y, h_f, c_f, h_b, c_b")
def _bilstm():
    """biDirectionalLSTM: forward LSTM on x_1..x_T and backward LSTM on x_T..x_1 (same LSTMParams), y_t = [yf_t, yb_t]"""
    r = rng_for("bilstm")
    S, Bt, I, H = 3, 1, 2, 3
    x = f32(r.normal(size=(S, Bt, I, 1, 1)))
    mk = lambda: ([f32(r.normal(size=(H, H)) * 0.5) for _ in range(4)], [f32(r.normal(size=(H, I)) * 0.5) for _ in range(4)],
                  [f32(r.normal(size=H) * 0.1) for _ in range(4)])
    Whf, Wxf, bf = mk(); Whb, Wxb, bbk = mk()
    outs = [("y", (S, Bt, 2 * H, 1, 1))] + [(n, (1, Bt, H, 1, 1)) for n in ("h_f", "c_f", "h_b", "c_b")]
    b = builder([("x", x)], outs, v2=True)
    b.add_bidirlstm("bilstm", Whf, Wxf, bf, Whb, Wxb, bbk, hidden_size=H, input_size=I, input_names=["x"],
                    output_names=["y", "h_f", "c_f", "h_b", "c_b"], output_all=True)
    L = b.spec.neuralNetwork.layers[0].biDirectionalLSTM
    xs = x.reshape(S, Bt, I).astype(np.float64)
    Pf = lstm_params(L.weightParams[0], L.params, H, I); Pb = lstm_params(L.weightParams[1], L.params, H, I)
    yf, hf, cf = lstm_ref(xs, Pf, L.params, [act_from_params(a) for a in L.activationsForwardLSTM], np.zeros((Bt, H)), np.zeros((Bt, H)))
    yb, hb, cb = lstm_ref(xs, Pb, L.params, [act_from_params(a) for a in L.activationsBackwardLSTM], np.zeros((Bt, H)), np.zeros((Bt, H)), reverse=True)
    y = np.concatenate([yf, yb[::-1]], axis=2).reshape(S, Bt, 2 * H, 1, 1)
    vals = [y] + [a.reshape(1, Bt, H, 1, 1) for a in (hf, cf, hb, cb)]
    return b.spec, [("x", x)], [(n, v) for (n, _), v in zip(outs, vals)]


# ================================================================= v2 layers (rank-N, EXACT_ARRAY_MAPPING)
def v2(name, member, ins, build, ref, notes="", tol=(1e-5, 1e-4), reference=None):
    """Register a rank-N case: ins = list of (name, array); build(b) adds the layers (outputs 'y' or several);
    ref(*inputs as float64) -> one array or a list of (name, array)."""
    @case(name, member, "v2", tol=tol, notes=notes, reference=reference or ref.__doc__)
    def fn():
        vals = [a.astype(np.float64) for _, a in ins]
        out = ref(*vals)
        outs = out if isinstance(out, list) else [("y", out)]
        b = builder(ins, [(n, np.asarray(a)) for n, a in outs], v2=True)
        build(b)
        return b.spec, ins, [(n, np.asarray(a, dtype=np.float64)) for n, a in outs]
    return fn


def R(name):
    return rng_for(name)


_r = R("v2data")
X234 = f32(_r.normal(size=(2, 3, 4)))
X34 = f32(_r.normal(size=(3, 4)))
POS234 = f32(_r.uniform(0.3, 2.0, size=(2, 3, 4)))
UNIT234 = f32(_r.uniform(-0.9, 0.9, size=(2, 3, 4)))
BIG234 = f32(_r.uniform(1.1, 3.0, size=(2, 3, 4)))
INTS = f32(_r.integers(-3, 4, size=(2, 3, 4)))
INTS_B = f32(_r.integers(-3, 4, size=(3, 4)))
BOOL_A = f32(_r.integers(0, 2, size=(2, 3, 4)))
BOOL_B = f32(_r.integers(0, 2, size=(3, 4)))

# --- elementwise unary (v2)
for _m, _x, _f in [("ceil", X234 * 3, np.ceil), ("floor", X234 * 3, np.floor), ("sign", INTS * X234 ** 2 / (1 + X234 ** 2), np.sign),
                   ("exp2", X234, np.exp2), ("sin", X234, np.sin), ("cos", X234, np.cos), ("tan", UNIT234, np.tan),
                   ("asin", UNIT234, np.arcsin), ("acos", UNIT234, np.arccos), ("atan", X234 * 3, np.arctan),
                   ("sinh", X234, np.sinh), ("cosh", X234, np.cosh), ("tanh", X234, np.tanh), ("asinh", X234 * 3, np.arcsinh),
                   ("acosh", BIG234, np.arccosh), ("atanh", UNIT234, np.arctanh)]:
    v2(_m, _m, [("x", f32(_x))], (lambda m: lambda b: getattr(b, "add_" + m)(m, "x", "y"))(_m),
       (lambda f, m: (lambda x: f(x)) if True else None)(_f, _m), reference="%s: elementwise numpy.%s" % (_m, _f.__name__))

_ROUNDX = f32(np.array([-2.7, -1.2, -0.4, 0.3, 0.9, 1.4, 2.6, 3.2, -3.6, 0.1, 4.4, -0.8]).reshape(3, 4))
v2("round", "round", [("x", _ROUNDX)], lambda b: b.add_round("round", "x", "y"), lambda x: np.round(x),
   notes="no .5 ties in the data: the proto does not define the tie rule")
v2("erf", "erf", [("x", X234)], lambda b: b.add_erf("erf", "x", "y"), lambda x: np.vectorize(math.erf)(x),
   reference="erf: (2/sqrt(pi)) * integral_0^x exp(-t^2) dt (math.erf)")
for _gm in ("EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"):
    def _gref(x, m=_gm):
        if m == "EXACT":
            return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
        if m == "TANH_APPROXIMATION":
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return x * sigmoid(1.702 * x)
    v2("gelu_" + _gm.lower(), "gelu", [("x", X234 * 2)], (lambda m: lambda b: b.add_gelu("gelu", "x", "y", mode=m))(_gm), _gref,
       reference="gelu (GeluLayerParams): EXACT 0.5x(1+erf(x/sqrt2)); TANH 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))); SIGMOID x*sigmoid(1.702x)")
v2("clip", "clip", [("x", X234 * 2)], lambda b: b.add_clip("clip", "x", "y", -0.5, 1.25), lambda x: np.clip(x, -0.5, 1.25),
   reference="clip: min(max(x, minVal), maxVal)")
v2("clampedReLU", "clampedReLU", [("x", X234 * 4)], lambda b: b.add_clamped_relu("cr", "x", "y", alpha=0.1, beta=2.5),
   lambda x: np.where(x >= 0, np.minimum(2.5, x), np.minimum(2.5, f32(0.1) * x)),
   reference="clampedReLU: min(beta, x) for x >= 0, min(beta, alpha*x) for x < 0")

# --- broadcastable binary
for _m, _a, _b, _f, _nt in [
        ("add", X234, X34, np.add, ""), ("subtract", X234, X34[:, :1], np.subtract, ""),
        ("multiply", X234, f32(_r.normal(size=(2, 1, 4))), np.multiply, ""), ("divide", X234, POS234[0], np.divide, ""),
        ("max", X234, X34, np.maximum, ""), ("min", X234, f32(_r.normal(size=(1,))), np.minimum, ""),
        ("pow", POS234, f32(_r.normal(size=(4,))), np.power, ""),
        ("mod", POS234 * 3, POS234[1], np.mod, "positive operands only: the proto does not state the sign convention"),
        ("floor_div", X234 * 5, POS234[0] + 0.25, lambda a, c: np.floor(a / c), "floor(a/b); negative dividends included")]:
    _member = {"floor_div": "floorDivBroadcastable"}.get(_m, _m + "Broadcastable")
    v2(_member, _member, [("a", f32(_a)), ("b", f32(_b))],
       (lambda m: lambda b: getattr(b, "add_%s_broadcastable" % m)(m, ["a", "b"], "y"))(_m), (lambda f: lambda a, c: f(a, c))(_f),
       notes="numpy broadcasting of shapes %s and %s; %s" % (_a.shape, _b.shape, _nt), reference="%s: elementwise with numpy broadcasting" % _member)

# --- comparisons / logical (outputs 1.0 / 0.0)
for _m, _f in [("equal", np.equal), ("notEqual", np.not_equal), ("lessThan", np.less), ("lessEqual", np.less_equal),
               ("greaterThan", np.greater), ("greaterEqual", np.greater_equal)]:
    def _bld(b, m=_m, alpha=None):
        kw = {} if alpha is None else {"alpha": alpha}
        names = ["a", "b"] if alpha is None else ["a"]
        if m == "equal": b.add_equal(m, names, "y", **kw)
        elif m == "notEqual": b.add_not_equal(m, names, "y", **kw)
        elif m == "lessThan": b.add_less_than(m, names, "y", **kw)
        elif m == "lessEqual": b.add_less_than(m, names, "y", use_less_than_equal=True, **kw)
        elif m == "greaterThan": b.add_greater_than(m, names, "y", **kw)
        else: b.add_greater_than(m, names, "y", use_greater_than_equal=True, **kw)
    v2(_m, _m, [("a", INTS), ("b", INTS_B)], _bld, (lambda f: lambda a, c: f(a, c).astype(np.float64))(_f),
       notes="integer-valued inputs so ties occur; broadcasting (2,3,4) vs (3,4)", reference="%s: 1.0 where true else 0.0, broadcast" % _m)
    v2(_m + "_alpha", _m, [("a", INTS)], (lambda bb: lambda b: bb(b, alpha=1.0))(_bld),
       (lambda f: lambda a: f(a, 1.0).astype(np.float64))(_f), notes="single input compared with the alpha parameter (1.0)",
       reference="%s against the scalar alpha" % _m)
for _m, _f in [("AND", np.logical_and), ("OR", np.logical_or), ("XOR", np.logical_xor)]:
    _mem = "logical" + _m.capitalize()
    v2(_mem, _mem, [("a", BOOL_A), ("b", BOOL_B)], (lambda m: lambda b: b.add_logical(m, ["a", "b"], "y", m))(_m),
       (lambda f: lambda a, c: f(a != 0, c != 0).astype(np.float64))(_f), reference="%s: nonzero = true, output 1.0/0.0, broadcast" % _mem)
v2("logicalNot", "logicalNot", [("a", INTS)], lambda b: b.add_logical("NOT", ["a"], "y", "NOT"), lambda a: (a == 0).astype(np.float64),
   reference="logicalNot: 1.0 where the input is 0 else 0.0")
v2("whereBroadcastable", "whereBroadcastable", [("cond", BOOL_B), ("a", X234), ("b", f32(_r.normal(size=(2, 1, 4))))],
   lambda b: b.add_where_broadcastable("where", ["cond", "a", "b"], "y"), lambda c, a, bb: np.where(c != 0, a, bb),
   reference="whereBroadcastable: numpy.where(cond, a, b) after broadcasting all three")

# --- reductions
for _m in ("sum", "prod", "mean", "max", "min", "l1", "l2", "logsum", "logsumexp", "sumsquare"):
    _member = {"sum": "reduceSum", "prod": "reduceProd", "mean": "reduceMean", "max": "reduceMax", "min": "reduceMin",
               "l1": "reduceL1", "l2": "reduceL2", "logsum": "reduceLogSum", "logsumexp": "reduceLogSumExp",
               "sumsquare": "reduceSumSquare"}[_m]
    def _red(x, axes, keep, m=_m):
        f = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min,
             "l1": lambda a, axis, keepdims: np.abs(a).sum(axis=axis, keepdims=keepdims),
             "l2": lambda a, axis, keepdims: np.sqrt((a ** 2).sum(axis=axis, keepdims=keepdims)),
             "logsum": lambda a, axis, keepdims: np.log(a.sum(axis=axis, keepdims=keepdims)),
             "logsumexp": lambda a, axis, keepdims: np.log(np.exp(a).sum(axis=axis, keepdims=keepdims)),
             "sumsquare": lambda a, axis, keepdims: (a ** 2).sum(axis=axis, keepdims=keepdims)}[m]
        return f(x, axis=axes, keepdims=keep)
    _xin = POS234 if _m in ("logsum", "prod") else X234
    v2(_member + "_axes_keepdims", _member, [("x", _xin)],
       (lambda m: lambda b: getattr(b, "add_reduce_" + m)("r", "x", "y", axes=[0, -1], keepdims=True))(_m),
       (lambda f: lambda x: f(x, (0, 2), True))(_red), notes="axes [0,-1], keepDims", tol=(1e-5, 1e-4),
       reference="%s over the given axes (negative axes count from the end); logSum = log(sum x); logSumExp = log(sum exp x)" % _member)
    v2(_member + "_all", _member, [("x", _xin)],
       (lambda m: lambda b: getattr(b, "add_reduce_" + m)("r", "x", "y", keepdims=False, reduce_all=True))(_m),
       (lambda f: lambda x: np.reshape(f(x, None, False), (1,)))(_red), notes="reduceAll, keepDims false -> declared shape [1]",
       tol=(1e-5, 1e-4), reference="%s over all axes" % _member)
v2("reduceSum_axis1_squeezed", "reduceSum", [("x", X234)], lambda b: b.add_reduce_sum("r", "x", "y", axes=[1], keepdims=False),
   lambda x: x.sum(1), notes="axes [1], keepDims false: the reduced axis is removed")

# --- argmax / argmin / topK / argsort
v2("argMax_keepdims", "argMax", [("x", X234)], lambda b: b.add_argmax("am", "x", "y", axis=1, keepdims=True),
   lambda x: np.expand_dims(x.argmax(1), 1).astype(np.float64), reference="argMax: index of the maximum along axis (removeDim=false keeps it as 1)")
v2("argMin_removedim", "argMin", [("x", X234)], lambda b: b.add_argmin("am", "x", "y", axis=-1, keepdims=False),
   lambda x: x.argmin(-1).astype(np.float64), reference="argMin: index of the minimum along axis, removeDim=true")
v2("topK", "topK", [("x", X234)], lambda b: b.add_topk("tk", ["x"], ["values", "indices"], k=2, axis=-1),
   lambda x: [("values", -np.sort(-x, -1)[..., :2]), ("indices", np.argsort(-x, -1, kind="stable")[..., :2].astype(np.float64))],
   reference="topK: the K largest values along axis in descending order and their indices (two outputs)")
v2("topK_bottom_axis1", "topK", [("x", X234)], lambda b: b.add_topk("tk", ["x"], ["values", "indices"], k=2, axis=1, use_bottom_k=True),
   lambda x: [("values", np.sort(x, 1)[:, :2]), ("indices", np.argsort(x, 1, kind="stable")[:, :2].astype(np.float64))],
   reference="topK with useBottomK: the K smallest in ascending order")
v2("argSort", "argSort", [("x", X234)], lambda b: b.add_argsort("as", "x", "y", axis=2), lambda x: np.argsort(x, 2, kind="stable").astype(np.float64),
   reference="argSort: indices that sort along axis ascending")
v2("argSort_descending", "argSort", [("x", X234)], lambda b: b.add_argsort("as", "x", "y", axis=0, descending=True),
   lambda x: np.argsort(-x, 0, kind="stable").astype(np.float64), reference="argSort descending")

# --- shape / data movement
v2("transpose", "transpose", [("x", X234)], lambda b: b.add_transpose("t", [2, 0, 1], "x", "y"), lambda x: x.transpose(2, 0, 1),
   reference="transpose: y.shape[i] = x.shape[axes[i]] (numpy.transpose)")
v2("reshapeStatic", "reshapeStatic", [("x", X234)], lambda b: b.add_reshape_static("r", "x", "y", (4, -1)), lambda x: x.reshape(4, 6),
   reference="reshapeStatic: row-major reshape to targetShape (-1 inferred)")
v2("reshapeLike", "reshapeLike", [("x", X234), ("like", f32(np.zeros((6, 2, 2))))], lambda b: b.add_reshape_like("r", ["x", "like"], "y"),
   lambda x, l: x.reshape(l.shape), reference="reshapeLike: row-major reshape to the second input's shape")
v2("reshapeDynamic", "reshapeDynamic", [("x", X234), ("shape", f32([3, 8]))], lambda b: b.add_reshape_dynamic("r", ["x", "shape"], "y"),
   lambda x, s: x.reshape(3, 8), reference="reshapeDynamic: row-major reshape to the shape given by the second input's values")
v2("rankPreservingReshape", "rankPreservingReshape", [("x", X234)], lambda b: b.add_rank_preserving_reshape("r", "x", "y", (0, -1, 2)),
   lambda x: x.reshape(2, 6, 2), reference="rankPreservingReshape: 0 keeps the input dimension, -1 is inferred")
v2("flattenTo2D", "flattenTo2D", [("x", X234)], lambda b: b.add_flatten_to_2d("f", "x", "y", axis=2), lambda x: x.reshape(6, 4),
   reference="flattenTo2D: [prod(shape[:axis]), prod(shape[axis:])]")
v2("flattenTo2D_negative_axis", "flattenTo2D", [("x", X234)], lambda b: b.add_flatten_to_2d("f", "x", "y", axis=-3), lambda x: x.reshape(1, 24),
   reference="flattenTo2D with a negative axis")
v2("expandDims", "expandDims", [("x", X34)], lambda b: b.add_expand_dims("e", "x", "y", axes=[0, -1]), lambda x: x.reshape(1, 3, 4, 1),
   reference="expandDims: a 1 at each axis of the OUTPUT (negative axes count in the output rank)")
v2("squeeze_axes", "squeeze", [("x", f32(X34.reshape(1, 3, 1, 4)))], lambda b: b.add_squeeze("s", "x", "y", axes=[0, -2]),
   lambda x: x.reshape(3, 4), reference="squeeze: remove the given unit axes")
v2("squeeze_all", "squeeze", [("x", f32(X34.reshape(1, 3, 1, 4, 1)))], lambda b: b.add_squeeze("s", "x", "y", squeeze_all=True),
   lambda x: x.reshape(3, 4), reference="squeeze with squeezeAll")
v2("concatND", "concatND", [("a", X234), ("b", f32(_r.normal(size=(2, 1, 4))))], lambda b: b.add_concat_nd("c", ["a", "b"], "y", axis=-2),
   lambda a, c: np.concatenate([a, c], 1), reference="concatND along axis (negative allowed)")
v2("concatND_interleave", "concatND", [("a", X34), ("b", f32(X34 + 10))], lambda b: b.add_concat_nd("c", ["a", "b"], "y", axis=0, interleave=True),
   lambda a, c: np.stack([a, c], 1).reshape(6, 4), reference="concatND interleave: out[0::2] = a, out[1::2] = b")
v2("splitND_sizes", "splitND", [("x", f32(_r.normal(size=(5, 3, 2))))],
   lambda b: b.add_split_nd("s", "x", ["y0", "y1"], axis=-3, split_sizes=[3, 2]),
   lambda x: [("y0", x[:3]), ("y1", x[3:])], reference="splitND by splitSizes along axis")
v2("splitND_equal", "splitND", [("x", X234)], lambda b: b.add_split_nd("s", "x", ["y0", "y1"], axis=2, num_splits=2),
   lambda x: [("y0", x[..., :2]), ("y1", x[..., 2:])], reference="splitND into numSplits equal parts")
v2("stack", "stack", [("a", X34), ("b", f32(X34 * 2)), ("c", f32(X34 - 1))], lambda b: b.add_stack("s", ["a", "b", "c"], "y", axis=-1),
   lambda a, c, d: np.stack([a, c, d], -1), reference="stack: numpy.stack along axis (negative counts in the output rank)")
v2("tile", "tile", [("x", X234)], lambda b: b.add_tile("t", "x", "y", reps=[2, 1, 3]), lambda x: np.tile(x, (2, 1, 3)),
   reference="tile: numpy.tile with reps")
v2("tile_short_reps", "tile", [("x", X234)], lambda b: b.add_tile("t", "x", "y", reps=[2]), lambda x: np.tile(x, (1, 1, 2)),
   reference="tile: reps shorter than the rank are left-padded with 1s")
v2("tile_dynamic_reps", "tile", [("x", X34), ("reps", f32([2, 3]))], lambda b: b.add_tile("t", ["x", "reps"], "y"),
   lambda x, r: np.tile(x, (2, 3)), reference="tile with reps as a second input")
v2("reverse", "reverse", [("x", X234)], lambda b: b.add_reverse("r", "x", "y", reverse_dim=[True, False, True]), lambda x: x[::-1, :, ::-1],
   reference="reverse: numpy.flip on each axis with reverseDim true")
_RSX = f32(np.arange(24).reshape(2, 4, 3))
v2("reverseSeq", "reverseSeq", [("x", _RSX), ("lengths", f32([3, 1]))], lambda b: b.add_reverse_sequence("r", ["x", "lengths"], "y", batch_axis=0, seq_axis=1),
   lambda x, l: np.stack([np.concatenate([x[i, :int(l[i])][::-1], x[i, int(l[i]):]], 0) for i in range(2)]),
   reference="reverseSeq: for each batch b the first lengths[b] entries along sequenceAxis are reversed, the rest unchanged")

def _slice_ref(x, begin, end, strides, bmask, emask, smask=None):
    sl = []
    for i in range(x.ndim):
        if smask and smask[i]:
            sl.append(begin[i]); continue
        s = strides[i]
        bgn = None if bmask[i] else begin[i]
        e = None if emask[i] else end[i]
        sl.append(slice(bgn, e, s))
    return x[tuple(sl)]

_X555 = f32(_r.normal(size=(5, 5, 5)))
v2("sliceStatic_proto_example", "sliceStatic", [("x", _X555)],
   lambda b: b.add_slice_static("s", "x", "y", [1, 2, 3], [3, -3, 2], [2, 2, 2], [True, False, True], [False, True, True]),
   lambda x: x[:3:2, 2::2, ::2], reference="sliceStatic: the proto's example input[:3:2, 2::2, ::2] (begin/end masks)")
v2("sliceStatic_squeeze", "sliceStatic", [("x", _X555)],
   lambda b: b.add_slice_static("s", "x", "y", [1, 2, 3], [3, -3, 2], [2, 2, 2], [True, False, True], [False, True, True], squeeze_masks=[False, True, False]),
   lambda x: x[:3:2, 2, ::2], reference="sliceStatic with squeezeMasks: input[:3:2, 2, ::2]")
v2("sliceStatic_negative_stride", "sliceStatic", [("x", X234)],
   lambda b: b.add_slice_static("s", "x", "y", [0, 2, -1], [0, 0, 0], [1, -1, -2], [True, False, False], [True, True, True]),
   lambda x: x[:, 2::-1, -1::-2], reference="sliceStatic with negative strides: input[:, 2::-1, -1::-2] (end masked)")
v2("sliceDynamic", "sliceDynamic", [("x", _X555), ("begin", f32([1, 0, 2]))],
   lambda b: b.add_slice_dynamic("s", ["x", "begin"], "y", end_ids=[4, 5, 5], strides=[1, 2, 1], begin_masks=[False, False, False], end_masks=[False, True, False]),
   lambda x, bg: x[1:4, 0::2, 2:5], reference="sliceDynamic: begin from the second input, end/strides/masks from parameters")
v2("sliceDynamic_all_inputs", "sliceDynamic", [("x", _X555), ("begin", f32([0, 1, 4])), ("end", f32([5, 4, 0])), ("strides", f32([2, 1, -1]))],
   lambda b: b.add_slice_dynamic("s", ["x", "begin", "end", "strides"], "y", begin_masks=[False] * 3, end_masks=[False] * 3),
   lambda x, bg, e, s: x[0:5:2, 1:4, 4:0:-1], reference="sliceDynamic: begin, end and strides as inputs 2-4")
v2("sliceBySize", "sliceBySize", [("x", X234), ("begin", f32([1]))], lambda b: b.add_slice_by_size("s", ["x", "begin"], "y", axis=1, size=2),
   lambda x, bg: x[:, 1:3], reference="sliceBySize: x[..., begin:begin+size, ...] along axis, begin from the second input")
v2("slidingWindows", "slidingWindows", [("x", f32(_r.normal(size=(2, 7, 3))))], lambda b: b.add_sliding_windows("s", "x", "y", axis=1, window_size=3, step=2),
   lambda x: np.stack([x[:, i:i + 3] for i in range(0, 5, 2)], 1), reference="slidingWindows: windows of windowSize every step along axis -> new axis after it")
v2("getShape", "getShape", [("x", X234)], lambda b: b.add_get_shape("g", "x", "y"), lambda x: np.array(x.shape, dtype=np.float64),
   reference="getShape: the input's shape as a rank-1 tensor")

# --- gather / scatter
_GD = f32(_r.normal(size=(4, 3, 2)))
v2("gather_axis0", "gather", [("data", _GD), ("indices", f32([[3, 0], [1, -1]]))], lambda b: b.add_gather("g", ["data", "indices"], "y", axis=0),
   lambda d, i: np.take(d, i.astype(int), axis=0), reference="gather: numpy.take along axis (negative indices wrap), output rank = data.rank-1+indices.rank")
v2("gather_axis_negative", "gather", [("data", _GD), ("indices", f32([2, 0, 2]))], lambda b: b.add_gather("g", ["data", "indices"], "y", axis=-2),
   lambda d, i: np.take(d, i.astype(int), axis=-2), reference="gather along a negative axis")
v2("gatherND", "gatherND", [("data", _GD), ("indices", f32([[1, 2], [3, 0], [0, 1]]))], lambda b: b.add_gather_nd("g", ["data", "indices"], "y"),
   lambda d, i: np.stack([d[tuple(ix.astype(int))] for ix in i]), reference="gatherND: output[i] = data[indices[i, :]]")
v2("gatherAlongAxis", "gatherAlongAxis", [("data", _GD), ("indices", f32(_r.integers(0, 3, size=(4, 2, 2))))],
   lambda b: b.add_gather_along_axis("g", ["data", "indices"], "y", axis=1),
   lambda d, i: np.take_along_axis(d, i.astype(int), 1), reference="gatherAlongAxis: numpy.take_along_axis")

def _scatter_ref(c, idx, upd, axis, mode):
    out = np.moveaxis(c.copy(), axis, 0)
    u = np.moveaxis(upd, axis, 0)
    for n, i in enumerate(idx.astype(int)):
        if mode == "UPDATE": out[i] = u[n]
        elif mode == "ADD": out[i] += u[n]
        elif mode == "SUB": out[i] -= u[n]
        elif mode == "MUL": out[i] *= u[n]
        elif mode == "DIV": out[i] /= u[n]
        elif mode == "MAX": out[i] = np.maximum(out[i], u[n])
        elif mode == "MIN": out[i] = np.minimum(out[i], u[n])
    return np.moveaxis(out, 0, axis)

_SC = f32(_r.normal(size=(5, 3)))
for _mode, _idx in [("UPDATE", [4, 0, 2]), ("ADD", [1, 3, 1]), ("SUB", [0, 0, 4]), ("MUL", [2, 2, 3]), ("DIV", [1, 4, 1]), ("MAX", [0, 3, 0]), ("MIN", [2, 1, 2])]:
    _upd = f32(_r.uniform(0.5, 2.0, size=(3, 3)) * np.sign(_r.normal(size=(3, 3))))
    v2("scatter_%s" % _mode.lower(), "scatter", [("container", _SC), ("indices", f32(_idx)), ("updates", _upd)],
       (lambda m: lambda b: b.add_scatter("s", ["container", "indices", "updates"], "y", axis=0, mode=m))(_mode),
       (lambda m: lambda c, i, u: _scatter_ref(c, i, u, 0, m))(_mode),
       notes="mode %s; repeated indices accumulate in order (UPDATE uses distinct indices)" % _mode,
       reference="scatter: output = container; output[indices[n]] (op)= updates[n] along axis 0")
v2("scatter_axis1_add", "scatter", [("container", _GD), ("indices", f32([2, 0])), ("updates", f32(_r.normal(size=(4, 2, 2))))],
   lambda b: b.add_scatter("s", ["container", "indices", "updates"], "y", axis=1, mode="ADD"),
   lambda c, i, u: _scatter_ref(c, i, u, 1, "ADD"), reference="scatter along axis 1, ADD")

def _scatter_nd_ref(c, idx, upd, mode):
    out = c.copy()
    for n in range(idx.shape[0]):
        k = tuple(idx[n].astype(int))
        out[k] = upd[n] if mode == "UPDATE" else out[k] + upd[n]
    return out

v2("scatterND_update", "scatterND", [("container", _GD), ("indices", f32([[0, 1], [3, 2]])), ("updates", f32(_r.normal(size=(2, 2))))],
   lambda b: b.add_scatter_nd("s", ["container", "indices", "updates"], "y", mode="UPDATE"),
   lambda c, i, u: _scatter_nd_ref(c, i, u, "UPDATE"), reference="scatterND: output[indices[n,:]] = updates[n]")
v2("scatterND_add", "scatterND", [("container", _GD), ("indices", f32([[1], [1], [2]])), ("updates", f32(_r.normal(size=(3, 3, 2))))],
   lambda b: b.add_scatter_nd("s", ["container", "indices", "updates"], "y", mode="ADD"),
   lambda c, i, u: _scatter_nd_ref(c, i, u, "ADD"), reference="scatterND ADD with repeated multi-indices")

def _scatter_along_ref(c, idx, upd, axis, mode):
    out = c.copy()
    it = np.nditer(idx, flags=["multi_index"])
    for v in it:
        pos = list(it.multi_index); pos[axis] = int(v); pos = tuple(pos)
        u = upd[it.multi_index]
        out[pos] = u if mode == "UPDATE" else out[pos] + u
    return out

v2("scatterAlongAxis_update", "scatterAlongAxis", [("container", _GD), ("indices", f32(np.array([[[0, 1]], [[2, 0]], [[1, 1]], [[0, 2]]]))),
                                                  ("updates", f32(_r.normal(size=(4, 1, 2))))],
   lambda b: b.add_scatter_along_axis("s", ["container", "indices", "updates"], "y", axis=1, mode="UPDATE"),
   lambda c, i, u: _scatter_along_ref(c, i, u, 1, "UPDATE"), reference="scatterAlongAxis: numpy.put_along_axis")
v2("scatterAlongAxis_add", "scatterAlongAxis", [("container", _GD), ("indices", f32(_r.integers(0, 3, size=(4, 3, 2)))),
                                               ("updates", f32(_r.normal(size=(4, 3, 2))))],
   lambda b: b.add_scatter_along_axis("s", ["container", "indices", "updates"], "y", axis=-2, mode="ADD"),
   lambda c, i, u: _scatter_along_ref(c, i, u, 1, "ADD"), reference="scatterAlongAxis ADD (repeated indices accumulate)")

# --- matmul / embeddingND / layer norm / softmaxND
_A = f32(_r.normal(size=(2, 3, 4)))
_Bm = f32(_r.normal(size=(4, 5)))
v2("batchedMatmul_two_inputs_broadcast", "batchedMatmul", [("a", _A), ("b", _Bm)], lambda b: b.add_batched_mat_mul("mm", ["a", "b"], "y"),
   lambda a, c: a @ c, reference="batchedMatmul with two inputs: numpy.matmul (batch dims broadcast)")
v2("batchedMatmul_transposes", "batchedMatmul", [("a", f32(_r.normal(size=(2, 4, 3)))), ("b", f32(_r.normal(size=(1, 5, 4))))],
   lambda b: b.add_batched_mat_mul("mm", ["a", "b"], "y", transpose_a=True, transpose_b=True),
   lambda a, c: np.swapaxes(a, -1, -2) @ np.swapaxes(c, -1, -2), reference="batchedMatmul with transposeA and transposeB")
v2("batchedMatmul_rank1", "batchedMatmul", [("a", f32(_r.normal(size=(4,)))), ("b", f32(_r.normal(size=(3, 4, 2))))],
   lambda b: b.add_batched_mat_mul("mm", ["a", "b"], "y"), lambda a, c: (a.reshape(1, 4) @ c),
   notes="a rank 1 (D) -> (1,D); output rank max(2, ranks) = 3: [3,1,2]", reference="batchedMatmul rank-1 first input")


@v2_case("batchedMatmul_weights_bias", "batchedMatmul", notes="one input with stored weights: W is [X1,X2] but stored COLUMN-major "
         "(the floats are W^T row-major); bias [X2]")
def _bmm_w():
    """batchedMatmul with one input: y = x @ W + bias, W of shape [X1, X2] read column-major from WeightParams"""
    r = rng_for("bmm_w")
    x = f32(r.normal(size=(2, 3, 4)))
    W = f32(r.normal(size=(4, 5))); bias = f32(r.normal(size=5))
    b = builder([("x", x)], [("y", (2, 3, 5))], v2=True)
    b.add_batched_mat_mul("mm", ["x"], "y", weight_matrix_rows=4, weight_matrix_columns=5, W=W, bias=bias)
    L = b.spec.neuralNetwork.layers[0].batchedMatmul
    Wr = weights(L.weights, (5, 4)).T
    return b.spec, [("x", x)], [("y", x @ Wr + weights(L.bias, (5,)))]


@v2_case("batchedMatmul_weights_quant8", "batchedMatmul", tol=(1e-4, 1e-4), notes="8-bit linear quantized weights (coremltools), column-major")
def _bmm_q():
    """batchedMatmul with one input and quantized weights: dequantize, then y = x @ W"""
    r = rng_for("bmm_q")
    x = f32(r.normal(size=(3, 4)))
    W = f32(r.normal(size=(4, 6)))
    b = builder([("x", x)], [("y", (3, 6))], v2=True)
    b.add_batched_mat_mul("mm", ["x"], "y", weight_matrix_rows=4, weight_matrix_columns=6, W=W)
    spec = qu._quantize_spec_weights(b.spec, 8, QM_LINEAR)
    L = spec.neuralNetwork.layers[0].batchedMatmul
    Wr = weights(L.weights, (6, 4)).T
    return spec, [("x", x)], [("y", x @ Wr)]


@v2_case("embeddingND", "embeddingND", notes="weights stored [embeddingSize, vocabSize]; input [..., 1] of indices")
def _emb_nd():
    """embeddingND: y[..., :] = W[:, x[..., 0]] + bias"""
    r = rng_for("embeddingND")
    x = f32(r.integers(0, 7, size=(2, 3, 1)))
    W = f32(r.normal(size=(4, 7))); bias = f32(r.normal(size=4))
    b = builder([("x", x)], [("y", (2, 3, 4))], v2=True)
    b.add_embedding_nd("e", "x", "y", vocab_size=7, embedding_size=4, W=W, b=bias)
    L = b.spec.neuralNetwork.layers[0].embeddingND
    Wr = weights(L.weights, (4, 7))
    return b.spec, [("x", x)], [("y", Wr[:, x[..., 0].astype(int)].transpose(1, 2, 0) + weights(L.bias, (4,)))]


@v2_case("layerNormalization", "layerNormalization", tol=(1e-4, 1e-4), notes="normalizedShape = last two dims (3,4)")
def _layernorm():
    """layerNormalization: gamma * (x - mean) / sqrt(var + eps) + beta over the trailing normalizedShape dims (population variance)"""
    r = rng_for("layerNormalization")
    x = f32(r.normal(size=(2, 3, 4)) * 2 + 1)
    g, be = f32(r.normal(size=(3, 4))), f32(r.normal(size=(3, 4)))
    b = builder([("x", x)], [("y", x.shape)], v2=True)
    b.add_layer_normalization("ln", "x", "y", normalized_shape=[3, 4], gamma=g, beta=be, eps=1e-5)
    L = b.spec.neuralNetwork.layers[0].layerNormalization
    xd = x.astype(np.float64)
    m = xd.mean((1, 2), keepdims=True); v = xd.var((1, 2), keepdims=True)
    y = weights(L.gamma, (3, 4)) * (xd - m) / np.sqrt(v + f32(L.eps)) + weights(L.beta, (3, 4))
    return b.spec, [("x", x)], [("y", y)]


for _ax in (0, -1):
    def _smref(x, a=_ax):
        e = np.exp(x - x.max(a, keepdims=True))
        return e / e.sum(a, keepdims=True)
    v2("softmaxND_axis%d" % _ax, "softmaxND", [("x", X234)], (lambda a: lambda b: b.add_softmax_nd("sm", "x", "y", axis=a))(_ax), _smref,
       reference="softmaxND: exp(x)/sum exp(x) along axis")

# --- band / triangular / where nonzero / one hot / cumsum / constant pad
_M = f32(_r.normal(size=(2, 4, 5)))
def _band(x, lo, up):
    m, n = np.meshgrid(np.arange(x.shape[-2]), np.arange(x.shape[-1]), indexing="ij")
    keep = ((lo < 0) | (m - n <= lo)) & ((up < 0) | (n - m <= up))
    return x * keep
v2("matrixBandPart", "matrixBandPart", [("x", _M)], lambda b: b.add_matrix_band_part("mb", "x", "y", num_lower=1, num_upper=2),
   lambda x: _band(x, 1, 2), reference="matrixBandPart: keep (m,n) with (numLower<0 or m-n<=numLower) and (numUpper<0 or n-m<=numUpper)")
v2("matrixBandPart_lower_unbounded", "matrixBandPart", [("x", _M)], lambda b: b.add_matrix_band_part("mb", "x", "y", num_lower=-1, num_upper=0),
   lambda x: _band(x, -1, 0), reference="matrixBandPart with numLower=-1 (unbounded)")
v2("lowerTriangular", "lowerTriangular", [("x", _M)], lambda b: b.add_lower_triangular("lt", "x", "y", k=1), lambda x: np.tril(x, 1),
   reference="lowerTriangular: numpy.tril(x, k)")
v2("upperTriangular", "upperTriangular", [("x", _M)], lambda b: b.add_upper_triangular("ut", "x", "y", k=-1), lambda x: np.triu(x, -1),
   reference="upperTriangular: numpy.triu(x, k)")
_NZ = f32(np.array([[1, 2, 1], [0, 2, 2], [2, 1, 0]]))
v2("whereNonZero", "whereNonZero", [("x", _NZ)], lambda b: b.add_where_nonzero("w", "x", "y"),
   lambda x: np.argwhere(x != 0).astype(np.float64), notes="the proto's example; output [N, rank], row-major order of the nonzeros",
   reference="whereNonZero: multi-indices of the nonzero elements (numpy.argwhere)")

def _onehot(x, depth, axis, on, off):
    xi = x.astype(int)
    oh = np.where((xi[..., None] == np.arange(depth)), on, off)
    return np.moveaxis(oh, -1, axis if axis >= 0 else x.ndim + 1 + axis)
v2("oneHot", "oneHot", [("x", f32([[2, 0, 3], [1, -1, 5]]))], lambda b: b.add_one_hot("oh", ["x"], "y", one_hot_vector_size=4, axis=-1, on_value=5.0, off_value=-1.0),
   lambda x: _onehot(x, 4, -1, 5.0, -1.0), notes="out-of-range indices (-1, 5) give all offValue",
   reference="oneHot: onValue at the index, offValue elsewhere, new axis at 'axis' of the output")
v2("oneHot_axis0_dynamic_depth", "oneHot", [("x", f32([2, 0, 1])), ("depth", f32([3]))], lambda b: b.add_one_hot("oh", ["x", "depth"], "y", axis=0),
   lambda x, d: _onehot(x, 3, 0, 1.0, 0.0), reference="oneHot with the vector size as a second input, axis 0")

def _cumsum(x, axis, exclusive, reverse):
    a = np.flip(x, axis) if reverse else x
    c = np.cumsum(a, axis)
    if exclusive:
        c = c - a
    return np.flip(c, axis) if reverse else c
for _ex, _rv in [(False, False), (True, False), (False, True), (True, True)]:
    v2("cumSum%s%s" % ("_exclusive" if _ex else "", "_reverse" if _rv else ""), "cumSum", [("x", X234)],
       (lambda e, rv: lambda b: b.add_cumsum("cs", ["x"], "y", axis=1, reverse=rv, exclusive=e))(_ex, _rv),
       (lambda e, rv: lambda x: _cumsum(x, 1, e, rv))(_ex, _rv), reference="cumSum along axis; excludeFinalSum shifts by one; reverse runs from the end")
v2("constantPad", "constantPad", [("x", X34)], lambda b: b.add_constant_pad("cp", ["x"], "y", value=2.5, pad_amounts=[0, 1, 4, 0]),
   lambda x: np.pad(x, [(0, 1), (4, 0)], constant_values=2.5), reference="constantPad: padAmounts [before0, after0, before1, after1]")
v2("constantPad_to_given_size", "constantPad", [("x", X234)],
   lambda b: b.add_constant_pad("cp", ["x"], "y", value=-1.0, pad_amounts=[0, 0, 5, 0, 0, 6], pad_to_given_output_size_mode=True),
   lambda x: np.pad(x, [(0, 0), (2, 0), (0, 2)], constant_values=-1.0),
   notes="padToGivenOutputSizeMode: a nonzero pad amount is the OUTPUT size on that side", reference="constantPad to a given output size")

# --- fill / broadcast / constants / ranges
v2("fillLike", "fillLike", [("x", X234)], lambda b: b.add_fill_like("f", "x", "y", value=3.5), lambda x: np.full(x.shape, 3.5),
   reference="fillLike: the value in the input's shape")
v2("fillDynamic", "fillDynamic", [("shape", f32([2, 5]))], lambda b: b.add_fill_dynamic("f", "shape", "y", value=-2.0), lambda s: np.full((2, 5), -2.0),
   reference="fillDynamic: the value in the shape given by the input's values")
v2("fillStatic", "fillStatic", [("x", f32([0.5]))],
   lambda b: (b.add_fill_static("f", "c", output_shape=[3, 2], value=1.25), b.add_add_broadcastable("add", ["c", "x"], "y")),
   lambda x: np.full((3, 2), 1.25) + x, notes="y = fill + x so the model has an input", reference="fillStatic: the value in targetShape")
v2("broadcastToLike", "broadcastToLike", [("x", f32(X34[:, :1])), ("like", f32(np.zeros((2, 3, 4))))],
   lambda b: b.add_broadcast_to_like("bc", ["x", "like"], "y"), lambda x, l: np.broadcast_to(x, l.shape), reference="broadcastToLike: numpy.broadcast_to the second input's shape")
v2("broadcastToStatic", "broadcastToStatic", [("x", f32(X34[:1]))], lambda b: b.add_broadcast_to_static("bc", "x", "y", output_shape=[2, 3, 4]),
   lambda x: np.broadcast_to(x, (2, 3, 4)), reference="broadcastToStatic: numpy.broadcast_to targetShape")
v2("broadcastToDynamic", "broadcastToDynamic", [("x", f32(X34[:, :1])), ("shape", f32([3, 5]))],
   lambda b: b.add_broadcast_to_dynamic("bc", ["x", "shape"], "y"), lambda x, s: np.broadcast_to(x, (3, 5)), reference="broadcastToDynamic: shape from the second input's values")

@v2_case("loadConstantND", "loadConstantND", notes="y = constant + x so the model has an input")
def _lcnd():
    """loadConstantND: the stored data with the stored rank-N shape"""
    r = rng_for("loadConstantND")
    x = f32(r.normal(size=(2, 1, 3)))
    c = f32(r.normal(size=(2, 4, 3)))
    b = builder([("x", x)], [("y", (2, 4, 3))], v2=True)
    b.add_load_constant_nd("c", "c", c, (2, 4, 3))
    b.add_add_broadcastable("add", ["c", "x"], "y")
    return b.spec, [("x", x)], [("y", weights(b.spec.neuralNetwork.layers[0].loadConstantND.data, (2, 4, 3)) + x)]

v2("rangeStatic", "rangeStatic", [("x", f32([0.0]))],
   lambda b: (b.add_range_static("r", "rg", end=4.0, start=-1.0, step=1.5), b.add_add_broadcastable("add", ["rg", "x"], "y")),
   lambda x: np.arange(-1.0, 4.0, 1.5) + x, notes="y = range + x so the model has an input", reference="rangeStatic: numpy.arange(start, end, step)")
v2("rangeDynamic_end_only", "rangeDynamic", [("end", f32([5.0]))], lambda b: b.add_range_dynamic("r", ["end"], "y", start=1.0, step=2.0),
   lambda e: np.arange(1.0, 5.0, 2.0), reference="rangeDynamic: end from input 1, start/step from parameters")
v2("rangeDynamic_three_inputs", "rangeDynamic", [("end", f32([-2.0])), ("start", f32([3.0])), ("step", f32([-1.25]))],
   lambda b: b.add_range_dynamic("r", ["end", "start", "step"], "y"), lambda e, s, st: np.arange(3.0, -2.0, -1.25),
   reference="rangeDynamic: end, start and step all inputs (negative step)")

# --- random layers: only degenerate distributions have a deterministic oracle
_RNOTE = "random layer: Core ML's generator is unspecified, so the parameters make the distribution degenerate (the result is the same for every seed)"
v2("randomNormalLike", "randomNormalLike", [("x", X34)], lambda b: b.add_random_normal_like("r", "x", "y", mean=1.5, stddev=0.0, seed=7),
   lambda x: np.full(x.shape, 1.5), notes=_RNOTE + ": stdDev 0", reference="randomNormalLike with stdDev 0 = mean")
v2("randomNormalStatic", "randomNormalStatic", [("x", f32([0.0]))],
   lambda b: (b.add_random_normal_static("r", "rn", output_shape=[2, 3], mean=-0.5, stddev=0.0, seed=7), b.add_add_broadcastable("add", ["rn", "x"], "y")),
   lambda x: np.full((2, 3), -0.5) + x, notes=_RNOTE + ": stdDev 0; y = sample + x", reference="randomNormalStatic with stdDev 0")
v2("randomNormalDynamic", "randomNormalDynamic", [("shape", f32([3, 2]))], lambda b: b.add_random_normal_dynamic("r", ["shape"], "y", mean=2.0, stddev=0.0, seed=7),
   lambda s: np.full((3, 2), 2.0), notes=_RNOTE + ": stdDev 0", reference="randomNormalDynamic with stdDev 0")
v2("randomUniformLike", "randomUniformLike", [("x", X34)], lambda b: b.add_random_uniform_like("r", "x", "y", minval=0.75, maxval=0.75, seed=3),
   lambda x: np.full(x.shape, 0.75), notes=_RNOTE + ": minVal == maxVal", reference="randomUniformLike with minVal == maxVal")
v2("randomUniformStatic", "randomUniformStatic", [("x", f32([0.0]))],
   lambda b: (b.add_random_uniform_static("r", "ru", output_shape=[4], minval=-1.0, maxval=-1.0, seed=3), b.add_add_broadcastable("add", ["ru", "x"], "y")),
   lambda x: np.full((4,), -1.0) + x, notes=_RNOTE + ": minVal == maxVal; y = sample + x", reference="randomUniformStatic with minVal == maxVal")
v2("randomUniformDynamic", "randomUniformDynamic", [("shape", f32([2, 2]))], lambda b: b.add_random_uniform_dynamic("r", ["shape"], "y", minval=3.0, maxval=3.0, seed=3),
   lambda s: np.full((2, 2), 3.0), notes=_RNOTE + ": minVal == maxVal", reference="randomUniformDynamic with minVal == maxVal")
v2("randomBernoulliLike", "randomBernoulliLike", [("x", X34)], lambda b: b.add_random_bernoulli_like("r", "x", "y", prob=1.0, seed=5),
   lambda x: np.ones(x.shape), notes=_RNOTE + ": prob 1", reference="randomBernoulliLike with prob 1 = all ones")
v2("randomBernoulliStatic", "randomBernoulliStatic", [("x", f32([0.0]))],
   lambda b: (b.add_random_bernoulli_static("r", "rb", output_shape=[2, 2], prob=0.0, seed=5), b.add_add_broadcastable("add", ["rb", "x"], "y")),
   lambda x: np.zeros((2, 2)) + x, notes=_RNOTE + ": prob 0; y = sample + x", reference="randomBernoulliStatic with prob 0 = all zeros")
v2("randomBernoulliDynamic", "randomBernoulliDynamic", [("shape", f32([3]))], lambda b: b.add_random_bernoulli_dynamic("r", ["shape"], "y", prob=1.0, seed=5),
   lambda s: np.ones((3,)), notes=_RNOTE + ": prob 1", reference="randomBernoulliDynamic with prob 1")
_LOGITS = f32(np.array([[-80.0, 0.0, -80.0, -80.0], [-80.0, -80.0, -80.0, 0.0]]))
v2("categoricalDistribution", "categoricalDistribution", [("logits", _LOGITS)],
   lambda b: b.add_categorical_distribution("cd", "logits", "y", num_samples=3, is_logits=True, seed=11),
   lambda l: np.array([[1.0] * 3, [3.0] * 3]), notes=_RNOTE + ": each row puts all mass (e^-80 elsewhere) on one class",
   reference="categoricalDistribution: sampled class indices, shape [..., numSamples]")

# --- 3-D convolution / pooling (rank-5 [B,C,D,H,W])
def conv3d_ref(x, W, bias, stride, pads):
    B, C, D, H, Wd = x.shape
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p0, p1) for p0, p1 in pads])
    Co, Cg, kd, kh, kw = W.shape
    win = np.lib.stride_tricks.sliding_window_view(xp, (kd, kh, kw), axis=(2, 3, 4))[:, :, ::stride[0], ::stride[1], ::stride[2]]
    y = np.einsum("bcdhwijk,ocijk->bodhw", win, W)
    return y + bias.reshape(1, -1, 1, 1, 1)


@v2_case("convolution3d_valid", "convolution3d", tol=(1e-4, 1e-4), notes="input [B,C,D,H,W]; weights stored [Cout, Cin/groups, kD, kH, kW]")
def _conv3d():
    """convolution3d: 3-D cross-correlation + bias (Convolution3DLayerParams), valid padding"""
    r = rng_for("conv3d")
    x = f32(r.normal(size=(1, 2, 4, 5, 4)))
    W = f32(r.normal(size=(3, 2, 2, 3, 2)) * 0.3); bias = f32(r.normal(size=3))
    b = builder([("x", x)], [("y", (1, 3, 3, 3, 3))], v2=True)
    b.add_convolution3d("c3", input_channels=2, output_channels=3, depth=2, height=3, width=2, W=W, b=bias, has_bias=True,
                        input_name="x", output_name="y")
    L = b.spec.neuralNetwork.layers[0].convolution3d
    y = conv3d_ref(x.astype(np.float64), weights(L.weights, (3, 2, 2, 3, 2)), weights(L.bias, (3,)), (1, 1, 1), [(0, 0)] * 3)
    return b.spec, [("x", x)], [("y", y)]


@v2_case("convolution3d_custom_padding_stride", "convolution3d", tol=(1e-4, 1e-4), notes="custom padding front/back/top/bottom/left/right = 1,0,0,1,1,1; strides (2,1,2)")
def _conv3d_pad():
    """convolution3d with custom padding and strides"""
    r = rng_for("conv3d_pad")
    x = f32(r.normal(size=(1, 2, 4, 4, 5)))
    W = f32(r.normal(size=(2, 2, 2, 2, 3)) * 0.3); bias = f32(r.normal(size=2))
    pads = [(1, 0), (0, 1), (1, 1)]
    y0 = conv3d_ref(x.astype(np.float64), W.astype(np.float64), bias.astype(np.float64), (2, 1, 2), pads)
    b = builder([("x", x)], [("y", y0.shape)], v2=True)
    b.add_convolution3d("c3", input_channels=2, output_channels=2, depth=2, height=2, width=3, W=W, b=bias, has_bias=True,
                        stride_depth=2, stride_height=1, stride_width=2, padding_mode="custom",
                        padding_front=1, padding_back=0, padding_top=0, padding_bottom=1, padding_left=1, padding_right=1,
                        input_name="x", output_name="y")
    L = b.spec.neuralNetwork.layers[0].convolution3d
    y = conv3d_ref(x.astype(np.float64), weights(L.weights, (2, 2, 2, 2, 3)), weights(L.bias, (2,)), (2, 1, 2), pads)
    return b.spec, [("x", x)], [("y", y)]


def _pool3d_ref(x, kind, k, s):
    win = np.lib.stride_tricks.sliding_window_view(x, k, axis=(2, 3, 4))[:, :, ::s[0], ::s[1], ::s[2]]
    return win.max((-3, -2, -1)) if kind == "MAX" else win.mean((-3, -2, -1))


_P3 = f32(_r.normal(size=(1, 2, 4, 5, 5)))
v2("pooling3d_max", "pooling3d", [("x", _P3)], lambda b: b.add_pooling3d("p3", "x", "y", "MAX", 2, 2, 3, 2, 1, 2),
   lambda x: _pool3d_ref(x, "MAX", (2, 2, 3), (2, 1, 2)), reference="pooling3d MAX, valid padding, kernel (2,2,3), stride (2,1,2)")
v2("pooling3d_average", "pooling3d", [("x", _P3)], lambda b: b.add_pooling3d("p3", "x", "y", "AVERAGE", 2, 3, 2, 1, 2, 1),
   lambda x: _pool3d_ref(x, "AVERAGE", (2, 3, 2), (1, 2, 1)), reference="pooling3d AVERAGE, valid padding")
v2("globalPooling3d_max", "globalPooling3d", [("x", _P3)], lambda b: b.add_global_pooling3d("g3", "x", "y", "MAX"),
   lambda x: x.max((2, 3, 4), keepdims=True), reference="globalPooling3d MAX over D,H,W (output [B,C,1,1,1])")
v2("globalPooling3d_average", "globalPooling3d", [("x", _P3)], lambda b: b.add_global_pooling3d("g3", "x", "y", "AVERAGE"),
   lambda x: x.mean((2, 3, 4), keepdims=True), reference="globalPooling3d AVERAGE over D,H,W")


# --- non-maximum suppression layer
def nms_ref(boxes, scores, iou_thr, score_thr, max_boxes, per_class):
    B, N, C = scores.shape
    ob = np.zeros((B, max_boxes, 4)); os_ = np.zeros((B, max_boxes, C)); oi = -np.ones((B, max_boxes)); on = np.zeros((B,))
    for bi in range(B):
        sc = scores[bi].max(1); cls = scores[bi].argmax(1)
        bx = boxes[bi]
        x0, y0, x1, y1 = bx[:, 0] - bx[:, 2] / 2, bx[:, 1] - bx[:, 3] / 2, bx[:, 0] + bx[:, 2] / 2, bx[:, 1] + bx[:, 3] / 2
        order = [i for i in np.argsort(-sc, kind="stable") if sc[i] >= score_thr]
        keep = []
        for i in order:
            ok = True
            for j in keep:
                if per_class and cls[i] != cls[j]:
                    continue
                iw = max(0.0, min(x1[i], x1[j]) - max(x0[i], x0[j])); ih = max(0.0, min(y1[i], y1[j]) - max(y0[i], y0[j]))
                inter = iw * ih
                iou = inter / (bx[i, 2] * bx[i, 3] + bx[j, 2] * bx[j, 3] - inter)
                if iou > iou_thr:
                    ok = False; break
            if ok:
                keep.append(i)
            if len(keep) == max_boxes:
                break
        for k, i in enumerate(keep):
            ob[bi, k] = bx[i]; os_[bi, k] = scores[bi, i]; oi[bi, k] = i
        on[bi] = len(keep)
    return ob, os_, oi, on


def _nms_case(name, per_class):
    @v2_case(name, "NonMaximumSuppression", notes="boxes [x_center, y_center, width, height]; perClassSuppression=%s; no IoU or score "
             "ties in the data; padding 0 for boxes/scores and -1 for indices" % per_class)
    def fn():
        """NonMaximumSuppression layer: per batch, box score = max over classes; drop scores below scoreThreshold; greedy in
        descending score order, suppress boxes whose IoU with a kept box exceeds iouThreshold (within the same argmax class if
        perClassSuppression); outputs boxes, scores, indices (padded to maxBoxes) and the count"""
        boxes = f32(np.array([[[0.5, 0.5, 0.4, 0.4], [0.52, 0.5, 0.4, 0.42], [0.2, 0.2, 0.2, 0.2], [0.8, 0.8, 0.3, 0.3],
                               [0.21, 0.22, 0.2, 0.2], [0.5, 0.48, 0.38, 0.4]]]))
        scores = f32(np.array([[[0.9, 0.1], [0.2, 0.85], [0.7, 0.05], [0.03, 0.04], [0.1, 0.65], [0.3, 0.6]]]))
        ob, os_, oi, on = nms_ref(boxes.astype(np.float64), scores.astype(np.float64), 0.5, 0.05, 4, per_class)
        outs = [("boxes_out", ob), ("scores_out", os_), ("indices_out", oi), ("count", on)]
        b = builder([("boxes", boxes), ("scores", scores)], outs, v2=True)
        b.add_nms("nms", ["boxes", "scores"], [n for n, _ in outs], iou_threshold=0.5, score_threshold=0.05, max_boxes=4,
                  per_class_suppression=per_class)
        return b.spec, [("boxes", boxes), ("scores", scores)], outs


_nms_case("NonMaximumSuppression_across_classes", False)
_nms_case("NonMaximumSuppression_per_class", True)


# --- control flow: branch, loop, loopBreak, loopContinue
def _branch_case(name, cond):
    @v2_case(name, "branch", notes="if branch: y = x*2 (multiplyBroadcastable by a loadConstantND 2); else: y = x - 1 "
             "(activation linear alpha=1 beta=-1); condition input = %g (|c| > 1e-6 means true)" % cond)
    def fn():
        """branch: runs ifBranch when |condition| > 1e-6, else elseBranch; blobs made inside are visible outside"""
        r = rng_for("branch")
        x = f32(r.normal(size=(3,)))
        c = f32([cond])
        y = x * 2 if abs(cond) > 1e-6 else x - 1
        b = builder([("x", x), ("cond", c)], [("y", y)], v2=True)
        br = b.add_branch("branch", "cond")
        ib = NeuralNetworkBuilder(nn_spec=br.branch.ifBranch, disable_rank5_shape_mapping=True)
        ib.add_load_constant_nd("two", "two", np.array([2.0]), (1,))
        ib.add_multiply_broadcastable("mul", ["x", "two"], "y")
        eb = NeuralNetworkBuilder(nn_spec=br.branch.elseBranch, disable_rank5_shape_mapping=True)
        eb.add_activation("sub", "LINEAR", "x", "y", params=[1.0, -1.0])
        return b.spec, [("x", x), ("cond", c)], [("y", y)]


_branch_case("branch_if_taken", 1.0)
_branch_case("branch_else_taken", 0.0)


@v2_case("loop_for_static_count", "loop", notes="no condition network, maxLoopIterations=3; body: acc = acc*0.5 + x (copy writes the blob back)")
def _loop_for():
    """loop (LoopLayerParams case 1): run bodyNetwork maxLoopIterations times"""
    r = rng_for("loop_for")
    x = f32(r.normal(size=(2, 2)))
    acc = np.zeros((2, 2))
    for _ in range(3):
        acc = acc * 0.5 + x
    b = builder([("x", x)], [("y", acc)], v2=True)
    b.add_fill_like("init", "x", "acc", value=0.0)
    lp = b.add_loop("loop", max_iterations=3)
    body = NeuralNetworkBuilder(nn_spec=lp.loop.bodyNetwork, disable_rank5_shape_mapping=True)
    body.add_activation("half", "LINEAR", "acc", "acc_half", params=[0.5, 0.0])
    body.add_add_broadcastable("add", ["acc_half", "x"], "acc_next")
    body.add_copy("write", "acc_next", "acc")
    b.add_copy("out", "acc", "y")
    return b.spec, [("x", x)], [("y", acc)]


@v2_case("loop_count_from_input", "loop", notes="loop input = iteration count (scalar [1]); body: acc = acc + x")
def _loop_input():
    """loop with one input: the input value is the iteration count (maxLoopIterations ignored)"""
    r = rng_for("loop_input")
    x = f32(r.normal(size=(3,)))
    n = f32([4.0])
    b = builder([("x", x), ("n", n)], [("y", x * 4)], v2=True)
    b.add_fill_like("init", "x", "acc", value=0.0)
    lp = b.add_loop("loop", input_name="n", max_iterations=100)
    body = NeuralNetworkBuilder(nn_spec=lp.loop.bodyNetwork, disable_rank5_shape_mapping=True)
    body.add_add_broadcastable("add", ["acc", "x"], "acc_next")
    body.add_copy("write", "acc_next", "acc")
    b.add_copy("out", "acc", "y")
    return b.spec, [("x", x), ("n", n)], [("y", x.astype(np.float64) * 4)]


@v2_case("loop_while_condition", "loop", notes="condition network: cond = (v < 100) via lessThan alpha; maxLoopIterations 0 (pure while); "
         "body: v = v*3; also counts iterations")
def _loop_while():
    """loop (case 2): cond = conditionNetwork(); while cond: body(); cond = conditionNetwork()"""
    x = f32([1.5])
    v, k = 1.5, 0
    while v < 100:
        v *= 3; k += 1
    b = builder([("x", x)], [("y", np.array([v])), ("iterations", np.array([float(k)]))], v2=True)
    b.add_copy("init", "x", "v")
    b.add_load_constant_nd("zero", "count", np.array([0.0]), (1,))
    lp = b.add_loop("loop", max_iterations=0)
    cond = NeuralNetworkBuilder(nn_spec=lp.loop.conditionNetwork, disable_rank5_shape_mapping=True)
    cond.add_less_than("lt", ["v"], "cond", alpha=100.0)
    lp.loop.conditionVar = "cond"
    body = NeuralNetworkBuilder(nn_spec=lp.loop.bodyNetwork, disable_rank5_shape_mapping=True)
    body.add_activation("times3", "LINEAR", "v", "v3", params=[3.0, 0.0])
    body.add_copy("write", "v3", "v")
    body.add_activation("inc", "LINEAR", "count", "count1", params=[1.0, 1.0])
    body.add_copy("write_count", "count1", "count")
    b.add_copy("out", "v", "y")
    b.add_copy("out2", "count", "iterations")
    return b.spec, [("x", x)], [("y", np.array([v])), ("iterations", np.array([float(k)]))]


@v2_case("loop_break_continue", ["loopBreak", "loopContinue", "loop", "branch"], notes="for loop of 10; body: i += 1; if i > 6: loopBreak; if i <= 2: loopContinue; acc += i. "
         "Expected acc = 3+4+5+6 = 18, i = 7. Exercises branch, loopBreak, loopContinue, greaterThan, lessEqual, copy")
def _loop_bc():
    """loopBreak ends the loop; loopContinue skips the rest of the body for this iteration"""
    x = f32([0.0])
    i, acc = 0, 0.0
    for _ in range(10):
        i += 1
        if i > 6:
            break
        if i <= 2:
            continue
        acc += i
    b = builder([("x", x)], [("acc_out", np.array([acc])), ("i_out", np.array([float(i)]))], v2=True)
    b.add_copy("init_i", "x", "i")
    b.add_copy("init_acc", "x", "acc")
    lp = b.add_loop("loop", max_iterations=10)
    body = NeuralNetworkBuilder(nn_spec=lp.loop.bodyNetwork, disable_rank5_shape_mapping=True)
    body.add_activation("inc", "LINEAR", "i", "i1", params=[1.0, 1.0])
    body.add_copy("write_i", "i1", "i")
    body.add_greater_than("gt", ["i"], "stop", alpha=6.0)
    br1 = body.add_branch("maybe_break", "stop")
    NeuralNetworkBuilder(nn_spec=br1.branch.ifBranch, disable_rank5_shape_mapping=True).add_loop_break("break")
    body.add_less_than("le", ["i"], "skip", use_less_than_equal=True, alpha=2.0)
    br2 = body.add_branch("maybe_continue", "skip")
    NeuralNetworkBuilder(nn_spec=br2.branch.ifBranch, disable_rank5_shape_mapping=True).add_loop_continue("continue")
    body.add_add_broadcastable("accum", ["acc", "i"], "acc1")
    body.add_copy("write_acc", "acc1", "acc")
    b.add_copy("out_acc", "acc", "acc_out")
    b.add_copy("out_i", "i", "i_out")
    return b.spec, [("x", x)], [("acc_out", np.array([acc])), ("i_out", np.array([float(i)]))]


# --- custom layer: no oracle, the importer must refuse it
@case("custom_unsupported", "custom", "v1", notes="CustomLayerParams className 'MLConvTestCustomLayer': there is no definition of what "
      "it computes, so a converter must reject the model with a typed error naming the class; expected output is NOT given",
      reference="none: expect a typed 'unsupported custom layer' error")
def _custom():
    x = f32(rng_for("custom").normal(size=(2, 1, 1)))
    b = builder([("x", x)], [("y", x.shape)], v2=False)
    cp = NeuralNetwork_pb2.CustomLayerParams()
    cp.className = "MLConvTestCustomLayer"
    cp.description = "test fixture: behaviour undefined on purpose"
    b.add_custom("custom", ["x"], ["y"], custom_proto_spec=cp)
    return b.spec, [("x", x)], []


# ================================================================= Keras models converted to NeuralNetwork (v2 layers)
def keras_models():
    import tensorflow as tf
    from tensorflow import keras
    L = keras.layers
    out = []

    def seed(n):
        keras.utils.set_random_seed(zlib.crc32(n.encode()) % (2 ** 31))

    seed("keras_dense_mlp")
    i = keras.Input((6,), name="features")
    h = L.Dense(8, activation="relu")(i)
    h = L.Dense(5, activation="tanh")(h)
    o = L.Dense(3, activation="softmax")(h)
    out.append(("keras_dense_mlp", keras.Model(i, o), ct.target.iOS13, "Dense relu/tanh/softmax"))

    seed("keras_conv2d")
    i = keras.Input((9, 8, 3), name="image")
    h = L.Conv2D(4, 3, padding="same", activation="relu")(i)
    h = L.MaxPooling2D(2)(h)
    h = L.Conv2D(5, (2, 3), strides=(1, 2), padding="valid")(h)
    h = L.BatchNormalization()(h)
    h = L.GlobalAveragePooling2D()(h)
    o = L.Dense(2)(h)
    out.append(("keras_conv2d", keras.Model(i, o), ct.target.iOS13, "Conv2D same/valid, MaxPooling2D, BatchNormalization (inference), GlobalAveragePooling2D, Dense"))

    seed("keras_lstm_gru")
    i = keras.Input((5, 3), name="sequence")
    h = L.LSTM(4, return_sequences=True)(i)
    o = L.GRU(3, return_sequences=True)(h)
    out.append(("keras_lstm_gru_sequences", keras.Model(i, o), ct.target.iOS14, "LSTM and GRU (reset_after=True, the Keras 2 default), return_sequences"))

    seed("keras_lstm_last")
    i = keras.Input((6, 2), name="sequence")
    o = L.Dense(2)(L.LSTM(5)(i))
    out.append(("keras_lstm_last", keras.Model(i, o), ct.target.iOS14, "LSTM last output + Dense"))

    seed("keras_reshape_permute_reduce")
    i = keras.Input((4, 6), name="x")
    h = L.Reshape((2, 3, 4))(i)
    h = L.Permute((3, 1, 2))(h)
    m = tf.reduce_mean(h, axis=-1)
    s = tf.reduce_sum(h * h, axis=[1, 2])
    mx = tf.reduce_max(h, axis=1, keepdims=True)
    out.append(("keras_reshape_permute_reduce", keras.Model(i, [m, s, mx]), ct.target.iOS14,
                "Reshape, Permute, tf.reduce_mean / reduce_sum / reduce_max (TFOpLambda layers, no Lambda)"))

    seed("keras_tf_ops")
    a = keras.Input((4, 5), name="a")
    bb = keras.Input((5, 3), name="b")
    g = tf.gather(a, [3, 0, 2], axis=1)
    c = tf.concat([g, a[:, :2, :]], axis=1)
    mm = tf.matmul(c, bb)
    w = tf.where(mm > 0.0, mm, 0.1 * mm)
    sm = tf.nn.softmax(w, axis=1)
    sq = tf.squeeze(tf.expand_dims(tf.reduce_min(sm, axis=-1), -1), -1)
    out.append(("keras_tf_ops", keras.Model([a, bb], [w, sm, sq]), ct.target.iOS14,
                "tf.gather, slicing, tf.concat, tf.matmul, tf.where, tf.nn.softmax(axis=1), expand_dims/squeeze, reduce_min"))

    seed("keras_conv1d_embedding")
    i = keras.Input((7,), name="tokens")
    h = L.Embedding(10, 4)(i)
    h = L.Conv1D(3, 2, activation="relu")(h)
    h = L.UpSampling1D(2)(h)
    o = L.Flatten()(h)
    out.append(("keras_embedding_conv1d", keras.Model(i, o), ct.target.iOS13, "Embedding, Conv1D, UpSampling1D, Flatten"))
    return out


def keras_cases(only):
    import tensorflow as tf
    infos = []
    for name, model, target, what in keras_models():
        if only and name not in only:
            continue
        r = rng_for(name)
        ins = []
        for t in model.inputs:
            shape = (1,) + tuple(int(d) for d in t.shape[1:])
            if t.name.startswith("tokens"):
                ins.append((t.name.split(":")[0], f32(r.integers(0, 10, size=shape))))
            else:
                ins.append((t.name.split(":")[0], f32(r.normal(size=shape))))
        keras_out = model([tf.constant(a) for _, a in ins] if len(ins) > 1 else tf.constant(ins[0][1]), training=False)
        keras_out = keras_out if isinstance(keras_out, (list, tuple)) else [keras_out]
        mlm = ct.convert(model, source="tensorflow", convert_to="neuralnetwork", minimum_deployment_target=target,
                         inputs=[ct.TensorType(name=n, shape=a.shape) for n, a in ins])
        spec = mlm.get_spec()
        out_names = [f.name for f in spec.description.output]
        assert len(out_names) == len(keras_out), name
        # description output shapes may be missing after conversion: record the Keras shapes there
        for f, v in zip(spec.description.output, keras_out):
            if not list(f.type.multiArrayType.shape):
                f.type.multiArrayType.shape.extend(list(v.shape))
        outs = [(n, np.asarray(v, dtype=np.float64)) for n, v in zip(out_names, keras_out)]
        meta = dict(layer="keras", version="v2", tol=(1e-4, 1e-3),
                    notes="tf.keras %s model (%s) converted by coremltools %s with convert_to='neuralnetwork', "
                          "minimum_deployment_target=%s; expected = Keras' own output (training=False)"
                          % (__import__("keras").__version__, what, ct.__version__, target.name),
                    reference="Keras model(x, training=False)")
        info = write_case(name, meta, spec, ins, outs, extra={"keras_layers": sorted({l.__class__.__name__ for l in model.layers} - {"InputLayer"}),
                                                               "deployment_target": target.name})
        infos.append(info)
        print("  %-55s %s" % (name, ",".join(info["layers"])), file=sys.stderr)
    return infos


# ================================================================= writing
def layers_in(nn, acc=None):
    """All NeuralNetworkLayer oneof members used in a NeuralNetwork message, nested networks included."""
    acc = set() if acc is None else acc
    for L in nn.layers:
        k = L.WhichOneof("layer")
        acc.add(k)
        if k == "branch":
            layers_in(L.branch.ifBranch, acc); layers_in(L.branch.elseBranch, acc)
        elif k == "loop":
            layers_in(L.loop.conditionNetwork, acc); layers_in(L.loop.bodyNetwork, acc)
    return acc


def nn_of(spec):
    t = spec.WhichOneof("Type")
    return getattr(spec, t) if t in ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor") else None


def shape_of(spec_feature):
    return [int(d) for d in spec_feature.type.multiArrayType.shape]


def save_npy(path, arr):
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(np.asarray(arr, dtype=np.float32)), allow_pickle=False)


def write_case(name, meta, spec, ins, outs, extra=None):
    d = os.path.join(OUT, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    # description shapes must match the arrays we store
    desc_in = {f.name: f for f in spec.description.input}
    desc_out = {f.name: f for f in spec.description.output}
    assert [f.name for f in spec.description.input] == [n for n, _ in ins], (name, "input order")
    if outs:
        assert [f.name for f in spec.description.output] == [n for n, _ in outs], (name, "output order")
    path = os.path.join(d, "model.mlmodel")
    with open(path, "wb") as fh:
        fh.write(spec.SerializeToString(deterministic=True))
    ct.models.MLModel(path, skip_model_load=True)  # parses and checks the spec
    rec_in, rec_out = [], []
    for i, (n, a) in enumerate(ins):
        a = np.asarray(a, dtype=np.float32)
        assert list(a.shape) == shape_of(desc_in[n]), (name, n, a.shape, shape_of(desc_in[n]))
        save_npy(os.path.join(d, "input_%d.npy" % i), a)
        rec_in.append({"name": n, "file": "input_%d.npy" % i, "shape": list(a.shape)})
    for i, (n, a) in enumerate(outs):
        a = np.asarray(a, dtype=np.float64)
        assert np.all(np.isfinite(a)), (name, n)
        assert list(a.shape) == shape_of(desc_out[n]), (name, n, a.shape, shape_of(desc_out[n]))
        save_npy(os.path.join(d, "output_%d.npy" % i), a)
        rec_out.append({"name": n, "file": "output_%d.npy" % i, "shape": list(a.shape)})
    nn = nn_of(spec)
    mapping = NeuralNetwork_pb2.NeuralNetworkMultiArrayShapeMapping.Name(nn.arrayInputShapeMapping)
    info = {
        "name": name,
        "layer_type": meta["layer"] if isinstance(meta["layer"], str) else meta["layer"][0],
        "layer_types_tested": [meta["layer"]] if isinstance(meta["layer"], str) else list(meta["layer"]),
        "layers": sorted(layers_in(nn)),
        "version": meta["version"],
        "shape_mapping": mapping,
        "specificationVersion": spec.specificationVersion,
        "tolerance": {"atol": meta["tol"][0], "rtol": meta["tol"][1]},
        "reference": " ".join(meta["reference"].split()),
        "notes": meta["notes"],
        "inputs": rec_in,
        "outputs": rec_out,
        "generator": "Scripts/make_nn_layer_fixtures.py",
        "versions": VERSIONS,
    }
    if not outs:
        info["expect_error"] = True
    if extra:
        info.update(extra)
    with open(os.path.join(d, "case.json"), "w") as fh:
        json.dump(info, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return info


def _versions():
    try:
        import tensorflow as tf
        return "coremltools %s, numpy %s, protobuf %s, tensorflow %s" % (ct.__version__, np.__version__, __import__("google.protobuf").protobuf.__version__, tf.__version__)
    except ImportError:
        return "coremltools %s, numpy %s" % (ct.__version__, np.__version__)


VERSIONS = _versions()


def run_cases(only):
    infos = []
    for name, meta in CASES.items():
        if only and name not in only:
            continue
        spec, ins, outs = meta["fn"]()
        infos.append(write_case(name, meta, spec, ins, outs))
        print("  %-55s %s" % (name, meta["layer"]), file=sys.stderr)
    return infos


WHY_NOT = {}


def write_coverage(infos):
    by = {m: [] for m in LAYER_MEMBERS}
    primary = {m: [] for m in LAYER_MEMBERS}
    for info in infos:
        for l in info["layers"]:
            by[l].append(info["name"])
        for lt in info["layer_types_tested"]:
            if lt in primary:
                primary[lt].append(info["name"])
    cov = []
    for m in LAYER_MEMBERS:
        entry = {"member": m,
                 "field_number": NeuralNetwork_pb2.NeuralNetworkLayer.DESCRIPTOR.fields_by_name[m].number,
                 "cases": sorted(primary[m]),
                 "also_in": sorted(set(by[m]) - set(primary[m]))}
        if not primary[m]:
            entry["why_no_fixture"] = WHY_NOT.get(m, "no dedicated case")
        cov.append(entry)
    covered = sum(1 for e in cov if e["cases"])
    doc = {"oneof": "NeuralNetworkLayer.layer", "members": len(LAYER_MEMBERS), "members_with_a_case": covered,
           "members_with_a_numeric_oracle": sum(1 for e in cov if any(
               not json.load(open(os.path.join(OUT, c, "case.json"))).get("expect_error") for c in e["cases"])),
           "coverage": cov}
    with open(os.path.join(OUT, "coverage.json"), "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--skip-keras", action="store_true")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    infos = run_cases(set(args.only or []))
    if not args.skip_keras and "keras_cases" in globals():
        infos += keras_cases(set(args.only or []))
    if not args.only:
        # every case directory we did not write is stale
        names = {i["name"] for i in infos}
        for d in sorted(os.listdir(OUT)):
            if os.path.isdir(os.path.join(OUT, d)) and d not in names:
                shutil.rmtree(os.path.join(OUT, d))
        doc = write_coverage(infos)
        write_readme(infos, doc)
        print("%d cases; %d/%d oneof members with a case" % (len(infos), doc["members_with_a_case"], doc["members"]), file=sys.stderr)


def write_readme(infos, doc):
    rows = []
    for i in sorted(infos, key=lambda i: (i["layer_type"] == "keras", i["layer_type"].lower(), i["name"])):
        src = "Keras predict" if i["layer_type"] == "keras" else ("none (expect a typed error)" if i.get("expect_error") else "NumPy (proto formula)")
        lt = i["layer_type"] if i["layer_type"] != "keras" else "keras: " + ", ".join(i["layers"])
        rows.append("| `%s` | %s | %s | %d | %s | %g / %g |" % (i["name"], lt, i["version"], i["specificationVersion"], src,
                                                             i["tolerance"]["atol"], i["tolerance"]["rtol"]))
    missing = [e for e in doc["coverage"] if not e["cases"]]
    text = README_HEAD % {"n": len(infos), "members": doc["members"], "covered": doc["members_with_a_case"],
                          "oracle": doc["members_with_a_numeric_oracle"], "versions": VERSIONS}
    text += "\n".join(rows) + "\n"
    if missing:
        text += "\nOneof members without a case: " + ", ".join("`%s` (%s)" % (e["member"], e["why_no_fixture"]) for e in missing) + "\n"
    with open(os.path.join(OUT, "README.md"), "w") as fh:
        fh.write(text)


README_HEAD = """# Core ML neural-network layer fixtures

Generated by `Scripts/make_nn_layer_fixtures.py` (%(versions)s); do not edit by hand.
Regenerate from the repository root:

```sh
PY=$(Scripts/coremltools8-env)      # venv ~/.cache/mlconv-ct8venv: Python 3.11, coremltools 8.3.0,
                                    # tensorflow-cpu 2.15.1, keras 2.15.0, numpy 1.26.4, protobuf 4.25.9
$PY Scripts/make_nn_layer_fixtures.py            # all cases, coverage.json, this README
$PY Scripts/make_nn_layer_fixtures.py --only CASE [CASE ...]   # rewrite some cases only
$PY Scripts/make_nn_layer_fixtures.py --skip-keras             # builder cases only (no TensorFlow)
```

Every case is seeded from its name; a re-run writes the same bytes.

## Layout

One folder per case:

- `model.mlmodel`: a NeuralNetwork model. Builder cases: coremltools' `NeuralNetworkBuilder`
  (weights quantized with coremltools' `_quantize_spec_weights` where the name says fp16 / quant).
  `keras_*`: a tf.keras 2.15 model converted with `convert_to="neuralnetwork"` at an iOS13/iOS14
  deployment target (v2 layers; `layers` in case.json lists what the converter emitted).
- `input_<i>.npy`, `output_<i>.npy`: float32, C order, in model-description order and in the
  shape the description declares. v1 cases with `shape_mapping` `RANK5_ARRAY_MAPPING` declare
  `[C,H,W]` (or `[C]`); Core ML runs them on the rank-5 blob `[1,1,C,H,W]` (`[1,1,C,1,1]`).
  v1 layers that need a sequence or batch axis (recurrent layers, sequenceRepeat, sequence
  concat, embedding, cropResize) are in `EXACT_ARRAY_MAPPING` models whose inputs are declared
  rank 5 (`[Seq,Batch,C,H,W]`). Index-valued inputs (gather indices, lengths, shapes) are
  stored as float32, as Core ML NeuralNetwork inputs are.
- `case.json`: `layer_type` (the `NeuralNetworkLayer` oneof member the case is about),
  `layer_types_tested`, `layers` (every oneof member in the model, nested branch/loop networks
  included), `version` (`v1` = rank-5 blob layer, `v2` = rank-N layer), `shape_mapping`,
  `specificationVersion`, `tolerance` (pass if `|got - expected| <= atol + rtol * |expected|`
  elementwise), `reference` (formula or source of the expected numbers), `notes`, `inputs`,
  `outputs`. `expect_error: true` (the `custom` case): no outputs; a converter must refuse the
  model with a typed error.

References: NumPy implementations (one function per layer type, in the script) of the formulas
in the comments of Apple's `NeuralNetwork.proto`, computed from the parameters read back from the
saved spec (the proto's weight layouts, not the builder's argument layouts). `keras_*`: Keras'
own output, `model(x, training=False)`.

`coverage.json` lists all %(members)s members of the `NeuralNetworkLayer.layer` oneof with their
cases (`cases`: the case is about this member; `also_in`: the member appears in other cases).
%(covered)s members have a case; %(oracle)s of them have a numeric oracle (`custom` has none).

Random layers (`random*`, `categoricalDistribution`) have no defined generator, so their cases use
degenerate distributions (stdDev 0, minVal == maxVal, prob 0 or 1, one-hot logits) whose result
does not depend on the seed.

## Cases (%(n)s)

| case | layer type | v1/v2 | spec version | reference | atol / rtol |
|---|---|---|---|---|---|
"""


if __name__ == "__main__":
    main()
