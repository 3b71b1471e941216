#!/usr/bin/env python3
"""Keras 1.x test files and their reference outputs: Fixtures/keras1/<case>/{model.h5,
input_<i>.npy, output_<i>.npy, case.json}.

Usage:  PY=$(Scripts/python-env) && TF_USE_LEGACY_KERAS=1 "$PY" Scripts/make_keras1_fixtures.py

No installed Keras writes Keras 1 files, so model.h5 is written here with h5py in the layout of
Keras 1.2.2's `model.save` (root `keras_version` "1.2.2" and `model_config` with Keras 1 class
and argument names; `model_weights/<layer>` groups with `weight_names` such as `lstm_1_W_i`, in
Keras 1's order; no `keras_version` in `model_weights`, which is how Keras 2 recognizes Keras 1
weights). Weights are seeded random values.

References come from Keras itself wherever it can compute them:
- the equivalent Keras 2 model is built in tf_keras and the hand-written file's weights are loaded
  into it by tf_keras' legacy HDF5 loader (`hdf5_format.load_weights_from_hdf5_group`), which
  applies Keras' own Keras 1 → 2 weight conversion (per-gate GRU arrays, Conv1D kernels of Keras
  1.1 and 1.2, Deconvolution2D kernels, th-ordered Conv2D kernels);
- `dim_ordering='th'` layers are computed channels-last between two `Permute` layers (tf_keras on
  CPU has no channels-first convolution), so Flatten sees Keras 1's channels-first order;
- the Merge modes (no Keras 2 layer has `cos` with Keras 1's epsilon) use NumPy with the formulas
  of Keras 1.2.2's `Merge.call` (keras/engine/topology.py).
"""

import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fixtures" / "keras1"


def keras1_file(path, config, weights, keras_version="1.2.2"):
    """Writes a Keras 1.2.2-style full model. `weights`: [(layer name, [(weight name, array)])]
    in Keras 1's flattened layer order (layers without weights included with [])."""
    with h5py.File(path, "w") as f:
        f.attrs["keras_version"] = keras_version.encode()
        f.attrs["model_config"] = json.dumps(config).encode()
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = [n.encode() for n, _ in weights]
        for n, ws in weights:
            lg = g.create_group(n)
            lg.attrs["weight_names"] = [w.encode() for w, _ in ws]
            for w, a in ws:
                lg.create_dataset(w, data=np.asarray(a, dtype=np.float32))


def save_case(name, model_h5, inputs, outputs, note):
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    case = {"model": "model.h5", "note": note, "inputs": [], "outputs": []}
    for i, (n, x) in enumerate(inputs):
        np.save(d / f"input_{i}.npy", np.ascontiguousarray(x, dtype=np.float32))
        case["inputs"].append({"name": n, "file": f"input_{i}.npy", "shape": list(x.shape)})
    for i, (n, y) in enumerate(outputs):
        np.save(d / f"output_{i}.npy", np.ascontiguousarray(y, dtype=np.float32))
        case["outputs"].append({"name": n, "file": f"output_{i}.npy", "shape": list(np.shape(y))})
    (d / "case.json").write_text(json.dumps(case, indent=2) + "\n")
    print(f"  {name}: " + ", ".join(f"{n} {tuple(np.shape(y))}" for n, y in outputs))


def load_into(model, path):
    from tf_keras.src.saving.legacy import hdf5_format
    with h5py.File(path, "r") as f:
        hdf5_format.load_weights_from_hdf5_group(f["model_weights"], model)


