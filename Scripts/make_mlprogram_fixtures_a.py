"""ML program fixtures for the MIL ops of issue 11, group A (gru, rnn, l2_pool, iOS17 resize,
resize_bilinear with OFFSET_CORNERS and rank 3, crop_resize, resample, affine, classify), with NumPy / Keras references.

Run (from the repository root):

    PY=$(Scripts/coremltools8-env)   # coremltools 8.3, tensorflow-cpu 2.15, keras 2.15
    $PY Scripts/make_mlprogram_fixtures_a.py [ops] [sampling] [classifier] [refused]

Writes Fixtures/mlprogram/opa_<case>/ in the layout of Scripts/make_mlprogram_fixtures.py
(model.mlpackage, input_<name>.npy, expected_<name>.npy, case.json; MILProgramRunTests runs them):
single-op programs built with coremltools' MIL Builder, whose references are the op formulas of
coremltools' op definitions (ops/defs/iOS15..iOS17) evaluated here in NumPy (float64). Keras
GRU / SimpleRNN layers convert to a while_loop, not to gru / rnn, so those ops are covered by
Builder programs only.

Writes Fixtures/mlprogram_classifier/<case>/: classifier programs (a `classify` op), whose label
and probability dictionary MILClassifyTests checks: `keras_strings` (a Keras Dense + softmax model
converted with ct.ClassifierConfig and string labels; reference: Keras' probabilities) and
`builder_int64` (a Builder program converted with int64 classes, coremltools appending the
classify op; reference: NumPy softmax). case.json holds
the inputs, the label and probability output names, the labels and the expected label.
"""
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import coremltools as ct  # noqa: E402
from coremltools.converters.mil import Builder as mb  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlprogram_fixture_common import OUT, ROOT, case_meta, run_selected, write_case  # noqa: E402

OUT_CLS = os.path.join(ROOT, "Fixtures", "mlprogram_classifier")


def save(d, mlmodel, inputs, outputs, meta):
    size = write_case(d, mlmodel, inputs, outputs, meta)
    print(f"{os.path.basename(d)}: {size} bytes")


def program_case(name, prog, inputs, outputs, target=ct.target.iOS15):
    ml = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                    compute_precision=ct.precision.FLOAT32)
    save(os.path.join(OUT, f"opa_{name}"), ml, inputs, outputs,
         case_meta(inputs, outputs))


def act(name, v):
    if name == "tanh":
        return np.tanh(v)
    if name == "sigmoid":
        return 1 / (1 + np.exp(-v))
    if name == "relu":
        return np.maximum(v, 0)
    if name == "sigmoid_hard":
        return np.clip(0.2 * v + 0.5, 0, 1)
    if name == "linear":
        return v
    raise ValueError(name)


# ---- gru / rnn ---------------------------------------------------------------------------------

