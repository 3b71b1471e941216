#!/usr/bin/env python3
"""Generate mlconv's Keras test fixtures (Fixtures/keras/) and the demo model (Fixtures/demo/).

Usage:
    python Scripts/make_fixtures.py                 # everything
    python Scripts/make_fixtures.py --only tiny_yolo        # both flavours of one fixture
    python Scripts/make_fixtures.py --only pooling_k3 --only demo
    python Scripts/make_fixtures.py --list

Needs tensorflow (2.x with Keras 3), tf_keras (Keras 2 API), h5py, numpy and scikit-learn;
`Scripts/python-env` builds a venv with the pinned versions and prints its python.

How it works: this process (the orchestrator) imports no TensorFlow. It starts one worker
subprocess per Keras flavour: `keras2` runs with TF_USE_LEGACY_KERAS=1 and builds models with
`tf_keras`; `keras3` builds them with `keras` 3. Each worker, per fixture:
  1. resets Keras' global state (so auto-generated layer names never depend on what ran before),
  2. builds the model, sets EVERY weight to seeded random values (BatchNormalization statistics
     and PReLU alphas included), optionally re-centres BatchNormalization moving statistics on the
     fixture input so that deep nets neither saturate nor vanish,
  3. draws seeded inputs, runs `model.predict`, saves the model (`model.save('model.h5')`, or
     `save_weights('weights.h5')` + `to_json()` for weights-only fixtures),
  4. reloads the saved files with Keras and checks that the reloaded model reproduces the outputs,
  5. writes input_<i>.npy / output_<i>.npy (float32, C order, leading batch dimension 1).
The orchestrator merges the workers' manifest entries into Fixtures/keras/manifest.json.

Seeds are derived from the fixture's base name (crc32), so the _k2 and _k3 variants of a fixture
get the same inputs, and `--only` reproduces exactly what a full run writes.
"""

import argparse
import importlib.metadata
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "Fixtures"
KERAS_DIR = FIXTURES / "keras"
DEMO_DIR = FIXTURES / "demo"
GENERATOR = "Scripts/make_fixtures.py"

FLAVOR_SUFFIX = {"keras2": "_k2", "keras3": "_k3"}

# Source of the Lambda functions, compiled under a fixed file name so that the marshalled
# bytecode stored in the .h5 files does not depend on where this script lives.
LAMBDA_SOURCE = '''
def res_crop(x):
    return x[:, 2:-2, 2:-2]


def rescale_output(x):
    return (x + 1) * 127.5
'''
_lambda_ns = {}
exec(compile(LAMBDA_SOURCE, "mlconv_style_lambdas.py", "exec"), _lambda_ns)
res_crop = _lambda_ns["res_crop"]
rescale_output = _lambda_ns["rescale_output"]


# ----------------------------------------------------------------------------------------------
# Fixture registry (no TensorFlow needed to read it)
# ----------------------------------------------------------------------------------------------

class Fx:
    def __init__(self, base, builder, flavors=("keras2", "keras3"), issue=2, kind="full"):
        self.base = base
        self.builder = builder  # name of a build_* function below, or the function itself
        self.flavors = flavors
        self.issue = issue
        self.kind = kind

    def names(self):
        return [(self.base + FLAVOR_SUFFIX[f], f) for f in self.flavors]


REGISTRY = [
    # --- seed look-alikes (seed-models.md) ---
    Fx("fer_cnn", "build_fer_cnn"),
    Fx("tiny_yolo", "build_tiny_yolo"),
    Fx("style_transfer", "build_style_transfer"),
    Fx("style_transfer_lambda", "build_style_transfer_lambda", issue=3),
    Fx("style_transfer_lambda_weights", "build_style_transfer_lambda", flavors=("keras2",),
       issue=3, kind="weights+json"),
    Fx("style_transfer_reflect", "build_style_transfer_reflect", issue=3),
    Fx("sketch_cnn", "build_sketch_cnn"),
    Fx("small_unet", "build_small_unet"),
    Fx("quickdraw_rnn", "build_quickdraw_rnn", issue=6),
    # --- layer coverage ---
    Fx("conv2d_variants", "build_conv2d_variants"),
    Fx("depthwise_separable", "build_depthwise_separable"),
    Fx("conv_transpose", "build_conv_transpose"),
    Fx("dense_ranks", "build_dense_ranks"),
    Fx("batchnorm_variants", "build_batchnorm_variants"),
    Fx("activations", "build_activations"),
    Fx("advanced_activations", "build_advanced_activations"),
    Fx("pooling", "build_pooling"),
    Fx("pad_crop_upsample", "build_pad_crop_upsample"),
    Fx("flatten_dense", "build_flatten_dense"),
    Fx("reshape_permute_repeat", "build_reshape_permute_repeat"),
    Fx("inference_identities", "build_inference_identities"),
    Fx("merge_ops", "build_merge_ops"),
    Fx("nested_seq_in_func", "build_nested_seq_in_func"),
    Fx("nested_func_in_seq", "build_nested_func_in_seq"),
    Fx("shared_layers", "build_shared_layers"),
    Fx("multi_io", "build_multi_io"),
    Fx("rescaling", "build_rescaling"),
    Fx("lstm_variants", "build_lstm_variants", issue=6),
    # --- sequence models (issue 6) ---
    Fx("lstm_text_classifier", "build_lstm_text_classifier", issue=6),
    Fx("gru_variants", "build_gru_variants", issue=6),
    Fx("simple_rnn", "build_simple_rnn", issue=6),
    Fx("stacked_return_state", "build_stacked_return_state", issue=6),
    Fx("conv1d_causal_dilated", "build_conv1d_causal_dilated", issue=6),
    Fx("bidirectional_merge", "build_bidirectional_merge", issue=6),
    Fx("time_distributed", "build_time_distributed", issue=6),
    # --- 3-D convolution and pooling (issue 9) ---
    Fx("volumetric_3d", "build_volumetric_3d", issue=9),
]

# Fixture groups in Scripts/keras_fixtures/<group>.py (issue 14): each module defines FIXTURES
# (a list of Fx keyword dicts whose "builder" names one of its build_* functions) and/or REGISTRY
# (Fx keyword dicts whose "builder" is the function itself); builders get the same Ctx as the
# builders here. A builder's spec may add "randomize" (replaces randomize_weights) and "after_save"
# (called as after_save(c, model, dir, name, flavor, inputs, outputs) → extra manifest fields).
BUILDERS = {}


