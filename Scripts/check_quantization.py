#!/usr/bin/env python3
"""Peer check (not a test): mlconv's weight quantization against coremltools 7.2.

What it checks, on a few random tensors saved as .npy:
  * linear 1…8-bit per channel and linear_symmetric 8-bit: the packed bytes, scales and biases
    must be identical to coremltools' NeuralNetwork path (`_quantize_wp_field` on a real
    WeightParams protobuf: floatValue → float64 maths → float32 scale/bias → rawValue bytes);
  * k-means LUT (1, 2, 4, 8 bits): our SQNR (exact 1-D k-means) must be ≥ coremltools' sklearn
    k-means (the NN path) and equal (within rounding) to coremltools' vendored exact `kmeans1d`.

Setup, once (its own venv; coremltools 7.2 needs protobuf 3.20 and numpy < 2):
    python3 -m venv /opt/ctvenv
    /opt/ctvenv/bin/pip install coremltools==7.2 protobuf==3.20.3 "numpy<2" scikit-learn==1.5.1

Run from anywhere:
    /opt/ctvenv/bin/python Scripts/check_quantization.py            # writes /tmp/mlconv-quant-check
    /opt/ctvenv/bin/python Scripts/check_quantization.py --no-swift # if you ran the Swift side yourself:
        MLCONV_QUANT_CHECK_DIR=/tmp/mlconv-quant-check swift test --filter PeerCheckExportTests

The Swift side is `Tests/MLPassesTests/PeerCheckExportTests.swift`, skipped unless
MLCONV_QUANT_CHECK_DIR is set. Exit status 0 when everything matches, 1 otherwise.

Sub-command `models` (issue 5 acceptance, on real model weights instead of random tensors):
    /opt/ctvenv/bin/python Scripts/check_quantization.py models [--mlconv PATH] [FILES…]

FILES are .mlmodel files, or Keras .h5 files (exported first with `mlconv keras`). Default: the
book's FastStyleTransferVanGoghStarryNight.mlmodel (../shared/models, when present) plus the Keras
fixtures fer_cnn_k2, tiny_yolo_k2, style_transfer_k2, sketch_cnn_k2 and small_unet_k2 exported by
mlconv. For each model and mode (linear 8/4/2/1, linear-symmetric 8, kmeans 8/4/2/1) it runs
`mlconv quantize`, reads the original and the output with coremltools' protobuf, and for every
WeightParams that mlconv quantized takes the original float tensor, quantizes it with coremltools'
own per-tensor code on the layer's canonical shape and axis (`_quantize_wp_field`, as
`_quantize_nn_spec` calls it; k-means = sklearn, plus the vendored exact kmeans1d for reference),
dequantizes both and compares: linear modes must be byte-identical (rawValue, scale, bias), k-means
SQNR must be ≥ coremltools' − 1e-6 dB. Without --mlconv it builds mlconv (swift build -c release).
See docs/QUANTIZATION.md.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_tensors(rng):
    """name → (float32 array in the canonical layout, per-channel axis or None, k-means bit widths)."""
    t = {}
    t["conv"] = ((rng.standard_normal((32, 16, 3, 3)) * 0.05).astype(np.float32), 0, [1, 2, 4, 8])
    t["dense"] = (rng.uniform(-1, 1, (64, 256)).astype(np.float32), 0, [1, 2, 4, 8])
    t["deconv"] = (rng.laplace(0, 0.1, (16, 8, 4, 4)).astype(np.float32), 1, [2, 4, 8])
    t["bias"] = (rng.standard_normal(64).astype(np.float32), None, [2, 4])
    # fp16-valued weights: many repeated values (the unique-value reduction, coremltools' kmeans1d case).
    t["fp16grid"] = ((rng.standard_normal(20000) * 0.05).astype(np.float16).astype(np.float32), None, [4, 8])
    # Multiples of 1/8 with a channel range of 7/8: many exact .5 ties in the linear rounding.
    t["ties"] = ((rng.integers(0, 8, (8, 40)) / 8.0).astype(np.float32), 0, [2])
    # One constant channel: scale 0 → inv_scale 0 guard.
    c = rng.standard_normal((4, 50)).astype(np.float32)
    c[2, :] = 0.375
    t["constchan"] = (c, 0, [2])
    t["large"] = ((rng.standard_normal((256, 512)) * 0.02).astype(np.float32), 0, [8])
    return t


def coremltools_linear(w, nbits, axis, symmetric):
    from coremltools.proto import NeuralNetwork_pb2
    from coremltools.models.neural_network import quantization_utils as qu
    wp = NeuralNetwork_pb2.WeightParams()
    wp.floatValue.extend(w.flatten().tolist())
    mode = "linear_symmetric" if symmetric else "linear"
    qm = {"linear": qu._QUANTIZATION_MODE_LINEAR_QUANTIZATION,
          "linear_symmetric": qu._QUANTIZATION_MODE_LINEAR_SYMMETRIC}[mode]
    qu._quantize_wp_field(wp, nbits, qm, shape=w.shape, axis=axis if axis is not None else 0)
    lq = wp.quantization.linearQuantization
    return bytes(wp.rawValue), np.array(lq.scale, dtype=np.float32), np.array(lq.bias, dtype=np.float32)


def unpack(raw, nbits, count):
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8))[: count * nbits].reshape(count, nbits)
    return (bits * (1 << np.arange(nbits - 1, -1, -1))).sum(axis=1)


def sqnr(w, wq):
    w = w.astype(np.float64).ravel()
    e = np.sum((w - wq.astype(np.float64).ravel()) ** 2)
    return float("inf") if e == 0 else 10 * np.log10(np.sum(w * w) / e)


# ----------------------------------------------------------------------------------------------
# `models` sub-command: mlconv quantize on real models vs coremltools' per-tensor code
# ----------------------------------------------------------------------------------------------

MODEL_MODES = [("linear", 8), ("linear", 4), ("linear", 2), ("linear", 1), ("linear-symmetric", 8),
               ("kmeans", 8), ("kmeans", 4), ("kmeans", 2), ("kmeans", 1)]
DEFAULT_KERAS_FIXTURES = ["fer_cnn_k2", "tiny_yolo_k2", "style_transfer_k2", "sketch_cnn_k2", "small_unet_k2"]
DEFAULT_REAL_MODEL = "FastStyleTransferVanGoghStarryNight.mlmodel"
KMEANS_TOL_DB = 1e-6       # ours ≥ coremltools (sklearn, the NN path) − this
KMEANS1D_TOL_DB = 1e-3     # ours ≥ coremltools' vendored exact kmeans1d − this (both are optimal)
DEQUANT_CROSSCHECK_MAX = 20000  # tensors up to this size are also dequantized with coremltools' _dequantize_wp
WEIGHT_PARAMS = "CoreML.Specification.WeightParams"


def _shared_models_dir():
    return os.environ.get("MLCONV_SHARED_MODELS", os.path.join(os.path.dirname(ROOT), "shared", "models"))


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-3000:]}{r.stderr[-3000:]}\n")
        sys.exit(2)
    return r


def _resolve_mlconv(path):
    if path:
        return os.path.abspath(path)
    print("building mlconv: swift build -c release --product mlconv", flush=True)
    _run(["swift", "build", "-c", "release", "--product", "mlconv", "--package-path", ROOT])
    bin_dir = _run(["swift", "build", "-c", "release", "--show-bin-path", "--package-path", ROOT]).stdout.strip()
    return os.path.join(bin_dir, "mlconv")


def _nn_of(spec):
    kind = spec.WhichOneof("Type")
    if kind not in ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor"):
        raise ValueError(f"not a neural network model (Type = {kind})")
    return getattr(spec, kind)


def _iter_layers(nn):
    """Every layer, including those inside branch / loop sub-networks."""
    for layer in nn.layers:
        yield layer
        t = layer.WhichOneof("layer")
        if t == "branch":
            yield from _iter_layers(layer.branch.ifBranch)
            yield from _iter_layers(layer.branch.elseBranch)
        elif t == "loop":
            yield from _iter_layers(layer.loop.conditionNetwork)
            yield from _iter_layers(layer.loop.bodyNetwork)


def _weight_params(layer):
    """(path, WeightParams) for every set WeightParams of a layer; path = (layerType, field, …),
    repeated fields as 'name[i]'. Sub-networks of branch / loop are left to `_iter_layers`."""
    t = layer.WhichOneof("layer")
    if t is None or t in ("branch", "loop"):
        return []
    out = []

    def visit(msg, path):
        for fd, value in msg.ListFields():
            if fd.message_type is None:
                continue
            items = list(enumerate(value)) if fd.label == fd.LABEL_REPEATED else [(None, value)]
            for i, v in items:
                p = path + (fd.name if i is None else f"{fd.name}[{i}]",)
                if v.DESCRIPTOR.full_name == WEIGHT_PARAMS:
                    out.append((p, v))
                else:
                    visit(v, p)

    visit(getattr(layer, t), (t,))
    return out


def _lookup(layer, path):
    msg = layer
    for tok in path:
        if tok.endswith("]"):
            name, idx = tok[:-1].split("[")
            seq = getattr(msg, name)
            if int(idx) >= len(seq):
                return None
            msg = seq[int(idx)]
        else:
            if msg.DESCRIPTOR.fields_by_name[tok].label != 3 and not msg.HasField(tok):
                return None
            msg = getattr(msg, tok)
    return msg


def _canonical(layer, path, n):
    """(shape, axis, coremltools_selects) of a WeightParams, exactly as coremltools'
    `_quantize_nn_spec` passes them to `_quantize_wp_field` (axis 1 only for deconvolution
    weights). Fields `_quantize_nn_spec` never touches (e.g. activation.PReLU.alpha) are
    treated as one flat per-tensor vector (n,) and flagged coremltools_selects = False."""
    t = path[0]
    field = path[-1]
    p = getattr(layer, t)
    shape, axis, selects = None, 0, True
    if t == "convolution":
        oc, kc, g = p.outputChannels, p.kernelChannels, max(p.nGroups, 1)
        kh, kw = list(p.kernelSize)[:2] if len(p.kernelSize) >= 2 else (3, 3)  # Core ML default 3×3
        if field == "weights":
            if p.isDeconvolution:
                shape, axis = (kc, oc // g, kh, kw), 1
            else:
                shape = (oc, kc, kh, kw)
        elif field == "bias":
            shape = (oc,)
    elif t == "innerProduct":
        shape = {"weights": (p.outputChannels, p.inputChannels), "bias": (p.outputChannels,)}.get(field)
    elif t == "batchedMatmul":
        x1, x2 = p.weightMatrixFirstDimension, p.weightMatrixSecondDimension
        shape = {"weights": (x2, x1), "bias": (x2,)}.get(field)
    elif t == "embedding":
        shape = {"weights": (p.outputChannels, p.inputDim), "bias": (p.outputChannels,)}.get(field)
    elif t == "embeddingND":
        shape = {"weights": (p.embeddingSize, p.vocabSize), "bias": (p.embeddingSize,)}.get(field)
    elif t == "batchnorm":
        shape = (p.channels,)
    elif t == "scale":
        shape = (int(np.prod(p.shapeScale)),) if field == "scale" else (int(np.prod(p.shapeBias)),)
    elif t in ("bias", "loadConstant", "loadConstantND"):
        shape = (int(np.prod(p.shape)),)
    elif t in ("simpleRecurrent", "gru", "uniDirectionalLSTM", "biDirectionalLSTM"):
        i_size, o_size = p.inputVectorSize, p.outputVectorSize
        if field.endswith("WeightMatrix") or field == "weightMatrix":
            shape = (o_size, i_size)
        elif field.endswith("RecursionMatrix") or field == "recursionMatrix":
            shape = (o_size, o_size)
        else:
            shape = (o_size,)
    else:
        selects = False
    if shape is None:
        if n is None:
            raise ValueError(f"cannot tell the element count of {'.'.join(path)} (stored quantized in the original)")
        shape, selects = (n,), False
    if n is not None and int(np.prod(shape)) != n:
        raise ValueError(f"canonical shape {shape} of {'.'.join(path)} does not hold {n} values")
    return tuple(int(d) for d in shape), axis, selects


def _stored_count(wp):
    """Element count of a WeightParams stored as float32 / float16, or None when quantized."""
    if len(wp.floatValue):
        return len(wp.floatValue)
    if len(wp.float16Value):
        return len(wp.float16Value) // 2
    if wp.HasField("quantization"):
        return None
    return len(wp.rawValue) // 4


def _float_values(wp, shape, axis):
    """The float32 values of an original WeightParams (floatValue, float16Value, or quantized)."""
    if len(wp.floatValue):
        return np.array(wp.floatValue, dtype=np.float32)
    if len(wp.float16Value):
        return np.frombuffer(wp.float16Value, dtype="<f2").astype(np.float32)
    if wp.HasField("quantization"):
        return _dequantize(wp, shape, axis)
    if len(wp.rawValue):  # plain float32 bytes
        return np.frombuffer(wp.rawValue, dtype="<f4").astype(np.float32)
    return np.zeros(0, dtype=np.float32)


def _codes(wp, n):
    nbits = wp.quantization.numberOfBits
    raw = np.frombuffer(wp.rawValue, dtype=np.uint8)
    need = (n * nbits + 7) // 8
    if len(raw) < need:
        raise ValueError(f"rawValue has {len(raw)} bytes, {n} values of {nbits} bits need {need}")
    if nbits == 8:
        return raw[:n].astype(np.int64)
    return unpack(raw.tobytes(), nbits, n)


def _dequantize(wp, shape, axis, float32_math=False):
    """Documented formulas (coreml-format-facts §2.3, §2.6, §2.8): w = q·scale[c] + bias[c] in
    float64 (scale/bias as stored, float32), then float32, as coremltools' `_dequantize_wp` (or,
    with float32_math, each step in float32 as mlconv's `ConstantTensor.floats()`); LUT: table[q].
    Codes are the row-major flattening of `shape`, packed MSB first; c is the index along `axis`
    (1-D: one channel)."""
    n = int(np.prod(shape))
    q = wp.quantization
    codes = _codes(wp, n)
    kind = q.WhichOneof("QuantizationType")
    if kind == "linearQuantization":
        scale = np.array(q.linearQuantization.scale, dtype=np.float64)
        bias = np.array(q.linearQuantization.bias, dtype=np.float64)
        if len(bias) == 0:
            bias = np.zeros_like(scale)
        if len(scale) == 1:
            ch = np.zeros(n, dtype=np.int64)
        else:
            inner = int(np.prod(shape[axis + 1:]))
            ch = (np.arange(n) // inner) % shape[axis]
            if len(scale) != shape[axis]:
                raise ValueError(f"{len(scale)} scales for axis {axis} of shape {shape}")
        if float32_math:
            s32, b32 = scale.astype(np.float32), bias.astype(np.float32)
            return codes.astype(np.float32) * s32[ch] + b32[ch]
        return (codes.astype(np.float64) * scale[ch] + bias[ch]).astype(np.float32)
    if kind == "lookupTableQuantization":
        lut = np.array(q.lookupTableQuantization.floatValue, dtype=np.float32)
        if len(lut) != 1 << q.numberOfBits:
            raise ValueError(f"LUT of {len(lut)} entries for {q.numberOfBits} bits")
        return lut[codes]
    raise ValueError(f"unsupported quantization type {kind}")


def _ct_dequantize(wp, shape, axis):
    """coremltools' own `_dequantize_wp` (what `_dequantize_nn_spec` calls) on a copy."""
    from coremltools.proto import NeuralNetwork_pb2
    from coremltools.models.neural_network import quantization_utils as qu
    c = NeuralNetwork_pb2.WeightParams()
    c.CopyFrom(wp)
    qu._dequantize_wp(c, shape, axis)
    return np.array(c.floatValue, dtype=np.float32)


