#!/usr/bin/env python3
"""Reference outputs for the real-world Keras corpus (../shared/corpus/keras), written to
Fixtures/corpus_keras/<file stem>/{input_<i>.npy, output_<i>.npy, case.json}.

Usage:
    PY=$(Scripts/python-env) && "$PY" Scripts/make_corpus_keras_refs.py            # every file below
    "$PY" Scripts/make_corpus_keras_refs.py --only dl4j_simple_lstm_keras1_theano_model

The model files stay in ../shared (third-party files, never copied into the repository); only
the small seeded inputs and Keras' outputs are committed. Tests/KerasFrontendTests/
CorpusKerasParityTests.swift converts each file with no hooks and compares (≤ 1e-4 relative).

How each reference is computed (`method` in FILES, recorded in case.json):
  tf_keras   tf_keras 2.21 (TF_USE_LEGACY_KERAS=1): `load_model`, or for weights-only files
             `model_from_json(sidecar)` + `load_weights`.
  keras3     Keras 3 (`keras.saving.load_model`) for files Keras 3 wrote.
  keras1     Keras 1.x files, which no installed Keras reads (tf_keras has no Keras 1 argument
             names or `Merge`): the config is translated to Keras 2 names by `keras1_to_keras2`
             below (the renames of Keras 2.2's keras/legacy/interfaces.py), the model is built in
             tf_keras, and the weights are loaded by tf_keras' own legacy HDF5 loader
             (`hdf5_format.load_weights_from_hdf5_group`), which applies Keras' Keras 1 → 2 weight
             conversion (per-gate LSTM/GRU arrays concatenated, Conv1D kernels squeezed, th kernels
             transposed) because the weights group records no keras_version. Lambda layers get their
             function from `LAMBDAS` (read from the marshalled bytecode by hand; Python 3.11 cannot
             load CPython 3.4 code objects).
  theano_numpy
             Keras 2 files written with the Theano backend. Theano's `T.nnet.conv2d` computes a true
             convolution (filter_flip=True), so standalone Keras 2.0–2.2 flipped such kernels when
             loading them on TensorFlow (`_need_convert_kernel` + `conv_utils.convert_kernel` in
             keras/engine/topology.py / saving.py). tf_keras dropped that conversion and reproduces
             the Theano model wrongly, so the reference is a NumPy forward pass of the layers with
             the flipped kernels; case.json records how far tf_keras' (unflipped) output is from it.

Inputs are seeded (crc32 of the stem), standard normal float32 unless INPUT_RANGES says otherwise.

Other helpers add their corpus files by appending one line to FILES (see its comment).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fixtures" / "corpus_keras"
CORPUS = ROOT.parent / "shared" / "corpus" / "keras"

# (model file, architecture JSON sidecar or None, method). Append new lines at the end.
FILES = [
    ("countnet_F-CRNN_keras1.h5", None, "keras1"),
    ("dl4j_bidirectional_lstm_keras1_theano.h5", None, "keras1"),
    ("dl4j_simple_lstm_keras1_theano_model.h5", None, "keras1"),
    ("ncondo_carnd_behavioral_cloning.h5", "ncondo_carnd_behavioral_cloning.json", "keras1"),
    ("dl4j_keras2_theano_dense_reshape_bn_conv2d.h5", None, "theano_numpy"),
    ("baiguo_gru_multi_io_weights_only.h5", "baiguo_gru_multi_io.json", "tf_keras"),
    ("atveit_keras2ios_weights.h5", None, "tf_keras"),
    ("r4ghu_mnistCNN.h5", None, "tf_keras"),
    ("teachablemachine_0N1cky1_keras_model.h5", None, "tf_keras"),
    ("ekgapp_unet_ecg.h5", None, "tf_keras"),
    ("dl4j_keras211_attention_functional.h5", None, "tf_keras"),
    ("dl4j_tfkeras_bidirectional_convlstm2d.h5", None, "tf_keras"),
    ("dl4j_tfkeras_tensorflowoplayer_transpose.h5", None, "tf_keras"),
    ("dl4j_functional_lambda.h5", None, "tf_keras"),
    ("dl4j_deepfm_multi_input_lambda.h5", None, "tf_keras"),
    ("juanolarte_keras3_lstm.h5", None, "keras3"),
    ("shreyansh_keras3_mnist_sequential.h5", None, "keras3"),
]

# Input value ranges (low, high) for files whose inputs are not zero-centred features.
INPUT_RANGES = {
    "ncondo_carnd_behavioral_cloning": (0.0, 255.0),   # RGB pixels; its Lambda maps them to [-1, 1]
    "teachablemachine_0N1cky1_keras_model": (-1.0, 1.0),  # MobileNet input range
    # standard normal inputs give 0 after its final ReLU (a check that cannot fail); this range does not
    "dl4j_keras211_attention_functional": (-1.0, 1.0),
}

# Lambda functions of Keras 1 files, keyed by (file stem, layer name): Python source equal to the
# marshalled bytecode (ncondo: LOAD_FAST image, LOAD_CONST 127.5, BINARY_TRUE_DIVIDE,
# LOAD_CONST 1.0, BINARY_SUBTRACT, RETURN_VALUE).
LAMBDAS = {
    ("ncondo_carnd_behavioral_cloning", "lambda_1"): "lambda image: image / 127.5 - 1.0",
}


def stem(name):
    for suffix in (".weights.h5", ".h5", ".keras"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def worker_env(flavor):
    env = dict(os.environ)
    env.update({
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONHASHSEED": "0",
        "KERAS_BACKEND": "tensorflow",
        "TF_USE_LEGACY_KERAS": "1" if flavor == "keras2" else "0",
    })
    return env


# ------------------------------------------------------------------------------------------------
# Keras 1 → Keras 2 config (Keras 2.2 keras/legacy/interfaces.py renames)
# ------------------------------------------------------------------------------------------------

K1_CLASSES = {
    "Convolution1D": "Conv1D", "AtrousConvolution1D": "Conv1D", "Convolution2D": "Conv2D",
    "AtrousConvolution2D": "Conv2D", "Convolution3D": "Conv3D", "Deconvolution2D": "Conv2DTranspose",
    "SeparableConvolution2D": "SeparableConv2D", "TimeDistributedDense": "Dense",
}
K1_RENAMES = {
    "Dense": {"output_dim": "units", "bias": "use_bias"},
    "Conv1D": {"nb_filter": "filters", "filter_length": "kernel_size", "subsample_length": "strides",
               "border_mode": "padding", "bias": "use_bias", "atrous_rate": "dilation_rate"},
    "Conv2D": {"nb_filter": "filters", "subsample": "strides", "border_mode": "padding",
               "dim_ordering": "data_format", "bias": "use_bias", "atrous_rate": "dilation_rate"},
    "LSTM": {"output_dim": "units", "inner_activation": "recurrent_activation"},
    "GRU": {"output_dim": "units", "inner_activation": "recurrent_activation"},
    "SimpleRNN": {"output_dim": "units"},
    "MaxPooling1D": {"pool_length": "pool_size", "stride": "strides", "border_mode": "padding"},
    "AveragePooling1D": {"pool_length": "pool_size", "stride": "strides", "border_mode": "padding"},
    "MaxPooling2D": {"border_mode": "padding", "dim_ordering": "data_format"},
    "AveragePooling2D": {"border_mode": "padding", "dim_ordering": "data_format"},
    "Dropout": {"p": "rate"},
}
K1_KEEP = {  # Keras 2 constructor arguments kept per class (everything else is dropped)
    "Dense": ["units", "activation", "use_bias"],
    "Conv1D": ["filters", "kernel_size", "strides", "padding", "activation", "use_bias", "dilation_rate"],
    "Conv2D": ["filters", "kernel_size", "strides", "padding", "activation", "use_bias", "dilation_rate", "data_format"],
    "LSTM": ["units", "activation", "recurrent_activation", "return_sequences", "go_backwards", "stateful", "unroll"],
    "GRU": ["units", "activation", "recurrent_activation", "return_sequences", "go_backwards", "stateful", "unroll"],
    "SimpleRNN": ["units", "activation", "return_sequences", "go_backwards", "stateful", "unroll"],
    "MaxPooling1D": ["pool_size", "strides", "padding"], "AveragePooling1D": ["pool_size", "strides", "padding"],
    "MaxPooling2D": ["pool_size", "strides", "padding", "data_format"],
    "AveragePooling2D": ["pool_size", "strides", "padding", "data_format"],
    "Dropout": ["rate"], "Activation": ["activation"], "Flatten": [], "ZeroPadding1D": ["padding"],
    "Reshape": ["target_shape"], "Lambda": [],
}


def keras1_layer(cls, cfg):
    """(Keras 2 class, Keras 2 config) of a Keras 1 layer."""
    if cls in ("Bidirectional", "TimeDistributed"):
        inner_cls, inner_cfg = keras1_layer(cfg["layer"]["class_name"], cfg["layer"]["config"])
        out = {"name": cfg["name"], "layer": {"class_name": inner_cls, "config": inner_cfg}}
        if "merge_mode" in cfg:
            out["merge_mode"] = cfg["merge_mode"]
        return cls, out
    new = K1_CLASSES.get(cls, cls)
    cfg = dict(cfg)
    for old, k2 in K1_RENAMES.get(new, {}).items():
        if old in cfg:
            cfg[k2] = cfg.pop(old)
    if new == "Conv2D" and "nb_row" in cfg:
        cfg["kernel_size"] = [cfg.pop("nb_row"), cfg.pop("nb_col")]
    if cfg.get("data_format") in ("th", "tf"):
        cfg["data_format"] = {"th": "channels_first", "tf": "channels_last"}[cfg["data_format"]]
    if new not in K1_KEEP:
        raise SystemExit(f"keras1_to_keras2: no translation for Keras 1 class {cls}")
    out = {k: cfg[k] for k in K1_KEEP[new] if k in cfg and cfg[k] is not None}
    out["name"] = cfg["name"]
    return new, out


def keras1_sequential(stem_name, config):
    """A tf_keras Sequential built from a Keras 1 Sequential config (a list of layers)."""
    import tf_keras as keras
    layers = [keras.layers.InputLayer(batch_input_shape=tuple(config[0]["config"]["batch_input_shape"]),
                                      name=config[0]["config"]["name"] + "_input")]
    for entry in config:
        cls, cfg = entry["class_name"], entry["config"]
        if cls == "Lambda":
            fn = eval(LAMBDAS[(stem_name, cfg["name"])])  # source written in this file, not read from the model
            layers.append(keras.layers.Lambda(fn, name=cfg["name"]))
            continue
        new, k2 = keras1_layer(cls, cfg)
        layers.append(keras.layers.deserialize({"class_name": new, "config": k2}))
    return keras.Sequential(layers)


def pre_2_3_gru_defaults(arch):
    """A model_to_json() written by Keras < 2.3 (no `reset_after` on GRU layers: Keras 2.3 added
    it, tf.keras 2 defaults it to True) with reset_after=False made explicit."""
    if isinstance(arch, str):
        arch = json.loads(arch)
    version = str(arch.get("keras_version", "2.3"))
    if tuple(int(p) for p in version.split(".")[:2] if p.isdigit()) >= (2, 3):
        return arch
    def walk(v):
        if isinstance(v, dict):
            if v.get("class_name") == "GRU" and isinstance(v.get("config"), dict):
                v["config"].setdefault("reset_after", False)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(arch)
    return arch


# ------------------------------------------------------------------------------------------------
# Workers
# ------------------------------------------------------------------------------------------------

def draw_inputs(stem_name, shapes):
    import numpy as np
    rng = np.random.default_rng(zlib.crc32(stem_name.encode()))
    lo_hi = INPUT_RANGES.get(stem_name)
    out = []
    for s in shapes:
        s = tuple(1 if d is None else d for d in s)
        if lo_hi:
            out.append(rng.uniform(lo_hi[0], lo_hi[1], size=s).astype("float32"))
        else:
            out.append(rng.standard_normal(size=s).astype("float32"))
    return out


def write_case(stem_name, model_file, config_file, method, names_in, xs, names_out, ys, extra):
    import numpy as np
    d = OUT / stem_name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    case = {"model": "corpus/keras/" + model_file, "method": method, "inputs": [], "outputs": []}
    if config_file:
        case["config"] = "corpus/keras/" + config_file
    for i, (n, x) in enumerate(zip(names_in, xs)):
        np.save(d / f"input_{i}.npy", np.ascontiguousarray(x, dtype=np.float32))
        case["inputs"].append({"name": n, "file": f"input_{i}.npy", "shape": list(x.shape)})
    for i, (n, y) in enumerate(zip(names_out, ys)):
        np.save(d / f"output_{i}.npy", np.ascontiguousarray(y, dtype=np.float32))
        case["outputs"].append({"name": n, "file": f"output_{i}.npy", "shape": list(y.shape)})
    case.update(extra)
    (d / "case.json").write_text(json.dumps(case, indent=2) + "\n")
    print(f"  {stem_name}: {method}, outputs " + ", ".join(str(tuple(y.shape)) for y in ys), flush=True)


def run_keras(entries, flavor):
    import h5py
    import numpy as np
    if flavor == "keras2":
        import tf_keras as keras
        from tf_keras.src.saving.legacy import hdf5_format
    else:
        import keras
    version = keras.__version__
    for model_file, config_file, method in entries:
        st = stem(model_file)
        path = CORPUS / model_file
        try:
            extra = {"keras": f"{'tf_keras' if flavor == 'keras2' else 'keras'} {version}"}
            if method == "keras1":
                arch = json.loads((CORPUS / config_file).read_text()) if config_file else None
                with h5py.File(path, "r") as f:
                    if arch is None:
                        arch = json.loads(f.attrs["model_config"])
                    if isinstance(arch, str):
                        arch = json.loads(arch)
                    if arch["class_name"] != "Sequential":
                        raise SystemExit(f"{model_file}: only Keras 1 Sequential models are translated here")
                    model = keras1_sequential(st, arch["config"])
                    hdf5_format.load_weights_from_hdf5_group(f["model_weights"] if "model_weights" in f else f, model)
                extra["reference"] = ("Keras 1 config translated to Keras 2 names, built in tf_keras; weights loaded by "
                                      "tf_keras' legacy HDF5 loader (its Keras 1 → 2 weight conversion)")
            elif config_file:
                text = (CORPUS / config_file).read_text()
                if flavor == "keras2":
                    text = json.dumps(pre_2_3_gru_defaults(json.loads(text)))
                    extra["reference"] = ("model_from_json + load_weights; GRU layers without reset_after get "
                                          "reset_after=False, the only GRU of the Keras < 2.3 that wrote the JSON")
                model = keras.models.model_from_json(text)
                model.load_weights(str(path))
            elif flavor == "keras2":
                model = keras.models.load_model(str(path), compile=False)
            else:
                model = keras.saving.load_model(str(path), compile=False)
        except Exception as e:  # a file this Keras cannot read: reported, no reference written
            print(f"  {st}: {flavor} cannot load it: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        shapes = [tuple(i.shape) for i in (model.inputs if isinstance(model.inputs, list) else [model.inputs])]
        xs = draw_inputs(st, shapes)
        ys = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
        if not isinstance(ys, list):
            ys = [ys]
        names_in = [t.name.split(":")[0] for t in model.inputs]
        names_in = [getattr(model, "input_names", None) or names_in][0]
        names_out = getattr(model, "output_names", None) or [t.name.split(":")[0] for t in model.outputs]
        write_case(st, model_file, config_file, method, names_in, xs, names_out, [np.asarray(y) for y in ys], extra)


def run_theano_numpy(entries):
    """dl4j_keras2_theano_dense_reshape_bn_conv2d: Dense → Reshape → BatchNormalization → Conv2D,
    Conv2D kernel flipped as Keras 2's loader did for Theano files."""
    import h5py
    import numpy as np
    for model_file, config_file, method in entries:
        st = stem(model_file)
        with h5py.File(CORPUS / model_file, "r") as h:
            arch = json.loads(h.attrs["model_config"])
            names = [l["class_name"] for l in arch["config"]]
            if names != ["Dense", "Reshape", "BatchNormalization", "Conv2D"]:
                raise SystemExit(f"{model_file}: theano_numpy knows Dense-Reshape-BN-Conv2D only, found {names}")
            cfg = [l["config"] for l in arch["config"]]
            w = h["model_weights"]
            def get(layer, var):
                return w[layer][f"{layer}/{var}"][()] if f"{layer}/{var}" in w[layer] else w[layer][layer][var][()]
            dense, reshape, bn, conv = (c["name"] for c in cfg)
            x = draw_inputs(st, [tuple(cfg[0]["batch_input_shape"])])[0]
            z = x.astype(np.float64) @ get(dense, "kernel") + get(dense, "bias")
            z = z.reshape((1,) + tuple(cfg[1]["target_shape"]))
            eps = cfg[2]["epsilon"]
            z = (z - get(bn, "moving_mean")) / np.sqrt(get(bn, "moving_variance") + eps) * get(bn, "gamma") + get(bn, "beta")
            k = get(conv, "kernel").astype(np.float64)
            assert cfg[3]["padding"] == "valid" and cfg[3]["strides"] == [1, 1] and cfg[3]["data_format"] == "channels_last"
            def correlate(z, k):
                kh, kw = k.shape[:2]
                oh, ow = z.shape[1] - kh + 1, z.shape[2] - kw + 1
                y = np.zeros((1, oh, ow, k.shape[3]))
                for i in range(oh):
                    for j in range(ow):
                        y[0, i, j] = np.einsum("hwc,hwco->o", z[0, i:i + kh, j:j + kw], k)
                return y + get(conv, "bias")
            flipped = k[::-1, ::-1]          # conv_utils.convert_kernel: all axes but the last two
            y = correlate(z, flipped)
            unflipped = correlate(z, k)      # what tf_keras (no Theano conversion) computes
        extra = {"reference": ("NumPy forward pass; Conv2D kernel flipped spatially as Keras 2.1's loader does for "
                               "backend='theano' files (Theano computes true convolutions)"),
                 "tf_keras_max_abs_difference": float(np.abs(unflipped - y).max())}
        write_case(st, model_file, config_file, method, [cfg[0]["name"] + "_input"], [x], [conv], [y.astype(np.float32)], extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], help="file stem to (re)generate; repeatable")
    ap.add_argument("--worker", choices=["keras2", "keras3", "numpy"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    entries = [e for e in FILES if not args.only or stem(e[0]) in args.only]
    if args.worker:
        if args.worker == "numpy":
            run_theano_numpy([e for e in entries if e[2] == "theano_numpy"])
        else:
            wanted = ("tf_keras", "keras1") if args.worker == "keras2" else ("keras3",)
            run_keras([e for e in entries if e[2] in wanted], args.worker)
        return
    if not CORPUS.is_dir():
        raise SystemExit(f"{CORPUS} not found: the corpus lives next to the repository (../shared)")
    missing = [e[0] for e in entries if not (CORPUS / e[0]).exists()]
    if missing:
        raise SystemExit(f"not in the corpus: {missing}")
    OUT.mkdir(parents=True, exist_ok=True)
    for worker in ("keras2", "keras3", "numpy"):
        print(f"[{worker}]", flush=True)
        cmd = [sys.executable, __file__, "--worker", worker] + sum((["--only", o] for o in args.only), [])
        subprocess.run(cmd, env=worker_env(worker), check=True)


if __name__ == "__main__":
    main()
