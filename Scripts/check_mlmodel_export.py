#!/usr/bin/env python3
"""Checks mlconv's IR → Core ML writer (CoreMLExporter) against coremltools, and makes the
Fixtures/coreml builder fixtures. Python is only used here, never by `swift build` / `swift test`.

Set-up, once (coremltools in its own venv):

    python3 -m venv /opt/ctvenv
    /opt/ctvenv/bin/pip install "coremltools==7.2" "protobuf==3.20.3" "numpy<2"

Run (from the repository root):

    PY=/opt/ctvenv/bin/python; DIR=$(mktemp -d)
    MLCONV_EXPORT_DIR=$DIR swift test --filter CoreMLExport          # 1. our writer → $DIR/*.mlmodel
    $PY Scripts/check_mlmodel_export.py all $DIR                     # 2. the checks below
    $PY Scripts/check_mlmodel_export.py fixtures                     # 3. (re)make Fixtures/coreml

Step 1 runs Tests/CoreMLFormatTests/CoreMLExportTests.swift (small graphs per feature; quantized
ones also leave X.expected.json) and Tests/MLConvCLITests/CoreMLExportParityTests.swift (every
Keras fixture, its fp16 / linear / LUT variants and the real models of ../shared, each with
X.input_*.npy and the original IR's X.output_*.npy in Core ML layout).

Sub-commands:
  load DIR     (a) coremltools' `load_spec` parses every DIR/*.mlmodel; each spec is checked with
               the Core ML validator's weight rules (one storage field, fp16 weight/bias pairing,
               1…8 bits, LUT of 2^n, rawValue ≥ ceil(n·N/8), linear scale/bias lengths) and its
               specificationVersion against the features it uses (fp16/custom → 2, quantized /
               resizeBilinear → 3, ND layers → 4). Where the Swift tests left X.input_*.npy and
               X.output_*.npy (outputs of the original IR), the model is also run with this
               script's NumPy interpreter of the classic layers and compared (max |Δ| ≤ 1e-4 ·
               max(1, max|IR|)): a check of the written semantics that does not use mlconv's
               importer or runtime.
  compare DIR  (b) for each DIR/*.mlmodel with float32 weights, rebuilds the same network with
               coremltools' own `NeuralNetworkBuilder` (same layer kinds, parameters and weights,
               read from our spec) and prints every field that differs, layer by layer, plus
               the model description. Differences listed in KNOWN_DIFFERENCES are reported as
               such; others fail.
  quant DIR    (c) dequantizes every quantized weight of DIR/*.mlmodel with coremltools' own code
               (`quantization_utils._dequantize_wp`, what `_dequantize_nn_spec` calls, with the
               layer's shape and axis: 1 for deconvolution) and requires the values this script's
               unpacker gives (which `load` runs against the IR) and, where X.expected.json has
               them, the IR's own values.
  fixtures [OUT]  builds one small model per layer type the writer emits with
               `NeuralNetworkBuilder` (random weights, seed 0), computes NumPy reference
               outputs with the interpreter below, and writes OUT (default Fixtures/coreml):
               <name>/model.mlmodel, <name>/input_<feature>.npy, <name>/output_<feature>.npy (Core
               ML layouts: [C, H, W], [D] or images as [C, H, W] 0–255) and manifest.json.
               Tests/MLConvCLITests/CoreMLBuilderFixtureTests.swift imports and runs them.
  all DIR      load + compare + quant.
Exit status is 0 only if every check passes.
"""
import copy
import glob
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ct():
    import logging
    logging.disable(logging.WARNING)
    import coremltools
    return coremltools


# ---------------------------------------------------------------------------------------------
# Weights


def unpack_bits(raw, count, nbits):
    """MSB-first n-bit codes (coremltools _unpack_to_bytes)."""
    b = np.frombuffer(bytes(raw), dtype=np.uint8)
    if nbits == 8:
        return b[:count].astype(np.int64)
    bits = np.unpackbits(b)[: count * nbits].reshape(count, nbits)
    return (bits * (1 << np.arange(nbits - 1, -1, -1))).sum(axis=1)


def weights(wp, count, shape=None, axis=0):
    """Float values of a WeightParams (float, fp16, linear or LUT)."""
    if len(wp.floatValue):
        return np.array(wp.floatValue, dtype=np.float32)
    if len(wp.float16Value):
        return np.frombuffer(wp.float16Value, dtype="<f2").astype(np.float32)
    if len(wp.rawValue):
        q = wp.quantization
        codes = unpack_bits(wp.rawValue, count, q.numberOfBits)
        if q.WhichOneof("QuantizationType") == "lookupTableQuantization":
            return np.array(q.lookupTableQuantization.floatValue, dtype=np.float32)[codes]
        scale = np.array(q.linearQuantization.scale, dtype=np.float32)
        bias = np.array(q.linearQuantization.bias, dtype=np.float32)
        if len(scale) == 1:
            return (codes * scale[0] + (bias[0] if len(bias) else 0)).astype(np.float32)
        shape = shape or [len(scale), count // len(scale)]
        c = codes.reshape(shape).astype(np.float32)
        bshape = [1] * len(shape)
        bshape[axis] = len(scale)
        out = c * scale.reshape(bshape) + (bias.reshape(bshape) if len(bias) else 0)
        return out.reshape(-1).astype(np.float32)
    return np.zeros(0, dtype=np.float32)


def storage(wp):
    kinds = [k for k, v in (("float32", len(wp.floatValue)), ("float16", len(wp.float16Value)),
                            ("quantized", len(wp.rawValue)), ("int8", len(wp.int8RawValue))) if v]
    return kinds


# ---------------------------------------------------------------------------------------------
# NumPy interpreter of the classic (rank-5) layers, batch 1. Blobs are [Seq, C, H, W].


def same_pads(n, k, s):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2  # BOTTOM_RIGHT_HEAVY


def conv_pads(p, h, w, kh, kw):
    """(top, bottom, left, right) for convolution / pooling params p with effective kernel kh×kw."""
    field = p.WhichOneof("ConvolutionPaddingType") if p.DESCRIPTOR.name == "ConvolutionLayerParams" else p.WhichOneof("PoolingPaddingType")
    sh, sw = (list(p.stride) or [1, 1])
    if field == "same":
        if p.same.asymmetryMode != 0:
            raise NotImplementedError("TOP_LEFT_HEAVY")
        t, b = same_pads(h, kh, sh)
        l, r = same_pads(w, kw, sw)
        return t, b, l, r
    if field == "valid" and len(p.valid.paddingAmounts.borderAmounts) == 2:
        a = p.valid.paddingAmounts.borderAmounts
        return a[0].startEdgeSize, a[0].endEdgeSize, a[1].startEdgeSize, a[1].endEdgeSize
    if field == "includeLastPixel":
        raise NotImplementedError("includeLastPixel")
    return 0, 0, 0, 0


def run_conv(p, x):
    s_, cin, h, w = x.shape
    kh, kw = list(p.kernelSize) or [3, 3]
    sh, sw = list(p.stride) or [1, 1]
    dh, dw = list(p.dilationFactor) or [1, 1]
    g = p.nGroups or 1
    cout = p.outputChannels
    if p.isDeconvolution:
        kc = p.kernelChannels
        W = weights(p.weights, kc * (cout // g) * kh * kw, [kc, cout // g, kh, kw], axis=1).reshape(kc, cout // g, kh, kw)
        hf, wf = (h - 1) * sh + (kh - 1) * dh + 1, (w - 1) * sw + (kw - 1) * dw + 1
        out = np.zeros((s_, cout, hf, wf), dtype=np.float64)
        ci, co = cin // g, cout // g
        for gi in range(g):
            xg = x[:, gi * ci:(gi + 1) * ci]
            for i in range(kh):
                for j in range(kw):
                    contrib = np.einsum("schw,co->sohw", xg, W[gi * ci:(gi + 1) * ci, :, i, j])
                    out[:, gi * co:(gi + 1) * co, i * dh:i * dh + (h - 1) * sh + 1:sh, j * dw:j * dw + (w - 1) * sw + 1:sw] += contrib
        if len(p.outputShape) == 2:
            ho, wo = p.outputShape
            # Crop TF-style (top/left = total // 2); pad the end when larger (output padding).
            def fit(a, axis, n):
                full = a.shape[axis]
                if full >= n:
                    st = (full - n) // 2 if p.WhichOneof("ConvolutionPaddingType") == "same" else 0
                    return np.take(a, range(st, st + n), axis=axis)
                padw = [(0, 0)] * 4
                padw[axis] = (0, n - full)
                return np.pad(a, padw)
            out = fit(fit(out, 2, ho), 3, wo)
        else:
            t, b, l, r = conv_pads(p, h, w, kh, kw) if p.WhichOneof("ConvolutionPaddingType") == "valid" else (0, 0, 0, 0)
            if p.WhichOneof("ConvolutionPaddingType") == "same":
                ho, wo = h * sh, w * sw
                t, l = (hf - ho) // 2, (wf - wo) // 2
                b, r = hf - ho - t, wf - wo - l
            out = out[:, :, t:hf - b, l:wf - r]
    else:
        kc = p.kernelChannels
        W = weights(p.weights, cout * kc * kh * kw, [cout, kc, kh, kw]).reshape(cout, kc, kh, kw)
        ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        t, b, l, r = conv_pads(p, h, w, ekh, ekw)
        xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)))
        ho, wo = (h + t + b - ekh) // sh + 1, (w + l + r - ekw) // sw + 1
        out = np.zeros((s_, cout, ho, wo), dtype=np.float64)
        ci, co = cin // g, cout // g
        for gi in range(g):
            xg = xp[:, gi * ci:(gi + 1) * ci]
            for i in range(kh):
                for j in range(kw):
                    patch = xg[:, :, i * dh:i * dh + (ho - 1) * sh + 1:sh, j * dw:j * dw + (wo - 1) * sw + 1:sw]
                    out[:, gi * co:(gi + 1) * co] += np.einsum("schw,oc->sohw", patch, W[gi * co:(gi + 1) * co, :, i, j])
    if p.hasBias:
        out += weights(p.bias, cout).reshape(1, cout, 1, 1)
    return out