def _ct_quantize(w32, shape, axis, mode, nbits):
    """coremltools' NN-path result for one tensor: a fresh WeightParams with floatValue, through
    `_quantize_wp_field` exactly as `_quantize_nn_spec` calls it (float64 maths, float32 scale /
    bias / LUT in the proto, packed rawValue). k-means: sklearn KMeans (the NN path)."""
    from coremltools.proto import NeuralNetwork_pb2
    from coremltools.models.neural_network import quantization_utils as qu
    qm = {"linear": qu._QUANTIZATION_MODE_LINEAR_QUANTIZATION,
          "linear-symmetric": qu._QUANTIZATION_MODE_LINEAR_SYMMETRIC,
          "kmeans": qu._QUANTIZATION_MODE_LOOKUP_TABLE_KMEANS}[mode]
    wp = NeuralNetwork_pb2.WeightParams()
    wp.floatValue.extend(w32.tolist())
    qu._quantize_wp_field(wp, nbits, qm, shape=shape, axis=axis)
    return wp


def _kmeans1d(w32, nbits):
    from coremltools.models.neural_network import quantization_utils as qu
    lut, wq = qu._get_kmeans_lookup_table_and_weight(nbits, w32.astype(np.float64), force_kmeans1d=True)
    return lut.astype(np.float32)[np.asarray(wq, dtype=np.int64)]


