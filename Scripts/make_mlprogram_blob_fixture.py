#!/usr/bin/env python3
"""Writes Fixtures/mlprogram_export/blob_reference.{bin,json}: a MIL weight file written by
coremltools' own blob storage writer (libmilstoragepython), one blob per data type, and the
values and returned offsets, so that MILBlobWriterTests can check mlconv's writer byte for byte.

Run: PY=$(Scripts/coremltools8-env); $PY Scripts/make_mlprogram_blob_fixture.py
"""
import json, os, tempfile
import numpy as np
from coremltools import libmilstoragepython as ms
import coremltools

OUT = os.path.join(os.path.dirname(__file__), "..", "Fixtures", "mlprogram_export")
rng = np.random.default_rng(11)
blobs = [
    ("float32", np.array([1.5, -2.0, 3.25, 0.1], np.float32)),
    ("float16", np.array([1.0, -0.5, 65504.0], np.float16)),
    ("int8", np.array([-128, 0, 127, 5, -3], np.int8)),
    ("uint8", np.array([0, 255, 17], np.uint8)),
    ("int4", np.array([-8, 7, 0, -1, 3], np.int8)),
    ("uint1", rng.integers(0, 2, 11).astype(np.uint8)),
    ("uint2", rng.integers(0, 4, 7).astype(np.uint8)),
    ("uint3", rng.integers(0, 8, 9).astype(np.uint8)),
    ("uint4", rng.integers(0, 16, 3).astype(np.uint8)),
    ("uint6", rng.integers(0, 64, 5).astype(np.uint8)),
    ("int32", np.array([-70000, 1, 2**31 - 1], np.int32)),
    ("float32", rng.standard_normal(70).astype(np.float32)),
]
writers = {"float32": "write_float_data", "float16": "write_fp16_data"}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "weight.bin")
    w = ms._BlobStorageWriter(path)
    records = []
    for kind, values in blobs:
        fn = getattr(w, writers.get(kind, f"write_{kind}_data"))
        arg = values.view(np.uint16) if kind == "float16" else values
        offset = fn(np.ascontiguousarray(arg).ravel())
        if kind == "float16":
            shown = [int(x) for x in values.view(np.uint16)]
        elif kind.startswith("float"):
            shown = [int(x) for x in values.view(np.uint32)]
        else:
            shown = [int(x) for x in values]
        records.append({"type": kind, "values": shown, "offset": int(offset)})
    del fn, w  # the bound method holds the writer too; the header is flushed on destruction
    data = open(path, "rb").read()
open(os.path.join(OUT, "blob_reference.bin"), "wb").write(data)
json.dump({"coremltools": coremltools.__version__,
           "note": "float values are given by their IEEE bit patterns",
           "blobs": records}, open(os.path.join(OUT, "blob_reference.json"), "w"), indent=1)
print(len(data), "bytes,", len(records), "blobs")