def recurrent_cases():
    rng = np.random.RandomState(41)
    T, B, I, H = 5, 2, 4, 3

    def gru_ref(x, h0, wih, whh, bias, direction, seq, a, ra):
        # weight rows r, o, z (iOS15 recurrent.py); reset applied before the recurrent matmul.
        wr, wo, wz = np.split(wih.astype(np.float64), 3)
        rr, ro, rz = np.split(whh.astype(np.float64), 3)
        br, bo, bz = np.split(bias.astype(np.float64), 3)
        steps = range(T) if direction == "forward" else reversed(range(T))
        h = h0.astype(np.float64)
        ys = []
        for t in steps:
            xt = x[t].astype(np.float64)
            z = act(ra, xt @ wz.T + h @ rz.T + bz)
            r = act(ra, xt @ wr.T + h @ rr.T + br)
            o = act(a, xt @ wo.T + (h * r) @ ro.T + bo)
            h = (1 - z) * o + z * h
            ys.append(h)
        return (np.stack(ys) if seq else h[None]), h

    def rnn_ref(x, h0, wih, whh, bias, direction, seq, a):
        steps = range(T) if direction == "forward" else reversed(range(T))
        h = h0.astype(np.float64)
        ys = []
        for t in steps:
            h = act(a, x[t].astype(np.float64) @ wih.T + h @ whh.T + bias)
            ys.append(h)
        return (np.stack(ys) if seq else h[None]), h

    for name, direction, seq, a, ra, has_bias in [("gru_seq", "forward", True, "tanh", "sigmoid", True),
                                                   ("gru_reverse_last", "reverse", False, "tanh", "sigmoid_hard", False),
                                                   ("gru_relu_seq_reverse", "reverse", True, "relu", "sigmoid", True)]:
        x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)
        h0 = rng.uniform(-0.5, 0.5, (B, H)).astype(np.float32)
        wih = rng.uniform(-0.6, 0.6, (3 * H, I)).astype(np.float32)
        whh = rng.uniform(-0.6, 0.6, (3 * H, H)).astype(np.float32)
        bias = rng.uniform(-0.3, 0.3, (3 * H,)).astype(np.float32) if has_bias else np.zeros(3 * H, np.float32)

        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=h0.shape)])
        def gru_prog(x_in, h_in):
            kw = dict(x=x_in, initial_h=h_in, weight_ih=wih, weight_hh=whh, direction=direction, output_sequence=seq,
                      activation=a, recurrent_activation=ra)
            if has_bias:
                kw["bias"] = bias
            y, h = mb.gru(**kw)
            return mb.identity(x=y, name="y"), mb.identity(x=h, name="h")
        y, h = gru_ref(x, h0, wih, whh, bias, direction, seq, a, ra)
        program_case(name, gru_prog, {"x_in": x, "h_in": h0}, {"y": y, "h": h})

    for name, direction, seq, a, has_bias in [("rnn_seq", "forward", True, "tanh", True),
                                               ("rnn_reverse_last", "reverse", False, "relu", False)]:
        x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)
        h0 = rng.uniform(-0.5, 0.5, (B, H)).astype(np.float32)
        wih = rng.uniform(-0.6, 0.6, (H, I)).astype(np.float32)
        whh = rng.uniform(-0.6, 0.6, (H, H)).astype(np.float32)
        bias = rng.uniform(-0.3, 0.3, (H,)).astype(np.float32) if has_bias else np.zeros(H, np.float32)

        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=h0.shape)])
        def rnn_prog(x_in, h_in):
            kw = dict(x=x_in, initial_h=h_in, weight_ih=wih, weight_hh=whh, direction=direction, output_sequence=seq, activation=a)
            if has_bias:
                kw["bias"] = bias
            y, h = mb.rnn(**kw)
            return mb.identity(x=y, name="y"), mb.identity(x=h, name="h")
        y, h = rnn_ref(x, h0, wih, whh, bias, direction, seq, a)
        program_case(name, rnn_prog, {"x_in": x, "h_in": h0}, {"y": y, "h": h})


# ---- l2_pool -----------------------------------------------------------------------------------