def _has_kmeans1d():
    try:
        from coremltools._deps import _HAS_KMEANS1D
        return bool(_HAS_KMEANS1D)
    except ImportError:
        return False


def _prepare_inputs(files, mlconv, work):
    """(display name, .mlmodel path, .h5 path or None) for each input; Keras .h5 files are
    exported first (`mlconv keras in.h5 -o work/name.mlmodel`)."""
    out = []
    if not files:
        real = os.path.join(_shared_models_dir(), DEFAULT_REAL_MODEL)
        if os.path.exists(real):
            files.append(real)
        else:
            print(f"note: {real} not found; real-model check skipped")
        files += [os.path.join(ROOT, "Fixtures", "keras", n, "model.h5") for n in DEFAULT_KERAS_FIXTURES]
    for f in files:
        base = os.path.basename(f)
        stem, ext = os.path.splitext(base)
        if ext.lower() == ".h5":
            name = os.path.basename(os.path.dirname(os.path.abspath(f))) if stem == "model" else stem
            dst = os.path.join(work, name + ".mlmodel")
            _run([mlconv, "keras", f, "-o", dst])
            out.append((name, dst, f))
        elif ext.lower() == ".mlmodel":
            out.append((stem, f, None))
        else:
            sys.exit(f"{f}: give .mlmodel or Keras .h5 files")
    return out


