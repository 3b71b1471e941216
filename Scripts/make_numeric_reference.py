#!/usr/bin/env python3
"""Reference outputs for mlconv's numeric classical models (Tests/MLPredictionTests/NumericModelTests).

Writes Fixtures/numeric-reference/cases.json: hand-built parameters (GLMs, tree ensembles, kNN)
with outputs computed here by NumPy from the formulas of Core ML's .proto comments, and SVMs
fitted with scikit-learn (LibSVM) whose parameters are written the way coremltools 7.2's
converters/sklearn/_SVC.py and _SVR.py write them, with scikit-learn's own outputs (or, where
Core ML's rule differs from scikit-learn's — binary probabilities, inverse-distance kNN — the
rule evaluated here in NumPy).

Run with the coremltools venv (scikit-learn 1.5.1):  $(Scripts/coremltools-env) Scripts/make_numeric_reference.py
"""
import json
import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "numeric-reference", "cases.json")
rng = np.random.RandomState(17)
cases = []


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def probit(z):
    return np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in np.ravel(z)]).reshape(np.shape(z))


def softmax(v):
    e = np.exp(v - np.max(v))
    return e / e.sum()


def num(v):
    """JSON number; NaN as the string "nan"."""
    v = float(v)
    return "nan" if math.isnan(v) else v


# ---------------------------------------------------------------- GLM regressor
X = rng.normal(size=(6, 3))
W = rng.normal(size=(2, 3))
b = rng.normal(size=2)
for transform, f in [("none", lambda z: z), ("logit", sigmoid), ("probit", probit)]:
    z = X @ W.T + b
    cases.append(dict(name=f"glmRegressor-{transform}", kind="glmRegressor",
                      params=dict(weights=W.tolist(), offsets=b.tolist(), transform=transform),
                      inputs=X.tolist(), expected=[dict(values=list(map(float, r))) for r in f(z)]))

# ---------------------------------------------------------------- GLM classifier
def glm_classifier(name, weights, offsets, transform, encoding, labels):
    weights, offsets = np.array(weights), np.array(offsets)
    link = sigmoid if transform == "logit" else probit
    exp = []
    for x in X:
        z = weights @ x + offsets
        k = len(labels)
        if k == 2:
            p1 = float(link(z[0]))
            p = np.array([1 - p1, p1])
        elif encoding == "oneVsRest":
            p = link(z)
            p = p / p.sum()
        else:
            p = softmax(np.concatenate([[0.0], z]))
        exp.append(dict(label=labels[int(np.argmax(p))], probs={str(l): float(v) for l, v in zip(labels, p)}))
    cases.append(dict(name=name, kind="glmClassifier",
                      params=dict(weights=weights.tolist(), offsets=offsets.tolist(), transform=transform,
                                  encoding=encoding, labels=labels),
                      inputs=X.tolist(), expected=exp))


glm_classifier("glmClassifier-binary-logit", W[:1], b[:1], "logit", "referenceClass", ["no", "yes"])
glm_classifier("glmClassifier-binary-probit", W[:1], b[:1], "probit", "oneVsRest", [3, 7])
W3 = rng.normal(size=(3, 3))
glm_classifier("glmClassifier-ovr-3", W3, rng.normal(size=3), "logit", "oneVsRest", ["a", "b", "c"])
glm_classifier("glmClassifier-reference-3", W3[:2], rng.normal(size=2), "logit", "referenceClass", [10, 20, 30])

# ---------------------------------------------------------------- tree ensembles
# node: [treeId, nodeId, behavior, feature, threshold, trueChild, falseChild, missingTrue, [[index, value]...]]
MODES = ["lessThanEqual", "lessThan", "greaterThanEqual", "greaterThan", "equal", "notEqual", "leaf"]


