"""Fixtures for flexible input shapes (docs/FLEXIBLE_SHAPES.md): Keras models run by Keras at
several input sizes, and Core ML neural networks with shapeRange / enumeratedShapes /
imageSizeRange inputs built with coremltools' NeuralNetworkBuilder, with NumPy references.

Run (from the repository root):

    PY=$(Scripts/coremltools8-env)   # coremltools 8.3, tensorflow-cpu 2.15 (tf.keras 2.15)
    $PY Scripts/make_flexible_shape_fixtures.py

Writes Fixtures/flexible/:
  fcn.h5                 tf.keras fully-convolutional model, input "image" (None, None, 3):
                         conv1 3x3 same + relu, pool 2x2 (padding same), conv2 1x1 (2 filters)
  fcn_x_HxW.npy          float32 [1, H, W, 3] inputs for (H, W) in SIZES
  fcn_y_HxW.npy          float32 Keras outputs (model.predict) for those inputs
  flat_dense.h5          tf.keras model (8, 8, 3) -> conv 3x3 same -> Flatten -> Dense(4): cannot
                         take another spatial size (the converter must refuse a flexible one)
  range_cnn.mlmodel      NeuralNetwork (spec 3+), multi-array input "x" [3, 8, 8] with shapeRange
                         C 3..3, H 4..16, W 4..unbounded; conv 3x3 same (2 out) + relu -> "y"
  enumerated_cnn.mlmodel the same network, input "x" with enumeratedShapes [3,8,8], [3,10,6]
  image_range.mlmodel    the same network on an RGB image input "image" 8x8 with imageSizeRange
                         width 4..32, height 4..32, scaler 1/255 and biases (-0.5, -0.25, 0)
  exact_range.mlmodel    the same network with EXACT_ARRAY_MAPPING: input "x" [1, 3, 8, 8] with an
                         N-D shape range [1, 3, 4..16, 4..unbounded] (references cnn_y_*)
  exact_image_range.mlmodel  EXACT_ARRAY_MAPPING with RANK5_IMAGE_MAPPING: the image model above
                         (references image_y_*)
  cnn_x_CxHxW.npy        float32 [C, H, W] multi-array inputs (Core ML order)
  cnn_y_CxHxW.npy        float32 [2, H, W] NumPy references of the network (float64 arithmetic)
  image_x_HxW.npy        float32 [H, W, 3] raw 0-255 pixels (R, G, B) of the image inputs
  image_y_HxW.npy        float32 [2, H, W] NumPy references for the image model
"""

import os
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "flexible")
SIZES = [(8, 8), (12, 10), (6, 16)]
CNN_SHAPES = [(3, 8, 8), (3, 12, 10), (3, 10, 6), (3, 4, 20)]
IMAGE_SIZES = [(8, 8), (12, 10), (5, 30)]


def keras_fixtures(rng):
    import tensorflow as tf
    from tensorflow import keras
    keras.utils.set_random_seed(7)
    x = keras.Input(shape=(None, None, 3), name="image")
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu", name="conv1")(x)
    h = keras.layers.MaxPooling2D(2, padding="same", name="pool")(h)
    y = keras.layers.Conv2D(2, 1, name="conv2")(h)
    m = keras.Model(x, y, name="fcn")
    for layer in m.layers:
        ws = layer.get_weights()
        if ws:
            layer.set_weights([rng.normal(0, 0.5, w.shape).astype(np.float32) for w in ws])
    m.save(os.path.join(OUT, "fcn.h5"))
    for (hh, ww) in SIZES:
        xi = rng.uniform(-1, 1, (1, hh, ww, 3)).astype(np.float32)
        yi = m.predict(xi, verbose=0).astype(np.float32)
        np.save(os.path.join(OUT, f"fcn_x_{hh}x{ww}.npy"), xi)
        np.save(os.path.join(OUT, f"fcn_y_{hh}x{ww}.npy"), yi)

    x = keras.Input(shape=(8, 8, 3), name="image")
    h = keras.layers.Conv2D(2, 3, padding="same", name="conv")(x)
    h = keras.layers.Flatten(name="flatten")(h)
    y = keras.layers.Dense(4, name="dense")(h)
    keras.Model(x, y, name="flat_dense").save(os.path.join(OUT, "flat_dense.h5"))
    del tf


def conv_same_relu(x, W, b):
    """ConvolutionLayerParams 3x3, stride 1, same padding, + ReLU; x [C, H, W], W [Cout, Cin, 3, 3]."""
    xp = np.pad(x.astype(np.float64), [(0, 0), (1, 1), (1, 1)])
    _, H, Wd = x.shape
    y = np.zeros((W.shape[0], H, Wd))
    for i in range(3):
        for j in range(3):
            y += np.tensordot(W[:, :, i, j].astype(np.float64), xp[:, i:i + H, j:j + Wd], axes=(1, 0))
    y += b.astype(np.float64)[:, None, None]
    return np.maximum(y, 0)


def build_network(input_name, input_feature, W, b):
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder
    builder = NeuralNetworkBuilder([(input_name, input_feature)], [("y", datatypes.Array(2, 8, 8))])
    builder.add_convolution("conv", kernel_channels=3, output_channels=2, height=3, width=3, stride_height=1,
                            stride_width=1, border_mode="same", groups=1, W=np.transpose(W, (2, 3, 1, 0)), b=b,
                            has_bias=True, input_name=input_name, output_name="conv_out")
    builder.add_activation("relu", "RELU", "conv_out", "y")
    return builder


