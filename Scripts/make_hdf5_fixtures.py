#!/usr/bin/env python3
"""Writes the small HDF5 files that Tests/HDF5Tests reads, into Fixtures/hdf5/.

Run from anywhere with a Python that has h5py and numpy (the project's venv):

    /opt/mlvenv/bin/python Scripts/make_hdf5_fixtures.py

The outputs are committed; `swift test` never runs this script. Re-run it only to change the
fixtures, then update the expectations in Tests/HDF5Tests/*.swift.

Files (all written with libver='earliest', like Keras and h5py by default, so that libhdf5 1.10
reads them):

- types.h5         every attribute and dataset flavour the HDF5 module must read: fixed-length
                   strings (NUL-padded, NUL-terminated, space-padded, full, UTF-8), variable-length
                   strings (UTF-8 and bytes/ASCII), string arrays (fixed and vlen, 1-D and 2-D),
                   integer and float scalars and arrays, float16, empty and null attributes, a bool
                   (enum), nested groups, name-ordered and creation-ordered groups, soft links
                   (good and dangling), float16/32/64 and (u)int8..64 datasets, string datasets, a
                   gzip-compressed chunked dataset, and dataset attributes.
- keras2_weights.h5  the layout of a weights-only Keras 2.0.x file (`model.save_weights`):
                   root `layer_names` as a fixed-length byte-string array, `backend` and
                   `keras_version` as byte strings, per-layer `weight_names` (fixed-length
                   arrays, or an empty float64 array for layers without weights).
- keras_model.h5   the layout of a newer full-model file (`model.save`, tf.keras 2.x):
                   `model_config` JSON as a variable-length string, `model_weights` group whose
                   `layer_names`/`weight_names` are variable-length string arrays.
- corrupt_chunk.h5 a valid file whose gzip-compressed dataset `/gzip_f32` has its second chunk
                   overwritten with garbage: opening works, reading the data must fail cleanly.
"""

import json
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "Fixtures", "hdf5")


def fixed_string_attribute(obj, name, value, size, pad):
    """Writes a scalar fixed-length ASCII string attribute with the given padding."""
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(size)
    tid.set_strpad(pad)
    space = h5py.h5s.create(h5py.h5s.SCALAR)
    attr = h5py.h5a.create(obj.id, name.encode(), tid, space)
    data = np.array(value.encode().ljust(size, b" " if pad == h5py.h5t.STR_SPACEPAD else b"\0"),
                    dtype="S%d" % size)
    attr.write(data, mtype=tid)


def dataset(group, name, data, **kwargs):
    return group.create_dataset(name, data=data, track_times=False, **kwargs)