def _load_fixture_groups():
    import importlib.util
    for path in sorted((Path(__file__).resolve().parent / "keras_fixtures").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"keras_fixtures_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        REGISTRY.extend(Fx(**f) for f in getattr(mod, "FIXTURES", []))
        REGISTRY.extend(Fx(**f) for f in getattr(mod, "REGISTRY", []))
        BUILDERS.update({n: getattr(mod, n) for n in dir(mod) if n.startswith("build_")})


_load_fixture_groups()


def all_fixture_names():
    out = []
    for fx in REGISTRY:
        out.extend(n for n, _ in fx.names())
    return out


def select(only):
    """Returns (set of fixture names, demo?) selected by the --only arguments."""
    if not only:
        return set(all_fixture_names()), True
    names, demo = set(), False
    for o in only:
        if o == "demo":
            demo = True
            continue
        hit = False
        for fx in REGISTRY:
            for n, _ in fx.names():
                if o in (n, fx.base):
                    names.add(n)
                    hit = True
        if not hit:
            sys.exit(f"--only {o}: no such fixture (see --list)")
    return names, demo


# ----------------------------------------------------------------------------------------------
# Orchestrator
# ----------------------------------------------------------------------------------------------

def pkg_version(*names):
    for n in names:
        try:
            return importlib.metadata.version(n)
        except importlib.metadata.PackageNotFoundError:
            pass
    return None


def worker_env(flavor):
    env = dict(os.environ)
    env.update({
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TF_ENABLE_ONEDNN_OPTS": "0",   # plain Eigen kernels: reproducible reference numbers
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONHASHSEED": "0",
        "KERAS_BACKEND": "tensorflow",
        "TF_USE_LEGACY_KERAS": "1" if flavor == "keras2" else "0",
    })
    return env


def to_json(v, indent=0):
    """json.dumps(indent=2), but lists of scalars (shapes, layer names) on one line."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {to_json(x, indent + 1)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        return "[\n" + ",\n".join(inner + to_json(x, indent + 1) for x in v) + "\n" + pad + "]"
    return json.dumps(v)


def dir_size(p):
    return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())


def human(n):
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def orchestrate(args):
    names, demo = select(args.only)
    KERAS_DIR.mkdir(parents=True, exist_ok=True)
    entries = {}
    with tempfile.TemporaryDirectory() as tmp:
        for flavor in ("keras2", "keras3"):
            mine = [n for fx in REGISTRY for n, f in fx.names() if f == flavor and n in names]
            want_demo = demo and flavor == "keras2"
            if not mine and not want_demo:
                continue
            out = Path(tmp) / f"{flavor}.json"
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", flavor,
                   "--entries-out", str(out)]
            for n in mine:
                cmd += ["--fixture", n]
            if want_demo:
                cmd += ["--demo"]
            print(f"== {flavor} worker: {len(mine)} fixture(s){' + demo' if want_demo else ''}",
                  flush=True)
            r = subprocess.run(cmd, env=worker_env(flavor))
            if r.returncode != 0:
                sys.exit(f"{flavor} worker failed (exit {r.returncode})")
            for e in json.loads(out.read_text()):
                entries[e["name"]] = e

    manifest_path = KERAS_DIR / "manifest.json"
    old = {}
    if args.only and manifest_path.exists():
        old = {e["name"]: e for e in json.loads(manifest_path.read_text()).get("fixtures", [])}
    old.update(entries)
    ordered = [old[n] for n in all_fixture_names() if n in old]
    if not args.only:
        # Full run: remove folders of fixtures that no longer exist.
        known = set(all_fixture_names())
        for d in KERAS_DIR.iterdir():
            if d.is_dir() and d.name not in known:
                print(f"removing stale {d.relative_to(ROOT)}")
                shutil.rmtree(d)
    manifest = {
        "generator": GENERATOR,
        "tensorflow": pkg_version("tensorflow", "tensorflow-cpu"),
        "keras": pkg_version("keras"),
        "tf_keras": pkg_version("tf_keras", "tf-keras"),
        "fixtures": ordered,
    }
    manifest_path.write_text(to_json(manifest) + "\n")
    print(f"wrote {manifest_path.relative_to(ROOT)} ({len(ordered)} fixtures)")
    size_summary()


def size_summary():
    print("\n== size summary")
    rows = []
    for d in sorted(KERAS_DIR.iterdir()):
        if d.is_dir():
            s = dir_size(d)
            rows.append((f"keras/{d.name}", s))
    if DEMO_DIR.exists():
        rows.append(("demo", dir_size(DEMO_DIR)))
    for name, s in rows:
        print(f"  {name:48s} {human(s):>10s}")
    total = dir_size(FIXTURES)
    print(f"  {'TOTAL Fixtures/':48s} {human(total):>10s}")
    if total > 20 * 1024 * 1024:
        print("WARNING: Fixtures/ is over the 20 MB budget")


# ----------------------------------------------------------------------------------------------
# Worker: everything below runs inside one Keras flavour
# ----------------------------------------------------------------------------------------------

class Ctx:
    """The Keras flavour in use plus the few API differences between Keras 2 and 3."""

    def __init__(self, flavor):
        import numpy as np
        import tensorflow as tf
        self.np = np
        self.tf = tf
        self.flavor = flavor
        self.k2 = flavor == "keras2"
        if self.k2:
            import tf_keras as K
        else:
            import keras as K
        self.K = K
        self.L = K.layers
        self.ReflectionPadding2D = make_reflection_padding(K, tf, self.k2)
        # Keras 3 stores a named (non-lambda) Lambda function by name only, so loading needs
        # the functions; Keras 2 stores their bytecode.
        self.custom_objects = {"ReflectionPadding2D": self.ReflectionPadding2D,
                               "res_crop": res_crop, "rescale_output": rescale_output}
        # The style-transfer Lambdas are Python bytecode: both flavours refuse to deserialise
        # them (model_from_json, load_model) unless told the source is trusted. It is: us.
        if self.k2:
            K.__internal__.enable_unsafe_deserialization()
        else:
            K.config.enable_unsafe_deserialization()

    def leaky(self, alpha, name=None):
        if self.k2:
            return self.L.LeakyReLU(alpha=alpha, name=name)
        return self.L.LeakyReLU(negative_slope=alpha, name=name)

    def input_shape_kw(self, shape):
        """Sequential seeds: Keras 2 models got `input_shape=` on their first layer (as the
        seeds did); Keras 3 ones get an explicit Input with the same name Keras 2 generates."""
        return {"input_shape": shape} if self.k2 else None

    def seq_input(self, shape, name):
        return [] if self.k2 else [self.L.Input(shape, name=name)]

    def load(self, path):
        if self.k2:
            return self.K.models.load_model(path, custom_objects=self.custom_objects,
                                            compile=False)
        return self.K.models.load_model(path, custom_objects=self.custom_objects, compile=False,
                                        safe_mode=False)

    def load_weights_json(self, json_path, weights_path):
        m = self.K.models.model_from_json(Path(json_path).read_text(),
                                          custom_objects=self.custom_objects)
        m.load_weights(weights_path)
        return m

    def reset(self, seed):
        self.K.backend.clear_session()
        self.K.utils.set_random_seed(seed)


def make_reflection_padding(K, tf, k2):
    """The seed's custom ReflectionPadding2D (seed-models.md §3), with a get_config that stores
    `padding` (the seed's did not)."""

    class ReflectionPadding2D(K.layers.Layer):
        def __init__(self, padding=(1, 1), **kwargs):
            super().__init__(**kwargs)
            self.padding = tuple(int(p) for p in padding)
            self.input_spec = [K.layers.InputSpec(ndim=4)]

        def compute_output_shape(self, input_shape):
            s = list(input_shape)
            h, w = self.padding
            return (s[0], None if s[1] is None else s[1] + 2 * h,
                    None if s[2] is None else s[2] + 2 * w, s[3])

        def call(self, x):
            h, w = self.padding
            return tf.pad(x, [[0, 0], [h, h], [w, w], [0, 0]], "REFLECT")

        def get_config(self):
            config = super().get_config()
            config["padding"] = list(self.padding)
            return config

    ReflectionPadding2D.__module__ = "mlconv_fixtures"
    if not k2:
        # Keras 3 serialises custom classes by registered name; Keras 2 just stores the class
        # name (as the seed's Keras 2.0.6 did) and needs custom_objects when loading.
        ReflectionPadding2D = K.saving.register_keras_serializable(package="mlconv")(
            ReflectionPadding2D)
    return ReflectionPadding2D


def seed_of(base):
    return zlib.crc32(base.encode()) & 0x7FFFFFFF


# ---- weights -----------------------------------------------------------------------------------

def iter_leaf_layers(c, model, seen=None):
    seen = set() if seen is None else seen
    for layer in model.layers:
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if isinstance(layer, c.K.Model):
            yield from iter_leaf_layers(c, layer, seen)
        else:
            yield layer


def randomize_weights(c, model, rng, kernel_gain=1.0, layer_gain=None):
    np = c.np
    for layer in iter_leaf_layers(c, model):
        if not layer.weights:
            continue
        gain = (layer_gain or {}).get(layer.name, kernel_gain)
        cls = type(layer).__name__
        names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
        new = []
        for name, v in zip(names, layer.get_weights()):
            shape = v.shape
            if name in ("kernel", "recurrent_kernel", "pointwise_kernel", "depthwise_kernel"):
                if name == "depthwise_kernel" or cls == "DepthwiseConv2D":  # Keras 3: "kernel"
                    fan = int(np.prod(shape[:-2]))
                elif cls == "Conv2DTranspose":
                    fan = int(np.prod(shape[:-2])) * shape[-1]
                else:
                    fan = int(np.prod(shape[:-1]))
                val = rng.standard_normal(shape) * (gain / np.sqrt(max(fan, 1)))
            elif name == "bias":
                val = rng.standard_normal(shape) * 0.1
            elif name == "gamma":
                val = rng.uniform(0.5, 1.5, shape)
            elif name == "beta":
                val = rng.standard_normal(shape) * 0.2
            elif name == "moving_mean":
                val = rng.standard_normal(shape) * 0.2
            elif name == "moving_variance":
                val = rng.uniform(0.5, 1.5, shape)
            elif name == "alpha":  # PReLU
                val = rng.uniform(0.05, 0.5, shape)
            elif name == "embeddings":  # Embedding
                val = rng.standard_normal(shape) * 0.5
            else:
                raise RuntimeError(f"don't know how to randomize weight {name!r} of {cls}")
            new.append(val.astype(np.float32))
        layer.set_weights(new)


def calibrate_batchnorm(c, model, inputs, rng):
    """Sets each BatchNormalization's moving statistics near the statistics its input really has
    on the fixture input (perturbed: mean ± 0.1·std, variance × U(0.7, 1.4)), layer by layer in
    graph order, so deep random nets stay in a useful range."""
    np = c.np
    for layer in model.layers:
        if type(layer).__name__ != "BatchNormalization":
            continue
        sub = c.K.Model(model.inputs, layer.input)
        a = sub.predict(inputs, verbose=0)
        axis = layer.axis if isinstance(layer.axis, (list, tuple)) else [layer.axis]
        axis = [ax % a.ndim for ax in axis]
        red = tuple(i for i in range(a.ndim) if i not in axis)
        mean, var = a.mean(axis=red), a.var(axis=red)
        names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
        vals = dict(zip(names, layer.get_weights()))
        vals["moving_mean"] = (mean + 0.1 * np.sqrt(var) * rng.standard_normal(mean.shape))
        vals["moving_variance"] = var * rng.uniform(0.7, 1.4, var.shape) + 1e-3
        layer.set_weights([vals[n].astype(np.float32) for n in names])


# ---- inputs ------------------------------------------------------------------------------------

def make_input(np, rng, shape, dist):
    kind = dist[0]
    if kind == "normal":
        scale = dist[1] if len(dist) > 1 else 1.0
        shift = dist[2] if len(dist) > 2 else 0.0
        x = rng.standard_normal(shape) * scale + shift
    elif kind == "uniform":
        x = rng.uniform(dist[1], dist[2], shape)
    elif kind == "strokes":  # quickdraw (75,3) deltas flattened to 225, left-padded with zeros
        n_pad = dist[1]
        seq = np.zeros((shape[0], 75, 3))
        pts = 75 - n_pad
        seq[:, n_pad:, :2] = rng.standard_normal((shape[0], pts, 2)) * 0.05
        seq[:, n_pad:, 2] = (rng.uniform(0, 1, (shape[0], pts)) < 0.12).astype(float)
        seq[:, -1, 2] = 1.0
        x = seq.reshape(shape)
    elif kind == "tokens":  # integer ids 1..vocab-1 as floats; 0 (padding) at the given steps
        vocab, zero_steps = dist[1], dist[2]
        x = rng.integers(1, vocab, shape).astype(float)
        x[:, list(zero_steps)] = 0.0
    elif kind == "masked_steps":  # N(0, 1) with the given time steps set to exactly 0
        x = rng.standard_normal(shape)
        x[:, list(dist[1])] = 0.0
    else:
        raise ValueError(dist)
    return np.ascontiguousarray(x, dtype=np.float32)


# ---- config introspection ----------------------------------------------------------------------

def io_names(model):
    cfg = model.get_config()
    if "input_layers" in cfg:
        def norm(v):
            if v and isinstance(v[0], str):
                v = [v]
            return [x[0] for x in v]
        return norm(cfg["input_layers"]), norm(cfg["output_layers"])
    layers = cfg["layers"]  # Sequential
    first = layers[0]
    if first["class_name"] != "InputLayer":
        raise RuntimeError("Sequential config without InputLayer")
    return [first["config"]["name"]], [layers[-1]["config"]["name"]]


def saved_config(model_file, config_file):
    """The model config exactly as stored in the fixture's files (Keras 3's legacy .h5 writer
    differs from its to_json(), e.g. in class names of registered custom classes)."""
    if config_file is not None:
        return json.loads(Path(config_file).read_text())
    import h5py
    with h5py.File(model_file, "r") as f:
        cfg = f.attrs["model_config"]
    return json.loads(cfg.decode() if isinstance(cfg, bytes) else cfg)


def layer_classes(model_config):
    """Distinct class names of every layer in a model config, nested models and wrapped layers
    included, InputLayer excluded; first-appearance order."""
    out = []

    def visit(layer):
        cls = layer["class_name"]
        if cls != "InputLayer" and cls not in out:
            out.append(cls)
        conf = layer.get("config", {})
        for sub in conf.get("layers", []) or []:
            visit(sub)
        for key in ("layer", "backward_layer"):
            if isinstance(conf.get(key), dict):
                visit(conf[key])

    for layer in model_config["config"]["layers"]:
        visit(layer)
    return out


# ---- the fixture pipeline ----------------------------------------------------------------------

def run_fixture(c, fx, name, flavor):
    np = c.np
    seed = seed_of(fx.base)
    c.reset(seed)
    builder = fx.builder if callable(fx.builder) else (BUILDERS.get(fx.builder) or globals()[fx.builder])
    spec = builder(c)
    model = spec["model"]
    w_rng = np.random.default_rng([seed, 1])
    x_rng = np.random.default_rng([seed, 2])
    (spec.get("randomize") or randomize_weights)(c, model, w_rng, spec.get("kernel_gain", 1.0), spec.get("layer_gain"))

    in_shapes = [tuple(int(d) if d is not None else 1 for d in t.shape) for t in model.inputs]
    dists = spec["inputs"]
    inputs = [make_input(np, x_rng, (1,) + s[1:], d) for s, d in zip(in_shapes, dists)]
    if spec.get("calibrate_bn"):
        calibrate_batchnorm(c, model, inputs, np.random.default_rng([seed, 3]))

    outputs = model.predict(inputs, verbose=0)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    outputs = [np.ascontiguousarray(o, dtype=np.float32) for o in outputs]

    d = KERAS_DIR / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    if fx.kind == "full":
        model_file, config_file = d / "model.h5", None
        model.save(str(model_file))
        reloaded = None if spec.get("no_reload_" + flavor) else c.load(str(model_file))
    else:
        model_file, config_file = d / "weights.h5", d / "arch.json"
        model.save_weights(str(model_file))
        config_file.write_text(model.to_json())
        reloaded = c.load_weights_json(config_file, str(model_file))
    # A spec's "no_reload_<flavor>" names why Keras cannot load its own file back (the outputs
    # are then those of the in-memory model only).
    again = outputs if reloaded is None else reloaded.predict(inputs, verbose=0)
    if not isinstance(again, (list, tuple)):
        again = [again]
    for i, (a, b) in enumerate(zip(outputs, again)):
        if a.shape != b.shape:
            raise RuntimeError(f"{name}: reloaded output {i} shape {b.shape} != {a.shape}")
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        if diff > 1e-6 * max(1.0, float(np.max(np.abs(a)))):
            raise RuntimeError(f"{name}: reloaded output {i} differs by {diff}")

    in_names, out_names = io_names(model)
    assert len(in_names) == len(inputs) and len(out_names) == len(outputs), name
    entry_in, entry_out = [], []
    for i, (n, x) in enumerate(zip(in_names, inputs)):
        np.save(d / f"input_{i}.npy", x)
        entry_in.append({"name": n, "file": f"{name}/input_{i}.npy", "shape": list(x.shape)})
    for i, (n, y) in enumerate(zip(out_names, outputs)):
        np.save(d / f"output_{i}.npy", y)
        entry_out.append({"name": n, "file": f"{name}/output_{i}.npy", "shape": list(y.shape)})

    notes = spec.get("notes", "")
    extra = spec.get("notes_" + flavor)
    if extra:
        notes = (notes + " " + extra).strip()
    entry = {
        "name": name,
        "flavor": flavor,
        "kind": fx.kind,
        "model": f"{name}/{model_file.name}",
        "config": None if config_file is None else f"{name}/{config_file.name}",
        "inputs": entry_in,
        "outputs": entry_out,
        "layers": layer_classes(saved_config(model_file, config_file)),
        "issue": fx.issue,
        "notes": notes,
    }
    # Issue-14 Keras 3 fixtures are also written as .keras and .weights.h5 + model.json, unless the
    # builder says why Keras itself cannot reload those forms ("no_keras3_forms", kept in the manifest).
    if spec.get("no_keras3_forms") and flavor == "keras3":
        entry["no_keras3_forms"] = spec["no_keras3_forms"]
    after_save = spec.get("after_save") or (save_keras3_forms if fx.issue == 14 and not spec.get("no_keras3_forms") else None)
    if after_save:
        entry.update(after_save(c, model, d, name, flavor, inputs, outputs))
    stats = "; ".join(
        f"{n} {list(y.shape)} mean {y.mean():.3g} std {y.std():.3g} [{y.min():.3g}, {y.max():.3g}]"
        for n, y in zip(out_names, outputs))
    print(f"  {name:36s} {human(dir_size(d)):>9s}  {stats}", flush=True)
    return entry


def save_keras3_forms(c, model, d, name, flavor, inputs, outputs):
    """Keras 3 (issue 14 fixtures): also model.keras and model.weights.h5 + model.json, each
    reloaded with Keras and checked against the outputs; their paths go into the manifest."""
    if flavor != "keras3":
        return {}
    np, K = c.np, c.K
    archive, weights, config = d / "model.keras", d / "model.weights.h5", d / "model.json"
    model.save(str(archive))
    model.save_weights(str(weights))
    config.write_text(model.to_json())
    again = [K.models.load_model(str(archive), compile=False, safe_mode=False)]
    K.config.enable_unsafe_deserialization()  # our own fixtures' Lambda layers (model_from_json has no safe_mode)
    m = K.models.model_from_json(config.read_text())
    m.load_weights(str(weights))
    again.append(m)
    for reloaded in again:
        got = reloaded.predict(inputs, verbose=0)
        got = got if isinstance(got, (list, tuple)) else [got]
        for i, (a, b) in enumerate(zip(outputs, got)):
            if float(np.max(np.abs(a - b))) > 1e-6 * max(1.0, float(np.max(np.abs(a)))):
                raise RuntimeError(f"{name}: reloaded .keras / weights output {i} differs")
    return {"archive": f"{name}/{archive.name}", "weights_h5": f"{name}/{weights.name}",
            "weights_config": f"{name}/{config.name}"}



def worker(args):
    import warnings
    warnings.filterwarnings("ignore")
    import logging
    logging.getLogger("absl").setLevel(logging.ERROR)
    c = Ctx(args.worker)
    c.tf.get_logger().setLevel("ERROR")
    c.tf.config.experimental.enable_op_determinism()
    entries = []
    if args.demo:
        make_demo(c)
    wanted = set(args.fixture or [])
    for fx in REGISTRY:
        for name, flavor in fx.names():
            if flavor == args.worker and name in wanted:
                entries.append(run_fixture(c, fx, name, flavor))
    Path(args.entries_out).write_text(json.dumps(entries))


# ----------------------------------------------------------------------------------------------
# Seed look-alikes
# ----------------------------------------------------------------------------------------------

def build_fer_cnn(c):
    L, K = c.L, c.K
    size, widths = 16, (16, 32, 64)
    layers = c.seq_input((size, size, 1), "layer_1_conv2d_input") + [
        L.Conv2D(widths[0], (3, 3), padding="same", activation="relu", name="layer_1_conv2d",
                 **(c.input_shape_kw((size, size, 1)) or {})),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="layer_1_max"),
        L.Conv2D(widths[1], (3, 3), padding="same", activation="relu", name="layer_2_conv2d"),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="layer_2_max"),
        L.Conv2D(widths[2], (3, 3), padding="same", activation="relu", name="layer_3_conv2d"),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="layer_3_max"),
        L.Flatten(name="flatten_1"),
        L.Dropout(0.5, name="dropout_1"),
        L.Dense(512, activation="relu", name="layer_4_dense"),
        L.Dense(128, activation="relu", name="layer_5_dense"),
        L.Dense(7, activation="softmax", name="output"),
    ]
    model = K.Sequential(layers, name="fer_cnn")
    return {
        "model": model,
        "inputs": [("uniform", 0.0, 1.0)],
        "kernel_gain": 1.414,
        "notes": "Seed ch.4 (FER2013 CNN). Input 16x16x1 instead of 48x48x1; conv widths 16/32/64 "
                 "instead of 64/128/256 (size budget); dense 512/128/7 as in the seed (flatten "
                 "2x2x64=256 instead of 6x6x256=9216). Input uniform 0-1.",
    }


