#!/usr/bin/env python3
"""Benchmark (not a test): mlconv's batch prediction of classical Core ML models vs scikit-learn's
own predict on the same fitted models, as ratios from one run on this machine.

Models (scikit-learn 1.5.1, converted by coremltools 7.2): RandomForestClassifier (100 trees),
GradientBoostingClassifier (100 stages × 3 classes), LogisticRegression (one-vs-rest), SVC (RBF).
Both sides predict the same N rows (default 10,000) in one batch; scikit-learn's time is the best
of --repeats calls of predict_proba (SVC: predict), mlconv's the "predicted N rows in X s" that
`mlconv predict --inputs` prints (model.predictions(from:) only: no process start, model load or
JSON parsing), best of --repeats runs. The labels of both sides are compared as a sanity check.

Usage: Scripts/bench-classical [--rows N] [--repeats N]   (run through the shell wrapper)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import sklearn

warnings.filterwarnings("ignore")

# coremltools 7.2 turns its scikit-learn converters off for scikit-learn newer than 1.1.2; it is
# imported while scikit-learn reports that version (as Scripts/make_classical_fixtures.py does).
_version = sklearn.__version__
sklearn.__version__ = "1.1.2"
try:
    import coremltools as ct
finally:
    sklearn.__version__ = _version

from sklearn.datasets import make_classification  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.svm import SVC  # noqa: E402


def with_n_features(m):
    """The 7.2 tree converters read n_features_, which scikit-learn 1.2 renamed n_features_in_."""
    for e in [m] + list(np.ravel(getattr(m, "estimators_", []))):
        if hasattr(e, "n_features_in_") and not hasattr(e, "n_features_"):
            try:
                e.n_features_ = e.n_features_in_
            except AttributeError:
                e.__dict__["n_features_"] = e.n_features_in_
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlconv", required=True)
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()

    X, y = make_classification(n_samples=3000 + a.rows, n_features=10, n_informative=6, n_classes=3,
                               random_state=0)
    Xtr, ytr, Xq = X[:3000], y[:3000], X[3000:]
    models = [
        ("RandomForest (100 trees)", RandomForestClassifier(n_estimators=100, random_state=0), True),
        ("GradientBoosting (100×3 trees)", GradientBoostingClassifier(n_estimators=100, max_depth=3, random_state=0), True),
        ("LogisticRegression (ovr)", LogisticRegression(multi_class="ovr", max_iter=1000), True),
        ("SVC (rbf, no probabilities)", SVC(kernel="rbf", gamma="scale"), False),
    ]
    tmp = tempfile.mkdtemp(prefix="mlconv-bench-classical-")
    inputs = os.path.join(tmp, "inputs.json")
    with open(inputs, "w") as f:
        json.dump([{"input": [float(v) for v in r]} for r in Xq], f)

    print(f"{a.rows} rows × {Xq.shape[1]} features, best of {a.repeats}; scikit-learn 1 thread (its default for these predicts)")
    print(f"{'model':34} {'scikit-learn':>13} {'mlconv':>10} {'mlconv/sklearn':>15} {'labels agree':>13}")
    for name, m, proba in models:
        with_n_features(m.fit(Xtr, ytr))
        path = os.path.join(tmp, re.sub(r"\W+", "_", name) + ".mlmodel")
        ct.converters.sklearn.convert(m, "input", "classLabel").save(path)
        predict = m.predict_proba if proba else m.predict
        sk = min(timed(lambda: predict(Xq)) for _ in range(a.repeats))
        ours = []
        out = os.path.join(tmp, "out.json")
        for _ in range(a.repeats):
            r = subprocess.run([a.mlconv, "predict", path, "--inputs", inputs, "--output-json", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"mlconv failed on {name}:\n{r.stdout}\n{r.stderr}")
            t = re.search(r"predicted \d+ rows in ([0-9.]+) s", r.stdout + r.stderr)
            if not t:
                sys.exit(f"no timing line from mlconv on {name}:\n{r.stdout}")
            ours.append(float(t.group(1)))
        with open(out) as f:
            got = [row["classLabel"] for row in json.load(f)]
        agree = float(np.mean(np.array(got) == m.predict(Xq)))
        print(f"{name:34} {sk * 1e3:10.1f} ms {min(ours) * 1e3:7.1f} ms {min(ours) / sk:14.2f}× {agree * 100:12.2f}%")


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