def make_types(path):
    with h5py.File(path, "w", libver="earliest") as f:
        a = f.attrs
        # Fixed-length strings.
        a["fixed_str"] = np.bytes_(b"hello")  # S5, NUL-padded, exactly full (no NUL)
        fixed_string_attribute(f, "fixed_str_nullterm", "abc", 8, h5py.h5t.STR_NULLTERM)
        fixed_string_attribute(f, "fixed_str_spacepad", "abc", 8, h5py.h5t.STR_SPACEPAD)
        a.create("fixed_str_padded", np.bytes_(b"hi"), dtype="S6")  # NUL-padded, shorter
        a.create("fixed_utf8", "d\u00e9j\u00e0".encode("utf-8"),
                 dtype=h5py.string_dtype("utf-8", 8))
        a["fixed_big"] = np.bytes_(("x" * 1499 + "!").encode())  # 1500-byte fixed string
        # Variable-length strings.
        a["vlen_str_utf8"] = "h\u00e9llo w\u00f6rld \u2713"
        a["vlen_bytes"] = b'{"class_name": "Sequential"}'  # h5py: vlen ASCII
        config = {"class_name": "Functional", "config": {"name": "m\u00f6del", "layers": [
            {"class_name": "Dense", "config": {"name": "dense_%d" % i, "units": i}}
            for i in range(60)]}}
        a["vlen_json"] = json.dumps(config)  # ~3 KB, like Keras' model_config
        # String arrays.
        a["fixed_str_array"] = np.array([b"input_1", b"conv2d_1", b"batch_normalization_1"],
                                        dtype="S22")
        a.create("vlen_str_array", ["alpha", "b\u00e9ta", ""], dtype=h5py.string_dtype())
        a.create("vlen_str_array_2d", [["a", "b"], ["c", "d"]], dtype=h5py.string_dtype())
        a["one_string_array"] = np.array([b"only"], dtype="S4")
        # Numbers.
        a["int32_scalar"] = np.int32(-42)
        a["uint8_scalar"] = np.uint8(200)
        a["int8_array"] = np.array([1, -2, 3], dtype=np.int8)
        a["uint16_array"] = np.array([0, 65535], dtype=np.uint16)
        a["int64_one"] = np.array([1 << 40], dtype=np.int64)
        a["float64_scalar"] = np.float64(3.25)
        a["float32_array"] = np.array([1.5, -2.5], dtype=np.float32)
        a["float16_scalar"] = np.float16(0.5)
        # Empty things: Keras writes the weight_names of a layer without weights like this.
        a["empty_float64_array"] = np.zeros((0,), dtype=np.float64)
        a["null_float64"] = h5py.Empty("f8")
        # Unsupported: h5py stores bool as an HDF5 enum.
        a["bool_scalar"] = np.bool_(True)

        # Groups and their order.
        leaf = dataset(f, "nested/level1/level2/leaf", np.array([1, 2, 3], dtype=np.int32))
        leaf.attrs["note"] = "deep"
        order = f.create_group("order")
        tracked = f.create_group("tracked", track_order=True)
        for name in ["zeta", "alpha", "Mid", "beta10", "beta2"]:
            order.create_group(name)
            tracked.create_group(name)
        dataset(order, "data", np.float32(1))  # a dataset among the groups

        # Datasets of every numeric type.
        d = f.create_group("data")
        f16 = np.array([[0.0, 0.5, -1.25], [2048.0, 65504.0, -0.0009765625]], dtype=np.float16)
        dataset(d, "f16", f16)
        dataset(d, "f32", (np.arange(24, dtype=np.float32) * 0.5 - 3).reshape(2, 3, 4))
        dataset(d, "f64", np.array([1e-3, 1e300, -2.5], dtype=np.float64))
        dataset(d, "i8", np.array([-128, 0, 127], dtype=np.int8))
        dataset(d, "i16", np.array([-32768, 1, 32767], dtype=np.int16))
        dataset(d, "i32", np.array([[-7, 8], [9, -10]], dtype=np.int32))
        dataset(d, "i64", np.array([-(1 << 40), 0, 1 << 40], dtype=np.int64))
        dataset(d, "u8", np.array([0, 128, 255], dtype=np.uint8))
        dataset(d, "u16", np.array([0, 65535], dtype=np.uint16))
        dataset(d, "u32", np.array([0, 4294967295], dtype=np.uint32))
        dataset(d, "u64", np.array([0, 12345678901234], dtype=np.uint64))
        dataset(d, "big_endian_f32", np.array([1.0, -2.0, 3.5], dtype=">f4"))
        dataset(d, "scalar_f32", np.float32(7.5))
        dataset(d, "empty_f32", np.zeros((0, 3), dtype=np.float32))
        dataset(d, "strings_vlen", np.array(["a", "b\u00e9", ""], dtype=object),
                dtype=h5py.string_dtype())
        dataset(d, "strings_fixed", np.array([b"ab", b"cdef"], dtype="S4"))
        dataset(d, "bool", np.array([True, False]))
        gz = dataset(d, "gzip_f32", np.arange(20, dtype=np.float32).reshape(4, 5),
                     chunks=(2, 5), compression="gzip", shuffle=True)
        gz.attrs["units"] = "m/s"
        gz.attrs["scale"] = np.float64(2.0)

        # Links.
        links = f.create_group("links")
        links["soft"] = h5py.SoftLink("/data/f32")
        links["dangling"] = h5py.SoftLink("/nowhere")


