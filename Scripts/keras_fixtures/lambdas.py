"""Issue 14 fixtures: Lambda layers lowered automatically, and TensorFlow functions that tf.keras
wraps as TFOpLambda / SlicingOpLambda layers.

Loaded by Scripts/make_fixtures.py (`_load_fixture_groups`): FIXTURES lists the fixtures, the
build_* functions get make_fixtures' Ctx `c`.

The Lambda functions are compiled from the sources below under fixed file names, so the
marshalled CPython 3.11 bytecode stored in the .h5 files does not depend on where this script
lives. Their global names (K, tf, ops) are the libraries of each flavour; reloading the saved
model resolves them through `custom_objects`.
"""

FIXTURES = [
    dict(base="lambda_exprs", builder="build_lambda_exprs", issue=14),
    dict(base="lambda_calls", builder="build_lambda_calls", issue=14),
    dict(base="tfop_lambda", builder="build_tfop_lambda", flavors=("keras2",), issue=14),
    dict(base="keras_ops", builder="build_keras_ops", flavors=("keras3",), issue=14),
]

# Keras 3 stores a named (def) function by name only, so every function is a lambda here; the
# Keras 2 flavour adds a def with a local variable (its bytecode is stored either way).
# Pure expressions of the input: arithmetic with constants, slicing and indexing, several inputs,
# arguments from the config, stored defaults and a closure (both flavours).
EXPR_SOURCE = '''
rescale = lambda x: (x + 1) * 127.5

crop = lambda x: x[:, 1:-1, 1:-1]

mixed = lambda x: -(1.0 - x / 2) ** 2 + 3 * x - x % 0.75

strided = lambda x: x[:, ::2, 1:5:2, :3]

pick = lambda x: x[..., 1]

newaxis = lambda x: x[:, None, 2]

pair = lambda ts: ts[0] * ts[1] + ts[0] / (ts[1] * ts[1] + 1)

scaled = lambda x, factor=2.0, shift=0.0: x * factor + shift

scaled_no_defaults = lambda x, factor, shift: x * factor + shift

def make_power(p):
    return lambda x: x ** p

def with_local(x):
    y = 1.0 - x / 2
    return -y ** 2 + 3 * x
'''

# Library calls: the Keras 2 backend and TensorFlow (keras2), keras.ops (keras3).
K2_SOURCE = '''
reduce_mean = lambda x: K.mean(x, axis=[1, 2], keepdims=True)

sum_squares = lambda x: K.sum(K.square(x), axis=-1)

safe_sqrt = lambda x: K.sqrt(K.abs(x) + K.epsilon())

clip_cat = lambda x: K.concatenate([K.clip(x, -0.5, 0.5), x * 2])

expand_max = lambda x: K.expand_dims(K.max(x, axis=-1))

reshape = lambda x: K.reshape(x, (-1, 16, 16))

permute = lambda x: K.permute_dimensions(x, (0, 2, 1, 3))

l2 = lambda x: K.l2_normalize(x, axis=-1)

acts = lambda x: K.softmax(x) + K.relu(x, max_value=1.0) + K.sigmoid(x) * K.tanh(x) + K.exp(-x) - K.log(K.abs(x) + 1)

powers = lambda x: K.pow(x, 3) + K.maximum(x, 0.1) - K.minimum(x, -0.1)

stacked = lambda x: K.stack([x, -x], axis=1)

tf_calls = lambda x: tf.reduce_max(tf.nn.relu(tf.transpose(x, [0, 2, 1, 3])), axis=[1, 2])
'''

