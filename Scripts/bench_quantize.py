"""mlconv quantize vs coremltools quantize_weights: wall time and peak RSS, one run each mode.

Run through Scripts/bench-quantize. coremltools runs in a child process so its peak memory is
measured on its own (resource.getrusage of children, max RSS in MB).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

CT_CHILD = r'''
import sys, time, warnings
warnings.filterwarnings("ignore")
import coremltools as ct
from coremltools.models.neural_network import quantization_utils as qu
src, dst, nbits, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
spec = ct.utils.load_spec(src)
t = time.perf_counter()
if mode == "fp16":
    out = ct.utils._convert_neural_network_spec_weights_to_fp16(spec)
else:
    out = qu.quantize_weights(ct.models.MLModel(spec, skip_model_load=True), nbits, quantization_mode=mode)
el = time.perf_counter() - t
ct.utils.save_spec(out if not hasattr(out, "get_spec") else out.get_spec(), dst)
print(el)
'''


MEASURE = r'''
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
sys.stderr.write(p.stderr)
print(p.stdout)
print("MEASURE", p.returncode, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
'''


def run_child(cmd):
    """Runs cmd in a fresh measuring process: (wall seconds, stdout, peak RSS MB of cmd alone)."""
    p = subprocess.run([sys.executable, "-c", MEASURE] + cmd, capture_output=True, text=True)
    last = p.stdout.strip().splitlines()[-1].split()
    code, wall, rss = int(last[1]), float(last[2]), int(last[3])
    if code != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + p.stderr[-2000:])
    return wall, "\n".join(p.stdout.strip().splitlines()[:-1]), rss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlconv", required=True)
    ap.add_argument("model")
    a = ap.parse_args()
    modes = [("kmeans", 8), ("kmeans", 4), ("linear", 8), ("linear", 4), ("fp16", 16)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode, bits in modes:
            ours_out = os.path.join(tmp, f"ours_{mode}{bits}.mlmodel")
            flag = ["--fp16"] if mode == "fp16" else ["--bits", str(bits), "--" + mode]
            ow, _, om = run_child([a.mlconv, "quantize", a.model, "-o", ours_out] + flag)
            ct_out = os.path.join(tmp, f"ct_{mode}{bits}.mlmodel")
            cw, cstdout, cm = run_child([sys.executable, "-c", CT_CHILD, a.model, ct_out, str(bits),
                                         "kmeans_lut" if mode == "kmeans" else mode])
            ct_inner = float([l for l in cstdout.strip().splitlines() if l.strip()][-1])
            rows.append((f"{mode} {bits}-bit", ow, cw, ct_inner, om, cm,
                         os.path.getsize(ours_out), os.path.getsize(ct_out)))
    print(f"model: {a.model} ({os.path.getsize(a.model)} bytes)")
    print(f"{'mode':<14}{'mlconv s':>10}{'coremltools s':>15}{'(in-call s)':>12}{'speed-up':>10}{'mlconv MB':>11}{'ct MB':>8}{'mlconv size':>13}{'ct size':>10}")
    for name, ow, cw, ci, om, cm, os_, cs in rows:
        print(f"{name:<14}{ow:10.3f}{cw:15.3f}{ci:12.3f}{ci / ow:9.1f}x{om:11.1f}{cm:8.1f}{os_:13d}{cs:10d}")


if __name__ == "__main__":
    main()