def _fmt_db(x):
    return "inf" if np.isinf(x) else f"{x:.2f}"


CT_LAYER_TYPES = {"convolution", "innerProduct", "embedding", "embeddingND", "batchnorm", "scale", "bias",
                  "loadConstant", "loadConstantND", "simpleRecurrent", "gru", "uniDirectionalLSTM",
                  "biDirectionalLSTM", "batchedMatmul"}  # QuantizedLayerSelector types with weights

# Finding kinds: (level, description). Levels: note (how a tensor was matched), warning (an mlconv
# limitation outside the acceptance criteria), violation (exit status 1).
KINDS = {
    "failed": ("violation", "`mlconv quantize` failed"),
    "unmatched": ("violation", "quantized weight with no counterpart in the original"),
    "shape": ("violation", "shape / size problem"),
    "bits": ("violation", "numberOfBits differs from the requested bits"),
    "spec": ("violation", "specificationVersion < 3 with quantized weights"),
    "dequant": ("violation", "this script's dequantizer disagrees with coremltools' _dequantize_wp"),
    "bytes": ("violation", "linear: not byte-identical to coremltools (rawValue / scale / bias)"),
    "kmeans": ("violation", "k-means: SQNR below coremltools' (sklearn, the NN path)"),
    "kmeans1d": ("violation", "k-means: SQNR below coremltools' exact kmeans1d"),
    "lut-order": ("violation", "k-means: LUT not ascending"),
    "f32-values": ("violation", "stored as float32 after quantization; linear values differ from coremltools' "
                                "quantization of the same tensor"),
    "f32-kmeans": ("violation", "stored as float32 after quantization; k-means SQNR below coremltools'"),
    "f32": ("warning", "quantized by mlconv but written as float32 (dequantized): lossy, no size saving in the "
                       ".mlmodel"),
    "roundtrip": ("warning", ".mlmodel → .mlmodel round trip failed; quantized the Keras file directly instead"),
    "content": ("note", "layer renamed by the round trip; original tensor found by content"),
    "bn-fold": ("note", "batch norm folded by mlconv before compressing (γ' = γ/√(σ²+ε), β' = β − γ'μ, μ' = 0, "
                           "σ²' = 1 − ε); its tensors are compared with the original folded the same way"),
    "zeros": ("note", "quantized all-zero weight with no counterpart in the original (written by the exporter, "
                         "e.g. the zero matrix of a constant lowered to innerProduct)"),
}