def l2_pool_ref(x, kernel, strides, pads):
    """√(Σ x² over each window) of [N, C, *D] with zero padding pads = [(before, after), ...]."""
    xp = np.pad(x.astype(np.float64) ** 2, [(0, 0), (0, 0)] + list(pads))
    d = len(kernel)
    out_sizes = [(xp.shape[2 + i] - kernel[i]) // strides[i] + 1 for i in range(d)]
    y = np.zeros(x.shape[:2] + tuple(out_sizes))
    for idx in np.ndindex(*out_sizes):
        sl = tuple(slice(idx[i] * strides[i], idx[i] * strides[i] + kernel[i]) for i in range(d))
        y[(Ellipsis,) + idx] = xp[(slice(None), slice(None)) + sl].sum(axis=tuple(range(2, 2 + d)))
    return np.sqrt(y)


# ---- resizing ----------------------------------------------------------------------------------

def grid(mode, xin, xout):
    i = np.arange(xout, dtype=np.float64)
    if mode in ("ALIGN_CORNERS", "STRICT_ALIGN_CORNERS"):
        g = i * (xin - 1) / (xout - 1) if xout > 1 else np.array([(xin - 1) / 2 if mode == "ALIGN_CORNERS" else 0.0])
    elif mode == "DEFAULT":
        g = i * xin / xout
    elif mode == "OFFSET_CORNERS":
        delta = max(1, xin - 1) / xout
        g = 0.5 * delta + i * delta
    elif mode == "UNALIGN_CORNERS":
        g = (i + 0.5) * xin / xout - 0.5
    return np.clip(g, 0, xin - 1)


def bilinear_last_two(x, out_h, out_w, mode):
    h, w = x.shape[-2:]
    gy, gx = grid(mode, h, out_h), grid(mode, w, out_w)
    y0, x0 = np.floor(gy).astype(int), np.floor(gx).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (gy - y0)[:, None], (gx - x0)[None, :]
    a, b = x[..., y0, :][..., x0], x[..., y0, :][..., x1]
    c, d = x[..., y1, :][..., x0], x[..., y1, :][..., x1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def op_cases():
    rng = np.random.RandomState(43)
    img = rng.uniform(-1, 1, (1, 3, 5, 7)).astype(np.float32)
    seq = rng.uniform(-1, 1, (2, 3, 7)).astype(np.float32)
    cases = [
        ("l2_pool_2d_custom", img, lambda x: mb.l2_pool(x=x, kernel_sizes=[2, 3], strides=[2, 2], pad_type="custom", pad=[1, 0, 0, 1]),
         lambda x: l2_pool_ref(x, [2, 3], [2, 2], [(1, 0), (0, 1)]), ct.target.iOS15),
        ("l2_pool_2d_valid", img, lambda x: mb.l2_pool(x=x, kernel_sizes=[3, 3], strides=[1, 2], pad_type="valid"),
         lambda x: l2_pool_ref(x, [3, 3], [1, 2], [(0, 0), (0, 0)]), ct.target.iOS15),
        ("l2_pool_1d_same", seq, lambda x: mb.l2_pool(x=x, kernel_sizes=[3], strides=[2], pad_type="same"),
         lambda x: l2_pool_ref(x, [3], [2], [(1, 1)]), ct.target.iOS15),
        ("resize_bilinear_offset_corners", img,
         lambda x: mb.resize_bilinear(x=x, target_size_height=8, target_size_width=4, sampling_mode="OFFSET_CORNERS"),
         lambda x: bilinear_last_two(x, 8, 4, "OFFSET_CORNERS"), ct.target.iOS15),
        ("resize_bilinear_rank3", seq,
         lambda x: mb.resize_bilinear(x=x, target_size_height=5, target_size_width=10, sampling_mode="UNALIGN_CORNERS"),
         lambda x: bilinear_last_two(x, 5, 10, "UNALIGN_CORNERS"), ct.target.iOS15),
        ("resize_ios17_linear", img,
         lambda x: mb.resize(x=x, shape=np.array([1, 9, 4], np.int32), resized_dims=np.uint32(2), interpolation_mode="LINEAR",
                             sampling_mode="ALIGN_CORNERS"),
         lambda x: bilinear_last_two(x, 9, 4, "ALIGN_CORNERS"), ct.target.iOS17),
        ("resize_ios17_offset_keep", img,
         lambda x: mb.resize(x=x, shape=np.array([0, 3], np.int32), resized_dims=np.uint32(2), interpolation_mode="LINEAR",
                             sampling_mode="OFFSET_CORNERS"),
         lambda x: bilinear_last_two(x, 5, 3, "OFFSET_CORNERS"), ct.target.iOS17),
        ("resize_ios17_nearest_1d", seq,
         lambda x: mb.resize(x=x, shape=np.array([11], np.int32), resized_dims=np.uint32(1), interpolation_mode="NEAREST_NEIGHBOR",
                             sampling_mode="DEFAULT"),
         lambda x: x[..., (np.arange(11) * 7) // 11], ct.target.iOS17),
    ]
    for name, xv, fn, ref, target in cases:
        @mb.program(input_specs=[mb.TensorSpec(shape=xv.shape)], opset_version=target)
        def prog(x_in):
            return mb.identity(x=fn(x_in), name="y")
        program_case(name, prog, {"x_in": xv}, {"y": ref(xv.astype(np.float64))}, target=target)


# ---- crop_resize, resample, affine --------------------------------------------------------------

def sample(img, px, py, pad=0.0, border=False):
    """Bilinear value of img [H, W] at pixel (px, py); outside neighbours read `pad` (constant
    padding), or the coordinate is clamped to the image first (border)."""
    h, w = img.shape
    if border:
        px, py = min(max(px, 0), w - 1), min(max(py, 0), h - 1)
    x0, y0 = int(np.floor(px)), int(np.floor(py))
    fx, fy = px - x0, py - y0
    total = 0.0
    for yy, wy in ((y0, 1 - fy), (y0 + 1, fy)):
        for xx, wx in ((x0, 1 - fx), (x0 + 1, fx)):
            v = img[yy, xx] if 0 <= yy < h and 0 <= xx < w else pad
            total += wy * wx * v
    return total


def crop_resize_ref(x, roi, th, tw, normalized, mode, box_mode="CORNERS_HEIGHT_FIRST", pad=None):
    """Grid points are clamped to the image; with `pad` (iOS16 pad_value, TensorFlow's
    extrapolation_value) a point whose row or column is outside the image takes `pad`."""
    b, c, h, w = x.shape
    n, k = roi.shape[0], roi.shape[2]
    out = np.zeros((n, 1 if k == 5 else b, c, th, tw))
    for i in range(n):
        v = roi[i, 0, :, 0, 0].astype(np.float64)
        batches = [int(v[0])] if k == 5 else list(range(b))
        v = v[1:] if k == 5 else v
        if box_mode == "CORNERS_HEIGHT_FIRST":
            h0, w0, h1, w1 = v
        elif box_mode == "CENTER_SIZE_WIDTH_FIRST":
            wc, hc, bw, bh = v
            h0, h1, w0, w1 = hc - bh / 2, hc + bh / 2, wc - bw / 2, wc + bw / 2
        if normalized:
            h0, h1, w0, w1 = h0 * (h - 1), h1 * (h - 1), w0 * (w - 1), w1 * (w - 1)

        def lin(a, z, m):
            if m == 1:
                return np.array([a if mode == "STRICT_ALIGN_CORNERS" else (a + z) / 2])
            return a + np.arange(m) * (z - a) / (m - 1)
        ry, rx = lin(h0, h1, th), lin(w0, w1, tw)
        if pad is not None:  # keep grid points off the image edges, where float32 rounding could flip the rule
            for g, n_ in ((ry, h), (rx, w)):
                assert np.all((np.abs(g) > 1e-3) | (g == 0)) and np.all((np.abs(g - (n_ - 1)) > 1e-3) | (g == n_ - 1)), g
        gy, gx = np.clip(ry, 0, h - 1), np.clip(rx, 0, w - 1)
        for j, bb in enumerate(batches):
            for ch in range(c):
                for r in range(th):
                    for q in range(tw):
                        outside = not (0 <= ry[r] <= h - 1 and 0 <= rx[q] <= w - 1)
                        out[i, j, ch, r, q] = pad if pad is not None and outside else sample(x[bb, ch], gx[q], gy[r])
    return out


def to_pixels(g, n, mode, align):
    if mode == "unnormalized":
        return g
    if mode == "normalized_minus_one_to_one":
        return (g + 1) / 2 * (n - 1) if align else ((g + 1) * n - 1) / 2
    return g * (n - 1) if align else g * n - 0.5


def padded_pixel(img, yy, xx, padding, pad):
    """img [H, W] at integer (yy, xx) of the image padded per MIL resample's padding_mode:
    constant (pad), border (edge replicated), reflection (|1, 2, 3| -> 2, 3, 2, 1, 2, 3, 2, 1),
    symmetric (|1, 2, 3| -> 3, 2, 1, 1, 2, 3, 3, 2, 1)."""
    def index(i, n):
        if padding == "border":
            return min(max(i, 0), n - 1)
        if padding == "reflection":
            if n == 1:
                return 0
            i %= 2 * (n - 1)
            return i if i < n else 2 * (n - 1) - i
        if padding == "symmetric":
            i %= 2 * n
            return i if i < n else 2 * n - 1 - i
        return i
    h, w = img.shape
    yy, xx = index(yy, h), index(xx, w)
    return img[yy, xx] if 0 <= yy < h and 0 <= xx < w else pad


def off_ties(coords, h, w, mode, align):
    """coords moved off the points that map to a pixel half (nearest sampling ties)."""
    c = coords.astype(np.float64).copy()
    for idx in np.ndindex(c.shape[:3]):
        for k, n in ((0, w), (1, h)):
            while abs(to_pixels(c[idx + (k,)], n, mode, align) % 1 - 0.5) < 0.02:
                c[idx + (k,)] += 0.01
    return c.astype(np.float32)


def resample_padded_ref(x, coords, mode, align, padding, pad, nearest):
    """resample by the op definition: bilinear or nearest sampling of the padded image."""
    b, c, h, w = x.shape
    _, h2, w2, _ = coords.shape
    out = np.zeros((b, c, h2, w2))
    for bb in range(b):
        for i in range(h2):
            for j in range(w2):
                px = to_pixels(float(coords[bb, i, j, 0]), w, mode, align)
                py = to_pixels(float(coords[bb, i, j, 1]), h, mode, align)
                for ch in range(c):
                    img = x[bb, ch]
                    if nearest:
                        # keep away from ties, where float32 rounding could pick the other pixel
                        assert abs(px - np.floor(px) - 0.5) > 1e-3 and abs(py - np.floor(py) - 0.5) > 1e-3
                        out[bb, ch, i, j] = padded_pixel(img, int(np.rint(py)), int(np.rint(px)), padding, pad)
                        continue
                    x0, y0 = int(np.floor(px)), int(np.floor(py))
                    fx, fy = px - x0, py - y0
                    out[bb, ch, i, j] = sum(wy * wx * padded_pixel(img, yy, xx, padding, pad)
                                            for yy, wy in ((y0, 1 - fy), (y0 + 1, fy)) for xx, wx in ((x0, 1 - fx), (x0 + 1, fx)))
    return out


def resample_ref(x, coords, mode, align, pad, border):
    """Bilinear resample with constant or border padding (the op's first forms)."""
    return resample_padded_ref(x, coords, mode, align, "border" if border else "constant", pad, False)


def affine_ref(x, m, oh, ow, pad):
    b, c, h, w = x.shape
    out = np.zeros((b, c, oh, ow))
    for bb in range(b):
        a0, a1, a2, b0, b1, b2 = m[bb if m.shape[0] > 1 else 0].astype(np.float64)
        for i in range(oh):
            for j in range(ow):
                xn = -1 + 2 * j / (ow - 1) if ow > 1 else 0.0
                yn = -1 + 2 * i / (oh - 1) if oh > 1 else 0.0
                px = to_pixels(a0 * xn + a1 * yn + a2, w, "normalized_minus_one_to_one", True)
                py = to_pixels(b0 * xn + b1 * yn + b2, h, "normalized_minus_one_to_one", True)
                for ch in range(c):
                    out[bb, ch, i, j] = sample(x[bb, ch], px, py, pad)
    return out


def sampling_cases():
    rng = np.random.RandomState(59)
    x = rng.uniform(-1, 1, (2, 3, 6, 7)).astype(np.float32)
    # crop_resize: 2 normalized boxes for every image (STRICT); 2 pixel boxes with an image index (ALIGN).
    roi4 = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.5, 0.5, 1.0]], np.float32).reshape(2, 1, 4, 1, 1)
    roi5 = np.array([[1, 3.0, 2.0, 2.0, 1.5], [0, 1.5, 4.0, 1.0, 3.0]], np.float32).reshape(2, 1, 5, 1, 1)
    for name, roi, th, tw, norm, mode, box in [("crop_resize_strict", roi4, 4, 5, True, "STRICT_ALIGN_CORNERS", "CORNERS_HEIGHT_FIRST"),
                                               ("crop_resize_align_index", roi5, 3, 1, False, "ALIGN_CORNERS", "CENTER_SIZE_WIDTH_FIRST")]:
        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=roi.shape)])
        def prog(x_in, roi_in):
            return mb.crop_resize(x=x_in, roi=roi_in, target_height=th, target_width=tw, normalized_coordinates=norm,
                                  box_coordinate_mode=box, sampling_mode=mode, name="y")
        program_case(name, prog, {"x_in": x, "roi_in": roi}, {"y": crop_resize_ref(x, roi, th, tw, norm, mode, box)})

    # resample: coordinates partly outside the image.
    c01 = rng.uniform(-1.3, 1.3, (2, 4, 5, 2)).astype(np.float32)
    cpx = np.stack([rng.uniform(-1.5, 7.5, (2, 3, 4)), rng.uniform(-1.5, 6.5, (2, 3, 4))], axis=-1).astype(np.float32)
    c0 = rng.uniform(-0.2, 1.2, (2, 2, 3, 2)).astype(np.float32)
    for name, coords, mode, align, padding, pad in [("resample_minus_one_zero_pad", c01, "normalized_minus_one_to_one", False, "constant", 0.0),
                                                    ("resample_unnormalized_border", cpx, "unnormalized", False, "border", 0.0),
                                                    ("resample_zero_to_one_pad_value", c0, "normalized_zero_to_one", True, "constant", 0.5)]:
        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=coords.shape)])
        def rprog(x_in, coords_in):
            return mb.resample(x=x_in, coordinates=coords_in, sampling_mode="bilinear", padding_mode=padding, padding_value=pad,
                               coordinates_mode=mode, align_corners=align, name="y")
        program_case(name, rprog, {"x_in": x, "coords_in": coords},
                     {"y": resample_ref(x, coords, mode, align, pad, padding == "border")})

    # crop_resize with iOS16 pad_value: boxes partly outside the image (normalized beyond [0, 1],
    # pixel boxes beyond the edges) sample pad_value there.
    roi5n = np.array([[0, 0.1, 0.3, 1.3, 1.0], [1, 0.5, 1.8, 1.0, 0.3], [0, -0.35, 0.4, 0.6, 0.7]], np.float32).reshape(3, 1, 5, 1, 1)
    roi4p = np.array([[-1.5, 2.2, 4.0, 8.1], [1.0, -0.7, 6.6, 3.3]], np.float32).reshape(2, 1, 4, 1, 1)
    for name, roi, th, tw, norm, mode, pad in [("crop_resize_pad_value_align", roi5n, 3, 4, True, "ALIGN_CORNERS", 10.0),
                                               ("crop_resize_pad_value_strict_pixels", roi4p, 4, 3, False, "STRICT_ALIGN_CORNERS", -0.25)]:
        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=roi.shape)], opset_version=ct.target.iOS16)
        def pprog(x_in, roi_in):
            return mb.crop_resize(x=x_in, roi=roi_in, target_height=th, target_width=tw, normalized_coordinates=norm,
                                  box_coordinate_mode="CORNERS_HEIGHT_FIRST", sampling_mode=mode, pad_value=pad, name="y")
        program_case(name, pprog, {"x_in": x, "roi_in": roi}, {"y": crop_resize_ref(x, roi, th, tw, norm, mode, pad=pad)},
                     target=ct.target.iOS16)

    # resample with nearest sampling and reflection / symmetric padding (torch grid_sample's
    # converter: reflection with align_corners True, symmetric with False).
    rng2 = np.random.RandomState(61)  # its own stream: the cases after these keep their values
    cwide = rng2.uniform(-2.6, 2.6, (2, 3, 4, 2)).astype(np.float32)
    cpx2 = np.stack([rng2.uniform(-9, 15, (2, 3, 5)), rng2.uniform(-8, 13, (2, 3, 5))], axis=-1).astype(np.float32)
    for name, coords, mode, align, sampling, padding, pad in [
            ("resample_nearest_constant", c01, "normalized_minus_one_to_one", False, "nearest", "constant", 0.75),
            ("resample_nearest_border", cpx, "unnormalized", False, "nearest", "border", 0.0),
            ("resample_nearest_reflection", cwide, "normalized_minus_one_to_one", True, "nearest", "reflection", 0.0),
            ("resample_nearest_symmetric", cwide, "normalized_minus_one_to_one", False, "nearest", "symmetric", 0.0),
            ("resample_bilinear_reflection", cpx2, "unnormalized", True, "bilinear", "reflection", 0.0),
            ("resample_bilinear_symmetric", cwide, "normalized_minus_one_to_one", False, "bilinear", "symmetric", 0.0)]:
        if sampling == "nearest":
            coords = off_ties(coords, x.shape[2], x.shape[3], mode, align)

        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=coords.shape)])
        def nprog(x_in, coords_in):
            return mb.resample(x=x_in, coordinates=coords_in, sampling_mode=sampling, padding_mode=padding, padding_value=pad,
                               coordinates_mode=mode, align_corners=align, name="y")
        program_case(name, nprog, {"x_in": x, "coords_in": coords},
                     {"y": resample_padded_ref(x, coords, mode, align, padding, pad, sampling == "nearest")})

    # affine: one matrix for both images, and one per image (a run-time input).
    m1 = np.array([[0.8, -0.3, 0.1, 0.25, 0.9, -0.2]], np.float32)
    m2 = rng.uniform(-1, 1, (2, 6)).astype(np.float32)
    for name, m, oh, ow in [("affine_shared", m1, 5, 4), ("affine_per_image", m2, 3, 6)]:
        @mb.program(input_specs=[mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=m.shape)])
        def aprog(x_in, m_in):
            return mb.affine(x=x_in, transform_matrix=m_in, output_height=oh, output_width=ow, sampling_mode="bilinear",
                             padding_mode="constant", padding_value=0.0, coordinates_mode="normalized_minus_one_to_one",
                             align_corners=True, name="y")
        program_case(name, aprog, {"x_in": x, "m_in": m}, {"y": affine_ref(x, m, oh, ow, 0.0)})


