"""mlconv vs TensorFlow vs ONNX Runtime latency on the seed look-alike fixtures.

Run through Scripts/bench (which builds mlconv in release mode and provides the Python venv).
For each fixture: mlconv convert time (wall clock of `mlconv keras`), mlconv prediction latency
(`mlconv predict --benchmark`, median of N after warm-up), TensorFlow latency (`model(x,
training=False)` in a loop), ONNX Runtime latency (model converted with tf2onnx), all with the same
thread count. Prints a table with ratios (ours / peer; < 1 means mlconv is faster).
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


def median_latency(fn, runs, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000.0


def path(p):
    return p if os.path.isabs(p) else os.path.join(ROOT, "Fixtures/keras", p)


def ours(mlconv, fx, tmp, threads, runs, extra=()):
    bundle = os.path.join(tmp, fx["name"] + ".mlbundle")
    cmd = [mlconv, "keras", path(fx["model"]), "-o", bundle] + fx.get("mlconv_args", []) + list(extra)
    if fx.get("config"):
        cmd += ["--config", path(fx["config"])]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    convert_ms = (time.perf_counter() - t) * 1000.0
    cmd = [mlconv, "predict", bundle, "--threads", str(threads), "--benchmark", str(runs)]
    for inp in fx["inputs"]:
        cmd += ["--input", f'{inp["name"]}={path(inp["file"])}']
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError("no latency in mlconv output:\n" + out)
    return convert_ms, float(m.group(1))


def peers(fx, tmp, threads, runs):
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if fx["flavor"] == "keras2":
        import tf_keras as keras
    else:
        import keras
    model = keras.models.load_model(path(fx["model"]), compile=False, safe_mode=False) if fx["flavor"] == "keras3" \
        else keras.models.load_model(path(fx["model"]), compile=False)
    xs = [np.load(path(i["file"])) for i in fx["inputs"]]
    tf_ms = median_latency(lambda: model(xs if len(xs) > 1 else xs[0], training=False), runs)
    ort_ms = None
    try:
        import onnxruntime as ort
        import tf2onnx
        spec = [tf.TensorSpec(x.shape, tf.float32, name=i["name"]) for x, i in zip(xs, fx["inputs"])]
        onnx_path = os.path.join(tmp, fx["name"] + ".onnx")
        tf2onnx.convert.from_keras(model, input_signature=spec, opset=13, output_path=onnx_path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        feeds = {i.name: x for i, x in zip(sess.get_inputs(), xs)}
        ort_ms = median_latency(lambda: sess.run(None, feeds), runs)
    except Exception as e:  # report, don't hide
        print(f"  ONNX Runtime unavailable for {fx['name']}: {e}", file=sys.stderr)
    return tf_ms, ort_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlconv", required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--baseline", help="another mlconv binary (e.g. an earlier commit's release build), measured in the same run")
    ap.add_argument("--rounds", type=int, default=None,
                    help="measure mlconv (and --baseline) this many times, alternating, and keep the fastest median "
                         "(default 1; 3 with --baseline, so a busy moment does not land on one binary only)")
    # MARK: inference passes (issue 12)
    ap.add_argument("--baseline-args", default="",
                    help="extra `mlconv keras` arguments for the baseline, e.g. \"--disable-pass fuse_activation\" "
                         "(with --baseline set to the same binary: the same build with passes off, recorded in its bundle)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    manifest = json.load(open(os.path.join(ROOT, "Fixtures/keras/manifest.json")))
    shared = os.path.join(os.path.dirname(ROOT), "shared", "models")
    if os.path.isdir(shared):  # the real, full-size style-transfer network (320×320), when present
        manifest["fixtures"].append({
            "name": "style_transfer_real", "flavor": "keras2",
            "model": os.path.join(shared, "style_transfer_vangogh.h5"),
            "mlconv_args": ["--lower", "res_crop=crop:2,2,2,2", "--lower", "rescale_output=affine:127.5,127.5"],
            "inputs": [{"name": "image", "file": os.path.join(shared, "reference", "london_big-ben_320.npy")}]})
    wanted = a.names or [s + "_k2" for s in SEEDS] + ["style_transfer_real"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for fx in manifest["fixtures"]:
            if fx["name"] not in wanted:
                continue
            rounds = a.rounds or (3 if a.baseline else 1)
            conv_ms = our_ms = base_ms = None
            for _ in range(rounds):
                c, o = ours(a.mlconv, fx, tmp, a.threads, a.runs)
                conv_ms, our_ms = min(conv_ms or c, c), min(our_ms or o, o)
                if a.baseline:
                    b = ours(a.baseline, fx, tmp, a.threads, a.runs, a.baseline_args.split())[1]
                    base_ms = min(base_ms or b, b)
            tf_ms, ort_ms = peers(fx, tmp, a.threads, a.runs)
            rows.append((fx["name"], conv_ms, our_ms, tf_ms, ort_ms, base_ms))
    print(f"threads={a.threads} runs={a.runs}")
    base_head = f"{'before ms':>11}{'before/ORT':>11}" if a.baseline else ""
    print(f"{'model':<22}{'convert ms':>11}{'mlconv ms':>11}{'TF ms':>9}{'ORT ms':>9}{'ours/TF':>9}{'ours/ORT':>9}{base_head}")
    for name, c, o, t, r, b in rows:
        rs = f"{o / r:9.2f}" if r else f"{'n/a':>9}"
        rv = f"{r:9.2f}" if r else f"{'n/a':>9}"
        base = ""
        if b is not None:
            base = f"{b:11.2f}" + (f"{b / r:11.2f}" if r else f"{'n/a':>11}")
        print(f"{name:<22}{c:11.1f}{o:11.2f}{t:9.2f}{rv}{o / t:9.2f}{rs}{base}")


if __name__ == "__main__":
    main()