def th_conv_pool_flatten_dense(rng, keras):
    """Convolution2D / MaxPooling2D / ZeroPadding2D with dim_ordering='th', BatchNormalization(axis=1,
    mode=0), Flatten (channels-first order), Dense."""
    name = "th_conv_pool_flatten_dense"
    W = rng.normal(0, 0.3, (4, 3, 3, 3)); b = rng.normal(0, 0.1, 4)          # th: (filters, Cin, rows, cols)
    gamma, beta = rng.uniform(0.5, 1.5, 4), rng.normal(0, 0.1, 4)
    mean, var = rng.normal(0, 0.1, 4), rng.uniform(0.5, 1.5, 4)
    Wd = rng.normal(0, 0.2, (4 * 5 * 5, 5)); bd = rng.normal(0, 0.1, 5)
    config = {"class_name": "Sequential", "config": [
        {"class_name": "Convolution2D", "config": {"name": "convolution2d_1", "nb_filter": 4, "nb_row": 3, "nb_col": 3,
                                                   "init": "glorot_uniform", "activation": "relu", "border_mode": "same",
                                                   "subsample": [1, 1], "dim_ordering": "th", "W_regularizer": None,
                                                   "b_regularizer": None, "activity_regularizer": None, "W_constraint": None,
                                                   "b_constraint": None, "bias": True, "trainable": True,
                                                   "batch_input_shape": [None, 3, 8, 8], "input_dtype": "float32"}},
        {"class_name": "MaxPooling2D", "config": {"name": "maxpooling2d_1", "pool_size": [2, 2], "strides": [2, 2],
                                                  "border_mode": "valid", "dim_ordering": "th", "trainable": True}},
        {"class_name": "ZeroPadding2D", "config": {"name": "zeropadding2d_1", "padding": [1, 0, 1, 0], "dim_ordering": "th",
                                                   "trainable": True}},
        {"class_name": "BatchNormalization", "config": {"name": "batchnormalization_1", "epsilon": 0.001, "mode": 0, "axis": 1,
                                                        "momentum": 0.99, "beta_init": "zero", "gamma_init": "one",
                                                        "gamma_regularizer": None, "beta_regularizer": None, "trainable": True}},
        {"class_name": "Flatten", "config": {"name": "flatten_1", "trainable": True}},
        {"class_name": "Dense", "config": {"name": "dense_1", "output_dim": 5, "init": "glorot_uniform", "activation": "softmax",
                                           "W_regularizer": None, "b_regularizer": None, "activity_regularizer": None,
                                           "W_constraint": None, "b_constraint": None, "bias": True, "input_dim": 100,
                                           "trainable": True}},
    ]}
    path = OUT / name / "model.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    keras1_file(path, config, [
        ("convolution2d_1", [("convolution2d_1_W", W), ("convolution2d_1_b", b)]), ("maxpooling2d_1", []), ("zeropadding2d_1", []),
        ("batchnormalization_1", [("batchnormalization_1_gamma", gamma), ("batchnormalization_1_beta", beta),
                                  ("batchnormalization_1_running_mean", mean), ("batchnormalization_1_running_std", var)]),
        ("flatten_1", []), ("dense_1", [("dense_1_W", Wd), ("dense_1_b", bd)])])
    L = keras.layers
    x_in = L.Input((3, 8, 8))
    h = L.Permute((2, 3, 1))(x_in)
    conv = L.Conv2D(4, 3, padding="same", activation="relu")
    h = conv(h)
    h = L.MaxPooling2D(2)(h)
    h = L.ZeroPadding2D(((1, 0), (1, 0)))(h)
    bn = L.BatchNormalization(axis=-1, epsilon=0.001)
    h = bn(h)
    h = L.Permute((3, 1, 2))(h)
    h = L.Flatten()(h)
    dense = L.Dense(5, activation="softmax")
    model = keras.Model(x_in, dense(h))
    conv.set_weights([np.transpose(W, (2, 3, 1, 0)), b])
    bn.set_weights([gamma, beta, mean, var])
    dense.set_weights([Wd, bd])
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    save_case(name, path, [("convolution2d_1_input", x)], [("dense_1", model.predict(x, verbose=0))],
              "th ordering: NCHW input, Keras 1 th kernel (filters, Cin, rows, cols); Flatten in channels-first order")


