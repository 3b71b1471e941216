#!/usr/bin/env python3
"""Checks a model repaired by `mlconv update --add-loss` (or NetworkUpdateRepair) with
coremltools 7.2: it loads (`ct.utils.load_spec`, `ct.models.MLModel(..., skip_model_load=True)`),
is updatable with one loss layer, and, given the model coremltools' own builder wrote with that
loss (Fixtures/update/repair_*/coremltools.mlmodel), declares the same loss layer, training
inputs, specification version and update parameters; every layer equals the original's
(weights may differ when the repaired model was also trained; compare with --untrained).

    PY=$(Scripts/coremltools-env)
    "$PY" Scripts/check_update_repair.py REPAIRED.mlmodel [--original MODEL.mlmodel]
          [--reference COREMLTOOLS.mlmodel] [--untrained]
"""
import argparse
import sys

import coremltools as ct


def nn_of(spec):
    return getattr(spec, spec.WhichOneof("Type"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repaired")
    ap.add_argument("--original")
    ap.add_argument("--reference")
    ap.add_argument("--untrained", action="store_true", help="layers must equal the original's exactly")
    a = ap.parse_args()
    spec = ct.utils.load_spec(a.repaired)
    ct.models.MLModel(a.repaired, skip_model_load=True)
    problems = []
    nn = nn_of(spec)
    if not spec.isUpdatable:
        problems.append("not updatable")
    if spec.specificationVersion < 4:
        problems.append(f"specificationVersion {spec.specificationVersion} < 4")
    if len(nn.updateParams.lossLayers) != 1:
        problems.append(f"{len(nn.updateParams.lossLayers)} loss layers")
    if a.reference:
        ref = ct.utils.load_spec(a.reference)
        rnn = nn_of(ref)
        for what, x, y in [("loss layers", list(nn.updateParams.lossLayers), list(rnn.updateParams.lossLayers)),
                           ("update parameters", nn.updateParams, rnn.updateParams),
                           ("training inputs", list(spec.description.trainingInput), list(ref.description.trainingInput)),
                           ("specificationVersion", spec.specificationVersion, ref.specificationVersion)]:
            if x != y:
                problems.append(f"{what} differ from coremltools':\n{x}\nvs\n{y}")
    if a.original:
        orig = ct.utils.load_spec(a.original)
        onn = nn_of(orig)
        if list(spec.description.input) != list(orig.description.input) or \
           list(spec.description.output) != list(orig.description.output) or \
           spec.description.metadata != orig.description.metadata:
            problems.append("inputs, outputs or metadata changed")
        for l, o in zip(nn.layers, onn.layers):
            if a.untrained and l != o:
                problems.append(f"layer {l.name} changed")
            elif (l.name, list(l.input), list(l.output), l.isUpdatable, l.WhichOneof("layer")) != \
                 (o.name, list(o.input), list(o.output), o.isUpdatable, o.WhichOneof("layer")):
                problems.append(f"layer {l.name} changed")
        if len(nn.layers) != len(onn.layers):
            problems.append("layer count changed")
        if nn.updateParams.optimizer != onn.updateParams.optimizer or nn.updateParams.epochs != onn.updateParams.epochs:
            problems.append("optimizer or epochs changed")
    loss = nn.updateParams.lossLayers[0] if nn.updateParams.lossLayers else None
    print(f"{a.repaired}: loads in coremltools {ct.__version__}; specificationVersion {spec.specificationVersion}; "
          f"loss {loss.WhichOneof('LossLayerType') if loss else None} "
          f"{getattr(loss, loss.WhichOneof('LossLayerType')) if loss else ''}".replace("\n", " ")
          + f"training inputs {[t.name for t in spec.description.trainingInput]}")
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