def run_pool(p, x):
    s_, c, h, w = x.shape
    if p.globalPooling:
        r = x.max(axis=(2, 3), keepdims=True) if p.type == 0 else x.mean(axis=(2, 3), keepdims=True)
        return r
    kh, kw = p.kernelSize
    sh, sw = p.stride
    t, b, l, r = conv_pads(p, h, w, kh, kw)
    ho, wo = (h + t + b - kh) // sh + 1, (w + l + r - kw) // sw + 1
    fill = -np.inf if p.type == 0 else 0
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), ((t, b), (l, r)))
    out = np.zeros((s_, c, ho, wo))
    for y in range(ho):
        for xx in range(wo):
            win = xp[:, :, y * sh:y * sh + kh, xx * sw:xx * sw + kw]
            if p.type == 0:
                out[:, :, y, xx] = win.max(axis=(2, 3))
            else:
                n = ones[y * sh:y * sh + kh, xx * sw:xx * sw + kw].sum() if p.avgPoolExcludePadding else kh * kw
                out[:, :, y, xx] = win.sum(axis=(2, 3)) / n
    return out


def run_activation(a, x):
    k = a.WhichOneof("NonlinearityType")
    if k == "linear":
        return a.linear.alpha * x + a.linear.beta
    if k == "ReLU":
        return np.maximum(x, 0)
    if k == "leakyReLU":
        return np.where(x >= 0, x, a.leakyReLU.alpha * x)
    if k == "thresholdedReLU":
        return np.where(x >= a.thresholdedReLU.alpha, x, 0)
    if k == "PReLU":
        al = weights(a.PReLU.alpha, x.shape[1]).reshape(1, -1, 1, 1)
        return np.where(x >= 0, x, al * x)
    if k == "tanh":
        return np.tanh(x)
    if k == "scaledTanh":
        return a.scaledTanh.alpha * np.tanh(a.scaledTanh.beta * x)
    if k == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if k == "sigmoidHard":
        return np.clip(a.sigmoidHard.alpha * x + a.sigmoidHard.beta, 0, 1)
    if k == "ELU":
        return np.where(x >= 0, x, a.ELU.alpha * (np.exp(x) - 1))
    if k == "softsign":
        return x / (1 + np.abs(x))
    if k == "softplus":
        return np.logaddexp(0, x)
    if k == "parametricSoftplus":
        c = x.shape[1]
        al = weights(a.parametricSoftplus.alpha, c).reshape(1, -1, 1, 1)
        be = weights(a.parametricSoftplus.beta, c).reshape(1, -1, 1, 1)
        return al * np.logaddexp(0, be * x)
    raise NotImplementedError("activation " + str(k))


def bilinear(x, ys, xs):
    """Samples x [S, C, H, W] at fractional rows ys and columns xs (clamped)."""
    h, w = x.shape[2], x.shape[3]
    ys = np.clip(ys, 0, h - 1)
    xs = np.clip(xs, 0, w - 1)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    a = x[:, :, y0][:, :, :, x0]
    b = x[:, :, y0][:, :, :, x1]
    c = x[:, :, y1][:, :, :, x0]
    d = x[:, :, y1][:, :, :, x1]
    return a * (1 - fy) * (1 - fx) + b * (1 - fy) * fx + c * fy * (1 - fx) + d * fy * fx


def grid(mode, n_in, n_out):
    if mode == 0:  # STRICT_ALIGN_ENDPOINTS
        return np.linspace(0, n_in - 1, n_out)
    if mode == 1:  # ALIGN_ENDPOINTS
        return np.array([(n_in - 1) / 2.0]) if n_out == 1 else np.linspace(0, n_in - 1, n_out)
    if mode == 2:  # UPSAMPLE_MODE
        return np.minimum(n_in - 1, np.linspace(0, n_in - n_in / n_out, n_out))
    spacing = max(1, n_in - 1) / n_out  # ROI_ALIGN_MODE
    return np.minimum(n_in - 1, np.linspace(0.5 * spacing, 0.5 * spacing + (n_out - 1) * spacing, n_out))


def run_upsample(p, x):
    sh, sw = p.scalingFactor
    h, w = x.shape[2], x.shape[3]
    if p.mode == 0:
        return np.repeat(np.repeat(x, sh, axis=2), sw, axis=3)
    ho, wo = h * sh, w * sw
    if p.linearUpsampleMode == 0:
        ys, xs = np.arange(ho) / sh, np.arange(wo) / sw
    elif p.linearUpsampleMode == 1:
        ys = np.arange(ho) * ((h - 1) / max(ho - 1, 1))
        xs = np.arange(wo) * ((w - 1) / max(wo - 1, 1))
    else:
        ys, xs = (np.arange(ho) + 0.5) / sh - 0.5, (np.arange(wo) + 0.5) / sw - 0.5
    return bilinear(x, ys, xs)


def run_unary(p, x):
    z = p.scale * x + p.shift
    t = p.type
    if t == 0:
        return np.sqrt(z)
    if t == 1:
        return 1 / np.sqrt(z + p.epsilon)
    if t == 2:
        return 1 / (z + p.epsilon)
    if t == 3:
        return np.power(z, p.alpha)
    if t == 4:
        return np.exp(z)
    if t == 5:
        return np.log(z + p.epsilon)
    if t == 6:
        return np.abs(z)
    if t == 7:
        return np.maximum(z, p.alpha)
    raise NotImplementedError("unary %d" % t)


