"""ML program (.mlpackage) fixtures with Keras / NumPy references, for MILImporter's parity tests.

Run (from the repository root):

    PY=$(Scripts/coremltools8-env)   # coremltools 8.3, tensorflow-cpu 2.15, keras 2.15
    $PY Scripts/make_mlprogram_fixtures.py [case ...]

Writes Fixtures/mlprogram/<case>/:
  model.mlpackage     converted with coremltools 8.3 (convert_to="mlprogram"); `_fp16` cases use
                      coremltools' default compute_precision (fp16), the others FLOAT32
  input_<name>.npy    float32 inputs in the program's layout (Keras' layout: channels last)
  expected_<name>.npy float32 outputs of the Keras model (tf.keras .predict) or, for the
                      single-op programs built with coremltools' MIL Builder, of the op's formula
                      in NumPy (float64 arithmetic)
  case.json           {"inputs": [...], "outputs": [...], "precision": "fp32"|"fp16",
                       "source": "keras"|"numpy"}
Keras cases: small_cnn (Conv2D, BatchNormalization, ReLU, MaxPooling2D, Flatten, Dense, softmax),
mobilenet_block (DepthwiseConv2D, 1x1 Conv2D, ReLU6, residual Add, GlobalAveragePooling2D),
dense_softmax, lstm_seq and gru_last (coremltools turns Keras LSTM / GRU into a while_loop over
tensor lists), attention (MultiHeadAttention + LayerNormalization), each in fp32 and fp16. MIL Builder cases: conv_relu_pool (NCHW conv, relu,
max_pool), layer_norm, lstm_bidirectional, reductions (reduce_mean / reduce_sum / pow / abs /
real_div), shape_ops (reshape, transpose, concat, slice_by_index, squeeze, expand_dims, split).
Weights come from generators seeded with fixed numbers; every fixture stays below ~200 KB.
"""
import json
import os
import shutil
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import coremltools as ct  # noqa: E402
from coremltools.converters.mil import Builder as mb  # noqa: E402
from coremltools.converters.mil.mil import types  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "mlprogram")


def save_case(name, mlmodel, inputs, outputs, precision, source):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    mlmodel.save(os.path.join(d, "model.mlpackage"))
    for k, v in inputs.items():
        np.save(os.path.join(d, f"input_{k}.npy"), np.ascontiguousarray(v, dtype=np.float32))
    for k, v in outputs.items():
        np.save(os.path.join(d, f"expected_{k}.npy"), np.ascontiguousarray(v, dtype=np.float32))
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({"inputs": list(inputs), "outputs": list(outputs), "precision": precision, "source": source}, f, indent=1)
    size = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(d) for x in fs)
    print(f"{name}: {size} bytes")


# ---- Keras models ---------------------------------------------------------------------------

def keras_cases():
    import tensorflow as tf
    tf.random.set_seed(1)
    L = tf.keras.layers
    cases = {}

    def small_cnn():
        x = L.Input((16, 16, 3), name="image", batch_size=1)
        y = L.Conv2D(8, 3, padding="same")(x)
        y = L.BatchNormalization()(y)
        y = L.ReLU()(y)
        y = L.MaxPooling2D(2)(y)
        y = L.Conv2D(12, 3, strides=2, padding="valid", activation="relu")(y)
        y = L.Flatten()(y)
        y = L.Dense(10, activation="softmax", name="probs")(y)
        return tf.keras.Model(x, y)

    def mobilenet_block():
        x = L.Input((12, 12, 8), name="features", batch_size=1)
        y = L.DepthwiseConv2D(3, padding="same")(x)
        y = L.BatchNormalization()(y)
        y = L.ReLU(6.0)(y)
        y = L.Conv2D(8, 1)(y)
        y = L.BatchNormalization()(y)
        y = L.Add()([x, y])
        y = L.GlobalAveragePooling2D()(y)
        y = L.Dense(5, name="logits")(y)
        return tf.keras.Model(x, y)

    def dense_softmax():
        x = L.Input((20,), name="x", batch_size=1)
        y = L.Dense(32, activation="tanh")(x)
        y = L.Dense(16, activation="gelu")(y)
        y = L.Dense(4, activation="softmax", name="p")(y)
        return tf.keras.Model(x, y)

    def lstm_seq():
        x = L.Input((7, 4), name="seq", batch_size=1)
        y = L.LSTM(6, return_sequences=True)(x)
        y = L.Dense(3, name="out")(y)
        return tf.keras.Model(x, y)

    def gru_last():
        x = L.Input((6, 5), name="seq", batch_size=1)
        y = L.GRU(4)(x)
        return tf.keras.Model(x, y)

    def attention():
        x = L.Input((5, 8), name="tokens", batch_size=1)
        y = L.MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
        y = L.LayerNormalization()(L.Add()([x, y]))
        return tf.keras.Model(x, y)

    rng = np.random.RandomState(7)
    for name, make in [("small_cnn", small_cnn), ("mobilenet_block", mobilenet_block), ("dense_softmax", dense_softmax),
                       ("lstm_seq", lstm_seq), ("gru_last", gru_last), ("attention", attention)]:
        model = make()
        # Non-trivial batch-norm statistics.
        for layer in model.layers:
            if isinstance(layer, L.BatchNormalization):
                g, b, m, v = layer.get_weights()
                layer.set_weights([rng.uniform(0.5, 1.5, g.shape), rng.uniform(-0.5, 0.5, b.shape),
                                   rng.uniform(-0.5, 0.5, m.shape), rng.uniform(0.5, 2, v.shape)])
        shape = model.inputs[0].shape
        xin = rng.uniform(-1, 1, tuple(shape)).astype(np.float32)
        ref = model.predict(xin, verbose=0)
        in_name = model.inputs[0].name.split(":")[0]
        for precision in ["fp32", "fp16"]:
            ml = ct.convert(model, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                            inputs=[ct.TensorType(name=in_name, shape=tuple(int(d) for d in shape))],
                            compute_precision=ct.precision.FLOAT32 if precision == "fp32" else ct.precision.FLOAT16)
            out_name = ml.get_spec().description.output[0].name
            save_case(f"{name}_{precision}", ml, {in_name: xin}, {out_name: ref}, precision, "keras")