def build_tiny_yolo(c):
    L, K = c.L, c.K
    widths = (4, 4, 8, 16, 32, 64, 128, 128)
    inp = L.Input((96, 96, 3), name="input_1")
    x = inp
    for i, f in enumerate(widths, start=1):
        x = L.Conv2D(f, (3, 3), strides=(1, 1), padding="same", use_bias=False,
                     name=f"conv2d_{i}")(x)
        x = L.BatchNormalization(name=f"batch_normalization_{i}")(x)
        x = c.leaky(0.1, name=f"leaky_re_lu_{i}")(x)
        if i <= 6:
            s = 2 if i <= 5 else 1
            x = L.MaxPooling2D(pool_size=(2, 2), strides=(s, s), padding="same",
                               name=f"max_pooling2d_{i}")(x)
    x = L.Conv2D(125, (1, 1), strides=(1, 1), padding="same", name="conv2d_9")(x)
    return {
        "model": K.Model(inp, x, name="tiny_yolo"),
        "inputs": [("uniform", 0.0, 1.0)],
        "calibrate_bn": True,
        "notes": "Seed ch.5 (Tiny YOLO v2 VOC). Input 96x96x3 instead of 416x416x3 (output grid "
                 "3x3x125 instead of 13x13x125); conv widths 4,4,8,16,32,64,128,128 instead of "
                 "16..1024 (size budget; /8, first block 4). Same structure: 3x3 same convs "
                 "without bias, BN, LeakyReLU(0.1), MaxPool 2 same with stride 2 in blocks 1-5 "
                 "and stride 1 in block 6, final 1x1 conv 125 with bias, linear. BN moving "
                 "statistics are calibrated on the input. Input uniform 0-1.",
    }


