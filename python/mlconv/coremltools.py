"""Runs coremltools' MLModel.predict through mlconv where Core ML is not available.

    import mlconv
    mlconv.coremltools.enable()
    import coremltools as ct
    ct.models.MLModel("model.mlmodel").predict({"x": x})   # works on Linux

coremltools on Linux builds an MLModel from a path or a spec but cannot load it (no Core ML
framework: the model's proxy is None) and its predict raises. After enable(), MLModel.__init__
opens the same model with mlconv (from the path, the package, or — for a spec — a temporary
.mlmodel saved from it) and installs it as the proxy, so MLModel.predict runs coremltools' own
input checks and conversions and then predicts with mlconv, returning what Core ML returns:
NumPy arrays for multiArrays, str / int labels, dict probabilities, PIL images.
Models Core ML did load (macOS) are left alone unless enable(force=True).
"""
import inspect as _inspect
import os as _os
import tempfile as _tempfile

from ._model import Model as _Model, MLConvError

_state = {"enabled": False, "init": None, "predict": None, "force": False}


class _Proxy:
    """Stands where coremltools keeps Core ML's model (MLModel.__proxy__): predict, batchPredict,
    get_compiled_model_path, as libcoremlpython's _MLModelProxy."""

    def __init__(self, path, temporary=None):
        self._temporary = temporary
        self._path = path
        self._model = _Model(path)

    def predict(self, data, state=None):
        if state is not None:
            raise MLConvError(5, "stateful prediction (MLState) is not supported by mlconv")
        return self._model.predict(data)

    def batchPredict(self, rows):
        return self._model.predict_batch(rows)

    def get_compiled_model_path(self):
        from ._model import compile_model
        return compile_model(self._path)

    def __del__(self):
        if self._temporary:
            try:
                _os.remove(self._temporary)
            except OSError:
                pass


def _model_path(mlmodel, model):
    """The file mlconv opens for an MLModel built from `model` (a path or a Model_pb2.Model):
    (path, temporary file to delete later or None)."""
    if isinstance(model, str):
        return _os.path.abspath(_os.path.expanduser(_os.path.expandvars(model))), None
    if getattr(mlmodel, "is_package", False) and getattr(mlmodel, "package_path", None):
        return mlmodel.package_path, None
    from coremltools.models.utils import save_spec
    fd, tmp = _tempfile.mkstemp(suffix=".mlmodel", prefix="mlconv-spec-")
    _os.close(fd)
    save_spec(model, tmp)
    return tmp, tmp


def enable(force=False):
    """Patches coremltools.models.MLModel so that models Core ML cannot load are run by mlconv.
    force=True also replaces models Core ML did load. Idempotent; disable() undoes it."""
    import coremltools
    MLModel = coremltools.models.MLModel
    _state["force"] = bool(force)
    if _state["enabled"]:
        return
    original_init = MLModel.__init__
    original_predict = MLModel.predict
    signature = _inspect.signature(original_init)

    def __init__(self, model, *args, **kwargs):
        original_init(self, model, *args, **kwargs)
        bound = signature.bind(self, model, *args, **kwargs)
        if bound.arguments.get("skip_model_load", False):
            return
        if self.__proxy__ is not None and not _state["force"]:
            return
        self._mlconv_error = None
        try:
            path, temporary = _model_path(self, model)
            self.__proxy__ = _Proxy(path, temporary)
        except MLConvError as e:
            # As Core ML: the MLModel exists (spec, descriptions, save) but predict says why not.
            self.__proxy__ = None
            self._mlconv_error = e

    def predict(self, data, state=None):
        if self.__proxy__ is None and getattr(self, "_mlconv_error", None) is not None:
            raise self._mlconv_error
        return original_predict(self, data, state)

    __init__.__doc__ = original_init.__doc__
    predict.__doc__ = original_predict.__doc__
    MLModel.__init__ = __init__
    MLModel.predict = predict
    _state.update(enabled=True, init=original_init, predict=original_predict)


def disable():
    """Restores coremltools.models.MLModel as it was before enable()."""
    if not _state["enabled"]:
        return
    import coremltools
    coremltools.models.MLModel.__init__ = _state["init"]
    coremltools.models.MLModel.predict = _state["predict"]
    _state.update(enabled=False, init=None, predict=None)


def is_enabled():
    return _state["enabled"]