def walk(nodes, tree, x):
    byid = {(n[0], n[1]): n for n in nodes}
    children = {c for n in nodes if n[0] == tree and n[2] != "leaf" for c in (n[5], n[6])}
    root = [n for n in nodes if n[0] == tree and n[1] not in children][0]
    n = root
    while n[2] != "leaf":
        v, t = x[n[3]], n[4]
        if math.isnan(v):
            go = n[7]
        else:
            go = {"lessThanEqual": v <= t, "lessThan": v < t, "greaterThanEqual": v >= t,
                  "greaterThan": v > t, "equal": v == t, "notEqual": v != t}[n[2]]
        n = byid[(tree, n[5] if go else n[6])]
    return n[8]


def tree_case(name, nodes, dims, base, transform, labels, inputs, classifier):
    trees = sorted({n[0] for n in nodes})
    exp = []
    for x in inputs:
        s = np.array(base if base else [0.0] * dims, dtype=float)
        for t in trees:
            for i, v in walk(nodes, t, x):
                s[i] += v
        if transform == "softmax":
            s = softmax(s)
        elif transform == "logistic":
            s = sigmoid(s)
        elif transform == "softmaxWithZeroClassReference":
            if dims == 1:
                s = sigmoid(s)
            else:
                s[0] = 0
                s = softmax(s)
        if not classifier:
            exp.append(dict(values=list(map(float, s))))
            continue
        if dims == 1:
            p = [1 - s[0], s[0]]
            label = labels[1] if s[0] >= 0.5 else labels[0]
        else:
            p = list(s)
            label = labels[int(np.argmax(s))]
        exp.append(dict(label=label, probs={str(l): float(v) for l, v in zip(labels, p)}))
    cases.append(dict(name=name, kind="treeEnsembleClassifier" if classifier else "treeEnsembleRegressor",
                      params=dict(nodes=[n[:8] + [[[i, v] for i, v in n[8]]] for n in nodes], dims=dims, base=base,
                                  transform=transform, labels=labels),
                      inputs=[[num(v) for v in x] for x in inputs], expected=exp))


# Tree 5 (declared first, ids out of order) uses every branch mode and both missing-value directions.
T = [
    [5, 40, "leaf", 0, 0, 0, 0, False, [(0, 0.5), (1, -1.0)]],
    [5, 1, "lessThanEqual", 0, 0.25, 2, 3, True, []],
    [5, 2, "lessThan", 1, -0.5, 4, 5, False, []],
    [5, 3, "greaterThanEqual", 2, 1.0, 6, 7, False, []],
    [5, 4, "leaf", 0, 0, 0, 0, False, [(0, 1.0)]],
    [5, 5, "greaterThan", 2, 0.0, 8, 9, True, []],
    [5, 6, "leaf", 0, 0, 0, 0, False, [(1, 2.0)]],
    [5, 7, "equal", 0, 3.0, 40, 11, False, []],
    [5, 8, "leaf", 0, 0, 0, 0, False, [(0, -0.75), (1, 0.25)]],
    [5, 9, "notEqual", 1, 2.0, 12, 13, False, []],
    [5, 11, "leaf", 0, 0, 0, 0, False, [(1, -0.125)]],
    [5, 12, "leaf", 0, 0, 0, 0, False, [(0, 0.375)]],
    [5, 13, "leaf", 0, 0, 0, 0, False, [(0, -2.0), (1, 1.5)]],
    [0, 0, "lessThanEqual", 1, 0.0, 1, 2, False, []],
    [0, 1, "leaf", 0, 0, 0, 0, False, [(0, 0.1), (1, 0.2)]],
    [0, 2, "leaf", 0, 0, 0, 0, False, [(1, -0.3)]],
]
nan = float("nan")
TX = [[0.1, -1.0, 0.0], [0.1, 0.0, 0.5], [0.1, 2.0, -1.0], [0.1, 3.0, -1.0], [1.0, 0.0, 2.0],
      [3.0, 0.0, 0.5], [2.0, 1.0, 0.5], [nan, 0.0, 0.5], [0.1, nan, 1.0], [0.1, 0.0, nan], [0.25, -0.5, 0.0],
      [0.1, 1.0, 0.0]]
