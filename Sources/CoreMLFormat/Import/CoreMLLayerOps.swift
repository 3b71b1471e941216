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
        "bias": [.batchNorm, .constant, .elementwise, .reshape],
        "clip": [.clip],
        "concat": [.concat],
        "convolution": [.conv2d, .deconv2d],
        "crop": [.crop, .identity],
        "custom": [.custom],
        "dot": [.elementwise, .matmul, .reduce, .reshape, .unary],
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
        "pooling": [.activation, .globalPool2d, .pad, .pool2d, .unary],
        "reduce": [.argmax, .cast, .reduce, .reshape, .unary],
        "reorganizeData": [.depthToSpace, .reshape, .spaceToDepth, .transpose],
        "reshape": [.reshape, .transpose],
        "resizeBilinear": [.matmul, .reshape, .transpose, .upsample2d],
        "scale": [.batchNorm, .constant, .elementwise, .reshape],
        "simpleRecurrent": [.constant, .recurrent, .reshape],
        "slice": [.crop, .pool2d, .reshape, .sliceByIndex],
        "softmax": [.softmax],
        "split": [.crop, .split],
        "unary": [.unary],
        "uniDirectionalLSTM": [.activation, .binary, .clip, .constant, .dense, .recurrent, .reshape, .sliceByIndex, .split, .stack],
        "upsample": [.matmul, .reshape, .transpose, .upsample2d],
        // MARK: rank-N machinery (nncore; Layers/ExactMapping.swift)
        "sequenceRepeat": [.tile],
        "convolution3d": [.conv3d, .transpose],
        "pooling3d": [.pad, .pool3d, .transpose],
        "globalPooling3d": [.reduce],
        "branch": [.compare, .cond, .constant, .unary],
        "loop": [.activation, .compare, .constant, .logical, .unary, .whileLoop],
        "loopBreak": [.constant],
        "loopContinue": [.constant],
        "NonMaximumSuppression": [.cast, .nonMaximumSuppression],
        "cropResize": [.activation, .binary, .cast, .clip, .gather, .matmul, .reshapeND, .sliceByIndex, .unary],
        // MARK: shape family (Layers/ShapeImport.swift)
        "transpose": [.transpose],
        "reshapeStatic": [.reshapeND],
        "reshapeLike": [.reshapeND],
        "rankPreservingReshape": [.reshapeND],
        "flattenTo2D": [.reshapeND],
        "expandDims": [.expandDims],
        "squeeze": [.identity, .reshapeND, .squeeze],
        "concatND": [.concat, .reshapeND, .stack],
        "splitND": [.identity, .split],
        "stack": [.stack],
        "tile": [.activation, .binary, .cast, .constant, .cumsum, .fill, .gather, .sliceByIndex, .tile],
        "sliceStatic": [.reshapeND, .sliceByIndex],
        "sliceBySize": [.binary, .cast, .constant, .gather],
        "slidingWindows": [.slidingWindows],
        "gather": [.cast, .gather],
        "gatherND": [.cast, .gatherND],
        "gatherAlongAxis": [.cast, .gatherAlongAxis],
        "scatter": [.cast, .scatter],
        "scatterND": [.cast, .scatterND],
        "scatterAlongAxis": [.cast, .scatterAlongAxis],
        "embeddingND": [.binary, .embedding, .reshapeND],
        "getShape": [.cast, .shape],
        "broadcastToStatic": [.binary, .fill],
        "broadcastToDynamic": [.binary, .fill],
        "broadcastToLike": [.binary, .fill, .shape],
        "fillStatic": [.fill],
        "fillDynamic": [.fill, .reshapeND],
        "fillLike": [.fill, .shape],
        "rangeStatic": [.range1d],
        "loadConstantND": [.constant],
        "reverse": [.identity, .reverse],
        "reverseSeq": [.cast, .reverseSequence],
        "oneHot": [.cast, .compare, .constant, .cumsum, .expandDims, .fill, .oneHot, .reshapeND, .select],
        "upperTriangular": [.bandPart, .cast, .constant, .select],
        "lowerTriangular": [.bandPart, .cast, .constant, .select],
        "matrixBandPart": [.bandPart, .cast, .constant, .select],
        "argSort": [.argsort, .cast],
        "topK": [.argsort, .cast, .cumsum, .fill, .gather, .gatherAlongAxis, .identity, .topk],
        "cumSum": [.cumsum],
        "batchedMatmul": [.binary, .matmul, .reshapeND],
        "constantPad": [.pad],
        "copy": [.identity],
        "rangeDynamic": [.binary, .cast, .constant, .cumsum, .fill, .unary],
        "whereNonZero": [.argsort, .binary, .cast, .compare, .constant, .cumsum, .fill, .gather, .reduce, .reshapeND, .stack, .unary],
        "sliceDynamic": [.binary, .cast, .compare, .constant, .cumsum, .fill, .gather, .identity, .reshapeND, .select,
                         .sliceByIndex, .squeeze, .unary],
        "reshapeDynamic": [.binary, .cast, .cumsum, .fill, .gather, .reduce, .reshapeND],
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
        "tanh": [.activation], "gelu": [.activation], "clampedReLU": [.activation],
        "randomNormalLike": [.random], "randomUniformLike": [.random], "randomBernoulliLike": [.random],
        "randomNormalStatic": [.fill, .random], "randomUniformStatic": [.fill, .random], "randomBernoulliStatic": [.fill, .random],
        "randomNormalDynamic": [.fill, .random], "randomUniformDynamic": [.fill, .random], "randomBernoulliDynamic": [.fill, .random],
        "categoricalDistribution": [.argmax, .binary, .cast, .expandDims, .random, .tile, .unary],
    ]

    /// Layout changes the importer adds around classic layers in EXACT_ARRAY_MAPPING networks
    /// (rank-N tensors ↔ the NHWC layout of the rank-5 conversion, whose vector blobs [N, C] the
    /// rank-5 converters reshape to [N, 1, 1, C]), for any layer type; squeeze / expandDims of
    /// leading 1s when an input has a flexible shape (Import/FlexibleShapeImport.swift).
    public static let exactLayoutOps: Set<OpKind> = [.reshape, .reshapeND, .transpose, .squeeze, .expandDims]

    /// Why a layer type the schema declares is not imported at all (types absent from `table`).
    /// `CoreMLLayerCatalogTests` checks that every type is in `table` or here.
    public static let refusals: [String: String] = [:]

    /// Configurations of imported layer types that are refused with a typed error (the reasons
    /// `LayerImporter.staticUnsupportedReason` and the converters give).
    public static let limitations: [String: String] = [
        "uniDirectionalLSTM": "in RANK5 networks: peephole connections and a coupled input/forget gate (EXACT networks unroll "
            + "them), different cell-input and cell-output activations; the cell clip threshold is applied only when unrolled (else a warning)",
        "biDirectionalLSTM": "peephole connections, coupled input/forget gate, different forward and backward activations",
        "custom": "imports as the IR's custom op; running it needs an implementation registered for its class "
            + "(else a typed error naming the class at load)",
        "batchnorm": "computeMeanVar without instanceNormalization (batch statistics at run time)",
        "upsample": "nearest-neighbour upsampling by fractional factors",
        "NonMaximumSuppression": "thresholds or maxBoxes from run-time inputs (taken when known at import)",
        "cropResize": "UPSAMPLE_MODE and ROI_ALIGN_MODE grids inside run-time boxes",
        "convolution3d": "isDeconvolution",
        "convolution": "weights from a second input (specification 4)",
    ]

    /// Layer types holding nested networks: the layers of those networks are checked against
    /// this table one by one, so the nodes they add are not held against the holder's row.
    public static let nestingLayers: Set<String> = ["branch", "loop"]

    /// The Core ML layer types that import to op kind `kind`, sorted.
    public static func layers(producing kind: OpKind) -> [String] {
        table.filter { $0.value.contains(kind) }.map(\.key).sorted()
    }
}