def run_reshape(target, mode, x):
    target = list(target)
    if len(target) == 3:
        target = [x.shape[0]] + target
    if mode == 0:
        return x.reshape(target)
    s_, c, h, w = target
    return x.transpose(0, 2, 3, 1).reshape(s_, h, w, c).transpose(0, 3, 1, 2)


def run_layer(layer, ins):
    k = layer.WhichOneof("layer")
    p = getattr(layer, k)
    x = ins[0] if ins else None
    if k == "loadConstant":
        shape = list(p.shape)
        return weights(p.data, int(np.prod(shape))).reshape([1] + shape)
    if k == "convolution":
        return run_conv(p, x)
    if k == "pooling":
        return run_pool(p, x)
    if k == "activation":
        return run_activation(p, x)
    if k == "innerProduct":
        flat = x.reshape(x.shape[0], -1)
        W = weights(p.weights, p.inputChannels * p.outputChannels).reshape(p.outputChannels, p.inputChannels)
        y = flat @ W.T
        if p.hasBias:
            y = y + weights(p.bias, p.outputChannels)
        return y.reshape(x.shape[0], p.outputChannels, 1, 1)
    if k == "batchnorm":
        c = p.channels
        g, b, m, v = (weights(w, c).reshape(1, c, 1, 1) for w in (p.gamma, p.beta, p.mean, p.variance))
        return g * (x - m) / np.sqrt(v + p.epsilon) + b
    if k == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if k == "padding":
        a = p.paddingAmounts.borderAmounts
        pads = ((0, 0), (0, 0), (a[0].startEdgeSize, a[0].endEdgeSize), (a[1].startEdgeSize, a[1].endEdgeSize))
        t = p.WhichOneof("PaddingType")
        if t == "constant":
            return np.pad(x, pads, constant_values=p.constant.value)
        return np.pad(x, pads, mode="reflect" if t == "reflection" else "edge")
    if k == "crop":
        a = p.cropAmounts.borderAmounts
        h, w = x.shape[2], x.shape[3]
        return x[:, :, a[0].startEdgeSize:h - a[0].endEdgeSize, a[1].startEdgeSize:w - a[1].endEdgeSize]
    if k == "upsample":
        return run_upsample(p, x)
    if k == "resizeBilinear":
        ho, wo = p.targetSize
        mode = p.mode.samplingMethod if p.HasField("mode") else 0
        return bilinear(x, grid(mode, x.shape[2], ho), grid(mode, x.shape[3], wo))
    if k == "unary":
        return run_unary(p, x)
    if k in ("add", "multiply"):
        if len(ins) == 1:
            return x + p.alpha if k == "add" else x * p.alpha
        r = ins[0]
        for y in ins[1:]:
            r = r + y if k == "add" else r * y
        return r
    if k == "average":
        return sum(ins) / len(ins)
    if k == "max":
        return np.maximum.reduce(ins)
    if k == "min":
        return np.minimum.reduce(ins)
    if k == "concat":
        return np.concatenate(ins, axis=0 if p.sequenceConcat else 1)
    if k == "flatten":
        y = x.reshape(x.shape[0], -1) if p.mode == 0 else x.transpose(0, 2, 3, 1).reshape(x.shape[0], -1)
        return y.reshape(x.shape[0], -1, 1, 1)
    if k == "reshape":
        return run_reshape(p.targetShape, p.mode, x)
    if k == "permute":
        return x.transpose(list(p.axis) or [0, 1, 2, 3])
    if k == "sequenceRepeat":
        return np.tile(x, (p.nRepetitions, 1, 1, 1))
    raise NotImplementedError("layer type " + k)


def nn_of(spec):
    return getattr(spec, spec.WhichOneof("Type"))


def run_spec(spec, feeds):
    """Runs a classic neural network on feeds {name: array in the feature's Core ML shape}."""
    nn = nn_of(spec)
    blobs = {}
    for f in spec.description.input:
        if f.name not in feeds and f.type.isOptional and f.type.WhichOneof("Type") == "multiArrayType":
            feeds[f.name] = np.zeros(list(f.type.multiArrayType.shape))  # optional state inputs default to 0
        a = np.asarray(feeds[f.name], dtype=np.float64)
        if f.type.WhichOneof("Type") == "imageType":
            pre = [p for p in nn.preprocessing if p.featureName in (f.name, "")]
            if pre and pre[0].WhichOneof("preprocessor") == "scaler":
                s = pre[0].scaler
                cs = f.type.imageType.colorSpace
                bias = {10: [s.grayBias], 20: [s.redBias, s.greenBias, s.blueBias], 30: [s.blueBias, s.greenBias, s.redBias]}[cs]
                a = s.channelScale * a + np.array(bias).reshape(-1, 1, 1)
        if a.ndim == 1:
            a = a.reshape(1, -1, 1, 1)
        elif a.ndim == 3:
            a = a[None]
        elif a.ndim == 5:
            a = a[:, 0]
        blobs[f.name] = a
    for layer in nn.layers:
        out = run_layer(layer, [blobs[i] for i in layer.input])
        blobs[layer.output[0]] = out
    return blobs


# ---------------------------------------------------------------------------------------------
# (a) load + validator rules + spec version


ND_LAYERS = {"clip", "gelu", "concatND", "softmaxND", "transpose", "reshapeStatic", "copy"}


def conv_weight_count(p):
    kh, kw = list(p.kernelSize) or [3, 3]
    n = p.outputChannels * p.kernelChannels * kh * kw
    return n // (p.nGroups or 1) if p.isDeconvolution else n


def check_weight(where, wp, count, problems, expected_channels=None):
    kinds = storage(wp)
    if len(kinds) != 1:
        problems.append("%s: %d weight fields set (%s)" % (where, len(kinds), kinds))
        return
    if kinds[0] == "float32" and count is not None and len(wp.floatValue) != count:
        problems.append("%s: %d floats, expected %d" % (where, len(wp.floatValue), count))
    if kinds[0] == "float16" and count is not None and len(wp.float16Value) != 2 * count:
        problems.append("%s: %d fp16 bytes, expected %d" % (where, len(wp.float16Value), 2 * count))
    if kinds[0] == "quantized":
        q = wp.quantization
        n = q.numberOfBits
        if not 1 <= n <= 8:
            problems.append("%s: numberOfBits %d" % (where, n))
        if count is not None and len(wp.rawValue) < (n * count + 7) // 8:
            problems.append("%s: rawValue %d bytes < ceil(%d·%d/8)" % (where, len(wp.rawValue), n, count))
        t = q.WhichOneof("QuantizationType")
        if t == "lookupTableQuantization" and len(q.lookupTableQuantization.floatValue) != 1 << n:
            problems.append("%s: LUT of %d entries for %d bits" % (where, len(q.lookupTableQuantization.floatValue), n))
        if t == "linearQuantization":
            s, b = len(q.linearQuantization.scale), len(q.linearQuantization.bias)
            if s != 1 and expected_channels is not None and s != expected_channels:
                problems.append("%s: %d scales, expected 1 or %d" % (where, s, expected_channels))
            if b not in (0, s):
                problems.append("%s: %d biases for %d scales" % (where, b, s))
        if t is None:
            problems.append("%s: rawValue without quantization parameters" % where)


# NeuralNetwork layers of iOS 14 (specification 5); every layer field from 600 on is iOS 13+ (4).
IOS14_LAYERS = {"oneHot", "cumSum", "clampedReLU", "argSort", "pooling3d", "globalPooling3d", "sliceBySize", "convolution3d"}


