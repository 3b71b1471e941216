"""Crash inputs for the Keras HDF5 and .npy readers (issue 13, "never crash on a file").

The .h5 cases need h5py: run Scripts/make_crash_fixtures.py with the project's venv python
(/root/.cache/mlconv-venv/bin/python, see Scripts/python-env), which has h5py and numpy. The
.npy cases need nothing but the standard library.

Each .h5 file is a minimal Keras 2 full-model file (`model.save` layout): a `model_config`
JSON attribute, `keras_version`/`backend` attributes and a `model_weights` group with
`layer_names` and per-layer `weight_names`. HDF5 files are built in memory (libver='earliest',
no timestamps), so the bytes are deterministic for a given libhdf5.
"""
import io, json, struct

KERAS = [["keras", "{file}", "-o", "{tmp}/x.mlbundle"]]
INSPECT = [["inspect", "{file}"]]
PREDICT = "{fixtures}/bundles/digits_cnn_format1.0.mlbundle"


def _input_layer(name="input_1", shape=(None, 4)):
    return {"class_name": "InputLayer", "name": name, "inbound_nodes": [],
            "config": {"name": name, "batch_input_shape": list(shape), "dtype": "float32"}}


def _layer(cls, name, inbound, **config):
    return {"class_name": cls, "name": name, "inbound_nodes": inbound, "config": dict(name=name, **config)}


def _model(layers, outputs, inputs=(("input_1", 0, 0),)):
    return {"class_name": "Functional", "config": {
        "name": "model", "layers": layers,
        "input_layers": [list(r) for r in inputs], "output_layers": [list(r) for r in outputs]}}


def _h5(model, weights=None, build=None):
    """A Keras 2 full-model file. weights: layer name → list of (dataset name, array) under
    model_weights/<layer>/<layer>/; build(model_weights group) adds anything else."""
    import h5py, numpy as np
    weights = weights or {}
    bio = io.BytesIO()
    with h5py.File(bio, "w", libver="earliest", track_order=False) as f:
        f.attrs["keras_version"] = b"2.4.0"
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps(model, sort_keys=True).encode()
        mw = f.create_group("model_weights")
        names = [l["name"] for l in model["config"]["layers"]]
        mw.attrs["layer_names"] = np.array([n.encode() for n in names])
        for n in names:
            g = mw.create_group(n)
            ws = weights.get(n, [])
            g.attrs["weight_names"] = np.array([f"{n}/{w}".encode() for w, _ in ws], dtype="S64")
            for w, a in ws:
                g.create_dataset(f"{n}/{w}", data=np.asarray(a, dtype="<f4"), track_times=False)
        if build:
            build(mw)
    return bio.getvalue()


def _npy(shape_text):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_text
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin-1") + b"\0" * 16


