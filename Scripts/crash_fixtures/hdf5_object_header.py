"""A damaged object header inside a Keras file (issue 13, libhdf5 in a child process).

Found by the keras-h5 fuzz target: an object header continuation whose length claims 2 GiB in a
13 KB file. libhdf5 allocates a buffer of the claimed size before it finds that the header runs past the
end of the file. The child's first walk (`H5Ovisit`) stopped at this object with an error, so the
objects after it went unprobed, and the allocation then happened in mlconv's process when a
reader looked the object up by name (libFuzzer's malloc limit reported it; outside the fuzzer the
allocation is lazy and libhdf5 fails cleanly). The base file is the one of hdf5_global_heap.py.
"""
import importlib.util, os, struct

_spec = importlib.util.spec_from_file_location("hdf5_global_heap", os.path.join(os.path.dirname(__file__), "hdf5_global_heap.py"))
_heap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_heap)


def _file_with_continuation():
    """The base Keras file plus attributes on the Dense kernel, added after it was created, so that
    its object header outgrows its first chunk and continues in a second one (a continuation
    message: address and length of the next chunk)."""
    import h5py, io, numpy as np
    bio = io.BytesIO(bytes(_heap._vlen_keras_file()))
    with h5py.File(bio, "r+", libver="earliest") as f:
        kernel = f["model_weights/d/d/kernel:0"]
        for i in range(12):
            kernel.attrs[f"note_{i:02d}"] = np.arange(16, dtype="<i4") + i
    return bytearray(bio.getvalue())


def cases():
    base = _file_with_continuation()
    # A continuation message in a version 1 header: type 0x0010, size 16, flags 0, 3 reserved
    # bytes, then the chunk's address and length (8 bytes each).
    hits = []
    i = base.find(bytes.fromhex("1000100000000000"))
    while i >= 0:
        address, length = struct.unpack_from("<QQ", base, i + 8)
        if 0 < address < len(base) and 0 < length < 65536:
            hits.append(i)
        i = base.find(bytes.fromhex("1000100000000000"), i + 1)
    assert hits, "no continuation message: h5py kept the kernel's header in one chunk?"
    b = bytearray(base)
    struct.pack_into("<Q", b, hits[-1] + 16, 2 ** 31)
    yield {
        "file": "keras/object_header_continuation_2p31.h5",
        "data": bytes(b),
        "commands": [["--max-memory", "256M", "keras", "{file}", "-o", "{tmp}/x.mlbundle"],
                     ["--max-memory", "256M", "inspect", "{file}"],
                     ["keras", "{file}", "-o", "{tmp}/y.mlbundle"]],
        "why": "the object header of the Dense kernel continues in a chunk that claims 2^31 bytes, in a file of a few "
               "KB: libhdf5 allocates a buffer of that size before it checks the chunk against the end of the file. With --max-memory "
               "under 2 GiB, HDF5Isolation's child fails that allocation and the file is refused "
               "(HDF5Error.memoryLimitExceeded) before mlconv's process touches it; above it, libhdf5's own error "
               "is reported when the kernel is read.",
    }