def required_version(spec):
    need = [(1, "base")]
    nn = nn_of(spec)
    if nn.arrayInputShapeMapping == 1:
        need.append((4, "EXACT_ARRAY_MAPPING"))
    for layer in nn.layers:
        k = layer.WhichOneof("layer")
        if layer.DESCRIPTOR.fields_by_name[k].number >= 600:
            need.append((4, "rank-N layer %s %s" % (k, layer.name)))
        if k in IOS14_LAYERS or (k == "sliceStatic" and any(layer.sliceStatic.squeezeMasks)):
            need.append((5, "iOS 14 layer %s %s" % (k, layer.name)))
        if k == "custom":
            need.append((2, "custom layer " + layer.name))
        if k == "resizeBilinear":
            need.append((3, "resizeBilinear " + layer.name))
        if k in ND_LAYERS:
            need.append((4, k + " " + layer.name))
        p = getattr(layer, k)
        wps = []
        for f in ("weights", "bias", "gamma", "beta", "mean", "variance", "data"):
            fd = p.DESCRIPTOR.fields_by_name.get(f)
            if fd is None:
                continue
            if fd.label == fd.LABEL_REPEATED:
                wps += [("%s[%d]" % (f, i), w) for i, w in enumerate(getattr(p, f))]
            elif p.HasField(f):
                wps.append((f, getattr(p, f)))
        if k == "activation" and p.WhichOneof("NonlinearityType") == "PReLU":
            wps.append(("alpha", p.PReLU.alpha))
        for f, wp in wps:
            if True:
                kinds = storage(wp)
                if "float16" in kinds:
                    need.append((2, "fp16 %s.%s" % (layer.name, f)))
                if "quantized" in kinds:
                    need.append((3, "quantized %s.%s" % (layer.name, f)))
    return max(need)


def check_graph(spec, problems):
    """Every layer input is a model input or an earlier layer's output; blobs are produced once;
    every output feature is produced. EXACT networks: multi-array inputs of rank 1…5."""
    nn = nn_of(spec)
    known = {f.name for f in spec.description.input}
    for layer in nn.layers:
        for i in layer.input:
            if i not in known:
                problems.append("layer %s reads blob %s before any layer writes it" % (layer.name, i))
        for o in layer.output:
            if o in known:
                problems.append("layer %s writes blob %s, which already exists" % (layer.name, o))
            known.add(o)
    for f in spec.description.output:
        if f.type.WhichOneof("Type") != "stringType" and f.name not in known and spec.WhichOneof("Type") == "neuralNetwork":
            problems.append("output %s is not produced by any layer" % f.name)
    if nn.arrayInputShapeMapping == 1:
        for f in spec.description.input:
            if f.type.WhichOneof("Type") == "multiArrayType" and not 1 <= len(f.type.multiArrayType.shape) <= 5:
                problems.append("EXACT input %s has rank %d" % (f.name, len(f.type.multiArrayType.shape)))


def check_spec(spec):
    problems = []
    nn = nn_of(spec)
    check_graph(spec, problems)
    for layer in nn.layers:
        k = layer.WhichOneof("layer")
        p = getattr(layer, k)
        if k == "convolution":
            check_weight(layer.name + ".weights", p.weights, conv_weight_count(p), problems, p.outputChannels)
            if p.hasBias:
                check_weight(layer.name + ".bias", p.bias, p.outputChannels, problems, 1)
                if ("float16" in storage(p.weights)) != ("float16" in storage(p.bias)):
                    problems.append("%s: fp16 weights need an fp16 bias and fp32 weights an fp32 bias" % layer.name)
        elif k == "innerProduct":
            check_weight(layer.name + ".weights", p.weights, p.inputChannels * p.outputChannels, problems, p.outputChannels)
            if p.hasBias:
                check_weight(layer.name + ".bias", p.bias, p.outputChannels, problems)
                if ("float16" in storage(p.weights)) != ("float16" in storage(p.bias)):
                    problems.append("%s: fp16 weights need an fp16 bias and fp32 weights an fp32 bias" % layer.name)
        elif k == "batchnorm":
            for f in ("gamma", "beta", "mean", "variance"):
                check_weight("%s.%s" % (layer.name, f), getattr(p, f), p.channels, problems, p.channels)
    version, why = required_version(spec)
    if spec.specificationVersion < version:
        problems.append("specificationVersion %d but %s needs %d" % (spec.specificationVersion, why, version))
    elif spec.specificationVersion > version and spec.specificationVersion > 1:
        note = "specificationVersion %d above the %d its features need (%s)" % (spec.specificationVersion, version, why)
        return problems, note
    return problems, None


def cmd_load(d):
    coremltools = ct()
    files = sorted(glob.glob(os.path.join(d, "*.mlmodel")))
    if not files:
        print("load: no .mlmodel in %s (run the Swift tests with MLCONV_EXPORT_DIR=%s)" % (d, d))
        return False
    ok = True
    ran = 0
    for f in files:
        name = os.path.basename(f)[:-len(".mlmodel")]
        try:
            spec = coremltools.utils.load_spec(f)
        except Exception as e:  # noqa: BLE001
            print("FAIL %s: load_spec: %s" % (name, e))
            ok = False
            continue
        problems, note = check_spec(spec)
        extra = ""
        ins = sorted(glob.glob(os.path.join(d, name + ".input_*.npy")))
        outs = sorted(glob.glob(os.path.join(d, name + ".output_*.npy")))
        try:
            coremltools.models.MLModel(f, skip_model_load=True)
        except Exception as e:  # noqa: BLE001
            problems.append("coremltools.models.MLModel(skip_model_load=True) refused it: %s" % e)
        if ins and outs and nn_of(spec).arrayInputShapeMapping == 1:
            extra = ", NumPy run skipped (EXACT_ARRAY_MAPPING network: the interpreter runs classic layers only)"
        elif ins and outs:
            feeds = {os.path.basename(p)[len(name) + 7:-4]: np.load(p) for p in ins}
            try:
                blobs = run_spec(spec, feeds)
                worst = 0.0
                for p in outs:
                    o = os.path.basename(p)[len(name) + 8:-4]
                    exp = np.load(p).astype(np.float64)
                    got = blobs[o].reshape(exp.shape)
                    worst = max(worst, float(np.abs(got - exp).max() / max(1.0, np.abs(exp).max())))
                extra = ", NumPy run vs IR: max rel err %.2e" % worst
                ran += 1
                if worst > 1e-4:
                    problems.append("NumPy interpreter output differs from the IR by %.3g" % worst)
            except NotImplementedError as e:
                extra = ", NumPy run skipped (%s)" % e
            except Exception as e:  # noqa: BLE001
                problems.append("NumPy interpreter failed: %r" % e)
        status = "ok  " if not problems else "FAIL"
        print("%s %s: spec %d, %s, %d layers%s%s" % (status, name, spec.specificationVersion, spec.WhichOneof("Type"),
                                                  len(nn_of(spec).layers), extra, ("; note: " + note) if note else ""))
        for p in problems:
            print("       - " + p)
        ok = ok and not problems
    print("load: %d model(s) parsed by coremltools %s, %d run with the NumPy interpreter: %s"
          % (len(files), coremltools.__version__, ran, "all checks passed" if ok else "FAILURES"))
    return ok


# ---------------------------------------------------------------------------------------------
# (b) compare with NeuralNetworkBuilder


# Fields where mlconv deliberately differs from what NeuralNetworkBuilder writes, with why.
KNOWN_DIFFERENCES = {
    "specificationVersion: mlconv 3, builder 1":
        "NeuralNetworkBuilder.add_resize_bilinear leaves specificationVersion at 1, but Core ML needs spec 3 (iOS 12) "
        "for resizeBilinear (Utils.cpp hasIOS12NewNeuralNetworkLayers); mlconv writes 3",
    "specificationVersion: mlconv 4, builder 2":
        "the test asks for CoreMLExportOptions(minimumSpecificationVersion: 4)",
}