def coreml_fixtures(rng):
    import coremltools as ct
    from coremltools.models import datatypes
    from coremltools.models.neural_network import flexible_shape_utils as fsu
    W = rng.normal(0, 0.5, (2, 3, 3, 3)).astype(np.float32)
    b = rng.normal(0, 0.1, (2,)).astype(np.float32)

    builder = build_network("x", datatypes.Array(3, 8, 8), W, b)
    spec = builder.spec
    fsu.update_multiarray_shape_range(spec, "x", fsu.NeuralNetworkMultiArrayShapeRange(
        {"C": (3, 3), "H": (4, 16), "W": (4, -1)}))
    ct.utils.save_spec(spec, os.path.join(OUT, "range_cnn.mlmodel"))

    builder = build_network("x", datatypes.Array(3, 8, 8), W, b)
    spec = builder.spec
    fsu.add_enumerated_multiarray_shapes(spec, "x", [fsu.NeuralNetworkMultiArrayShape(3, 10, 6)])
    ct.utils.save_spec(spec, os.path.join(OUT, "enumerated_cnn.mlmodel"))

    for shape in CNN_SHAPES:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        np.save(os.path.join(OUT, "cnn_x_%dx%dx%d.npy" % shape), x)
        np.save(os.path.join(OUT, "cnn_y_%dx%dx%d.npy" % shape), conv_same_relu(x, W, b).astype(np.float32))

    scale, bias = 1 / 255.0, [-0.5, -0.25, 0.0]
    builder = build_network("image", datatypes.Array(3, 8, 8), W, b)
    builder.set_pre_processing_parameters(image_input_names=["image"], is_bgr=False, red_bias=bias[0],
                                          green_bias=bias[1], blue_bias=bias[2], image_scale=scale)
    spec = builder.spec
    # The image type: NeuralNetworkBuilder declares multi-arrays; make "image" an RGB 8x8 image.
    t = spec.description.input[0].type
    t.imageType.width, t.imageType.height = 8, 8
    t.imageType.colorSpace = ct.proto.FeatureTypes_pb2.ImageFeatureType.RGB
    fsu.update_image_size_range(spec, "image", fsu.NeuralNetworkImageSizeRange(
        height_range=(4, 32), width_range=(4, 32)))
    ct.utils.save_spec(spec, os.path.join(OUT, "image_range.mlmodel"))
    for (hh, ww) in IMAGE_SIZES:
        px = rng.integers(0, 256, (hh, ww, 3)).astype(np.float32)
        pre = np.transpose(px.astype(np.float64) * scale + np.array(bias)[None, None, :], (2, 0, 1))
        np.save(os.path.join(OUT, f"image_x_{hh}x{ww}.npy"), px)
        np.save(os.path.join(OUT, f"image_y_{hh}x{ww}.npy"), conv_same_relu(pre, W, b).astype(np.float32))

    # EXACT_ARRAY_MAPPING: the rank-4 input [1, 3, 8, 8] with an N-D shape range, and a rank-5
    # mapped image input with a size range (same weights: references cnn_y_* and image_y_*).
    from coremltools.models.neural_network import NeuralNetworkBuilder
    builder = NeuralNetworkBuilder([("x", datatypes.Array(1, 3, 8, 8))], [("y", None)], disable_rank5_shape_mapping=True)
    builder.add_convolution("conv", kernel_channels=3, output_channels=2, height=3, width=3, stride_height=1,
                            stride_width=1, border_mode="same", groups=1, W=np.transpose(W, (2, 3, 1, 0)), b=b,
                            has_bias=True, input_name="x", output_name="conv_out")
    builder.add_activation("relu", "RELU", "conv_out", "y")
    spec = builder.spec
    fsu.set_multiarray_ndshape_range(spec, "x", lower_bounds=[1, 3, 4, 4], upper_bounds=[1, 3, 16, -1])
    ct.utils.save_spec(spec, os.path.join(OUT, "exact_range.mlmodel"))

    builder = NeuralNetworkBuilder([("image", datatypes.Array(3, 8, 8))], [("y", None)], disable_rank5_shape_mapping=True)
    builder.add_convolution("conv", kernel_channels=3, output_channels=2, height=3, width=3, stride_height=1,
                            stride_width=1, border_mode="same", groups=1, W=np.transpose(W, (2, 3, 1, 0)), b=b,
                            has_bias=True, input_name="image", output_name="conv_out")
    builder.add_activation("relu", "RELU", "conv_out", "y")
    builder.set_pre_processing_parameters(image_input_names=["image"], is_bgr=False, red_bias=bias[0],
                                          green_bias=bias[1], blue_bias=bias[2], image_scale=scale)
    spec = builder.spec
    t = spec.description.input[0].type
    t.imageType.width, t.imageType.height = 8, 8
    t.imageType.colorSpace = ct.proto.FeatureTypes_pb2.ImageFeatureType.RGB
    spec.neuralNetwork.imageInputShapeMapping = ct.proto.NeuralNetwork_pb2.RANK5_IMAGE_MAPPING
    fsu.update_image_size_range(spec, "image", fsu.NeuralNetworkImageSizeRange(
        height_range=(4, 32), width_range=(4, 32)))
    ct.utils.save_spec(spec, os.path.join(OUT, "exact_image_range.mlmodel"))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261202)
    keras_fixtures(rng)
    coreml_fixtures(rng)
    print("wrote", OUT, sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
