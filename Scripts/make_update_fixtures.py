#!/usr/bin/env python3
"""Makes Fixtures/update/: small updatable Core ML neural networks, their training data, and a
NumPy implementation of the update (the specification Tests/MLTrainingTests compare against).

    PY=$(Scripts/coremltools-env) && "$PY" Scripts/make_update_fixtures.py

Each case folder holds
    model.mlmodel     built with coremltools 7.2's NeuralNetworkBuilder (make_updatable,
                      set_categorical_cross_entropy_loss / set_mean_squared_error_loss,
                      set_sgd_optimizer / set_adam_optimizer, set_epochs); shuffle switched off so
                      the mini-batches are the samples in file order
    examples.json     the training rows (feature name -> value), typed by the model's trainingInput
    case.json         the update settings and, per updatable layer, the weights after epoch 1 and
                      after the last epoch, and the mean loss of every epoch

The NumPy reference works in Core ML's own layouts (blobs [C, H, W], flatten in C, H, W order),
independently of mlconv's NHWC graph, in float64:
    loss of a mini-batch  mean over its samples of the per-sample loss
                          cross-entropy  -log p[target]            (NeuralNetwork.proto LossLayer)
                          MSE            mean over the elements of (input - target)^2
    the last mini-batch of an epoch may be smaller; it is averaged over its own size
    SGD       v = momentum * v + g ;  w = w - lr * v      (momentum 0: w = w - lr * g)
    Adam      t += 1 ; m = b1 m + (1 - b1) g ; v = b2 v + (1 - b2) g^2
              w = w - lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)
Only weights marked updatable change. Deterministic: seeded.
"""
import json, os, shutil
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "update")

import coremltools as ct
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder, SgdParams, AdamParams


# --------------------------------------------------------------------------------------------
# NumPy reference network (Core ML layouts), float64