# ---- MIL Builder programs with NumPy references ---------------------------------------------

def program_case(name, prog, inputs, outputs, precision="fp32"):
    ml = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                    compute_precision=ct.precision.FLOAT32 if precision == "fp32" else ct.precision.FLOAT16)
    save_case(name, ml, inputs, outputs, precision, "numpy")


def numpy_conv2d(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    co, ci, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    y = np.zeros((n, co, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def mil_cases():
    rng = np.random.RandomState(11)
    # conv + relu + max_pool (NCHW), custom padding.
    x = rng.uniform(-1, 1, (1, 3, 10, 10)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (6, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, (6,)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)])
    def conv_prog(x_in):
        y = mb.conv(x=x_in, weight=w, bias=b, strides=[1, 1], pad_type="custom", pad=[1, 1, 1, 1])
        y = mb.relu(x=y)
        return mb.max_pool(x=y, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid", name="y")
    ref = np.maximum(numpy_conv2d(x.astype(np.float64), w, b, 1, (1, 1, 1, 1)), 0)
    ref = ref.reshape(1, 6, 5, 2, 5, 2).max(axis=(3, 5))
    program_case("conv_relu_pool", conv_prog, {"x_in": x}, {"y": ref})
    program_case("conv_relu_pool_fp16", conv_prog, {"x_in": x}, {"y": ref}, precision="fp16")

    # layer_norm over the last axis with gamma / beta.
    x = rng.uniform(-2, 2, (2, 5, 8)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, (8,)).astype(np.float32)
    be = rng.uniform(-0.5, 0.5, (8,)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)])
    def ln_prog(x_in):
        return mb.layer_norm(x=x_in, axes=[-1], gamma=g, beta=be, epsilon=1e-5, name="y")
    xd = x.astype(np.float64)
    mean = xd.mean(-1, keepdims=True)
    var = xd.var(-1, keepdims=True)
    program_case("layer_norm", ln_prog, {"x_in": x}, {"y": (xd - mean) / np.sqrt(var + 1e-5) * g + be})

    # Bidirectional lstm over [T, B, I], gates i, f, o, g (coremltools' lstm definition).
    T, B, I, H = 5, 1, 4, 3
    x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)
    ws = {k: rng.uniform(-0.5, 0.5, s).astype(np.float32) for k, s in
          [("wih", (4 * H, I)), ("whh", (4 * H, H)), ("b", (4 * H,)), ("wihb", (4 * H, I)), ("whhb", (4 * H, H)), ("bb", (4 * H,))]}
    h0 = rng.uniform(-0.3, 0.3, (B, 2 * H)).astype(np.float32)
    c0 = rng.uniform(-0.3, 0.3, (B, 2 * H)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)])
    def lstm_prog(x_in):
        y, h, c = mb.lstm(x=x_in, initial_h=h0, initial_c=c0, weight_ih=ws["wih"], weight_hh=ws["whh"], bias=ws["b"],
                          weight_ih_back=ws["wihb"], weight_hh_back=ws["whhb"], bias_back=ws["bb"],
                          direction="bidirectional", output_sequence=True)
        return mb.identity(x=y, name="y"), mb.identity(x=h, name="h"), mb.identity(x=c, name="c")

    def sig(v):
        return 1 / (1 + np.exp(-v))

    def run(wih, whh, bias, hh, cc, steps):
        outs = {}
        for t in steps:
            z = wih @ x[t, 0].astype(np.float64) + whh @ hh + bias
            i, f, o, gg = z[:H], z[H:2 * H], z[2 * H:3 * H], z[3 * H:]
            cc = sig(f) * cc + sig(i) * np.tanh(gg)
            hh = sig(o) * np.tanh(cc)
            outs[t] = hh
        return outs, hh, cc
    fo, fh, fc = run(ws["wih"], ws["whh"], ws["b"], h0[0, :H].astype(np.float64), c0[0, :H].astype(np.float64), range(T))
    bo, bh, bc = run(ws["wihb"], ws["whhb"], ws["bb"], h0[0, H:].astype(np.float64), c0[0, H:].astype(np.float64), reversed(range(T)))
    y = np.stack([np.concatenate([fo[t], bo[t]]) for t in range(T)])[:, None, :]
    program_case("lstm_bidirectional", lstm_prog, {"x_in": x},
                 {"y": y, "h": np.concatenate([fh, bh])[None], "c": np.concatenate([fc, bc])[None]})

    # reductions and elementwise math (SuperPoint's descriptor normalisation).
    x = rng.uniform(-2, 2, (1, 6, 3, 4)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)])
    def red_prog(x_in):
        s = mb.reduce_sum(x=mb.pow(x=mb.abs(x=x_in), y=2.0), axes=[1], keep_dims=False)
        dn = mb.pow(x=s, y=0.5)
        d = mb.real_div(x=x_in, y=mb.expand_dims(x=dn, axes=[1]), name="d")
        m = mb.reduce_mean(x=mb.silu(x=x_in), axes=[2, 3], keep_dims=True, name="m")
        return d, m
    xd = x.astype(np.float64)
    dn = np.sqrt((np.abs(xd) ** 2).sum(1))
    program_case("reductions", red_prog, {"x_in": x},
                 {"d": xd / dn[:, None], "m": (xd * sig(xd)).mean(axis=(2, 3), keepdims=True)})

    # shape ops.
    x = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)])
    def shape_prog(x_in):
        r = mb.reshape(x=x_in, shape=[3, -1])
        t = mb.transpose(x=r, perm=[1, 0])
        c = mb.concat(values=[t, t], axis=1)
        s = mb.slice_by_index(x=c, begin=[1, 0], end=[7, 6], stride=[2, 1])
        e = mb.expand_dims(x=s, axes=[0])
        q = mb.squeeze(x=e, axes=[0])
        a, b2 = mb.split(x=q, num_splits=2, axis=1)
        return mb.sub(x=a, y=b2, name="y"), mb.identity(x=q, name="q")
    r = x.reshape(3, -1).T
    c = np.concatenate([r, r], 1)
    s = c[1:7:2, 0:6]
    program_case("shape_ops", shape_prog, {"x_in": x}, {"y": s[:, :3] - s[:, 3:], "q": s})