def style_net(c, pad="zero", crop="builtin", rescale="builtin", size=64, width=16):
    """Seed-models.md §3 transformer. Layer names follow the seed's weights file (conv2d_1..16,
    batch_normalization_1..15, activation_1..10, add_1..5, up_sampling2d_1..2)."""
    L, K = c.L, c.K
    inp = L.Input((size, size, 3), name="image")
    if pad == "zero":
        x = L.ZeroPadding2D(padding=(40, 40), name="zero_padding2d_1")(inp)
    else:
        x = c.ReflectionPadding2D(padding=(40, 40), name="reflection_padding2d_1")(inp)
    n = {"conv": 0, "bn": 0, "act": 0}

    def block(x, filters, k, strides=1, padding="same", relu=True):
        n["conv"] += 1
        n["bn"] += 1
        x = L.Conv2D(filters, (k, k), strides=(strides, strides), padding=padding,
                     name=f"conv2d_{n['conv']}")(x)
        x = L.BatchNormalization(name=f"batch_normalization_{n['bn']}")(x)
        if relu:
            n["act"] += 1
            x = L.Activation("relu", name=f"activation_{n['act']}")(x)
        return x

    x = block(x, width, 9)
    x = block(x, width, 3, strides=2)
    x = block(x, width, 3, strides=2)
    for i in range(5):
        y = block(x, width, 3, padding="valid")
        y = block(y, width, 3, padding="valid", relu=False)
        if crop == "builtin":
            sc = L.Cropping2D(cropping=((2, 2), (2, 2)), name=f"res_crop_{i}")(x)
        else:
            sc = L.Lambda(res_crop, name=f"res_crop_{i}")(x)
        x = L.Add(name=f"add_{i + 1}")([y, sc])
    for j in range(2):
        x = L.UpSampling2D(size=(2, 2), name=f"up_sampling2d_{j + 1}")(x)
        x = block(x, width, 3)
    n["conv"] += 1
    x = L.Conv2D(3, (9, 9), padding="same", activation="tanh", name=f"conv2d_{n['conv']}")(x)
    if rescale == "builtin":
        out = L.Rescaling(scale=127.5, offset=127.5, name="rescale_output")(x)
    else:
        out = L.Lambda(rescale_output, name="rescale_output")(x)
    return K.Model(inp, out, name="style_transfer")


STYLE_NOTES = ("Seed ch.6 (fast style transfer transformer). Input 64x64x3 raw 0-255 instead of "
               "320x320x3 (pad 40 -> 144, s2 convs -> 72 -> 36, 5 valid res blocks -> 16, "
               "upsampling -> 32 -> 64); all 64-channel layers are 16 channels (size budget). "
               "Conv->BN->Activation('relu') as in the seed; layer names follow the seed's "
               "weights file. BN moving statistics are calibrated on the input.")


def build_style_transfer(c):
    return {
        "model": style_net(c),
        "inputs": [("uniform", 0.0, 255.0)],
        "calibrate_bn": True,
        "notes": STYLE_NOTES + " Built-in variant: ZeroPadding2D(40); the res_crop shortcuts are "
                               "Cropping2D(2) layers named res_crop_0..4; the output Lambda is "
                               "Rescaling(scale=127.5, offset=127.5) named rescale_output.",
    }


def build_style_transfer_lambda(c):
    return {
        "model": style_net(c, crop="lambda", rescale="lambda"),
        "inputs": [("uniform", 0.0, 255.0)],
        "calibrate_bn": True,
        "notes": STYLE_NOTES + " Seed Lambdas: res_crop (x[:, 2:-2, 2:-2]) as res_crop_0..4 and "
                               "rescale_output ((x + 1) * 127.5); ZeroPadding2D(40) as in the "
                               "conversion notebooks.",
        "notes_keras2": "Keras 2 stores the functions as marshalled CPython 3.11 bytecode "
                        "(function_type 'lambda', compiled from file name "
                        "mlconv_style_lambdas.py); loading needs unsafe deserialisation.",
        "notes_keras3": "Keras 3 stores these named (non-lambda) functions by name only "
                        "({'module': 'builtins', 'class_name': 'function', 'config': 'res_crop', "
                        "'registered_name': 'function'}), so loading needs "
                        "custom_objects={'res_crop': ..., 'rescale_output': ...}.",
    }


def build_style_transfer_reflect(c):
    return {
        "model": style_net(c, pad="reflect"),
        "inputs": [("uniform", 0.0, 255.0)],
        "calibrate_bn": True,
        "notes": STYLE_NOTES + " Custom class ReflectionPadding2D(padding=(40, 40)) (tf.pad "
                               "REFLECT on H and W; get_config stores padding, unlike the "
                               "seed's) instead of ZeroPadding2D; built-in Cropping2D / "
                               "Rescaling for the Lambdas.",
        "notes_keras2": "Keras 2: class_name 'ReflectionPadding2D' (not registered; loading "
                        "needs custom_objects).",
        "notes_keras3": "Keras 3: registered with package 'mlconv'; the .h5 config stores "
                        "class_name 'mlconv>ReflectionPadding2D'.",
    }


def build_sketch_cnn(c):
    L, K = c.L, c.K
    size, w = 128, (8, 16, 32, 64)
    layers = c.seq_input((size, size, 1), "conv2d_1_input") + [
        L.Conv2D(w[0], (7, 7), strides=(3, 3), padding="same", activation="relu",
                 name="conv2d_1", **(c.input_shape_kw((size, size, 1)) or {})),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="max_pooling2d_1"),
        L.Conv2D(w[1], (5, 5), padding="same", activation="relu", name="conv2d_2"),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="max_pooling2d_2"),
        L.Conv2D(w[2], (5, 5), padding="same", activation="relu", name="conv2d_3"),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="max_pooling2d_3"),
        L.Dropout(0.125, name="dropout_1"),
        L.Conv2D(w[3], (5, 5), padding="same", activation="relu", name="conv2d_4"),
        L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name="max_pooling2d_4"),
        L.Flatten(name="flatten_1"),
        L.Dense(512, activation="relu", name="dense_2_512"),
        L.Dropout(0.5, name="dropout_2"),
        L.Dense(205, activation="softmax", name="output"),
    ]
    return {
        "model": K.Sequential(layers, name="sketch_cnn"),
        "inputs": [("uniform", 0.0, 1.0)],
        "kernel_gain": 1.414,
        "notes": "Seed ch.7 (TU-Berlin sketch classifier). Input 128x128x1 instead of 256x256x1 "
                 "(7x7/3 same conv -> 43, pools -> 21 -> 10 -> 5 -> 2; flatten 2x2x64=256 "
                 "instead of 3200); conv widths 8/16/32/64 instead of 16/32/64/128 (size "
                 "budget); dense_2_512 and the 205-way softmax as in the seed. Input uniform "
                 "0-1.",
    }


def build_small_unet(c):
    L, K = c.L, c.K
    widths = (4, 4, 8, 16, 32)
    bottleneck = 64
    inp = L.Input((64, 64, 3), name="image")
    n = [0]

    def conv(x, f, name=None):
        n[0] += 1
        return L.Conv2D(f, (3, 3), padding="same", activation="relu",
                        name=name or f"conv2d_{n[0]}")(x)

    x, skips = inp, []
    for i, f in enumerate(widths, start=1):
        x = conv(x, f)
        x = conv(x, f)
        skips.append(x)
        x = L.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), name=f"max_pooling2d_{i}")(x)
    x = conv(x, bottleneck)
    x = conv(x, bottleneck)
    dec_names = [14, 16, 18, 20, 22]
    for j, (f, skip) in enumerate(zip(reversed(widths), reversed(skips))):
        x = L.UpSampling2D(size=(2, 2), name=f"up_sampling2d_{j + 1}")(x)
        x = L.Concatenate(axis=-1, name=f"concatenate_{j + 1}")([x, skip])
        x = conv(x, f, name=f"conv2d_{dec_names[j]}")
    out = L.Conv2D(1, (1, 1), activation="sigmoid", name="conv2d_23")(x)
    return {
        "model": K.Model(inp, out, name="small_unet"),
        "inputs": [("uniform", 0.0, 1.0)],
        "kernel_gain": 1.414,
        "notes": "Seed ch.9 (small U-Net; Keras classes inferred from the compiled model). Input "
                 "64x64x3 instead of 448x448x3 (bottleneck 2x2); widths 4/4/8/16/32 + 64 "
                 "bottleneck instead of 8/16/32/64/128 + 256 (size budget: /4, first stage 4). Decoder: "
                 "UpSampling2D(2) -> Concatenate([up, skip]) -> one 3x3 relu conv; head 1x1 conv "
                 "with fused sigmoid. Conv names mirror the compiled graph (conv2d_1..12, "
                 "14,16,18,20,22, 23). Input uniform 0-1.",
    }


