"""Reference fixtures for the classical (non-neural) Core ML model types.

Run (from the repository root):

    PY=$(Scripts/coremltools-env)      # venv: coremltools 7.2, protobuf 3.20.3, numpy<2, scikit-learn 1.5.1
    $PY Scripts/make_classical_fixtures.py [--only CASE ...]

It (re)writes Fixtures/classical/<case>/ for every case below and Fixtures/classical/README.md:

  model.mlmodel  the Core ML model: made by coremltools.converters.sklearn.convert where a
                 converter exists, else by a coremltools builder, else by filling Model_pb2
                 directly (types with no builder).
  inputs.json    a JSON list of rows {input feature name: value}.
  expected.json  a JSON list of rows {output feature name: value} that Core ML returns:
                 scikit-learn's predict / predict_proba / transform, except where Core ML's
                 semantics (the comments of Apple's .proto files) differ from scikit-learn's
                 for the converted model; then the value comes from a NumPy reference of the
                 proto's formula and case.json says so.
  case.json      model_type, source, tolerance, notes, and the model description (feature
                 names and types read back from the saved model).

JSON encoding of feature values (the Swift side reads them using the model description):
  double / int64          a JSON number
  string                  a JSON string
  multiArray              nested lists in the array's shape (row-major)
  dictionary              a JSON object; int64 keys are written as decimal strings
  sequence                a JSON list
  NaN (double, or an element of a double multiArray)   the string "NaN"

Versions: coremltools 7.2 with scikit-learn 1.5.1. coremltools 7.2 disables its scikit-learn
converters for scikit-learn > 1.1.2, so this script imports coremltools while scikit-learn
reports 1.1.2 and restores the real version right after; a few fitted models get attributes
that older scikit-learn had (e.g. ``n_features_``) so the 7.2 converters can read them. These
shims only feed the converters: every expected number is computed by scikit-learn 1.5.1 itself
(or by the proto-formula reference where Core ML differs).
"""

import argparse
import json
import math
import os
import shutil
import sys
import warnings

import numpy as np
import sklearn

_REAL_SKLEARN_VERSION = sklearn.__version__
sklearn.__version__ = "1.1.2"  # see the docstring: lets coremltools 7.2 enable its sklearn converters
try:
    import coremltools as ct
    from coremltools.converters import sklearn as ct_sklearn
    from coremltools.models import datatypes
    from coremltools.models.nearest_neighbors import KNearestNeighborsClassifierBuilder
    from coremltools.models.neural_network import NeuralNetworkBuilder
    from coremltools.models.pipeline import Pipeline as CTPipeline
    from coremltools.models.array_feature_extractor import create_array_feature_extractor
    from coremltools.models.feature_vectorizer import create_feature_vectorizer
    from coremltools.proto import Model_pb2, FeatureTypes_pb2, OneHotEncoder_pb2
finally:
    sklearn.__version__ = _REAL_SKLEARN_VERSION

from sklearn import datasets
from sklearn.linear_model import LinearRegression, Ridge, LogisticRegression
from sklearn.svm import LinearSVC, SVR, SVC, NuSVC, NuSVR
from sklearn.tree import DecisionTreeRegressor, DecisionTreeClassifier
from sklearn.ensemble import (RandomForestRegressor, RandomForestClassifier,
                              GradientBoostingRegressor, GradientBoostingClassifier)
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import OneHotEncoder, Normalizer, StandardScaler
from sklearn.feature_extraction import DictVectorizer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline as SKPipeline

warnings.filterwarnings("ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "classical")
VERSIONS = "coremltools %s, scikit-learn %s, numpy %s" % (ct.__version__, _REAL_SKLEARN_VERSION, np.__version__)

TOL_EXACT = {"relative": 1e-6, "absolute": 1e-9}     # GLM, trees, transformers
TOL_PROB = {"relative": 1e-4, "absolute": 1e-6}      # SVM, probabilities, float32 paths

CASES = {}


def case(fn):
    CASES[fn.__name__[len("case_"):]] = fn
    return fn


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------

def jsonable(v):
    """Feature value → JSON value (see the docstring for the encoding)."""
    if isinstance(v, dict):
        return {str(jsonable_key(k)): jsonable(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return [jsonable(x) for x in v.tolist()] if v.ndim else jsonable(v.item())
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if isinstance(v, (str, np.str_)):
        return str(v)
    raise TypeError("cannot encode %r" % (v,))


def jsonable_key(k):
    if isinstance(k, (np.integer,)):
        return int(k)
    if isinstance(k, (np.str_,)):
        return str(k)
    return k


def describe_type(t):
    kind = t.WhichOneof("Type")
    d = {"kind": kind, "optional": bool(t.isOptional)}
    if kind == "multiArrayType":
        m = t.multiArrayType
        d["dataType"] = FeatureTypes_pb2.ArrayFeatureType.ArrayDataType.Name(m.dataType)
        d["shape"] = list(m.shape)
        sf = m.WhichOneof("ShapeFlexibility")
        if sf == "shapeRange":
            d["shapeRange"] = [[r.lowerBound, r.upperBound] for r in m.shapeRange.sizeRanges]
        elif sf == "enumeratedShapes":
            d["enumeratedShapes"] = [list(s.shape) for s in m.enumeratedShapes.shapes]
    elif kind == "dictionaryType":
        d["keyType"] = t.dictionaryType.WhichOneof("KeyType")
    elif kind == "sequenceType":
        d["elementType"] = t.sequenceType.WhichOneof("Type")
    return d


def describe(spec):
    desc = spec.description
    return {
        "specificationVersion": spec.specificationVersion,
        "inputs": [{"name": f.name, **describe_type(f.type)} for f in desc.input],
        "outputs": [{"name": f.name, **describe_type(f.type)} for f in desc.output],
        "predictedFeatureName": desc.predictedFeatureName,
        "predictedProbabilitiesName": desc.predictedProbabilitiesName,
    }


def model_type(spec):
    return spec.WhichOneof("Type")


def get_spec(m):
    if isinstance(m, Model_pb2.Model):
        return m
    return m.get_spec()


def write_case(name, model, inputs, expected, source, tolerance, notes, extra=None):
    spec = get_spec(model)
    d = os.path.join(OUT, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    path = os.path.join(d, "model.mlmodel")
    ct.utils.save_spec(spec, path)
    # Read back: the saved file must parse and load in coremltools (no Core ML runtime on Linux).
    back = ct.utils.load_spec(path)
    ct.models.MLModel(path, skip_model_load=True)
    assert back.SerializeToString() == spec.SerializeToString(), name
    assert len(inputs) == len(expected), name
    assert 20 <= len(inputs) <= 50, (name, len(inputs))
    in_names = {f.name for f in back.description.input}
    out_names = {f.name for f in back.description.output}
    for r in inputs:
        assert set(r) <= in_names, (name, set(r) - in_names)
    for r in expected:
        assert set(r) <= out_names, (name, set(r) - out_names)
    meta = {
        "model_type": model_type(back),
        "source": source,
        "tolerance": tolerance,
        "notes": notes,
        "versions": VERSIONS,
        "description": describe(back),
    }
    if model_type(back) in ("pipeline", "pipelineClassifier", "pipelineRegressor"):
        meta["stages"] = stage_types(back)
    if extra:
        meta.update(extra)
    for fname, obj in (("inputs.json", inputs), ("expected.json", expected), ("case.json", meta)):
        with open(os.path.join(d, fname), "w") as f:
            json.dump(jsonable(obj) if fname != "case.json" else obj, f, indent=1, sort_keys=False,
                      allow_nan=False)
            f.write("\n")
    size = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
    print("%-40s %-28s %3d rows %7d bytes" % (name, meta["model_type"], len(inputs), size))
    return meta


def stage_types(spec):
    t = model_type(spec)
    if t == "pipeline":
        models = spec.pipeline.models
    elif t == "pipelineClassifier":
        models = spec.pipelineClassifier.pipeline.models
    elif t == "pipelineRegressor":
        models = spec.pipelineRegressor.pipeline.models
    else:
        return t
    return [stage_types(m) if model_type(m).startswith("pipeline") else model_type(m) for m in models]


def proba_dict(classes, row):
    return {jsonable_key(c): float(p) for c, p in zip(classes, row)}


def label(v):
    if isinstance(v, (np.integer, int)):
        return int(v)
    return str(v)


def dyadic(x, step=0.25):
    """Round to multiples of a power-of-two step so tree thresholds (midpoints) are exact in float32."""
    return np.round(np.asarray(x, dtype=np.float64) / step) * step


def iris():
    d = datasets.load_iris()
    return d.data.astype(np.float64), d.target.astype(np.int64), list(d.feature_names)


def regression_data(n=120, seed=0):
    rng = np.random.RandomState(seed)
    X = dyadic(rng.uniform(-2, 2, size=(n, 3)), 0.125)
    y = 1.5 * X[:, 0] - 2.0 * X[:, 1] ** 2 + 0.5 * X[:, 2] + rng.normal(0, 0.1, n)
    return X, y


def tree_thresholds(trees):
    out = []
    for t in trees:
        tr = t.tree_
        for f, th, left in zip(tr.feature, tr.threshold, tr.children_left):
            if left != -1 and np.float32(th) == th:
                out.append((int(f), float(th)))
    return out


def edge_rows(X, thresholds, n, seed):
    """Rows of X with one feature set exactly on a split threshold (float32-exact ones)."""
    rng = np.random.RandomState(seed)
    rows = []
    for i in range(min(n, len(thresholds))):
        f, th = thresholds[rng.randint(len(thresholds))] if i >= len(thresholds) else thresholds[i]
        r = X[rng.randint(len(X))].copy()
        r[f] = th
        rows.append(r)
    return np.array(rows)


def pick(X, n, seed):
    rng = np.random.RandomState(seed)
    return X[rng.choice(len(X), n, replace=False)]


def shim_n_features(m):
    """coremltools 7.2 reads the pre-1.2 attribute n_features_ (now n_features_in_)."""
    for est in [m] + list(np.ravel(getattr(m, "estimators_", []))):
        if hasattr(est, "n_features_in_") and not hasattr(est, "n_features_"):
            try:
                est.n_features_ = est.n_features_in_
            except AttributeError:
                est.__dict__["n_features_"] = est.n_features_in_
    return m


def convert(model, inputs="input", outputs=None):
    m = ct_sklearn.convert(model, inputs, outputs)
    assert m is not None, "coremltools returned no model for %r" % (model,)
    return m


# ----------------------------------------------------------------------------------------------
# glmRegressor / glmClassifier
# ----------------------------------------------------------------------------------------------

@case
def case_glm_regressor_linear():
    X, y = regression_data()
    m = LinearRegression().fit(X, y)
    ml = convert(m, ["x0", "x1", "x2"], "prediction")
    Xt = np.vstack([pick(X, 24, 1), [[0, 0, 0], [1e3, -1e3, 0.5], [-0.0, 2.0, -2.0]]])
    inputs = [{"x0": r[0], "x1": r[1], "x2": r[2]} for r in Xt]
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("glm_regressor_linear", ml, inputs, expected,
                      "sklearn.linear_model.LinearRegression() on a synthetic 3-feature set; converter",
                      TOL_EXACT, "Three double inputs. Core ML: weights·x + offset, same as scikit-learn.")


@case
def case_glm_regressor_ridge():
    X, y = regression_data(seed=3)
    m = Ridge(alpha=2.0).fit(X, y)
    ml = convert(m, "input", "prediction")
    Xt = np.vstack([pick(X, 25, 2), [[0, 0, 0], [5, 5, 5]]])
    inputs = [{"input": r} for r in Xt]
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("glm_regressor_ridge", ml, inputs, expected,
                      "sklearn.linear_model.Ridge(alpha=2.0); converter", TOL_EXACT,
                      "One multiArray input of 3 doubles.")


@case
def case_glm_classifier_logistic_binary():
    X, y, _ = iris()
    X, y = X[y != 2], y[y != 2]
    m = LogisticRegression(C=0.5, multi_class="ovr").fit(X, y)
    ml = convert(m, "input")
    Xt = np.vstack([pick(X, 24, 3), [[5.5, 3.0, 2.5, 0.8], [0, 0, 0, 0]]])
    inputs = [{"input": r} for r in Xt]
    P = m.predict_proba(Xt)
    expected = [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, p)}
                for c, p in zip(m.predict(Xt), P)]
    return write_case("glm_classifier_logistic_binary", ml, inputs, expected,
                      "sklearn.linear_model.LogisticRegression(C=0.5), iris classes 0/1; converter",
                      TOL_EXACT, "Binary: one weight row, Logit transform; p(class 1) = sigmoid(w·x+b), "
                      "p(class 0) = 1 - p(class 1); equals scikit-learn predict_proba.")


@case
def case_glm_classifier_logistic_ovr_3class():
    X, y, _ = iris()
    m = LogisticRegression(C=1.0, multi_class="ovr", max_iter=1000).fit(X, y)
    ml = convert(m, "input")
    Xt = np.vstack([pick(X, 27, 4), [[6.0, 2.8, 4.9, 1.6], [0, 0, 0, 0], [8, 4, 7, 2.5]]])
    inputs = [{"input": r} for r in Xt]
    P = m.predict_proba(Xt)
    expected = [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, p)}
                for c, p in zip(m.predict(Xt), P)]
    return write_case("glm_classifier_logistic_ovr_3class", ml, inputs, expected,
                      "sklearn.linear_model.LogisticRegression(multi_class='ovr'), iris 3 classes; converter",
                      TOL_EXACT, "OneVsRest + Logit: each class gets sigmoid(w_c·x+b_c), then the "
                      "three are divided by their sum (scikit-learn's OvR predict_proba; coremltools' own "
                      "tests compare Core ML with it). A multinomial LogisticRegression (the 1.5 default) "
                      "does not convert: coremltools 7.2 returns no model unless multi_class == 'ovr', and "
                      "GLMClassifier has no softmax encoding.")


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@case
def case_glm_classifier_linear_svc_binary():
    X, y, _ = iris()
    X, y = X[y != 0], y[y != 0]  # versicolor vs virginica: not separable, probabilities in (0,1)
    m = LinearSVC(C=0.5, dual=False).fit(X, y)
    ml = convert(m, "input")
    Xt = np.vstack([pick(X, 26, 5), [[6.0, 2.9, 4.8, 1.6]]])
    inputs = [{"input": r} for r in Xt]
    z = m.decision_function(Xt)
    p1 = _sigmoid(z)
    expected = [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, [1 - p, p])}
                for c, p in zip(m.predict(Xt), p1)]
    return write_case("glm_classifier_linear_svc_binary", ml, inputs, expected,
                      "sklearn.svm.LinearSVC(C=0.5, dual=False), iris classes 1/2; converter (as glmClassifier)",
                      TOL_EXACT,
                      "scikit-learn's LinearSVC has no predict_proba. coremltools converts it to a "
                      "glmClassifier with the Logit transform, so Core ML reports probabilities: "
                      "classProbability is the NumPy reference sigmoid(decision_function) for the second "
                      "class and 1 minus that for the first. classLabel is scikit-learn's predict.",
                      {"reference": "classProbability: NumPy sigmoid of sklearn decision_function"})