def _check_model(name, path, h5, mlconv, work, modes, use_k1d, records, findings):
    """Quantizes `path` in every mode and compares each tensor; appends per-tensor records and
    findings (dicts: kind, model, tag, layer, field, text) and returns one table row per mode.
    Every WeightParams of our output is classified:
      quantized – stored with `quantization` (rawValue + linear scale/bias or LUT): compared;
      as-f32    – stored as float but different from the original (quantized by mlconv, then
                  written dequantized): compared the same way (values instead of bytes);
      kept      – float and equal to the original (mlconv left it)."""
    import coremltools as ct
    orig = ct.utils.load_spec(path)
    orig_layers = {l.name: l for l in _iter_layers(_nn_of(orig))}
    by_count = None

    def orig_index(n):
        """(description, float32 values) of every original float tensor with n values."""
        nonlocal by_count
        if by_count is None:
            by_count = {}
            for l in orig_layers.values():
                for wpath, wp in _weight_params(l):
                    c = _stored_count(wp)
                    if c:
                        by_count.setdefault(c, []).append(
                            (f"original layer '{l.name}' {'.'.join(wpath)}", _float_values(wp, (c,), 0)))
        return by_count.get(n, [])

    rows = []
    for mode, nbits in modes:
        tag = f"{mode}{nbits}"

        def add(kind, text, layer=None, field=None):
            findings.append({"kind": kind, "model": name, "tag": tag, "layer": layer, "field": field, "text": text})

        out_path = os.path.join(work, f"{name}.{tag}.mlmodel")
        log = os.path.join(work, f"{name}.{tag}.log")
        flag = {"linear": "--linear", "linear-symmetric": "--linear-symmetric", "kmeans": "--kmeans"}[mode]
        cmd = [mlconv, "quantize", path, "-o", out_path, "--bits", str(nbits), flag]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        t_mlconv = time.perf_counter() - t0
        with open(log, "w") as f:
            f.write(r.stdout + r.stderr)
        first = next((l for l in (r.stderr + r.stdout).splitlines() if "error" in l), "").strip()
        if r.returncode != 0 and h5:
            # mlconv could not write back the graph it imported from its own .mlmodel (a round-trip
            # limitation, not quantization): quantize the Keras file directly; the exporter names
            # the layers as in the float export, so the tensors still line up.
            add("roundtrip", first[:200])
            cmd[2] = h5
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True)
            t_mlconv = time.perf_counter() - t0
            with open(log, "a") as f:
                f.write("\n--- retried from the .h5 ---\n" + r.stdout + r.stderr)
            first = next((l for l in (r.stderr + r.stdout).splitlines() if "error" in l), "").strip()
        if r.returncode != 0:
            add("failed", f"exit {r.returncode}: {first[:300]} (log: {log})")
            rows.append((mode, nbits, None, 0, t_mlconv, 0.0, 0.0))
            continue
        ours = ct.utils.load_spec(out_path)
        t_ct = t_k1d = 0.0
        per, kept, any_quantized = [], 0, False
        for layer in _iter_layers(_nn_of(ours)):
            folded = _folded_batchnorm(layer, orig_layers.get(layer.name))
            if folded is not None:
                add("bn-fold", "compared with the folded original statistics", layer.name, "batchnorm")
            for wpath, wp in _weight_params(layer):
                quantized = wp.HasField("quantization")
                any_quantized |= quantized
                field = ".".join(wpath)
                o_layer = orig_layers.get(layer.name)
                o_wp = _lookup(o_layer, wpath) if o_layer is not None else None
                try:
                    if o_wp is not None and o_layer.WhichOneof("layer") == layer.WhichOneof("layer"):
                        # shape and axis from the ORIGINAL layer's parameters and tensor
                        shape, axis, selects = _canonical(o_layer, wpath, _stored_count(o_wp))
                        w = _float_values(o_wp, shape, axis)
                        if folded is not None and wpath[-1] in folded:
                            w = folded[wpath[-1]]
                        mine = _dequantize(wp, shape, axis) if quantized else _float_values(wp, shape, axis)
                    elif quantized:
                        # The .mlmodel round trip renamed / re-lowered the layer (e.g. a loadConstant
                        # written back as pooling + innerProduct): find the original tensor by content,
                        # and use OUR layer's canonical shape and axis for both tools.
                        shape, axis, selects = _canonical(layer, wpath, None)
                        mine = _dequantize(wp, shape, axis)
                        cands = [(sqnr(v, mine), d, v) for d, v in orig_index(len(mine))]
                        if not cands:
                            if not np.any(mine):
                                add("zeros", f"{len(mine)} zeros (exactly representable)", layer.name, field)
                            else:
                                add("unmatched", f"no weight of {len(mine)} values in the original", layer.name, field)
                            continue
                        best = max(cands, key=lambda c: c[0])
                        w = best[2]
                        add("content", f"compared with {best[1]} (same size, closest of {len(cands)}), "
                                       f"using this layer's shape {shape}", layer.name, field)
                    else:
                        continue
                except ValueError as e:
                    if quantized:
                        add("shape", str(e), layer.name, field)
                    continue
                if len(w) != len(mine):
                    add("shape", f"{len(mine)} values in ours, {len(w)} in the original", layer.name, field)
                    continue
                if not quantized:
                    if np.array_equal(w, mine):
                        kept += layer.WhichOneof("layer") in CT_LAYER_TYPES
                        continue
                    add("f32", "values differ from the original", layer.name, field)
                else:
                    if wp.quantization.numberOfBits != nbits:
                        add("bits", f"numberOfBits {wp.quantization.numberOfBits}, expected {nbits}", layer.name, field)
                    if w.size <= DEQUANT_CROSSCHECK_MAX:
                        try:
                            ref = _ct_dequantize(wp, shape, axis)
                        except Exception:  # e.g. one scale for many channels: coremltools cannot broadcast it
                            ref = None
                        if ref is not None and not np.array_equal(ref, mine):
                            add("dequant", "values differ", layer.name, field)
                t = time.perf_counter()
                theirs_wp = _ct_quantize(w, shape, axis, mode, nbits)
                t_ct += time.perf_counter() - t
                theirs = _dequantize(theirs_wp, shape, axis)
                s_ours, s_ct = sqnr(w, mine), sqnr(w, theirs)
                rec = {"model": name, "mode": mode, "bits": nbits, "layer": layer.name, "field": field,
                       "stored": "quantized" if quantized else "float32 (dequantized)",
                       "shape": list(shape), "axis": axis, "count": int(w.size), "coremltools_selects": selects,
                       "sqnr_ours": s_ours, "sqnr_coremltools": s_ct, "exact": None}
                if mode == "kmeans":
                    if not ((s_ours >= s_ct - KMEANS_TOL_DB) or (np.isinf(s_ours) and np.isinf(s_ct))):
                        add("kmeans" if quantized else "f32-kmeans",
                            f"SQNR {s_ours:.4f} dB < coremltools {s_ct:.4f} dB", layer.name, field)
                    if quantized:
                        lut = np.array(wp.quantization.lookupTableQuantization.floatValue, dtype=np.float32)
                        if np.any(np.diff(lut) < 0):
                            add("lut-order", f"LUT {lut.tolist()}", layer.name, field)
                    if use_k1d:
                        t = time.perf_counter()
                        s_k1 = sqnr(w, _kmeans1d(w, nbits))
                        t_k1d += time.perf_counter() - t
                        rec["sqnr_kmeans1d"] = s_k1
                        if quantized and not (s_ours >= s_k1 - KMEANS1D_TOL_DB or (np.isinf(s_ours) and np.isinf(s_k1))):
                            add("kmeans1d", f"SQNR {s_ours:.4f} dB < kmeans1d {s_k1:.4f} dB", layer.name, field)
                elif quantized:
                    diffs = _linear_byte_diffs(wp, theirs_wp)
                    rec["exact"] = not diffs
                    if diffs:
                        add("bytes", "; ".join(diffs), layer.name, field)
                else:  # linear, written as float: the values must be coremltools' codes dequantized
                    # in float32 arithmetic (q·scale + bias, each step rounded), as mlconv does
                    theirs32 = _dequantize(theirs_wp, shape, axis, float32_math=True)
                    rec["exact"] = bool(np.array_equal(mine, theirs32))
                    if not rec["exact"]:
                        k = int(np.argmax(mine != theirs32))
                        add("f32-values", f"SQNR {s_ours:.4f} dB vs coremltools {s_ct:.4f} dB; first difference "
                                          f"at {k}: ours {mine[k]!r}, coremltools {theirs32[k]!r}", layer.name, field)
                records.append(rec)
                per.append(rec)
        if any_quantized and ours.specificationVersion < 3:
            add("spec", f"specificationVersion {ours.specificationVersion}")
        rows.append((mode, nbits, per, kept, t_mlconv, t_ct, t_k1d))
    return rows