def build_quickdraw_rnn(c):
    L, K = c.L, c.K
    filters, units = (24, 32, 48, 64), 8

    def lstm():
        return L.LSTM(units, return_sequences=True, recurrent_dropout=0.3,
                      recurrent_activation="hard_sigmoid")

    layers = c.seq_input((225,), "reshape_1_input") + [
        L.Reshape((75, 3), name="reshape_1", **(c.input_shape_kw((225,)) or {})),
        L.Conv1D(filters[0], 5, padding="same", name="conv1d_0"),
        L.Dropout(0.3, name="dropout_1"),
        L.Conv1D(filters[1], 5, padding="same", name="conv1d_1"),
        L.Dropout(0.3, name="dropout_2"),
        L.Conv1D(filters[2], 3, padding="same", name="conv1d_2"),
        L.Dropout(0.3, name="dropout_3"),
        L.Conv1D(filters[3], 3, padding="same", name="conv1d_3"),
        L.Bidirectional(lstm(), name="lstm_0"),
        L.Bidirectional(lstm(), name="lstm_1"),
        L.Bidirectional(lstm(), name="lstm_2"),
        L.Flatten(name="flatten_1"),
        L.Dense(172, activation="softmax", name="dense_1"),
    ]
    return {
        "model": K.Sequential(layers, name="quickdraw_rnn"),
        "inputs": [("strokes", 10)],
        "kernel_gain": 2.0,
        "layer_gain": {"dense_1": 4.0},
        "notes": "Seed ch.8 (QuickDraw RNN). Conv1D filters 24/32/48/64 instead of 48/64/96/128 "
                 "and LSTM units 8 instead of 128 (size budget: flatten 75x16=1200 instead of "
                 "19200); 172 classes as shipped. LSTMs use recurrent_activation='hard_sigmoid' "
                 "(Keras 2.0.8's default, which the seed was trained with) and "
                 "recurrent_dropout 0.3; merge_mode concat. Input: 225 floats = (75,3) stroke "
                 "deltas (dx, dy ~ N(0, 0.05), end-of-stroke flags 0/1), first 10 rows zero "
                 "(left padding).",
        "notes_keras2": "Keras 2 hard_sigmoid = clip(0.2x + 0.5, 0, 1).",
        "notes_keras3": "Keras 3 hard_sigmoid = relu6(x + 3) / 6 = clip(x/6 + 0.5, 0, 1).",
    }


# ----------------------------------------------------------------------------------------------
# Layer coverage (issue 2 unless stated). Non-square spatial sizes catch H/W mix-ups.
# ----------------------------------------------------------------------------------------------

def build_conv2d_variants(c):
    L, K = c.L, c.K
    inp = L.Input((11, 10, 3), name="image")
    outs = [
        L.Conv2D(4, (3, 3), padding="same", activation="relu", name="conv_same_relu")(inp),
        L.Conv2D(5, (3, 3), strides=(2, 2), padding="valid", name="conv_valid_s2")(inp),
        L.Conv2D(4, (4, 4), strides=(2, 2), padding="same", name="conv_same_s2_k4")(inp),
        L.Conv2D(4, (3, 2), strides=(1, 2), padding="same", name="conv_same_s12")(inp),
        L.Conv2D(3, (3, 3), dilation_rate=(2, 2), padding="same", name="conv_dil2_same")(inp),
        L.Conv2D(3, (3, 3), dilation_rate=(2, 2), padding="valid", name="conv_dil2_valid")(inp),
        L.Conv2D(3, (1, 1), use_bias=False, activation="tanh", name="conv_nobias_tanh")(inp),
        L.Conv2D(4, (3, 3), padding="valid", use_bias=False, activation="sigmoid",
                 name="conv_nobias_valid_sigmoid")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="conv2d_variants"),
        "inputs": [("normal",)],
        "notes": "Conv2D options, one output each: same+relu; valid strides 2; even 4x4 kernel "
                 "same strides 2 on odd 11x10 input (TF pads less before than after); strides "
                 "(1,2) with a 3x2 kernel; dilation 2 same and valid; use_bias=False with fused "
                 "tanh (1x1) and sigmoid (3x3 valid).",
    }


def build_depthwise_separable(c):
    L, K = c.L, c.K
    inp = L.Input((9, 10, 4), name="image")
    outs = [
        L.DepthwiseConv2D((3, 3), depth_multiplier=2, padding="same", activation="relu",
                          name="dw_mult2_same_relu")(inp),
        L.DepthwiseConv2D((3, 3), strides=(2, 2), padding="valid", use_bias=False,
                          name="dw_s2_valid_nobias")(inp),
        L.SeparableConv2D(6, (3, 3), padding="same", activation="relu", name="sep_same_relu")(inp),
        L.SeparableConv2D(5, (3, 3), strides=(2, 2), depth_multiplier=2, padding="valid",
                          name="sep_mult2_s2_valid")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="depthwise_separable"),
        "inputs": [("normal",)],
        "notes": "DepthwiseConv2D (depth_multiplier 2 same relu; strides 2 valid no bias) and "
                 "SeparableConv2D (same relu; depth_multiplier 2 strides 2 valid).",
    }


def build_conv_transpose(c):
    L, K = c.L, c.K
    inp = L.Input((5, 6, 3), name="image")
    outs = [
        L.Conv2DTranspose(4, (3, 3), strides=(2, 2), padding="same", name="deconv_same_s2")(inp),
        L.Conv2DTranspose(4, (3, 3), strides=(2, 2), padding="valid",
                          name="deconv_valid_s2")(inp),
        L.Conv2DTranspose(3, (4, 4), strides=(2, 2), padding="same",
                          name="deconv_same_s2_k4")(inp),
        L.Conv2DTranspose(2, (2, 3), strides=(1, 1), padding="valid", use_bias=False,
                          activation="relu", name="deconv_valid_s1_nobias_relu")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="conv_transpose"),
        "inputs": [("normal",)],
        "notes": "Conv2DTranspose: 3x3 strides 2 same (5x6 -> 10x12) and valid (-> 11x13); 4x4 "
                 "strides 2 same; 2x3 strides 1 valid without bias, fused relu.",
    }


def build_dense_ranks(c):
    L, K = c.L, c.K
    v = L.Input((12,), name="vector")
    s = L.Input((5, 7), name="sequence")
    g = L.Input((3, 4, 6), name="grid")
    outs = [
        L.Dense(8, activation="relu", name="dense_rank2")(v),
        L.Dense(6, name="dense_rank3")(s),
        L.Dense(5, activation="sigmoid", name="dense_rank4")(g),
        L.Dense(4, use_bias=False, activation="tanh", name="dense_rank2_nobias")(v),
    ]
    return {
        "model": K.Model([v, s, g], outs, name="dense_ranks"),
        "inputs": [("normal",), ("normal",), ("normal",)],
        "notes": "Dense on rank-2 (relu; and use_bias=False tanh), rank-3 (5,7)->(5,6) and rank-4 "
                 "(3,4,6)->(3,4,5) sigmoid inputs: Dense acts on the last axis. Three inputs, "
                 "four outputs.",
    }


def build_batchnorm_variants(c):
    L, K = c.L, c.K
    inp = L.Input((6, 7, 5), name="image")
    vec = L.GlobalAveragePooling2D(name="gap")(inp)
    vec = L.Dense(6, name="dense")(vec)
    outs = [
        L.BatchNormalization(epsilon=0.01, name="bn_eps_0_01")(inp),
        L.BatchNormalization(center=False, name="bn_no_center")(inp),
        L.BatchNormalization(scale=False, name="bn_no_scale")(inp),
        L.BatchNormalization(center=False, scale=False, epsilon=0.1, name="bn_no_center_scale")(inp),
        L.BatchNormalization(axis=1, name="bn_axis1")(inp),
        L.BatchNormalization(axis=2, name="bn_axis2")(inp),
        L.BatchNormalization(axis=-1, name="bn_rank2")(vec),
    ]
    return {
        "model": K.Model(inp, outs, name="batchnorm_variants"),
        "inputs": [("normal", 2.0, 0.5)],
        "notes": "BatchNormalization at inference: epsilon 0.01 (axis -1); center=False; "
                 "scale=False; both off with epsilon 0.1; axis=1 (H, 6) and axis=2 (W, 7) on "
                 "rank-4; axis -1 on a rank-2 Dense output. Moving statistics, gamma and beta "
                 "random (variance U(0.5,1.5)). Input N(0.5, 2).",
    }


ACTIVATION_NAMES = ["linear", "relu", "relu6", "sigmoid", "hard_sigmoid", "tanh", "softmax",
                    "softplus", "softsign", "elu", "selu", "swish", "silu", "gelu", "exponential"]


def build_activations(c):
    L, K = c.L, c.K
    inp = L.Input((3, 4, 5), name="x")
    outs = [L.Activation(a, name=f"act_{a}")(inp) for a in ACTIVATION_NAMES]
    return {
        "model": K.Model(inp, outs, name="activations"),
        "inputs": [("normal", 4.0)],
        "notes": "One Activation layer per output: " + ", ".join(ACTIVATION_NAMES) + " (softmax "
                 "over the last axis of a rank-4 tensor; gelu is the exact erf form). Input "
                 "N(0, 4) so both signs and saturation (relu6 > 6, hard_sigmoid) are exercised. gelu with approximate=True "
                 "is not included: neither flavour can name it in an Activation config.",
        "notes_keras2": "Keras 2: hard_sigmoid = clip(0.2x + 0.5, 0, 1); Keras 2 saves 'silu' "
                        "as 'swish'.",
        "notes_keras3": "Keras 3: hard_sigmoid = relu6(x + 3) / 6; Keras 3 saves 'swish' as "
                        "'silu'.",
    }