TX += [list(r) for r in rng.normal(size=(8, 3))]
tree_case("tree-regressor-2d", T, 2, [0.5, -0.25], "none", None, TX, False)
tree_case("tree-regressor-logistic", T, 2, [], "logistic", None, TX, False)
tree_case("tree-classifier-softmax", T, 2, [0.1, 0.0], "softmax", ["neg", "pos"], TX, True)
tree_case("tree-classifier-zeroref", T, 2, [0.0, 0.3], "softmaxWithZeroClassReference", [4, 9], TX, True)
T1 = [[t, i, m, f, th, tc, fc, mt, [(0, v) for _, v in ev[:1]]] for t, i, m, f, th, tc, fc, mt, ev in T]
tree_case("tree-classifier-binary-logistic", T1, 1, [-0.2], "logistic", ["a", "b"], TX, True)
tree_case("tree-classifier-binary-zeroref", T1, 1, [0.1], "softmaxWithZeroClassReference", [0, 1], TX, True)
tree_case("tree-classifier-binary-raw", [[0, 0, "lessThan", 0, 0.0, 1, 2, False, []],
                                         [0, 1, "leaf", 0, 0, 0, 0, False, [(0, 0.5)]],
                                         [0, 2, "leaf", 0, 0, 0, 0, False, [(0, 0.25)]]],
          1, [], "none", ["lo", "hi"], [[-1.0, 0, 0], [1.0, 0, 0]], True)
T3 = [[t, i, m, f, th, tc, fc, mt, [(j % 3, v * (j + 1)) for j, (_, v) in enumerate(ev)]] for t, i, m, f, th, tc, fc, mt, ev in T]
tree_case("tree-classifier-3-none", T3, 3, [0.2, 0.1, 0.0], "none", [1, 2, 3], TX, True)

# ---------------------------------------------------------------- SVMs (scikit-learn / LibSVM)
try:
    from sklearn.datasets import load_iris
    from sklearn.svm import SVC, SVR
    from sklearn.neighbors import KNeighborsClassifier
except ImportError:
    raise SystemExit("run with the coremltools venv: $(Scripts/coremltools-env) Scripts/make_numeric_reference.py")

iris = load_iris()
IX = iris.data[::3]
IY = iris.target[::3]
QX = np.vstack([iris.data[1::25], rng.normal(loc=4, scale=2, size=(4, 4))])
KERNELS = [("linear", {}), ("rbf", dict(gamma=0.3)), ("poly", dict(gamma=0.2, coef0=1.0, degree=3)),
           ("sigmoid", dict(gamma=0.05, coef0=-1.0))]


def kernel_json(m):
    k = m.kernel
    if k == "linear":
        return dict(type="linear")
    if k == "rbf":
        return dict(type="rbf", gamma=float(m._gamma))
    if k == "poly":
        return dict(type="poly", gamma=float(m._gamma), c=float(m.coef0), degree=int(m.degree))
    return dict(type="sigmoid", gamma=float(m._gamma), c=float(m.coef0))


def pairwise_binary(m, x):
    d = m.decision_function(x.reshape(1, -1))[0]
    # scikit-learn's binary decision_function is −(LibSVM decision); LibSVM's r_01 uses the latter.
    f = -d * m.probA_[0] + m.probB_[0]
    r = 1 / (1 + math.exp(f))
    r = min(max(r, 1e-7), 1 - 1e-7)
    return [r, 1 - r]