def feature_for_builder(f):
    from coremltools.models import datatypes
    t = f.type.WhichOneof("Type")
    if t == "multiArrayType":
        return (f.name, datatypes.Array(*f.type.multiArrayType.shape))
    if t == "imageType":
        c = 1 if f.type.imageType.colorSpace == 10 else 3
        return (f.name, datatypes.Array(c, f.type.imageType.height, f.type.imageType.width))
    if t == "dictionaryType":
        return (f.name, datatypes.Dictionary(str))
    if t == "stringType":
        return (f.name, datatypes.String())
    raise NotImplementedError(t)


def rebuild_layer(b, layer):
    """Adds `layer` to builder b with the builder's own method, from our layer's fields."""
    k = layer.WhichOneof("layer")
    p = getattr(layer, k)
    name, ins, outs = layer.name, list(layer.input), list(layer.output)
    if k == "convolution":
        kh, kw = p.kernelSize
        n = conv_weight_count(p)
        w = weights(p.weights, n)
        if p.isDeconvolution:
            W = w.reshape(p.kernelChannels, p.outputChannels // p.nGroups, kh, kw).transpose(2, 3, 0, 1)
        else:
            W = w.reshape(p.outputChannels, p.kernelChannels, kh, kw).transpose(2, 3, 1, 0)
        border = p.WhichOneof("ConvolutionPaddingType")
        t, bb, l, r = (0, 0, 0, 0)
        if border == "valid" and len(p.valid.paddingAmounts.borderAmounts) == 2:
            a = p.valid.paddingAmounts.borderAmounts
            t, bb, l, r = a[0].startEdgeSize, a[0].endEdgeSize, a[1].startEdgeSize, a[1].endEdgeSize
        b.add_convolution(name, p.kernelChannels, p.outputChannels, kh, kw, p.stride[0], p.stride[1], border, p.nGroups, W,
                          weights(p.bias, p.outputChannels) if p.hasBias else None, p.hasBias, is_deconv=p.isDeconvolution,
                          output_shape=list(p.outputShape) or None, input_name=ins[0], output_name=outs[0],
                          dilation_factors=list(p.dilationFactor), padding_top=t, padding_bottom=bb, padding_left=l, padding_right=r)
    elif k == "innerProduct":
        W = weights(p.weights, p.inputChannels * p.outputChannels).reshape(p.outputChannels, p.inputChannels)
        b.add_inner_product(name, W, weights(p.bias, p.outputChannels) if p.hasBias else None, p.inputChannels, p.outputChannels,
                            p.hasBias, ins[0], outs[0])
    elif k == "batchnorm":
        c = p.channels
        b.add_batchnorm(name, c, *(weights(getattr(p, f), c) for f in ("gamma", "beta", "mean", "variance")),
                        input_name=ins[0], output_name=outs[0], epsilon=p.epsilon)
    elif k == "activation":
        nl = p.WhichOneof("NonlinearityType")
        table = {"linear": ("LINEAR", [p.linear.alpha, p.linear.beta]), "ReLU": ("RELU", None), "tanh": ("TANH", None),
                 "sigmoid": ("SIGMOID", None), "softplus": ("SOFTPLUS", None), "softsign": ("SOFTSIGN", None),
                 "leakyReLU": ("LEAKYRELU", [p.leakyReLU.alpha]), "ELU": ("ELU", p.ELU.alpha),
                 "sigmoidHard": ("SIGMOID_HARD", [p.sigmoidHard.alpha, p.sigmoidHard.beta]),
                 "thresholdedReLU": ("THRESHOLDEDRELU", p.thresholdedReLU.alpha),
                 "PReLU": ("PRELU", weights(p.PReLU.alpha, None) if p.HasField("PReLU") else None)}
        mode, params = table[nl]
        b.add_activation(name, mode, ins[0], outs[0], params)
    elif k == "pooling":
        border = p.WhichOneof("PoolingPaddingType")
        t, bb, l, r = (0, 0, 0, 0)
        if border == "valid" and len(p.valid.paddingAmounts.borderAmounts) == 2:
            a = p.valid.paddingAmounts.borderAmounts
            t, bb, l, r = a[0].startEdgeSize, a[0].endEdgeSize, a[1].startEdgeSize, a[1].endEdgeSize
        b.add_pooling(name, p.kernelSize[0], p.kernelSize[1], p.stride[0], p.stride[1], ["MAX", "AVERAGE", "L2"][p.type],
                      border.upper(), ins[0], outs[0], exclude_pad_area=p.avgPoolExcludePadding, is_global=p.globalPooling,
                      padding_top=t, padding_bottom=bb, padding_left=l, padding_right=r)
    elif k == "padding":
        a = p.paddingAmounts.borderAmounts
        t = p.WhichOneof("PaddingType")
        b.add_padding(name, a[1].startEdgeSize, a[1].endEdgeSize, a[0].startEdgeSize, a[0].endEdgeSize,
                      p.constant.value if t == "constant" else 0, ins[0], outs[0], t)
    elif k == "crop":
        a = p.cropAmounts.borderAmounts
        b.add_crop(name, a[1].startEdgeSize, a[1].endEdgeSize, a[0].startEdgeSize, a[0].endEdgeSize, list(p.offset), ins, outs[0])
    elif k == "upsample":
        b.add_upsample(name, p.scalingFactor[0], p.scalingFactor[1], ins[0], outs[0], ["NN", "BILINEAR"][p.mode],
                       ["DEFAULT", "ALIGN_CORNERS_TRUE", "ALIGN_CORNERS_FALSE"][p.linearUpsampleMode])
    elif k == "resizeBilinear":
        modes = ["STRICT_ALIGN_ENDPOINTS_MODE", "ALIGN_ENDPOINTS_MODE", "UPSAMPLE_MODE", "ROI_ALIGN_MODE"]
        b.add_resize_bilinear(name, ins[0], outs[0], p.targetSize[0], p.targetSize[1], modes[p.mode.samplingMethod])
    elif k == "unary":
        modes = ["sqrt", "rsqrt", "inverse", "power", "exp", "log", "abs", "threshold"]
        b.add_unary(name, ins[0], outs[0], modes[p.type], alpha=p.alpha, shift=p.shift, scale=p.scale, epsilon=p.epsilon)
    elif k in ("add", "multiply", "average", "max", "min"):
        mode = {"add": "ADD", "multiply": "MULTIPLY", "average": "AVE", "max": "MAX", "min": "MIN"}[k]
        b.add_elementwise(name, ins, outs[0], mode, alpha=(p.alpha if len(ins) == 1 else None))
    elif k == "concat":
        b.add_elementwise(name, ins, outs[0], "SEQUENCE_CONCAT" if p.sequenceConcat else "CONCAT")
    elif k == "softmax":
        b.add_softmax(name, ins[0], outs[0])
    elif k == "flatten":
        b.add_flatten(name, p.mode, ins[0], outs[0])
    elif k == "reshape":
        b.add_reshape(name, ins[0], outs[0], tuple(p.targetShape), p.mode)
    elif k == "permute":
        b.add_permute(name, tuple(p.axis), ins[0], outs[0])
    elif k == "sequenceRepeat":
        b.add_sequence_repeat(name, p.nRepetitions, ins[0], outs[0])
    elif k == "custom":
        b.add_custom(name, ins, outs, custom_proto_spec=p)
    elif k == "loadConstant":
        b.add_load_constant(name, outs[0], weights(p.data, int(np.prod(list(p.shape)))), list(p.shape))
    else:
        raise NotImplementedError(k)


def diff(a, b, path=""):
    """Field-by-field differences of two dicts (MessageToDict output)."""
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append("%s.%s: only the builder writes %s" % (path, k, short(b[k])))
            elif k not in b:
                out.append("%s.%s: only mlconv writes %s" % (path, k, short(a[k])))
            else:
                out += diff(a[k], b[k], path + "." + k)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, "%s[%d]" % (path, i))
    elif a != b:
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-6 * max(1, abs(a)):
            return out
        out.append("%s: mlconv %s, builder %s" % (path, short(a), short(b)))
    return out


