"""Issue 14 fixtures: normalization, attention and preprocessing layers (both Keras flavours).

Loaded by Scripts/make_fixtures.py (see its `_load_fixture_groups`): FIXTURES lists the
fixtures, the build_* functions get make_fixtures' Ctx `c` (c.K = tf_keras or keras 3, c.L its
layers, c.k2 for the Keras 2 flavour). Keras 3 fixtures are also written as a native `.keras`
archive and as `model.weights.h5` + `model.json` (`save_weights` + `to_json`); each is reloaded
with Keras and must reproduce the outputs (manifest fields "archive", "weights_h5",
"weights_config").
"""

import json
from pathlib import Path

FIXTURES = [
    dict(base="norm_layers", builder="build_norm_layers", issue=14),
    dict(base="dot_attention", builder="build_dot_attention", issue=14),
    dict(base="multi_head_attention", builder="build_multi_head_attention", issue=14),
    dict(base="preprocessing_layers", builder="build_preprocessing_layers", issue=14),
]


def randomize(c, model, rng, kernel_gain=1.0, layer_gain=None):
    """Seeded values for every weight; Normalization keeps its adapted statistics."""
    np = c.np
    seen = set()

    def leaves(m):
        for layer in m.layers:
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            if isinstance(layer, c.K.Model):
                yield from leaves(layer)
            else:
                yield layer

    for layer in leaves(model):
        if not layer.weights or type(layer).__name__ == "Normalization":
            continue
        new = []
        for w, v in zip(layer.weights, layer.get_weights()):
            name = w.name.split("/")[-1].split(":")[0]
            shape = v.shape
            if name == "kernel":
                # Projection kernels (D, heads, dim) are fed by D inputs; others by all but the last axis.
                fan = shape[0] if len(shape) == 3 and type(layer).__name__ == "MultiHeadAttention" else \
                    int(np.prod(shape[:-1])) if len(shape) > 1 else 1
                val = rng.standard_normal(shape) * (kernel_gain / np.sqrt(max(fan, 1)))
            elif name == "bias":
                val = rng.standard_normal(shape) * 0.1
            elif name == "gamma":
                val = rng.uniform(0.5, 1.5, shape)
            elif name == "beta":
                val = rng.standard_normal(shape) * 0.2
            elif name in ("scale", "concat_score_weight"):
                val = rng.uniform(0.5, 1.5, shape)
            else:
                raise RuntimeError(f"don't know how to randomize weight {name!r} of {type(layer).__name__}")
            new.append(np.asarray(val, dtype=np.float32))
        layer.set_weights(new)


def spec(model, inputs, notes):
    # Keras 3 .keras / weights forms: make_fixtures.save_keras3_forms, the default for issue 14.
    return {"model": model, "inputs": inputs, "notes": notes, "randomize": randomize}


def build_norm_layers(c):
    L, K = c.L, c.K
    img = L.Input((5, 6, 4), name="image")
    seq = L.Input((7, 6), name="sequence")
    outs = [
        L.LayerNormalization(name="ln_last")(seq),
        L.LayerNormalization(axis=[1, 2], center=False, epsilon=1e-5, name="ln_hw_no_center")(img),
        L.LayerNormalization(axis=[1, 2, 3], scale=False, name="ln_all_no_scale")(img),
        L.GroupNormalization(groups=2, name="gn_2")(img),
        L.GroupNormalization(groups=-1, center=False, epsilon=1e-4, name="gn_instance")(img),
        L.UnitNormalization(name="unit_last")(seq),
        L.UnitNormalization(axis=[1, 2], name="unit_hw")(img),
    ]
    if not c.k2:
        outs.append(L.LayerNormalization(rms_scaling=True, name="ln_rms")(seq))
    s = spec(K.Model([img, seq], outs, name="norm_layers"), [("normal", 2.0, 0.5), ("normal", 1.5, -0.3)],
                "LayerNormalization (last axis; H,W without beta; all axes without gamma), "
                "GroupNormalization (2 groups; groups=-1 without beta), UnitNormalization (last axis; H,W)."
                + ("" if c.k2 else " Keras 3 also LayerNormalization(rms_scaling=True)."))
    # Keras 3.15's legacy .h5 loader builds LayerNormalization(axis=[1, 2]) with gamma of shape
    # (C,) and refuses its own file (the .keras archive and weights file reload fine).
    s["no_reload_keras3"] = True
    return s


