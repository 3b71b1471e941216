#!/usr/bin/env python3
"""Reference outputs of tf.keras for the convolution-family corpus models (issue 14).

For each file of FILES (under ../shared/corpus/keras, never copied into the repository) this
loads the model with tf.keras (TF_USE_LEGACY_KERAS=1, tf_keras), draws seeded N(0, 1) inputs of
batch 1 (seed: crc32 of the file stem), runs `model.predict` and writes
Fixtures/corpus_keras/<file stem>/input_<i>.npy, output_<i>.npy (float32, C order) and case.json
(file, input/output names, shapes, seed, library versions). Tests/KerasFrontendTests compares the
converter's predictions with these outputs (≤ 1e-4 relative).

Usage:  PY=$(Scripts/python-env); $PY Scripts/make_corpus_refs_conv.py [stem …]
"""

import json
import os
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "keras"
OUT = ROOT / "Fixtures" / "corpus_keras"

# The corpus models of this group (Conv1DTranspose U-Net, Bidirectional(ConvLSTM2D)).
FILES = [
    "ekgapp_unet_ecg.h5",
    "dl4j_tfkeras_bidirectional_convlstm2d.h5",
]


def main():
    os.environ.update({"TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0",
                       "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0"})
    import importlib.metadata
    import numpy as np
    import tensorflow as tf
    import tf_keras as K
    tf.config.experimental.enable_op_determinism()
    wanted = set(sys.argv[1:])
    for name in FILES:
        stem = Path(name).stem
        if wanted and stem not in wanted:
            continue
        src = CORPUS / name
        if not src.exists():
            sys.exit(f"{src} not found (the shared/ folder next to the repository holds the corpus)")
        model = K.models.load_model(str(src), compile=False)
        seed = zlib.crc32(stem.encode()) & 0x7FFFFFFF
        rng = np.random.default_rng(seed)
        inputs = [np.ascontiguousarray(rng.standard_normal((1,) + tuple(int(d) for d in t.shape[1:])), dtype=np.float32)
                  for t in model.inputs]
        outputs = model.predict(inputs, verbose=0)
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        d = OUT / stem
        d.mkdir(parents=True, exist_ok=True)
        case = {"file": f"corpus/keras/{name}", "generator": "Scripts/make_corpus_refs_conv.py", "seed": seed,
                "tensorflow": importlib.metadata.version("tensorflow"), "tf_keras": importlib.metadata.version("tf_keras"),
                "inputs": [], "outputs": []}
        for i, (t, x) in enumerate(zip(model.inputs, inputs)):
            np.save(d / f"input_{i}.npy", x)
            case["inputs"].append({"name": t.name.split(":")[0], "file": f"input_{i}.npy", "shape": list(x.shape)})
        for i, (n, y) in enumerate(zip(model.output_names, outputs)):
            y = np.ascontiguousarray(y, dtype=np.float32)
            np.save(d / f"output_{i}.npy", y)
            case["outputs"].append({"name": n, "file": f"output_{i}.npy", "shape": list(y.shape)})
        (d / "case.json").write_text(json.dumps(case, indent=2) + "\n")
        print(f"{stem}: inputs {[i['shape'] for i in case['inputs']]} outputs {[o['shape'] for o in case['outputs']]}")


if __name__ == "__main__":
    main()
