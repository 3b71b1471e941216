import MLGraph

/// Which IR op kinds the importer emits for each NeuralNetwork layer type (Apple's field name in
/// NeuralNetwork.proto): listed by `mlconv ops`, and checked after every imported layer, so a
/// layer emitting a kind missing here fails with an internal error in the tests instead of the
/// list silently drifting. Layer types absent here are not imported (see
/// `LayerImporter.staticUnsupportedReason`).
public enum CoreMLLayerOps {
    public static let table: [String: Set<OpKind>] = [
        "activation": [.activation, .batchNorm, .prelu],
        "add": [.activation, .elementwise, .reshape],
        "average": [.elementwise],
        "batchnorm": [.batchNorm, .instanceNorm],
        "biDirectionalLSTM": [.constant, .recurrent, .reshape],
        "bias": [.constant, .elementwise, .reshape],
        "clip": [.clip],
        "concat": [.concat],
        "convolution": [.conv2d, .deconv2d],
        "crop": [.crop, .identity],
        "custom": [.custom],
        "dot": [.matmul],
        "embedding": [.batchNorm, .embedding, .reshape],
        "flatten": [.reshape, .transpose],
        "gru": [.constant, .recurrent, .reshape],
        "innerProduct": [.dense, .reshape, .transpose],
        "l2normalize": [.l2Norm],
        "loadConstant": [.constant],
        "lrn": [.localResponseNorm],
        "max": [.elementwise],
        "min": [.elementwise],
        "multiply": [.activation, .elementwise, .reshape],
        "mvn": [.elementwise, .globalPool2d, .layerNorm],
        "padding": [.pad],
        "permute": [.identity, .reshape, .transpose],
        "pooling": [.globalPool2d, .pad, .pool2d],
        "reduce": [.reduce],
        "reorganizeData": [.depthToSpace, .reshape, .spaceToDepth, .transpose],
        "reshape": [.reshape, .transpose],
        "resizeBilinear": [.upsample2d],
        "scale": [.batchNorm, .constant, .elementwise, .reshape],
        "simpleRecurrent": [.constant, .recurrent, .reshape],
        "slice": [.crop, .pool2d, .reshape],
        "softmax": [.softmax],
        "split": [.crop, .split],
        "unary": [.unary],
        "uniDirectionalLSTM": [.constant, .recurrent, .reshape],
        "upsample": [.reshape, .upsample2d],
        // MARK: rank-N machinery (nncore; Layers/ExactMapping.swift)
        "sequenceRepeat": [.tile],
        // MARK: nnmath (Layers/MathImport.swift)
        "ceil": [.unary], "floor": [.unary], "sign": [.unary], "round": [.unary], "exp2": [.unary], "erf": [.unary],
        "sin": [.unary], "cos": [.unary], "tan": [.unary], "asin": [.unary], "acos": [.unary], "atan": [.unary],
        "sinh": [.unary], "cosh": [.unary], "asinh": [.unary], "acosh": [.unary], "atanh": [.unary],
        "addBroadcastable": [.binary], "subtractBroadcastable": [.binary], "multiplyBroadcastable": [.binary],
        "divideBroadcastable": [.binary], "maxBroadcastable": [.binary], "minBroadcastable": [.binary],
        "powBroadcastable": [.binary], "modBroadcastable": [.binary], "floorDivBroadcastable": [.binary],
        "equal": [.cast, .compare, .constant], "notEqual": [.cast, .compare, .constant],
        "lessThan": [.cast, .compare, .constant], "lessEqual": [.cast, .compare, .constant],
        "greaterThan": [.cast, .compare, .constant], "greaterEqual": [.cast, .compare, .constant],
        "logicalAnd": [.cast, .logical], "logicalOr": [.cast, .logical], "logicalXor": [.cast, .logical],
        "logicalNot": [.cast, .logical], "whereBroadcastable": [.cast, .select],
        "softmaxND": [.softmax], "argMax": [.argmax, .cast], "argMin": [.argmin, .cast],
        "reduceSum": [.reduce, .reshapeND], "reduceMean": [.reduce, .reshapeND], "reduceProd": [.reduce, .reshapeND],
        "reduceMin": [.reduce, .reshapeND], "reduceMax": [.reduce, .reshapeND], "reduceL1": [.reduce, .reshapeND],
        "reduceL2": [.reduce, .reshapeND], "reduceLogSum": [.reduce, .reshapeND, .unary],
        "reduceLogSumExp": [.reduce, .reshapeND], "reduceSumSquare": [.reduce, .reshapeND],
        "layerNormalization": [.layerNorm],
        "copy": [.identity], "tanh": [.activation], "gelu": [.activation], "clampedReLU": [.activation],
        "randomNormalLike": [.random], "randomUniformLike": [.random], "randomBernoulliLike": [.random],
        "randomNormalStatic": [.fill, .random], "randomUniformStatic": [.fill, .random], "randomBernoulliStatic": [.fill, .random],
        "randomNormalDynamic": [.fill, .random], "randomUniformDynamic": [.fill, .random], "randomBernoulliDynamic": [.fill, .random],
        "categoricalDistribution": [.argmax, .binary, .cast, .expandDims, .random, .tile, .unary],
    ]

    /// Layout changes the importer adds around classic layers in EXACT_ARRAY_MAPPING networks
    /// (rank-N tensors ↔ the NHWC layout of the rank-5 conversion), for any layer type.
    public static let exactLayoutOps: Set<OpKind> = [.reshapeND, .transpose]

    /// The Core ML layer types that import to op kind `kind`, sorted.
    public static func layers(producing kind: OpKind) -> [String] {
        table.filter { $0.value.contains(kind) }.map(\.key).sorted()
    }
}