def _folded_batchnorm(layer, o_layer):
    """If mlconv folded this batch norm's statistics before compressing (our mean all 0 and
    variance all 1 − ε up to rounding, the original's not), the original tensors as folded the same way in
    float32: γ' = γ/√(σ²+ε), β' = β − γ'·μ, μ' = 0, σ²' = 1 − ε; otherwise None."""
    if layer.WhichOneof("layer") != "batchnorm" or o_layer is None or o_layer.WhichOneof("layer") != "batchnorm":
        return None
    p, o = layer.batchnorm, o_layer.batchnorm
    c = int(o.channels)
    try:
        mine = {f: (_dequantize(getattr(p, f), (c,), 0) if getattr(p, f).HasField("quantization")
                    else _float_values(getattr(p, f), (c,), 0)) for f in ("mean", "variance")}
        orig = {f: _float_values(getattr(o, f), (c,), 0) for f in ("gamma", "beta", "mean", "variance")}
    except ValueError:
        return None
    eps = np.float32(o.epsilon)
    one_minus_eps = np.float32(1) - eps
    # (linear symmetric cannot hold 1 − ε exactly: 255·s − 128·s with s = (1 − ε)/127)
    if len(mine["mean"]) != c or np.any(mine["mean"] != 0) or not np.allclose(mine["variance"], one_minus_eps,
                                                                              rtol=1e-6, atol=0):
        return None
    if not np.any(orig["mean"]) and np.all(orig["variance"] == one_minus_eps):
        return None  # already in folded form: nothing to redo
    with np.errstate(all="ignore"):
        scale = (orig["gamma"] / np.sqrt(orig["variance"] + eps)).astype(np.float32)
        shift = (orig["beta"] - scale * orig["mean"]).astype(np.float32)
    return {"gamma": scale, "beta": shift, "mean": np.zeros(c, np.float32),
            "variance": np.full(c, one_minus_eps, np.float32)}


def _linear_byte_diffs(wp, theirs_wp):
    diffs = []
    a, b = bytes(wp.rawValue), bytes(theirs_wp.rawValue)
    if a != b:
        idx = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
        diffs.append(f"rawValue: {len(idx) + abs(len(a) - len(b))} of {len(b)} bytes differ"
                     + (f" (first at byte {idx[0]}: ours 0x{a[idx[0]]:02x}, coremltools 0x{b[idx[0]]:02x})" if idx else "")
                     + (f"; lengths {len(a)} vs {len(b)}" if len(a) != len(b) else ""))
    for fld in ("scale", "bias"):
        x = np.array(getattr(wp.quantization.linearQuantization, fld), dtype=np.float32)
        y = np.array(getattr(theirs_wp.quantization.linearQuantization, fld), dtype=np.float32)
        if x.tobytes() != y.tobytes():
            if len(x) != len(y):
                diffs.append(f"{fld}: {len(x)} values, coremltools {len(y)}")
            else:
                ne = x.view(np.uint32) != y.view(np.uint32)
                k = int(np.argmax(ne))
                diffs.append(f"{fld}[{k}]: ours {x[k]!r}, coremltools {y[k]!r} ({int(ne.sum())} of {len(y)} differ)")
    return diffs


def _print_model_table(name, path, rows, use_k1d):
    print(f"\n{name}  ({path})")
    head = (f"  {'mode':<18} {'tensors':>7} {'as-f32':>6} {'ct-skip':>7} {'kept':>4}  {'SQNR ours min/med':>18}"
            f"  {'coremltools min/med':>19}  {'min Δ':>7}  {'exact':>7}")
    if use_k1d:
        head += f"  {'kmeans1d min/med':>17}"
    head += f"  {'t mlconv':>8} {'t ct':>7}"
    print(head)
    for mode, nbits, per, kept, t_m, t_c, t_k in rows:
        label = f"{mode} {nbits}"
        if per is None:
            print(f"  {label:<18} mlconv quantize FAILED (see the findings)")
            continue
        if not per:
            print(f"  {label:<18} {0:>7} {'':>6} {'':>7} {kept:>4}  (nothing quantized)")
            continue
        so = np.array([r["sqnr_ours"] for r in per])
        sc = np.array([r["sqnr_coremltools"] for r in per])
        with np.errstate(invalid="ignore"):
            d = np.where(np.isinf(so) & np.isinf(sc), 0.0, so - sc)
        skip = sum(not r["coremltools_selects"] for r in per)
        asf = sum(r["stored"] != "quantized" for r in per)
        exact = "-" if mode == "kmeans" else f"{sum(bool(r['exact']) for r in per)}/{len(per)}"
        line = (f"  {label:<18} {len(per):>7} {asf:>6} {skip:>7} {kept:>4}  {_fmt_db(so.min()):>8} / {_fmt_db(np.median(so)):>7}"
                f"  {_fmt_db(sc.min()):>9} / {_fmt_db(np.median(sc)):>7}  {np.min(d):>+7.3f}  {exact:>7}")
        if use_k1d:
            if mode == "kmeans":
                sk = np.array([r["sqnr_kmeans1d"] for r in per])
                line += f"  {_fmt_db(sk.min()):>8} / {_fmt_db(np.median(sk)):>6}"
            else:
                line += f"  {'-':>17}"
        line += f"  {t_m:>7.2f}s {t_c:>6.2f}s"
        print(line)


