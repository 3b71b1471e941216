"""Damaged global heaps under variable-length string attributes (issue 13, libhdf5 guard).

h5py stores Python `str` attributes (what Keras writes for `model_config`, `keras_version`,
`backend`) as variable-length strings whose bytes live in a global heap collection ("GCOL").
libhdf5 1.10 copies a heap object with the size its collection records, unchecked: a size past
the collection's end made `mlconv keras` / `inspect` die of SIGSEGV inside H5Aread (memcpy).
Each case is a valid Keras 2 file (built with h5py, libver='earliest', in memory, no
timestamps) with one field of its first global heap collection overwritten.
Needs h5py (run Scripts/make_crash_fixtures.py with /root/.cache/mlconv-venv/bin/python).
"""
import io, json, struct

COMMANDS = [["keras", "{file}", "-o", "{tmp}/x.mlbundle"], ["inspect", "{file}"]]


def _vlen_keras_file():
    import h5py, numpy as np
    model = {"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "Dense", "config": {"name": "d", "units": 2, "batch_input_shape": [None, 3],
                                            "activation": "linear", "use_bias": True}}]}}
    bio = io.BytesIO()
    with h5py.File(bio, "w", libver="earliest", track_order=False) as f:
        f.attrs["keras_version"] = "2.15.0"          # str: variable-length, in the global heap
        f.attrs["backend"] = "tensorflow"
        f.attrs["model_config"] = json.dumps(model, sort_keys=True)
        mw = f.create_group("model_weights")
        mw.attrs["layer_names"] = np.array([b"d"])
        g = mw.create_group("d")
        g.attrs["weight_names"] = np.array([b"d/kernel:0", b"d/bias:0"], dtype="S64")
        g.create_dataset("d/kernel:0", data=np.ones((3, 2), "<f4"), track_times=False)
        g.create_dataset("d/bias:0", data=np.zeros(2, "<f4"), track_times=False)
    return bytearray(bio.getvalue())


def _objects(b, at):
    """(offset, index, size) of the objects of the collection at `at` (size of lengths 8)."""
    size = struct.unpack_from("<Q", b, at + 8)[0]
    o, out = at + 16, []
    while o + 16 <= at + size:
        index, _, _, n = struct.unpack_from("<HHIQ", b, o)
        if index == 0:
            break
        out.append((o, index, n))
        o += 16 + ((n + 7) & ~7)
    return out


def cases():
    yield from object_size_cases()
    yield from vlen_length_cases()
    yield from heap_index_cases()


def object_size_cases():
    base = _vlen_keras_file()
    at = base.find(b"GCOL")
    assert at > 0, "no global heap collection: h5py no longer writes str attributes as vlen strings?"
    objects = _objects(base, at)
    assert len(objects) >= 3, objects
    for label, size in (("2p62", 2 ** 62), ("2p31", 2 ** 31)):
        for o, index, n in objects[:1]:
            b = bytearray(base)
            struct.pack_into("<Q", b, o + 8, size)
            yield {
                "file": f"keras/global_heap_object_size_{label}.h5",
                "data": bytes(b),
                "commands": COMMANDS,
                "why": f"vlen str attribute whose global heap object {index} (of {n} bytes) claims {size} bytes, past "
                       "its collection: libhdf5's H5Aread memcpy'd wild memory (SIGSEGV). Now HDF5Isolation's child "
                       "process dies instead and the file is refused (HDF5Error.corruptFile, with GlobalHeapCheck's "
                       "finding); in process, GlobalHeapCheck refuses variable-length reads of such a file.",
            }


def _keras_version_reference(base):
    """(offset of keras_version's 16-byte heap reference in the file, collection offset, index, length)."""
    at = base.find(b"GCOL")
    for o, index, n in _objects(base, at):
        if bytes(base[o + 16:o + 16 + n]) != b"2.15.0":
            continue
        reference = struct.pack("<IQI", n, at, index)
        hit = base.find(reference)
        assert hit > 0 and base.find(reference, hit + 1) < 0, "keras_version's heap reference not found once"
        return hit, at, index, n
    raise AssertionError("no heap object holds keras_version")


def heap_index_cases():
    """The attribute's reference names object 2^31 - 1 of an intact collection that holds a few.
    libhdf5 1.10's H5HG_read looks the index up in the collection's table unchecked: past the
    table it reads whatever memory lies there. Found by the keras-h5 fuzz target with a smaller
    index (just past the table), where the result depends on the process's heap: a file-wide
    probe passed in the child, and the read in mlconv's process died of SIGSEGV. 2^31 - 1 lands
    ~48 GiB past the table, unmapped in any process, so the crash is certain."""
    base = _vlen_keras_file()
    hit, _, _, _ = _keras_version_reference(base)
    b = bytearray(base)
    struct.pack_into("<I", b, hit + 12, 2 ** 31 - 1)
    yield {
        "file": "keras/vlen_heap_index_2p31.h5",
        "data": bytes(b),
        "commands": COMMANDS,
        "why": "keras_version's variable-length reference names global heap object 2^31 - 1 (its collection holds "
               "3): libhdf5's H5HG_read indexes the collection's object table without a bound and copies from a "
               "wild pointer (SIGSEGV). Now HDF5Isolation refuses it (HDF5Error.corruptFile): the file-wide probe's "
               "child dies, and libhdf5 reads variable-length strings only in a child forked at the moment of the "
               "read (the strings come back through a pipe), so a wild read that passes in one process cannot "
               "crash or corrupt mlconv's.",
    }


def vlen_length_cases():
    """The attribute's own reference (sequence length, collection address, object index) claims
    a string of 2^30 bytes: libhdf5 allocates and clears that much per read (found by the
    keras-h5 fuzz target: ~10 s and 1.6 GB per read under ASan). The object itself is intact."""
    base = _vlen_keras_file()
    hit, _, _, _ = _keras_version_reference(base)
    b = bytearray(base)
    struct.pack_into("<I", b, hit, 2 ** 30)
    yield {
        "file": "keras/vlen_string_length_2p30.h5",
        "data": bytes(b),
        "commands": [["--max-memory", "256M", "keras", "{file}", "-o", "{tmp}/x.mlbundle"],
                     ["--max-memory", "256M", "inspect", "{file}"]],
        "why": "keras_version's variable-length reference claims a 2^30-byte string (its heap object holds 6 "
               "bytes): libhdf5 allocates and zeroes 1 GiB per read, in mlconv's process. Now HDF5Isolation's "
               "child process exceeds --max-memory and the file is refused (HDF5Error.memoryLimitExceeded) "
               "before mlconv reads it.",
    }