K3_SOURCE = '''
reduce_mean = lambda x: ops.mean(x, axis=[1, 2], keepdims=True)

sum_squares = lambda x: ops.sum(ops.square(x), axis=-1)

safe_sqrt = lambda x: ops.sqrt(ops.abs(x) + 1e-7)

clip_cat = lambda x: ops.concatenate([ops.clip(x, -0.5, 0.5), x * 2], axis=-1)

expand_max = lambda x: ops.expand_dims(ops.max(x, axis=-1), -1)

reshape = lambda x: ops.reshape(x, (-1, 16, 16))

permute = lambda x: ops.transpose(x, (0, 2, 1, 3))

l2 = lambda x: x / ops.sqrt(ops.sum(ops.square(x), axis=-1, keepdims=True) + 1e-6)

acts = lambda x: ops.softmax(x) + ops.relu(x) + ops.sigmoid(x) * ops.tanh(x) + ops.exp(-x) - ops.log(ops.abs(x) + 1)

powers = lambda x: ops.power(x, 3) + ops.maximum(x, 0.1) - ops.minimum(x, -0.1)

stacked = lambda x: ops.stack([x, -x], axis=1)

tf_calls = lambda x: ops.max(ops.relu(ops.transpose(x, [0, 2, 1, 3])), axis=[1, 2])
'''


def _namespace(c, source, filename):
    ns = {"K": c.K.backend, "tf": c.tf}
    if not c.k2:
        ns["ops"] = c.K.ops
    exec(compile(source, filename, "exec"), ns)
    return ns


def _globals_for_reload(c):
    # Lambda deserialisation resolves the functions' global names in custom_objects.
    c.custom_objects.update({"K": c.K.backend, "tf": c.tf})
    if not c.k2:
        c.custom_objects["ops"] = c.K.ops


def build_lambda_exprs(c):
    L, K = c.L, c.K
    _globals_for_reload(c)
    f = _namespace(c, EXPR_SOURCE, "mlconv_lambda_exprs.py")
    x = L.Input((8, 8, 4), name="x")
    y = L.Input((8, 8, 4), name="y")
    outs = [
        L.Lambda(f["rescale"], name="rescale")(x),
        L.Lambda(f["crop"], name="crop")(x),
        L.Lambda(f["mixed"], name="mixed")(x),
        L.Lambda(f["strided"], name="strided")(x),
        L.Lambda(f["pick"], name="pick")(x),
        L.Lambda(f["newaxis"], name="newaxis")(x),
        L.Lambda(f["pair"], name="pair")([x, y]),
        # Keras 3 stores a lambda's defaults as a list, which its own loader refuses.
        L.Lambda(f["scaled"], arguments={"factor": 0.5}, name="scaled")(x) if c.k2 else
        L.Lambda(f["scaled_no_defaults"], arguments={"factor": 0.5, "shift": 0.25}, name="scaled")(x),
        L.Lambda(f["make_power"](3), name="power_closure")(y),
        L.Lambda(lambda t: t[:, 2:-2, 2:-2] * 0.5, name="anonymous")(x),
    ] + ([L.Lambda(f["with_local"], name="with_local")(x)] if c.k2 else [])
    return {
        "model": K.Model([x, y], outs, name="lambda_exprs"),
        "inputs": [("normal", 1.0, 0.0), ("normal", 1.0, 0.0)],
        "notes": "Lambdas of each pure-expression shape mlconv lowers without hooks: arithmetic with "
                 "constants, slicing with steps / ellipsis / None, two inputs, config 'arguments', a "
                 "closure (x ** p, p = 3) and an anonymous lambda; CPython 3.11 bytecode compiled from "
                 "mlconv_lambda_exprs.py.",
    }


def build_lambda_calls(c):
    L, K = c.L, c.K
    _globals_for_reload(c)
    f = _namespace(c, K2_SOURCE if c.k2 else K3_SOURCE, "mlconv_lambda_calls.py")
    x = L.Input((8, 8, 4), name="x")
    names = ["reduce_mean", "sum_squares", "safe_sqrt", "clip_cat", "expand_max", "reshape", "permute", "l2",
             "acts", "powers", "stacked", "tf_calls"]
    outs = [L.Lambda(f[n], name=n)(x) for n in names]
    return {
        "model": K.Model(x, outs, name="lambda_calls"),
        "no_reload_keras3": "Keras 3 resolves a deserialised lambda's global names in its own "
                            "keras.src.utils.python_utils module only, where 'ops' is unknown",
        "no_keras3_forms": "Keras 3 cannot reload these lambdas from any saved form (their global 'ops' "
                           "is unknown to its deserialiser), so the .keras / weights forms cannot be checked",
        "inputs": [("normal", 1.0, 0.0)],
        "notes": "Lambdas calling library functions mlconv lowers: the Keras 2 backend (K.*) and tf.* in "
                 "Keras 2, keras.ops in Keras 3 (mean, sum, square, sqrt, abs, clip, concatenate, "
                 "expand_dims, max, reshape, permute/transpose, l2_normalize, softmax, relu, sigmoid, tanh, "
                 "exp, log, pow, maximum, minimum, stack).",
    }