def build_advanced_activations(c):
    L, K = c.L, c.K
    inp = L.Input((4, 5, 6), name="x")
    outs = [
        L.ReLU(max_value=4.0, negative_slope=0.2, threshold=0.5, name="relu_max_slope_thresh")(inp),
        L.ReLU(max_value=6.0, name="relu_max6")(inp),
        L.ReLU(name="relu_plain")(inp),
        c.leaky(0.3, name="leaky_default")(inp),
        c.leaky(0.05, name="leaky_0_05")(inp),
        L.PReLU(shared_axes=[1, 2], name="prelu_shared_hw")(inp),
        L.PReLU(name="prelu_full")(inp),
        L.ELU(alpha=0.7, name="elu_0_7")(inp),
        L.Softmax(axis=1, name="softmax_axis1")(inp),
        L.Softmax(axis=-1, name="softmax_last")(inp),
    ]
    if c.k2:
        outs.append(L.ThresholdedReLU(theta=0.8, name="thresholded_relu")(inp))
    return {
        "model": K.Model(inp, outs, name="advanced_activations"),
        "inputs": [("normal", 3.0)],
        "notes": "Activation layers: ReLU(max_value 4, negative_slope 0.2, threshold 0.5), "
                 "ReLU(max_value 6), ReLU(); LeakyReLU 0.3 and 0.05; PReLU shared_axes [1,2] "
                 "(alpha (1,1,6)) and unshared (alpha (4,5,6)), random alphas; ELU(0.7); "
                 "Softmax axis 1 and -1. Input N(0, 3).",
        "notes_keras2": "ThresholdedReLU(theta 0.8) included.",
        "notes_keras3": "No ThresholdedReLU: Keras 3 removed it.",
    }


def build_pooling(c):
    L, K = c.L, c.K
    inp = L.Input((10, 9, 3), name="image")
    outs = []
    for cls, tag in ((L.MaxPooling2D, "max"), (L.AveragePooling2D, "avg")):
        outs += [
            cls(pool_size=(3, 3), strides=(2, 2), padding="same", name=f"{tag}_p3_s2_same")(inp),
            cls(pool_size=(3, 3), strides=(2, 2), padding="valid", name=f"{tag}_p3_s2_valid")(inp),
            cls(pool_size=(2, 2), strides=(1, 1), padding="valid", name=f"{tag}_p2_s1_valid")(inp),
            cls(pool_size=(2, 2), strides=(1, 1), padding="same", name=f"{tag}_p2_s1_same")(inp),
            cls(pool_size=(2, 2), name=f"{tag}_p2_default")(inp),
        ]
    outs += [
        L.GlobalMaxPooling2D(name="gmax")(inp),
        L.GlobalMaxPooling2D(keepdims=True, name="gmax_keepdims")(inp),
        L.GlobalAveragePooling2D(name="gavg")(inp),
        L.GlobalAveragePooling2D(keepdims=True, name="gavg_keepdims")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="pooling"),
        "inputs": [("normal",)],
        "notes": "MaxPooling2D and AveragePooling2D: pool 3 stride 2 same/valid, pool 2 stride 1 "
                 "valid/same, pool 2 default strides (= pool, valid) on a 10x9 input; "
                 "AveragePooling2D 'same' divides by the number of real (unpadded) elements. "
                 "GlobalMax/GlobalAveragePooling2D with keepdims False and True.",
    }


def build_pad_crop_upsample(c):
    L, K = c.L, c.K
    inp = L.Input((5, 6, 3), name="image")
    outs = [
        L.ZeroPadding2D(padding=((1, 2), (3, 0)), name="zeropad_asym")(inp),
        L.ZeroPadding2D(padding=1, name="zeropad_1")(inp),
        L.Cropping2D(cropping=((1, 0), (2, 1)), name="crop_asym")(inp),
        L.UpSampling2D(size=(2, 3), interpolation="nearest", name="upsample_nearest_2x3")(inp),
        L.UpSampling2D(size=(2, 3), interpolation="bilinear", name="upsample_bilinear_2x3")(inp),
        L.UpSampling2D(size=(2, 2), interpolation="bilinear", name="upsample_bilinear_2x2")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="pad_crop_upsample"),
        "inputs": [("normal",)],
        "notes": "ZeroPadding2D ((1,2),(3,0)) and 1; Cropping2D ((1,0),(2,1)); UpSampling2D size "
                 "(2,3) nearest and bilinear, (2,2) bilinear (TF half-pixel bilinear resize, "
                 "edge-clamped).",
    }


def build_flatten_dense(c):
    L, K = c.L, c.K
    inp = L.Input((3, 4, 5), name="image")
    flat = L.Flatten(name="flatten")(inp)
    out1 = L.Dense(7, name="dense_from_flatten")(flat)
    x = L.Conv2D(6, (2, 2), padding="valid", activation="relu", name="conv")(inp)
    x = L.Flatten(name="flatten_conv")(x)
    out2 = L.Dense(4, activation="softmax", name="probs")(x)
    return {
        "model": K.Model(inp, [out1, out2], name="flatten_dense"),
        "inputs": [("normal",)],
        "notes": "Flatten of an NHWC tensor (3x4x5 and, after a conv, 2x3x6) followed by Dense: "
                 "Keras flattens in H, W, C order, so a converter using CHW order gives "
                 "different numbers.",
    }


def build_reshape_permute_repeat(c):
    L, K = c.L, c.K
    g = L.Input((4, 6, 2), name="grid")
    v = L.Input((5,), name="vector")
    outs = [
        L.Reshape((8, 6), name="reshape_8x6")(g),
        L.Reshape((2, -1), name="reshape_2xauto")(g),
        L.Permute((2, 1, 3), name="permute_213")(g),
        L.Permute((3, 1, 2), name="permute_312")(g),
        L.Permute((2, 1), name="permute_rank3")(L.Reshape((12, 4), name="reshape_12x4")(g)),
        L.RepeatVector(3, name="repeat_vector_3")(v),
        L.Reshape((1, 5, 1), name="reshape_vec_to_rank4")(v),
    ]
    return {
        "model": K.Model([g, v], outs, name="reshape_permute_repeat"),
        "inputs": [("normal",), ("normal",)],
        "notes": "Reshape (explicit and with -1; rank-4 -> rank-3; rank-2 -> rank-4), Permute "
                 "(2,1,3), (3,1,2) and (2,1) on rank-3, RepeatVector(3).",
    }


def build_inference_identities(c):
    L, K = c.L, c.K
    inp = L.Input((6, 6, 4), name="image")
    x = L.Dropout(0.3, name="dropout")(inp)
    x = L.Conv2D(4, (3, 3), padding="same", activation="relu", name="conv")(x)
    x = L.SpatialDropout2D(0.4, name="spatial_dropout")(x)
    x = L.GaussianNoise(0.5, name="gaussian_noise")(x)
    x = L.GaussianDropout(0.3, name="gaussian_dropout")(x)
    x = L.Flatten(name="flatten")(x)
    x = L.Dropout(0.5, name="dropout_dense")(x)
    out = L.Dense(3, name="logits")(x)
    return {
        "model": K.Model(inp, out, name="inference_identities"),
        "inputs": [("normal",)],
        "notes": "Dropout, SpatialDropout2D, GaussianNoise and GaussianDropout in a chain: all "
                 "identities at inference.",
    }


def build_merge_ops(c):
    L, K = c.L, c.K
    a = L.Input((4, 5, 3), name="a")
    b = L.Input((4, 5, 3), name="b")
    cc = L.Input((4, 5, 3), name="c")
    outs = [
        L.Add(name="add_3way")([a, b, cc]),
        L.Subtract(name="subtract")([a, b]),
        L.Multiply(name="multiply")([a, b]),
        L.Average(name="average")([a, b]),
        L.Maximum(name="maximum_3way")([a, b, cc]),
        L.Minimum(name="minimum")([a, b]),
        L.Concatenate(axis=-1, name="concat_last")([a, b, cc]),
        L.Concatenate(axis=1, name="concat_axis1")([a, b]),
        L.Concatenate(axis=2, name="concat_axis2")([a, cc]),
    ]
    return {
        "model": K.Model([a, b, cc], outs, name="merge_ops"),
        "inputs": [("normal",), ("normal",), ("normal",)],
        "notes": "Merge layers on three inputs: Add (3 inputs), Subtract, Multiply, Average, "
                 "Maximum (3 inputs), Minimum, Concatenate axis -1 (3 inputs), 1 and 2.",
    }


def build_nested_seq_in_func(c):
    L, K = c.L, c.K
    inner = K.Sequential([
        L.Input((8, 8, 3), name="inner_input"),
        L.Conv2D(4, (3, 3), padding="same", activation="relu", name="inner_conv"),
        L.BatchNormalization(name="inner_bn"),
        L.MaxPooling2D((2, 2), name="inner_pool"),
    ], name="feature_block")
    inp = L.Input((8, 8, 3), name="image")
    x = inner(inp)
    x = L.Flatten(name="flatten")(x)
    out = L.Dense(5, name="logits")(x)
    return {
        "model": K.Model(inp, out, name="nested_seq_in_func"),
        "inputs": [("normal",)],
        "notes": "A Sequential (feature_block: Conv2D, BatchNormalization, MaxPooling2D) used as "
                 "a layer inside a functional Model, followed by Flatten and Dense.",
    }


def build_nested_func_in_seq(c):
    L, K = c.L, c.K
    i = L.Input((6, 7, 3), name="unit_input")
    a = L.Conv2D(3, (3, 3), padding="same", activation="relu", name="unit_conv")(i)
    b = L.Add(name="unit_add")([a, i])
    unit = K.Model(i, b, name="residual_unit")
    model = K.Sequential([
        L.Input((6, 7, 3), name="image"),
        unit,
        L.GlobalAveragePooling2D(name="gap"),
        L.Dense(4, activation="softmax", name="probs"),
    ], name="nested_func_in_seq")
    return {
        "model": model,
        "inputs": [("normal",)],
        "notes": "A functional Model (residual_unit: Conv2D + Add skip) used as a layer inside "
                 "a Sequential, followed by GlobalAveragePooling2D and Dense softmax.",
    }


