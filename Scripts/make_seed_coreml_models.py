"""Small look-alikes of two classic Core ML image classifiers, with NumPy references.

Run (from the repository root):

    PY=$(Scripts/coremltools-env)   # coremltools 7.2
    $PY Scripts/make_seed_coreml_models.py

Writes Fixtures/seed_coreml/<name>/ for
  googlenet_places205_lookalike  GoogLeNet-style (Places205): 224x224 BGR image input with a
                                 per-pixel mean image subtracted (NeuralNetworkMeanImage), 7x7/2
                                 conv, max pools, two LRN layers, two inception modules (1x1,
                                 1x1->3x3, 1x1->5x5, 3x3 max pool->1x1 branches, channel concat),
                                 global average pool, inner product, softmax; 205 labels.
  resnet50_lookalike             ResNet50-style: 224x224 BGR image input with channel biases
                                 (ImageScaler), 7x7/2 conv + batchnorm + relu, max pool, three
                                 stages of bottleneck blocks (1x1, 3x3, 1x1 convs with batchnorm,
                                 projection or identity shortcut, residual add, relu), global
                                 average pool, inner product, softmax; 1000 labels.
Channel widths are reduced (8-64) so the files stay small. Weights come from a generator seeded
with a fixed number; labels are synthetic (place_000..., class_000...), since no real label list
for these models is available to us.

Each directory holds
  model.mlmodel   NeuralNetworkClassifier with classic (v1, rank-5) layers only
  input_image.npy float32 [1, 224, 224, 3]: the raw 0-255 pixel values fed to the image input,
                  rows x columns x channels in the image's colour-space order (B, G, R), before
                  any preprocessing
  expected_probabilities.npy  float64 [classes]: softmax output computed in NumPy from the
                  formulas in NeuralNetwork.proto's comments (float64 arithmetic)
  labels.txt      the class labels in output order
"""

import os
import numpy as np
import coremltools as ct
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "seed_coreml")
HW = 224


def f32(a):
    return np.asarray(a, dtype=np.float32)


# ---- NumPy references of the proto formulas (C x H x W, float64) ----

def conv(x, W, b, stride, pad):
    """ConvolutionLayerParams, valid padding with explicit symmetric amounts; W [Cout, Cin, kH, kW]."""
    xp = np.pad(x, [(0, 0), (pad, pad), (pad, pad)])
    co, ci, kh, kw = W.shape
    _, H, Wd = xp.shape
    Ho, Wo = (H - kh) // stride + 1, (Wd - kw) // stride + 1
    y = np.zeros((co, Ho, Wo))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
            y += np.tensordot(W[:, :, i, j].astype(np.float64), patch, axes=(1, 0))
    return y + b.astype(np.float64).reshape(-1, 1, 1)


def maxpool(x, k, s, pad):
    """PoolingLayerParams MAX; padded cells never win (pad with -inf)."""
    xp = np.pad(x, [(0, 0), (pad, pad), (pad, pad)], constant_values=-np.inf)
    C, H, W = xp.shape
    Ho, Wo = (H - k) // s + 1, (W - k) // s + 1
    y = np.full((C, Ho, Wo), -np.inf)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, xp[:, i:i + s * (Ho - 1) + 1:s, j:j + s * (Wo - 1) + 1:s])
    return y