def _print_findings(findings, n_modes, verbose):
    """Grouped by level, model, kind and field: the layers and modes it happened in, plus one
    example; every finding with --verbose. Returns the number of violations."""
    groups = {}
    for f in findings:
        level = KINDS[f["kind"]][0]
        groups.setdefault((level, f["model"], f["kind"]), []).append(f)
    n_viol = sum(len(v) for (lvl, *_), v in groups.items() if lvl == "violation")
    for level in ("note", "warning", "violation"):
        keys = [k for k in groups if k[0] == level]
        if not keys:
            continue
        total = sum(len(groups[k]) for k in keys)
        print(f"\n{level.upper()}S ({total}{'' if level == 'violation' else ', not acceptance failures'}):")
        for key in keys:
            _, model, kind = key
            items = groups[key]
            print(f"  {model}: {KINDS[kind][1]} ({len(items)})")
            if verbose:
                for f in items:
                    print(f"      [{f['tag']}] " + (f"layer '{f['layer']}' {f['field']}: " if f["layer"] else "") + f["text"])
                continue
            layers = list(dict.fromkeys(f["layer"] for f in items if f["layer"]))
            fields = list(dict.fromkeys(re.sub(r"\[\d+\]", "[i]", f["field"]) for f in items if f["field"]))
            tags = list(dict.fromkeys(f["tag"] for f in items))
            if layers:
                print(f"      {len(layers)} layer(s): {', '.join(layers[:6])}{', …' if len(layers) > 6 else ''}")
                print(f"      fields: {', '.join(fields[:8])}{', …' if len(fields) > 8 else ''}")
            print(f"      {len(tags)} of {n_modes} mode(s): {', '.join(tags)}")
            ex = items[0]
            print(f"      e.g. [{ex['tag']}] " + (f"layer '{ex['layer']}' {ex['field']}: " if ex["layer"] else "") + ex["text"])
    if findings and not verbose:
        print("  (--verbose lists every finding)")
    return n_viol


LEGEND = """columns: tensors = WeightParams compared (every one mlconv quantized); as-f32 = of those, stored as
float32 although mlconv quantized them (dequantized on export; see the warnings); ct-skip = of those, fields
coremltools' quantize_weights never quantizes (compared with the same per-tensor function anyway); kept =
weights of quantizable layer types that mlconv left exactly as they were (e.g. no size saving); min Δ = min
over tensors of SQNR ours − coremltools (dB; 0 when both are exact; ±0.000 from float32 dequantization of
as-f32 tensors); exact = linear tensors identical to coremltools (rawValue, scale and bias bytes; as-f32
ones: values); t ct = coremltools' per-tensor time (sklearn KMeans for k-means)"""


