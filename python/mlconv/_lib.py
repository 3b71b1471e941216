"""ctypes bindings of the C ABI in Sources/CMLConv/include/mlconv.h (library libmlconv_c.so)."""
import ctypes
import os

ABI_VERSION = 1

# mlconv_status
OK = 0
STATUS_NAMES = {1: "invalid argument", 2: "model", 3: "feature", 4: "prediction", 5: "unsupported"}

# mlconv_feature_kind
KIND_MULTIARRAY, KIND_INT64, KIND_DOUBLE, KIND_STRING, KIND_DICTIONARY, KIND_SEQUENCE, KIND_IMAGE = range(1, 8)

# mlconv_dtype
DTYPE_FLOAT32, DTYPE_FLOAT64, DTYPE_FLOAT16, DTYPE_INT32, DTYPE_INT64, DTYPE_UINT8 = range(1, 7)
DTYPE_TO_NUMPY = {DTYPE_FLOAT32: "float32", DTYPE_FLOAT64: "float64", DTYPE_FLOAT16: "float16",
                  DTYPE_INT32: "int32", DTYPE_INT64: "int64", DTYPE_UINT8: "uint8"}
NUMPY_TO_DTYPE = {v: k for k, v in DTYPE_TO_NUMPY.items()}


class Feature(ctypes.Structure):
    """struct mlconv_feature."""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("kind", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
        ("int64_value", ctypes.c_int64),
        ("double_value", ctypes.c_double),
        ("string_value", ctypes.c_char_p),
        ("options_json", ctypes.c_char_p),
    ]


LIBRARY_NAME = "libmlconv_c.so"


def library_path():
    """The library: $MLCONV_LIBRARY if set, else the copy installed inside this package."""
    env = os.environ.get("MLCONV_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


_lib = None

# The spin count the mlconv executable gives libgomp (oneDNN's OpenMP runtime) when the
# environment sets no wait policy: workers spin briefly for the next parallel region, then sleep.
# libgomp reads it once, when it is loaded, so it is set here before the library (and libgomp
# with it) is loaded, unless the user chose: OMP_WAIT_POLICY or GOMP_SPINCOUNT in the
# environment win. It has no effect when libgomp is already loaded into this Python process by
# another package. See docs/PERFORMANCE.md, "Thread pool".
DEFAULT_GOMP_SPINCOUNT = "3000"


def _choose_thread_wait_policy():
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = DEFAULT_GOMP_SPINCOUNT


def lib():
    """Loads the library once and declares every function's argument and result types."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            f"mlconv: the native library {path} is missing; install the package with "
            "`pip install ./python` from the mlconv repository (it builds the library), "
            "or set MLCONV_LIBRARY to a libmlconv_c.so")
    _choose_thread_wait_policy()
    L = ctypes.CDLL(path)
    P, c = ctypes.POINTER, ctypes
    model_p, result_p = c.c_void_p, c.c_void_p
    sig = {
        "mlconv_abi_version": (c.c_int32, []),
        "mlconv_last_error": (c.c_char_p, []),
        "mlconv_open": (model_p, [c.c_char_p, c.c_char_p]),
        "mlconv_close": (None, [model_p]),
        "mlconv_describe": (c.c_void_p, [model_p]),  # char* owned by the caller: keep the pointer
        "mlconv_predict": (c.c_int, [model_p, P(Feature), c.c_size_t, P(result_p)]),
        "mlconv_predict_batch": (c.c_int, [model_p, P(Feature), P(c.c_size_t), c.c_size_t, P(result_p)]),
        "mlconv_result_free": (None, [result_p]),
        "mlconv_result_count": (c.c_size_t, [result_p]),
        "mlconv_result_index": (c.c_int64, [result_p, c.c_char_p]),
        "mlconv_result_name": (c.c_char_p, [result_p, c.c_size_t]),
        "mlconv_result_kind": (c.c_int32, [result_p, c.c_size_t]),
        "mlconv_result_dtype": (c.c_int32, [result_p, c.c_size_t]),
        "mlconv_result_rank": (c.c_int32, [result_p, c.c_size_t]),
        "mlconv_result_shape": (P(c.c_int64), [result_p, c.c_size_t]),
        "mlconv_result_data": (c.c_void_p, [result_p, c.c_size_t]),
        "mlconv_result_int64": (c.c_int64, [result_p, c.c_size_t]),
        "mlconv_result_double": (c.c_double, [result_p, c.c_size_t]),
        "mlconv_result_string": (c.c_char_p, [result_p, c.c_size_t]),
        "mlconv_compile_model": (c.c_void_p, [c.c_char_p, c.c_char_p]),
        "mlconv_string_free": (None, [c.c_void_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    version = L.mlconv_abi_version()
    if version != ABI_VERSION:
        raise ImportError(f"mlconv: {path} has C ABI version {version}; this package speaks version {ABI_VERSION}")
    _lib = L
    return L


def take_string(ptr):
    """Decodes and frees a char* that the caller owns (mlconv_describe, mlconv_compile_model)."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib().mlconv_string_free(ptr)


def last_error():
    msg = lib().mlconv_last_error()
    return msg.decode("utf-8", "replace") if msg else ""
