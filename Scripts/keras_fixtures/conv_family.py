"""Keras fixtures of the convolution-family layers of issue 14 (appended to make_fixtures.py's
REGISTRY by its fixture-module hook): Conv1DTranspose, Conv3DTranspose, DepthwiseConv1D,
SeparableConv1D, UpSampling3D / ZeroPadding3D / Cropping3D, ConvLSTM1D / ConvLSTM2D (sequences,
states, go_backwards, strides, dilation, padding, initial states, channels_first) and
Bidirectional(ConvLSTM) with every merge mode.

Each builder takes make_fixtures' Ctx (`c.L` layers, `c.K` keras, `c.k2` True for tf.keras) and
returns the spec dict run_fixture expects.
"""


def build_conv1d_transpose(c):
    L, K = c.L, c.K
    inp = L.Input((9, 3), name="signal")
    a = L.Conv1DTranspose(4, 8, strides=2, padding="same", name="deconv_same_s2")(inp)
    b = L.Conv1DTranspose(3, 3, strides=3, padding="valid", activation="relu", name="deconv_valid_s3")(inp)
    d = L.Conv1DTranspose(2, 3, padding="valid", use_bias=False, name="deconv_no_bias")(inp)
    e = L.Conv1DTranspose(3, 4, strides=2, padding="same", output_padding=1, activation="tanh",
                          name="deconv_out_pad")(inp)
    f = L.Conv1DTranspose(2, 2, strides=3, padding="valid", output_padding=2, name="deconv_k_lt_s")(inp)
    g = L.Conv1DTranspose(3, 5, strides=2, padding="same", activation="softmax", name="deconv_softmax")(a)
    return {
        "model": K.Model(inp, [a, b, d, e, f, g], name="conv1d_transpose"),
        "inputs": [("normal",)],
        "notes": "Conv1DTranspose: same stride 2 (kernel 8, as ekgapp's U-Net); valid stride 3 relu; "
                 "stride 1 without bias (TensorFlow's CPU kernels refuse dilated transposed convolutions); output_padding with same and with valid (kernel < stride); "
                 "softmax activation.",
    }


def build_conv3d_transpose(c):
    L, K = c.L, c.K
    inp = L.Input((3, 4, 5, 2), name="volume")
    a = L.Conv3DTranspose(3, (2, 3, 3), strides=(2, 1, 2), padding="same", activation="relu",
                          name="deconv3d_same")(inp)
    b = L.Conv3DTranspose(2, 3, strides=(1, 2, 1), padding="valid", use_bias=False, name="deconv3d_valid")(inp)
    d = L.Conv3DTranspose(2, 3, strides=2, padding="same", output_padding=(1, 0, 1),
                          name="deconv3d_out_pad")(inp)
    return {
        "model": K.Model(inp, [a, b, d], name="conv3d_transpose"),
        "inputs": [("normal",)],
        "notes": "Conv3DTranspose: same with strides (2, 1, 2) relu; valid strides (1, 2, 1) without bias; "
                 "same stride 2 with output_padding (1, 0, 1).",
    }


def build_depthwise_separable_1d(c):
    L, K = c.L, c.K
    inp = L.Input((12, 3), name="sequence")
    outs = [
        L.DepthwiseConv1D(3, depth_multiplier=2, strides=2, padding="same", name="dw_same_s2")(inp),
        L.DepthwiseConv1D(3, dilation_rate=2, padding="valid", activation="relu", use_bias=False,
                          name="dw_dilated")(inp),
        L.SeparableConv1D(4, 3, depth_multiplier=2, padding="valid", activation="relu", name="sep_valid")(inp),
        L.SeparableConv1D(5, 5, strides=2, padding="same", activation="softmax", name="sep_same_softmax")(inp),
        L.SeparableConv1D(2, 2, dilation_rate=3, use_bias=False, name="sep_dilated")(inp),
    ]
    return {
        "model": K.Model(inp, outs, name="depthwise_separable_1d"),
        "inputs": [("normal",)],
        "notes": "DepthwiseConv1D (multiplier 2 same stride 2; dilation 2 valid relu without bias); "
                 "SeparableConv1D (multiplier 2 valid relu; same stride 2 softmax; dilation 3 without bias).",
    }


def build_volumetric_3d_reshaping(c):
    L, K = c.L, c.K
    inp = L.Input((3, 4, 5, 2), name="volume")
    up = L.UpSampling3D((2, 1, 3), name="upsample3d")(inp)
    pad = L.ZeroPadding3D(((1, 0), (2, 1), (0, 2)), name="zeropad3d")(inp)
    pad1 = L.ZeroPadding3D(1, name="zeropad3d_int")(inp)
    crop = L.Cropping3D(((1, 1), (0, 2), (1, 0)), name="crop3d")(inp)
    crop1 = L.Cropping3D((1, 1, 2), name="crop3d_sym")(up)
    mx = L.MaxPooling3D((2, 2, 2), strides=(1, 2, 2), padding="same", name="max_same")(up)
    gap = L.GlobalAveragePooling3D(name="gap")(crop1)
    return {
        "model": K.Model(inp, [up, pad, pad1, crop, crop1, mx, gap], name="volumetric_3d_reshaping"),
        "inputs": [("normal",)],
        "notes": "UpSampling3D (2, 1, 3); ZeroPadding3D asymmetric pairs and int; Cropping3D pairs and "
                 "symmetric triple; MaxPooling3D same strided and GlobalAveragePooling3D after them.",
    }


