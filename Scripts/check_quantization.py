#!/usr/bin/env python3
"""Peer check (not a test): mlconv's weight quantization against coremltools 7.2.

What it checks, on a few random tensors saved as .npy:
  * linear 1…8-bit per channel and linear_symmetric 8-bit: the packed bytes, scales and biases
    must be identical to coremltools' NeuralNetwork path (`_quantize_wp_field` on a real
    WeightParams protobuf: floatValue → float64 maths → float32 scale/bias → rawValue bytes);
  * k-means LUT (1, 2, 4, 8 bits): our SQNR (exact 1-D k-means) must be ≥ coremltools' sklearn
    k-means (the NN path) and equal (within rounding) to coremltools' vendored exact `kmeans1d`.

Setup, once (its own venv; coremltools 7.2 needs protobuf 3.20 and numpy < 2):
    python3 -m venv /opt/ctvenv
    /opt/ctvenv/bin/pip install coremltools==7.2 protobuf==3.20.3 "numpy<2" scikit-learn==1.5.1

Run from anywhere:
    /opt/ctvenv/bin/python Scripts/check_quantization.py            # writes /tmp/mlconv-quant-check
    /opt/ctvenv/bin/python Scripts/check_quantization.py --no-swift # if you ran the Swift side yourself:
        MLCONV_QUANT_CHECK_DIR=/tmp/mlconv-quant-check swift test --filter PeerCheckExportTests

The Swift side is `Tests/MLPassesTests/PeerCheckExportTests.swift`, skipped unless
MLCONV_QUANT_CHECK_DIR is set. Exit status 0 when everything matches, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_tensors(rng):
    """name → (float32 array in the canonical layout, per-channel axis or None, k-means bit widths)."""
    t = {}
    t["conv"] = ((rng.standard_normal((32, 16, 3, 3)) * 0.05).astype(np.float32), 0, [1, 2, 4, 8])
    t["dense"] = (rng.uniform(-1, 1, (64, 256)).astype(np.float32), 0, [1, 2, 4, 8])
    t["deconv"] = (rng.laplace(0, 0.1, (16, 8, 4, 4)).astype(np.float32), 1, [2, 4, 8])
    t["bias"] = (rng.standard_normal(64).astype(np.float32), None, [2, 4])
    # fp16-valued weights: many repeated values (the unique-value reduction, coremltools' kmeans1d case).
    t["fp16grid"] = ((rng.standard_normal(20000) * 0.05).astype(np.float16).astype(np.float32), None, [4, 8])
    # Multiples of 1/8 with a channel range of 7/8: many exact .5 ties in the linear rounding.
    t["ties"] = ((rng.integers(0, 8, (8, 40)) / 8.0).astype(np.float32), 0, [2])
    # One constant channel: scale 0 → inv_scale 0 guard.
    c = rng.standard_normal((4, 50)).astype(np.float32)
    c[2, :] = 0.375
    t["constchan"] = (c, 0, [2])
    t["large"] = ((rng.standard_normal((256, 512)) * 0.02).astype(np.float32), 0, [8])
    return t


def coremltools_linear(w, nbits, axis, symmetric):
    from coremltools.proto import NeuralNetwork_pb2
    from coremltools.models.neural_network import quantization_utils as qu
    wp = NeuralNetwork_pb2.WeightParams()
    wp.floatValue.extend(w.flatten().tolist())
    mode = "linear_symmetric" if symmetric else "linear"
    qm = {"linear": qu._QUANTIZATION_MODE_LINEAR_QUANTIZATION,
          "linear_symmetric": qu._QUANTIZATION_MODE_LINEAR_SYMMETRIC}[mode]
    qu._quantize_wp_field(wp, nbits, qm, shape=w.shape, axis=axis if axis is not None else 0)
    lq = wp.quantization.linearQuantization
    return bytes(wp.rawValue), np.array(lq.scale, dtype=np.float32), np.array(lq.bias, dtype=np.float32)


def unpack(raw, nbits, count):
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8))[: count * nbits].reshape(count, nbits)
    return (bits * (1 << np.arange(nbits - 1, -1, -1))).sum(axis=1)


def sqnr(w, wq):
    w = w.astype(np.float64).ravel()
    e = np.sum((w - wq.astype(np.float64).ravel()) ** 2)
    return float("inf") if e == 0 else 10 * np.log10(np.sum(w * w) / e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/mlconv-quant-check")
    ap.add_argument("--no-swift", action="store_true", help="do not run the Swift export (run it yourself)")
    ap.add_argument("--package-path", default=ROOT, help="Swift package to run the export test in")
    ap.add_argument("--scratch-path", default=None, help="swift --scratch-path")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()

    from coremltools.models.neural_network import quantization_utils as qu

    os.makedirs(args.dir, exist_ok=True)
    tensors = make_tensors(np.random.default_rng(args.seed))
    manifest = []
    for name, (w, axis, kbits) in tensors.items():
        np.save(os.path.join(args.dir, name + ".npy"), w)
        manifest.append({"name": name, "shape": list(w.shape), "axis": axis, "kmeans_bits": kbits})
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f)

    if not args.no_swift:
        cmd = ["swift", "test", "--package-path", args.package_path, "--filter", "PeerCheckExportTests"]
        if args.scratch_path:
            cmd[2:2] = ["--scratch-path", args.scratch_path]
        env = dict(os.environ, MLCONV_QUANT_CHECK_DIR=args.dir)
        print("running:", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-4000:], r.stderr[-4000:])
            sys.exit("the Swift export failed")

    with open(os.path.join(args.dir, "ours.json")) as f:
        ours = json.load(f)
    with open(os.path.join(args.dir, "ours_metrics.json")) as f:
        metrics = json.load(f)["metrics"]

    ok = True
    print("\nLinear quantization vs coremltools _quantize_wp_field (bytes, float32 scale and bias)")
    print(f"{'tensor':<10} {'shape':<16} {'axis':>4}  " + " ".join(f"{b}-bit" for b in range(1, 9)) + "  sym8")
    for name, (w, axis, _) in tensors.items():
        marks = []
        for bits in list(range(1, 9)) + ["sym"]:
            symmetric = bits == "sym"
            nb = 8 if symmetric else bits
            raw, scale, bias = coremltools_linear(w, nb, axis, symmetric)
            tag = "symmetric" if symmetric else f"linear{bits}"
            with open(os.path.join(args.dir, f"ours_{name}_{tag}.bin"), "rb") as f:
                mine = f.read()
            key = "symmetric" if symmetric else "linear"
            bkey = "8" if symmetric else str(bits)
            my_scale = np.array(ours[name][key + "_scale"][bkey], dtype=np.float32)
            my_bias = np.array(ours[name][key + "_bias"][bkey], dtype=np.float32)
            same = (mine == raw and np.array_equal(my_scale, scale) and np.array_equal(my_bias, bias))
            if not same:
                ok = False
                diff = sum(a != b for a, b in zip(mine, raw)) + abs(len(mine) - len(raw))
                print(f"  MISMATCH {name} {tag}: {diff} bytes differ; scale equal {np.array_equal(my_scale, scale)}, "
                      f"bias equal {np.array_equal(my_bias, bias)}")
            marks.append("  ok " if same else "DIFF ")
        print(f"{name:<10} {str(w.shape):<16} {str(axis):>4}  " + " ".join(marks))

    print("\nk-means LUT SQNR (dB): mlconv (exact DP) vs coremltools kmeans1d (exact) and sklearn (NN path)")
    print("(t mlconv is measured inside `swift test`, i.e. a debug build; release builds are ~5-10x faster)")
    print(f"{'tensor':<10} {'n':>7} {'bits':>4} {'mlconv':>9} {'kmeans1d':>9} {'sklearn':>9}"
          f" {'ours−skl':>8} {'t mlconv':>9} {'t kmeans1d':>10} {'t sklearn':>9}")
    for name, (w, axis, kbits) in tensors.items():
        w64 = w.astype(np.float64)
        for bits in kbits:
            lut = np.array(ours[name]["kmeans_lut"][str(bits)], dtype=np.float32)
            with open(os.path.join(args.dir, f"ours_{name}_kmeans{bits}.bin"), "rb") as f:
                codes = unpack(f.read(), bits, w.size)
            s_ours = sqnr(w, lut[codes])
            m = metrics[name]["kmeans"][str(bits)]
            reported = float("inf") if m["sqnr"] is None else m["sqnr"]
            if not (abs(reported - s_ours) < 1e-6 or reported == s_ours):
                ok = False
                print(f"  MISMATCH {name} {bits}-bit: Swift reported {reported}, recomputed {s_ours}")
            t = time.perf_counter()
            lut1, q1 = qu._get_kmeans_lookup_table_and_weight(bits, w64, force_kmeans1d=True)
            t_k1 = time.perf_counter() - t
            s_k1 = sqnr(w, lut1.astype(np.float32)[np.asarray(q1)])
            t = time.perf_counter()
            lut2, q2 = qu._get_kmeans_lookup_table_and_weight(bits, w64)
            t_sk = time.perf_counter() - t
            s_sk = sqnr(w, lut2.astype(np.float32)[np.asarray(q2)])
            # Exactness: at least as good as sklearn; equal to kmeans1d up to float32 LUT rounding.
            tol = 1e-3
            good = (s_ours >= s_sk - tol) and (s_ours >= s_k1 - tol or (np.isinf(s_ours) and np.isinf(s_k1)))
            if not good:
                ok = False
            print(f"{name:<10} {w.size:>7} {bits:>4} {s_ours:>9.3f} {s_k1:>9.3f} {s_sk:>9.3f} {s_ours - s_sk:>8.3f}"
                  f" {m['seconds']:>8.3f}s {t_k1:>9.3f}s {t_sk:>8.3f}s" + ("" if good else "  WORSE"))

    print("\nresult:", "all linear bytes identical; k-means SQNR ≥ coremltools" if ok else "MISMATCHES (see above)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