def cases():
    inp = _input_layer()

    # 1. A layer called with no tensors (Keras 2 inbound node `[]`): the converters indexed
    #    ctx.inputs[0].
    yield {
        "file": "keras/activation_called_without_inputs.h5",
        "data": _h5(_model([inp, _layer("Activation", "act", [[]], activation="relu")], [("act", 0, 0)])),
        "commands": KERAS,
        "why": "Keras 2 config: an Activation whose inbound node lists no tensors ([[]]); the Activation converter "
               "indexed ctx.inputs[0] (Swift trap: index out of range). Now KerasConversionError.missingInputs "
               "(the session checks minimumInputCount). `inspect` crashed too but now summarizes the file "
               "(it runs the conversion with try?), so it is not replayed here.",
    }
    # Keras 3 form: {"args": [], "kwargs": {}} feeding a Reshape, then a Dense.
    yield {
        "file": "keras/reshape_called_without_inputs_keras3.h5",
        "data": _h5(_model([inp, {"class_name": "Reshape", "name": "reshape", "module": "keras.layers",
                                  "inbound_nodes": [{"args": [], "kwargs": {}}],
                                  "config": {"name": "reshape", "target_shape": [2, 2]}}],
                           [("reshape", 0, 0)])),
        "commands": KERAS,
        "why": "Keras 3 config: a Reshape whose inbound node has empty args and kwargs; the Reshape converter "
               "indexed ctx.inputs[0] (trap). Now KerasConversionError.missingInputs.",
    }

    # 2. Unbounded [layer, node, tensor] indices.
    chain = [inp, _layer("Activation", "act1", [[["input_1", 0, 0, {}]]], activation="relu")]
    yield {
        "file": "keras/inbound_tensor_index_2p31.h5",
        "data": _h5(_model(chain + [_layer("Activation", "act2", [[["act1", 0, 2 ** 31, {}]]], activation="relu")],
                           [("act2", 0, 0)])),
        "commands": KERAS + INSPECT,
        "why": "inbound node ['act1', 0, 2^31]: the session sized act1's outputs from the largest index read "
               "(2^31 + 1 output names, ~34 GB, and a 2^31-iteration loop over recorded shapes: abort/hang). "
               "Now KerasConversionError.invalidTensorReference from the config parser.",
    }
    yield {
        "file": "keras/output_layers_tensor_index_2p31.h5",
        "data": _h5(_model(chain, [("act1", 0, 2 ** 31)])),
        "commands": KERAS + INSPECT,
        "why": "output_layers ['act1', 0, 2^31]: the output count of act1 was taken from it (2^31 + 1 "
               "output names: huge allocation/hang). Now KerasConversionError.invalidTensorReference.",
    }

    # 3. Links from a layer's weight group back to the group itself.
    import numpy as np
    model = _model([inp, _layer("Dense", "dense", [[["input_1", 0, 0, {}]]], units=2, activation="linear", use_bias=True)],
                   [("dense", 0, 0)])

    def looped(kind):
        def build(mw):
            import h5py
            g = mw["dense"]
            # weight_names that are not stored where they say: the store then searches every
            # dataset below the group by name.
            g.attrs["weight_names"] = np.array([b"dense/kernel:0", b"dense/bias:0"])
            for name in ["loop_a", "loop_b", "loop_c", "loop_d"]:
                if kind == "soft":
                    g[name] = h5py.SoftLink("/model_weights/dense")
                else:
                    g[name] = g  # a hard link: the group is its own child
        return build

    yield {
        "file": "keras/model_weights_soft_links_to_itself.h5",
        "data": _h5(model, build=looped("soft")),
        "commands": KERAS,
        "why": "model_weights/dense holds four soft links to itself and weight_names that are not stored, so the "
               "weight search walked every dataset below the group: KerasWeightStore.allDatasets followed each "
               "link again (libhdf5 stops a soft-link chain at 16, so 4^16 paths: hang). Now each group is "
               "visited once (by HDF5 object identity) and the missing weights are a "
               "KerasConversionError.missingWeight. `inspect` hung too but now summarizes the file (weights read "
               "with try?), so it is not replayed.",
    }
    yield {
        "file": "keras/model_weights_hard_links_to_itself.h5",
        "data": _h5(model, build=looped("hard")),
        "commands": KERAS,
        "why": "model_weights/dense has hard links to itself (a cycle libhdf5 does not bound): "
               "KerasWeightStore.allDatasets recursed without end (stack overflow / hang). Now each group is "
               "visited once (by HDF5 object identity); KerasConversionError.missingWeight.",
    }

    # 4. .npy shapes whose element count overflows Int.
    for name, shape in [("shape_2p62x4", "(4611686018427387904, 4)"), ("shape_2p31x2p31x4", "(2147483648, 2147483648, 4)")]:
        yield {
            "file": f"npy/{name}.npy",
            "data": _npy(shape),
            "commands": [["predict", PREDICT, "--input", "digit={file}"]],
            "why": f"a .npy header with shape {shape}: the element count (product of the shape) overflowed Int "
                   "(Swift trap) before the typed-tensor work made it a checked product; now "
                   "NPYError.malformedHeader ('too many elements') naming the file.",
        }
