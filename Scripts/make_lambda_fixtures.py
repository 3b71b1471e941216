#!/usr/bin/env python3
"""Generate the Lambda-function test data in Fixtures/lambda/ (for LambdaFunctionTests).

Usage:
    python Scripts/make_lambda_fixtures.py            # writes Fixtures/lambda/*.json

Needs CPython 3.11 (the marshalled bytecode is version specific), h5py, and for the synthesized
Keras configs tf_keras 2.x and keras 3 (`Scripts/python-env` builds a venv with all of them).

What it writes (all small JSON; nothing here is third-party data):

* `keras_lambda_configs.json`: `Lambda` layer configs with the function name the Swift decoder
  must recover. Two kinds:
  - excerpts of our own generated fixtures (`Fixtures/keras/style_transfer_lambda_k2/model.h5`,
    `style_transfer_lambda_weights_k2/arch.json`, `style_transfer_lambda_k3/model.h5`), copied so
    the tests need no HDF5;
  - configs synthesized here with tf_keras / keras 3 `Lambda(...).get_config()` (a lambda, a named
    function, a closure with defaults, a numpy ufunc saved as `function_type: "function"`, a
    registered Keras 3 function, the Keras 3 generic `__lambda__` serialization, and the
    Keras 1 / early Keras 2 `raw_unicode_escape` text form of the marshal bytes).
* `marshal_py311.json`: `marshal.dumps(f.__code__)` (base64) for many shapes of Python function,
  compiled here from source under the fixed file name `mlconv_lambda_shapes.py`, with the fields
  the Swift `PythonCodeSummary` must reproduce (name, qualname, arguments, co_names, a readable
  repr of every constant, free variables, nested code objects, first line).

Deterministic: the same CPython 3.11 and package versions give byte-identical files.
"""

import base64
import json
import marshal
import os
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fixtures" / "lambda"
SHAPES_FILE = "mlconv_lambda_shapes.py"

# --------------------------------------------------------------------------------------------
# Readable constant repr: what the Swift decoder renders (Python's repr, except code objects,
# which show as <code NAME>, and StopIteration, which shows as StopIteration).