def conv_forward(x, W, b, stride, pads):
    # x [C, H, W]; W [Co, Ci, kh, kw]; pads (top, bottom, left, right)
    t, bo, l, r = pads
    xp = np.pad(x, ((0, 0), (t, bo), (l, r)))
    co, ci, kh, kw = W.shape
    sh, sw = stride
    ho = (xp.shape[1] - kh) // sh + 1
    wo = (xp.shape[2] - kw) // sw + 1
    y = np.zeros((co, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, i * sh:i * sh + kh, j * sw:j * sw + kw]
            y[:, i, j] = np.tensordot(W, patch, axes=([1, 2, 3], [0, 1, 2]))
    if b is not None:
        y += b[:, None, None]
    return y, xp


def conv_backward(gy, xp, x_shape, W, stride, pads):
    co, ci, kh, kw = W.shape
    sh, sw = stride
    gW = np.zeros_like(W)
    gxp = np.zeros_like(xp)
    for i in range(gy.shape[1]):
        for j in range(gy.shape[2]):
            patch = xp[:, i * sh:i * sh + kh, j * sw:j * sw + kw]
            gW += gy[:, i, j][:, None, None, None] * patch[None]
            gxp[:, i * sh:i * sh + kh, j * sw:j * sw + kw] += np.tensordot(gy[:, i, j], W, axes=(0, 0))
    gb = gy.sum(axis=(1, 2))
    t, bo, l, r = pads
    gx = gxp[:, t:t + x_shape[1], l:l + x_shape[2]]
    return gx, gW, gb


def same_pads(n, k, s):
    out = (n + s - 1) // s
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2


class Net:
    """layers: list of dicts with 'type' and parameters; run per sample."""

    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        cache = []
        for L in self.layers:
            t = L["type"]
            if t == "dense":
                v = x.reshape(-1)
                y = L["W"] @ v + (L["b"] if L.get("b") is not None else 0)
                cache.append((x.shape, v))
                x = y
            elif t == "conv":
                y, xp = conv_forward(x, L["W"], L.get("b"), L["stride"], L["pads"])
                cache.append((x.shape, xp))
                x = y
            elif t == "act":
                f = L["f"]
                y = {"relu": lambda a: np.maximum(a, 0), "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
                     "tanh": np.tanh}[f](x)
                cache.append((x, y))
                x = y
            elif t == "softmax":
                e = np.exp(x - x.max())
                y = e / e.sum()
                cache.append(y)
                x = y
            elif t == "pool":
                k, s, kind = L["k"], L["s"], L["kind"]
                c, h, w = x.shape
                ho, wo = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
                y = np.zeros((c, ho, wo))
                for i in range(ho):
                    for j in range(wo):
                        win = x[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].reshape(c, -1)
                        y[:, i, j] = win.max(1) if kind == "max" else win.mean(1)
                cache.append(x)
                x = y
            elif t == "bn":
                scale = L["gamma"] / np.sqrt(L["var"] + L["eps"])
                cache.append(scale)
                x = scale[:, None, None] * (x - L["mean"][:, None, None]) + L["beta"][:, None, None]
            elif t == "flatten":
                cache.append(x.shape)
                x = x.reshape(-1)
            else:
                raise ValueError(t)
        return x, cache

    def backward(self, gy, cache, grads, fused_softmax_grad=None):
        """Accumulates weight gradients of updatable layers into grads[name] = {'W', 'b'}."""
        g = gy
        for L, c in reversed(list(zip(self.layers, cache))):
            t = L["type"]
            if t == "softmax":
                if fused_softmax_grad is not None:
                    g = fused_softmax_grad
                else:
                    y = c
                    g = y * (g - (g * y).sum())
            elif t == "dense":
                shape, v = c
                if L.get("updatable"):
                    grads[L["name"]]["W"] += np.outer(g, v)
                    if L.get("b") is not None:
                        grads[L["name"]]["b"] += g
                g = (L["W"].T @ g).reshape(shape)
            elif t == "conv":
                shape, xp = c
                gx, gW, gb = conv_backward(g, xp, shape, L["W"], L["stride"], L["pads"])
                if L.get("updatable"):
                    grads[L["name"]]["W"] += gW
                    if L.get("b") is not None:
                        grads[L["name"]]["b"] += gb
                g = gx
            elif t == "act":
                x, y = c
                f = L["f"]
                if f == "relu":
                    g = g * (x > 0)
                elif f == "sigmoid":
                    g = g * y * (1 - y)
                else:
                    g = g * (1 - y * y)
            elif t == "pool":
                x = c
                k, s, kind = L["k"], L["s"], L["kind"]
                gx = np.zeros_like(x)
                for i in range(g.shape[1]):
                    for j in range(g.shape[2]):
                        win = x[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
                        if kind == "max":
                            flat = win.reshape(win.shape[0], -1)
                            idx = flat.argmax(1)  # first maximum, row-major in the window
                            for ch in range(x.shape[0]):
                                di, dj = divmod(idx[ch], k[1])
                                gx[ch, i * s[0] + di, j * s[1] + dj] += g[ch, i, j]
                        else:
                            gx[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]] += \
                                g[:, i, j][:, None, None] / (k[0] * k[1])
                g = gx
            elif t == "bn":
                g = g * c[:, None, None]
            elif t == "flatten":
                g = g.reshape(c)
        return g


def train(net, samples, loss, opt, epochs, batch):
    """samples: list of (x, target); target an int class index (CE) or an array (MSE)."""
    upd = [L for L in net.layers if L.get("updatable")]
    state = {}
    history = {"loss": [], "after1": None}
    t = 0
    for epoch in range(epochs):
        total, count = 0.0, 0
        for start in range(0, len(samples), batch):
            mb = samples[start:start + batch]
            grads = {L["name"]: {"W": np.zeros_like(L["W"]),
                                 "b": np.zeros_like(L["b"]) if L.get("b") is not None else None} for L in upd}
            for x, target in mb:
                y, cache = net.forward(x)
                if loss == "ce":
                    p = y
                    total += -np.log(p[target])
                    onehot = np.zeros_like(p)
                    onehot[target] = 1
                    fused = (p - onehot) / len(mb)
                    net.backward(None, cache, grads, fused_softmax_grad=fused)
                else:
                    d = y - target
                    total += np.mean(d * d)
                    gy = 2 * d / d.size / len(mb)
                    net.backward(gy, cache, grads)
                count += 1
            t += 1
            for L in upd:
                for key in ("W", "b"):
                    if L.get(key if key == "W" else "b") is None:
                        continue
                    gW = grads[L["name"]][key]
                    sk = (L["name"], key)
                    if opt["kind"] == "sgd":
                        if opt["momentum"] != 0:
                            v = state.get(sk, np.zeros_like(gW))
                            v = opt["momentum"] * v + gW
                            state[sk] = v
                            L[key] = L[key] - opt["lr"] * v
                        else:
                            L[key] = L[key] - opt["lr"] * gW
                    else:
                        m, v = state.get(sk, (np.zeros_like(gW), np.zeros_like(gW)))
                        m = opt["beta1"] * m + (1 - opt["beta1"]) * gW
                        v = opt["beta2"] * v + (1 - opt["beta2"]) * gW * gW
                        state[sk] = (m, v)
                        lr_t = opt["lr"] * np.sqrt(1 - opt["beta2"] ** t) / (1 - opt["beta1"] ** t)
                        L[key] = L[key] - lr_t * m / (np.sqrt(v) + opt["eps"])
        history["loss"].append(total / count)
        snap = {L["name"]: {"weight": L["W"].reshape(-1).tolist(),
                            "bias": (L["b"].reshape(-1).tolist() if L.get("b") is not None else None)} for L in upd}
        if epoch == 0:
            history["after1"] = snap
        history["final"] = snap
    return history


# --------------------------------------------------------------------------------------------
# Cases

def f32(a):
    return np.asarray(a, dtype=np.float32)


def build_dense_case(rng, name, loss, opt, act, both_updatable, n_samples=10, batch=4, epochs=3):
    nin, nh, nout = 4, 5, 3
    W1, b1 = f32(rng.normal(0, 0.6, (nh, nin))), f32(rng.normal(0, 0.1, nh))
    W2, b2 = f32(rng.normal(0, 0.6, (nout, nh))), f32(rng.normal(0, 0.1, nout))
    labels = ["cat", "dog", "bird"]
    classifier = loss == "ce"
    in_f = [("x", datatypes.Array(nin))]
    b = NeuralNetworkBuilder(in_f, [("y", datatypes.Array(nout))] if not classifier else [("y", None)],
                             mode="classifier" if classifier else "regressor")
    b.add_inner_product("fc1", W1, b1, nin, nh, True, "x", "h1")
    b.add_activation("act1", act, "h1", "a1")
    b.add_inner_product("fc2", W2, b2, nh, nout, True, "a1", "logits" if classifier else "y")
    if classifier:
        b.add_softmax("softmax", "logits", "y")
        b.set_class_labels(labels, predicted_feature_name="label", prediction_blob="y")
    b.make_updatable(["fc1", "fc2"] if both_updatable else ["fc2"])
    if classifier:
        b.set_categorical_cross_entropy_loss("loss", input="y")
    else:
        b.set_mean_squared_error_loss("loss", input_feature=("y", datatypes.Array(nout)))
    set_opt(b, opt, batch)
    b.set_epochs(epochs, allowed_set=[1, epochs])
    spec = b.spec
    (spec.neuralNetworkClassifier if classifier else spec.neuralNetworkRegressor).updateParams.shuffle.defaultValue = False

    xs = [rng.normal(0, 1, nin) for _ in range(n_samples)]
    fnum = {"RELU": "relu", "SIGMOID": "sigmoid", "TANH": "tanh"}[act]
    layers = [dict(type="dense", name="fc1", W=W1.astype(np.float64), b=b1.astype(np.float64), updatable=both_updatable),
              dict(type="act", f=fnum),
              dict(type="dense", name="fc2", W=W2.astype(np.float64), b=b2.astype(np.float64), updatable=True)]
    rows = []
    if classifier:
        layers.append(dict(type="softmax"))
        ts = [int(rng.integers(0, nout)) for _ in range(n_samples)]
        samples = list(zip(xs, ts))
        for x, t in samples:
            rows.append({"x": x.astype(np.float32).tolist(), "label": labels[t]})
    else:
        ts = [rng.normal(0, 1, nout) for _ in range(n_samples)]
        samples = list(zip(xs, ts))
        for x, t in samples:
            rows.append({"x": x.astype(np.float32).tolist(), "y_true": t.astype(np.float32).tolist()})
    # the reference sees exactly the float32 values written to the JSON file
    samples = [(np.asarray(r["x"], np.float64),
                t if classifier else np.asarray(r["y_true"], np.float64)) for r, (_, t) in zip(rows, samples)]
    return spec, Net(layers), samples, rows, dict(loss=loss, opt=opt, batch=batch, epochs=epochs)


def build_conv_case(rng, name, loss, opt, batch=3, epochs=3, n_samples=7):
    C, H, W = 2, 6, 6
    co, k = 3, 3
    Wc, bc = f32(rng.normal(0, 0.4, (co, C, k, k))), f32(rng.normal(0, 0.1, co))
    gamma, beta = f32(rng.uniform(0.5, 1.5, co)), f32(rng.normal(0, 0.2, co))
    mean, var = f32(rng.normal(0, 0.2, co)), f32(rng.uniform(0.5, 2, co))
    pt, pb = same_pads(H, k, 1)
    pl, pr = same_pads(W, k, 1)
    # conv (same) -> batchnorm -> act -> pool 2x2/2 -> flatten -> innerProduct
    ph, pw = (H - 2) // 2 + 1, (W - 2) // 2 + 1
    nflat = co * ph * pw
    nout = 3
    Wd, bd = f32(rng.normal(0, 0.3, (nout, nflat))), f32(rng.normal(0, 0.1, nout))
    classifier = loss == "ce"
    pool_kind = "max" if classifier else "average"
    act = "RELU" if classifier else "SIGMOID"
    labels = [10, 20, 30]
    b = NeuralNetworkBuilder([("image", datatypes.Array(C, H, W))],
                             [("y", None)] if classifier else [("y", datatypes.Array(nout))],
                             mode="classifier" if classifier else "regressor")
    b.add_convolution("conv1", C, co, k, k, 1, 1, "same", 1, Wc.transpose(2, 3, 1, 0), bc, True,
                      input_name="image", output_name="c1")
    b.add_batchnorm("bn1", co, gamma, beta, mean, var, input_name="c1", output_name="n1", epsilon=1e-3)
    b.add_activation("act1", act, "n1", "a1")
    b.add_pooling("pool1", 2, 2, 2, 2, pool_kind.upper(), "VALID", "a1", "p1")
    b.add_flatten("flat", 0, "p1", "f1")
    b.add_inner_product("fc", Wd, bd, nflat, nout, True, "f1", "logits" if classifier else "y")
    if classifier:
        b.add_softmax("softmax", "logits", "y")
        b.set_class_labels(labels, predicted_feature_name="label", prediction_blob="y")
    b.make_updatable(["conv1", "fc"])
    if classifier:
        b.set_categorical_cross_entropy_loss("loss", input="y")
    else:
        b.set_mean_squared_error_loss("loss", input_feature=("y", datatypes.Array(nout)))
    set_opt(b, opt, batch)
    b.set_epochs(epochs, allowed_set=[1, epochs])
    spec = b.spec
    (spec.neuralNetworkClassifier if classifier else spec.neuralNetworkRegressor).updateParams.shuffle.defaultValue = False

    layers = [dict(type="conv", name="conv1", W=Wc.astype(np.float64), b=bc.astype(np.float64), stride=(1, 1),
                   pads=(pt, pb, pl, pr), updatable=True),
              dict(type="bn", gamma=gamma.astype(np.float64), beta=beta.astype(np.float64), mean=mean.astype(np.float64),
                   var=var.astype(np.float64), eps=np.float64(np.float32(1e-3))),
              dict(type="act", f="relu" if classifier else "sigmoid"),
              dict(type="pool", k=(2, 2), s=(2, 2), kind=pool_kind),
              dict(type="flatten"),
              dict(type="dense", name="fc", W=Wd.astype(np.float64), b=bd.astype(np.float64), updatable=True)]
    rows, samples = [], []
    for _ in range(n_samples):
        x = f32(rng.normal(0, 1, (C, H, W)))
        if classifier:
            t = int(rng.integers(0, nout))
            rows.append({"image": x.tolist(), "label": labels[t]})
            samples.append((x.astype(np.float64), t))
        else:
            t = f32(rng.normal(0, 0.5, nout))
            rows.append({"image": x.tolist(), "y_true": t.tolist()})
            samples.append((x.astype(np.float64), t.astype(np.float64)))
    if classifier:
        layers.append(dict(type="softmax"))
    return spec, Net(layers), samples, rows, dict(loss=loss, opt=opt, batch=batch, epochs=epochs)


def set_opt(b, opt, batch):
    if opt["kind"] == "sgd":
        p = SgdParams(lr=opt["lr"], batch=batch, momentum=opt["momentum"])
        b.set_sgd_optimizer(p)
    else:
        p = AdamParams(lr=opt["lr"], batch=batch, beta1=opt["beta1"], beta2=opt["beta2"], eps=opt["eps"])
        b.set_adam_optimizer(p)


SGD = dict(kind="sgd", lr=0.1, momentum=0.0)
SGD_M = dict(kind="sgd", lr=0.05, momentum=0.9)
ADAM = dict(kind="adam", lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8)


def cases(rng):
    yield "dense_ce_sgd", build_dense_case(rng, "dense_ce_sgd", "ce", SGD, "RELU", both_updatable=False)
    yield "dense_ce_sgd_momentum", build_dense_case(rng, "dense_ce_sgd_momentum", "ce", SGD_M, "TANH", both_updatable=True)
    yield "dense_ce_adam", build_dense_case(rng, "dense_ce_adam", "ce", ADAM, "SIGMOID", both_updatable=True)
    yield "dense_mse_sgd_momentum", build_dense_case(rng, "dense_mse_sgd_momentum", "mse", SGD_M, "RELU", both_updatable=True)
    yield "dense_mse_adam", build_dense_case(rng, "dense_mse_adam", "mse", ADAM, "TANH", both_updatable=True, batch=5)
    yield "conv_ce_adam", build_conv_case(rng, "conv_ce_adam", "ce", ADAM)
    yield "conv_ce_sgd", build_conv_case(rng, "conv_ce_sgd", "ce", dict(SGD, lr=0.02))
    yield "conv_mse_sgd_momentum", build_conv_case(rng, "conv_mse_sgd_momentum", "mse", SGD_M)


def main():
    rng = np.random.default_rng(1616)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    index = []
    for name, (spec, net, samples, rows, cfg) in cases(rng):
        d = os.path.join(OUT, name)
        os.makedirs(d)
        ct.utils.save_spec(spec, os.path.join(d, "model.mlmodel"))
        with open(os.path.join(d, "examples.json"), "w") as f:
            json.dump(rows, f)
        hist = train(net, samples, cfg["loss"], cfg["opt"], cfg["epochs"], cfg["batch"])
        case = {"name": name, "loss": cfg["loss"], "optimizer": cfg["opt"], "miniBatchSize": cfg["batch"],
                "epochs": cfg["epochs"], "samples": len(samples), "epochLoss": hist["loss"],
                "afterEpoch1": hist["after1"], "afterLastEpoch": hist["final"]}
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        index.append(name)
        print(f"{name}: losses {['%.5f' % l for l in hist['loss']]}")
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump({"generator": "Scripts/make_update_fixtures.py", "coremltools": ct.__version__, "cases": index}, f, indent=1)


if __name__ == "__main__":
    main()


# --------------------------------------------------------------------------------------------
# Tutorial-style pipeline: a small embedding network → an empty updatable kNN classifier
# (coremltools' "updatable tiny drawing classifier" layout). The examples teach it three new
# labels; queries.json holds held-out points with the label they lie closest to.

def make_pipeline_knn(rng):
    from coremltools.models.nearest_neighbors import KNearestNeighborsClassifierBuilder
    from coremltools.models.pipeline import PipelineClassifier
    nin, nemb = 4, 3
    W = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]], dtype=np.float32)
    b = np.zeros(nemb, np.float32)
    nn = NeuralNetworkBuilder([("features", datatypes.Array(nin))], [("embedding", datatypes.Array(nemb))])
    nn.add_inner_product("embed", W, b, nin, nemb, True, "features", "embedding")
    knn = KNearestNeighborsClassifierBuilder(input_name="embedding", output_name="label", number_of_dimensions=nemb,
                                             default_class_label="unknown", k=3, weighting_scheme="uniform",
                                             index_type="linear")
    knn.author = "mlconv fixtures"
    pipe = PipelineClassifier([("features", datatypes.Array(nin))], ["unknown"],
                              output_features=[("label", datatypes.String())],
                              training_features=[("features", datatypes.Array(nin)), ("label", datatypes.String())])
    pipe.add_model(nn.spec)
    pipe.add_model(knn.spec)
    pipe.make_updatable()
    centres = {"circle": [3, 0, 0, 0], "square": [0, 3, 0, 0], "star": [0, 0, 2, 1]}
    rows, queries = [], []
    for label, c in centres.items():
        for _ in range(4):
            rows.append({"features": (np.asarray(c) + rng.normal(0, 0.3, nin)).astype(np.float32).tolist(), "label": label})
        queries.append({"features": (np.asarray(c) + rng.normal(0, 0.3, nin)).astype(np.float32).tolist(), "label": label})
    return pipe.spec, rows, queries


