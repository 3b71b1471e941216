"""Crash inputs for the .mlmodel readers: protobuf integers (varints up to 2^64-1) that do not fit
an Int or whose products overflow, in layer parameters, weights and the model description.

Each file is a CoreML.Specification.Model written byte by byte (field numbers from
Sources/CoreMLFormat/proto/*.proto): one input "x", one output "y", one layer "bad".
"""

P63, P64M1, P31, P32, P62 = 1 << 63, (1 << 64) - 1, 1 << 31, 1 << 32, 1 << 62


def varint(v):
    v &= (1 << 64) - 1  # negative int64 values are written in two's complement, 10 bytes
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def vint(field, v):
    return varint(field << 3) + varint(v)


def ld(field, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def packed(field, values):
    return ld(field, b"".join(varint(v) for v in values))


def floats(field, values):
    import struct
    return ld(field, b"".join(struct.pack("<f", v) for v in values))


def array_type(shape):  # FeatureType.multiArrayType = 5; ArrayFeatureType.shape = 1, dataType = 2 (FLOAT32)
    return ld(5, packed(1, shape) + vint(2, 65568))


def image_type(width, height):  # FeatureType.imageType = 4; width = 1, height = 2, colorSpace = 3 (RGB = 20)
    return ld(4, vint(1, width) + vint(2, height) + vint(3, 20))


def feature(name, ftype):  # FeatureDescription: name = 1, type = 3
    return ld(1, name) + ld(3, ftype)


def model(layer_field, layer_params, input_type=None, preprocessing=b""):
    """Model { specificationVersion = 1, description = 2, neuralNetwork = 500 }."""
    desc = ld(1, feature("x", input_type or array_type([3, 4, 4]))) + ld(10, feature("y", array_type([])))
    layers = b""
    if layer_field is not None:
        layers = ld(1, ld(1, "bad") + ld(2, "x") + ld(3, "y") + ld(layer_field, layer_params))
    return vint(1, 4) + ld(2, desc) + ld(500, layers + preprocessing)


def weights(n=1):  # WeightParams.floatValue = 1
    return floats(1, [0.5] * n)


def conv(out_ch, k_ch, ksize, groups=None):
    p = vint(1, out_ch) + vint(2, k_ch) + packed(20, ksize) + ld(90, weights())
    if groups is not None:
        p += vint(10, groups)
    return model(100, p)


def inner(cin, cout):
    return model(140, vint(1, cin) + vint(2, cout) + ld(20, weights()))


CMDS = [["inspect", "{file}"], ["compile", "{file}", "-o", "{tmp}/x.mlbundle"]]
COMPILE = [["compile", "{file}", "-o", "{tmp}/x.mlbundle"]]


def cases():
    c = []

    def add(name, data, why, commands=CMDS):
        c.append({"file": f"mlmodel/{name}.mlmodel", "data": data, "commands": commands, "why": why})

    trap = "Int(UInt64) trapped ('Not enough bits to represent the passed value')"
    add("conv_outputChannels_2p63", conv(P63, 3, [3, 3]),
        "convolution outputChannels = 2^63: inspect trapped on the UInt64 weight-count product "
        f"(NeuralNetworkInspection.swift:248), compile {trap} in LayerImporter.convolution")
    add("conv_outputChannels_2p64m1", conv(P64M1, 3, [3, 3]),
        "convolution outputChannels = 2^64-1: inspect trapped (NeuralNetworkInspection.swift:248), "
        f"compile {trap} in LayerImporter.convolution")
    add("conv_kernelChannels_2p64m1", conv(8, P64M1, [3, 3]),
        "convolution kernelChannels = 2^64-1: inspect trapped (NeuralNetworkInspection.swift:248), "
        f"compile {trap} in LayerImporter.convolution")
    add("conv_kernelChannels_2p31", conv(P31, P31, [3, 3]),
        "convolution outputChannels = kernelChannels = 2^31: inspect's weight count 2^62·9 overflowed "
        "(NeuralNetworkInspection.swift:248)")
    add("conv_kernelSize_2p31", conv(8, 3, [P31, P31]),
        "convolution kernelSize = [2^31, 2^31]: inspect's weight count overflowed (NeuralNetworkInspection.swift:248), "
        "compile's shape.reduce(1, *) overflowed (WeightImport.swift:38)")
    add("conv_kernelSize_2p32_product", conv(8, 3, [P32, P32]),
        "convolution kernelSize = [2^32, 2^32]: UInt64 kernelSize.reduce(1, *) overflowed in inspect "
        "(NeuralNetworkInspection.swift:246), shape.reduce(1, *) in compile (WeightImport.swift:38)")
    add("conv_kernelSize_2p63", conv(8, 3, [P63, 1]),
        f"convolution kernelSize = [2^63, 1]: {trap} (inspect and compile)")
    add("conv_nGroups_2p63", conv(8, 3, [3, 3], groups=P63),
        f"convolution nGroups = 2^63: {trap} (inspect and compile)")
    add("innerProduct_2p32x2p32", inner(P32, P32),
        "innerProduct inputChannels·outputChannels = 2^64: inspect's UInt64 product overflowed "
        "(NeuralNetworkInspection.swift:252)")
    add("innerProduct_inputChannels_2p63", inner(P63, 2),
        "innerProduct inputChannels = 2^63: inspect's product overflowed (NeuralNetworkInspection.swift:252), "
        f"compile {trap} in LayerImporter.innerProduct")
    add("embedding_inputDim_2p63", model(150, vint(1, P63) + vint(2, 2) + ld(20, weights())),
        "embedding inputDim = 2^63: inspect's inputDim·outputChannels overflowed (NeuralNetworkInspection.swift:255)")
    add("embeddingND_2p32x2p32", model(1040, vint(1, P32) + vint(2, P32) + ld(20, weights())),
        "embeddingND vocabSize·embeddingSize = 2^64: inspect's UInt64 product overflowed (NeuralNetworkInspection.swift:258)")
    add("batchnorm_channels_2p63", model(160, vint(1, P63) + ld(15, weights())),
        f"batchnorm channels = 2^63: {trap} (inspect's weight count, compile's channel check)")
    add("batchedMatmul_2p32x2p32", model(1045, vint(5, P32) + vint(6, P32) + ld(8, weights())),
        "batchedMatmul weightMatrixFirstDimension·SecondDimension = 2^64: inspect's UInt64 product overflowed "
        "(NeuralNetworkInspection.swift:279)")
    add("loadConstant_shape_2p63", model(290, packed(1, [P63, 1, 1]) + ld(2, weights())),
        f"loadConstant shape [2^63, 1, 1]: {trap} (inspect and compile)")
    add("loadConstant_shape_2p31_cubed", model(290, packed(1, [P31, P31, P31]) + ld(2, weights())),
        "loadConstant shape [2^31, 2^31, 2^31]: shape.reduce(1, *) overflowed in inspect "
        "(NeuralNetworkInspection.swift:269) and compile (LayerImporter.swift:265)")
    add("scale_shape_2p32x2p32", model(245, packed(1, [P32, P32]) + ld(2, weights())),
        "scale shapeScale [2^32, 2^32]: inspect's UInt64 shapeScale.reduce(1, *) overflowed (NeuralNetworkInspection.swift:264)")
    add("weights_numberOfBits_2p63", model(100, vint(1, 8) + vint(2, 3) + packed(20, [3, 3])
        + ld(90, ld(30, b"\0" * 8) + ld(40, vint(1, P63) + ld(101, floats(1, [1.0]))))),
        f"quantized weights with numberOfBits = 2^63: {trap} in WeightParams.storedElementCount (inspect) and "
        "WeightImport.constant (compile)")
    add("simpleRecurrent_inputVectorSize_2p63", model(400, vint(1, P63) + vint(2, 2)),
        f"simpleRecurrent inputVectorSize = 2^63: {trap} in inspect's recurrent section (RecurrentInspection.swift:103)")
    # The importer alone traps on these; inspect now reports them as layers it cannot import
    # (exit status 0), so only compile is replayed (inspect runs the same importer code).
    add("reshape_targetShape_2p62", model(300, packed(1, [P62, 4, 4])),
        "reshape targetShape [2^62, 4, 4]: targetShape.reduce(1, *) overflowed in LayerImporter.reshape", COMPILE)
    add("permute_axis_2p63", model(310, packed(1, [0, P63, 2, 3])),
        f"permute axis [0, 2^63, 2, 3]: {trap} in LayerImporter (axis.map(Int.init))", COMPILE)
    add("resizeBilinear_targetSize_2p63", model(211, packed(1, [P63, P63])),
        f"resizeBilinear targetSize [2^63, 2^63]: {trap} in LayerImporter.resizeBilinear", COMPILE)
    add("pooling_kernelSize_2p63", model(120, vint(1, 0) + packed(10, [P63, P63])),
        f"pooling kernelSize [2^63, 2^63]: {trap} in LayerImporter.pooling", COMPILE)
    add("split_nOutputs_2p63", model(330, vint(1, P63)),
        f"split nOutputs = 2^63: {trap} in LayerImporter (inspect and compile)", COMPILE)
    add("upsample_scalingFactor_2p63", model(210, packed(1, [P63, P63])),
        f"upsample scalingFactor = 2^63: {trap} in LayerImporter.upsample (inspect and compile)", COMPILE)
    add("padding_edges_2p63", model(200, ld(1, b"") + ld(10, ld(10, vint(1, P63) + vint(2, 1)) + ld(10, vint(1, 1) + vint(2, 1)))),
        f"padding borderAmounts startEdgeSize = 2^63: {trap} in LayerImporter.edges (inspect and compile)", COMPILE)
    add("image_2p62_meanImage", model(None, b"", input_type=image_type(P62, 4),
                                      preprocessing=ld(2, ld(1, "x") + ld(11, floats(1, [0.0] * 4)))),
        "image input 2^62×4 with a mean image: c·h·w overflowed in CoreMLImporter.importInput "
        "(CoreMLImporter.swift:240; inspect and compile)", COMPILE)
    def f32(field, v):  # a single float field (wire type 5)
        import struct
        return varint(field << 3 | 5) + struct.pack("<f", v)

    add("rangeStatic_count_minus_3e38", model(635, f32(1, -3.0e38) + f32(2, 0.0) + f32(3, 1.0),
                                              preprocessing=vint(5, 1)),  # EXACT_ARRAY_MAPPING
        "rangeStatic start 0, end -3e38, step 1: RangeAttributes.count converted ceil(-3e38) with "
        "Int(_:) ('Double value cannot be converted to Int because the result would be less than Int.min'; "
        "found by the mlmodel fuzz target, inspect and compile)", COMPILE)
    return c
