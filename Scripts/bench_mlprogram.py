"""MobileNetV2 through mlconv: the Keras route (.h5 → .mlbundle) vs the ML program route
(.h5 → .mlpackage → mlconv predict), fp32 and fp16 ML programs, optionally compressed.

Run through Scripts/bench-mlprogram (builds mlconv in release mode; Python venv with tf.keras 2.15).
The network is tf.keras.applications.MobileNetV2(weights=None, classifier_activation=None) with a
fixed seed and random batch-norm statistics (no weight download), 224×224×3, batch 1, logits out. Latency: `mlconv predict --benchmark N` median after 3 warm-up
runs, same thread count for every route; peak RSS of that `mlconv predict` process. Also checks that the ML program's output matches the
Keras route's (max |Δ|).
"""
import argparse, os, re, subprocess, sys, tempfile
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import spawn  # peak RSS of the measured process (not a floor at this TensorFlow process's peak)


def latency(mlconv, model, inp, threads, runs):
    """(median ms of `mlconv predict --benchmark runs`, peak RSS MB of that process)."""
    out, _, rc, peak = spawn([mlconv, "predict", model, "--input", f"input_1={inp}", "--threads", str(threads),
                              "--benchmark", str(runs)])
    m = re.search(r"median ([0-9.]+) ms", out)
    if rc != 0 or not m:
        raise RuntimeError("no latency in mlconv output:\n" + out)
    return float(m.group(1)), peak


def predict(mlconv, model, inp, outdir):
    subprocess.run([mlconv, "predict", model, "--input", f"input_1={inp}", "--output-dir", outdir],
                   check=True, capture_output=True)
    files = [f for f in os.listdir(outdir) if f.endswith(".npy")]
    return np.load(os.path.join(outdir, files[0]))


ap = argparse.ArgumentParser()
ap.add_argument("--mlconv", required=True)
ap.add_argument("--threads", type=int, default=os.cpu_count())
ap.add_argument("--runs", type=int, default=20)
a = ap.parse_args()

import tensorflow as tf
tf.keras.utils.set_random_seed(0)
model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3), classifier_activation=None)
# Freshly initialised batch norms (mean 0, variance 1, γ 1, β 0) shrink the signal to ~1e-11 logits;
# plausible statistics keep the outputs O(1) so the parity column means something.
rng = np.random.default_rng(0)
for layer in model.layers:
    if isinstance(layer, tf.keras.layers.BatchNormalization):
        g, b, m, v = layer.get_weights()
        layer.set_weights([rng.uniform(0.8, 1.6, g.shape).astype(np.float32), rng.normal(0, 0.1, b.shape).astype(np.float32),
                           rng.normal(0, 0.1, m.shape).astype(np.float32), rng.uniform(0.05, 0.3, v.shape).astype(np.float32)])
with tempfile.TemporaryDirectory() as tmp:
    h5 = os.path.join(tmp, "mobilenetv2.h5")
    model.save(h5)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    inp = os.path.join(tmp, "x.npy"); np.save(inp, x)
    routes = [("Keras route (.mlbundle)", os.path.join(tmp, "m.mlbundle"), []),
              ("ML program fp32 (.mlpackage)", os.path.join(tmp, "m32.mlpackage"), ["--precision", "fp32"]),
              ("ML program fp16 (.mlpackage)", os.path.join(tmp, "m16.mlpackage"), ["--precision", "fp16"])]
    for _, path, extra in routes:
        subprocess.run([a.mlconv, "keras", h5, "-o", path] + extra, check=True, capture_output=True)
    q = os.path.join(tmp, "m32_pal4.mlpackage")
    subprocess.run([a.mlconv, "quantize", routes[1][1], "-o", q, "--palettize", "4"], check=True, capture_output=True)
    routes.append(("ML program fp32, 4-bit palettized", q, None))
    ref = predict(a.mlconv, routes[0][1], inp, os.path.join(tmp, "o0"))
    print(f"MobileNetV2 (weights=None, seed 0), 224x224x3, threads={a.threads}, runs={a.runs} (median after 3 warm-up), "
          f"mlconv {a.mlconv}, load average {os.getloadavg()[0]:.1f}")
    print(f"logits: max |Keras route| = {float(np.abs(ref).max()):.3g}")
    print(f"{'route':40s} {'size MB':>8s} {'median ms':>10s} {'peak RSS MB':>12s} {'max|Δ| vs Keras route':>22s}")
    for i, (name, path, _) in enumerate(routes):
        ms, peak = latency(a.mlconv, path, inp, a.threads, a.runs)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs) if os.path.isdir(path) else os.path.getsize(path)
        diff = float(np.abs(predict(a.mlconv, path, inp, os.path.join(tmp, f"o{i}")) - ref).max())
        print(f"{name:40s} {size / 1e6:8.1f} {ms:10.2f} {peak:12.0f} {diff:22.2e}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