def build_dot_attention(c):
    L, K = c.L, c.K
    q = L.Input((5, 6), name="query")
    v = L.Input((7, 6), name="value")
    k = L.Input((7, 6), name="key")
    plain = L.Attention(name="dot")([q, v])
    scaled, scores = L.Attention(use_scale=True, name="dot_scaled_key")([q, v, k], return_attention_scores=True)
    causal = L.Attention(name="dot_causal")([q, q], use_causal_mask=True)
    concat = L.Attention(score_mode="concat", use_scale=True, name="concat_scaled")([q, v, k])
    add = L.AdditiveAttention(name="additive")([q, v, k])
    add_plain = L.AdditiveAttention(use_scale=False, name="additive_causal")([v, v], use_causal_mask=True)
    s = spec(K.Model([q, v, k], [plain, scaled, scores, causal, concat, add, add_plain], name="dot_attention"),
                [("normal",), ("normal",), ("normal",)],
                "Attention dot (plain; use_scale with key and return_attention_scores; causal self-attention), "
                "Attention score_mode=concat with use_scale, AdditiveAttention with scale and key, "
                "AdditiveAttention without scale, causal.")
    # Keras 3.15's legacy .h5 loader deserializes score_mode "dot" as the function keras.ops.dot
    # and refuses the config (the .keras archive and weights file reload fine).
    s["no_reload_keras3"] = True
    return s


def build_multi_head_attention(c):
    L, K = c.L, c.K
    q = L.Input((5, 8), name="query")
    v = L.Input((6, 8), name="value")
    k = L.Input((6, 4), name="key")
    grid = L.Input((3, 4, 6), name="grid")
    self_causal = L.MultiHeadAttention(2, 4, name="mha_self_causal")(q, q, use_causal_mask=True)
    cross, scores = L.MultiHeadAttention(3, 5, value_dim=2, output_shape=7, name="mha_cross_key")(
        q, v, key=k, return_attention_scores=True)
    no_bias = L.MultiHeadAttention(2, 3, use_bias=False, name="mha_no_bias")(q, v)
    axes_2d = L.MultiHeadAttention(2, 3, attention_axes=(1, 2), name="mha_axes_2d")(grid, grid)
    ed1 = L.EinsumDense("abc,cd->abd", output_shape=(None, 5), bias_axes="d", activation="tanh", name="einsum_dense_bd")(q)
    ed2 = L.EinsumDense("...b,bc->...c", output_shape=4, name="einsum_dense_ellipsis")(q)
    ed3 = L.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de", name="einsum_dense_heads")(q)
    return spec(K.Model([q, v, k, grid], [self_causal, cross, scores, no_bias, axes_2d, ed1, ed2, ed3],
                        name="multi_head_attention"),
                [("normal",), ("normal",), ("normal",), ("normal",)],
                "MultiHeadAttention: causal self-attention; cross-attention with key, value_dim, output_shape and "
                "return_attention_scores; use_bias=False; attention_axes=(1, 2) on a 3x4 grid. EinsumDense: "
                "abc,cd->abd (bias d, tanh), ...b,bc->...c (no bias), abc,cde->abde (bias de).")


def build_preprocessing_layers(c):
    L, K, np = c.L, c.K, c.np
    rng = np.random.default_rng(14)
    img = L.Input((6, 8, 3), name="image")
    feats = L.Input((4, 5), name="features")
    norm_last = L.Normalization(name="norm_last")
    norm_last.adapt((rng.standard_normal((16, 4, 5)) * [1, 2, 3, 4, 0.5] + [0, 1, -1, 3, 2]).astype("float32"))
    norm_feat = L.Normalization(axis=(1, 2), name="norm_steps_features")
    norm_feat.adapt((rng.standard_normal((16, 4, 5)) * 2 + 1).astype("float32"))
    outs = [
        norm_last(feats),
        norm_feat(feats),
        L.Normalization(mean=[1.0, -2.0, 0.5], variance=[4.0, 0.25, 1.0], name="norm_given")(img),
        L.Normalization(mean=0.5, variance=2.0, invert=True, name="norm_invert")(feats),
        L.Resizing(4, 5, name="resize_bilinear_down")(img),
        L.Resizing(9, 11, interpolation="nearest", name="resize_nearest_up")(img),
        L.Resizing(5, 5, crop_to_aspect_ratio=True, name="resize_crop_aspect")(img),
        L.CenterCrop(4, 5, name="center_crop")(img),
        L.CenterCrop(7, 6, name="center_crop_upsize")(img),
        L.Identity(name="identity")(feats),
    ]
    s = spec(K.Model([img, feats], outs, name="preprocessing_layers"), [("normal",), ("normal",)],
                "Normalization (adapted on the last axis; adapted on axes 1,2; given mean/variance per channel; "
                "invert=True), Resizing (bilinear down, nearest up, crop_to_aspect_ratio), CenterCrop (crop; "
                "smart-resize when the image is smaller), Identity.")
    # Keras 3.15's legacy .h5 loader builds Normalization(axis=(1, 2)) with the default axis and
    # refuses its own file (the .keras archive and weights file reload fine).
    s["no_reload_keras3"] = True
    return s
