"""mlconv vs ONNX Runtime vs TensorFlow: latency, load-to-first-prediction and peak RSS.

Run through Scripts/bench (which builds mlconv and its C library in release mode and provides the
Python venv). For each model and each thread count (default 1 and 2):

  convert ms     wall clock of `mlconv keras model.h5 -o model.mlbundle`
  latency        mlconv: `mlconv predict --benchmark N` (median of N after 3 warm-ups, the Swift
                 call); ONNX Runtime 1.32 (tf2onnx export, opset 13, CPU provider, default graph
                 optimisations) and TensorFlow (`model(x, training=False)`): `run` / call in a
                 Python loop, median of N after 3 warm-ups. Same intra-op thread count everywhere.
  load           time from "open the model" to "first prediction returned", with the library
                 already loaded: mlconv `mlconv.Model(bundle)` (the C library through the Python
                 package) + first `predict`; ORT `InferenceSession(...)` + first `run`; TF
                 `load_model(.h5)` + first call.
  peak RSS       ru_maxrss of the process that did the load and the timed runs (os.wait4 on it,
                 run as a grandchild of a tiny launcher: see `spawn`). Every runtime is hosted the same way (a fresh Python with NumPy and that
                 runtime's library imported), so the Python baseline is in each number; "import MB"
                 is the RSS before the model was opened.

Every measurement runs in its own subprocess (`bench.py --worker …`); the parent imports neither
TensorFlow nor ONNX Runtime. Ratios are mlconv / peer (< 1: mlconv faster / smaller).

--busy: after each idle measurement, start two busy-loop processes (one per core of the project's
2-core VM), measure mlconv and ONNX Runtime latency again under that load, stop them, and print
loaded / idle for each (issue 12: on a loaded machine the 2-thread latency may not degrade more
than ONNX Runtime's does).

Models: the seed look-alike fixtures (Fixtures/keras), the real 320×320 style network when
../shared is present, and keras.applications ResNet50, MobileNetV2 and EfficientNetB0 at
224×224×3 (weights=None, seed 0, batch-norm statistics from a random calibration batch so activations stay O(1); tf_keras,
the Keras 2 this script loads the fixtures with), generated into a temporary directory.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = ["fer_cnn", "tiny_yolo", "style_transfer", "sketch_cnn", "small_unet", "quickdraw_rnn"]
# keras.applications networks, generated (name → application class, input range)
APPLICATIONS = {"resnet50": ("ResNet50", (-1.0, 1.0)),
                "mobilenetv2": ("MobileNetV2", (-1.0, 1.0)),
                "efficientnetb0": ("EfficientNetB0", (0.0, 255.0))}  # EfficientNet rescales 0–255 itself
TARGETS = {"latency": 0.75, "load": 1.0, "rss": 1.0}  # issue 12: mlconv / ORT at most this


def default_names():
    return [s + "_k2" for s in SEEDS] + ["style_transfer_real"] + list(APPLICATIONS)


def parse_threads(text):
    out = []
    for part in text.split(","):
        n = int(part)
        if n < 1:
            raise argparse.ArgumentTypeError(f"--threads takes counts ≥ 1, found {n}")
        out.append(n)
    return out


def arg_parser():
    ap = argparse.ArgumentParser(description="mlconv vs ONNX Runtime vs TensorFlow (see the module docstring)")
    ap.add_argument("--mlconv", help="the mlconv executable (release build)")
    ap.add_argument("--library", help="libmlconv_c.so (release build) for the load / RSS measurement")
    ap.add_argument("--threads", type=parse_threads, default=[1, 2], help="comma-separated intra-op thread counts (default 1,2)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per latency median")
    ap.add_argument("--busy", action="store_true",
                    help="also measure mlconv and ORT latency with two busy-loop processes running; print loaded/idle")
    ap.add_argument("--busy-procs", type=int, default=2, help="busy-loop processes for --busy (default 2)")
    ap.add_argument("--profile", type=int, default=0, metavar="K",
                    help="print the K most expensive (op, kernel) pairs of `mlconv predict --profile` per model and thread count")
    ap.add_argument("--no-tf", action="store_true", help="skip TensorFlow (saves time)")
    ap.add_argument("--list", action="store_true", help="print the model names this run would measure and exit")
    ap.add_argument("--baseline", help="another mlconv binary (e.g. an earlier commit's release build), measured in the same run")
    ap.add_argument("--rounds", type=int, default=None,
                    help="measure mlconv (and --baseline) this many times, alternating, and keep the fastest median "
                         "(default 1; 3 with --baseline, so a busy moment does not land on one binary only)")
    # MARK: inference passes (issue 12)
    ap.add_argument("--baseline-args", default="",
                    help="extra `mlconv keras` arguments for the baseline, e.g. \"--disable-pass fuse_activation\" "
                         "(with --baseline set to the same binary: the same build with passes off, recorded in its bundle)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*")
    return ap


def path(p):
    return p if os.path.isabs(p) else os.path.join(ROOT, "Fixtures/keras", p)


def model_list(names):
    """The fixture dicts (manifest entries and generated models) for `names` (default: all), in order."""
    manifest = json.load(open(os.path.join(ROOT, "Fixtures/keras/manifest.json")))
    known = {fx["name"]: fx for fx in manifest["fixtures"]}
    shared = os.path.join(os.path.dirname(ROOT), "shared", "models")
    if os.path.isdir(shared):  # the real, full-size style-transfer network (320×320), when present
        known["style_transfer_real"] = {
            "name": "style_transfer_real", "flavor": "keras2",
            "model": os.path.join(shared, "style_transfer_vangogh.h5"),
            "mlconv_args": ["--lower", "res_crop=crop:2,2,2,2", "--lower", "rescale_output=affine:127.5,127.5"],
            "inputs": [{"name": "image", "file": os.path.join(shared, "reference", "london_big-ben_320.npy")}]}
    for name, (cls, _) in APPLICATIONS.items():
        known[name] = {"name": name, "flavor": "keras2", "generate": cls, "inputs": []}
    wanted = names or default_names()
    missing = [n for n in wanted if n not in known]
    if missing:
        print(f"bench: skipping unknown or absent models: {', '.join(missing)}", file=sys.stderr)
    return [dict(known[n]) for n in wanted if n in known]


# ------------------------------------------------------------------------------------------------
# Workers: each runs in a fresh process; the result is one JSON line on stdout.

def rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_keras(fx):
    if fx["flavor"] == "keras2":
        import tf_keras as keras
        return keras.models.load_model(path(fx["model"]), compile=False)
    import keras
    return keras.models.load_model(path(fx["model"]), compile=False, safe_mode=False)


def median_ms(fn, runs, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    median_ms.last_min = min(times) * 1000.0 if times else None  # the fastest run: least disturbed by other load
    return statistics.median(times) * 1000.0 if times else None


def worker_generate(job):
    """A keras.applications network with weights=None, seed 0 and calibrated batch-norm statistics."""
    import numpy as np
    import tf_keras as keras
    keras.utils.set_random_seed(0)
    cls = getattr(keras.applications, job["application"])
    model = cls(weights=None, input_shape=(224, 224, 3), classifier_activation=None)
    lo, hi = job["range"]
    calib = np.random.default_rng(2).uniform(lo, hi, (2, 224, 224, 3)).astype(np.float32)
    for layer in model.layers:
        if isinstance(layer, keras.layers.Normalization):  # EfficientNet: ImageNet statistics (after 1/255)
            w = layer.get_weights()
            w[0] = np.array([0.485, 0.456, 0.406], np.float32).reshape(w[0].shape)
            w[1] = np.array([0.229, 0.224, 0.225], np.float32).reshape(w[1].shape) ** 2
            layer.set_weights(w)
    # Freshly initialised batch norms (mean 0, variance 1) let the activations of 50+ random layers
    # vanish or explode (logits of 1e-11 or 1e23); statistics measured on a calibration batch, in
    # order (as if trained on it), with a random γ and β, keep every layer's output O(1).
    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            feat = keras.Model(model.input, layer.input)(calib, training=False).numpy()
            axes = tuple(range(feat.ndim - 1))
            g, b, _, _ = layer.get_weights()
            layer.set_weights([rng.uniform(0.8, 1.2, g.shape).astype(np.float32), rng.normal(0, 0.1, b.shape).astype(np.float32),
                               feat.mean(axes).astype(np.float32), feat.var(axes).astype(np.float32)])
    model.save(job["out_model"])
    x = np.random.default_rng(1).uniform(lo, hi, (1, 224, 224, 3)).astype(np.float32)
    np.save(job["out_input"], x)
    out = np.asarray(model(x, training=False))
    return {"input_name": model.layers[0].name, "parameters": int(model.count_params()), "layers": len(model.layers),
            "max_abs_output": float(np.abs(out).max())}


def worker_export(job):
    import numpy as np
    import tensorflow as tf
    import tf2onnx
    fx = job["fx"]
    model = load_keras(fx)
    xs = [np.load(path(i["file"])) for i in fx["inputs"]]
    spec = [tf.TensorSpec(x.shape, tf.float32, name=i["name"]) for x, i in zip(xs, fx["inputs"])]
    tf2onnx.convert.from_keras(model, input_signature=spec, opset=13, output_path=job["out_onnx"])
    return {}


def worker_tf(job):
    import numpy as np
    import tensorflow as tf
    t = job["threads"]
    tf.config.threading.set_intra_op_parallelism_threads(t)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    fx = job["fx"]
    if fx["flavor"] == "keras2":
        import tf_keras  # noqa: F401  (imported before the clock starts, as onnxruntime / mlconv are)
    else:
        import keras  # noqa: F401
    xs = [np.load(path(i["file"])) for i in fx["inputs"]]
    x = xs if len(xs) > 1 else xs[0]
    import_mb = rss_mb()
    t0 = time.perf_counter()
    model = load_keras(fx)
    t1 = time.perf_counter()
    out = model(x, training=False)
    t2 = time.perf_counter()
    np.save(job["out_npy"], np.asarray(out[0] if isinstance(out, (list, tuple)) else out, np.float32))
    ms = median_ms(lambda: model(x, training=False), job["runs"])
    return {"import_mb": import_mb, "open_ms": (t1 - t0) * 1e3, "first_ms": (t2 - t1) * 1e3, "median_ms": ms,
            "min_ms": median_ms.last_min}


def worker_ort(job):
    import numpy as np
    import onnxruntime as ort
    xs = [np.load(path(i["file"])) for i in job["fx"]["inputs"]]
    import_mb = rss_mb()
    so = ort.SessionOptions()  # graph_optimization_level: the default (ORT_ENABLE_ALL)
    so.intra_op_num_threads = job["threads"]
    so.inter_op_num_threads = 1
    t0 = time.perf_counter()
    sess = ort.InferenceSession(job["onnx"], so, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), xs)}
    t1 = time.perf_counter()
    out = sess.run(None, feeds)
    t2 = time.perf_counter()
    if job.get("out_npy"):
        np.save(job["out_npy"], out[0].astype(np.float32))
    ms = median_ms(lambda: sess.run(None, feeds), job["runs"])
    return {"import_mb": import_mb, "open_ms": (t1 - t0) * 1e3, "first_ms": (t2 - t1) * 1e3, "median_ms": ms,
            "min_ms": median_ms.last_min}


def worker_mlconv(job):
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ["MLCONV_LIBRARY"] = job["library"]
    import mlconv
    mlconv._lib.lib()  # dlopen the library (Swift runtime, oneDNN) before the clock starts
    feeds = {i["name"]: np.load(path(i["file"])) for i in job["fx"]["inputs"]}
    import_mb = rss_mb()
    t0 = time.perf_counter()
    model = mlconv.Model(job["bundle"], use_cache=False, threads=job["threads"])
    t1 = time.perf_counter()
    out = model.predict(feeds)
    t2 = time.perf_counter()
    first = next(iter(out.values()))
    np.save(job["out_npy"], np.asarray(first, np.float32))
    ms = median_ms(lambda: model.predict(feeds), job["runs"])
    return {"import_mb": import_mb, "open_ms": (t1 - t0) * 1e3, "first_ms": (t2 - t1) * 1e3, "median_ms": ms,
            "min_ms": median_ms.last_min}


WORKERS = {"generate": worker_generate, "export": worker_export, "tf": worker_tf, "ort": worker_ort, "mlconv": worker_mlconv}


# A child's ru_maxrss starts at its parent's peak RSS (Linux records the forked copy of the parent's
# address space as the child's high-water mark at exec), so a child of a big process can never
# report less than its parent. The measured command therefore runs as the grandchild of this tiny
# launcher (python -S, a few MB), which reports the grandchild's rusage.
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def spawn(cmd, env=None):
    """Runs cmd to completion; returns (stdout, stderr, returncode, peak RSS MB of that process)."""
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se, \
            tempfile.NamedTemporaryFile("r", suffix=".maxrss") as rss:
        rc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, rss.name] + list(cmd), stdout=so, stderr=se, env=env).returncode
        so.seek(0)
        se.seek(0)
        text = rss.read().strip()
        return so.read(), se.read(), rc, (int(text) / 1024.0 if text else None)


def worker(kind, job):
    out, err, rc, peak = spawn([sys.executable, os.path.abspath(__file__), "--worker", kind, json.dumps(job)])
    if rc != 0:
        raise RuntimeError(f"{kind} worker failed (exit {rc}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = peak
    if "open_ms" in result:
        result["load_ms"] = result["open_ms"] + result["first_ms"]
    return result


# ------------------------------------------------------------------------------------------------
# mlconv CLI

def convert(mlconv, fx, bundle, extra=()):
    cmd = [mlconv, "keras", path(fx["model"]), "-o", bundle] + fx.get("mlconv_args", []) + list(extra)
    if fx.get("config"):
        cmd += ["--config", path(fx["config"])]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mlconv keras {fx['name']} failed:\n{r.stderr.strip()}")
    return (time.perf_counter() - t) * 1000.0


def predict_cmd(mlconv, fx, bundle, threads):
    cmd = [mlconv, "predict", bundle, "--threads", str(threads)]
    for inp in fx["inputs"]:
        cmd += ["--input", f'{inp["name"]}={path(inp["file"])}']
    return cmd


def cli_latency(mlconv, fx, bundle, threads, runs):
    """(median ms of `mlconv predict --benchmark runs`, peak RSS MB of that process)."""
    out, err, rc, peak = spawn(predict_cmd(mlconv, fx, bundle, threads) + ["--benchmark", str(runs)])
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms", out)
    if rc != 0 or not m:
        raise RuntimeError(f"no latency in mlconv output (exit {rc}):\n{out}\n{err}")
    cli_latency.last_min = float(m.group(2))
    return float(m.group(1)), peak


def profile(mlconv, fx, bundle, threads, k):
    """The k most expensive (op, kernel) pairs of one `mlconv predict --profile` run: [(ms, %, op, kernel, count)]."""
    r = subprocess.run(predict_cmd(mlconv, fx, bundle, threads) + ["--profile"], capture_output=True, text=True, check=True)
    total, agg = None, {}
    for line in r.stdout.splitlines():
        m = re.match(r"profile: ([0-9.]+) ms", line)
        if m:
            total = float(m.group(1))
        m = re.match(r"\s+([0-9.]+) ms\s+[0-9.]+%\s+(\S+)\s+(\S+)\s+\[(.*)\]$", line)
        if m:
            key = (m.group(3), m.group(4))
            ms, n = agg.get(key, (0.0, 0))
            agg[key] = (ms + float(m.group(1)), n + 1)
    top = sorted(agg.items(), key=lambda kv: -kv[1][0])[:k]
    return total, [(ms, 100 * ms / total if total else 0, op, kernel, n) for (op, kernel), (ms, n) in top]


class Busy:
    """n busy-loop processes (pure Python spin), started and stopped by pid."""

    def __init__(self, n):
        self.n, self.procs = n, []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(self.n)]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def fmt(x, spec="9.2f", width=9):
    return f"{x:{spec}}" if x is not None else f"{'n/a':>{width}}"


def ratio(a, b):
    return a / b if a is not None and b else None


def verdict(r, target):
    if r is None:
        return "n/a"
    return "met" if r <= target else f"missed by {100 * (r / target - 1):.0f}%"


def main():
    a = arg_parser().parse_args()
    if a.worker:
        import numpy as np  # noqa: F401
        print(json.dumps(WORKERS[a.worker](json.loads(a.names[0]))))
        return
    models = model_list(a.names)
    if a.list:
        print("\n".join(fx["name"] for fx in models))
        return
    if not a.mlconv or not a.library:
        sys.exit("bench.py: --mlconv and --library are required (Scripts/bench passes them)")
    rows, busy_rows, profiles = [], [], []
    a.load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for fx in models:
            name = fx["name"]
            if fx.get("generate"):
                cls, rng = APPLICATIONS[name]
                h5, x = os.path.join(tmp, name + ".h5"), os.path.join(tmp, name + "_x.npy")
                g = worker("generate", {"application": cls, "out_model": h5, "out_input": x, "range": rng})
                fx["model"], fx["inputs"] = h5, [{"name": g["input_name"], "file": x}]
                print(f"{name}: keras.applications.{cls}, {g['parameters']:,} parameters, {g['layers']} layers, "
                      f"max |output| {g['max_abs_output']:.3g}", file=sys.stderr)
            bundle = os.path.join(tmp, name + ".mlbundle")
            try:
                conv_ms = convert(a.mlconv, fx, bundle)
            except RuntimeError as e:
                print(f"{name}: {e}", file=sys.stderr)
                rows.append({"name": name, "error": str(e).splitlines()[-1]})
                continue
            onnx_path = os.path.join(tmp, name + ".onnx")
            try:
                worker("export", {"fx": fx, "out_onnx": onnx_path})
            except RuntimeError as e:
                print(f"{name}: tf2onnx export failed: {e}", file=sys.stderr)
                onnx_path = None
            for t in a.threads:
                row = {"name": name, "threads": t, "convert_ms": conv_ms}
                rounds = a.rounds or (3 if a.baseline else 1)
                for _ in range(rounds):
                    o, cli_mb = cli_latency(a.mlconv, fx, bundle, t, a.runs)
                    row["mlconv_ms"] = min(row.get("mlconv_ms", o), o)
                    row["mlconv_min_ms"] = min(row.get("mlconv_min_ms", cli_latency.last_min), cli_latency.last_min)
                    row["cli_mb"] = cli_mb
                    if a.baseline:
                        bb = os.path.join(tmp, name + ".base.mlbundle")
                        convert(a.baseline, fx, bb, a.baseline_args.split())
                        b = cli_latency(a.baseline, fx, bb, t, a.runs)[0]
                        row["base_ms"] = min(row.get("base_ms", b), b)
                ours_npy = os.path.join(tmp, f"{name}.{t}.mlconv.npy")
                row["mlconv"] = worker("mlconv", {"fx": fx, "bundle": bundle, "library": a.library, "threads": t,
                                                  "runs": 3, "out_npy": ours_npy})
                if onnx_path:
                    ort_npy = os.path.join(tmp, f"{name}.{t}.ort.npy")
                    row["ort"] = worker("ort", {"fx": fx, "onnx": onnx_path, "threads": t, "runs": a.runs, "out_npy": ort_npy})
                    row["diff_ort"] = max_diff(ours_npy, ort_npy)
                if not a.no_tf:
                    tf_npy = os.path.join(tmp, f"{name}.{t}.tf.npy")
                    row["tf"] = worker("tf", {"fx": fx, "threads": t, "runs": a.runs, "out_npy": tf_npy})
                    row["diff_tf"] = max_diff(ours_npy, tf_npy)
                rows.append(row)
                if a.busy and onnx_path:
                    with Busy(a.busy_procs):
                        ob = cli_latency(a.mlconv, fx, bundle, t, a.runs)[0]
                        rb = worker("ort", {"fx": fx, "onnx": onnx_path, "threads": t, "runs": a.runs})["median_ms"]
                    busy_rows.append((name, t, row["mlconv_ms"], ob, row["ort"]["median_ms"], rb))
                if a.profile:
                    profiles.append((name, t, *profile(a.mlconv, fx, bundle, t, a.profile)))
                print(f"  measured {name} at {t} thread(s): {json.dumps(row)}", file=sys.stderr, flush=True)
    a.load_after = os.getloadavg()
    report(a, rows, busy_rows, profiles)


def max_diff(p, q):
    import numpy as np
    x, y = np.load(p).ravel(), np.load(q).ravel()
    return float(np.abs(x - y).max()) if x.size == y.size else None


def report(a, rows, busy_rows, profiles):
    print(f"runs={a.runs}  threads={','.join(map(str, a.threads))}  "
          f"(ratios mlconv / ONNX Runtime; targets: latency ≤ {TARGETS['latency']}, load ≤ {TARGETS['load']}, RSS ≤ {TARGETS['rss']})")
    print("load average (1, 5, 15 min) before: %.2f %.2f %.2f, after: %.2f %.2f %.2f" % (*a.load_before, *a.load_after))
    for t in a.threads:
        print(f"\n== {t} thread(s): latency ms (median) ==")
        head = f"{'model':<22}{'convert':>9}{'mlconv':>10}{'ORT':>10}{'TF':>10}{'/ORT':>7}{'/TF':>7}"
        if a.baseline:
            head += f"{'before':>10}{'bef/ORT':>9}"
        print(head)
        for r in rows:
            if r.get("error"):
                if t == a.threads[0]:
                    print(f"{r['name']:<22} conversion failed: {r['error']}")
                continue
            if r["threads"] != t:
                continue
            ort, tf = r.get("ort", {}).get("median_ms"), r.get("tf", {}).get("median_ms")
            line = (f"{r['name']:<22}{r['convert_ms']:9.1f}{r['mlconv_ms']:10.3f}{fmt(ort, '10.3f', 10)}{fmt(tf, '10.2f', 10)}"
                    f"{fmt(ratio(r['mlconv_ms'], ort), '7.2f', 7)}{fmt(ratio(r['mlconv_ms'], tf), '7.2f', 7)}")
            if a.baseline:
                line += f"{r['base_ms']:10.2f}{fmt(ratio(r['base_ms'], ort), '9.2f', 9)}"
            print(line)
        print(f"\n== {t} thread(s): fastest run ms (min of the same runs; the least disturbed by other load) ==")
        print(f"{'model':<22}{'mlconv':>10}{'ORT':>10}{'TF':>10}{'/ORT':>7}")
        for r in rows:
            if r.get("error") or r["threads"] != t:
                continue
            ort, tf = r.get("ort", {}).get("min_ms"), r.get("tf", {}).get("min_ms")
            print(f"{r['name']:<22}{r['mlconv_min_ms']:10.3f}{fmt(ort, '10.3f', 10)}{fmt(tf, '10.2f', 10)}"
                  f"{fmt(ratio(r['mlconv_min_ms'], ort), '7.2f', 7)}")
        print(f"\n== {t} thread(s): load-to-first-prediction ms (open + first run) and peak RSS MB ==")
        print(f"{'model':<22}{'mlconv':>9}{'ORT':>9}{'TF':>9}{'/ORT':>7}  "
              f"{'mlconv MB':>9}{'(import)':>9}{'ORT MB':>8}{'(import)':>9}{'TF MB':>8}{'/ORT':>6}{'CLI MB':>8}  "
              f"{'|Δ| ORT':>9}{'|Δ| TF':>9}")
        for r in rows:
            if r.get("error") or r["threads"] != t:
                continue
            m, o, f = r["mlconv"], r.get("ort", {}), r.get("tf", {})
            print(f"{r['name']:<22}{m['load_ms']:9.1f}{fmt(o.get('load_ms'), '9.1f')}{fmt(f.get('load_ms'), '9.1f')}"
                  f"{fmt(ratio(m['load_ms'], o.get('load_ms')), '7.2f', 7)}  "
                  f"{m['peak_mb']:9.0f}{m['import_mb']:9.0f}{fmt(o.get('peak_mb'), '8.0f', 8)}{fmt(o.get('import_mb'), '9.0f')}"
                  f"{fmt(f.get('peak_mb'), '8.0f', 8)}{fmt(ratio(m['peak_mb'], o.get('peak_mb')), '6.2f', 6)}{r['cli_mb']:8.0f}  "
                  f"{fmt(r.get('diff_ort'), '9.1e')}{fmt(r.get('diff_tf'), '9.1e')}")
        print(f"\n== {t} thread(s): issue 12 targets (mlconv / ORT) ==")
        for r in rows:
            if r.get("error") or r["threads"] != t or "ort" not in r:
                continue
            o = r["ort"]
            lat, load, rss = ratio(r["mlconv_ms"], o["median_ms"]), ratio(r["mlconv"]["load_ms"], o["load_ms"]), \
                ratio(r["mlconv"]["peak_mb"], o["peak_mb"])
            print(f"{r['name']:<22} latency {lat:.2f} {verdict(lat, TARGETS['latency']):<16} load {load:.2f} "
                  f"{verdict(load, TARGETS['load']):<16} RSS {rss:.2f} {verdict(rss, TARGETS['rss'])}")
    if busy_rows:
        print(f"\n== --busy: {a.busy_procs} busy-loop processes; latency ms idle → loaded, and loaded / idle ==")
        print(f"{'model':<22}{'thr':>4}{'mlconv idle':>12}{'loaded':>10}{'x':>7}{'ORT idle':>10}{'loaded':>10}{'x':>7}{'mlconv x / ORT x':>18}")
        for name, t, oi, ob, ri, rb in busy_rows:
            print(f"{name:<22}{t:4d}{oi:12.3f}{ob:10.3f}{ob / oi:7.2f}{ri:10.3f}{rb:10.3f}{rb / ri:7.2f}{(ob / oi) / (rb / ri):18.2f}")
    for name, t, total, top in profiles:
        print(f"\n== mlconv predict --profile: {name}, {t} thread(s), {total:.2f} ms in layers; top (op, kernel) ==")
        for ms, pct, op, kernel, n in top:
            print(f"  {ms:9.2f} ms {pct:5.1f}%  {n:3d}× {op}  [{kernel}]")


if __name__ == "__main__":
    main()