@case
def case_glm_classifier_linear_svc_3class():
    X, y, _ = iris()
    m = LinearSVC(C=1.0, dual=False).fit(X, y)
    ml = convert(m, "input")
    Xt = np.vstack([pick(X, 28, 6), [[6.0, 2.9, 4.8, 1.6]]])
    inputs = [{"input": r} for r in Xt]
    s = _sigmoid(m.decision_function(Xt))
    P = s / s.sum(axis=1, keepdims=True)
    expected = [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, p)}
                for c, p in zip(m.predict(Xt), P)]
    return write_case("glm_classifier_linear_svc_3class", ml, inputs, expected,
                      "sklearn.svm.LinearSVC(dual=False), iris 3 classes (one-vs-rest); converter",
                      TOL_EXACT,
                      "scikit-learn's LinearSVC has no probabilities; Core ML's OneVsRest + Logit gives "
                      "sigmoid(decision_c) normalised to sum 1 (NumPy reference from sklearn "
                      "decision_function). classLabel = sklearn predict (argmax of the decision, the same "
                      "as argmax of the normalised sigmoids).",
                      {"reference": "classProbability: NumPy normalised sigmoids of sklearn decision_function"})


# ----------------------------------------------------------------------------------------------
# trees
# ----------------------------------------------------------------------------------------------

def _tree_inputs(X, trees, n_random, n_edge, seed, names=None):
    Xt = np.vstack([pick(X, n_random, seed), edge_rows(X, tree_thresholds(trees), n_edge, seed + 1)])
    if names is None:
        return Xt, [{"input": r} for r in Xt]
    return Xt, [{n: r[i] for i, n in enumerate(names)} for r in Xt]


@case
def case_tree_regressor_decision_tree():
    X, y = regression_data()
    m = shim_n_features(DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y))
    ml = convert(m, ["x0", "x1", "x2"], "prediction")
    Xt, inputs = _tree_inputs(X, [m], 16, 12, 10, ["x0", "x1", "x2"])
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("tree_regressor_decision_tree", ml, inputs, expected,
                      "sklearn.tree.DecisionTreeRegressor(max_depth=4); converter", TOL_EXACT,
                      "BranchOnValueLessThanEqual (x <= threshold → true child = sklearn's left). Inputs "
                      "are multiples of 1/8 so thresholds are exact in float32 (sklearn compares float32 "
                      "inputs); the last 12 rows put one feature exactly on a split threshold.")


@case
def case_tree_regressor_random_forest():
    X, y = regression_data(seed=1)
    m = shim_n_features(RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y))
    ml = convert(m, "input", "prediction")
    Xt, inputs = _tree_inputs(X, m.estimators_, 20, 10, 20)
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("tree_regressor_random_forest", ml, inputs, expected,
                      "sklearn.ensemble.RandomForestRegressor(n_estimators=5, max_depth=3); converter",
                      TOL_EXACT, "Leaf values are pre-scaled by 1/n_estimators; Core ML sums the trees.")


@case
def case_tree_regressor_gradient_boosting():
    X, y = regression_data(seed=2)
    y = y + 10.0  # a clearly non-zero base prediction
    m = shim_n_features(GradientBoostingRegressor(n_estimators=8, max_depth=2, learning_rate=0.3,
                                                  random_state=0).fit(X, y))
    ml = convert(m, "input", "prediction")
    Xt, inputs = _tree_inputs(X, [e for e in m.estimators_.ravel()], 20, 10, 30)
    expected = [{"prediction": v} for v in m.predict(Xt)]
    base = get_spec(ml).treeEnsembleRegressor.treeEnsemble.basePredictionValue
    return write_case("tree_regressor_gradient_boosting", ml, inputs, expected,
                      "sklearn.ensemble.GradientBoostingRegressor(n_estimators=8, max_depth=2, lr=0.3); converter",
                      TOL_EXACT, "basePredictionValue = init_.constant_ (the training mean, %.6f); leaves "
                      "pre-scaled by the learning rate." % list(base)[0])


@case
def case_tree_regressor_missing_values():
    X, y = regression_data(seed=4)
    rng = np.random.RandomState(4)
    Xm = X.copy()
    Xm[rng.rand(*X.shape) < 0.15] = np.nan
    m = shim_n_features(DecisionTreeRegressor(max_depth=4, random_state=0).fit(Xm, y))
    ml = convert(m, ["x0", "x1", "x2"], "prediction")
    spec = get_spec(ml)
    # The 7.2 converter ignores scikit-learn's learned missing-value direction; copy it into
    # missingValueTracksTrueChild (the true child is sklearn's left child).
    go_left = m.tree_.missing_go_to_left
    n_set = 0
    assert model_type(spec) == "pipelineRegressor"  # featureVectorizer → treeEnsembleRegressor
    tree_spec = spec.pipelineRegressor.pipeline.models[-1]
    assert model_type(tree_spec) == "treeEnsembleRegressor"
    for node in tree_spec.treeEnsembleRegressor.treeEnsemble.nodes:
        if node.nodeBehavior != node.LeafNode:
            node.missingValueTracksTrueChild = bool(go_left[node.nodeId])
            n_set += int(node.missingValueTracksTrueChild)
    Xt = np.vstack([pick(X, 14, 40), pick(Xm, 8, 41)])
    nanrows = Xt[:8].copy()
    for i in range(8):
        nanrows[i, i % 3] = np.nan
        if i >= 5:
            nanrows[i, (i + 1) % 3] = np.nan
    Xt = np.vstack([Xt, nanrows, [[np.nan, np.nan, np.nan]]])
    inputs = [{"x0": r[0], "x1": r[1], "x2": r[2]} for r in Xt]
    expected = [{"prediction": v} for v in m.predict(Xt)]
    assert n_set > 0
    return write_case("tree_regressor_missing_values", spec, inputs, expected,
                      "sklearn.tree.DecisionTreeRegressor(max_depth=4) fitted with NaNs; converter + "
                      "missingValueTracksTrueChild set from tree_.missing_go_to_left", TOL_EXACT,
                      "A NaN input is a missing value: it follows the true child when "
                      "missingValueTracksTrueChild is set, else the false child (TreeEnsemble.proto). "
                      "coremltools 7.2 does not copy scikit-learn's learned direction, so the script sets "
                      "the flag on %d branch nodes from missing_go_to_left; with that, Core ML's answer is "
                      "scikit-learn's predict. Without it every NaN would go to the false (right) child." % n_set)