# ---- compressed weights (coremltools.optimize.coreml) ----------------------------------------

def compressed_cases():
    """A conv + linear program compressed by coremltools.optimize.coreml for iOS16 (constexpr
    ops of the iOS16 opset) and iOS18 (constexpr_blockwise_shift_scale, the iOS18
    constexpr_lut_to_dense / constexpr_sparse_to_dense); the reference is the program run with
    the decompressed weights, computed in NumPy from the weights coremltools' own
    decompression gives (`ct.optimize.coreml.decompress_weights`, value inference)."""
    import coremltools.optimize.coreml as cto
    rng = np.random.RandomState(21)
    x = rng.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (8, 4, 3, 3)).astype(np.float32)
    lw = rng.uniform(-0.5, 0.5, (5, 8 * 4 * 4)).astype(np.float32)
    w[np.abs(w) < 0.2] = 0  # some sparsity for pruning
    lw[np.abs(lw) < 0.2] = 0

    def build(target):
        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=target)
        def prog(x_in):
            y = mb.conv(x=x_in, weight=w, strides=[1, 1], pad_type="valid")
            y = mb.reshape(x=y, shape=[1, -1])
            return mb.linear(x=y, weight=lw, name="y")
        return ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                          compute_precision=ct.precision.FLOAT32)

    def reference(ml):
        weights = {}
        dec = cto.decompress_weights(ml)
        for op in dec._mil_program.functions["main"].operations:
            v = op.outputs[0].val if op.op_type == "const" else None
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                weights[tuple(v.shape)] = v.astype(np.float64)
        wc, lwc = weights[w.shape], weights[lw.shape]
        xd = x.astype(np.float64)
        conv = numpy_conv2d(xd, wc, np.zeros(8), 1, (0, 0, 0, 0))
        return conv.reshape(1, -1) @ lwc.T

    op_cfg = dict(weight_threshold=0)
    for target, tname in [(ct.target.iOS16, "ios16"), (ct.target.iOS18, "ios18")]:
        base = build(target)
        variants = {
            "palettize4": cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(nbits=4, mode="kmeans", **op_cfg)),
            "linear8": cto.OptimizationConfig(global_config=cto.OpLinearQuantizerConfig(mode="linear_symmetric", **op_cfg)),
            "prune": cto.OptimizationConfig(global_config=cto.OpThresholdPrunerConfig(threshold=0.19, minimum_sparsity_percentile=0.3, **op_cfg)),
        }
        if target == ct.target.iOS18:
            variants["linear4_block"] = cto.OptimizationConfig(global_config=cto.OpLinearQuantizerConfig(
                mode="linear_symmetric", dtype="int4", granularity="per_block", block_size=4, **op_cfg))
            variants["palettize2_grouped"] = cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(
                nbits=2, mode="kmeans", granularity="per_grouped_channel", group_size=4, **op_cfg))
        if target == ct.target.iOS18:
            # Joint compression: pruned, then palettized / quantized keeping the sparsity
            # (constexpr_lut_to_sparse, constexpr_sparse_blockwise_shift_scale).
            pruned = cto.prune_weights(base, variants["prune"])
            joint = {
                "prune_palettize": cto.palettize_weights(pruned, cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(
                    nbits=2, mode="kmeans", **op_cfg)), joint_compression=True),
                "prune_linear8": cto.linear_quantize_weights(pruned, cto.OptimizationConfig(global_config=cto.OpLinearQuantizerConfig(
                    mode="linear_symmetric", **op_cfg)), joint_compression=True),
            }
            for vname, ml in joint.items():
                save_case(f"compressed_{tname}_{vname}", ml, {"x_in": x}, {"y": reference(ml)}, "fp32", "numpy")
        for vname, cfg in variants.items():
            if vname == "prune":
                ml = cto.prune_weights(base, cfg)
            elif vname.startswith("palettize"):
                ml = cto.palettize_weights(base, cfg)
            else:
                ml = cto.linear_quantize_weights(base, cfg)
            save_case(f"compressed_{tname}_{vname}", ml, {"x_in": x}, {"y": reference(ml)}, "fp32", "numpy")


