"""mlconv for Python: run Core ML and Keras models on Linux through the mlconv library.

    import mlconv
    model = mlconv.Model("model.mlmodel")
    out = model.predict({"x": [1.0, 2.0, 3.0, 4.0]})

`mlconv.coremltools.enable()` makes coremltools' `MLModel(...).predict(...)` run through mlconv
where Core ML is not available (Linux).
"""
from ._model import Model, MLConvError, compile_model
from . import coremltools

__version__ = "0.1.0"
__all__ = ["Model", "MLConvError", "compile_model", "coremltools", "__version__"]