def _classifier_expected(m, Xt, proba=None):
    P = m.predict_proba(Xt) if proba is None else proba
    return [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, p)}
            for c, p in zip(m.predict(Xt), P)]


@case
def case_tree_classifier_decision_tree_binary():
    X, y, _ = iris()
    X = dyadic(X)
    yb = (y == 1).astype(np.int64)
    m = shim_n_features(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, yb))
    ml = convert(m, "input")
    Xt, inputs = _tree_inputs(X, [m], 18, 10, 50)
    P = m.predict_proba(Xt)
    # coremltools writes a binary leaf of exactly 0.5 as 0.5 - 1e-7 (so the tie goes to class 0,
    # as in scikit-learn's argmax); Core ML reports that stored value.
    P1 = np.where(P[:, 1] == 0.5, 0.5 - 1e-7, P[:, 1])
    expected = _classifier_expected(m, Xt, np.stack([1 - P1, P1], axis=1))
    return write_case("tree_classifier_decision_tree_binary", ml, inputs, expected,
                      "sklearn.tree.DecisionTreeClassifier(max_depth=3), iris versicolor-vs-rest, "
                      "inputs rounded to 1/4; converter", TOL_EXACT,
                      "Binary: one leaf value = p(class 1), NoTransform; Core ML p(class 0) = 1 - p(class 1). "
                      "coremltools stores a leaf of exactly 0.5 as 0.5 - 1e-7.")


@case
def case_tree_classifier_decision_tree_3class():
    X, y, _ = iris()
    X = dyadic(X)
    m = shim_n_features(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y))
    ml = convert(m, ["sepal_length", "sepal_width", "petal_length", "petal_width"])
    Xt, inputs = _tree_inputs(X, [m], 18, 12, 60, ["sepal_length", "sepal_width", "petal_length", "petal_width"])
    expected = _classifier_expected(m, Xt)
    return write_case("tree_classifier_decision_tree_3class", ml, inputs, expected,
                      "sklearn.tree.DecisionTreeClassifier(max_depth=4), iris rounded to 1/4; converter",
                      TOL_EXACT, "Four double inputs. Multiclass leaves hold the class distribution "
                      "(evaluationIndex = class), NoTransform.")


@case
def case_tree_classifier_random_forest_3class():
    X, y, _ = iris()
    X = dyadic(X)
    m = shim_n_features(RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y))
    ml = convert(m, "input")
    Xt, inputs = _tree_inputs(X, m.estimators_, 20, 10, 70)
    n = len(m.estimators_)
    P = m.predict_proba(Xt) * n
    expected = _classifier_expected(m, Xt, P)
    return write_case("tree_classifier_random_forest_3class", ml, inputs, expected,
                      "sklearn.ensemble.RandomForestClassifier(n_estimators=4, max_depth=3), iris; converter",
                      TOL_EXACT,
                      "coremltools issue #1541: for more than two classes the converter does not scale the "
                      "leaf distributions by 1/n_estimators, and the model has NoTransform, so Core ML's "
                      "classProbability is the SUM of the 4 trees' distributions = 4 × scikit-learn's "
                      "predict_proba (recorded that way here). classLabel (argmax) equals sklearn predict.",
                      {"reference": "classProbability = n_estimators × sklearn predict_proba (proto: leaves add up, no transform)"})


@case
def case_tree_classifier_random_forest_binary():
    X, y, _ = iris()
    X = dyadic(X)
    yb = (y == 2).astype(np.int64)
    m = shim_n_features(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=1).fit(X, yb))
    ml = convert(m, "input")
    Xt, inputs = _tree_inputs(X, m.estimators_, 20, 8, 75)
    expected = _classifier_expected(m, Xt)
    return write_case("tree_classifier_random_forest_binary", ml, inputs, expected,
                      "sklearn.ensemble.RandomForestClassifier(n_estimators=3, max_depth=3), iris virginica-vs-rest; converter",
                      TOL_EXACT, "Binary forests ARE scaled by 1/n_estimators (contrast with #1541 for "
                      "multiclass), so classProbability equals scikit-learn predict_proba.")


@case
def case_tree_classifier_gradient_boosting_binary():
    X, y, _ = iris()
    X = dyadic(X)
    yb = (y == 1).astype(np.int64)
    m = shim_n_features(GradientBoostingClassifier(n_estimators=6, max_depth=2, learning_rate=0.5,
                                                   random_state=0).fit(X, yb))
    ml = convert(m, "input")
    Xt, inputs = _tree_inputs(X, list(m.estimators_.ravel()), 20, 10, 80)
    expected = _classifier_expected(m, Xt)
    return write_case("tree_classifier_gradient_boosting_binary", ml, inputs, expected,
                      "sklearn.ensemble.GradientBoostingClassifier(n_estimators=6, max_depth=2, lr=0.5), "
                      "iris versicolor-vs-rest; converter", TOL_EXACT,
                      "basePredictionValue = the prior log-odds; Regression_Logistic post transform: "
                      "p(class 1) = sigmoid(sum), p(class 0) = 1 - p(class 1).")


@case
def case_tree_classifier_gradient_boosting_3class():
    X, y, _ = iris()
    X = dyadic(X)
    m = shim_n_features(GradientBoostingClassifier(n_estimators=4, max_depth=2, learning_rate=0.5,
                                                   random_state=0).fit(X, y))
    ml = convert(m, "input")
    Xt, inputs = _tree_inputs(X, list(m.estimators_.ravel()), 20, 10, 90)
    expected = _classifier_expected(m, Xt)
    return write_case("tree_classifier_gradient_boosting_3class", ml, inputs, expected,
                      "sklearn.ensemble.GradientBoostingClassifier(n_estimators=4, max_depth=2, lr=0.5), iris; converter",
                      TOL_EXACT, "One tree per class per stage (evaluationIndex = class); base prediction "
                      "= prior log-probabilities per class; Classification_SoftMax post transform.")


# ----------------------------------------------------------------------------------------------
# SVM
# ----------------------------------------------------------------------------------------------

@case
def case_svr_rbf():
    X, y = regression_data(n=60, seed=5)
    m = SVR(kernel="rbf", C=3.0, gamma=0.4, epsilon=0.1).fit(X, y)
    ml = convert(m, "input", "prediction")
    Xt = np.vstack([pick(X, 24, 100), [[0, 0, 0], [3, -3, 3]]])
    inputs = [{"input": r} for r in Xt]
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("svr_rbf", ml, inputs, expected, "sklearn.svm.SVR(kernel='rbf', C=3, gamma=0.4); converter",
                      TOL_PROB, "Sum of dual coefficients × exp(-gamma |x - sv|^2) - rho.")


@case
def case_svr_linear():
    X, y = regression_data(n=60, seed=6)
    m = SVR(kernel="linear", C=1.0).fit(X, y)
    ml = convert(m, ["x0", "x1", "x2"], "prediction")
    Xt = np.vstack([pick(X, 24, 101), [[0, 0, 0]]])
    inputs = [{"x0": r[0], "x1": r[1], "x2": r[2]} for r in Xt]
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("svr_linear", ml, inputs, expected, "sklearn.svm.SVR(kernel='linear'); converter",
                      TOL_PROB, "Three double inputs; linear kernel.")


@case
def case_nu_svr_poly():
    X, y = regression_data(n=60, seed=7)
    m = NuSVR(kernel="poly", degree=2, gamma=0.5, coef0=1.0, nu=0.5, C=1.0).fit(X, y)
    ml = convert(m, "input", "prediction")
    Xt = np.vstack([pick(X, 24, 102)])
    inputs = [{"input": r} for r in Xt]
    expected = [{"prediction": v} for v in m.predict(Xt)]
    return write_case("nu_svr_poly", ml, inputs, expected,
                      "sklearn.svm.NuSVR(kernel='poly', degree=2, gamma=0.5, coef0=1, nu=0.5); converter",
                      TOL_PROB, "Polynomial kernel (gamma x·sv + c)^degree.")


def _svc_case(name, m, X, seed, source, notes, extra_rows=None):
    ml = convert(m, "input")
    Xt = pick(X, 26, seed)
    if extra_rows is not None:
        Xt = np.vstack([Xt, extra_rows])
    inputs = [{"input": r} for r in Xt]
    outs = {f.name for f in get_spec(ml).description.output}
    if "classProbability" in outs and getattr(m, "probability", False):
        P = m.predict_proba(Xt)
        labels = m.classes_[np.argmax(P, axis=1)]
        n_diff = int(np.sum(labels != m.predict(Xt)))
        expected = [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, p)}
                    for c, p in zip(labels, P)]
        notes += (" With probability estimates Core ML (LibSVM's svm_predict_probability) labels a row "
                  "with the argmax of the coupled probabilities, not scikit-learn's one-vs-one vote; "
                  "classLabel is recorded that way (it differs from sklearn predict on %d of %d rows)."
                  % (n_diff, len(Xt)))
    else:
        expected = [{"classLabel": label(c)} for c in m.predict(Xt)]
    return write_case(name, ml, inputs, expected, source, TOL_PROB, notes)


@case
def case_svc_linear():
    X, y, _ = iris()
    m = SVC(kernel="linear", C=1.0).fit(X, y)
    return _svc_case("svc_linear", m, X, 110, "sklearn.svm.SVC(kernel='linear'), iris; converter",
                     "One-vs-one voting over 3 classes; without probability=True the converter gives the model "
                     "only a classLabel output.")