# ---- classifiers -------------------------------------------------------------------------------

def crop_resize_ios17_cases():
    """iOS17 crop_resize: boxes [N, 4] and box_indices [N] instead of roi, output [N, C, h, w],
    pad_value 0 unless given; without box_indices box i crops image i."""
    from coremltools.converters.mil.mil import types
    rng = np.random.RandomState(67)
    x = rng.uniform(-1, 1, (2, 3, 6, 7)).astype(np.float32)
    boxes = np.array([[0.1, 0.3, 1.3, 1.0], [0.5, -0.2, 1.0, 0.6], [-0.35, 0.4, 0.6, 0.7]], np.float32)
    indices = np.array([1, 0, 1], np.int32)
    def roi_of(bx, idx):
        return np.concatenate([idx.reshape(-1, 1).astype(np.float32), bx], axis=1).reshape(-1, 1, 5, 1, 1)
    cases = [("crop_resize_ios17_indices", boxes, indices, "ALIGN_CORNERS", None),
             ("crop_resize_ios17_pad_value", boxes, indices, "STRICT_ALIGN_CORNERS", 2.5),
             ("crop_resize_ios17_default_indices", boxes[:2], None, "ALIGN_CORNERS", None)]
    for name, bx, idx, mode, pad in cases:
        specs = [mb.TensorSpec(shape=x.shape), mb.TensorSpec(shape=bx.shape)]
        if idx is not None:
            specs.append(mb.TensorSpec(shape=idx.shape, dtype=types.int32))
        extra = {} if pad is None else {"pad_value": np.float32(pad)}

        if idx is not None:
            @mb.program(input_specs=specs, opset_version=ct.target.iOS17)
            def prog(x_in, boxes_in, indices_in):
                return mb.crop_resize(x=x_in, boxes=boxes_in, box_indices=indices_in, target_height=3, target_width=4,
                                      normalized_coordinates=True, sampling_mode=mode, name="y", **extra)
            inputs = {"x_in": x, "boxes_in": bx, "indices_in": idx}
        else:
            @mb.program(input_specs=specs, opset_version=ct.target.iOS17)
            def prog(x_in, boxes_in):
                return mb.crop_resize(x=x_in, boxes=boxes_in, target_height=3, target_width=4,
                                      normalized_coordinates=True, sampling_mode=mode, name="y", **extra)
            inputs = {"x_in": x, "boxes_in": bx}
        used = idx if idx is not None else np.arange(bx.shape[0], dtype=np.int32)
        ref = crop_resize_ref(x, roi_of(bx, used), 3, 4, True, mode, pad=0.0 if pad is None else pad)[:, 0]
        program_case(name, prog, inputs, {"y": ref}, target=ct.target.iOS17)


