"""coremltools.models.MLModel(...).predict(...) through mlconv on Linux (mlconv.coremltools)."""
import platform

import numpy as np
import pytest

import mlconv
from conftest import assert_close, assert_row_matches, classical_case, decode_json_value, fixture

ct = pytest.importorskip("coremltools", reason="coremltools is installed by Scripts/python-tests")


@pytest.fixture(autouse=True)
def enabled(cache_dir):
    mlconv.coremltools.enable()
    yield
    mlconv.coremltools.disable()


def test_without_mlconv_coremltools_cannot_predict_on_linux():
    if platform.system() == "Darwin":
        pytest.skip("Core ML is available on macOS")
    mlconv.coremltools.disable()
    path, inputs, _, _ = classical_case("pipeline_nested")
    m = ct.models.MLModel(str(path))
    with pytest.raises(Exception):
        m.predict(inputs[0])


def test_neural_network_classifier():
    d = fixture("coreml", "classifier")
    m = ct.models.MLModel(str(d / "model.mlmodel"))
    v = np.load(d / "input_v.npy")
    ref = np.load(d / "output_probs.npy")
    out = m.predict({"v": v})
    labels = list(m.get_spec().neuralNetworkClassifier.stringClassLabels.vector)
    assert set(out) == {"probs", "classLabel"}
    assert out["classLabel"] == labels[int(np.argmax(ref))] and isinstance(out["classLabel"], str)
    assert sorted(out["probs"]) == sorted(labels)
    assert_close([out["probs"][k] for k in labels], ref.tolist(), 1e-5, 1e-6, "probs")


@pytest.mark.parametrize("name", ["pipeline_classifier_scaler_logistic", "pipeline_nested", "pipeline_neural_network_knn"])
def test_pipelines_from_path_match_recorded_outputs(name):
    path, inputs, expected, case = classical_case(name)
    m = ct.models.MLModel(str(path))
    int_keys = name == "pipeline_classifier_scaler_logistic"
    for i, (row, exp) in enumerate(zip(inputs, expected)):
        row = {k: (np.array(decode_json_value(v), dtype=np.float64) if isinstance(v, list) else v) for k, v in row.items()}
        got = m.predict(row)
        assert set(got) == set(exp), f"{name}: {sorted(got)} vs {sorted(exp)}"
        assert_row_matches(got, exp, case, f"{name} row {i}", int_keys=int_keys)
    # A multiArray output is a NumPy array of the declared type and shape (pipeline_nested: Double 4).
    if name == "pipeline_nested":
        out = m.predict({k: np.array(v) for k, v in inputs[0].items()})["output"]
        assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (4,)


def test_model_from_spec_and_batch_predict():
    path, inputs, expected, case = classical_case("pipeline_classifier_scaler_logistic")
    spec = ct.utils.load_spec(str(path))
    m = ct.models.MLModel(spec)
    got = m.predict(inputs[:5])
    assert isinstance(got, list) and len(got) == 5
    for i, (g, e) in enumerate(zip(got, expected[:5])):
        assert_row_matches(g, e, case, f"spec batch row {i}", int_keys=True)


def test_image_input_classifier_takes_a_pil_image():
    from PIL import Image
    d = fixture("seed_coreml", "resnet50_lookalike")
    bgr = np.load(d / "input_image.npy")[0]
    assert np.array_equal(bgr, np.round(bgr)), "pixels are whole numbers"
    image = Image.fromarray(bgr[:, :, ::-1].astype(np.uint8), "RGB")  # the stored pixels are B, G, R
    m = ct.models.MLModel(str(d / "model.mlmodel"))
    out = m.predict({"image": image})
    labels = (d / "labels.txt").read_text().split()
    ref = np.load(d / "expected_probabilities.npy")
    assert set(out) == {"classLabelProbs", "classLabel"}
    assert isinstance(out["classLabel"], str) and out["classLabel"] == labels[int(np.argmax(ref))]
    assert sorted(out["classLabelProbs"]) == sorted(labels)
    assert_close([out["classLabelProbs"][k] for k in labels], ref.tolist(), 0, 1e-4, "classLabelProbs")


def test_a_model_mlconv_cannot_run_builds_and_predict_says_why():
    from conftest import SHARED
    path = SHARED / "corpus" / "mlmodel" / "aidev_ProductTagger_wordtagger.mlmodel"
    if not path.exists():
        pytest.skip(f"skipped: {path} not found")
    m = ct.models.MLModel(str(path))  # as on Linux without mlconv: the MLModel exists
    assert m.get_spec().WhichOneof("Type") == "wordTagger"
    with pytest.raises(mlconv.MLConvError) as e:
        m.predict({"text": "hello"})
    assert "wordTagger" in str(e.value) or "word tagger" in str(e.value).lower(), str(e.value)


def test_image_in_image_out():
    """hollance_Image2Image (corpus): RGB 256×256 → one linear activation 1·x + 0 → RGB 256×256
    image output, so the output image is the input image (spec: scale 1, biases 0)."""
    from PIL import Image
    from conftest import SHARED
    path = SHARED / "corpus" / "mlmodel" / "hollance_Image2Image.mlmodel"
    if not path.exists():
        pytest.skip(f"skipped: {path} not found")
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(256, 256, 3), dtype=np.uint8)
    m = ct.models.MLModel(str(path))
    out = m.predict({"image": Image.fromarray(pixels, "RGB")})
    assert set(out) == {"generatedImage"}
    img = out["generatedImage"]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (256, 256)
    assert np.array_equal(np.asarray(img), pixels)


@pytest.mark.parametrize("name,tol", [("dense_softmax_fp32", 1e-4), ("mobilenet_block_fp32", 1e-4), ("dense_softmax_fp16", 1e-2)])
def test_ml_program_package_matches_keras(name, tol):
    """An .mlpackage written by coremltools 8.3 from a Keras model (Fixtures/mlprogram): the output
    keys, shape, dtype (float32, as described) and Keras's recorded values."""
    d = fixture("mlprogram", name)
    m = ct.models.MLModel(str(d / "model.mlpackage"))
    x_name = next(p.name for p in d.iterdir() if p.name.startswith("input_"))[len("input_"):-len(".npy")]
    x = np.load(d / f"input_{x_name}.npy")
    ref = np.load(d / "expected_Identity.npy")
    out = m.predict({x_name: x})
    assert set(out) == {"Identity"}
    y = out["Identity"]
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == ref.shape
    scale = max(float(np.abs(ref).max()), 1e-12)
    assert float(np.abs(y - ref).max()) / scale <= tol
