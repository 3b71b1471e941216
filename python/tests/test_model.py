"""mlconv.Model against recorded references (Fixtures/)."""
import numpy as np
import pytest

import mlconv
from conftest import assert_close, assert_row_matches, classical_case, decode_json_value, fixture


@pytest.mark.parametrize("name", ["pipeline_classifier_scaler_logistic", "pipeline_nested",
                                  "pipeline_regressor_imputer_onehot_trees", "knn_linear_k1_uniform_string"])
def test_classical_models_match_recorded_outputs(name, cache_dir):
    path, inputs, expected, case = classical_case(name)
    model = mlconv.Model(path)
    int_keys = any(o.get("key_type") == "int64" for o in model.output_description.values())
    for i, (row, exp) in enumerate(zip(inputs, expected)):
        row = {k: decode_json_value(v) for k, v in row.items()}
        assert_row_matches(model.predict(row), exp, case, f"{name} row {i}", int_keys=int_keys)


def test_predict_batch_equals_one_by_one(cache_dir):
    path, inputs, expected, case = classical_case("pipeline_classifier_scaler_logistic")
    model = mlconv.Model(path)
    batch = model.predict_batch(inputs)
    assert len(batch) == len(inputs)
    for i, (got, exp) in enumerate(zip(batch, expected)):
        assert_row_matches(got, exp, case, f"batch row {i}", int_keys=True)
    assert model.predict_batch([]) == []


def test_descriptions(cache_dir):
    path, _, _, _ = classical_case("pipeline_classifier_scaler_logistic")
    model = mlconv.Model(path)
    assert list(model.input_description) == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert model.input_description["sepal_length"]["type"] == "double"
    assert list(model.output_description) == ["classLabel", "classProbability"]
    assert model.output_description["classProbability"]["type"] == "dictionary"
    assert model.output_description["classProbability"]["key_type"] == "int64"


def test_neural_network_classifier_probabilities(cache_dir):
    d = fixture("coreml", "classifier")
    model = mlconv.Model(d / "model.mlmodel")
    v = np.load(d / "input_v.npy")
    ref = np.load(d / "output_probs.npy")
    out = model.predict({"v": v})
    labels = model.class_labels
    assert set(out) == {"probs", "classLabel"}
    assert isinstance(out["classLabel"], str) and out["classLabel"] == labels[int(np.argmax(ref))]
    assert sorted(out["probs"]) == sorted(labels)
    assert_close([out["probs"][k] for k in labels], ref.tolist(), 1e-5, 1e-6, "probs")


def test_keras_model_outputs_match_keras(cache_dir):
    d = fixture("keras", "dense_ranks_k2")
    model = mlconv.Model(d / "model.h5")
    names = list(model.input_description)
    inputs = {n: np.load(d / f"input_{i}.npy") for i, n in enumerate(names)}
    out = model.predict(inputs)
    for i, name in enumerate(model.output_description):
        ref = np.load(d / f"output_{i}.npy")
        assert out[name].dtype == np.float32
        assert_close(out[name].reshape(ref.shape), ref, 1e-4, 1e-5, name)


def test_errors_are_typed(cache_dir, tmp_path):
    path, inputs, _, _ = classical_case("pipeline_classifier_scaler_logistic")
    model = mlconv.Model(path)
    row = dict(inputs[0])
    del row["petal_width"]
    with pytest.raises(mlconv.MLConvError) as e:
        model.predict(row)
    assert "petal_width" in str(e.value)
    bad = tmp_path / "bad.mlmodel"
    bad.write_bytes(b"not a model")
    with pytest.raises(mlconv.MLConvError) as e:
        mlconv.Model(bad)
    assert "bad.mlmodel" in str(e.value)
    model.close()
    with pytest.raises(mlconv.MLConvError):
        model.predict(inputs[0])


def test_a_value_that_does_not_convert_is_a_feature_error_naming_the_input(cache_dir):
    # Regression: a string where a number is expected raised NumPy's bare ValueError.
    path, inputs, _, _ = classical_case("pipeline_classifier_scaler_logistic")
    model = mlconv.Model(path)
    row = dict(inputs[0])
    row["petal_width"] = "wide"
    with pytest.raises(mlconv.MLConvError) as e:
        model.predict(row)
    assert e.value.status == 3
    assert "input 'petal_width'" in str(e.value) and "'wide'" in str(e.value)
    d = fixture("keras", "dense_ranks_k2")
    model = mlconv.Model(d / "model.h5")
    name = list(model.input_description)[0]
    with pytest.raises(mlconv.MLConvError) as e:
        model.predict({name: "not numbers"})
    assert e.value.status == 3
    assert f"input '{name}'" in str(e.value)