def classifier_cases():
    import tensorflow as tf
    tf.random.set_seed(3)
    rng = np.random.RandomState(47)
    L = tf.keras.layers
    labels = ["cat", "dog", "owl", "yak"]
    x = L.Input((6,), name="features", batch_size=1)
    y = L.Dense(4, activation="softmax", name="probs")(x)
    model = tf.keras.Model(x, y)
    model.set_weights([rng.uniform(-1.5, 1.5, (6, 4)).astype(np.float32), rng.uniform(-0.5, 0.5, (4,)).astype(np.float32)])
    xs = rng.uniform(-1, 1, (1, 6)).astype(np.float32)
    ref = model.predict(xs, verbose=0)
    ml = ct.convert(model, convert_to="mlprogram", classifier_config=ct.ClassifierConfig(labels),
                    compute_precision=ct.precision.FLOAT32)
    d = ml.get_spec().description
    save(os.path.join(OUT_CLS, "keras_strings"), ml, {"features": xs}, {"probabilities": ref},
         {"inputs": ["features"], "label_output": d.predictedFeatureName, "probabilities_output": d.predictedProbabilitiesName,
          "labels": labels, "expected_label": labels[int(np.argmax(ref))], "source": "keras"})

    classes = [10, 20, 30, 40, 50]
    xi = rng.uniform(-2, 2, (1, 5)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=xi.shape)])
    def cls_prog(x_in):
        return mb.softmax(x=mb.mul(x=x_in, y=1.5), axis=-1, name="probs")
    e = np.exp(1.5 * xi.astype(np.float64))
    probs = e / e.sum(axis=-1, keepdims=True)
    # coremltools' backend appends the classify op (int64 classes) for a classifier_config.
    ml = ct.convert(cls_prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                    compute_precision=ct.precision.FLOAT32, classifier_config=ct.ClassifierConfig(classes))
    assert any(op.type == "classify" for op in
               ml.get_spec().mlProgram.functions["main"].block_specializations["CoreML5"].operations)
    spec = ml.get_spec()
    outs = [o.name for o in spec.description.output]
    save(os.path.join(OUT_CLS, "builder_int64"), ml, {"x_in": xi}, {"probabilities": probs},
         {"inputs": ["x_in"], "label_output": outs[0], "probabilities_output": outs[1],
          "labels": [str(c) for c in classes], "expected_label": str(classes[int(np.argmax(probs))]), "source": "numpy"})