def build_shared_layers(c):
    L, K = c.L, c.K
    left = L.Input((7, 6, 3), name="left")
    right = L.Input((7, 6, 3), name="right")
    conv = L.Conv2D(4, (3, 3), padding="same", activation="relu", name="shared_conv")
    dense = L.Dense(5, name="shared_dense")
    fl = dense(L.GlobalAveragePooling2D(name="gap_left")(conv(left)))
    fr = dense(L.GlobalAveragePooling2D(name="gap_right")(conv(right)))
    outs = [
        L.Subtract(name="difference")([fl, fr]),
        L.Concatenate(name="both")([fl, fr]),
    ]
    return {
        "model": K.Model([left, right], outs, name="shared_layers"),
        "inputs": [("normal",), ("normal",)],
        "notes": "Shared layers: one Conv2D and one Dense each applied to two inputs (node "
                 "indices 0 and 1 in inbound_nodes).",
    }


def build_multi_io(c):
    L, K = c.L, c.K
    img = L.Input((8, 8, 3), name="image")
    meta = L.Input((4,), name="meta")
    x = L.Conv2D(6, (3, 3), padding="same", activation="relu", name="conv")(img)
    feats = L.GlobalAveragePooling2D(name="image_features")(x)
    m = L.Dense(6, activation="relu", name="meta_dense")(meta)
    h = L.Concatenate(name="joint")([feats, m])
    probs = L.Dense(3, activation="softmax", name="class_probs")(h)
    box = L.Dense(4, activation="sigmoid", name="box")(h)
    return {
        "model": K.Model([img, meta], [box, probs, feats], name="multi_io"),
        "inputs": [("normal",), ("normal",)],
        "notes": "Two inputs (image, meta), three outputs in an order different from creation "
                 "order: box, class_probs and the intermediate image_features (also consumed "
                 "inside the graph).",
    }


def build_rescaling(c):
    L, K = c.L, c.K
    inp = L.Input((4, 5, 3), name="image")
    outs = [
        L.Rescaling(1.0 / 255, name="rescale_unit")(inp),
        L.Rescaling(scale=1.0 / 127.5, offset=-1.0, name="rescale_symmetric")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="rescaling"),
        "inputs": [("uniform", 0.0, 255.0)],
        "notes": "Rescaling(1/255) and Rescaling(1/127.5, offset -1) on a 0-255 input.",
    }


def build_lstm_variants(c):
    L, K = c.L, c.K
    inp = L.Input((7, 3), name="sequence")
    outs = [
        L.LSTM(6, name="lstm_last")(inp),
        L.LSTM(5, return_sequences=True, recurrent_activation="hard_sigmoid",
               name="lstm_seq_hard_sigmoid")(inp),
        L.Bidirectional(L.LSTM(4, return_sequences=True), merge_mode="sum",
                        name="bilstm_sum")(inp),
        L.Bidirectional(L.LSTM(3), name="bilstm_concat_last")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="lstm_variants"),
        "inputs": [("normal",)],
        "notes": "LSTM with default activations (tanh, sigmoid gates) returning the last state; "
                 "LSTM return_sequences with hard_sigmoid gates; Bidirectional LSTM merge_mode "
                 "sum (sequences) and concat (last states).",
    }


# ----------------------------------------------------------------------------------------------
# Sequence models (issue 6)
# ----------------------------------------------------------------------------------------------

def build_lstm_text_classifier(c):
    L, K = c.L, c.K
    tokens = L.Input((12,), name="tokens")
    e = L.Embedding(30, 8, mask_zero=True, name="embedding")(tokens)
    e = L.Dropout(0.2, name="dropout")(e)
    e = L.Dense(8, activation="tanh", name="proj")(e)
    s = L.LSTM(6, return_sequences=True, name="lstm_seq")(e)
    h = L.LSTM(5, name="lstm_last")(s)
    feats = L.Input((10, 3), name="features")
    m = L.Masking(mask_value=0.0, name="masking")(feats)
    t = L.TimeDistributed(L.Dense(4, name="td_inner"), name="td_dense")(m)
    b = L.Bidirectional(L.LSTM(3, return_sequences=True), name="bi_seq")(t)
    g = L.GRU(4, name="gru_last")(b)
    probs = L.Dense(3, activation="softmax", name="probs")(L.Concatenate(name="concat")([h, g]))
    return {
        "model": K.Model([tokens, feats], [probs, b, m], name="lstm_text_classifier"),
        "inputs": [("tokens", 30, (5, 8, 9, 10, 11)), ("masked_steps", (0, 1, 2, 6))],
        "kernel_gain": 1.5,
        "notes": "Text branch: token ids (floats 1..29, 0 = padding at steps 5 and 8-11) -> "
                 "Embedding(30, 8, mask_zero=True) -> Dropout -> Dense(8, tanh) -> "
                 "LSTM(6, return_sequences) -> LSTM(5): the mask flows through Dropout, Dense and "
                 "the first LSTM (masked steps keep the state and repeat the output). Feature "
                 "branch: (10, 3) floats with steps 0-2 and 6 all zero -> Masking(0) -> "
                 "TimeDistributed(Dense(4)) -> Bidirectional(LSTM(3), return_sequences; Keras "
                 "zeroes masked steps of a Bidirectional sequence) -> GRU(4). Outputs: "
                 "softmax(Dense(concat)), the Bidirectional sequence, Masking's own output.",
        "notes_keras3": "Keras 3's .h5 writer records the masks as NotEqual / Any op layers "
                        "passed to the consumers' `mask` argument; Keras 3 itself cannot load "
                        "such a file back ('Unknown layer: NotEqual'), so the reference outputs "
                        "are those of the model before saving.",
        "no_reload_keras3": "Keras 3 cannot deserialize its NotEqual / Any mask op layers",
    }


def build_gru_variants(c):
    L, K = c.L, c.K
    inp = L.Input((7, 3), name="sequence")
    outs = [
        L.GRU(5, name="gru_reset_after")(inp),
        L.GRU(4, reset_after=False, return_sequences=True, name="gru_reset_before_seq")(inp),
        L.GRU(3, go_backwards=True, return_sequences=True, name="gru_backwards_seq")(inp),
        L.GRU(4, reset_after=False, go_backwards=True, name="gru_reset_before_backwards")(inp),
        L.GRU(3, activation="relu", recurrent_activation="hard_sigmoid", use_bias=False,
              return_sequences=True, name="gru_relu_hard_sigmoid_nobias")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="gru_variants"),
        "inputs": [("normal",)],
        "notes": "GRU reset_after=True (bias (2, 3u)) last output; reset_after=False sequences; "
                 "go_backwards sequences (kept reversed, as Keras returns them) and last output "
                 "for both reset_after; relu / hard_sigmoid without bias.",
    }


def build_simple_rnn(c):
    L, K = c.L, c.K
    inp = L.Input((6, 4), name="sequence")
    seq, state = L.SimpleRNN(3, return_sequences=True, return_state=True,
                             name="rnn_seq_state")(inp)
    outs = [
        L.SimpleRNN(5, name="rnn_last")(inp),
        L.SimpleRNN(4, activation="relu", return_sequences=True, name="rnn_relu_seq")(inp),
        L.SimpleRNN(3, go_backwards=True, use_bias=False, return_sequences=True,
                    name="rnn_backwards_nobias")(inp),
        seq, state,
    ]
    return {
        "model": K.Model(inp, outs, name="simple_rnn"),
        "inputs": [("normal",)],
        "notes": "SimpleRNN last output; relu sequences; go_backwards without bias; "
                 "return_sequences + return_state (sequence and final state).",
    }


def build_stacked_return_state(c):
    L, K = c.L, c.K
    inp = L.Input((8, 3), name="sequence")
    seq, h, cc = L.LSTM(5, return_sequences=True, return_state=True, name="encoder")(inp)
    dec = L.LSTM(5, return_sequences=True, name="decoder")(seq, initial_state=[h, cc])
    g_seq, g_h = L.GRU(4, return_sequences=True, return_state=True, name="gru_encoder")(inp)
    g_out = L.GRU(4, go_backwards=True, name="gru_decoder")(g_seq, initial_state=[g_h])
    r_last, r_h = L.SimpleRNN(3, return_state=True, name="rnn_encoder")(inp)
    r_out = L.SimpleRNN(3, name="rnn_decoder")(inp, initial_state=[r_h])
    return {
        "model": K.Model(inp, [dec, h, cc, g_out, r_out], name="stacked_return_state"),
        "inputs": [("normal",)],
        "notes": "LSTM(return_sequences, return_state) -> (sequence, h, c) -> LSTM(sequence, "
                 "initial_state=[h, c]); GRU(return_sequences, return_state) -> GRU(go_backwards, "
                 "initial_state=[h]); SimpleRNN(return_state) -> SimpleRNN(initial_state=[h]). "
                 "Outputs: decoder sequence, encoder h and c, GRU and SimpleRNN decoders.",
    }