def const_repr(v):
    if isinstance(v, types.CodeType):
        return f"<code {v.co_name}>"
    if v is StopIteration:
        return "StopIteration"
    if isinstance(v, tuple):
        inner = ", ".join(const_repr(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(const_repr(x) for x in v) + "]"
    if isinstance(v, frozenset):
        if not v:
            return "frozenset()"
        return "frozenset({" + ", ".join(const_repr(x) for x in v) + "})"
    if isinstance(v, set):
        if not v:
            return "set()"
        return "{" + ", ".join(const_repr(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{const_repr(k)}: {const_repr(x)}" for k, x in v.items()) + "}"
    if isinstance(v, slice):
        return f"slice({const_repr(v.start)}, {const_repr(v.stop)}, {const_repr(v.step)})"
    return repr(v)


def argument_names(co):
    """Signature order: positional, *varargs, keyword-only, **varkw (bare `*` omitted)."""
    names = list(co.co_varnames)
    n = co.co_argcount
    k = co.co_kwonlyargcount
    out = names[:n]
    i = n + k
    star = None
    if co.co_flags & 0x04:
        star = "*" + names[i]
        i += 1
    if star:
        out.append(star)
    out += names[n:n + k]
    if co.co_flags & 0x08:
        out.append("**" + names[i])
    return out


def version_guess_311(co):
    """What the Swift decoder should guess for CPython 3.11 bytecode: "3.11" when an opcode that
    exists only in 3.11 (LOAD_METHOD 160, PRECALL 166) shows, else "3.11–3.12"."""
    code = co.co_code
    ops = {code[i] for i in range(0, len(code), 2)}
    return "3.11" if ops & {160, 166} else "3.11\u20133.12"


def code_expectation(co):
    return {
        "name": co.co_name,
        "qualname": co.co_qualname,
        "argument_names": argument_names(co),
        "positional_only_count": co.co_posonlyargcount,
        "keyword_only_count": co.co_kwonlyargcount,
        "names": list(co.co_names),
        "constants": [const_repr(c) for c in co.co_consts],
        "free_variables": list(co.co_freevars),
        "nested_code": [c.co_name for c in co.co_consts if isinstance(c, types.CodeType)],
        "filename": co.co_filename,
        "first_line": co.co_firstlineno,
        "flags": co.co_flags,
        "python_version_guess": version_guess_311(co),
    }


# --------------------------------------------------------------------------------------------
# Shapes of function. Each source binds `f`; nothing is called except the factories that build
# closures (make_scaler, factory). Names such as `tf` are never resolved: the code is only compiled.

LONG_TUPLE = "(" + ", ".join(str(i) for i in range(300)) + ")"
MANY_LOCALS = "".join(f"    v{i} = x + {i}\n" for i in range(40))

SHAPES = [
    ("lambda_mul", "f = lambda x: x * 2\n"),
    ("res_crop_lambda", "f = lambda x: x[:, 2:-2, 2:-2]\n"),
    ("def_rescale_output", "def rescale_output(x):\n    return (x + 1) * 127.5\nf = rescale_output\n"),
    ("defaults_kwonly",
     "def pooled(x, scale=2.0, *, axis=-1, keepdims=False):\n"
     "    return tf.reduce_mean(x * scale, axis=axis, keepdims=keepdims)\nf = pooled\n"),
    ("posonly_varargs",
     "def everything(a, b=1, /, c=2, *rest, d, e=None, **options):\n"
     "    return (a, b, c, rest, d, e, options)\nf = everything\n"),
    ("closure_lambda", "def make_scaler(k):\n    return lambda x: x * k\nf = make_scaler(3)\n"),
    ("cell_variables",
     "def outer(x):\n    y = x + 1\n    def inner(z):\n        return z * y\n    return inner(x)\nf = outer\n"),
    ("list_comprehension", "f = lambda xs: [v * 2 for v in xs if v]\n"),
    ("nested_lambdas", "f = lambda x: (lambda y: (lambda z: z + 1)(y))(x)\n"),
    ("docstring_unicode",
     'def normalize(image):\n    """Normalise to [-1, 1] \u2014 \u00abun\u00efcode\u00bb \u4e2d\u6587."""\n'
     "    return image / 127.5 - 1.0\nf = normalize\n"),
    ("big_ints",
     "f = lambda x: (x + 123456789012345678901234567890, x - 2**70, -(2**40), 2**31, -2**31 - 1,"
     " 2**62, -2**63, 2**64)\n"),
    ("const_zoo",
     "f = lambda x: (x, None, True, False, ..., 1+2j, 3j, -1.5-0.25j, b'\\x00ab\\'\"\\\\', 'it\\'s',"
     " 'say \"hi\"', 'both \\' and \"', 'tab\\there\\n', '\\x07bell\\x7f', 'back\\\\slash', '',"
     " 0.1, -0.0, 1e-05, 1e16, 1234567890123456.0, 123456789.125, 1e300 * 10, -(1e300 * 10),"
     " 5e-324, 1.7976931348623157e308, 0.0001, 0.00001234)\n"),
    ("frozenset_membership", "f = lambda x: x in {1, 2, 3} or x in (4, 5)\n"),
    ("ellipsis_index", "f = lambda x: x[..., 0]\n"),
    ("long_string", "f = lambda x: x + '" + "a" * 300 + "'\n"),
    ("long_tuple", "f = lambda: " + LONG_TUPLE + "\n"),
    ("method_qualname", "class Scaler:\n    def scale(self, x):\n        return x * self.k\nf = Scaler.scale\n"),
    ("factory_lambda", "def factory():\n    return lambda t: t\nf = factory()\n"),
    ("try_except",
     "def safe(x):\n    try:\n        return tf.sqrt(x)\n    except ValueError as e:\n"
     "        print(e)\n        return None\nf = safe\n"),
    ("generator", "def gen(x):\n    yield x\n    yield from range(3)\nf = gen\n"),
    ("attribute_chain", "f = lambda x: tf.image.resize(x, (64, 64), method='bilinear')\n"),
    ("star_lambda", "f = lambda *a, **k: (a, k)\n"),
    ("unicode_identifier", "def gr\u00f6\u00dfe(x):\n    return x\nf = gr\u00f6\u00dfe\n"),
    ("many_locals", "def many(x):\n" + MANY_LOCALS + "    return v39\nf = many\n"),
    ("async_def", "async def fetch(x):\n    return await x\nf = fetch\n"),
    ("dict_and_set_display", "f = lambda x: ({'a': x, 'b': 2}, {x, 1}, [x, 'list'])\n"),
    ("lambda_defaults", "f = lambda x, scale=0.5, offset=(1, 2): x * scale + offset[0]\n"),
    ("global_and_nonlocal",
     "def counter():\n    n = 0\n    def step():\n        nonlocal n\n        global TOTAL\n"
     "        n += 1\n        TOTAL = n\n        return n\n    return step\nf = counter()\n"),
]


def compile_shape(source):
    namespace = {}
    exec(compile(source, SHAPES_FILE, "exec"), namespace)
    return namespace["f"]


def marshal_cases():
    cases = []
    for case_id, source in SHAPES:
        f = compile_shape(source)
        co = f.__code__
        blob = marshal.dumps(co)
        assert marshal.loads(blob).co_name == co.co_name
        cases.append({
            "id": case_id,
            "source": source,
            "marshal_base64": base64.b64encode(blob).decode("ascii"),
            "expected": code_expectation(co),
        })
    return cases


# --------------------------------------------------------------------------------------------
# Keras configs: excerpts of our own fixtures.

def lambda_layers(cfg, out):
    if isinstance(cfg, dict):
        if cfg.get("class_name") == "Lambda":
            out.append(cfg)
        for v in cfg.values():
            lambda_layers(v, out)
    elif isinstance(cfg, list):
        for v in cfg:
            lambda_layers(v, out)


def expected_for_fixture(layer_name):
    return "rescale_output" if layer_name == "rescale_output" else "res_crop"


def fixture_excerpts():
    import h5py
    cases = []
    sources = [
        ("style_transfer_lambda_k2", "Fixtures/keras/style_transfer_lambda_k2/model.h5"),
        ("style_transfer_lambda_weights_k2", "Fixtures/keras/style_transfer_lambda_weights_k2/arch.json"),
        ("style_transfer_lambda_k3", "Fixtures/keras/style_transfer_lambda_k3/model.h5"),
    ]
    for tag, rel in sources:
        path = ROOT / rel
        if rel.endswith(".json"):
            config = json.loads(path.read_text())
            keras_version = config.get("keras_version")
        else:
            with h5py.File(path, "r") as f:
                text = f.attrs["model_config"]
                text = text.decode() if isinstance(text, bytes) else text
                config = json.loads(text)
                kv = f.attrs.get("keras_version")
                keras_version = kv.decode() if isinstance(kv, bytes) else kv
        layers = []
        lambda_layers(config, layers)
        for layer in layers:
            name = layer["config"]["name"]
            k3 = isinstance(layer["config"]["function"], dict)
            cases.append({
                "id": f"{tag}/{name}",
                "origin": rel,
                "keras_version": keras_version,
                "config": layer["config"],
                "expected": {
                    "function_name": expected_for_fixture(name),
                    "source": "keras3_function" if k3 else "marshal",
                    "filename": None if k3 else "mlconv_style_lambdas.py",
                    "argument_names": None if k3 else ["x"],
                },
            })
    return cases


# --------------------------------------------------------------------------------------------
# Keras configs synthesized in worker processes (one per Keras flavour).

WORKER_COMMON = r'''
import base64, json, linecache, marshal, sys
SHAPES_FILE = "mlconv_lambda_shapes.py"
def compile_shape(source):
    # Keras 3 quotes the lambda's source in a warning: let inspect find it.
    linecache.cache[SHAPES_FILE] = (len(source), None, source.splitlines(True), SHAPES_FILE)
    namespace = {}
    exec(compile(source, SHAPES_FILE, "exec"), namespace)
    return namespace
out = []
def add(case_id, config, expected, keras_version):
    out.append({"id": case_id, "origin": "synthesized by Scripts/make_lambda_fixtures.py",
                "keras_version": keras_version, "config": config, "expected": expected})
'''

WORKER_TF_KERAS = WORKER_COMMON + r'''
import numpy as np
import tf_keras
from tf_keras import layers
kv = tf_keras.__version__
ns = compile_shape("scale = lambda x: x * 0.5\n")
c = layers.Lambda(ns["scale"], name="scale_lambda").get_config()
add("tf_keras/lambda", c, {"function_name": "<lambda>", "source": "marshal",
    "filename": SHAPES_FILE, "argument_names": ["x"]}, kv)
ns = compile_shape("def make(k, b):\n    def shift(x, bias=b):\n        return x * k + bias\n    return shift\nf = make(2.0, 1.0)\n")
c = layers.Lambda(ns["f"], name="closure_defaults").get_config()
add("tf_keras/closure_with_defaults", c, {"function_name": "shift", "source": "marshal",
    "filename": SHAPES_FILE, "argument_names": ["x", "bias"], "defaults": ["1.0"], "closure": ["2.0"]}, kv)
c = layers.Lambda(np.abs, name="numpy_abs").get_config()
add("tf_keras/function_type_function", c, {"function_name": c["function"], "source": "module_function",
    "module": c["module"]}, kv)
# Keras 1 / Keras <= 2.0 stored the marshal bytes as text (bytes.decode("raw_unicode_escape")),
# not base64: re-create that form from CPython 3.11 bytecode.
ns = compile_shape("def normalize(image):\n    return image / 127.5 - 1.0\n")
raw = marshal.dumps(ns["normalize"].__code__).decode("raw_unicode_escape")
add("keras1_raw_unicode_escape", {"name": "lambda_1", "trainable": True, "function_type": "lambda",
    "function": [raw, None, None], "output_shape": None, "output_shape_type": "raw", "arguments": {}},
    {"function_name": "normalize", "source": "marshal", "filename": SHAPES_FILE,
     "argument_names": ["image"]}, "1.2.1")
add("keras2_bare_string_function", {"name": "lambda_2", "function_type": "lambda",
    "function": base64.b64encode(marshal.dumps(ns["normalize"].__code__)).decode("ascii"),
    "arguments": {}}, {"function_name": "normalize", "source": "marshal", "filename": SHAPES_FILE,
    "argument_names": ["image"]}, "2.1.0")
json.dump(out, sys.stdout)
'''

WORKER_KERAS3 = WORKER_COMMON + r'''
import keras
from keras import layers
kv = keras.__version__
ns = compile_shape("scale = lambda x, factor=0.5: x * factor\n")
c = layers.Lambda(ns["scale"], name="k3_lambda").get_config()
add("keras3/lambda", c, {"function_name": "<lambda>", "source": "keras3_lambda",
    "filename": SHAPES_FILE, "argument_names": ["x", "factor"], "defaults": ["0.5"]}, kv)
ns = compile_shape("def res_crop(x):\n    return x[:, 2:-2, 2:-2]\n")
fn = ns["res_crop"]
fn.__module__ = "__main__"
c = layers.Lambda(fn, name="k3_named").get_config()
add("keras3/named_function", c, {"function_name": "res_crop", "source": "keras3_function",
    "module": c["function"].get("module")}, kv)
@keras.saving.register_keras_serializable(package="MyPkg")
def scale_output(x):
    return x * 255.0
c = layers.Lambda(scale_output, name="k3_registered").get_config()
add("keras3/registered_function", c, {"function_name": "scale_output", "source": "keras3_function",
    "module": c["function"].get("module"), "registered_name": "MyPkg>scale_output"}, kv)
ns = compile_shape("g = lambda t: t + 1\n")
generic = keras.saving.serialize_keras_object(ns["g"])
add("keras3/generic_lambda_value", {"name": "k3_generic", "function": generic, "arguments": {}},
    {"function_name": "<lambda>", "source": "keras3_lambda", "filename": SHAPES_FILE,
     "argument_names": ["t"]}, kv)
json.dump(out, sys.stdout)
'''


def run_worker(code, extra_env):
    env = dict(os.environ, **extra_env)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit("worker failed")
    return json.loads(res.stdout)


def main():
    if sys.version_info[:2] != (3, 11):
        sys.stderr.write("warning: not CPython 3.11; the marshal fixtures will differ from the committed ones\n")
    OUT.mkdir(parents=True, exist_ok=True)
    marshal_doc = {
        "generator": "Scripts/make_lambda_fixtures.py",
        "python": "%d.%d.%d" % sys.version_info[:3],
        "cases": marshal_cases(),
    }
    (OUT / "marshal_py311.json").write_text(json.dumps(marshal_doc, indent=1, ensure_ascii=True) + "\n")

    cases = fixture_excerpts()
    cases += run_worker(WORKER_TF_KERAS, {"TF_USE_LEGACY_KERAS": "1"})
    cases += run_worker(WORKER_KERAS3, {"KERAS_BACKEND": "tensorflow"})
    configs_doc = {
        "generator": "Scripts/make_lambda_fixtures.py",
        "python": "%d.%d.%d" % sys.version_info[:3],
        "cases": cases,
    }
    (OUT / "keras_lambda_configs.json").write_text(json.dumps(configs_doc, indent=1, ensure_ascii=True) + "\n")
    print(f"wrote {len(marshal_doc['cases'])} marshal cases and {len(cases)} Keras configs to {OUT}")


if __name__ == "__main__":
    main()