def short(v):
    s = json.dumps(v)
    return s if len(s) < 80 else s[:77] + "..."


def cmd_compare(d):
    coremltools = ct()
    from coremltools.models.neural_network import NeuralNetworkBuilder
    from google.protobuf.json_format import MessageToDict
    files = sorted(glob.glob(os.path.join(d, "*.mlmodel")))
    ok, compared = True, 0
    for f in files:
        name = os.path.basename(f)[:-len(".mlmodel")]
        spec = coremltools.utils.load_spec(f)
        nn = nn_of(spec)
        if any(storage(getattr(getattr(l, l.WhichOneof("layer")), "weights"))[:1] in (["float16"], ["quantized"])
               for l in nn.layers if l.WhichOneof("layer") in ("convolution", "innerProduct")):
            continue  # compared by `quant`
        is_classifier = spec.WhichOneof("Type") == "neuralNetworkClassifier"
        try:
            ins = [feature_for_builder(x) for x in spec.description.input]
            outs = [feature_for_builder(x) for x in spec.description.output
                    if not (is_classifier and x.name in (spec.description.predictedFeatureName, spec.description.predictedProbabilitiesName))]
            if is_classifier:
                probs = spec.description.predictedProbabilitiesName
                outs = [(probs, None)] + outs
            b = NeuralNetworkBuilder(ins, outs, mode="classifier" if is_classifier else None)
            for layer in nn.layers:
                rebuild_layer(b, layer)
            if is_classifier:
                b.set_class_labels(list(nn.stringClassLabels.vector), spec.description.predictedFeatureName, nn.labelProbabilityLayerName)
            images = [x for x in spec.description.input if x.type.WhichOneof("Type") == "imageType"]
            if images:
                kw = {"image_input_names": [x.name for x in images],
                      "is_bgr": {x.name: x.type.imageType.colorSpace == 30 for x in images}}
                for pp in nn.preprocessing:
                    if pp.WhichOneof("preprocessor") == "scaler":
                        s = pp.scaler
                        kw.update(red_bias=s.redBias, green_bias=s.greenBias, blue_bias=s.blueBias, gray_bias=s.grayBias, image_scale=s.channelScale)
                b.set_pre_processing_parameters(**kw)
                for x in images:
                    tgt = [i for i in b.spec.description.input if i.name == x.name][0]
                    tgt.type.CopyFrom(x.type)
            for x, y in zip(spec.description.output, b.spec.description.output):
                if x.type.WhichOneof("Type") == "imageType" and x.name == y.name:
                    y.type.CopyFrom(x.type)
            for i, x in enumerate(spec.description.input):
                b.spec.description.input[i].shortDescription = x.shortDescription
            for x in spec.description.output:
                for y in b.spec.description.output:
                    if y.name == x.name:
                        y.shortDescription = x.shortDescription
            b.spec.description.metadata.CopyFrom(spec.description.metadata)
        except NotImplementedError as e:
            print("skip %s: %s" % (name, e))
            continue
        built = b.spec
        differences = []
        if built.specificationVersion != spec.specificationVersion:
            differences.append("specificationVersion: mlconv %d, builder %d" % (spec.specificationVersion, built.specificationVersion))
        differences += diff(MessageToDict(spec.description), MessageToDict(built.description), "description")
        ours_nn, their_nn = MessageToDict(nn), MessageToDict(nn_of(built))
        differences += diff({k: v for k, v in ours_nn.items() if k != "layers"}, {k: v for k, v in their_nn.items() if k != "layers"}, "network")
        for lo, lb in zip(ours_nn.get("layers", []), their_nn.get("layers", [])):
            differences += diff(lo, lb, "layer '%s'" % lo.get("name"))
        known = [x for x in differences if any(k in x for k in KNOWN_DIFFERENCES)]
        unknown = [x for x in differences if x not in known]
        compared += 1
        kinds = sorted({l.WhichOneof("layer") for l in nn.layers})
        print("%s %s (%s): %d difference(s)%s" % ("ok  " if not unknown else "DIFF", name, ", ".join(kinds), len(differences),
                                                 " (%d known)" % len(known) if known else ""))
        for x in differences:
            why = [v for k, v in KNOWN_DIFFERENCES.items() if k in x]
            print("       - " + x + (("  [known: %s]" % why[0]) if why else ""))
        ok = ok and not unknown
    print("compare: %d model(s) rebuilt with NeuralNetworkBuilder: %s" % (compared, "identical up to known differences" if ok else "UNEXPECTED DIFFERENCES"))
    return ok and compared > 0


# ---------------------------------------------------------------------------------------------
# (c) quantized weights: coremltools' dequantization vs the IR's values


