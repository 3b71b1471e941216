"""mlconv.Model: open a model file and predict with it, as Core ML's MLModel does."""
import ctypes
import json
import numbers
import os

import numpy as np

from . import _lib
from ._lib import Feature


class MLConvError(Exception):
    """An error reported by the mlconv library: `status` is the C ABI's mlconv_status
    (1 invalid argument, 2 model, 3 feature, 4 prediction, 5 unsupported), the message names the
    file / feature / layer, what was expected, what was found and what to do."""

    def __init__(self, status, message):
        self.status = status
        kind = _lib.STATUS_NAMES.get(status, f"status {status}")
        super().__init__(f"mlconv ({kind} error): {message}")


def _fail(status=2):
    raise MLConvError(status, _lib.last_error() or "unknown error")


class Model:
    """A model opened by mlconv: .mlmodel, .mlpackage, .mlbundle or Keras .h5 / .keras.

    Model(path, cache_dir=None, use_cache=True, threads=None, reference=False) — the options of
    mlconv_open (Sources/CMLConv/include/mlconv.h): Keras files and neural networks are converted
    once and cached on disk (by content hash) under cache_dir (default $MLCONV_CACHE_DIR, else
    ~/.cache/mlconv).

    predict({name: value}) -> {name: value} takes and returns Core ML's Python types:
      multiArray  numpy.ndarray (inputs: anything numpy.asarray takes; outputs in the model's
                  declared data type: float32, float64, float16 or int32; Core ML's shape)
      int64       int;  double: float;  string: str
      dictionary  dict of str or int keys → float (classifier probabilities)
      sequence    list of int or str
      image       PIL.Image.Image ("RGB" or "L"; inputs may also be a PNG/JPEG path or a uint8
                  array [height, width, channels]); resized to the model's size with `crop`
                  ("center", default, as Vision's centerCrop; "fit"; "fill")
    Raises MLConvError (a missing input, a wrong shape, an unreadable file, …).
    """

    def __init__(self, path, cache_dir=None, use_cache=True, threads=None, reference=False, crop="center"):
        L = _lib.lib()
        self._handle = None
        self.path = os.fspath(path)
        self.crop = crop
        options = {"use_cache": bool(use_cache), "reference": bool(reference)}
        if cache_dir is not None:
            options["cache_dir"] = os.fspath(cache_dir)
        if threads is not None:
            options["threads"] = int(threads)
        handle = L.mlconv_open(self.path.encode("utf-8"), json.dumps(options).encode("utf-8"))
        if not handle:
            _fail(2)
        self._handle = handle
        text = _lib.take_string(L.mlconv_describe(handle))
        if text is None:
            _fail(2)
        self.description = json.loads(text)
        self._inputs = {f["name"]: f for f in self.description.get("inputs", [])}
        self._outputs = {f["name"]: f for f in self.description.get("outputs", [])}

    # -- description ---------------------------------------------------------------------------

    @property
    def input_description(self):
        """{name: feature} of the inputs, in the model's order. A feature is a dict with "name",
        "type" ("multiArray", "int64", "double", "string", "dictionary", "sequence", "image"),
        "optional", "short_description" and per type "shape" / "data_type", "width" / "height" /
        "color_space", "key_type", "element_type" (mlconv_describe)."""
        return dict(self._inputs)

    @property
    def output_description(self):
        """{name: feature} of the outputs, as `input_description`."""
        return dict(self._outputs)

    @property
    def class_labels(self):
        return self.description.get("class_labels")

    # -- lifetime ------------------------------------------------------------------------------

    def close(self):
        if self._handle:
            _lib.lib().mlconv_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"mlconv.Model({self.path!r}, inputs={list(self._inputs)}, outputs={list(self._outputs)})"

    # -- prediction ----------------------------------------------------------------------------

    def predict(self, data):
        """One prediction: {input name: value} -> {output name: value} (Core ML's types)."""
        if not isinstance(data, dict):
            raise TypeError(f"predict takes a dict of input name → value, got {type(data).__name__}")
        keep = []
        features = self._features(data, keep)
        result = ctypes.c_void_p()
        status = _lib.lib().mlconv_predict(self._open_handle(), features, len(data), ctypes.byref(result))
        if status != _lib.OK:
            _fail(status)
        try:
            return self._outputs_of(result)
        finally:
            _lib.lib().mlconv_result_free(result)

    def predict_batch(self, rows):
        """Predictions for a list of input dicts (Core ML's batch prediction), in order."""
        rows = list(rows)
        if not all(isinstance(r, dict) for r in rows):
            raise TypeError("predict_batch takes a list of dicts of input name → value")
        if not rows:
            return []
        keep = []
        flat = [self._feature(name, value, keep) for r in rows for name, value in r.items()]
        array = (Feature * len(flat))(*flat)
        counts = (ctypes.c_size_t * len(rows))(*[len(r) for r in rows])
        results = (ctypes.c_void_p * len(rows))()
        status = _lib.lib().mlconv_predict_batch(self._open_handle(), array, counts, len(rows), results)
        if status != _lib.OK:
            _fail(status)
        out = []
        try:
            for r in results:
                out.append(self._outputs_of(r))
        finally:
            for r in results:
                _lib.lib().mlconv_result_free(r)
        return out

    def _open_handle(self):
        if not self._handle:
            raise MLConvError(1, f"the model {self.path} is closed")
        return self._handle

    # -- inputs --------------------------------------------------------------------------------

    def _features(self, data, keep):
        items = []
        for name, value in data.items():
            try:
                items.append(self._feature(name, value, keep))
            except (ValueError, TypeError, OverflowError) as e:
                # A value NumPy / Python cannot convert (e.g. a string for a number): a feature
                # error naming the input, as the library reports its own input errors.
                kind = self._inputs.get(name, {}).get("type", "an array or number")
                raise MLConvError(3, f"input '{name}' ({kind}): cannot convert {type(value).__name__} "
                                     f"{_preview(value)}: {e}") from e
        return (Feature * max(1, len(items)))(*items)

    def _feature(self, name, value, keep):
        """An mlconv_feature for one value; `keep` holds the buffers until the call returns."""
        desc = self._inputs.get(name, {})
        kind = desc.get("type")
        f = Feature()
        bname = str(name).encode("utf-8")
        keep.append(bname)
        f.name = bname
        if kind == "image" or (kind is None and _is_pil_image(value)):
            return self._image_feature(f, name, value, desc, keep)
        if kind == "int64" or (kind is None and isinstance(value, (bool, numbers.Integral))):
            f.kind = _lib.KIND_INT64
            f.int64_value = int(_scalar(value, name))
        elif kind == "double" or (kind is None and isinstance(value, numbers.Real)):
            f.kind = _lib.KIND_DOUBLE
            f.double_value = float(_scalar(value, name))
        elif kind == "string" or (kind is None and isinstance(value, str)):
            f.kind = _lib.KIND_STRING
            s = str(value).encode("utf-8")
            keep.append(s)
            f.string_value = s
        elif kind == "dictionary" or (kind is None and isinstance(value, dict)):
            f.kind = _lib.KIND_DICTIONARY
            s = json.dumps({str(k): float(v) for k, v in dict(value).items()}).encode("utf-8")
            keep.append(s)
            f.string_value = s
        elif kind == "sequence":
            f.kind = _lib.KIND_SEQUENCE
            s = json.dumps([v if isinstance(v, str) else int(v) for v in value]).encode("utf-8")
            keep.append(s)
            f.string_value = s
        else:
            a = np.asarray(value)
            if a.dtype.name not in _lib.NUMPY_TO_DTYPE or a.dtype.name == "uint8":
                a = a.astype(np.float64 if a.dtype.kind == "f" else np.float32)
            a = np.ascontiguousarray(a)
            shape = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
            keep += [a, shape]
            f.kind = _lib.KIND_MULTIARRAY
            f.dtype = _lib.NUMPY_TO_DTYPE[a.dtype.name]
            f.rank = a.ndim
            f.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
            f.data = a.ctypes.data
        return f

    def _image_feature(self, f, name, value, desc, keep):
        f.kind = _lib.KIND_IMAGE
        options = {"crop": self.crop}
        if isinstance(value, (str, os.PathLike)):
            s = os.fspath(value).encode("utf-8")
            keep.append(s)
            f.string_value = s
        else:
            if _is_pil_image(value):
                img = value if value.mode in ("RGB", "L") else value.convert("RGB")
                a = np.asarray(img, dtype=np.uint8)
                options["color_space"] = "Grayscale" if img.mode == "L" else "RGB"
            else:
                a = np.asarray(value)
                if a.dtype != np.uint8:
                    raise TypeError(f"image input '{name}': give a PIL image, a PNG/JPEG path or a uint8 array "
                                    f"[height, width, channels]; got an array of {a.dtype}")
            if a.ndim == 2:
                a = a[:, :, None]
            if a.ndim != 3 or a.shape[2] not in (1, 3):
                raise ValueError(f"image input '{name}': pixels must be [height, width, 1 or 3], got shape {a.shape}")
            if "color_space" not in options:
                options["color_space"] = "Grayscale" if a.shape[2] == 1 else "RGB"
            a = np.ascontiguousarray(a)
            shape = (ctypes.c_int64 * 3)(*a.shape)
            keep += [a, shape]
            f.dtype = _lib.DTYPE_UINT8
            f.rank = 3
            f.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
            f.data = a.ctypes.data
        o = json.dumps(options).encode("utf-8")
        keep.append(o)
        f.options_json = o
        return f

    # -- outputs -------------------------------------------------------------------------------

    def _outputs_of(self, result):
        L = _lib.lib()
        out = {}
        for i in range(L.mlconv_result_count(result)):
            name = L.mlconv_result_name(result, i).decode("utf-8")
            kind = L.mlconv_result_kind(result, i)
            if kind == _lib.KIND_MULTIARRAY or kind == _lib.KIND_IMAGE:
                dtype = np.dtype(_lib.DTYPE_TO_NUMPY[L.mlconv_result_dtype(result, i)])
                rank = L.mlconv_result_rank(result, i)
                sp = L.mlconv_result_shape(result, i)
                shape = tuple(sp[k] for k in range(rank))
                a = np.empty(shape, dtype=dtype)
                if a.nbytes:
                    ctypes.memmove(a.ctypes.data, L.mlconv_result_data(result, i), a.nbytes)
                if kind == _lib.KIND_IMAGE:
                    space = (L.mlconv_result_string(result, i) or b"RGB").decode()
                    out[name] = _to_pil(a, space)
                else:
                    out[name] = a
            elif kind == _lib.KIND_INT64:
                out[name] = int(L.mlconv_result_int64(result, i))
            elif kind == _lib.KIND_DOUBLE:
                out[name] = float(L.mlconv_result_double(result, i))
            elif kind == _lib.KIND_STRING:
                out[name] = L.mlconv_result_string(result, i).decode("utf-8")
            elif kind == _lib.KIND_DICTIONARY:
                d = json.loads(L.mlconv_result_string(result, i).decode("utf-8"))
                int_keys = self._outputs.get(name, {}).get("key_type") == "int64"
                out[name] = {(int(k) if int_keys else k): float(v) for k, v in d.items()}
            elif kind == _lib.KIND_SEQUENCE:
                out[name] = json.loads(L.mlconv_result_string(result, i).decode("utf-8"))
            else:
                raise MLConvError(5, f"output '{name}' has kind {kind}, which this package does not know")
        return out


def _preview(value):
    """A short repr of a value for an error message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar(value, name):
    a = np.asarray(value)
    if a.size != 1:
        raise ValueError(f"input '{name}' takes one number, got an array of shape {a.shape}")
    return a.reshape(()).item()


def _is_pil_image(value):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(value, Image.Image)


def _to_pil(a, space):
    from PIL import Image
    if a.ndim == 3 and a.shape[2] == 1:
        return Image.fromarray(a[:, :, 0], "L")
    if space == "BGR":
        a = np.ascontiguousarray(a[:, :, ::-1])
    return Image.fromarray(a, "RGB")


def compile_model(path, cache_dir=None):
    """Compiles a Keras file or .mlmodel neural network to an .mlbundle in the cache (Core ML's
    MLModel.compileModel(at:)); returns the bundle's path. Raises MLConvError (status 5 for model
    types without a bundle form: open the .mlmodel itself)."""
    options = {} if cache_dir is None else {"cache_dir": os.fspath(cache_dir)}
    s = _lib.take_string(_lib.lib().mlconv_compile_model(os.fspath(path).encode("utf-8"),
                                                         json.dumps(options).encode("utf-8")))
    if s is None:
        _fail(2)
    return s