def gru_timedistributed_dense(rng, keras):
    """GRU with 9 per-gate arrays (consume_less='cpu'), TimeDistributed(Dense) in Keras 1 form."""
    name = "gru_timedistributed_dense"
    units, d = 4, 3
    gates = {g: (rng.normal(0, 0.4, (d, units)), rng.normal(0, 0.4, (units, units)), rng.normal(0, 0.1, units)) for g in "zrh"}
    Wt, bt = rng.normal(0, 0.4, (units, 2)), rng.normal(0, 0.1, 2)
    config = {"class_name": "Sequential", "config": [
        {"class_name": "GRU", "config": {"name": "gru_1", "output_dim": units, "init": "glorot_uniform", "inner_init": "orthogonal",
                                         "activation": "tanh", "inner_activation": "hard_sigmoid", "W_regularizer": None,
                                         "U_regularizer": None, "b_regularizer": None, "dropout_W": 0.0, "dropout_U": 0.0,
                                         "return_sequences": True, "go_backwards": False, "stateful": False, "unroll": False,
                                         "consume_less": "cpu", "input_dim": d, "input_length": None, "trainable": True,
                                         "batch_input_shape": [None, 5, d], "input_dtype": "float32"}},
        {"class_name": "TimeDistributed", "config": {"name": "timedistributed_1", "trainable": True, "layer": {
            "class_name": "Dense", "config": {"name": "dense_1", "output_dim": 2, "init": "glorot_uniform", "activation": "tanh",
                                              "W_regularizer": None, "b_regularizer": None, "activity_regularizer": None,
                                              "W_constraint": None, "b_constraint": None, "bias": True, "input_dim": None,
                                              "trainable": True}}}},
    ]}
    path = OUT / name / "model.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    gw = []
    for g in "zrh":
        gw += [(f"gru_1_W_{g}", gates[g][0]), (f"gru_1_U_{g}", gates[g][1]), (f"gru_1_b_{g}", gates[g][2])]
    keras1_file(path, config, [("gru_1", gw), ("timedistributed_1", [("dense_1_W", Wt), ("dense_1_b", bt)])])
    L = keras.layers
    model = keras.Sequential([L.InputLayer((5, d)),
                              L.GRU(units, recurrent_activation="hard_sigmoid", return_sequences=True, reset_after=False),
                              L.TimeDistributed(L.Dense(2, activation="tanh"))])
    load_into(model, path)
    x = rng.standard_normal((1, 5, d)).astype(np.float32)
    save_case(name, path, [("gru_1_input", x)], [("timedistributed_1", model.predict(x, verbose=0))],
              "GRU per-gate weights (z, r, h) converted by tf_keras' legacy loader; hard_sigmoid recurrent activation")


def conv1d_atrous_embedding(rng, keras):
    """Embedding → Convolution1D (Keras 1.1 kernel layout) → AtrousConvolution1D → MaxPooling1D
    (pool_length, stride) → Flatten → Dense."""
    name = "conv1d_atrous_embedding"
    E = rng.normal(0, 0.5, (10, 4))
    W1 = rng.normal(0, 0.4, (3, 4, 3, 1)); b1 = rng.normal(0, 0.1, 3)      # Keras 1.1: (filters, Cin, k, 1)
    W2 = rng.normal(0, 0.4, (2, 1, 3, 2)); b2 = rng.normal(0, 0.1, 2)      # Keras 1.2: (k, 1, Cin, filters)
    Wd, bd = rng.normal(0, 0.3, (10, 1)), rng.normal(0, 0.1, 1)
    conv = {"init": "glorot_uniform", "W_regularizer": None, "b_regularizer": None, "activity_regularizer": None,
            "W_constraint": None, "b_constraint": None, "bias": True, "input_dim": None, "input_length": None, "trainable": True}
    config = {"class_name": "Sequential", "config": [
        {"class_name": "Embedding", "config": {"name": "embedding_1", "input_dim": 10, "output_dim": 4, "init": "uniform",
                                               "input_length": 12, "mask_zero": False, "dropout": 0.0, "W_regularizer": None,
                                               "activity_regularizer": None, "W_constraint": None, "trainable": True,
                                               "batch_input_shape": [None, 12], "input_dtype": "int32"}},
        {"class_name": "Convolution1D", "config": dict(conv, name="convolution1d_1", nb_filter=3, filter_length=3,
                                                       border_mode="same", subsample_length=1, activation="relu")},
        {"class_name": "AtrousConvolution1D", "config": dict(conv, name="atrousconvolution1d_1", nb_filter=2, filter_length=2,
                                                             border_mode="valid", subsample_length=1, atrous_rate=2,
                                                             activation="linear")},
        {"class_name": "MaxPooling1D", "config": {"name": "maxpooling1d_1", "pool_length": 2, "stride": 2, "border_mode": "valid",
                                                  "trainable": True}},
        {"class_name": "Flatten", "config": {"name": "flatten_1", "trainable": True}},
        {"class_name": "Dense", "config": dict(conv, name="dense_1", output_dim=1, activation="sigmoid")},
    ]}
    path = OUT / name / "model.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    keras1_file(path, config, [
        ("embedding_1", [("embedding_1_W", E)]), ("convolution1d_1", [("convolution1d_1_W", W1), ("convolution1d_1_b", b1)]),
        ("atrousconvolution1d_1", [("atrousconvolution1d_1_W", W2), ("atrousconvolution1d_1_b", b2)]),
        ("maxpooling1d_1", []), ("flatten_1", []), ("dense_1", [("dense_1_W", Wd), ("dense_1_b", bd)])])
    L = keras.layers
    model = keras.Sequential([L.InputLayer((12,)), L.Embedding(10, 4), L.Conv1D(3, 3, padding="same", activation="relu"),
                              L.Conv1D(2, 2, dilation_rate=2), L.MaxPooling1D(2, 2), L.Flatten(), L.Dense(1, activation="sigmoid")])
    load_into(model, path)
    x = rng.integers(0, 10, (1, 12)).astype(np.float32)
    save_case(name, path, [("embedding_1_input", x)], [("dense_1", model.predict(x, verbose=0))],
              "Conv1D kernels of Keras 1.1 (filters, Cin, k, 1) and 1.2 (k, 1, Cin, filters), converted by tf_keras' legacy loader")


