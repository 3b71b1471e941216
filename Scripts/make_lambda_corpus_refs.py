#!/usr/bin/env python3
"""Reference outputs for the corpus Keras files whose Lambda layers mlconv lowers automatically
(../shared/corpus/keras), written to Fixtures/corpus_keras_lambda/<file stem>/{input_<i>.npy,
output_<i>.npy, case.json}.

Usage:
    PY=$(Scripts/python-env) && "$PY" Scripts/make_lambda_corpus_refs.py

The model files stay in ../shared; only the small seeded inputs and Keras' outputs are committed.
Tests/KerasFrontendTests/LambdaCorpusParityTests.swift converts each file with no hooks and
compares (≤ 1e-4 relative).

tf_keras 2.21 runs on CPython 3.11, whose `marshal` cannot load the CPython 2.7 / 3.6 code
objects these files store, so each Lambda's function is re-supplied from Python source written
in LAMBDAS below (read from the bytecode with `dis`-like inspection by hand, never executed), the
architecture is rebuilt with `model_from_json` and the file's weights loaded with
`load_weights`. The TensorFlowOpLayer file loads as it is.

Inputs are seeded (crc32 of the stem): standard normal float32, or for an input feeding an
Embedding uniform integers in [0, input_dim).
"""

import json
import os
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fixtures" / "corpus_keras_lambda"
CORPUS = ROOT.parent / "shared" / "corpus" / "keras"

FILES = [
    "dl4j_functional_lambda.h5",
    "dl4j_deepfm_multi_input_lambda.h5",
    "dl4j_tfkeras_tensorflowoplayer_transpose.h5",
]

# (file stem, layer name) → Python source of the function the bytecode holds; closure values
# are the ones the config stores (`function[2]`).
LAMBDAS = {
    ("dl4j_functional_lambda", "lambda_3"): "lambda x: x ** 2",
    ("dl4j_functional_lambda", "lambda_4"): "lambda x: 3 * x",
    ("dl4j_deepfm_multi_input_lambda", "cat_embed_2d_genure_mean"): "lambda x: K.mean(x, axis=1, keepdims=True)",
    ("dl4j_deepfm_multi_input_lambda", "embed_1d_mean"): "lambda x: K.mean(x, axis=1, keepdims=False)",
    ("dl4j_deepfm_multi_input_lambda", "sum_of_tensors"): "lambda x: K.sum(x, axis=1)",
    ("dl4j_deepfm_multi_input_lambda", "square_of_tensors"): "lambda x: K.square(x)",
    ("dl4j_deepfm_multi_input_lambda", "lambda_1"): "lambda x: x * 0.5",
}


def stem(name):
    return name[:-3] if name.endswith(".h5") else name


def main():
    os.environ.update({"TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0", "CUDA_VISIBLE_DEVICES": "",
                       "TF_USE_LEGACY_KERAS": "1"})
    import h5py
    import numpy as np
    import tf_keras as keras
    from tf_keras.src.utils import generic_utils
    keras.__internal__.enable_unsafe_deserialization()
    import types
    K = keras.backend
    # The re-supplied functions' global names (K), found through the Lambda config's "module".
    scope = types.ModuleType("mlconv_lambda_globals")
    scope.K = K
    sys.modules[scope.__name__] = scope

    for name in FILES:
        s = stem(name)
        path = CORPUS / name
        if not path.exists():
            sys.exit(f"missing {path}")
        with h5py.File(path, "r") as h:
            config = json.loads(h.attrs["model_config"])
        replaced = []
        for layer in config["config"]["layers"]:
            if layer["class_name"] != "Lambda":
                continue
            key = (s, layer["name"])
            if key not in LAMBDAS:
                sys.exit(f"{name}: no source for Lambda {layer['name']}")
            fn = eval(LAMBDAS[key], {"K": K})  # our own source text, not the model's code
            layer["config"]["function"] = list(generic_utils.func_dump(fn))
            layer["config"]["function_type"] = "lambda"
            layer["config"]["module"] = scope.__name__
            replaced.append(layer["name"])
        if replaced:
            model = keras.models.model_from_json(json.dumps(config), custom_objects={"K": K})
            model.load_weights(str(path))
        else:
            model = keras.models.load_model(str(path), compile=False)

        rng = np.random.default_rng(zlib.crc32(s.encode()))
        embedding_dims = {}
        for layer in config["config"]["layers"]:
            if layer["class_name"] == "Embedding":
                for node in layer["inbound_nodes"]:
                    embedding_dims[node[0][0]] = layer["config"]["input_dim"]
        inputs = []
        for t in model.inputs:
            shape = (1,) + tuple(int(d) for d in t.shape[1:])
            layer_name = t.name.split(":")[0].split("/")[0]
            if layer_name in embedding_dims:
                inputs.append(rng.integers(0, embedding_dims[layer_name], shape).astype(np.float32))
            else:
                inputs.append(rng.standard_normal(shape).astype(np.float32))
        outputs = model.predict(inputs, verbose=0)
        if not isinstance(outputs, list):
            outputs = [outputs]
        d = OUT / s
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*.npy"):
            f.unlink()
        for i, x in enumerate(inputs):
            np.save(d / f"input_{i}.npy", x)
        for i, y in enumerate(outputs):
            np.save(d / f"output_{i}.npy", np.ascontiguousarray(y, dtype=np.float32))
        case = {
            "file": f"corpus/keras/{name}",
            "inputs": [t.name.split(":")[0].split("/")[0] for t in model.inputs],
            "outputs": list(model.output_names),
            "lambdas_resupplied": {n: LAMBDAS[(s, n)] for n in replaced},
            "generator": "Scripts/make_lambda_corpus_refs.py (tf_keras " + keras.__version__ + ")",
        }
        (d / "case.json").write_text(json.dumps(case, indent=1) + "\n")
        print(f"{name}: {len(inputs)} inputs, outputs {[list(o.shape) for o in outputs]}")


if __name__ == "__main__":
    main()