def quantized_fields(layer):
    """(role, WeightParams, shape, axis) of each quantized weight of a layer."""
    k = layer.WhichOneof("layer")
    p = getattr(layer, k)
    out = []
    if k == "convolution":
        kh, kw = p.kernelSize
        if p.isDeconvolution:
            shape, axis = [p.kernelChannels, p.outputChannels // max(1, p.nGroups), kh, kw], 1
        else:
            shape, axis = [p.outputChannels, p.kernelChannels, kh, kw], 0
        out.append(("weights", p.weights, shape, axis))
        if p.hasBias:
            out.append(("bias", p.bias, [p.outputChannels], 0))
    elif k == "innerProduct":
        out.append(("weights", p.weights, [p.outputChannels, p.inputChannels], 0))
        if p.hasBias:
            out.append(("bias", p.bias, [p.outputChannels], 0))
    elif k == "batchnorm":
        out += [(f, getattr(p, f), [p.channels], 0) for f in ("gamma", "beta", "mean", "variance")]
    return [x for x in out if len(x[1].rawValue)]


def cmd_quant(d):
    """coremltools' dequantization of every quantized weight in DIR equals (1) the IR's values
    where X.expected.json has them and (2) this script's unpacker, which `load` runs against the
    IR's outputs."""
    import contextlib
    import io
    coremltools = ct()
    from coremltools.models.neural_network import quantization_utils as qu
    ok, n = True, 0
    for f in sorted(glob.glob(os.path.join(d, "*.mlmodel"))):
        name = os.path.basename(f)[:-len(".mlmodel")]
        spec = coremltools.utils.load_spec(f)
        layers = [l for l in nn_of(spec).layers if quantized_fields(l)]
        if not layers:
            continue
        jf = os.path.join(d, name + ".expected.json")
        expected = json.load(open(jf)) if os.path.exists(jf) else {}
        worst_ct, worst_ir, count, kinds = 0.0, 0.0, 0, set()
        for l in layers:
            for role, wp, shape, axis in quantized_fields(l):
                q = wp.quantization
                kinds.add("%d-bit %s" % (q.numberOfBits, "LUT" if q.WhichOneof("QuantizationType") == "lookupTableQuantization" else "linear"))
                cnt = int(np.prod(shape))
                # coremltools' own dequantization of this WeightParams (_dequantize_wp, as
                # _dequantize_nn_spec calls it). Its _dequantize_linear needs one scale per
                # channel of `shape[axis]`, so a per-tensor scale is repeated first (same values).
                wp2 = copy.deepcopy(wp)
                lq = wp2.quantization.linearQuantization
                if wp2.quantization.WhichOneof("QuantizationType") == "linearQuantization" and len(lq.scale) == 1:
                    n_ch = shape[axis] if len(shape) > 1 else 1
                    sc, bi = lq.scale[0], (lq.bias[0] if len(lq.bias) else 0.0)
                    del lq.scale[:], lq.bias[:]
                    lq.scale.extend([sc] * n_ch)
                    lq.bias.extend([bi] * n_ch)
                with contextlib.redirect_stdout(io.StringIO()):
                    qu._dequantize_wp(wp2, shape if len(shape) > 1 else [1] + shape, axis)
                theirs = np.array(wp2.floatValue, dtype=np.float64)
                mine = weights(wp, cnt, shape, axis).astype(np.float64)
                scale = max(1.0, float(np.abs(mine).max()))
                worst_ct = max(worst_ct, float(np.abs(theirs - mine).max()) / scale if theirs.shape == mine.shape else float("inf"))
                key = "%s.%s" % (l.name, role)
                if key in expected:
                    want = np.array(expected[key], dtype=np.float64)
                    worst_ir = max(worst_ir, float(np.abs(theirs - want).max()) / scale if theirs.shape == want.shape else float("inf"))
                count += 1
        good = worst_ct <= 1e-6 and worst_ir <= 1e-6
        print("%s %s: %d quantized weight(s) (%s): coremltools dequantization vs script %.2g%s"
              % ("ok  " if good else "FAIL", name, count, ", ".join(sorted(kinds)), worst_ct,
                 (", vs IR values %.2g" % worst_ir) if expected else ""))
        ok = ok and good
        n += count
    print("quant: %d quantized weight(s) dequantized by coremltools: %s" % (n, "all equal" if ok else "FAILURES"))
    return ok and n > 0


# ---------------------------------------------------------------------------------------------
# fixtures: NeuralNetworkBuilder models + NumPy references


def make_fixtures(out):
    coremltools = ct()
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder
    from coremltools.models.neural_network import quantization_utils as qu
    rng = np.random.RandomState(0)

    def r(*shape, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, size=shape).astype(np.float32)

    fixtures = []

    def add(name, builder, feeds, note, tolerance=1e-4, spec=None):
        spec = spec or builder.spec
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        coremltools.utils.save_spec(spec, os.path.join(d, "model.mlmodel"))
        blobs = run_spec(spec, feeds)
        entry = {"name": name, "notes": note, "specificationVersion": spec.specificationVersion,
                 "layers": [l.WhichOneof("layer") for l in nn_of(spec).layers], "tolerance": tolerance,
                 "inputs": [], "outputs": []}
        for f in spec.description.input:
            a = np.asarray(feeds[f.name], dtype=np.float32)
            np.save(os.path.join(d, "input_%s.npy" % f.name), np.ascontiguousarray(a))
            entry["inputs"].append({"name": f.name, "file": "%s/input_%s.npy" % (name, f.name), "shape": list(a.shape),
                                    "image": f.type.WhichOneof("Type") == "imageType"})
        for f in spec.description.output:
            if f.type.WhichOneof("Type") not in ("multiArrayType", "dictionaryType", "imageType"):
                continue
            src = f.name
            if f.type.WhichOneof("Type") == "dictionaryType":
                src = nn_of(spec).labelProbabilityLayerName or nn_of(spec).layers[-1].output[0]
            v = blobs[src].astype(np.float32)
            shape = list(f.type.multiArrayType.shape) if f.type.WhichOneof("Type") == "multiArrayType" else None
            v = v.reshape(shape) if shape else v.reshape(v.shape[1:]) if v.shape[2:] != (1, 1) else v.reshape(-1)
            np.save(os.path.join(d, "output_%s.npy" % f.name), np.ascontiguousarray(v))
            entry["outputs"].append({"name": f.name, "file": "%s/output_%s.npy" % (name, f.name), "shape": list(v.shape)})
        fixtures.append(entry)
        print("fixture %-26s spec %d  %s" % (name, spec.specificationVersion, ", ".join(entry["layers"])))

    A = datatypes.Array
    C, H, W = 3, 6, 6

    def img_builder(out_shape, inputs=None):
        return NeuralNetworkBuilder(inputs or [("x", A(C, H, W))], [("y", A(*out_shape))])

    x = r(C, H, W)

    # Convolutions
    b = img_builder((4, 6, 6))
    b.add_convolution("conv", C, 4, 3, 3, 1, 1, "same", 1, r(3, 3, C, 4), r(4), True, input_name="x", output_name="y")
    add("conv_same", b, {"x": x}, "3x3 same, bias")
    b = img_builder((6, 2, 2))
    b.add_convolution("conv", 1, 6, 3, 3, 2, 2, "valid", 3, r(3, 3, 1, 6), None, False, input_name="x", output_name="y")
    add("conv_grouped_stride2", b, {"x": x}, "depthwise-style groups=3, stride 2, valid")
    b = img_builder((4, 4, 5))
    b.add_convolution("conv", C, 4, 3, 3, 1, 1, "valid", 1, r(3, 3, C, 4), r(4), True, input_name="x", output_name="y",
                      dilation_factors=[2, 1], padding_top=1, padding_bottom=1, padding_left=0, padding_right=1)
    add("conv_dilated_padded", b, {"x": x}, "dilation (2, 1), explicit valid padding amounts")
    b = img_builder((4, 12, 12))
    b.add_convolution("deconv", C, 4, 3, 3, 2, 2, "same", 1, r(3, 3, C, 4), r(4), True, is_deconv=True, output_shape=(12, 12),
                      input_name="x", output_name="y")
    add("deconv_same", b, {"x": x}, "transposed conv 3x3 stride 2 same with outputShape (TF crop convention)")
    b = img_builder((4, 13, 13))
    b.add_convolution("deconv", C, 4, 3, 3, 2, 2, "valid", 1, r(3, 3, C, 4), None, False, is_deconv=True, input_name="x", output_name="y")
    add("deconv_valid", b, {"x": x}, "transposed conv 3x3 stride 2 valid, no outputShape")

    # Dense
    b = NeuralNetworkBuilder([("v", A(8))], [("y", A(5))])
    b.add_inner_product("fc", r(5, 8), r(5), 8, 5, True, "v", "y")
    add("inner_product", b, {"v": r(8)}, "8 → 5 with bias")

    # Normalization
    b = img_builder((C, H, W))
    b.add_batchnorm("bn", C, r(C), r(C), r(C), r(C, lo=0.5, hi=2), input_name="x", output_name="y", epsilon=1e-3)
    add("batchnorm", b, {"x": x}, "inference batchnorm")

    # Activations
    acts = [("relu", "RELU", None), ("leaky_relu", "LEAKYRELU", [0.2]), ("tanh", "TANH", None), ("sigmoid", "SIGMOID", None),
            ("sigmoid_hard", "SIGMOID_HARD", [0.2, 0.5]), ("elu", "ELU", 0.7), ("softsign", "SOFTSIGN", None),
            ("softplus", "SOFTPLUS", None), ("linear", "LINEAR", [1.5, -0.25]), ("thresholded_relu", "THRESHOLDEDRELU", 0.3),
            ("prelu", "PRELU", r(C))]
    for n, mode, params in acts:
        b = img_builder((C, H, W))
        b.add_activation(n, mode, "x", "y", params)
        add("activation_" + n, b, {"x": x * 3}, mode)

    # Pooling
    for n, kind, pad, k, s in [("max_same", "MAX", "SAME", 3, 2), ("avg_same", "AVERAGE", "SAME", 3, 2),
                               ("avg_valid", "AVERAGE", "VALID", 2, 2), ("max_valid", "MAX", "VALID", 3, 1)]:
        ho = -(-H // s) if pad == "SAME" else (H - k) // s + 1
        b = img_builder((C, ho, ho))
        b.add_pooling(n, k, k, s, s, kind, pad, "x", "y", exclude_pad_area=True)
        add("pool_" + n, b, {"x": x}, "%s %dx%d stride %d %s, avgPoolExcludePadding" % (kind, k, k, s, pad))
    for kind in ("MAX", "AVERAGE"):
        b = img_builder((C, 1, 1))
        b.add_pooling("gp", 0, 0, 0, 0, kind, "VALID", "x", "y", is_global=True)
        add("global_pool_" + kind.lower(), b, {"x": x}, "global %s (Keras converter form)" % kind)

    # Spatial
    for t in ("constant", "reflection", "replication"):
        b = img_builder((C, 9, 8))
        b.add_padding("pad", left=1, right=1, top=2, bottom=1, value=0.5, input_name="x", output_name="y", padding_type=t)
        add("padding_" + t, b, {"x": x}, t)
    b = img_builder((C, 3, 4))
    b.add_crop("crop", 1, 1, 2, 1, [0, 0], ["x"], "y")
    add("crop", b, {"x": x}, "crop amounts")
    b = img_builder((C, 12, 18))
    b.add_upsample("up", 2, 3, "x", "y", "NN")
    add("upsample_nn", b, {"x": x}, "nearest 2x3")
    b = img_builder((C, 12, 12))
    b.add_upsample("up", 2, 2, "x", "y", "BILINEAR")
    add("upsample_bilinear", b, {"x": x}, "bilinear, DEFAULT linear mode (x_in = x_out / s)")
    b = img_builder((C, 12, 12))
    b.add_resize_bilinear("rb", "x", "y", 12, 12, "STRICT_ALIGN_ENDPOINTS_MODE")
    add("resize_bilinear_align_corners", b, {"x": x}, "spec 3, align corners")

    # Unary
    b = img_builder((C, H, W))
    b.add_unary("thr", "x", "y", "threshold", alpha=-0.25)
    add("unary_threshold", b, {"x": x}, "max(x, -0.25)")
    b = img_builder((C, H, W))
    b.add_unary("exp", "x", "y", "exp")
    add("unary_exp", b, {"x": x}, "exp")
    b = img_builder((C, H, W))
    b.add_unary("abs", "x", "y", "abs")
    add("unary_abs", b, {"x": x}, "abs (exact GELU lowering)")
    b = img_builder((C, H, W))
    b.add_unary("inv", "x", "y", "inverse", shift=1.0, scale=0.25, epsilon=0.0)
    add("unary_inverse", b, {"x": np.abs(x)}, "1/(0.25x + 1) (exact GELU lowering)")
    b = img_builder((C, H, W))
    b.add_load_constant("k", "k_out", r(C, H, W), [C, H, W])
    b.add_elementwise("mul", ["x", "k_out"], "y", "MULTIPLY")
    add("load_constant_multiply", b, {"x": x}, "loadConstant [C,H,W] times the input (full-alpha PReLU lowering)")
    b = NeuralNetworkBuilder([("a", A(C, H, W)), ("b", A(C, 1, 1))], [("y", A(C, H, W))])
    b.add_elementwise("add", ["a", "b"], "y", "ADD")
    add("add_broadcast", b, {"a": r(C, H, W), "b": r(C, 1, 1)}, "[C,H,W] + [C,1,1]")

    # Elementwise / merge
    two = [("a", A(C, H, W)), ("b", A(C, H, W))]
    for n, mode in [("add", "ADD"), ("multiply", "MULTIPLY"), ("average", "AVE"), ("max", "MAX"), ("min", "MIN")]:
        b = NeuralNetworkBuilder(two, [("y", A(C, H, W))])
        b.add_elementwise(n, ["a", "b"], "y", mode)
        add("elementwise_" + n, b, {"a": r(C, H, W), "b": r(C, H, W)}, mode)
    b = NeuralNetworkBuilder(two, [("y", A(2 * C, H, W))])
    b.add_elementwise("cat", ["a", "b"], "y", "CONCAT")
    add("concat", b, {"a": r(C, H, W), "b": r(C, H, W)}, "channel concat")
    b = NeuralNetworkBuilder([("v", A(7))], [("y", A(7))])
    b.add_softmax("sm", "v", "y")
    add("softmax", b, {"v": r(7) * 3}, "softmax over C")

    # Shape
    b = NeuralNetworkBuilder([("x", A(C, H, W))], [("y", A(C * H * W))])
    b.add_flatten("flat", 1, "x", "y")
    add("flatten_channel_last", b, {"x": x}, "Keras Flatten (HWC order)")
    b = NeuralNetworkBuilder([("x", A(C, H, W))], [("y", A(2, 9, 6))])
    b.add_reshape("rs", "x", "y", (2, 9, 6), 1)
    add("reshape_channel_last", b, {"x": x}, "CHANNEL_LAST reshape")
    b = NeuralNetworkBuilder([("x", A(C, 4, 5))], [("y", A(5, C, 4))])
    b.add_permute("perm", (0, 3, 1, 2), "x", "y")
    add("permute", b, {"x": r(C, 4, 5)}, "[Seq,C,H,W] axes (0,3,1,2)")

    # Compressed weights (coremltools' own quantizer on a float model)
    def conv_model():
        b = img_builder((8, 6, 6))
        b.add_convolution("conv", C, 8, 3, 3, 1, 1, "same", 1, r(3, 3, C, 8), r(8), True, input_name="x", output_name="y")
        return b

    from coremltools.models import model as ct_model
    lin, lut = ct_model._QUANTIZATION_MODE_LINEAR_QUANTIZATION, ct_model._QUANTIZATION_MODE_LOOKUP_TABLE_LINEAR
    for n, bits, mode in [("fp16", 16, lin), ("linear_8bit", 8, lin), ("linear_4bit", 4, lin), ("lut_2bit", 2, lut)]:
        spec = copy.deepcopy(conv_model().spec)
        spec = qu._quantize_spec_weights(spec, bits, mode)
        add("conv_" + n, None, {"x": x}, "%s (coremltools _quantize_spec_weights %d-bit %s)" % (n, bits, mode), spec=spec)

    # Classifier + image input with preprocessing
    b = NeuralNetworkBuilder([("v", A(6))], [("probs", None)], mode="classifier")
    b.add_inner_product("fc", r(3, 6), r(3), 6, 3, True, "v", "logits")
    b.add_softmax("sm", "logits", "probs")
    b.set_class_labels(["cat", "dog", "bird"], "classLabel", "probs")
    add("classifier", b, {"v": r(6)}, "neuralNetworkClassifier with string labels")
    b = NeuralNetworkBuilder([("image", A(3, H, W))], [("y", A(2, H, W))])
    b.add_convolution("conv", 3, 2, 1, 1, 1, 1, "valid", 1, r(1, 1, 3, 2), None, False, input_name="image", output_name="y")
    b.set_pre_processing_parameters(image_input_names=["image"], is_bgr=True, red_bias=-1.0, green_bias=-0.5, blue_bias=-0.25,
                                    image_scale=1 / 127.5)
    add("image_preprocessing_bgr", b, {"image": np.floor(rng.uniform(0, 256, size=(3, H, W))).astype(np.float32)},
        "BGR image input with NeuralNetworkImageScaler")

    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump({"generator": "Scripts/check_mlmodel_export.py fixtures", "coremltools": coremltools.__version__,
                   "numpy": np.__version__, "layout": "arrays in Core ML layout: [C, H, W] or [D]; images [C, H, W] 0-255",
                   "fixtures": fixtures}, fh, indent=1)
    print("fixtures: %d written to %s" % (len(fixtures), out))
    return True


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "fixtures":
        return 0 if make_fixtures(argv[2] if len(argv) > 2 else os.path.join(ROOT, "Fixtures", "coreml")) else 1
    if len(argv) < 3:
        print("usage: %s %s DIR" % (argv[0], cmd))
        return 2
    d = argv[2]
    steps = {"load": [cmd_load], "compare": [cmd_compare], "quant": [cmd_quant], "all": [cmd_load, cmd_compare, cmd_quant]}[cmd]
    ok = True
    for s in steps:
        print("== %s" % s.__name__[4:])
        ok = s(d) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