def deconv_tf(rng, keras):
    """Deconvolution2D (dim_ordering tf, Keras 1 kernel (rows, cols, Cin, filters))."""
    name = "deconvolution2d_tf"
    W = rng.normal(0, 0.3, (3, 3, 3, 2)); b = rng.normal(0, 0.1, 2)
    config = {"class_name": "Sequential", "config": [
        {"class_name": "Deconvolution2D", "config": {"name": "deconvolution2d_1", "nb_filter": 2, "nb_row": 3, "nb_col": 3,
                                                     "output_shape": [None, 9, 9, 2], "subsample": [2, 2], "border_mode": "valid",
                                                     "dim_ordering": "tf", "activation": "linear", "init": "glorot_uniform",
                                                     "W_regularizer": None, "b_regularizer": None, "activity_regularizer": None,
                                                     "W_constraint": None, "b_constraint": None, "bias": True, "trainable": True,
                                                     "batch_input_shape": [None, 4, 4, 3], "input_dtype": "float32"}}]}
    path = OUT / name / "model.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    keras1_file(path, config, [("deconvolution2d_1", [("deconvolution2d_1_W", W), ("deconvolution2d_1_b", b)])])
    L = keras.layers
    model = keras.Sequential([L.InputLayer((4, 4, 3)), L.Conv2DTranspose(2, 3, strides=2, padding="valid")])
    load_into(model, path)
    x = rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
    save_case(name, path, [("deconvolution2d_1_input", x)], [("deconvolution2d_1", model.predict(x, verbose=0))],
              "Keras 1 Deconvolution2D kernel (rows, cols, Cin, filters) → (rows, cols, filters, Cin) by tf_keras' legacy loader")


