"""ML program fixtures for the MIL ops of issue 11 group B (MILOpsMoreB.swift).

Run (from the repository root):

    PY=$(Scripts/coremltools8-env)   # coremltools 8.3
    $PY Scripts/make_mlprogram_fixtures_b.py

Writes, with coremltools' MIL Builder (FLOAT32 programs):

Fixtures/mlprogram/opb_<case>/   (run by MILProgramRunTests like every Fixtures/mlprogram case)
  model.mlpackage, input_<name>.npy, expected_<name>.npy (NumPy of the op's formula as
  coremltools' op definitions state it, float64 arithmetic; int results stored as float32),
  case.json {"inputs", "outputs", "precision": "fp32", "source": "numpy"}.
  Cases: space_to_depth, depth_to_space (TensorFlow DCR order), pixel_shuffle, pixel_unshuffle
  (PyTorch CRD order), space_to_batch, batch_to_space (TensorFlow SpaceToBatchND order; the
  references are first checked against coremltools' own smoke-test vectors), reshape_like,
  non_zero (numpy.argwhere; data-dependent shape), nms, nms_per_class (iOS15 layout) and
  nms_ios17 (iOS17 layout) against a greedy NumPy NMS of the definition.

Fixtures/mlprogram_random/<case>/   (run by MILRandomOpsTests)
  model.mlpackage and case.json {"outputs": {name: {"op", parameters..., "seed", "shape"}},
  "inputs": {name: file}}: random ops cannot match Core ML's numbers (its generator is not
  specified), so the test checks shape, dtype, range, moments and frequencies from the
  parameters recorded here, and determinism for a fixed seed.
"""
import json
import os
import shutil
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import coremltools as ct  # noqa: E402
from coremltools.converters.mil import Builder as mb  # noqa: E402
from coremltools.converters.mil.mil import types  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlprogram_fixture_common import OUT, ROOT, case_meta, write_case  # noqa: E402

OUT_RANDOM = os.path.join(ROOT, "Fixtures", "mlprogram_random")


def convert(prog, target):
    return ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                      compute_precision=ct.precision.FLOAT32)


def save_case(name, prog, inputs, outputs, target=ct.target.iOS15):
    ml = convert(prog, target)
    size = write_case(os.path.join(OUT, name), ml, inputs, outputs, case_meta(inputs, outputs), input_dtype=None)
    print(f"{name}: {size} bytes")


# ---- NumPy references of the op definitions (NCHW) -----------------------------------------

def space_to_depth_ref(x, b):
    n, c, h, w = x.shape  # output channel (i·b + j)·C + c holds x[c, h·b + i, w·b + j]
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)


def depth_to_space_ref(x, b):
    n, c, h, w = x.shape
    co = c // (b * b)
    return x.reshape(n, b, b, co, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, co, h * b, w * b)


def pixel_shuffle_ref(x, f):
    n, c, h, w = x.shape  # y[c, h·f + i, w·f + j] = x[c·f² + i·f + j, h, w]
    co = c // (f * f)
    return x.reshape(n, co, f, f, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, co, h * f, w * f)


def pixel_unshuffle_ref(x, f):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // f, f, w // f, f).transpose(0, 1, 3, 5, 2, 4).reshape(n, c * f * f, h // f, w // f)