def build_tfop_lambda(c):
    L, K, tf = c.L, c.K, c.tf
    i = L.Input((4, 6, 3), name="a")
    j = L.Input((4, 6, 3), name="b")
    a = i + 1.0
    b = 2.0 * a
    m = tf.math.multiply(b, j)
    outs = [
        a, b, m,
        m[:, 1:3, ::2, 0],
        tf.reshape(i, (-1, 72)),
        tf.transpose(i, perm=[0, 2, 1, 3]),
        tf.concat([i, j], axis=-1),
        tf.math.reduce_mean(i, axis=[1, 2], keepdims=True),
        tf.nn.softmax(i, axis=-1),
        tf.expand_dims(i[:, 0], -1),
        1.0 - i,
        i / (tf.abs(j) + 1.0),
        tf.clip_by_value(i, -1.0, 1.0),
        tf.math.l2_normalize(i, axis=-1),
        i[..., tf.newaxis, 0],
        tf.squeeze(tf.math.reduce_sum(j, axis=1, keepdims=True), axis=[1]),
        tf.nn.relu(i) + tf.math.sigmoid(j) * tf.math.tanh(i),
        tf.math.maximum(i, j) - tf.math.minimum(i, 0.25),
        tf.pad(i, [[0, 0], [1, 2], [0, 1], [0, 0]]),
        tf.stack([i, j], axis=2),
        tf.math.square(tf.math.exp(-tf.math.abs(i))),
    ]
    return {
        "model": K.Model([i, j], outs, name="tfop_lambda"),
        "inputs": [("normal", 1.0, 0.0), ("normal", 1.0, 0.0)],
        "notes": "TensorFlow functions called on Keras tensors, which tf.keras records as TFOpLambda "
                 "and SlicingOpLambda layers (function name + arguments in the inbound nodes, constants "
                 "as _CONSTANT_VALUE, tensor kwargs as references).",
    }


def build_keras_ops(c):
    K = c.K
    ops = K.ops
    i = K.Input((4, 6, 3), name="a")
    j = K.Input((4, 6, 3), name="b")
    outs = [
        ops.add(i, 1.0),
        i * 2.0,
        1.0 - i,
        ops.multiply(i, j) + j,
        i[:, 1:3, ::2, 0],
        i[..., None, 1],
        ops.concatenate([i, j * 2.0], axis=-1),
        ops.reshape(i, (-1, 72)),
        ops.transpose(i, (0, 2, 1, 3)),
        ops.softmax(i),
        ops.clip(i, -1.0, 1.0),
        ops.expand_dims(i, 1),
        ops.sqrt(ops.abs(i)),
        ops.sum(i, axis=[1, 2]),
        ops.mean(j, axis=-1, keepdims=True),
        ops.maximum(i, j) - ops.minimum(i, 0.25),
        ops.relu(i) + ops.sigmoid(j) * ops.tanh(i),
        ops.stack([i, j], axis=2),
        i / (ops.abs(j) + 1.0),
    ]
    return {
        "model": K.Model([i, j], outs, name="keras_ops"),
        "no_keras3_forms": "Keras 3 cannot reload its own operation entries (no Sigmoid layer class), so "
                           "the .keras / weights forms cannot be checked",
        "no_reload_keras3": "Keras 3's legacy .h5 loader looks operation classes up as layers and has "
                            "no 'Sigmoid' layer",
        "inputs": [("normal", 1.0, 0.0), ("normal", 1.0, 0.0)],
        "notes": "keras.ops calls on Keras tensors, which Keras 3 records as operation entries (Add, "
                 "Multiply, GetItem, Mean, … with module keras.src.ops.*, dropped in legacy .h5 configs) "
                 "whose class names collide with layers (Add, Multiply, Concatenate, Reshape, Softmax, "
                 "Maximum, Minimum) but whose semantics differ.",
    }