def merge_modes(rng, keras):
    """A Keras 1 functional Model: two Dense branches merged with every Merge mode, and a Keras 1
    Sequential whose first layer is a Merge of two Sequentials (concat) followed by Dense."""
    name = "merge_modes"
    d = 6
    Wa, ba = rng.normal(0, 0.5, (4, d)), rng.normal(0, 0.1, d)
    Wb, bb = rng.normal(0, 0.5, (4, d)), rng.normal(0, 0.1, d)
    dense = lambda n, units, act="linear": {"class_name": "Dense", "name": n, "config": {
        "name": n, "output_dim": units, "activation": act, "init": "glorot_uniform", "W_regularizer": None, "b_regularizer": None,
        "activity_regularizer": None, "W_constraint": None, "b_constraint": None, "bias": True, "input_dim": None, "trainable": True}}
    def node(*names):
        return [[[n, 0, 0] for n in names]]
    layers = [
        {"class_name": "InputLayer", "name": "input_1", "config": {"name": "input_1", "batch_input_shape": [None, 4],
                                                                   "input_dtype": "float32", "sparse": False}, "inbound_nodes": []},
        dict(dense("dense_a", d, "tanh"), inbound_nodes=node("input_1")),
        dict(dense("dense_b", d, "tanh"), inbound_nodes=node("input_1")),
    ]
    modes = ["sum", "mul", "ave", "max", "concat", "dot", "cos"]
    for m in modes:
        layers.append({"class_name": "Merge", "name": "merge_" + m, "inbound_nodes": node("dense_a", "dense_b"),
                       "config": {"name": "merge_" + m, "mode": m, "mode_type": "raw", "concat_axis": -1,
                                  "dot_axes": [1, 1] if m in ("dot", "cos") else -1, "output_shape": None,
                                  "output_shape_type": "raw", "output_mask": None, "output_mask_type": "raw", "arguments": {}}})
    config = {"class_name": "Model", "config": {"name": "model_1", "layers": layers, "input_layers": [["input_1", 0, 0]],
                                                "output_layers": [["merge_" + m, 0, 0] for m in modes]}}
    path = OUT / name / "model.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    keras1_file(path, config, [("input_1", []), ("dense_a", [("dense_a_W", Wa), ("dense_a_b", ba)]),
                               ("dense_b", [("dense_b_W", Wb), ("dense_b_b", bb)])] + [("merge_" + m, []) for m in modes])
    x = rng.standard_normal((1, 4)).astype(np.float32)
    a = np.tanh(x.astype(np.float64) @ Wa + ba); b = np.tanh(x.astype(np.float64) @ Wb + bb)
    dot = (a * b).sum(axis=1, keepdims=True)
    cos = dot / np.maximum(np.sqrt((a * a).sum(1, keepdims=True) * (b * b).sum(1, keepdims=True)), 1e-7)
    outs = {"sum": a + b, "mul": a * b, "ave": (a + b) / 2, "max": np.maximum(a, b), "concat": np.concatenate([a, b], -1),
            "dot": dot, "cos": cos[:, :, None]}
    save_case(name, path, [("input_1", x)], [("merge_" + m, outs[m]) for m in modes],
              "NumPy: the formulas of Keras 1.2.2 Merge.call (cos: dot / max(sqrt(|a|²·|b|²), 1e-7), expand_dims(…, 1))")

    # Sequential whose first layer merges two Sequentials.
    name = "sequential_merge_first"
    W1, b1 = rng.normal(0, 0.5, (3, 4)), rng.normal(0, 0.1, 4)
    W2, b2 = rng.normal(0, 0.5, (5, 2)), rng.normal(0, 0.1, 2)
    W3, b3 = rng.normal(0, 0.5, (6, 1)), rng.normal(0, 0.1, 1)
    def first(n, units, dim):
        e = dense(n, units, "relu"); e = {"class_name": "Dense", "config": dict(e["config"], batch_input_shape=[None, dim],
                                                                                  input_dtype="float32")}
        return e
    strip = lambda e: {"class_name": e["class_name"], "config": e["config"]}
    config = {"class_name": "Sequential", "config": [
        {"class_name": "Merge", "config": {"name": "merge_1", "mode": "concat", "mode_type": "raw", "concat_axis": -1,
                                           "dot_axes": -1, "output_shape": None, "output_shape_type": "raw", "output_mask": None,
                                           "output_mask_type": "raw", "arguments": {},
                                           "layers": [{"class_name": "Sequential", "config": [first("dense_1", 4, 3)]},
                                                      {"class_name": "Sequential", "config": [first("dense_2", 2, 5)]}]}},
        strip(dense("dense_3", 1, "sigmoid"))]}
    path = OUT / name / "model.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    keras1_file(path, config, [("dense_1", [("dense_1_W", W1), ("dense_1_b", b1)]), ("dense_2", [("dense_2_W", W2), ("dense_2_b", b2)]),
                               ("merge_1", []), ("dense_3", [("dense_3_W", W3), ("dense_3_b", b3)])])
    x1 = rng.standard_normal((1, 3)).astype(np.float32); x2 = rng.standard_normal((1, 5)).astype(np.float32)
    L = keras.layers
    i1, i2 = L.Input((3,)), L.Input((5,))
    d1, d2, d3 = L.Dense(4, activation="relu"), L.Dense(2, activation="relu"), L.Dense(1, activation="sigmoid")
    model = keras.Model([i1, i2], d3(L.Concatenate()([d1(i1), d2(i2)])))
    d1.set_weights([W1, b1]); d2.set_weights([W2, b2]); d3.set_weights([W3, b3])
    save_case(name, path, [("dense_1_input", x1), ("dense_2_input", x2)], [("dense_3", model.predict([x1, x2], verbose=0))],
              "Keras 1 Sequential starting with Merge([Sequential, Sequential], mode='concat'); weights in flattened-layer order")


def main():
    import tf_keras as keras
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    rng = np.random.default_rng(20170101)
    for build in (th_conv_pool_flatten_dense, gru_timedistributed_dense, conv1d_atrous_embedding, deconv_tf, merge_modes):
        build(rng, keras)


if __name__ == "__main__":
    main()