def models_main(argv):
    ap = argparse.ArgumentParser(
        prog="check_quantization.py models",
        description="mlconv quantize on whole models vs coremltools' per-tensor quantization (issue 5 acceptance).")
    ap.add_argument("files", nargs="*", help=".mlmodel or Keras .h5 files (default: the real style-transfer "
                    "model when present, plus the Keras fixtures " + ", ".join(DEFAULT_KERAS_FIXTURES) + ")")
    ap.add_argument("--mlconv", help="mlconv binary (default: swift build -c release --product mlconv)")
    ap.add_argument("--work", help="keep the exported / quantized models here (default: a temporary directory)")
    ap.add_argument("--modes", help="comma-separated subset, e.g. linear8,kmeans4,linear-symmetric8")
    ap.add_argument("--no-kmeans1d", action="store_true", help="skip the vendored kmeans1d reference column")
    ap.add_argument("--json", help="write the per-tensor records and findings here (SQNR ±inf as \"inf\"/\"-inf\")")
    ap.add_argument("--verbose", action="store_true", help="list every finding (tensor and mode)")
    args = ap.parse_args(argv)

    import tempfile
    import warnings
    warnings.filterwarnings("ignore")
    modes = MODEL_MODES
    if args.modes:
        want = set(args.modes.split(","))
        unknown = want - {f"{m[0]}{m[1]}" for m in MODEL_MODES}
        if unknown:
            sys.exit(f"unknown mode(s) {sorted(unknown)}; choose from " + ", ".join(f"{a}{b}" for a, b in MODEL_MODES))
        modes = [m for m in MODEL_MODES if f"{m[0]}{m[1]}" in want]
    mlconv = _resolve_mlconv(args.mlconv)
    work = args.work or tempfile.mkdtemp(prefix="mlconv-quant-models-")
    os.makedirs(work, exist_ok=True)
    use_k1d = not args.no_kmeans1d and _has_kmeans1d()
    if not args.no_kmeans1d and not use_k1d:
        print("note: coremltools' vendored kmeans1d is not available; kmeans1d column skipped")

    inputs = _prepare_inputs(list(args.files), mlconv, work)
    print(f"mlconv: {mlconv}\nwork directory: {work}")
    print(LEGEND)
    records, findings = [], []
    for name, path, h5 in inputs:
        rows = _check_model(name, path, h5, mlconv, work, modes, use_k1d, records, findings)
        _print_model_table(name, path, rows, use_k1d)
        sys.stdout.flush()

    if args.json:
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return str(float(v)) if np.isinf(v) else float(v)
            return v
        with open(args.json, "w") as f:
            json.dump({"records": [{k: clean(v) for k, v in r.items()} for r in records],
                       "findings": [dict(f, level=KINDS[f["kind"]][0]) for f in findings]}, f, indent=1)
    q = [r for r in records if r["stored"] == "quantized"]
    n_lin = sum(r["mode"] != "kmeans" for r in q)
    n_exact = sum(bool(r["exact"]) for r in q)
    n_km = sum(r["mode"] == "kmeans" for r in q)
    n_km_ok = sum(r["mode"] == "kmeans" and (r["sqnr_ours"] >= r["sqnr_coremltools"] - KMEANS_TOL_DB
                                             or (np.isinf(r["sqnr_ours"]) and np.isinf(r["sqnr_coremltools"])))
                  for r in q)
    n_f = len(records) - len(q)
    print(f"\nstored quantized: linear tensors byte-identical to coremltools {n_exact}/{n_lin}; "
          f"k-means tensors with SQNR ≥ coremltools' {n_km_ok}/{n_km}")
    if n_f:
        n_f_ok = sum(r["stored"] != "quantized" and (
            r["exact"] if r["mode"] != "kmeans" else
            (r["sqnr_ours"] >= r["sqnr_coremltools"] - KMEANS_TOL_DB
             or (np.isinf(r["sqnr_ours"]) and np.isinf(r["sqnr_coremltools"])))) for r in records)
        print(f"written as float32 after quantization (as-f32): {n_f_ok}/{n_f} tensor·mode pairs as good as coremltools "
              f"(linear: same values; k-means: SQNR ≥)")
    n_viol = _print_findings(findings, len(modes), args.verbose)
    if n_viol:
        print(f"\nresult: FAIL ({n_viol} violation(s))")
        sys.exit(1)
    print("\nresult: every linear tensor byte-identical to coremltools; every k-means SQNR ≥ coremltools'")
    sys.exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/mlconv-quant-check")
    ap.add_argument("--no-swift", action="store_true", help="do not run the Swift export (run it yourself)")
    ap.add_argument("--package-path", default=ROOT, help="Swift package to run the export test in")
    ap.add_argument("--scratch-path", default=None, help="swift --scratch-path")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()

    from coremltools.models.neural_network import quantization_utils as qu

    os.makedirs(args.dir, exist_ok=True)
    tensors = make_tensors(np.random.default_rng(args.seed))
    manifest = []
    for name, (w, axis, kbits) in tensors.items():
        np.save(os.path.join(args.dir, name + ".npy"), w)
        manifest.append({"name": name, "shape": list(w.shape), "axis": axis, "kmeans_bits": kbits})
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f)

    if not args.no_swift:
        cmd = ["swift", "test", "--package-path", args.package_path, "--filter", "PeerCheckExportTests"]
        if args.scratch_path:
            cmd[2:2] = ["--scratch-path", args.scratch_path]
        env = dict(os.environ, MLCONV_QUANT_CHECK_DIR=args.dir)
        print("running:", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-4000:], r.stderr[-4000:])
            sys.exit("the Swift export failed")

    with open(os.path.join(args.dir, "ours.json")) as f:
        ours = json.load(f)
    with open(os.path.join(args.dir, "ours_metrics.json")) as f:
        metrics = json.load(f)["metrics"]

    ok = True
    print("\nLinear quantization vs coremltools _quantize_wp_field (bytes, float32 scale and bias)")
    print(f"{'tensor':<10} {'shape':<16} {'axis':>4}  " + " ".join(f"{b}-bit" for b in range(1, 9)) + "  sym8")
    for name, (w, axis, _) in tensors.items():
        marks = []
        for bits in list(range(1, 9)) + ["sym"]:
            symmetric = bits == "sym"
            nb = 8 if symmetric else bits
            raw, scale, bias = coremltools_linear(w, nb, axis, symmetric)
            tag = "symmetric" if symmetric else f"linear{bits}"
            with open(os.path.join(args.dir, f"ours_{name}_{tag}.bin"), "rb") as f:
                mine = f.read()
            key = "symmetric" if symmetric else "linear"
            bkey = "8" if symmetric else str(bits)
            my_scale = np.array(ours[name][key + "_scale"][bkey], dtype=np.float32)
            my_bias = np.array(ours[name][key + "_bias"][bkey], dtype=np.float32)
            same = (mine == raw and np.array_equal(my_scale, scale) and np.array_equal(my_bias, bias))
            if not same:
                ok = False
                diff = sum(a != b for a, b in zip(mine, raw)) + abs(len(mine) - len(raw))
                print(f"  MISMATCH {name} {tag}: {diff} bytes differ; scale equal {np.array_equal(my_scale, scale)}, "
                      f"bias equal {np.array_equal(my_bias, bias)}")
            marks.append("  ok " if same else "DIFF ")
        print(f"{name:<10} {str(w.shape):<16} {str(axis):>4}  " + " ".join(marks))

    print("\nk-means LUT SQNR (dB): mlconv (exact DP) vs coremltools kmeans1d (exact) and sklearn (NN path)")
    print("(t mlconv is measured inside `swift test`, i.e. a debug build; release builds are ~5-10x faster)")
    print(f"{'tensor':<10} {'n':>7} {'bits':>4} {'mlconv':>9} {'kmeans1d':>9} {'sklearn':>9}"
          f" {'ours−skl':>8} {'t mlconv':>9} {'t kmeans1d':>10} {'t sklearn':>9}")
    for name, (w, axis, kbits) in tensors.items():
        w64 = w.astype(np.float64)
        for bits in kbits:
            lut = np.array(ours[name]["kmeans_lut"][str(bits)], dtype=np.float32)
            with open(os.path.join(args.dir, f"ours_{name}_kmeans{bits}.bin"), "rb") as f:
                codes = unpack(f.read(), bits, w.size)
            s_ours = sqnr(w, lut[codes])
            m = metrics[name]["kmeans"][str(bits)]
            reported = float("inf") if m["sqnr"] is None else m["sqnr"]
            if not (abs(reported - s_ours) < 1e-6 or reported == s_ours):
                ok = False
                print(f"  MISMATCH {name} {bits}-bit: Swift reported {reported}, recomputed {s_ours}")
            t = time.perf_counter()
            lut1, q1 = qu._get_kmeans_lookup_table_and_weight(bits, w64, force_kmeans1d=True)
            t_k1 = time.perf_counter() - t
            s_k1 = sqnr(w, lut1.astype(np.float32)[np.asarray(q1)])
            t = time.perf_counter()
            lut2, q2 = qu._get_kmeans_lookup_table_and_weight(bits, w64)
            t_sk = time.perf_counter() - t
            s_sk = sqnr(w, lut2.astype(np.float32)[np.asarray(q2)])
            # Exactness: at least as good as sklearn; equal to kmeans1d up to float32 LUT rounding.
            tol = 1e-3
            good = (s_ours >= s_sk - tol) and (s_ours >= s_k1 - tol or (np.isinf(s_ours) and np.isinf(s_k1)))
            if not good:
                ok = False
            print(f"{name:<10} {w.size:>7} {bits:>4} {s_ours:>9.3f} {s_k1:>9.3f} {s_sk:>9.3f} {s_ours - s_sk:>8.3f}"
                  f" {m['seconds']:>8.3f}s {t_k1:>9.3f}s {t_sk:>8.3f}s" + ("" if good else "  WORSE"))

    print("\nresult:", "all linear bytes identical; k-means SQNR ≥ coremltools" if ok else "MISMATCHES (see above)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "models":
        models_main(sys.argv[2:])
    else:
        main()