def space_to_batch_ref(x, block, pads):
    xp = np.pad(x, [(0, 0), (0, 0), tuple(pads[0]), tuple(pads[1])])
    n, c, h, w = xp.shape
    b0, b1 = block
    y = xp.reshape(n, c, h // b0, b0, w // b1, b1).transpose(3, 5, 0, 1, 2, 4)
    return y.reshape(b0 * b1 * n, c, h // b0, w // b1)


def batch_to_space_ref(x, block, crops):
    bn, c, h, w = x.shape
    b0, b1 = block
    n = bn // (b0 * b1)
    y = x.reshape(b0, b1, n, c, h, w).transpose(2, 3, 4, 0, 5, 1).reshape(n, c, h * b0, w * b1)
    return y[:, :, crops[0][0]:h * b0 - crops[0][1], crops[1][0]:w * b1 - crops[1][1]]


def check_space_batch_refs():
    """The formulas above reproduce coremltools' smoke-test vectors of space_to_batch /
    batch_to_space (ops/tests/iOS14/test_tensor_transformation.py)."""
    x = np.arange(1, 17, dtype=np.float64).reshape(2, 1, 2, 4)
    y = np.array([[0, 1, 3], [0, 9, 11], [0, 2, 4], [0, 10, 12], [0, 5, 7], [0, 13, 15], [0, 6, 8], [0, 14, 16]],
                 dtype=np.float64).reshape(8, 1, 1, 3)
    assert np.array_equal(space_to_batch_ref(x, [2, 2], [[0, 0], [2, 0]]), y)
    assert np.array_equal(batch_to_space_ref(y, [2, 2], [[0, 0], [2, 0]]), x)


def iou(a, b):
    """IoU of two (center x, center y, width, height) boxes."""
    ax0, ax1, ay0, ay1 = a[0] - a[2] / 2, a[0] + a[2] / 2, a[1] - a[3] / 2, a[1] + a[3] / 2
    bx0, bx1, by0, by1 = b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2
    inter = max(0.0, min(ax1, bx1) - max(ax0, bx0)) * max(0.0, min(ay1, by1) - max(ay0, by0))
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def nms_ref(boxes, scores, iou_thr, score_thr, max_boxes, per_class):
    """Per batch: box score = its best class score; boxes above score_thr visited by decreasing
    score; a box is dropped when its IoU with a kept box (of its class, per_class) exceeds
    iou_thr; at most max_boxes kept. Padding: zeros, indices −1."""
    nb, n, k = scores.shape
    ob, os_, oi, oc = np.zeros((nb, max_boxes, 4)), np.zeros((nb, max_boxes, k)), -np.ones((nb, max_boxes)), np.zeros(nb)
    margin = np.inf
    for b in range(nb):
        best, cls = scores[b].max(axis=1), scores[b].argmax(axis=1)
        kept = []
        for i in sorted(range(n), key=lambda i: (-best[i], i)):
            if not best[i] > score_thr or len(kept) == max_boxes:
                continue
            ious = [iou(boxes[b, i], boxes[b, j]) for j in kept if not per_class or cls[j] == cls[i]]
            margin = min([margin] + [abs(v - iou_thr) for v in ious])
            if all(v <= iou_thr for v in ious):
                kept.append(i)
        for r, i in enumerate(kept):
            ob[b, r], os_[b, r], oi[b, r] = boxes[b, i], scores[b, i], i
        oc[b] = len(kept)
    assert margin > 1e-3, "an IoU lies too close to the threshold; pick other boxes"
    return ob, os_, oi, oc


# ---- cases ----------------------------------------------------------------------------------

def reorg_cases():
    rng = np.random.RandomState(71)
    x46 = rng.uniform(-1, 1, (1, 3, 4, 6)).astype(np.float32)
    x823 = rng.uniform(-1, 1, (1, 8, 2, 3)).astype(np.float32)
    x2 = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    x8 = rng.uniform(-1, 1, (8, 2, 2, 3)).astype(np.float32)
    x24 = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    specs = [
        ("space_to_depth", x46, lambda x: mb.space_to_depth(x=x, block_size=2), lambda v: space_to_depth_ref(v, 2), ct.target.iOS15),
        ("depth_to_space", x823, lambda x: mb.depth_to_space(x=x, block_size=2), lambda v: depth_to_space_ref(v, 2), ct.target.iOS15),
        ("pixel_shuffle", x823, lambda x: mb.pixel_shuffle(x=x, upscale_factor=2), lambda v: pixel_shuffle_ref(v, 2), ct.target.iOS15),
        ("pixel_unshuffle", x46, lambda x: mb.pixel_unshuffle(x=x, downscale_factor=np.uint32(2)), lambda v: pixel_unshuffle_ref(v, 2),
         ct.target.iOS16),
        ("space_to_batch", x2, lambda x: mb.space_to_batch(x=x, block_shape=np.array([2, 2], np.int32),
                                                           paddings=np.array([[0, 0], [1, 2]], np.int32)),
         lambda v: space_to_batch_ref(v, [2, 2], [[0, 0], [1, 2]]), ct.target.iOS15),
        ("batch_to_space", x8, lambda x: mb.batch_to_space(x=x, block_shape=np.array([2, 2], np.int32),
                                                           crops=np.array([[1, 0], [0, 2]], np.int32)),
         lambda v: batch_to_space_ref(v, [2, 2], [[1, 0], [0, 2]]), ct.target.iOS15),
        ("reshape_like", x24, lambda x: mb.reshape_like(x=x, ref_tensors=(mb.const(val=np.zeros((6, 7), np.float32)), x),
                                                        begins=(0, -1), ends=(1, 0), end_masks=(False, True)),
         lambda v: v.reshape(6, 4), ct.target.iOS16),
    ]
    for name, xv, fn, ref, target in specs:
        @mb.program(input_specs=[mb.TensorSpec(shape=xv.shape)], opset_version=target)
        def prog(x_in):
            return mb.identity(x=fn(x_in), name="y")
        save_case(f"opb_{name}", prog, {"x_in": xv}, {"y": ref(xv.astype(np.float64))}, target)

    # non_zero: a data-dependent [N, rank] result (N = 7 non-zeros of 12).
    xz = np.array([[0, 1.5, 0, -2], [3, 0, 0, 0], [0.25, 4, 0, 5]], np.float32)
    xz[2, 3] = 0
    xz[1, 2] = -1

    @mb.program(input_specs=[mb.TensorSpec(shape=xz.shape)])
    def nz(x_in):
        return mb.identity(x=mb.non_zero(x=x_in), name="y")
    save_case("opb_non_zero", nz, {"x_in": xz}, {"y": np.argwhere(xz)})


def nms_cases():
    # Seed and thresholds chosen so that suppression, per-class suppression, the score threshold
    # and padding all change the result (kept counts: [7, 5], per class [8, 8], iOS17 [8, 5]).
    rng = np.random.RandomState(7)
    nb, n, k, max_boxes = 2, 12, 3, 10
    centers = rng.uniform(0, 10, (nb, n, 2))
    sizes = rng.uniform(1.5, 4, (nb, n, 2))
    boxes = np.concatenate([centers, sizes], axis=-1).astype(np.float32)
    scores = rng.permutation(nb * n * k).reshape(nb, n, k).astype(np.float32) / (nb * n * k) + 0.01
    iou_thr, score_thr = 0.1, 0.3
    for name, per_class in [("nms", False), ("nms_per_class", True)]:
        @mb.program(input_specs=[mb.TensorSpec(shape=boxes.shape), mb.TensorSpec(shape=scores.shape)])
        def prog(boxes_in, scores_in):
            b, s, i, c = mb.non_maximum_suppression(boxes=boxes_in, scores=scores_in, iou_threshold=np.float32(iou_thr),
                                                    score_threshold=np.float32(score_thr), max_boxes=max_boxes,
                                                    per_class_suppression=per_class)
            return (mb.identity(x=b, name="sel_boxes"), mb.identity(x=s, name="sel_scores"), mb.identity(x=i, name="sel_indices"),
                    mb.identity(x=c, name="counts"))
        ob, os_, oi, oc = nms_ref(boxes.astype(np.float64), scores.astype(np.float64), iou_thr, score_thr, max_boxes, per_class)
        assert 0 < oc.min() and oc.max() <= max_boxes
        save_case(f"opb_{name}", prog, {"boxes_in": boxes, "scores_in": scores},
                  {"sel_boxes": ob, "sel_scores": os_, "sel_indices": oi, "counts": oc})

    # iOS17: boxes [n, 4, B], scores [n, K, B]; no score threshold; three outputs.
    bt, st = boxes.transpose(0, 2, 1).copy(), scores.transpose(0, 2, 1).copy()

    @mb.program(input_specs=[mb.TensorSpec(shape=bt.shape), mb.TensorSpec(shape=st.shape)], opset_version=ct.target.iOS17)
    def prog17(boxes_in, scores_in):
        b, s, i = mb.non_maximum_suppression(boxes=boxes_in, scores=scores_in, iou_threshold=np.float32(iou_thr),
                                             max_boxes=max_boxes)
        return mb.identity(x=b, name="sel_boxes"), mb.identity(x=s, name="sel_scores"), mb.identity(x=i, name="sel_indices")
    ob, os_, oi, _ = nms_ref(boxes.astype(np.float64), scores.astype(np.float64), iou_thr, -np.inf, max_boxes, False)
    save_case("opb_nms_ios17", prog17, {"boxes_in": bt, "scores_in": st},
              {"sel_boxes": ob.transpose(0, 2, 1), "sel_scores": os_.transpose(0, 2, 1), "sel_indices": oi}, ct.target.iOS17)


def random_cases():
    """Programs of random ops; case.json records each output's op and parameters."""
    def save(name, prog, outputs, inputs=None, target=ct.target.iOS15):
        ml = convert(prog, target)
        d = os.path.join(OUT_RANDOM, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        ml.save(os.path.join(d, "model.mlpackage"))
        files = {}
        for k, v in (inputs or {}).items():
            np.save(os.path.join(d, f"input_{k}.npy"), v)
            files[k] = f"input_{k}.npy"
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"inputs": files, "outputs": outputs}, f, indent=1)
        print(f"random/{name}")

    one = [mb.TensorSpec(shape=(1,))]

    @mb.program(input_specs=one)
    def normal(x):
        return (mb.random_normal(shape=np.array([200, 250], np.int32), mean=1.5, stddev=2.0, seed=7, name="y_seed7"),
                mb.random_normal(shape=np.array([200, 250], np.int32), mean=1.5, stddev=2.0, seed=8, name="y_seed8"),
                mb.identity(x=x, name="x_out"))
    save("random_normal", normal, {k: {"op": "random_normal", "mean": 1.5, "stddev": 2.0, "seed": s, "shape": [200, 250]}
                                   for k, s in [("y_seed7", 7), ("y_seed8", 8)]})

    @mb.program(input_specs=one)
    def uniform(x):
        return (mb.random_uniform(shape=np.array([50000], np.int32), low=-2.0, high=3.0, seed=11, name="y"),
                mb.identity(x=x, name="x_out"))
    save("random_uniform", uniform, {"y": {"op": "random_uniform", "low": -2.0, "high": 3.0, "seed": 11, "shape": [50000]}})

    @mb.program(input_specs=one)
    def bernoulli(x):
        return (mb.random_bernoulli(shape=np.array([100, 500], np.int32), prob=0.3, seed=5, name="y"),
                mb.identity(x=x, name="x_out"))
    save("random_bernoulli", bernoulli, {"y": {"op": "random_bernoulli", "prob": 0.3, "seed": 5, "shape": [100, 500]}})

    # Shape read at run time from an int32 input (the dynamic fill path).
    shape_in = np.array([40, 25, 30], np.int32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(3,), dtype=types.int32)])
    def dynamic(shape):
        return mb.random_uniform(shape=shape, low=0.0, high=1.0, seed=3, name="y")
    save("random_uniform_dynamic", dynamic, {"y": {"op": "random_uniform", "low": 0.0, "high": 1.0, "seed": 3,
                                                   "shape": shape_in.tolist()}}, inputs={"shape": shape_in})

    # Categorical: rows of probabilities (mode probs) and of logits; 20000 samples each.
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.05, 0.05, 0.2]], np.float32)
    logits = np.array([[0.0, 1.0, -1.0], [2.0, 0.5, 0.5]], np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=probs.shape), mb.TensorSpec(shape=logits.shape)])
    def categorical(p, l):
        return (mb.random_categorical(x=p, mode="probs", size=20000, seed=9, name="y_probs"),
                mb.random_categorical(x=l, mode="logits", size=20000, seed=10, name="y_logits"))
    sm = np.exp(logits.astype(np.float64))
    sm /= sm.sum(axis=1, keepdims=True)
    save("random_categorical", categorical,
         {"y_probs": {"op": "random_categorical", "probabilities": probs.astype(np.float64).tolist(), "seed": 9, "shape": [2, 20000]},
          "y_logits": {"op": "random_categorical", "probabilities": sm.tolist(), "seed": 10, "shape": [2, 20000]}},
         inputs={"p": probs, "l": logits})


if __name__ == "__main__":
    check_space_batch_refs()
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(OUT_RANDOM, exist_ok=True)
    reorg_cases()
    nms_cases()
    random_cases()