def build_conv1d_causal_dilated(c):
    L, K = c.L, c.K
    inp = L.Input((20, 3), name="signal")
    x = L.Conv1D(4, 3, padding="causal", dilation_rate=2, activation="relu",
                 name="causal_d2")(inp)
    x = L.Conv1D(4, 2, padding="causal", dilation_rate=4, name="causal_d4")(x)
    x = L.ZeroPadding1D((2, 1), name="zero_pad")(x)
    x = L.Conv1D(5, 3, strides=2, padding="same", name="same_s2")(x)
    x = L.UpSampling1D(3, name="upsample")(x)
    x = L.Cropping1D((1, 4), name="crop")(x)
    chain = L.Conv1D(3, 4, strides=3, padding="valid", use_bias=False, name="valid_s3")(x)
    outs = [
        chain,
        L.Conv1D(3, 3, dilation_rate=3, padding="same", activation="tanh", name="same_d3")(inp),
        L.Conv1D(2, 5, strides=2, padding="causal", name="causal_s2")(inp),
        L.Conv1D(4, 3, padding="valid", activation="softmax", name="valid_softmax")(inp),
        L.MaxPooling1D(2, name="max_p2")(inp),
        L.MaxPooling1D(3, strides=2, padding="same", name="max_p3_s2_same")(inp),
        L.AveragePooling1D(3, strides=2, padding="same", name="avg_p3_s2_same")(inp),
        L.AveragePooling1D(4, strides=3, padding="valid", name="avg_p4_s3_valid")(inp),
        L.GlobalMaxPooling1D(name="gmax")(inp),
        L.GlobalAveragePooling1D(keepdims=True, name="gavg_keepdims")(inp),
        L.GlobalAveragePooling1D(name="gavg")(x),
        L.GlobalMaxPooling1D(keepdims=True, name="gmax_keepdims")(x),
    ]
    return {
        "model": K.Model(inp, outs, name="conv1d_causal_dilated"),
        "inputs": [("normal",)],
        "notes": "Chain: Conv1D causal dilation 2 (relu) -> causal dilation 4 -> "
                 "ZeroPadding1D((2, 1)) -> Conv1D same stride 2 -> UpSampling1D(3) -> "
                 "Cropping1D((1, 4)) -> Conv1D valid stride 3 without bias. Side outputs: Conv1D "
                 "same dilation 3 (tanh), causal stride 2, valid with softmax; Max/AveragePooling1D "
                 "(2 default; 3 stride 2 same; 4 stride 3 valid); GlobalMax/AveragePooling1D with "
                 "and without keepdims.",
    }


def build_bidirectional_merge(c):
    L, K = c.L, c.K
    inp = L.Input((6, 3), name="sequence")
    outs = [
        L.Bidirectional(L.LSTM(3), merge_mode="concat", name="bi_lstm_concat")(inp),
        L.Bidirectional(L.GRU(3, return_sequences=True), merge_mode="sum",
                        name="bi_gru_sum_seq")(inp),
        L.Bidirectional(L.SimpleRNN(3, return_sequences=True), merge_mode="mul",
                        name="bi_rnn_mul_seq")(inp),
        L.Bidirectional(L.LSTM(2, return_sequences=True, recurrent_activation="hard_sigmoid"),
                        merge_mode="ave", name="bi_lstm_ave_seq")(inp),
        L.Bidirectional(L.GRU(2, reset_after=False), merge_mode="concat",
                        name="bi_gru_reset_before")(inp),
        L.Bidirectional(L.SimpleRNN(2), merge_mode="ave", name="bi_rnn_ave")(inp),
    ]
    states = L.Bidirectional(L.LSTM(2, return_state=True), name="bi_lstm_state")(inp)
    outs += list(states)
    return {
        "model": K.Model(inp, outs, name="bidirectional_merge"),
        "inputs": [("normal",)],
        "notes": "Bidirectional LSTM / GRU / SimpleRNN with merge modes concat, sum, mul, ave, "
                 "sequences and last outputs; GRU reset_after=False; LSTM hard_sigmoid; "
                 "Bidirectional(LSTM(return_state)): output, forward h, c, backward h, c.",
    }


def build_time_distributed(c):
    L, K = c.L, c.K
    frames = L.Input((4, 6, 5, 2), name="frames")
    x = L.TimeDistributed(L.Conv2D(3, 3, activation="relu", name="conv"), name="td_conv")(frames)
    x = L.TimeDistributed(L.MaxPooling2D(2, name="pool"), name="td_pool")(x)
    x = L.TimeDistributed(L.Flatten(name="flat"), name="td_flatten")(x)
    x = L.TimeDistributed(L.Dense(5, activation="tanh", name="dense"), name="td_dense")(x)
    y = L.LSTM(3, name="lstm")(x)
    seq = L.Input((7, 4), name="sequence")
    d = L.TimeDistributed(L.Dense(3, activation="softmax", name="dense_sm"),
                          name="td_dense_softmax")(seq)
    return {
        "model": K.Model([frames, seq], [y, x, d], name="time_distributed"),
        "inputs": [("normal",), ("normal",)],
        "notes": "Frames (4 steps of 6x5x2) -> TimeDistributed(Conv2D 3x3 relu) -> "
                 "TimeDistributed(MaxPooling2D) -> TimeDistributed(Flatten) -> "
                 "TimeDistributed(Dense tanh) -> LSTM(3); and TimeDistributed(Dense softmax) on a "
                 "(7, 4) sequence.",
    }


def build_volumetric_3d(c):
    L, K = c.L, c.K
    inp = L.Input((6, 7, 5, 3), name="volume")
    a = L.Conv3D(4, (3, 2, 3), strides=(1, 2, 1), padding="same", activation="relu", name="conv3d_same")(inp)
    b = L.Conv3D(4, 2, dilation_rate=(2, 1, 2), padding="valid", use_bias=False, name="conv3d_dilated")(inp)
    m = L.MaxPooling3D((2, 2, 2), name="max_p2")(a)
    av = L.AveragePooling3D((3, 3, 2), strides=(2, 2, 1), padding="same", name="avg_p3_same")(a)
    g = L.Conv3D(6, 1, groups=2, activation="tanh", name="conv3d_groups")(b)
    return {
        "model": K.Model(inp, [m, av, g, L.GlobalAveragePooling3D(name="gavg")(a),
                               L.GlobalMaxPooling3D(keepdims=True, name="gmax_keepdims")(b)], name="volumetric_3d"),
        "inputs": [("normal",)],
        "notes": "Conv3D same (strided, relu), valid (dilated, no bias), grouped 1x1x1 (tanh); "
                 "MaxPooling3D default strides; AveragePooling3D 'same' (excluding padding); "
                 "GlobalAveragePooling3D and GlobalMaxPooling3D(keepdims=True) on a 6x7x5x3 volume.",
    }


# ----------------------------------------------------------------------------------------------
# Demo: a really trained digits CNN (Keras 2 flavour)
# ----------------------------------------------------------------------------------------------

def write_png_gray(path, img):
    """Minimal 8-bit grayscale PNG writer (no PIL needed). img: 2-D uint8 array."""
    h, w = img.shape
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    Path(path).write_bytes(png)


def make_demo(c):
    np, K, L = c.np, c.K, c.L
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    c.reset(1234)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)

    inp = L.Input((8, 8, 1), name="digit")
    h = L.Conv2D(16, (3, 3), padding="same", activation="relu", name="conv1")(inp)
    h = L.Conv2D(32, (3, 3), padding="same", activation="relu", name="conv2")(h)
    h = L.MaxPooling2D((2, 2), name="pool")(h)
    h = L.Flatten(name="flatten")(h)
    h = L.Dense(64, activation="relu", name="dense")(h)
    h = L.Dropout(0.25, name="dropout")(h)
    out = L.Dense(10, activation="softmax", name="probabilities")(h)
    model = K.Model(inp, out, name="digits_cnn")
    model.compile(optimizer=K.optimizers.Adam(learning_rate=0.003),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_tr, y_tr, epochs=15, batch_size=32, shuffle=True, verbose=0)
    probs = model.predict(x_te, verbose=0)
    pred = probs.argmax(axis=1)
    acc = float((pred == y_te).mean())
    print(f"  demo digits_cnn: test accuracy {acc:.4f} on {len(y_te)} held-out digits", flush=True)
    if acc < 0.95:
        raise RuntimeError(f"demo accuracy too low: {acc}")

    label = 7
    idx = next(i for i in range(len(y_te)) if y_te[i] == label and pred[i] == label)
    sample = np.ascontiguousarray(x_te[idx:idx + 1], dtype=np.float32)
    expected = model.predict(sample, verbose=0)[0].astype(np.float32)

    if DEMO_DIR.exists():
        shutil.rmtree(DEMO_DIR)
    DEMO_DIR.mkdir(parents=True)
    model_path = DEMO_DIR / "digits_cnn.h5"
    model.save(str(model_path), include_optimizer=False)
    reloaded = c.load(str(model_path))
    again = reloaded.predict(sample, verbose=0)[0]
    if np.max(np.abs(again - expected)) > 1e-6:
        raise RuntimeError("demo: reloaded model disagrees")

    np.save(DEMO_DIR / f"digit_{label}.npy", sample)
    img = np.clip(np.round(sample[0, :, :, 0] * 255.0), 0, 255).astype(np.uint8)
    write_png_gray(DEMO_DIR / f"digit_{label}.png", np.kron(img, np.ones((8, 8), np.uint8)))
    (DEMO_DIR / "labels.txt").write_text("".join(f"{i}\n" for i in range(10)))
    (DEMO_DIR / "expected.json").write_text(to_json({
        "model": "digits_cnn.h5",
        "input": f"digit_{label}.npy",
        "input_name": "digit",
        "input_shape": [1, 8, 8, 1],
        "output_name": "probabilities",
        "label": label,
        "predicted": int(expected.argmax()),
        "probabilities": [float(p) for p in expected],
        "test_accuracy": round(acc, 4),
        "test_samples": int(len(y_te)),
        "flavor": "keras2",
    }) + "\n")
    print(f"  demo: digit_{label} classified as {int(expected.argmax())} "
          f"(p={expected.max():.4f})", flush=True)


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="fixture name (e.g. pooling_k3), base name (both flavours) or 'demo'; "
                         "repeatable")
    ap.add_argument("--list", action="store_true", help="list fixture names and exit")
    ap.add_argument("--worker", choices=["keras2", "keras3"], help=argparse.SUPPRESS)
    ap.add_argument("--fixture", action="append", help=argparse.SUPPRESS)
    ap.add_argument("--demo", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--entries-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        print("demo")
        for n in all_fixture_names():
            print(n)
        return
    if args.worker:
        worker(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