def main_pipeline():
    rng = np.random.default_rng(1617)
    spec, rows, queries = make_pipeline_knn(rng)
    d = os.path.join(OUT, "pipeline_knn")
    os.makedirs(d, exist_ok=True)
    ct.utils.save_spec(spec, os.path.join(d, "model.mlmodel"))
    with open(os.path.join(d, "examples.json"), "w") as f:
        json.dump(rows, f)
    with open(os.path.join(d, "queries.json"), "w") as f:
        json.dump(queries, f)
    print("pipeline_knn: %d examples, %d queries" % (len(rows), len(queries)))


# --------------------------------------------------------------------------------------------
# Image-folder training data (`mlconv update --training-data DIR`, one sub-folder per label as
# Create ML lays out images): a 4×4 grayscale image classifier (image → flatten → updatable
# innerProduct → softmax, cross-entropy, SGD, shuffle off). images.json holds each label's
# pixels (row-major, 0–255); the Swift test writes them as PNG files into label folders. The
# CLI reads label folders and files in sorted order, so the reference trains on the examples
# sorted by label, then by file name (00.png, 01.png, …), with pixels scaled by 1/255 as the
# model's image preprocessing says.

def main_image():
    rng = np.random.default_rng(1618)
    labels = ["circle", "cross", "line"]
    per_label, h, w, nout = 3, 4, 4, 3
    W = f32(rng.normal(0, 0.3, (nout, h * w)))
    bvec = f32(rng.normal(0, 0.1, nout))
    b = NeuralNetworkBuilder([("image", datatypes.Array(1, h, w))], [("probs", None)], mode="classifier")
    b.add_flatten("flatten", 0, "image", "flat")
    b.add_inner_product("fc", W, bvec, h * w, nout, True, "flat", "logits")
    b.add_softmax("softmax", "logits", "probs")
    b.set_class_labels(labels, predicted_feature_name="label", prediction_blob="probs")
    b.set_pre_processing_parameters(image_input_names=["image"], is_bgr=False, image_scale=1 / 255.0)
    b.make_updatable(["fc"])
    b.set_categorical_cross_entropy_loss("loss", input="probs")
    set_opt(b, SGD, 2)
    b.set_epochs(2, allowed_set=[1, 2])
    spec = b.spec
    spec.neuralNetworkClassifier.updateParams.shuffle.defaultValue = False
    # make the input a grayscale image feature
    inp = spec.description.input[0]
    inp.type.imageType.width = w
    inp.type.imageType.height = h
    inp.type.imageType.colorSpace = ct.proto.FeatureTypes_pb2.ImageFeatureType.GRAYSCALE
    images = {lab: [rng.integers(0, 256, h * w).tolist() for _ in range(per_label)] for lab in labels}
    samples = []
    for li, lab in enumerate(sorted(labels)):
        for px in images[lab]:
            x = np.asarray(px, np.float64).reshape(1, h, w) * np.float64(np.float32(1 / 255.0))
            samples.append((x, labels.index(lab)))
    net = Net([dict(type="flatten"), dict(type="dense", name="fc", W=W.astype(np.float64), b=bvec.astype(np.float64), updatable=True),
               dict(type="softmax")])
    hist = train(net, samples, "ce", SGD, 2, 2)
    d = os.path.join(OUT, "image_folder_dense_ce_sgd")
    os.makedirs(d, exist_ok=True)
    ct.utils.save_spec(spec, os.path.join(d, "model.mlmodel"))
    with open(os.path.join(d, "images.json"), "w") as f:
        json.dump(images, f)
    case = {"name": "image_folder_dense_ce_sgd", "loss": "ce", "optimizer": SGD, "miniBatchSize": 2, "epochs": 2,
            "samples": len(samples), "epochLoss": hist["loss"], "afterEpoch1": hist["after1"], "afterLastEpoch": hist["final"],
            "notes": "examples in sorted label-folder then file order; pixels × float32(1/255)"}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    print("image_folder_dense_ce_sgd: losses", ["%.5f" % l for l in hist["loss"]])