for kname, kw in KERNELS:
    for classes, labels in [(3, ["setosa", "versicolor", "virginica"]), (2, [0, 1])]:
        mask = IY < classes
        y = IY[mask] if classes == 3 else (IY[mask] == 1).astype(int)
        for prob in ([False, True] if kname in ("rbf", "linear") else [False]):
            m = SVC(kernel=kname, C=1.0, probability=prob, random_state=0, **kw).fit(IX[mask], y)
            rho = [float(v) if classes == 2 else float(-v) for v in m.intercept_]
            params = dict(kernel=kernel_json(m), perClass=[int(v) for v in m.n_support_],
                          vectors=m.support_vectors_.tolist(), coefficients=m._dual_coef_.tolist(), rho=rho,
                          probA=m.probA_.tolist() if prob else [], probB=m.probB_.tolist() if prob else [],
                          labels=labels)
            exp = []
            for x in QX:
                if prob and classes == 3:
                    p = m.predict_proba(x.reshape(1, -1))[0]
                    exp.append(dict(label=labels[int(np.argmax(p))], probs={str(l): float(v) for l, v in zip(labels, p)}))
                elif prob:
                    p = pairwise_binary(m, x)
                    exp.append(dict(label=labels[int(np.argmax(p))], probs={str(l): float(v) for l, v in zip(labels, p)}))
                else:
                    exp.append(dict(label=labels[int(m.predict(x.reshape(1, -1))[0])]))
            name = f"svc-{kname}-{classes}{'-prob' if prob else ''}"
            cases.append(dict(name=name, kind="supportVectorClassifier", params=params, inputs=QX.tolist(), expected=exp))
            if kname == "rbf" and not prob and classes == 3:
                sparse = dict(params)
                sparse["sparse"] = True
                cases.append(dict(name=name + "-sparse", kind="supportVectorClassifier", params=sparse,
                                  inputs=QX.tolist(), expected=exp))
    r = SVR(kernel=kname, C=2.0, epsilon=0.05, **kw).fit(IX[:, :3], IX[:, 3])
    cases.append(dict(name=f"svr-{kname}", kind="supportVectorRegressor",
                      params=dict(kernel=kernel_json(r), vectors=r.support_vectors_.tolist(),
                                  coefficients=r._dual_coef_[0].tolist(), rho=float(-r.intercept_[0])),
                      inputs=QX[:, :3].tolist(), expected=[dict(values=[float(v)]) for v in r.predict(QX[:, :3])]))

# ---------------------------------------------------------------- kNN
KX = np.round(rng.normal(size=(20, 2)) * 4) / 4  # quarter steps: exact float32 samples, some ties
KY = rng.randint(0, 3, size=20)
KQ = np.vstack([KX[:3], np.round(rng.normal(size=(8, 2)) * 4) / 4 + 0.125])
for k in (1, 3, 5):
    m = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(KX, KY)
    exp = []
    for q in KQ:
        d = ((KX - q) ** 2).sum(axis=1)
        order = sorted(range(len(KX)), key=lambda i: (d[i], i))[:k]
        votes = np.bincount(KY[order], minlength=3).astype(float)
        # scikit-learn's own label (uniform votes, ties → smallest label) must agree with the rule here.
        assert int(m.predict(q.reshape(1, -1))[0]) == int(np.argmax(votes)) or k == 1
        labels = sorted(set(KY.tolist()))
        exp.append(dict(label=int(np.argmax(votes)), probs={str(l): float(votes[l] / votes.sum()) for l in labels}))
    cases.append(dict(name=f"knn-uniform-{k}", kind="kNearestNeighborsClassifier",
                      params=dict(samples=KX.tolist(), labels=KY.tolist(), k=k, weighting="uniform", index="linear"),
                      inputs=KQ.tolist(), expected=exp))
SL = ["x", "y", "z"]
for k in (2, 4):
    exp = []
    for q in KQ:
        d = ((KX - q) ** 2).sum(axis=1)
        order = sorted(range(len(KX)), key=lambda i: (d[i], i))[:k]
        if any(d[i] == 0 for i in order):
            w = {i: (1.0 if d[i] == 0 else 0.0) for i in order}
        else:
            w = {i: 1 / d[i] for i in order}
        votes = np.zeros(3)
        for i in order:
            votes[KY[i]] += w[i]
        exp.append(dict(label=SL[int(np.argmax(votes))], probs={SL[l]: float(votes[l] / votes.sum()) for l in range(3)}))
    cases.append(dict(name=f"knn-inverse-{k}", kind="kNearestNeighborsClassifier",
                      params=dict(samples=KX.tolist(), labels=[SL[v] for v in KY], k=k, weighting="inverseDistance",
                                  index="kdTree"),
                      inputs=KQ.tolist(), expected=exp))

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump(dict(generator="Scripts/make_numeric_reference.py", cases=cases), f, indent=1)
print(f"{len(cases)} cases → {os.path.relpath(OUT, ROOT)}")