# ---- programs mlconv refuses with a typed error --------------------------------------------------

def refused_cases():
    """Fixtures/mlprogram_refused_a/<case>/model.mlpackage: valid programs using an option of these
    ops that mlconv does not import; MILMoreATests expects CoreMLImportError.unsupportedLayers
    naming the op type."""
    rng = np.random.RandomState(53)
    img = rng.uniform(-1, 1, (1, 2, 5, 6)).astype(np.float32)
    cases = [
        ("l2_pool", "l2_pool_ceil_mode", lambda x: mb.l2_pool(x=x, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid", ceil_mode=True),
         ct.target.iOS15),
        ("resize", "resize_nearest_align_corners",
         lambda x: mb.resize(x=x, shape=np.array([7, 9], np.int32), resized_dims=np.uint32(2), interpolation_mode="NEAREST_NEIGHBOR",
                             sampling_mode="ALIGN_CORNERS"), ct.target.iOS17),
        ("resize_bilinear", "resize_bilinear_offset_huge",
         lambda x: mb.resize_bilinear(x=x, target_size_height=1 << 24, target_size_width=4, sampling_mode="OFFSET_CORNERS"), ct.target.iOS15),
        ("crop_resize", "crop_resize", lambda x: mb.crop_resize(x=x, roi=np.array([[[[[0, 0, 0.5, 0.5]]]]], np.float32).reshape(1, 1, 4, 1, 1),
                                                                target_height=3, target_width=3, normalized_coordinates=True), ct.target.iOS15),
    ]
    for op, name, fn, target in cases:
        @mb.program(input_specs=[mb.TensorSpec(shape=img.shape)], opset_version=target)
        def prog(x_in):
            return mb.identity(x=fn(x_in), name="y")
        ml = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target, compute_precision=ct.precision.FLOAT32)
        save(os.path.join(ROOT, "Fixtures", "mlprogram_refused_a", name), ml, {"x_in": img}, {},
             {"inputs": ["x_in"], "op": op})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    run_selected({"ops": lambda: (recurrent_cases(), op_cases()), "sampling": sampling_cases,
                  "crop17": crop_resize_ios17_cases, "classifier": classifier_cases, "refused": refused_cases})