# --------------------------------------------------------------------------------------------
# Repair cases (`mlconv update --add-loss`, NetworkUpdateRepair): updatable networks written
# WITHOUT a loss layer (make_updatable, optimizer and epochs, no set_*_loss; specification
# version 1 as in the corpus' archdanny model). Each folder holds
#     model.mlmodel        the model without a loss layer (Core ML refuses to update it)
#     coremltools.mlmodel  the same network with the loss coremltools' builder adds
#                          (set_categorical_cross_entropy_loss / set_mean_squared_error_loss):
#                          what the repair must produce (loss layer, trainingInput, version 4)
#     examples.json, case.json   training rows and the NumPy reference of ONE epoch (`train`)

def build_repair_case(rng, loss):
    nin, nh, nout = 4, 5, 3
    W1, b1 = f32(rng.normal(0, 0.6, (nh, nin))), f32(rng.normal(0, 0.1, nh))
    W2, b2 = f32(rng.normal(0, 0.6, (nout, nh))), f32(rng.normal(0, 0.1, nout))
    labels = ["zero", "one", "two"]
    classifier = loss == "ce"
    opt = ADAM if classifier else dict(SGD_M, lr=0.05)
    batch = 4

    def build(with_loss):
        b = NeuralNetworkBuilder([("x", datatypes.Array(nin))],
                                 [("probs", None)] if classifier else [("y", datatypes.Array(nout))],
                                 mode="classifier" if classifier else "regressor")
        b.add_inner_product("fc1", W1, b1, nin, nh, True, "x", "h1")
        b.add_activation("act1", "RELU", "h1", "a1")
        b.add_inner_product("fc2", W2, b2, nh, nout, True, "a1", "logits" if classifier else "y")
        if classifier:
            b.add_softmax("softmax", "logits", "probs")
            b.set_class_labels(labels, predicted_feature_name="digit", prediction_blob="probs")
        b.make_updatable(["fc1", "fc2"])
        if with_loss:
            if classifier:
                b.set_categorical_cross_entropy_loss("lossLayer", input="probs")
            else:
                b.set_mean_squared_error_loss("lossLayer", input_feature=("y", datatypes.Array(nout)))
        set_opt(b, opt, batch)
        b.set_epochs(1, allowed_set=[1, 2])
        spec = b.spec
        nnspec = spec.neuralNetworkClassifier if classifier else spec.neuralNetworkRegressor
        nnspec.updateParams.shuffle.defaultValue = False
        if not with_loss:
            spec.specificationVersion = 1
        return spec

    n_samples = 9
    xs = [rng.normal(0, 1, nin).astype(np.float32) for _ in range(n_samples)]
    layers = [dict(type="dense", name="fc1", W=W1.astype(np.float64), b=b1.astype(np.float64), updatable=True),
              dict(type="act", f="relu"),
              dict(type="dense", name="fc2", W=W2.astype(np.float64), b=b2.astype(np.float64), updatable=True)]
    rows, samples = [], []
    if classifier:
        layers.append(dict(type="softmax"))
        for x in xs:
            t = int(rng.integers(0, nout))
            rows.append({"x": x.tolist(), "digit": labels[t]})
            samples.append((x.astype(np.float64), t))
    else:
        for x in xs:
            t = rng.normal(0, 1, nout).astype(np.float32)
            rows.append({"x": x.tolist(), "y_true": t.tolist()})
            samples.append((x.astype(np.float64), t.astype(np.float64)))
    hist = train(Net(layers), samples, loss, opt, 1, batch)
    case = {"name": f"repair_dense_{loss}", "loss": loss, "optimizer": opt, "miniBatchSize": batch, "epochs": 1,
            "samples": n_samples, "epochLoss": hist["loss"], "afterEpoch1": hist["after1"], "afterLastEpoch": hist["final"],
            "notes": "model.mlmodel has no loss layer; the reference trains with the loss coremltools.mlmodel declares"}
    return build(False), build(True), rows, case


def main_repair():
    rng = np.random.default_rng(1619)
    for loss in ("ce", "mse"):
        spec, reference, rows, case = build_repair_case(rng, loss)
        d = os.path.join(OUT, case["name"])
        os.makedirs(d, exist_ok=True)
        ct.utils.save_spec(spec, os.path.join(d, "model.mlmodel"))
        ct.utils.save_spec(reference, os.path.join(d, "coremltools.mlmodel"))
        with open(os.path.join(d, "examples.json"), "w") as f:
            json.dump(rows, f)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        print(case["name"] + ": loss", ["%.5f" % l for l in case["epochLoss"]])


if __name__ == "__main__":
    main_pipeline()
    main_image()
    main_repair()
