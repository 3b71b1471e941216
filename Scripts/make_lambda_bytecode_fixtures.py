#!/usr/bin/env python3
"""Marshalled bytecode of small Lambda functions under every CPython version installed with
pyenv (2.7, 3.6–3.13), for the bytecode evaluator's tests (Tests/KerasFrontendTests/
LambdaLoweringTests.swift). Writes Fixtures/lambda/bytecode_versions.json.

Usage:
    python3 Scripts/make_lambda_bytecode_fixtures.py            # every /root/.pyenv/versions/*

Each case is compiled by each interpreter from the source below under the file name
mlconv_bytecode_cases.py; `f` is the function Keras would store. `expected` is the expression the
function returns written as Python source (what `PythonExpression.description` must print), or
null for functions that are not pure expressions (the evaluator must refuse them).
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fixtures" / "lambda" / "bytecode_versions.json"
PYENV = Path("/root/.pyenv/versions")

CASES = [
    ("rescale_output", "def f(x):\n    return (x + 1) * 127.5\n", "(x + 1) * 127.5"),
    ("res_crop", "f = lambda x: x[:, 2:-2, 2:-2]\n", "x[:, 2:-2, 2:-2]"),
    ("normalize", "def f(image):\n    '''Docstring.'''\n    return image / 127.5 - 1.0\n", "image / 127.5 - 1.0"),
    ("closure_mean", "def make(keepdims):\n    return lambda x: K.mean(x, axis=1, keepdims=keepdims)\nf = make(True)\n",
     "K.mean(x, axis=1, keepdims=keepdims)"),
    ("nested_calls", "f = lambda x: K.sum(K.square(x), axis=-1)\n", "K.sum(K.square(x), axis=-1)"),
    ("attribute_chain", "f = lambda x: tf.math.l2_normalize(x, axis=-1)\n", "tf.math.l2_normalize(x, axis=-1)"),
    ("ellipsis_index", "f = lambda x: tf.reduce_mean(x[..., 0], axis=[1, 2])\n", "tf.reduce_mean(x[..., 0], axis=[1, 2])"),
    ("two_inputs", "f = lambda t: t[0] * t[1] + t[0]\n", "t[0] * t[1] + t[0]"),
    ("negative_power", "f = lambda x: -x ** 2\n", "-x ** 2"),
    ("simple_slice", "f = lambda x: x[1:3]\n", "x[1:3]"),
    ("open_slices", "f = lambda x: x[2:] - x[:-2]\n", "x[2:] - x[:-2]"),
    ("newaxis", "f = lambda x: x[:, None, 2]\n", "x[:, None, 2]"),
    ("list_argument", "f = lambda x: K.concatenate([x, x * 2], axis=-1)\n", "K.concatenate([x, x * 2], axis=-1)"),
    ("steps", "f = lambda x: x[::2, :, ::-1]\n", "x[::2, :, ::-1]"),
    ("default_argument", "f = lambda x, factor=2.0: x * factor\n", "x * factor"),
    ("local_variable", "def f(x):\n    y = x + 1\n    return y * y\n", "(x + 1) * (x + 1)"),
    ("negative_constants", "f = lambda x: K.clip(x, -1.0, 1.0) - x // 2 % 5\n", "K.clip(x, -1.0, 1.0) - x // 2 % 5"),
    ("tuple_constant", "f = lambda x: K.reshape(x, (-1, 16, 16))\n", "K.reshape(x, (-1, 16, 16))"),
    ("keyword_only_call", "f = lambda x: tf.nn.softmax(logits=x, axis=-1)\n", "tf.nn.softmax(logits=x, axis=-1)"),
    ("subtract_divide", "f = lambda a: 1 - a / (a * a + 1)\n", "1 - a / (a * a + 1)"),
    ("conditional", "f = lambda x: x if x is not None else 0\n", None),
    ("comprehension", "f = lambda x: [v * 2 for v in x]\n", None),
    ("import", "def f(x):\n    import numpy\n    return numpy.abs(x)\n", None),
    ("attribute_store", "def f(x):\n    x.foo = 1\n    return x\n", None),
]

CHILD = r'''
import sys, marshal, base64, json
cases = json.loads(sys.stdin.read())
out = []
for c in cases:
    ns = {}
    exec(compile(c["source"], "mlconv_bytecode_cases.py", "exec"), ns)
    f = ns["f"]
    closure = [cell.cell_contents for cell in (f.__closure__ or ())]
    out.append({"id": c["id"], "marshal_base64": base64.b64encode(marshal.dumps(f.__code__)).decode("ascii"),
                "defaults": list(f.__defaults__ or ()), "closure": closure})
v = sys.version_info
sys.stdout.write(json.dumps({"python": "%d.%d.%d" % (v[0], v[1], v[2]), "cases": out}))
'''


def main():
    request = json.dumps([{"id": i, "source": s} for i, s, _ in CASES])
    versions = []
    for d in sorted(PYENV.iterdir(), key=lambda p: [int(x) for x in p.name.split(".") if x.isdigit()]):
        exe = d / "bin" / "python"
        if not exe.exists():
            continue
        r = subprocess.run([str(exe), "-c", CHILD], input=request.encode(), capture_output=True, check=True)
        versions.append(json.loads(r.stdout))
        print(f"CPython {versions[-1]['python']}: {len(CASES)} cases")
    doc = {
        "generator": "Scripts/make_lambda_bytecode_fixtures.py",
        "cases": [{"id": i, "source": s, "expected": e} for i, s, e in CASES],
        "versions": versions,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
