#!/usr/bin/env python3
"""Seeds a libFuzzer corpus for one of mlconv's fuzz targets (called by Scripts/fuzz).

    python3 Scripts/fuzz_seeds.py TARGET OUT_DIR [ROOT ...]

Copies the inputs of that kind found under each ROOT (Fixtures/ and ../shared/corpus by
default) into OUT_DIR, named by content hash (so re-seeding adds nothing twice), skipping files
larger than FUZZ_MAX_SEED_KB (default 256) KiB. The mlprogram target's seeds are framed: a 4-byte
little-endian length, an .mlpackage's model.mlmodel, then its weights/weight.bin
(Fuzz/Sources/FuzzSupport splitFramed). Standard library only.
"""
import hashlib, json, os, struct, sys

MAX = int(os.environ.get("FUZZ_MAX_SEED_KB", "256")) * 1024


def files(roots, exts):
    for root in roots:
        for d, dirs, names in os.walk(root, followlinks=False):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for n in sorted(names):
                if n.lower().endswith(exts):
                    p = os.path.join(d, n)
                    if os.path.isfile(p) and os.path.getsize(p) <= MAX:
                        yield p


def packages(roots):
    for root in roots:
        for d, dirs, _ in os.walk(root):
            for x in sorted(dirs):
                if x.endswith(".mlpackage"):
                    yield os.path.join(d, x)
            dirs[:] = sorted(x for x in dirs if not x.endswith(".mlpackage") and not x.startswith("."))


def read(p):
    with open(p, "rb") as f:
        return f.read()


def keras_json(p):
    try:
        j = json.loads(read(p))
    except Exception:
        return False
    return isinstance(j, dict) and "class_name" in j and "config" in j


def hooks_json(p):
    return "/hooks/" in p or os.path.basename(p).startswith("hooks")


def seeds(target, roots):
    if target == "keras-h5":
        yield from (read(p) for p in files(roots, (".h5", ".hdf5")))
    elif target == "keras-json":
        yield from (read(p) for p in files(roots, (".json",)) if keras_json(p))
    elif target == "hooks":
        yield from (read(p) for p in files(roots, (".json",)) if hooks_json(p))
    elif target == "mlmodel":
        yield from (read(p) for p in files(roots, (".mlmodel",)) if ".mlpackage/" not in p)
    elif target == "mlprogram":
        for pkg in packages(roots):
            base = os.path.join(pkg, "Data", "com.apple.CoreML")
            spec, weights = os.path.join(base, "model.mlmodel"), os.path.join(base, "weights", "weight.bin")
            if not os.path.isfile(spec):
                continue
            s = read(spec)
            w = read(weights) if os.path.isfile(weights) else b""
            if len(s) + len(w) <= MAX:
                yield struct.pack("<I", len(s)) + s + w
    elif target == "milblob":
        yield from (read(p) for p in files(roots, (".bin",)) if read(p)[4:8] == b"\x02\x00\x00\x00")
    elif target == "mlbundle":
        yield from (read(p) for p in files(roots, (".mlbundle",)))
    elif target == "npy":
        yield from (read(p) for p in files(roots, (".npy",)))
    elif target == "image":
        yield from (read(p) for p in files(roots, (".png", ".jpg", ".jpeg")))
    else:
        sys.exit(f"fuzz_seeds: unknown target {target}")


def main():
    target, out, roots = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    n = 0
    for data in seeds(target, [r for r in roots if os.path.isdir(r)]):
        name = os.path.join(out, "seed-" + hashlib.sha1(data).hexdigest())
        if not os.path.exists(name):
            with open(name, "wb") as f:
                f.write(data)
            n += 1
    print(f"fuzz_seeds: {n} new seeds for {target} in {out}")


if __name__ == "__main__":
    main()
