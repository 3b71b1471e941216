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
real_div), shape_ops (reshape, transpose, concat, slice_by_index, squeeze, expand_dims, split);
single-op programs op_<name> whose reference is coremltools' own value inference of the op.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlprogram_fixture_common import OUT, ROOT, case_meta, run_selected, write_case  # noqa: E402


def save_case(name, mlmodel, inputs, outputs, precision, source):
    size = write_case(os.path.join(OUT, name), mlmodel, inputs, outputs, case_meta(inputs, outputs, precision, source))
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
        if name == "small_cnn":
            # The Keras model itself, for `mlconv compare keras.h5 model.mlpackage`.
            model.save(os.path.join(OUT, "small_cnn_fp32", "keras.h5"), save_format="h5")


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


# ---- single ops with coremltools' value inference as the reference --------------------------

def single_op_cases():
    """One program per op (Fixtures/mlprogram/op_<name>): the op applied to a run-time input; the
    reference is coremltools' own value inference of the same op on the same values (the NumPy
    implementation of the op's definition in coremltools/converters/mil/mil/ops/defs/)."""
    rng = np.random.RandomState(31)
    img = rng.uniform(-1, 1, (1, 3, 4, 6)).astype(np.float32)
    seq = rng.uniform(-1, 1, (2, 5)).astype(np.float32)
    w_t = rng.uniform(-0.5, 0.5, (3, 2, 3, 3)).astype(np.float32)
    mat = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    specs = [
        ("conv_transpose", img, lambda x: mb.conv_transpose(x=x, weight=w_t, strides=[2, 2], pad_type="custom", pad=[1, 1, 0, 1])),
        ("upsample_bilinear", img, lambda x: mb.upsample_bilinear(x=x, scale_factor_height=2.0, scale_factor_width=1.5, align_corners=False)),
        ("resize_bilinear", img, lambda x: mb.resize_bilinear(x=x, target_size_height=7, target_size_width=3, sampling_mode="ALIGN_CORNERS")),
        ("resize_nearest_neighbor", img, lambda x: mb.resize_nearest_neighbor(x=x, target_size_height=8, target_size_width=9)),
        ("upsample_nearest_neighbor", img, lambda x: mb.upsample_nearest_neighbor(x=x, scale_factor_height=2, scale_factor_width=3)),
        ("prelu", img, lambda x: mb.prelu(x=x, alpha=np.array([0.1, 0.2, 0.3], np.float32))),
        ("clamped_relu", img, lambda x: mb.clamped_relu(x=x, alpha=0.1, beta=0.5)),
        ("threshold", img, lambda x: mb.threshold(x=x, alpha=0.2)),
        ("local_response_norm", img, lambda x: mb.local_response_norm(x=x, size=3, alpha=0.01, beta=0.75, k=1.0)),
        ("reduce_log_sum", np.abs(img) + 0.1, lambda x: mb.reduce_log_sum(x=x, axes=[1], keep_dims=True)),
        ("reduce_log_sum_exp", img, lambda x: mb.reduce_log_sum_exp(x=x, axes=[2, 3], keep_dims=False)),
        ("reduce_max", img, lambda x: mb.reduce_max(x=x, axes=[-1], keep_dims=False)),
        ("argsort", seq, lambda x: mb.cast(x=mb.argsort(x=x, axis=1, ascending=True), dtype="fp32")),
        ("topk", seq, lambda x: mb.topk(x=x, k=3, axis=1)[0]),
        ("cumsum", seq, lambda x: mb.cumsum(x=x, axis=1, exclusive=False, reverse=True)),
        ("flatten2d", img, lambda x: mb.flatten2d(x=x, axis=2)),
        ("reverse", seq, lambda x: mb.reverse(x=x, axes=[1])),
        ("sliding_windows", seq, lambda x: mb.sliding_windows(x=x, axis=1, size=2, stride=2)),
        ("band_part", seq, lambda x: mb.band_part(x=x, lower=0, upper=1)),
        ("crop", img, lambda x: mb.crop(x=x, crop_height=[1, 0], crop_width=[2, 1])),
        ("gather", seq, lambda x: mb.gather(x=x, indices=np.array([4, 0, 2], np.int32), axis=1)),
        ("gather_along_axis", seq, lambda x: mb.gather_along_axis(x=x, indices=np.array([[0, 1], [3, 2]], np.int32), axis=1)),
        ("scatter", seq, lambda x: mb.scatter(data=x, indices=np.array([1, 3], np.int32),
                                              updates=np.ones((2, 2), np.float32), axis=1, mode="add")),
        ("tile", seq, lambda x: mb.tile(x=x, reps=[2, 1])),
        ("pad_reflect", img, lambda x: mb.pad(x=x, pad=[1, 1, 2, 0], mode="reflect")),
        ("stack", seq, lambda x: mb.stack(values=[x, x], axis=1)),
        ("softmax", seq, lambda x: mb.softmax(x=x, axis=0)),
        ("l2_norm", img, lambda x: mb.l2_norm(x=x, epsilon=1e-6)),
        ("instance_norm", img, lambda x: mb.instance_norm(x=x, gamma=np.array([1.0, 2.0, 0.5], np.float32),
                                                          beta=np.array([0.0, 0.1, -0.1], np.float32), epsilon=1e-5)),
        ("avg_pool", img, lambda x: mb.avg_pool(x=x, kernel_sizes=[2, 3], strides=[2, 3], pad_type="valid")),
        ("gelu_tanh", seq, lambda x: mb.gelu(x=x, mode="TANH_APPROXIMATION")),
        ("elu_leaky", seq, lambda x: mb.add(x=mb.elu(x=x, alpha=0.5), y=mb.leaky_relu(x=x, alpha=0.2))),
        ("erf_exp_log", seq, lambda x: mb.add(x=mb.erf(x=x), y=mb.log(x=mb.exp(x=x)))),
        ("select_compare", seq, lambda x: mb.select(cond=mb.greater(x=x, y=0.0), a=x, b=mb.mul(x=x, y=-2.0))),
        ("matmul", seq, lambda x: mb.matmul(x=x, y=mat, transpose_x=False)),
        ("einsum", img, lambda x: mb.einsum(values=(x, mb.transpose(x=x, perm=[0, 3, 2, 1])), equation="nchw,nwhu->nchu")),
    ]
    def bilinear(x, out_h, out_w, coord):
        n, c, h, w = x.shape
        gy = np.clip([coord(i, h, out_h) for i in range(out_h)], 0, h - 1)
        gx = np.clip([coord(j, w, out_w) for j in range(out_w)], 0, w - 1)
        y0, x0 = np.floor(gy).astype(int), np.floor(gx).astype(int)
        y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
        fy, fx = (gy - y0)[:, None], (gx - x0)[None, :]
        a, b = x[:, :, y0][:, :, :, x0], x[:, :, y0][:, :, :, x1]
        cc, d = x[:, :, y1][:, :, :, x0], x[:, :, y1][:, :, :, x1]
        return (a * (1 - fx) + b * fx) * (1 - fy) + (cc * (1 - fx) + d * fx) * fy

    def conv_transpose_ref(x):
        n, ci, h, w = x.shape
        full = np.zeros((n, 2, (h - 1) * 2 + 3, (w - 1) * 2 + 3))
        for i in range(h):
            for j in range(w):
                full[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w_t)
        return full[:, :, 1:full.shape[2] - 1, 0:full.shape[3] - 1]

    def lrn_ref(x, size=3, alpha=0.01, beta=0.75, k=1.0):
        sq = x ** 2
        out = np.zeros_like(x)
        for ch in range(x.shape[1]):
            lo, hi = max(0, ch - (size - 1) // 2), min(x.shape[1], ch + size // 2 + 1)
            out[:, ch] = x[:, ch] / (k + alpha / size * sq[:, lo:hi].sum(1)) ** beta
        return out

    def instance_norm_ref(x):
        m = x.mean(axis=(2, 3), keepdims=True)
        v = x.var(axis=(2, 3), keepdims=True)
        return (x - m) / np.sqrt(v + 1e-5) * np.array([1.0, 2.0, 0.5])[None, :, None, None] + np.array([0, 0.1, -0.1])[None, :, None, None]

    def scatter_ref(x):
        y = x.copy()
        y[:, [1, 3]] += 1
        return y

    # NumPy references of the op definitions, for ops coremltools has no value inference for.
    numpy_refs = {
        "conv_transpose": conv_transpose_ref,
        "upsample_bilinear": lambda x: bilinear(x, 8, 9, lambda i, n, o: (i + 0.5) * n / o - 0.5),
        "resize_bilinear": lambda x: bilinear(x, 7, 3, lambda i, n, o: i * (n - 1) / (o - 1)),
        "resize_nearest_neighbor": lambda x: x[:, :, (np.arange(8) * 4) // 8][:, :, :, (np.arange(9) * 6) // 9],
        "upsample_nearest_neighbor": lambda x: x.repeat(2, axis=2).repeat(3, axis=3),
        "local_response_norm": lrn_ref,
        "sliding_windows": lambda x: np.stack([x[:, 0:2], x[:, 2:4]], axis=1),
        "crop": lambda x: x[:, :, 1:, 2:5],
        "scatter": scatter_ref,
        "instance_norm": instance_norm_ref,
        "avg_pool": lambda x: x.reshape(1, 3, 2, 2, 2, 3).mean(axis=(3, 5)),
        "einsum": lambda x: np.einsum("nchw,nwhu->nchu", x, x.transpose(0, 3, 2, 1)),
    }
    for name, xv, fn in specs:
        if name in numpy_refs:
            @mb.program(input_specs=[mb.TensorSpec(shape=xv.shape)])
            def nprog(x_in):
                return mb.identity(x=fn(x_in), name="y")
            program_case(f"op_{name}", nprog, {"x_in": xv}, {"y": numpy_refs[name](xv.astype(np.float64))})
            continue
        box = {}

        def ref_prog(dummy):
            box["value"] = fn(mb.const(val=xv)).val
            return mb.identity(x=dummy)
        try:
            mb.program(input_specs=[mb.TensorSpec(shape=(1,))])(ref_prog)
        except Exception as e:  # coremltools' value inference fails for a few configurations
            print(f"op_{name}: value inference failed ({type(e).__name__}); skipped")
            continue
        ref = box.get("value")
        if ref is None:
            print(f"op_{name}: no value inference; skipped")
            continue

        @mb.program(input_specs=[mb.TensorSpec(shape=xv.shape)])
        def prog(x_in):
            return mb.identity(x=fn(x_in), name="y")
        program_case(f"op_{name}", prog, {"x_in": xv}, {"y": np.asarray(ref, dtype=np.float64)})


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


# ---- a multifunction package ------------------------------------------------------------------

def multifunction_case():
    """Fixtures/mlprogram_multifunction/: model.mlpackage with functions "main" (relu(x)·w + b)
    and "tanh_head" (tanh(x)·w2), made by ct.utils.save_multifunction; expected_<function>.npy."""
    import tempfile
    d = os.path.join(ROOT, "Fixtures", "mlprogram_multifunction")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rng = np.random.RandomState(41)
    x = rng.uniform(-1, 1, (1, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    b = rng.uniform(-1, 1, (4,)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (3, 6)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=ct.target.iOS18)
    def p1(x_in):
        return mb.linear(x=mb.relu(x=x_in), weight=w, bias=b, name="y")

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=ct.target.iOS18)
    def p2(x_in):
        return mb.linear(x=mb.tanh(x=x_in), weight=w2, name="y")
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, prog in enumerate([p1, p2]):
            m = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18,
                           compute_precision=ct.precision.FLOAT32)
            paths.append(os.path.join(tmp, f"m{i}.mlpackage"))
            m.save(paths[-1])
        desc = ct.utils.MultiFunctionDescriptor()
        desc.add_function(paths[0], src_function_name="main", target_function_name="main")
        desc.add_function(paths[1], src_function_name="main", target_function_name="tanh_head")
        desc.default_function_name = "main"
        ct.utils.save_multifunction(desc, os.path.join(d, "model.mlpackage"))
    xd = x.astype(np.float64)
    np.save(os.path.join(d, "input_x_in.npy"), x)
    np.save(os.path.join(d, "expected_main.npy"), (np.maximum(xd, 0) @ w.T + b).astype(np.float32))
    np.save(os.path.join(d, "expected_tanh_head.npy"), (np.tanh(xd) @ w2.T).astype(np.float32))
    print("mlprogram_multifunction: written")


# ---- a stateful program (iOS 18) ----------------------------------------------------------------

def stateful_case():
    """Fixtures/mlprogram_state/: an accumulator (state acc += x; y = 2·acc), fp16 as Core ML
    states are; input_x_<t>.npy for three predictions and expected_y_<t>.npy = 2·Σ x."""
    d = os.path.join(ROOT, "Fixtures", "mlprogram_state")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

    @mb.program(input_specs=[mb.TensorSpec((1, 4), dtype=types.fp16), mb.StateTensorSpec((1, 4), dtype=types.fp16)],
                opset_version=ct.target.iOS18)
    def prog(x, acc):
        s = mb.add(x=mb.read_state(input=acc), y=x)
        mb.coreml_update_state(state=acc, value=s)
        return mb.mul(x=s, y=np.float16(2.0), name="y")
    ml = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18)
    ml.save(os.path.join(d, "model.mlpackage"))
    rng = np.random.RandomState(51)
    total = np.zeros((1, 4))
    for t in range(3):
        x = rng.uniform(-1, 1, (1, 4)).astype(np.float16).astype(np.float32)
        total = total + x
        np.save(os.path.join(d, f"input_x_{t}.npy"), x)
        np.save(os.path.join(d, f"expected_y_{t}.npy"), (2 * total).astype(np.float32))
    print("mlprogram_state: written")


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
    run_selected({"keras": keras_cases, "mil": mil_cases, "ops": single_op_cases, "compressed": compressed_cases,
                  "multifunction": multifunction_case, "state": stateful_case, "blob": blob_file})