# ---- a weight blob file written by coremltools' own writer ---------------------------------

def blob_file():
    """Fixtures/mlprogram_blob/weight.bin (coremltools' _BlobStorageWriter) and blobs.json:
    per blob its metadata offset, MIL dtype name and values."""
    from coremltools import libmilstoragepython as storage
    d = os.path.join(ROOT, "Fixtures", "mlprogram_blob")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rng = np.random.RandomState(5)
    w = storage._BlobStorageWriter(os.path.join(d, "weight.bin"))
    entries = []
    fp16 = rng.uniform(-2, 2, 7).astype(np.float16)
    entries.append(("fp16", w.write_fp16_data(fp16.view(np.uint16)), fp16.astype(float).tolist()))
    fp32 = rng.uniform(-2, 2, 5).astype(np.float32)
    entries.append(("fp32", w.write_float_data(fp32), fp32.astype(float).tolist()))
    i8 = rng.randint(-128, 128, 9).astype(np.int8)
    entries.append(("int8", w.write_int8_data(i8), i8.tolist()))
    u8 = rng.randint(0, 256, 4).astype(np.uint8)
    entries.append(("uint8", w.write_uint8_data(u8), u8.tolist()))
    for name, bits in [("uint1", 1), ("uint2", 2), ("uint3", 3), ("uint4", 4), ("uint6", 6)]:
        v = rng.randint(0, 2 ** bits, 13).astype(np.uint8)
        entries.append((name, getattr(w, f"write_{name}_data")(v), v.tolist()))
    i4 = rng.randint(-8, 8, 11).astype(np.int8)
    entries.append(("int4", w.write_int4_data(i4), i4.tolist()))
    del w
    with open(os.path.join(d, "blobs.json"), "w") as f:
        json.dump([{"dtype": n, "offset": o, "values": v} for n, o, v in entries], f, indent=1)
    print("mlprogram_blob:", os.path.getsize(os.path.join(d, "weight.bin")), "bytes")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    want = set(sys.argv[1:])
    if not want or "keras" in want:
        keras_cases()
    if not want or "mil" in want:
        mil_cases()
    if not want or "compressed" in want:
        compressed_cases()
    if not want or "blob" in want:
        blob_file()