def build_conv_lstm2d(c):
    L, K = c.L, c.K
    inp = L.Input((4, 5, 6, 2), name="frames")
    h0 = L.Input((5, 6, 3), name="h0")
    c0 = L.Input((5, 6, 3), name="c0")
    seq = L.ConvLSTM2D(3, 3, padding="same", return_sequences=True, name="clstm_seq")(inp)
    last = L.ConvLSTM2D(2, (2, 3), strides=(2, 1), padding="valid", recurrent_activation="hard_sigmoid",
                        name="clstm_valid_strided")(inp)
    back = L.ConvLSTM2D(2, 3, padding="same", dilation_rate=2, go_backwards=True, return_sequences=True,
                        activation="relu", name="clstm_backwards_dilated")(inp)
    y, h, cs = L.ConvLSTM2D(2, 3, padding="same", return_state=True, use_bias=False,
                            recurrent_activation="sigmoid", name="clstm_state")(seq)
    init = L.ConvLSTM2D(3, 3, padding="same", return_sequences=True,
                        name="clstm_initial_state")(inp, initial_state=[h0, c0])
    return {
        "model": K.Model([inp, h0, c0], [seq, last, back, y, h, cs, init], name="conv_lstm2d"),
        "inputs": [("normal",), ("normal", 0.5), ("normal", 0.5)],
        "notes": "ConvLSTM2D: same with sequences; valid strides (2, 1) hard_sigmoid; go_backwards with "
                 "dilation 2 and relu; return_state without bias (sigmoid) stacked on the first; "
                 "initial_state from two inputs.",
    }


def build_conv_lstm1d(c):
    L, K = c.L, c.K
    inp = L.Input((5, 7, 2), name="sequence")
    seq = L.ConvLSTM1D(3, 3, padding="same", return_sequences=True, name="clstm1d_seq")(inp)
    last = L.ConvLSTM1D(2, 3, strides=2, padding="valid", go_backwards=True, name="clstm1d_valid_backwards")(inp)
    y, h, cs = L.ConvLSTM1D(2, 2, padding="same", dilation_rate=2, return_state=True, return_sequences=True,
                            name="clstm1d_state")(seq)
    return {
        "model": K.Model(inp, [seq, last, y, h, cs], name="conv_lstm1d"),
        "inputs": [("normal",)],
        "notes": "ConvLSTM1D: same with sequences; valid stride 2 go_backwards; dilation 2 with "
                 "sequences and states.",
    }


def build_bidirectional_conv_lstm(c):
    L, K = c.L, c.K
    frames = L.Input((3, 4, 5, 2), name="frames")
    seq1d = L.Input((4, 6, 2), name="sequence")
    outs = [
        L.Bidirectional(L.ConvLSTM2D(2, 3, padding="same", return_sequences=True), merge_mode="concat",
                        name="bi_concat_seq")(frames),
        # Keras 3 refuses a wrapped layer with go_backwards=True (its backward copy keeps the flag).
        L.Bidirectional(L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, go_backwards=c.k2),
                        merge_mode="sum", name="bi_sum_seq_backwards")(frames),
        L.Bidirectional(L.ConvLSTM2D(2, 2, padding="valid"), merge_mode="mul", name="bi_mul_last")(frames),
        L.Bidirectional(L.ConvLSTM2D(2, 3, padding="same", return_sequences=True), merge_mode="ave",
                        name="bi_ave_seq")(frames),
        L.Bidirectional(L.ConvLSTM1D(2, 3, padding="same"), merge_mode="concat", name="bi1d_concat_last")(seq1d),
    ]
    outs += list(L.Bidirectional(L.ConvLSTM1D(2, 3, padding="same", return_sequences=True),
                                 merge_mode=None, name="bi1d_separate")(seq1d))
    outs += list(L.Bidirectional(L.ConvLSTM1D(2, 3, padding="valid", return_state=True),
                                 name="bi1d_state")(seq1d))
    return {
        "model": K.Model([frames, seq1d], outs, name="bidirectional_conv_lstm"),
        "inputs": [("normal",), ("normal",)],
        "notes": "Bidirectional(ConvLSTM2D) merge concat / sum (wrapped layer go_backwards, tf.keras only) / mul (last "
                 "output) / ave; Bidirectional(ConvLSTM1D) concat, merge_mode=None (two outputs) and "
                 "return_state (output, forward h, c, backward h, c).",
    }


REGISTRY = [
    dict(base="conv1d_transpose", builder=build_conv1d_transpose, issue=14),
    dict(base="conv3d_transpose", builder=build_conv3d_transpose, issue=14),
    dict(base="depthwise_separable_1d", builder=build_depthwise_separable_1d, issue=14),
    dict(base="volumetric_3d_reshaping", builder=build_volumetric_3d_reshaping, issue=14),
    dict(base="conv_lstm2d", builder=build_conv_lstm2d, issue=14),
    dict(base="conv_lstm1d", builder=build_conv_lstm1d, issue=14),
    dict(base="bidirectional_conv_lstm", builder=build_bidirectional_conv_lstm, issue=14),
]