def lrn(x, size, alpha, beta, k):
    """LRNLayerParams: y_c = x_c / (k + alpha/size * sum of x^2 over channels [c-(size-1)/2, c+size/2])^beta."""
    C = x.shape[0]
    sq = x ** 2
    s = np.zeros_like(x)
    for c in range(C):
        s[c] = sq[max(0, c - (size - 1) // 2):min(C - 1, c + size // 2) + 1].sum(0)
    return x / (k + alpha / size * s) ** beta


def bn(x, g, b, m, v, eps):
    """BatchnormLayerParams: gamma * (x - mean) / sqrt(variance + epsilon) + beta."""
    r = lambda a: a.astype(np.float64).reshape(-1, 1, 1)
    return r(g) * (x - r(m)) / np.sqrt(r(v) + np.float64(np.float32(eps))) + r(b)


def relu(x):
    return np.maximum(x, 0)


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


# ---- builder helpers that also run the reference ----

class Net:
    def __init__(self, rng, builder):
        self.rng, self.b = rng, builder

    def conv(self, name, x, inp, cout, k, stride=1, pad=0, relu_after=True, bias=True):
        cin = x.shape[0]
        W = f32(self.rng.normal(scale=np.sqrt(2.0 / (cin * k * k)), size=(cout, cin, k, k)))
        b = f32(self.rng.normal(scale=0.05, size=cout)) if bias else f32(np.zeros(cout))
        # NeuralNetworkBuilder takes weights as [kH, kW, Cin, Cout]
        self.b.add_convolution(name, kernel_channels=cin, output_channels=cout, height=k, width=k,
                               stride_height=stride, stride_width=stride, border_mode="valid", groups=1,
                               W=W.transpose(2, 3, 1, 0), b=b if bias else None, has_bias=bias,
                               input_name=inp, output_name=name,
                               padding_top=pad, padding_bottom=pad, padding_left=pad, padding_right=pad)
        y = conv(x, W, b, stride, pad)
        if relu_after:
            self.b.add_activation(name + "_relu", "RELU", name, name + "_relu")
            return relu(y), name + "_relu"
        return y, name

    def bn(self, name, x, inp):
        C = x.shape[0]
        g = f32(self.rng.uniform(0.5, 1.2, C)); be = f32(self.rng.normal(scale=0.1, size=C))
        m = f32(self.rng.normal(scale=0.1, size=C)); v = f32(self.rng.uniform(0.5, 2.0, C))
        eps = 1e-5
        self.b.add_batchnorm(name, C, g, be, mean=m, variance=v, input_name=inp, output_name=name, epsilon=eps)
        return bn(x, g, be, m, v, eps), name

    def maxpool(self, name, x, inp, k, s, pad):
        self.b.add_pooling(name, height=k, width=k, stride_height=s, stride_width=s, layer_type="MAX",
                           padding_type="VALID", input_name=inp, output_name=name,
                           padding_top=pad, padding_bottom=pad, padding_left=pad, padding_right=pad)
        return maxpool(x, k, s, pad), name

    def lrn(self, name, x, inp, size=5, alpha=1e-4, beta=0.75, k=1.0):
        self.b.add_lrn(name, inp, name, alpha=alpha, beta=beta, local_size=size, k=k)
        return lrn(x, size, np.float64(np.float32(alpha)), np.float64(np.float32(beta)), np.float64(np.float32(k))), name

    def head(self, x, inp, classes, out):
        self.b.add_pooling("global_pool", height=1, width=1, stride_height=1, stride_width=1, layer_type="AVERAGE",
                           padding_type="VALID", input_name=inp, output_name="global_pool", is_global=True)
        g = x.mean(axis=(1, 2))
        W = self.rng.normal(size=(classes, len(g)))
        W = f32(W * (1.5 / (W @ (g - g.mean())).std()))  # logits spread ~1.5, so the top-5 is not one-hot
        b = f32(self.rng.normal(scale=0.1, size=classes))
        self.b.add_inner_product("fc", W=W, b=b, input_channels=len(g), output_channels=classes, has_bias=True,
                                 input_name="global_pool", output_name="fc")
        self.b.add_softmax("softmax", "fc", out)
        return softmax(W.astype(np.float64) @ g + b)


def new_builder(classes, labels):
    b = NeuralNetworkBuilder([("image", datatypes.Array(3, HW, HW))], [("classLabelProbs", datatypes.Array(classes))],
                             mode="classifier")
    b.set_class_labels(labels, predicted_feature_name="classLabel", prediction_blob="classLabelProbs")
    return b


def raw_image(rng):
    """A smooth, deterministic 224x224x3 test picture in 0-255 (integers): gradients plus noise."""
    yy, xx = np.mgrid[0:HW, 0:HW] / (HW - 1.0)
    base = np.stack([255 * xx, 255 * yy, 127 + 100 * np.sin(6 * xx + 3 * yy)], axis=-1)
    return np.clip(np.round(base + rng.normal(scale=20, size=base.shape)), 0, 255).astype(np.float32)


def googlenet():
    rng = np.random.default_rng(205)
    labels = ["place_%03d" % i for i in range(205)]
    b = new_builder(205, labels)
    pix = raw_image(rng)  # [H, W, 3] in B, G, R order
    mean = f32(np.stack([104 + 10 * np.cos(np.linspace(0, 3, HW))[:, None] * np.ones((1, HW)),
                         117 + 8 * np.sin(np.linspace(0, 2, HW))[None, :] * np.ones((HW, 1)),
                         123 + rng.normal(scale=5, size=(HW, HW))]))  # [3 (B, G, R), H, W]
    x = pix.transpose(2, 0, 1).astype(np.float64) - mean.astype(np.float64)
    n = Net(rng, b)
    x, t = n.conv("conv1_7x7_s2", x, "image", 8, 7, stride=2, pad=3)
    x, t = n.maxpool("pool1_3x3_s2", x, t, 3, 2, 0)
    x, t = n.lrn("pool1_norm1", x, t)
    x, t = n.conv("conv2_3x3_reduce", x, t, 8, 1)
    x, t = n.conv("conv2_3x3", x, t, 16, 3, pad=1)
    x, t = n.lrn("conv2_norm2", x, t)
    x, t = n.maxpool("pool2_3x3_s2", x, t, 3, 2, 0)

    def inception(name, x, t, c1, c3r, c3, c5r, c5, cp):
        a, ta = n.conv(name + "_1x1", x, t, c1, 1)
        r3, tr3 = n.conv(name + "_3x3_reduce", x, t, c3r, 1)
        b3, tb3 = n.conv(name + "_3x3", r3, tr3, c3, 3, pad=1)
        r5, tr5 = n.conv(name + "_5x5_reduce", x, t, c5r, 1)
        b5, tb5 = n.conv(name + "_5x5", r5, tr5, c5, 5, pad=2)
        p, tp = n.maxpool(name + "_pool", x, t, 3, 1, 1)
        pp, tpp = n.conv(name + "_pool_proj", p, tp, cp, 1)
        b.add_elementwise(name + "_output", [ta, tb3, tb5, tpp], name + "_output", mode="CONCAT")
        return np.concatenate([a, b3, b5, pp], axis=0), name + "_output"

    x, t = inception("inception_3a", x, t, 8, 6, 8, 2, 4, 4)
    x, t = inception("inception_3b", x, t, 8, 8, 12, 4, 6, 6)
    x, t = n.maxpool("pool3_3x3_s2", x, t, 3, 2, 0)
    probs = n.head(x, t, 205, "classLabelProbs")
    b.set_pre_processing_parameters(image_input_names=["image"], is_bgr=True)
    spec = b.spec
    spec.description.input[0].type.imageType.colorSpace = ct.proto.FeatureTypes_pb2.ImageFeatureType.BGR
    nn = spec.neuralNetworkClassifier
    del nn.preprocessing[:]
    pre = nn.preprocessing.add()
    pre.featureName = "image"
    pre.meanImage.meanImage.extend(mean.reshape(-1).tolist())
    return spec, pix, probs, labels


def resnet():
    rng = np.random.default_rng(50)
    labels = ["class_%03d" % i for i in range(1000)]
    b = new_builder(1000, labels)
    pix = raw_image(rng)  # B, G, R
    biases = {"blue_bias": -103.939, "green_bias": -116.779, "red_bias": -123.68}
    x = pix.transpose(2, 0, 1).astype(np.float64) + np.array(
        [np.float32(biases["blue_bias"]), np.float32(biases["green_bias"]), np.float32(biases["red_bias"])],
        dtype=np.float64).reshape(3, 1, 1)
    n = Net(rng, b)
    x, t = n.conv("conv1", x, "image", 8, 7, stride=2, pad=3, relu_after=False)
    x, t = n.bn("bn_conv1", x, t)
    b.add_activation("conv1_relu", "RELU", t, "conv1_relu"); x, t = relu(x), "conv1_relu"
    x, t = n.maxpool("pool1", x, t, 3, 2, 1)

    def block(name, x, t, mid, out, stride, project):
        y, ty = n.conv(name + "_branch2a", x, t, mid, 1, stride=stride, relu_after=False)
        y, ty = n.bn("bn" + name + "_branch2a", y, ty)
        b.add_activation(name + "_branch2a_relu", "RELU", ty, name + "_branch2a_relu"); y, ty = relu(y), name + "_branch2a_relu"
        y, ty = n.conv(name + "_branch2b", y, ty, mid, 3, pad=1, relu_after=False)
        y, ty = n.bn("bn" + name + "_branch2b", y, ty)
        b.add_activation(name + "_branch2b_relu", "RELU", ty, name + "_branch2b_relu"); y, ty = relu(y), name + "_branch2b_relu"
        y, ty = n.conv(name + "_branch2c", y, ty, out, 1, relu_after=False)
        y, ty = n.bn("bn" + name + "_branch2c", y, ty)
        if project:
            s, ts = n.conv(name + "_branch1", x, t, out, 1, stride=stride, relu_after=False)
            s, ts = n.bn("bn" + name + "_branch1", s, ts)
        else:
            s, ts = x, t
        b.add_elementwise(name, [ty, ts], name, mode="ADD")
        b.add_activation(name + "_relu", "RELU", name, name + "_relu")
        return relu(y + s), name + "_relu"

    x, t = block("res2a", x, t, 4, 16, 1, True)
    x, t = block("res2b", x, t, 4, 16, 1, False)
    x, t = block("res3a", x, t, 8, 32, 2, True)
    x, t = block("res3b", x, t, 8, 32, 1, False)
    x, t = block("res4a", x, t, 16, 64, 2, True)
    x, t = block("res4b", x, t, 16, 64, 1, False)
    probs = n.head(x, t, 1000, "classLabelProbs")
    b.set_pre_processing_parameters(image_input_names=["image"], is_bgr=True, image_scale=1.0, **biases)
    return b.spec, pix, probs, labels


def write(name, spec, pix, probs, labels):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.mlmodel"), "wb") as f:
        f.write(spec.SerializeToString(deterministic=True))
    np.save(os.path.join(d, "input_image.npy"), f32(pix[None]))
    np.save(os.path.join(d, "expected_probabilities.npy"), probs)
    with open(os.path.join(d, "labels.txt"), "w") as f:
        f.write("\n".join(labels) + "\n")
    top = np.argsort(-probs)[:5]
    print(name, "top-5", [(labels[i], round(float(probs[i]), 4)) for i in top],
          "size", os.path.getsize(os.path.join(d, "model.mlmodel")))


def main():
    write("googlenet_places205_lookalike", *googlenet())
    write("resnet50_lookalike", *resnet())


if __name__ == "__main__":
    main()