@case
def case_svc_rbf():
    X, y, _ = iris()
    m = SVC(kernel="rbf", C=2.0, gamma=0.3).fit(X, y)
    return _svc_case("svc_rbf", m, X, 111, "sklearn.svm.SVC(kernel='rbf', C=2, gamma=0.3), iris; converter",
                     "One-vs-one voting; classLabel only (no probA/probB).")


@case
def case_svc_poly():
    X, y, _ = iris()
    m = SVC(kernel="poly", degree=3, gamma=0.2, coef0=1.0, C=1.0).fit(X, y)
    return _svc_case("svc_poly", m, X, 112, "sklearn.svm.SVC(kernel='poly', degree=3, gamma=0.2, coef0=1), iris; converter",
                     "Polynomial kernel; classLabel only.")


@case
def case_svc_sigmoid():
    X, y, _ = iris()
    X, y = X[y != 0], y[y != 0]
    Xs = (X - X.mean(0)) / X.std(0)
    m = SVC(kernel="sigmoid", gamma=0.05, coef0=0.0, C=1.0).fit(Xs, y)
    return _svc_case("svc_sigmoid", m, Xs, 113, "sklearn.svm.SVC(kernel='sigmoid', gamma=0.05, coef0=0), iris 1/2 standardised; converter",
                     "Binary, sigmoid kernel tanh(gamma x·sv + c); classLabel only.")


@case
def case_svc_rbf_probability_3class():
    X, y, _ = iris()
    m = SVC(kernel="rbf", C=1.0, gamma=0.5, probability=True, random_state=0).fit(X, y)
    return _svc_case("svc_rbf_probability_3class", m, X, 114,
                     "sklearn.svm.SVC(kernel='rbf', gamma=0.5, probability=True, random_state=0), iris; converter",
                     "probA/probB give Platt-scaled pairwise probabilities, combined by LibSVM's pairwise "
                     "coupling (the same LibSVM code scikit-learn runs): classProbability = sklearn predict_proba.",
                     extra_rows=[[6.0, 2.8, 4.9, 1.6], [6.3, 2.8, 5.0, 1.7]])


@case
def case_nu_svc_rbf_probability_3class():
    X, y, _ = iris()
    m = NuSVC(kernel="rbf", nu=0.3, gamma=0.5, probability=True, random_state=0).fit(X, y)
    return _svc_case("nu_svc_rbf_probability_3class", m, X, 115,
                     "sklearn.svm.NuSVC(nu=0.3, gamma=0.5, probability=True, random_state=0), iris; converter",
                     "NuSVC converts to the same supportVectorClassifier; pairwise-coupled probabilities.")


def _libsvm_binary_probability(m, Xt):
    """LibSVM svm_predict_probability for two classes: the Platt sigmoid of the decision value,
    clipped to [1e-7, 1 - 1e-7], with no coupling step. scikit-learn's decision_function is the
    negated LibSVM value for binary models; LibSVM's probability is for its first class."""
    dec = -m.decision_function(Xt)          # LibSVM's decision value (first class positive)
    fApB = dec * m.probA_[0] + m.probB_[0]
    p_first = np.where(fApB >= 0, np.exp(-fApB) / (1.0 + np.exp(-fApB)), 1.0 / (1.0 + np.exp(fApB)))
    p_first = np.clip(p_first, 1e-7, 1 - 1e-7)
    return np.stack([p_first, 1 - p_first], axis=1)


@case
def case_svc_rbf_probability_binary():
    X, y, _ = iris()
    X, y = X[y != 0], y[y != 0]
    m = SVC(kernel="rbf", C=1.0, gamma=0.5, probability=True, random_state=0).fit(X, y)
    ml = convert(m, "input")
    Xt = np.vstack([pick(X, 27, 116), [[6.0, 2.8, 4.9, 1.6]]])
    inputs = [{"input": r} for r in Xt]
    P = _libsvm_binary_probability(m, Xt)
    Psk = m.predict_proba(Xt)
    maxdiff = float(np.abs(P - Psk).max())
    assert maxdiff < 0.05, maxdiff
    labels = m.classes_[np.argmax(P, axis=1)]
    expected = [{"classLabel": label(c), "classProbability": proba_dict(m.classes_, p)}
                for c, p in zip(labels, P)]
    return write_case("svc_rbf_probability_binary", ml, inputs, expected,
                      "sklearn.svm.SVC(kernel='rbf', gamma=0.5, probability=True), iris 1/2; converter",
                      TOL_PROB,
                      "Binary probabilities differ from scikit-learn (coremltools warns about this): LibSVM "
                      "as Core ML runs it returns the Platt sigmoid 1/(1+exp(A·f+B)) of the decision value f "
                      "for the first class (clipped to [1e-7, 1-1e-7]), while scikit-learn's predict_proba "
                      "also runs its pairwise normalisation for two classes. classProbability is that NumPy "
                      "reference (max |difference| from sklearn predict_proba here: %.4f); classLabel is its "
                      "argmax." % maxdiff,
                      {"reference": "classProbability: NumPy LibSVM binary sigmoid from sklearn decision_function, probA_, probB_"})


# ----------------------------------------------------------------------------------------------
# kNN
# ----------------------------------------------------------------------------------------------

def _knn_data(seed, n=24, d=2):
    rng = np.random.RandomState(seed)
    X = dyadic(rng.uniform(0, 4, size=(n, d)), 0.25)
    X = np.unique(X, axis=0)
    y = (X[:, 0] + 0.7 * X[:, 1] > 4).astype(np.int64) + (X[:, 0] > 3).astype(np.int64)
    return X, y


def _knn_queries(X, seed, n):
    rng = np.random.RandomState(seed)
    Q = dyadic(rng.uniform(-0.5, 4.5, size=(n, X.shape[1])), 0.125)
    Q[:3] = X[:3]  # exact training points (distance 0)
    return Q