def make_keras2_weights(path):
    """Keras 2.0.6 `save_weights` layout (byte strings everywhere)."""
    with h5py.File(path, "w", libver="earliest") as f:
        layers = [b"input_1", b"conv2d_1", b"dense_1"]
        f.attrs["layer_names"] = np.array(layers)  # |S8 fixed-length array
        f.attrs["backend"] = b"tensorflow"  # vlen ASCII, as Keras 2.0.x wrote
        f.attrs["keras_version"] = b"2.0.6"
        g = f.create_group("input_1")
        g.attrs["weight_names"] = np.array([], dtype=np.float64)  # empty: no weights
        g = f.create_group("conv2d_1")
        g.attrs["weight_names"] = np.array([b"conv2d_1/kernel:0", b"conv2d_1/bias:0"])
        kernel = (np.arange(18, dtype=np.float32) / 10).reshape(3, 3, 1, 2)
        dataset(g, "conv2d_1/kernel:0", kernel)
        dataset(g, "conv2d_1/bias:0", np.array([0.25, -0.5], dtype=np.float32))
        g = f.create_group("dense_1")
        g.attrs["weight_names"] = np.array([b"dense_1/kernel:0", b"dense_1/bias:0"])
        dataset(g, "dense_1/kernel:0", np.arange(6, dtype=np.float32).reshape(2, 3))
        dataset(g, "dense_1/bias:0", np.zeros(3, dtype=np.float32))


def make_keras_model(path):
    """tf.keras 2.x `model.save('x.h5')` layout (variable-length strings everywhere)."""
    config = {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 2], "name": "in"}},
        {"class_name": "Dense", "config": {"name": "dense", "units": 3,
                                           "activation": "relu", "use_bias": True}}]}}
    with h5py.File(path, "w", libver="earliest") as f:
        f.attrs["backend"] = "tensorflow"
        f.attrs["keras_version"] = "2.21.0"
        f.attrs["model_config"] = json.dumps(config)
        w = f.create_group("model_weights")
        w.attrs["backend"] = "tensorflow"
        w.attrs["keras_version"] = "2.21.0"
        w.attrs["layer_names"] = ["in", "dense"]  # h5py: vlen string array
        g = w.create_group("in")
        g.attrs["weight_names"] = np.array([], dtype=np.float64)
        g = w.create_group("dense")
        g.attrs["weight_names"] = ["dense/kernel:0", "dense/bias:0"]
        dataset(g, "dense/kernel:0", np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))
        dataset(g, "dense/bias:0", np.array([0.5, 0, -0.5], dtype=np.float32))


def make_corrupt_chunk(path):
    with h5py.File(path, "w", libver="earliest") as f:
        dataset(f, "gzip_f32", np.arange(20, dtype=np.float32).reshape(4, 5), chunks=(2, 5),
                compression="gzip")
        dataset(f, "plain_f32", np.array([1, 2, 3], dtype=np.float32))
        info = f["gzip_f32"].id.get_chunk_info(1)
        offset, size = info.byte_offset, info.size
    with open(path, "r+b") as raw:
        raw.seek(offset)
        raw.write(b"\xff" * size)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, make in [("types.h5", make_types), ("keras2_weights.h5", make_keras2_weights),
                       ("keras_model.h5", make_keras_model),
                       ("corrupt_chunk.h5", make_corrupt_chunk)]:
        path = os.path.join(OUT, name)
        make(path)
        print("wrote %s (%d bytes)" % (os.path.relpath(path), os.path.getsize(path)))


if __name__ == "__main__":
    main()