def _knn_builder_case(name, index, k, weighting, labels_kind, seed):
    X, y = _knn_data(seed)
    names = np.array(["setosa", "versicolor", "virginica"])
    lab = names[y] if labels_kind == "string" else (y * 10 + 5)
    default = "unknown" if labels_kind == "string" else -1
    b = KNearestNeighborsClassifierBuilder(input_name="input", output_name="classLabel",
                                           number_of_dimensions=X.shape[1], default_class_label=default,
                                           number_of_neighbors=k, weighting_scheme=weighting,
                                           index_type=index, leaf_size=4)
    b.add_samples(X, [label(v) for v in lab])
    sk_w = "uniform" if weighting == "uniform" else "distance"
    skm = KNeighborsClassifier(n_neighbors=k, weights=sk_w, algorithm="brute").fit(X, lab)
    Q = _knn_queries(X, seed + 1, 60)
    # Keep queries whose k nearest neighbours are unambiguous (no distance tie at the k-th place),
    # whose winner is not a tie of votes, and (inverse distance) whose winner is the same for
    # 1/d and 1/d^2 (the proto says "1 / distance" with a squared-Euclidean distance function).
    D = ((Q[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    keep, ties = [], []
    for i in range(len(Q)):
        d = np.sort(D[i])
        if k < len(d) and d[k - 1] == d[k]:
            continue
        nn = np.argsort(D[i], kind="stable")[:k]
        votes = {}
        votes2 = {}
        for j in nn:
            w = 1.0 if weighting == "uniform" else (1.0 / math.sqrt(D[i, j]) if D[i, j] > 0 else 1e300)
            w2 = 1.0 if weighting == "uniform" else (1.0 / D[i, j] if D[i, j] > 0 else 1e300)
            votes[lab[j]] = votes.get(lab[j], 0) + w
            votes2[lab[j]] = votes2.get(lab[j], 0) + w2
        best = max(votes.values())
        winners = [c for c, v in votes.items() if v == best]
        if max(votes, key=votes.get) != max(votes2, key=votes2.get):
            continue
        if len(winners) > 1:
            if len(ties) < 3 and weighting == "uniform":
                ties.append(len(keep))
                keep.append(i)
            continue
        keep.append(i)
    Q = Q[keep][:40]
    ties = [t for t in ties if t < len(Q)]
    inputs = [{"input": q} for q in Q]
    pred = skm.predict(Q)
    expected = [{"classLabel": label(c)} for c in pred]
    notes = ("KNearestNeighborsClassifierBuilder(index=%s, k=%d, weighting=%s, %s labels, default %r); "
             "expected classLabel = sklearn KNeighborsClassifier(n_neighbors=%d, weights=%r, "
             "algorithm='brute') fitted on the same samples. Samples and queries are multiples of 1/8 "
             "(exact in the model's float32 samples). Queries with a distance tie at the k-th "
             "neighbour are left out." % (index, k, weighting, labels_kind, default, k, sk_w))
    extra = {"reference": "sklearn.neighbors.KNeighborsClassifier on the builder's samples"}
    if weighting != "uniform":
        notes += (" Inverse distance: the proto says the label with the highest sum of 1/distance wins "
                  "and its distance function is squared Euclidean, scikit-learn weighs by 1/Euclidean; "
                  "only queries where both give the same winner are kept; a query equal to a sample "
                  "(distance 0) takes that sample's label.")
    if ties:
        notes += (" Rows %s are vote ties (several labels with the most votes): sklearn returns the "
                  "first label in sorted order; Core ML's tie rule is not specified, so case.json lists "
                  "them in vote_ties with the tied labels." % ties)
        tie_info = []
        for t in ties:
            q = Q[t]
            dd = ((X - q) ** 2).sum(1)
            nn = np.argsort(dd, kind="stable")[:k]
            cnt = {}
            for j in nn:
                cnt[label(lab[j])] = cnt.get(label(lab[j]), 0) + 1
            top = max(cnt.values())
            tie_info.append({"row": t, "tied_labels": sorted([c for c, v in cnt.items() if v == top],
                                                                key=lambda s: str(s))})
        extra["vote_ties"] = tie_info
    return write_case(name, b.spec, inputs, expected, "coremltools KNearestNeighborsClassifierBuilder",
                      TOL_EXACT, notes, extra)


@case
def case_knn_linear_k1_uniform_string():
    return _knn_builder_case("knn_linear_k1_uniform_string", "linear", 1, "uniform", "string", 200)


@case
def case_knn_linear_k3_uniform_int64():
    return _knn_builder_case("knn_linear_k3_uniform_int64", "linear", 3, "uniform", "int64", 210)


@case
def case_knn_kdtree_k3_uniform_string():
    return _knn_builder_case("knn_kdtree_k3_uniform_string", "kd_tree", 3, "uniform", "string", 220)


@case
def case_knn_kdtree_k3_inverse_distance_int64():
    return _knn_builder_case("knn_kdtree_k3_inverse_distance_int64", "kd_tree", 3, "inverse_distance", "int64", 230)


@case
def case_knn_linear_k3_inverse_distance_string():
    return _knn_builder_case("knn_linear_k3_inverse_distance_string", "linear", 3, "inverse_distance", "string", 240)


@case
def case_knn_empty_default_label():
    b = KNearestNeighborsClassifierBuilder(input_name="input", output_name="classLabel",
                                           number_of_dimensions=2, default_class_label="nobody",
                                           number_of_neighbors=3)
    Q = _knn_queries(_knn_data(250)[0], 251, 20)
    inputs = [{"input": q} for q in Q]
    expected = [{"classLabel": "nobody"} for _ in Q]
    return write_case("knn_empty_default_label", b.spec, inputs, expected,
                      "coremltools KNearestNeighborsClassifierBuilder with no samples", TOL_EXACT,
                      "No samples: every prediction is defaultStringLabel (NearestNeighbors.proto: the "
                      "default label is for prediction on an empty classifier). Reference: the proto.",
                      {"reference": "proto comment (default label of an empty classifier)"})


@case
def case_knn_sklearn_converter():
    X, y, _ = iris()
    X = dyadic(X)
    Xu, idx = np.unique(X, axis=0, return_index=True)
    yu = y[idx]
    m = KNeighborsClassifier(n_neighbors=5, algorithm="kd_tree", leaf_size=10).fit(Xu, yu)
    ml = convert(m, "input")
    rng = np.random.RandomState(260)
    Q = dyadic(rng.uniform([4, 2, 1, 0], [8, 4.5, 7, 2.5], size=(80, 4)), 0.125)
    D = ((Q[:, None, :] - Xu[None, :, :]) ** 2).sum(-1)
    ok = []
    for i in range(len(Q)):
        d = np.sort(D[i])
        if d[4] == d[5]:
            continue
        P = m.predict_proba(Q[i:i + 1])[0]
        if np.sum(P == P.max()) > 1:
            continue
        ok.append(i)
    Q = Q[ok][:36]
    inputs = [{"input": q} for q in Q]
    expected = [{"classLabel": label(c)} for c in m.predict(Q)]
    return write_case("knn_sklearn_converter", ml, inputs, expected,
                      "sklearn.neighbors.KNeighborsClassifier(n_neighbors=5, algorithm='kd_tree', leaf_size=10), "
                      "iris rounded to 1/4 (duplicates removed); converter", TOL_EXACT,
                      "The converter writes a singleKdTreeIndex (leafSize 10), uniform weighting, int64 "
                      "labels. Queries with distance ties at the 5th neighbour or vote ties are left out. "
                      "Only classLabel is recorded: the proto does not define the probability output.")


# ----------------------------------------------------------------------------------------------
# transformers
# ----------------------------------------------------------------------------------------------

@case
def case_one_hot_encoder():
    rng = np.random.RandomState(300)
    Xtr = np.stack([rng.choice([1, 2, 3], 60), rng.choice([0, 5, 7, 9], 60)], axis=1).astype(np.int64)
    m = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(Xtr)
    ml = convert(m, "input", "output")
    Xt = np.vstack([Xtr[:20], [[4, 5], [1, 8], [0, 0], [3, 9]]]).astype(np.int64)
    inputs = [{"input": r.astype(np.float64)} for r in Xt]
    expected = [{"output": v} for v in m.transform(Xt)]
    return write_case("one_hot_encoder", ml, inputs, expected,
                      "sklearn.preprocessing.OneHotEncoder(handle_unknown='ignore'), two int columns; converter",
                      TOL_EXACT, "The converter builds a pipeline: arrayFeatureExtractor per column → "
                      "oneHotEncoder (int64 categories, IgnoreUnknown) → featureVectorizer. Unseen "
                      "categories (rows 20–22) give all-zero blocks.")


@case
def case_one_hot_encoder_string_builder():
    cats = ["red", "green", "blue"]
    spec = Model_pb2.Model()
    spec.specificationVersion = 1
    f = spec.description.input.add()
    f.name = "color"
    f.type.stringType.SetInParent()
    o = spec.description.output.add()
    o.name = "encoded"
    o.type.multiArrayType.dataType = FeatureTypes_pb2.ArrayFeatureType.DOUBLE
    o.type.multiArrayType.shape.append(len(cats))
    spec.oneHotEncoder.stringCategories.vector.extend(cats)
    spec.oneHotEncoder.handleUnknown = OneHotEncoder_pb2.OneHotEncoder.IgnoreUnknown
    spec.oneHotEncoder.outputSparse = False
    m = OneHotEncoder(categories=[cats], handle_unknown="ignore", sparse_output=False).fit(np.array(cats)[:, None])
    vals = ["red", "green", "blue", "purple", "", "Red"] * 4
    inputs = [{"color": v} for v in vals]
    expected = [{"encoded": r} for r in m.transform(np.array(vals, dtype=object)[:, None])]
    return write_case("one_hot_encoder_string_builder", spec, inputs, expected,
                      "Model_pb2 oneHotEncoder (string categories, IgnoreUnknown); expected from "
                      "sklearn OneHotEncoder(categories=[['red','green','blue']], handle_unknown='ignore')",
                      TOL_EXACT, "String input; position in stringCategories is the one-hot index; unknown "
                      "strings ('purple', '', 'Red') give all zeros.")


@case
def case_dict_vectorizer():
    rng = np.random.RandomState(310)
    keys = ["age", "fare", "parch", "sibsp", "pclass"]
    train = [{k: float(rng.randint(0, 5)) for k in keys if rng.rand() < 0.7} for _ in range(40)]
    train.append({k: 1.0 for k in keys})
    m = DictVectorizer(sparse=True).fit(train)
    ml = convert(m, "dict", "vector")
    test = train[:22] + [{}, {"fare": 7.25}, {"age": -3.5, "pclass": 2.0}]
    inputs = [{"dict": d} for d in test]
    expected = [{"vector": r} for r in m.transform(test).toarray()]
    return write_case("dict_vectorizer", ml, inputs, expected,
                      "sklearn.feature_extraction.DictVectorizer(sparse=True), string keys; converter",
                      TOL_EXACT, "String-keyed dictionary of doubles → dense array in feature_names_ order "
                      "(%s); missing keys are 0. Every key used is known (the proto wants all keys in the "
                      "index)." % ", ".join(m.feature_names_))


def _normalizer_case(norm):
    rng = np.random.RandomState(320 + len(norm))
    X = rng.normal(0, 2, size=(24, 4))
    X[3] = [-5.0, 1.0, 2.0, 0.5]    # max |x| is negative
    X[4] = [-1.0, -2.0, -3.0, -0.5]  # all negative
    m = Normalizer(norm=norm).fit(X)
    ml = convert(m, [("input", datatypes.Array(4))], "output")
    inputs = [{"input": r} for r in X]
    notes = "sklearn.preprocessing.Normalizer(norm=%r)." % norm
    extra = None
    if norm == "max":
        # Normalizer.proto defines LMax as dividing by max(x_i), not max(|x_i|) as sklearn does.
        out = X / X.max(axis=1, keepdims=True)
        sk = m.transform(X)
        n_diff = int(np.sum(np.any(np.abs(out - sk) > 1e-12, axis=1)))
        notes += (" Core ML's Normalizer.proto gives the LMax norm as max(x_i) while scikit-learn "
                  "divides by max(|x_i|): expected is the NumPy reference x / max(x_i) (differs from "
                  "sklearn on %d of %d rows, those with a negative largest-magnitude element)." % (n_diff, len(X)))
        extra = {"reference": "NumPy x / max(x) per row (Normalizer.proto LMax)"}
    else:
        out = m.transform(X)
    expected = [{"output": r} for r in out]
    return write_case("normalizer_" + norm, ml, inputs, expected,
                      "sklearn.preprocessing.Normalizer(norm=%r); converter" % norm, TOL_EXACT, notes, extra)


@case
def case_normalizer_l1():
    return _normalizer_case("l1")


@case
def case_normalizer_l2():
    return _normalizer_case("l2")


@case
def case_normalizer_max():
    return _normalizer_case("max")


@case
def case_scaler():
    X, y, _ = iris()
    m = StandardScaler().fit(X)
    ml = convert(m, "input", "output")
    Xt = np.vstack([pick(X, 22, 330), [[0, 0, 0, 0], [10, -1, 3.758, 1.2]]])
    inputs = [{"input": r} for r in Xt]
    expected = [{"output": r} for r in m.transform(Xt)]
    return write_case("scaler", ml, inputs, expected, "sklearn.preprocessing.StandardScaler(), iris; converter",
                      TOL_EXACT, "Scaler.proto: scaleValue · (x + shiftValue) with shift = -mean, scale = 1/std.")


def _imputer_case(name, strategy, fill=None):
    X, y, _ = iris()
    rng = np.random.RandomState(340 + len(strategy))
    Xm = X.copy()
    Xm[rng.rand(*X.shape) < 0.2] = np.nan
    kw = {"strategy": strategy}
    if fill is not None:
        kw["fill_value"] = fill
    m = SimpleImputer(**kw).fit(Xm)
    ml = convert(m, "input", "output")
    Xt = np.vstack([pick(Xm, 24, 341), [[np.nan] * 4]])
    inputs = [{"input": r} for r in Xt]
    expected = [{"output": r} for r in m.transform(Xt)]
    return write_case(name, ml, inputs, expected, "sklearn.impute.SimpleImputer(%s); converter" %
                      ", ".join("%s=%r" % kv for kv in kw.items()), TOL_EXACT,
                      "imputedDoubleArray = statistics_, replaceDoubleValue = NaN: NaN elements of the "
                      "input array are replaced by the per-column value.")


@case
def case_imputer_mean():
    return _imputer_case("imputer_mean", "mean")


@case
def case_imputer_constant():
    return _imputer_case("imputer_constant", "constant", -1.5)


def _scalar_spec(in_name, in_kind, out_name, out_kind, version=1):
    spec = Model_pb2.Model()
    spec.specificationVersion = version
    for name, kind, coll in ((in_name, in_kind, spec.description.input), (out_name, out_kind, spec.description.output)):
        f = coll.add()
        f.name = name
        getattr(f.type, kind).SetInParent()
    return spec


@case
def case_imputer_scalar_variants():
    # One pipeline of three protobuf-built imputers (double, int64, string), each on its own feature.
    specs = []
    d = _scalar_spec("d", "doubleType", "d_out", "doubleType")
    d.imputer.imputedDoubleValue = 2.5
    d.imputer.replaceDoubleValue = float("nan")
    i = _scalar_spec("i", "int64Type", "i_out", "int64Type")
    i.imputer.imputedInt64Value = 7
    i.imputer.replaceInt64Value = -1
    s = _scalar_spec("s", "stringType", "s_out", "stringType")
    s.imputer.imputedStringValue = "unknown"
    s.imputer.replaceStringValue = ""
    specs = [d, i, s]
    p = CTPipeline([("d", datatypes.Double()), ("i", datatypes.Int64()), ("s", datatypes.String())],
                   [("d_out", datatypes.Double()), ("i_out", datatypes.Int64()), ("s_out", datatypes.String())])
    for sp in specs:
        p.add_model(sp)
    spec = p.spec
    spec.specificationVersion = 1
    rng = np.random.RandomState(350)
    rows = []
    for k in range(24):
        dv = float("nan") if k % 3 == 0 else float(dyadic(rng.normal(0, 3), 0.5))
        iv = -1 if k % 4 == 0 else int(rng.randint(-3, 10))
        sv = "" if k % 5 == 0 else str(rng.choice(["a", "b", "unknown", " "]))
        rows.append({"d": dv, "i": iv, "s": sv})
    expected = [{"d_out": 2.5 if math.isnan(r["d"]) else r["d"],
                 "i_out": 7 if r["i"] == -1 else r["i"],
                 "s_out": "unknown" if r["s"] == "" else r["s"]} for r in rows]
    return write_case("imputer_scalar_variants", spec, rows, expected,
                      "Model_pb2: pipeline of three imputers (double NaN→2.5, int64 -1→7, string ''→'unknown')",
                      TOL_EXACT, "Imputer.proto: a value equal to the replace value (NaN for doubles) "
                      "becomes the imputed value; -1 int64 and '' string are the replace values. "
                      "Reference: the proto (no library source).",
                      {"reference": "Imputer.proto (replace value → imputed value)"})


@case
def case_array_feature_extractor():
    spec = create_array_feature_extractor([("input", datatypes.Array(6))], "picked", [4, 0, 4, 2])
    rng = np.random.RandomState(360)
    X = rng.normal(size=(22, 6))
    inputs = [{"input": r} for r in X]
    expected = [{"picked": r[[4, 0, 4, 2]]} for r in X]
    spec2 = create_array_feature_extractor([("input", datatypes.Array(6))], "one", 5)
    # A second model (single index → double output) in the same case dir would need a second
    # file; keep it as a pipeline with both outputs.
    p = CTPipeline([("input", datatypes.Array(6))], [("picked", datatypes.Array(4)), ("one", datatypes.Double())])
    p.add_model(spec)
    p.add_model(spec2)
    expected = [{"picked": r[[4, 0, 4, 2]], "one": r[5]} for r in X]
    return write_case("array_feature_extractor", p.spec, inputs, expected,
                      "coremltools create_array_feature_extractor ×2 in a pipeline; expected = NumPy indexing",
                      TOL_EXACT, "extractIndex [4, 0, 4, 2] (repeats allowed) → multiArray of 4; "
                      "a single index [5] → double output.",
                      {"reference": "NumPy fancy indexing (the proto's definition)"})


@case
def case_feature_vectorizer():
    spec = create_feature_vectorizer([("a", datatypes.Double()), ("b", datatypes.Array(3)), ("c", datatypes.Int64())],
                                     "vector")[0]
    rng = np.random.RandomState(370)
    rows = [{"a": float(rng.normal()), "b": rng.normal(size=3), "c": int(rng.randint(-5, 5))} for _ in range(22)]
    expected = [{"vector": np.concatenate([[r["a"]], r["b"], [float(r["c"])]])} for r in rows]
    return write_case("feature_vectorizer", spec, rows, expected,
                      "coremltools create_feature_vectorizer(a: double, b: array(3), c: int64); expected = NumPy concat",
                      TOL_EXACT, "Concatenates the inputs in inputList order (a, b[0..2], c) into one double array.",
                      {"reference": "NumPy concatenate (the proto's definition)"})


@case
def case_categorical_mapping_string_to_int64():
    spec = _scalar_spec("category", "stringType", "code", "int64Type")
    cats = ["S", "C", "Q"]
    spec.categoricalMapping.stringToInt64Map.map.update({c: i for i, c in enumerate(cats)})
    spec.categoricalMapping.int64Value = -1
    vals = ["S", "C", "Q", "X", "", "s"] * 4
    inputs = [{"category": v} for v in vals]
    expected = [{"code": cats.index(v) if v in cats else -1} for v in vals]
    return write_case("categorical_mapping_string_to_int64", spec, inputs, expected,
                      "Model_pb2 categoricalMapping stringToInt64Map {S:0, C:1, Q:2}, int64Value -1",
                      TOL_EXACT, "Unknown strings map to the default int64Value -1 (CategoricalMapping.proto).",
                      {"reference": "CategoricalMapping.proto"})


@case
def case_categorical_mapping_int64_to_string():
    spec = _scalar_spec("code", "int64Type", "category", "stringType")
    m = {1: "first", 2: "second", 3: "third", -4: "negative"}
    spec.categoricalMapping.int64ToStringMap.map.update(m)
    spec.categoricalMapping.strValue = "other"
    vals = [1, 2, 3, -4, 0, 4, 99, -1] * 3
    inputs = [{"code": v} for v in vals]
    expected = [{"category": m.get(v, "other")} for v in vals]
    return write_case("categorical_mapping_int64_to_string", spec, inputs, expected,
                      "Model_pb2 categoricalMapping int64ToStringMap, strValue 'other'", TOL_EXACT,
                      "Unknown integers map to the default strValue 'other'.",
                      {"reference": "CategoricalMapping.proto"})


@case
def case_identity():
    spec = Model_pb2.Model()
    spec.specificationVersion = 1
    for coll in (spec.description.input, spec.description.output):
        f = coll.add()
        f.name = "x"
        f.type.multiArrayType.dataType = FeatureTypes_pb2.ArrayFeatureType.DOUBLE
        f.type.multiArrayType.shape.extend([2, 3])
        g = coll.add()
        g.name = "s"
        g.type.stringType.SetInParent()
    spec.identity.SetInParent()
    rng = np.random.RandomState(380)
    rows = [{"x": rng.normal(size=(2, 3)), "s": "row%d" % k} for k in range(20)]
    rows[0]["x"][0, 0] = np.nan
    return write_case("identity", spec, rows, [dict(r) for r in rows], "Model_pb2 identity", TOL_EXACT,
                      "Outputs equal inputs (Identity.proto); a 2×3 double array (one NaN) and a string.",
                      {"reference": "Identity.proto"})


# ----------------------------------------------------------------------------------------------
# nonMaximumSuppression
# ----------------------------------------------------------------------------------------------

def _iou(a, b):
    ax0, ay0, ax1, ay1 = a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2
    bx0, by0, bx1, by1 = b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2
    iw = max(0.0, min(ax1, bx1) - max(ax0, bx0))
    ih = max(0.0, min(ay1, by1) - max(ay0, by0))
    inter = iw * ih
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def nms_reference(conf, coords, iou_th, conf_th, per_class):
    """NonMaximumSuppression.proto, PickTop: drop boxes whose confidence is below the threshold,
    sort by descending confidence, keep the top box, suppress every remaining box whose IOU with it
    exceeds the IOU threshold (only boxes of the same argmax label when perClass), repeat. Returns
    kept row indexes in keep order (descending confidence)."""
    score = conf.max(axis=1)
    lab = conf.argmax(axis=1)
    cand = [i for i in np.argsort(-score, kind="stable") if score[i] >= conf_th]
    keep, dropped = [], set()
    for i in cand:
        if i in dropped:
            continue
        keep.append(i)
        for j in cand:
            if j == i or j in dropped or j in keep:
                continue
            if per_class and lab[j] != lab[i]:
                continue
            if _iou(coords[i], coords[j]) > iou_th:
                dropped.add(j)
    return keep


def _nms_rows(seed, n_rows, n_boxes, n_classes):
    """Random detections built so the result does not depend on the unspecified details: no two
    box scores are equal, no IOU or confidence is within 1e-3 of a threshold tested, and the
    ordering by max class confidence equals the ordering by summed confidence."""
    rng = np.random.RandomState(seed)
    rows = []
    while len(rows) < n_rows:
        centers = rng.uniform(0.2, 0.8, size=(3, 2))
        coords = []
        for _ in range(n_boxes):
            c = centers[rng.randint(3)] + rng.normal(0, 0.05, 2)
            wh = rng.uniform(0.1, 0.3, 2)
            coords.append([c[0], c[1], wh[0], wh[1]])
        coords = np.round(np.array(coords), 4)
        conf = np.zeros((n_boxes, n_classes))
        top = rng.uniform(0.05, 0.95, n_boxes)
        cls = rng.randint(n_classes, size=n_boxes)
        for b in range(n_boxes):
            conf[b, cls[b]] = top[b]
            rest = [c for c in range(n_classes) if c != cls[b]]
            conf[b, rest] = rng.uniform(0, 0.3, len(rest)) * min(top[b], 1 - top[b]) / 2
        conf = np.round(conf, 4)
        s = conf.max(1)
        if len(set(s.tolist())) != n_boxes:
            continue
        if not np.array_equal(np.argsort(-s, kind="stable"), np.argsort(-conf.sum(1), kind="stable")):
            continue
        ious = [_iou(coords[i], coords[j]) for i in range(n_boxes) for j in range(i + 1, n_boxes)]
        ths = (0.3, 0.5, 0.7)
        if any(abs(v - t) < 1e-3 for v in ious for t in ths):
            continue
        if any(abs(v - t) < 1e-3 for v in s for t in (0.2, 0.4)):
            continue
        rows.append((conf, coords))
    return rows


def _nms_spec(n_boxes, n_classes, per_class, iou_th, conf_th, threshold_inputs, out_rows):
    spec = Model_pb2.Model()
    spec.specificationVersion = 3
    nms = spec.nonMaximumSuppression
    nms.pickTop.perClass = per_class
    nms.iouThreshold = iou_th
    nms.confidenceThreshold = conf_th
    nms.stringClassLabels.vector.extend(["cat", "dog", "bird"][:n_classes])
    nms.confidenceInputFeatureName = "confidence"
    nms.coordinatesInputFeatureName = "coordinates"
    nms.confidenceOutputFeatureName = "confidenceOut"
    nms.coordinatesOutputFeatureName = "coordinatesOut"
    D = FeatureTypes_pb2.ArrayFeatureType.DOUBLE
    for name, cols in (("confidence", n_classes), ("coordinates", 4)):
        f = spec.description.input.add()
        f.name = name
        f.type.multiArrayType.dataType = D
        f.type.multiArrayType.shape.extend([n_boxes, cols])
    if threshold_inputs:
        nms.iouThresholdInputFeatureName = "iouThreshold"
        nms.confidenceThresholdInputFeatureName = "confidenceThreshold"
        for name in ("iouThreshold", "confidenceThreshold"):
            f = spec.description.input.add()
            f.name = name
            f.type.doubleType.SetInParent()
            f.type.isOptional = True
    for name, cols in (("confidenceOut", n_classes), ("coordinatesOut", 4)):
        f = spec.description.output.add()
        f.name = name
        f.type.multiArrayType.dataType = D
        if out_rows is None:
            f.type.multiArrayType.shape.extend([n_boxes, cols])
            r = f.type.multiArrayType.shapeRange.sizeRanges.add()
            r.lowerBound, r.upperBound = 0, -1
            r = f.type.multiArrayType.shapeRange.sizeRanges.add()
            r.lowerBound, r.upperBound = cols, cols
        else:
            f.type.multiArrayType.shape.extend([out_rows, cols])
    return spec


def _nms_case(name, per_class, threshold_inputs, out_rows, seed):
    n_boxes, n_classes = 8, 3
    iou_th, conf_th = 0.5, 0.2
    spec = _nms_spec(n_boxes, n_classes, per_class, iou_th, conf_th, threshold_inputs, out_rows)
    rows = _nms_rows(seed, 24, n_boxes, n_classes)
    inputs, expected = [], []
    for k, (conf, coords) in enumerate(rows):
        r = {"confidence": conf, "coordinates": coords}
        it, ct_ = iou_th, conf_th
        if threshold_inputs and k % 2 == 1:
            it, ct_ = (0.3, 0.4) if k % 4 == 1 else (0.7, 0.2)
            r["iouThreshold"], r["confidenceThreshold"] = it, ct_
        keep = nms_reference(conf, coords, it, ct_, per_class)
        oc, oo = conf[keep], coords[keep]
        if out_rows is not None:
            oc = np.vstack([oc, np.zeros((max(0, out_rows - len(keep)), n_classes))])[:out_rows]
            oo = np.vstack([oo, np.zeros((max(0, out_rows - len(keep)), 4))])[:out_rows]
        inputs.append(r)
        expected.append({"confidenceOut": oc, "coordinatesOut": oo})
    notes = ("NumPy reference of NonMaximumSuppression.proto PickTop (perClass=%s, iouThreshold %.1f, "
             "confidenceThreshold %.1f): boxes whose confidence (the largest class confidence) is below the "
             "confidence threshold are dropped; the rest are taken in descending confidence, each kept box "
             "suppresses the remaining boxes whose IOU with it is above the IOU threshold%s. Outputs are the "
             "kept rows (whole confidence row, coordinates as given: centre x, centre y, width, height) in "
             "keep order." % (per_class, iou_th, conf_th,
                              " and that have the same argmax label" if per_class else ""))
    if out_rows is not None:
        notes += (" The outputs have a fixed shape of %d rows: fewer kept boxes are padded with zero rows, "
                  "more are cut to the %d most confident." % (out_rows, out_rows))
    else:
        notes += " Output shape is flexible in rows (shapeRange [0, unbounded] × C)."
    if threshold_inputs:
        notes += (" Odd rows give iouThreshold / confidenceThreshold inputs that override the model's "
                  "parameters; even rows omit them (optional inputs; the model's values apply).")
    notes += (" The detections are generated so the answer does not hang on unspecified details: "
              "distinct scores, no IOU or confidence within 1e-3 of a threshold, and the same ordering by "
              "max and by summed class confidence. The proto's wording that a box is 'within the radius' "
              "when its IOU is less than the threshold is read as the usual rule (suppress when IOU > threshold).")
    return write_case(name, spec, inputs, expected, "Model_pb2 nonMaximumSuppression", TOL_EXACT, notes,
                      {"reference": "NumPy greedy PickTop (nms_reference in the script)"})


@case
def case_nms_overall():
    return _nms_case("nms_overall", False, False, None, 400)


@case
def case_nms_per_class_fixed_shape():
    return _nms_case("nms_per_class_fixed_shape", True, False, 4, 410)


@case
def case_nms_threshold_inputs():
    return _nms_case("nms_threshold_inputs", False, True, None, 420)


# ----------------------------------------------------------------------------------------------
# itemSimilarityRecommender
# ----------------------------------------------------------------------------------------------

def _isr_spec(items, sims, shifts, with_num, with_exclusion):
    spec = Model_pb2.Model()
    spec.specificationVersion = 4
    isr = spec.itemSimilarityRecommender
    n = len(items)
    for k in range(n):
        s = isr.itemItemSimilarities.add()
        s.itemId = k
        s.itemScoreAdjustment = shifts[k]
        for i in range(n):
            if sims[k, i] != 0:
                c = s.similarItemList.add()
                c.itemId = i
                c.similarityScore = sims[k, i]
    isr.itemStringIds.vector.extend(items)
    isr.itemInputFeatureName = "items"
    f = spec.description.input.add()
    f.name = "items"
    f.type.dictionaryType.stringKeyType.SetInParent()
    if with_num:
        isr.numRecommendationsInputFeatureName = "k"
        f = spec.description.input.add()
        f.name = "k"
        f.type.int64Type.SetInParent()
    if with_exclusion:
        isr.itemExclusionInputFeatureName = "exclude"
        f = spec.description.input.add()
        f.name = "exclude"
        f.type.sequenceType.stringType.SetInParent()
    isr.recommendedItemListOutputFeatureName = "recommendedItems"
    isr.recommendedItemScoreOutputFeatureName = "recommendedItemScores"
    f = spec.description.output.add()
    f.name = "recommendedItems"
    f.type.sequenceType.stringType.SetInParent()
    f = spec.description.output.add()
    f.name = "recommendedItemScores"
    f.type.dictionaryType.stringKeyType.SetInParent()
    return spec


def isr_reference(items, sims, shifts, observed, k=None, exclude=None):
    """score_k = sum over observed items i of sim(k, i) * (score_i - shift_k), for every item k not
    excluded (by default the observed items are excluded), ranked by descending score, first k."""
    idx = {s: j for j, s in enumerate(items)}
    scores = {}
    excl = set(observed) if exclude is None else set(exclude)
    for kk, name in enumerate(items):
        if name in excl:
            continue
        scores[name] = float(sum(sims[kk, idx[i]] * (v - shifts[kk]) for i, v in observed.items()))
    ranked = sorted(scores, key=lambda s: -scores[s])
    if k is not None:
        ranked = ranked[:k]
    return ranked, {s: scores[s] for s in ranked}


@case
def case_item_similarity_recommender():
    rng = np.random.RandomState(500)
    items = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "honeydew"]
    n = len(items)
    S = np.round(rng.uniform(0.05, 1.0, size=(n, n)), 3)
    S[rng.rand(n, n) < 0.3] = 0.0
    np.fill_diagonal(S, 0.0)
    shifts = np.round(rng.uniform(-0.5, 0.5, n), 2)
    shifts[[0, 3]] = 0.0
    spec = _isr_spec(items, S, shifts, with_num=True, with_exclusion=True)
    inputs, expected = [], []
    while len(inputs) < 24:
        m = rng.randint(1, 4)
        obs = {items[j]: float(np.round(rng.uniform(0.5, 5.0), 1)) for j in rng.choice(n, m, replace=False)}
        row = {"items": obs}
        k = int(rng.randint(1, 6))
        row["k"] = k
        exclude = None
        if len(inputs) % 3 == 2:
            exclude = [items[j] for j in rng.choice(n, 2, replace=False)]
            row["exclude"] = exclude
        ranked, sc = isr_reference(items, S, shifts, obs, k, exclude)
        full, fsc = isr_reference(items, S, shifts, obs, None, exclude)
        vals = [fsc[s] for s in full]
        if len(set(np.round(vals, 9))) != len(vals):
            continue  # ties: order not specified
        inputs.append(row)
        expected.append({"recommendedItems": ranked, "recommendedItemScores": sc})
    return write_case("item_similarity_recommender", spec, inputs, expected,
                      "Model_pb2 itemSimilarityRecommender (8 string items, sparse similarities, score shifts)",
                      TOL_EXACT,
                      "NumPy reference of ItemSimilarityRecommender.proto: score_k = Σ_i sim(k,i)·(score_i − "
                      "shift_k) over the observed items i (sim(k,i) is the similarityScore of item i in the "
                      "similarItemList of SimilarItems k, shift_k its itemScoreAdjustment; missing pairs are 0). "
                      "Items in the exclusion list (every third row gives 'exclude'; otherwise the observed "
                      "items) are not recommended. The k input limits the list to the k best; "
                      "recommendedItems is in descending score order and recommendedItemScores holds the "
                      "same items' scores. Rows whose scores tie are left out (order unspecified).",
                      {"reference": "NumPy isr_reference in the script"})


# ----------------------------------------------------------------------------------------------
# pipelines
# ----------------------------------------------------------------------------------------------

@case
def case_pipeline_classifier_scaler_logistic():
    X, y, _ = iris()
    m = SKPipeline([("scale", StandardScaler()),
                    ("lr", LogisticRegression(multi_class="ovr", C=0.8, max_iter=1000))]).fit(X, y)
    ml = convert(m, ["sepal_length", "sepal_width", "petal_length", "petal_width"])
    Xt = np.vstack([pick(X, 26, 600), [[6.0, 2.8, 4.9, 1.6]]])
    inputs = [{n: r[i] for i, n in enumerate(["sepal_length", "sepal_width", "petal_length", "petal_width"])}
              for r in Xt]
    expected = _classifier_expected(m, Xt)
    return write_case("pipeline_classifier_scaler_logistic", ml, inputs, expected,
                      "sklearn Pipeline(StandardScaler, LogisticRegression(multi_class='ovr')), iris; converter",
                      TOL_EXACT, "The converter prepends a featureVectorizer for the four double inputs.")


def titanic(n=160, seed=700):
    """A small Titanic-like table: pclass (1-3), sex (0/1), embarked (0,1,2), age, fare; NaN missing."""
    rng = np.random.RandomState(seed)
    pclass = rng.choice([1, 2, 3], n, p=[0.25, 0.25, 0.5]).astype(float)
    sex = rng.choice([0, 1], n).astype(float)
    emb = rng.choice([0, 1, 2], n, p=[0.7, 0.2, 0.1]).astype(float)
    age = dyadic(rng.uniform(1, 70, n), 0.5)
    fare = dyadic(rng.gamma(2.0, 15.0, n) * (4 - pclass), 0.25)
    y = 2.0 * (4 - pclass) + 1.5 * sex + 0.02 * fare - 0.01 * age + rng.normal(0, 0.3, n)
    cat = np.stack([pclass, sex, emb], axis=1)
    cat[rng.rand(n, 3) < 0.08] = np.nan
    return cat, np.stack([age, fare], axis=1), y


@case
def case_pipeline_regressor_imputer_onehot_trees():
    cat, num, y = titanic()
    m = SKPipeline([("impute", SimpleImputer(strategy="most_frequent")),
                    ("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False)),
                    ("gbr", GradientBoostingRegressor(n_estimators=6, max_depth=2, learning_rate=0.5,
                                                      random_state=0))]).fit(cat, y)
    shim_n_features(m.steps[-1][1])
    ml = convert(m, "input", "survival_score")
    rng = np.random.RandomState(701)
    Xt = np.vstack([cat[rng.choice(len(cat), 22, replace=False)],
                    [[np.nan, np.nan, np.nan], [4.0, 1.0, 0.0], [2.0, 0.0, 5.0]]])
    inputs = [{"input": r} for r in Xt]
    expected = [{"survival_score": v} for v in m.predict(Xt)]
    return write_case("pipeline_regressor_imputer_onehot_trees", ml, inputs, expected,
                      "sklearn Pipeline(SimpleImputer(most_frequent), OneHotEncoder(handle_unknown='ignore'), "
                      "GradientBoostingRegressor(n_estimators=6, max_depth=2)) on a synthetic Titanic-like "
                      "table (pclass, sex, embarked with NaN); converter", TOL_EXACT,
                      "NaN → most frequent value, then one-hot (a nested pipeline from the OneHotEncoder "
                      "converter), then trees. The last two rows hold unseen categories (pclass 4, embarked 5): "
                      "all-zero one-hot block.")


@case
def case_pipeline_nested():
    X, y, _ = iris()
    inner = SKPipeline([("impute", SimpleImputer(strategy="mean")), ("scale", StandardScaler())])
    rng = np.random.RandomState(710)
    Xm = X.copy()
    Xm[rng.rand(*X.shape) < 0.1] = np.nan
    inner.fit(Xm)
    inner_ml = convert(inner, "input", "scaled")
    norm = Normalizer(norm="l2").fit(X)
    norm_ml = convert(norm, [("scaled", datatypes.Array(4))], "output")
    # pipeline( pipeline(imputer, scaler), normalizer ) built with the coremltools Pipeline builder
    p = CTPipeline([("input", datatypes.Array(4))], [("output", datatypes.Array(4))])
    p.add_model(inner_ml.get_spec())
    p.add_model(norm_ml.get_spec())
    Xt = np.vstack([pick(Xm, 24, 711), [[np.nan] * 4]])
    inputs = [{"input": r} for r in Xt]
    expected = [{"output": r} for r in norm.transform(inner.transform(Xt))]
    return write_case("pipeline_nested", p.spec, inputs, expected,
                      "coremltools Pipeline[ converted sklearn Pipeline(SimpleImputer(mean), StandardScaler), "
                      "converted Normalizer(l2) ]", TOL_EXACT,
                      "A pipeline whose first stage is itself a pipeline; expected = sklearn "
                      "Normalizer.transform(inner.transform(x)).")


@case
def case_pipeline_neural_network_knn():
    rng = np.random.RandomState(800)
    W = np.round(rng.normal(0, 0.6, size=(3, 4)), 3)
    X, y, _ = iris()
    # bias: about 10% of the iris rows hit the ReLU's zero on each unit
    b = np.round(-np.percentile(X @ W.T, 10, axis=0), 3)
    nnb = NeuralNetworkBuilder([("x", datatypes.Array(4))], [("h", datatypes.Array(3))])
    nnb.add_inner_product("dense", W, b, input_channels=4, output_channels=3, has_bias=True,
                          input_name="x", output_name="dense_out")
    nnb.add_activation("relu", "RELU", "dense_out", "h")
    X, y, _ = iris()
    H = np.maximum(X @ W.T + b, 0)
    Hs = dyadic(H, 1 / 64)  # exact in float32
    names = np.array(["setosa", "versicolor", "virginica"])
    kb = KNearestNeighborsClassifierBuilder(input_name="h", output_name="species", number_of_dimensions=3,
                                            default_class_label="none", number_of_neighbors=3,
                                            weighting_scheme="uniform", index_type="linear")
    kb.add_samples(Hs[::3], [str(s) for s in names[y[::3]]])
    skm = KNeighborsClassifier(n_neighbors=3, algorithm="brute").fit(Hs[::3], names[y[::3]])
    p = CTPipeline([("x", datatypes.Array(4))], [("species", datatypes.String())])
    p.add_model(nnb.spec)
    p.add_model(kb.spec)
    spec = p.spec
    spec.specificationVersion = max(m.specificationVersion for m in spec.pipeline.models)
    # the kNN stage's "speciesProbs" output is left out of the pipeline's outputs
    Q = X[1::3][:45] + rng.normal(0, 0.05, size=(45, 4))
    Hq64 = np.maximum(Q @ W.T + b, 0)
    Hq32 = np.maximum(Q.astype(np.float32) @ W.T.astype(np.float32) + b.astype(np.float32), 0)
    keep = []
    for i in range(len(Q)):
        d64 = np.sort(((Hs[::3] - Hq64[i]) ** 2).sum(1))
        d32 = np.sort(((Hs[::3].astype(np.float32) - Hq32[i]) ** 2).sum(1))
        same = skm.predict(Hq64[i:i + 1])[0] == skm.predict(Hq32[i:i + 1].astype(np.float64))[0]
        margin = d64[3] - d64[2] > 1e-3 and d32[3] - d32[2] > 1e-3
        P = skm.predict_proba(Hq64[i:i + 1])[0]
        if same and margin and np.sum(P == P.max()) == 1:
            keep.append(i)
    Q = Q[keep][:36]
    inputs = [{"x": q} for q in Q]
    expected = [{"species": str(s)} for s in skm.predict(np.maximum(Q @ W.T + b, 0))]
    return write_case("pipeline_neural_network_knn", spec, inputs, expected,
                      "coremltools Pipeline[ NeuralNetworkBuilder(innerProduct 4→3 + ReLU), "
                      "KNearestNeighborsClassifierBuilder(k=3, linear, uniform, string labels) ]",
                      TOL_EXACT,
                      "Stage 1 (neuralNetwork): h = relu(W·x + b) with the weights in the model. Stage 2 "
                      "(kNearestNeighborsClassifier) on h; its samples are relu(W·iris+b) of every third iris "
                      "row rounded to 1/64. Expected: NumPy dense+ReLU then sklearn KNeighborsClassifier(k=3, "
                      "brute) on the same samples. Queries are jittered iris rows kept only where float32 and "
                      "float64 evaluation agree, the 3rd/4th neighbour distances differ by > 1e-3, and no vote tie.",
                      {"reference": "NumPy dense+ReLU, then sklearn KNeighborsClassifier"})


# ----------------------------------------------------------------------------------------------

def write_readme(metas):
    lines = [
        "# Classical Core ML fixtures",
        "",
        "Made by `Scripts/make_classical_fixtures.py` (%s). Each folder holds `model.mlmodel`, "
        "`inputs.json` (a list of rows: input feature name → value), `expected.json` (a list of rows: "
        "output feature name → what Core ML returns) and `case.json` (model type, source, tolerance, "
        "notes, the model description, and for some cases `reference` / `vote_ties`)." % VERSIONS,
        "",
        "Values in JSON: numbers for double/int64, strings, nested lists for multiArrays (row-major), "
        "objects for dictionaries (int64 keys written as decimal strings), lists for sequences, and the "
        "string `\"NaN\"` for a NaN double (also inside arrays). A value passes when "
        "|got − expected| ≤ absolute + relative·|expected|; labels and strings must be equal.",
        "",
        "Expected values are scikit-learn's outputs unless the Notes say Core ML's semantics (the .proto "
        "comments) differ; then they come from a NumPy reference of the proto's formula.",
        "",
        "| case | model type | source | tolerance (rel / abs) | notes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in sorted(metas):
        m = metas[name]
        t = m["model_type"]
        if "stages" in m:
            t += " " + json.dumps(m["stages"]).replace('"', "")
        lines.append("| %s | %s | %s | %g / %g | %s |" % (
            name, t, m["source"].replace("|", "\\|"), m["tolerance"]["relative"], m["tolerance"]["absolute"],
            m["notes"].replace("|", "\\|")))
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="case names to (re)make")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    names = args.only or list(CASES)
    for n in names:
        CASES[n]()
    metas = {}
    for d in sorted(os.listdir(OUT)):
        p = os.path.join(OUT, d, "case.json")
        if os.path.isfile(p):
            with open(p) as f:
                metas[d] = json.load(f)
    write_readme(metas)


if __name__ == "__main__":
    main()
