import CCoreMLProto

extension Spec {
    /// A layer's tensor rank and shape hints (`Tensor`, spec 4+).
    public struct Tensor: Equatable, Sendable {
        public var rank: UInt32
        public var dimValue: [Int64]
        public init(rank: UInt32, dimValue: [Int64] = []) {
            self.rank = rank
            self.dimValue = dimValue
        }
    }

    /// One layer of a neural network (`NeuralNetworkLayer`).
    public struct NeuralNetworkLayer: Equatable, Sendable {
        public var name: String
        /// Names of the input blobs.
        public var input: [String]
        /// Names of the output blobs.
        public var output: [String]
        public var inputTensor: [Tensor]
        public var outputTensor: [Tensor]
        public var isUpdatable: Bool
        /// The layer's type and parameters (the `layer` oneof).
        public var layer: Layer
        /// Unknown fields; for `.unsupported(fieldNumber:)` layers this holds the layer's params.
        public var unknownFields: UnknownFields

        public init(name: String, input: [String], output: [String], layer: Layer,
                    inputTensor: [Tensor] = [], outputTensor: [Tensor] = [], isUpdatable: Bool = false,
                    unknownFields: UnknownFields = []) {
            self.name = name
            self.input = input
            self.output = output
            self.layer = layer
            self.inputTensor = inputTensor
            self.outputTensor = outputTensor
            self.isUpdatable = isUpdatable
            self.unknownFields = unknownFields
        }
    }

    /// Layer types without parameters (rank-N elementwise and math layers, spec 4+), by their
    /// field number in `NeuralNetworkLayer`.
    public struct SimpleLayerKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let copy = SimpleLayerKind(rawValue: 600)
        public static let ceil = SimpleLayerKind(rawValue: 665)
        public static let floor = SimpleLayerKind(rawValue: 670)
        public static let sign = SimpleLayerKind(rawValue: 680)
        public static let round = SimpleLayerKind(rawValue: 685)
        public static let exp2 = SimpleLayerKind(rawValue: 700)
        public static let sin = SimpleLayerKind(rawValue: 710)
        public static let cos = SimpleLayerKind(rawValue: 715)
        public static let tan = SimpleLayerKind(rawValue: 720)
        public static let asin = SimpleLayerKind(rawValue: 730)
        public static let acos = SimpleLayerKind(rawValue: 735)
        public static let atan = SimpleLayerKind(rawValue: 740)
        public static let sinh = SimpleLayerKind(rawValue: 750)
        public static let cosh = SimpleLayerKind(rawValue: 755)
        public static let tanh = SimpleLayerKind(rawValue: 760)
        public static let asinh = SimpleLayerKind(rawValue: 770)
        public static let acosh = SimpleLayerKind(rawValue: 775)
        public static let atanh = SimpleLayerKind(rawValue: 780)
        public static let erf = SimpleLayerKind(rawValue: 790)
        public static let minBroadcastable = SimpleLayerKind(rawValue: 870)
        public static let maxBroadcastable = SimpleLayerKind(rawValue: 875)
        public static let addBroadcastable = SimpleLayerKind(rawValue: 880)
        public static let powBroadcastable = SimpleLayerKind(rawValue: 885)
        public static let divideBroadcastable = SimpleLayerKind(rawValue: 890)
        public static let multiplyBroadcastable = SimpleLayerKind(rawValue: 900)
        public static let subtractBroadcastable = SimpleLayerKind(rawValue: 905)

        static let all: Set<UInt32> = [600, 665, 670, 680, 685, 700, 710, 715, 720, 730, 735, 740, 750,
                                       755, 760, 770, 775, 780, 790, 870, 875, 880, 885, 890, 900, 905]
        public var description: String { NeuralNetworkLayer.typeName(fieldNumber: rawValue) }
    }

    /// The `ReduceXxxLayerParams` family (spec 4+), by field number in `NeuralNetworkLayer`.
    public struct ReduceNDOperation: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let l1 = ReduceNDOperation(rawValue: 1250)
        public static let l2 = ReduceNDOperation(rawValue: 1255)
        public static let max = ReduceNDOperation(rawValue: 1260)
        public static let min = ReduceNDOperation(rawValue: 1265)
        public static let sum = ReduceNDOperation(rawValue: 1270)
        public static let prod = ReduceNDOperation(rawValue: 1275)
        public static let mean = ReduceNDOperation(rawValue: 1280)
        public static let logSum = ReduceNDOperation(rawValue: 1285)
        public static let sumSquare = ReduceNDOperation(rawValue: 1290)
        public static let logSumExp = ReduceNDOperation(rawValue: 1295)
        static let all: Set<UInt32> = [1250, 1255, 1260, 1265, 1270, 1275, 1280, 1285, 1290, 1295]
        public var description: String { NeuralNetworkLayer.typeName(fieldNumber: rawValue) }
    }
}

extension Spec.NeuralNetworkLayer {
    /// The `layer` oneof. Classic layers work on rank-5 blobs [Seq, Batch, C, H, W]; rank-N
    /// layers (spec 4+) on the actual shapes.
    public enum Layer: Equatable, Sendable {
        case none
        case convolution(Spec.ConvolutionLayerParams)
        case pooling(Spec.PoolingLayerParams)
        case activation(Spec.ActivationParams)
        case innerProduct(Spec.InnerProductLayerParams)
        case embedding(Spec.EmbeddingLayerParams)
        case batchnorm(Spec.BatchnormLayerParams)
        case mvn(Spec.MeanVarianceNormalizeLayerParams)
        case l2normalize(epsilon: Float)
        /// Softmax over the channel axis.
        case softmax
        case lrn(Spec.LRNLayerParams)
        case crop(Spec.CropLayerParams)
        case padding(Spec.PaddingLayerParams)
        case upsample(Spec.UpsampleLayerParams)
        case resizeBilinear(Spec.ResizeBilinearLayerParams)
        case unary(Spec.UnaryFunctionLayerParams)
        /// Elementwise sum of all inputs (plus alpha when there is one input).
        case add(alpha: Float)
        case multiply(alpha: Float)
        case average
        case scale(Spec.ScaleLayerParams)
        case bias(Spec.BiasLayerParams)
        case max
        case min
        case dot(cosineSimilarity: Bool)
        case reduce(Spec.ReduceLayerParams)
        case loadConstant(Spec.LoadConstantLayerParams)
        case reshape(Spec.ReshapeLayerParams)
        case flatten(mode: Spec.FlattenOrder)
        /// Axis permutation of the rank-4 [C, H, W, Seq] view (Apple's PermuteLayerParams.axis).
        case permute(axis: [UInt64])
        /// Concatenation along channels (or the sequence axis when `sequenceConcat`).
        case concat(sequenceConcat: Bool)
        case split(nOutputs: UInt64)
        case sequenceRepeat(nRepetitions: UInt64)
        case reorganizeData(Spec.ReorganizeDataLayerParams)
        case slice(Spec.SliceLayerParams)
        case simpleRecurrent(Spec.SimpleRecurrentLayerParams)
        case gru(Spec.GRULayerParams)
        case uniDirectionalLSTM(Spec.UniDirectionalLSTMLayerParams)
        case biDirectionalLSTM(Spec.BiDirectionalLSTMLayerParams)
        case custom(Spec.CustomLayerParams)
        /// A parameterless rank-N layer (copy, ceil, …, addBroadcastable, …).
        case simple(Spec.SimpleLayerKind)
        case clip(minVal: Float, maxVal: Float)
        case gelu(mode: Spec.GeluMode)
        case tile(reps: [UInt64])
        case stack(axis: Int64)
        case gather(axis: Int64)
        case softmaxND(axis: Int64)
        case splitND(Spec.SplitNDLayerParams)
        case concatND(axis: Int64, interleave: Bool)
        case transpose(axes: [UInt64])
        case sliceStatic(Spec.SliceStaticLayerParams)
        case argMax(axis: Int64, removeDim: Bool)
        case embeddingND(Spec.EmbeddingNDLayerParams)
        case batchedMatmul(Spec.BatchedMatMulLayerParams)
        case loadConstantND(Spec.LoadConstantLayerParams)
        case squeeze(axes: [Int64], squeezeAll: Bool)
        case expandDims(axes: [Int64])
        case flattenTo2D(axis: Int64)
        case reshapeStatic(targetShape: [Int64])
        case constantPad(Spec.ConstantPaddingLayerParams)
        case reduceND(Spec.ReduceNDOperation, Spec.ReduceNDLayerParams)
        case layerNormalization(Spec.LayerNormalizationLayerParams)
        case clampedReLU(alpha: Float, beta: Float)
        /// A layer type mlconv's schema does not declare (named by `typeName(fieldNumber:)`);
        /// its parameters are kept in the layer's `unknownFields`.
        case unsupported(fieldNumber: UInt32)

        /// The field number of this case in `NeuralNetworkLayer` (0 for `.none`).
        public var fieldNumber: UInt32 {
            switch self {
            case .none: return 0
            case .convolution: return 100
            case .pooling: return 120
            case .activation: return 130
            case .innerProduct: return 140
            case .embedding: return 150
            case .batchnorm: return 160
            case .mvn: return 165
            case .l2normalize: return 170
            case .softmax: return 175
            case .lrn: return 180
            case .crop: return 190
            case .padding: return 200
            case .upsample: return 210
            case .resizeBilinear: return 211
            case .unary: return 220
            case .add: return 230
            case .multiply: return 231
            case .average: return 240
            case .scale: return 245
            case .bias: return 250
            case .max: return 260
            case .min: return 261
            case .dot: return 270
            case .reduce: return 280
            case .loadConstant: return 290
            case .reshape: return 300
            case .flatten: return 301
            case .permute: return 310
            case .concat: return 320
            case .split: return 330
            case .sequenceRepeat: return 340
            case .reorganizeData: return 345
            case .slice: return 350
            case .simpleRecurrent: return 400
            case .gru: return 410
            case .uniDirectionalLSTM: return 420
            case .biDirectionalLSTM: return 430
            case .custom: return 500
            case let .simple(k): return k.rawValue
            case .clip: return 660
            case .gelu: return 795
            case .tile: return 920
            case .stack: return 925
            case .gather: return 930
            case .softmaxND: return 950
            case .splitND: return 975
            case .concatND: return 980
            case .transpose: return 985
            case .sliceStatic: return 995
            case .argMax: return 1025
            case .embeddingND: return 1040
            case .batchedMatmul: return 1045
            case .loadConstantND: return 1070
            case .squeeze: return 1120
            case .expandDims: return 1125
            case .flattenTo2D: return 1130
            case .reshapeStatic: return 1140
            case .constantPad: return 1155
            case let .reduceND(op, _): return op.rawValue
            case .layerNormalization: return 1350
            case .clampedReLU: return 1460
            case let .unsupported(n): return n
            }
        }

        /// Apple's name of the layer type, e.g. "convolution", "batchedMatmul".
        public var typeName: String { Spec.NeuralNetworkLayer.typeName(fieldNumber: fieldNumber) }
    }

    /// Apple's name for a `NeuralNetworkLayer.layer` field number ("field N" if not an Apple layer).
    public static func typeName(fieldNumber: UInt32) -> String {
        fieldNumber == 0 ? "none" : (appleLayerTypes[fieldNumber] ?? "field \(fieldNumber)")
    }

    /// Every layer type of Apple's `NeuralNetworkLayer.layer` oneof (coremltools 8), by field number.
    static let appleLayerTypes: [UInt32: String] = [
        100: "convolution", 120: "pooling", 130: "activation", 140: "innerProduct", 150: "embedding", 160:
        "batchnorm", 165: "mvn", 170: "l2normalize", 175: "softmax", 180: "lrn", 190: "crop", 200:
        "padding", 210: "upsample", 211: "resizeBilinear", 212: "cropResize", 220: "unary", 230: "add",
        231: "multiply", 240: "average", 245: "scale", 250: "bias", 260: "max", 261: "min", 270: "dot",
        280: "reduce", 290: "loadConstant", 300: "reshape", 301: "flatten", 310: "permute", 320: "concat",
        330: "split", 340: "sequenceRepeat", 345: "reorganizeData", 350: "slice", 400: "simpleRecurrent",
        410: "gru", 420: "uniDirectionalLSTM", 430: "biDirectionalLSTM", 500: "custom", 600: "copy", 605:
        "branch", 615: "loop", 620: "loopBreak", 625: "loopContinue", 635: "rangeStatic", 640:
        "rangeDynamic", 660: "clip", 665: "ceil", 670: "floor", 680: "sign", 685: "round", 700: "exp2",
        710: "sin", 715: "cos", 720: "tan", 730: "asin", 735: "acos", 740: "atan", 750: "sinh", 755:
        "cosh", 760: "tanh", 770: "asinh", 775: "acosh", 780: "atanh", 790: "erf", 795: "gelu", 815:
        "equal", 820: "notEqual", 825: "lessThan", 827: "lessEqual", 830: "greaterThan", 832:
        "greaterEqual", 840: "logicalOr", 845: "logicalXor", 850: "logicalNot", 855: "logicalAnd", 865:
        "modBroadcastable", 870: "minBroadcastable", 875: "maxBroadcastable", 880: "addBroadcastable", 885:
        "powBroadcastable", 890: "divideBroadcastable", 895: "floorDivBroadcastable", 900:
        "multiplyBroadcastable", 905: "subtractBroadcastable", 920: "tile", 925: "stack", 930: "gather",
        935: "scatter", 940: "gatherND", 945: "scatterND", 950: "softmaxND", 952: "gatherAlongAxis", 954:
        "scatterAlongAxis", 960: "reverse", 965: "reverseSeq", 975: "splitND", 980: "concatND", 985:
        "transpose", 995: "sliceStatic", 1000: "sliceDynamic", 1005: "slidingWindows", 1015: "topK", 1020:
        "argMin", 1025: "argMax", 1040: "embeddingND", 1045: "batchedMatmul", 1065: "getShape", 1070:
        "loadConstantND", 1080: "fillLike", 1085: "fillStatic", 1090: "fillDynamic", 1100:
        "broadcastToLike", 1105: "broadcastToStatic", 1110: "broadcastToDynamic", 1120: "squeeze", 1125:
        "expandDims", 1130: "flattenTo2D", 1135: "reshapeLike", 1140: "reshapeStatic", 1145:
        "reshapeDynamic", 1150: "rankPreservingReshape", 1155: "constantPad", 1170: "randomNormalLike",
        1175: "randomNormalStatic", 1180: "randomNormalDynamic", 1190: "randomUniformLike", 1195:
        "randomUniformStatic", 1200: "randomUniformDynamic", 1210: "randomBernoulliLike", 1215:
        "randomBernoulliStatic", 1220: "randomBernoulliDynamic", 1230: "categoricalDistribution", 1250:
        "reduceL1", 1255: "reduceL2", 1260: "reduceMax", 1265: "reduceMin", 1270: "reduceSum", 1275:
        "reduceProd", 1280: "reduceMean", 1285: "reduceLogSum", 1290: "reduceSumSquare", 1295:
        "reduceLogSumExp", 1313: "whereNonZero", 1315: "matrixBandPart", 1320: "lowerTriangular", 1325:
        "upperTriangular", 1330: "whereBroadcastable", 1350: "layerNormalization", 1400:
        "NonMaximumSuppression", 1450: "oneHot", 1455: "cumSum", 1460: "clampedReLU", 1461: "argSort",
        1465: "pooling3d", 1466: "globalPooling3d", 1470: "sliceBySize", 1471: "convolution3d",    ]
}

// MARK: - C bridge

extension Spec.Tensor: CMessageCodable {
    init(reading r: CReader) throws {
        rank = r.uint32(1)
        dimValue = r.int64s(2)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint32: rank)
        w.set(2, int64s: dimValue)
    }
}

extension Spec.NeuralNetworkLayer: CMessageCodable, ReportsOwnUnknownFields {
    init(reading r0: CReader) throws {
        name = r0.string(1)
        let r = r0.renamed("\(r0.path) \"\(name)\"")
        input = r.strings(2)
        output = r.strings(3)
        inputTensor = try r.messages(4)
        outputTensor = try r.messages(5)
        isUpdatable = r.bool(10)
        unknownFields = r.unknownFields
        let c = r.oneofCase(100)
        layer = c == 0 ? .none : try Layer(reading: r, fieldNumber: c)
        if case .none = layer {
            // A layer type outside our schema arrives as an unknown field >= 100.
            if let u = unknownFields.first(where: { $0.fieldNumber >= 100 && $0.wireType == .lengthDelimited }) {
                layer = .unsupported(fieldNumber: u.fieldNumber)
                r.ctx.warnings.append("\(r.path): layer \"\(name)\" has layer type "
                    + "\(Spec.NeuralNetworkLayer.typeName(fieldNumber: u.fieldNumber)) (field \(u.fieldNumber)), "
                    + "which mlconv does not support; its parameters are kept verbatim, not decoded")
            }
        }
        let except: Set<UInt32> = { if case let .unsupported(n) = layer { return [n] } else { return [] } }()
        r.reportUnknownFields(except: except)
    }

    func write(to w: CWriter) throws {
        try w.set(1, string: name)
        try w.set(2, strings: input)
        try w.set(3, strings: output)
        try w.set(4, messages: inputTensor)
        try w.set(5, messages: outputTensor)
        w.set(10, bool: isUpdatable)
        try layer.write(to: w)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.NeuralNetworkLayer.Layer {
    init(reading r: CReader, fieldNumber c: UInt32) throws {
        if Spec.SimpleLayerKind.all.contains(c) {
            _ = r.sub(c)
            self = .simple(Spec.SimpleLayerKind(rawValue: c))
            return
        }
        if Spec.ReduceNDOperation.all.contains(c) {
            self = .reduceND(Spec.ReduceNDOperation(rawValue: c), try r.message(c)!)
            return
        }
        switch c {
        case 100: self = .convolution(try r.message(c)!)
        case 120: self = .pooling(try r.message(c)!)
        case 130: self = .activation(try r.message(c)!)
        case 140: self = .innerProduct(try r.message(c)!)
        case 150: self = .embedding(try r.message(c)!)
        case 160: self = .batchnorm(try r.message(c)!)
        case 165: self = .mvn(try r.message(c)!)
        case 170: self = .l2normalize(epsilon: r.sub(c)!.float(1))
        case 175: _ = r.sub(c); self = .softmax
        case 180: self = .lrn(try r.message(c)!)
        case 190: self = .crop(try r.message(c)!)
        case 200: self = .padding(try r.message(c)!)
        case 210: self = .upsample(try r.message(c)!)
        case 211: self = .resizeBilinear(try r.message(c)!)
        case 220: self = .unary(try r.message(c)!)
        case 230: self = .add(alpha: r.sub(c)!.float(1))
        case 231: self = .multiply(alpha: r.sub(c)!.float(1))
        case 240: _ = r.sub(c); self = .average
        case 245: self = .scale(try r.message(c)!)
        case 250: self = .bias(try r.message(c)!)
        case 260: _ = r.sub(c); self = .max
        case 261: _ = r.sub(c); self = .min
        case 270: self = .dot(cosineSimilarity: r.sub(c)!.bool(1))
        case 280: self = .reduce(try r.message(c)!)
        case 290: self = .loadConstant(try r.message(c)!)
        case 300: self = .reshape(try r.message(c)!)
        case 301: self = .flatten(mode: Spec.FlattenOrder(rawValue: r.sub(c)!.enumValue(1)))
        case 310: self = .permute(axis: r.sub(c)!.uint64s(1))
        case 320: self = .concat(sequenceConcat: r.sub(c)!.bool(100))
        case 330: self = .split(nOutputs: r.sub(c)!.uint64(1))
        case 340: self = .sequenceRepeat(nRepetitions: r.sub(c)!.uint64(1))
        case 345: self = .reorganizeData(try r.message(c)!)
        case 350: self = .slice(try r.message(c)!)
        case 400: self = .simpleRecurrent(try r.message(c)!)
        case 410: self = .gru(try r.message(c)!)
        case 420: self = .uniDirectionalLSTM(try r.message(c)!)
        case 430: self = .biDirectionalLSTM(try r.message(c)!)
        case 500: self = .custom(try r.message(c)!)
        case 660: let s = r.sub(c)!; self = .clip(minVal: s.float(1), maxVal: s.float(2))
        case 795: self = .gelu(mode: Spec.GeluMode(rawValue: r.sub(c)!.enumValue(1)))
        case 920: self = .tile(reps: r.sub(c)!.uint64s(1))
        case 925: self = .stack(axis: r.sub(c)!.int64(1))
        case 930: self = .gather(axis: r.sub(c)!.int64(1))
        case 950: self = .softmaxND(axis: r.sub(c)!.int64(1))
        case 975: self = .splitND(try r.message(c)!)
        case 980: let s = r.sub(c)!; self = .concatND(axis: s.int64(1), interleave: s.bool(2))
        case 985: self = .transpose(axes: r.sub(c)!.uint64s(1))
        case 995: self = .sliceStatic(try r.message(c)!)
        case 1025: let s = r.sub(c)!; self = .argMax(axis: s.int64(1), removeDim: s.bool(2))
        case 1040: self = .embeddingND(try r.message(c)!)
        case 1045: self = .batchedMatmul(try r.message(c)!)
        case 1070: self = .loadConstantND(try r.message(c)!)
        case 1120: let s = r.sub(c)!; self = .squeeze(axes: s.int64s(1), squeezeAll: s.bool(2))
        case 1125: self = .expandDims(axes: r.sub(c)!.int64s(1))
        case 1130: self = .flattenTo2D(axis: r.sub(c)!.int64(1))
        case 1140: self = .reshapeStatic(targetShape: r.sub(c)!.int64s(1))
        case 1155: self = .constantPad(try r.message(c)!)
        case 1350: self = .layerNormalization(try r.message(c)!)
        case 1460: let s = r.sub(c)!; self = .clampedReLU(alpha: s.float(1), beta: s.float(2))
        default:
            preconditionFailure("mlconv schema/code mismatch: layer field \(c) is declared but not decoded")
        }
    }

    func write(to w: CWriter) throws {
        let c = fieldNumber
        switch self {
        case .none, .unsupported: break
        case let .convolution(p): try w.set(c, message: p)
        case let .pooling(p): try w.set(c, message: p)
        case let .activation(p): try w.set(c, message: p)
        case let .innerProduct(p): try w.set(c, message: p)
        case let .embedding(p): try w.set(c, message: p)
        case let .batchnorm(p): try w.set(c, message: p)
        case let .mvn(p): try w.set(c, message: p)
        case let .l2normalize(eps): w.sub(c) { $0.set(1, float: eps) }
        case .softmax, .average, .max, .min, .simple: w.sub(c)
        case let .lrn(p): try w.set(c, message: p)
        case let .crop(p): try w.set(c, message: p)
        case let .padding(p): try w.set(c, message: p)
        case let .upsample(p): try w.set(c, message: p)
        case let .resizeBilinear(p): try w.set(c, message: p)
        case let .unary(p): try w.set(c, message: p)
        case let .add(a), let .multiply(a): w.sub(c) { $0.set(1, float: a) }
        case let .scale(p): try w.set(c, message: p)
        case let .bias(p): try w.set(c, message: p)
        case let .dot(cos): w.sub(c) { $0.set(1, bool: cos) }
        case let .reduce(p): try w.set(c, message: p)
        case let .loadConstant(p), let .loadConstantND(p): try w.set(c, message: p)
        case let .reshape(p): try w.set(c, message: p)
        case let .flatten(mode): w.sub(c) { $0.set(1, enum: mode.rawValue) }
        case let .permute(axis): w.sub(c) { $0.set(1, uint64s: axis) }
        case let .concat(seq): w.sub(c) { $0.set(100, bool: seq) }
        case let .split(n): w.sub(c) { $0.set(1, uint64: n) }
        case let .sequenceRepeat(n): w.sub(c) { $0.set(1, uint64: n) }
        case let .reorganizeData(p): try w.set(c, message: p)
        case let .slice(p): try w.set(c, message: p)
        case let .simpleRecurrent(p): try w.set(c, message: p)
        case let .gru(p): try w.set(c, message: p)
        case let .uniDirectionalLSTM(p): try w.set(c, message: p)
        case let .biDirectionalLSTM(p): try w.set(c, message: p)
        case let .custom(p): try w.set(c, message: p)
        case let .clip(lo, hi): w.sub(c) { $0.set(1, float: lo); $0.set(2, float: hi) }
        case let .gelu(mode): w.sub(c) { $0.set(1, enum: mode.rawValue) }
        case let .tile(reps): w.sub(c) { $0.set(1, uint64s: reps) }
        case let .stack(axis), let .gather(axis), let .softmaxND(axis), let .flattenTo2D(axis):
            w.sub(c) { $0.set(1, int64: axis) }
        case let .splitND(p): try w.set(c, message: p)
        case let .concatND(axis, interleave): w.sub(c) { $0.set(1, int64: axis); $0.set(2, bool: interleave) }
        case let .transpose(axes): w.sub(c) { $0.set(1, uint64s: axes) }
        case let .sliceStatic(p): try w.set(c, message: p)
        case let .argMax(axis, removeDim): w.sub(c) { $0.set(1, int64: axis); $0.set(2, bool: removeDim) }
        case let .embeddingND(p): try w.set(c, message: p)
        case let .batchedMatmul(p): try w.set(c, message: p)
        case let .squeeze(axes, all): w.sub(c) { $0.set(1, int64s: axes); $0.set(2, bool: all) }
        case let .expandDims(axes): w.sub(c) { $0.set(1, int64s: axes) }
        case let .reshapeStatic(shape): w.sub(c) { $0.set(1, int64s: shape) }
        case let .constantPad(p): try w.set(c, message: p)
        case let .reduceND(_, p): try w.set(c, message: p)
        case let .layerNormalization(p): try w.set(c, message: p)
        case let .clampedReLU(a, b): w.sub(c) { $0.set(1, float: a); $0.set(2, float: b) }
        }
    }
}

extension Spec.NeuralNetworkLayer {
    /// Field numbers of the `layer` oneof members declared in mlconv's schema (read from the
    /// generated protobuf-c descriptors), i.e. the layer types decoded into typed cases.
    static var declaredLayerFieldNumbers: [UInt32] {
        let model = ccoreml_model_descriptor()
        guard let nn = protobuf_c_message_descriptor_get_field(model, 500)?.pointee.descriptor,
              let layer = protobuf_c_message_descriptor_get_field(
                  nn.assumingMemoryBound(to: ProtobufCMessageDescriptor.self), 1)?.pointee.descriptor else { return [] }
        let desc = layer.assumingMemoryBound(to: ProtobufCMessageDescriptor.self).pointee
        return (0..<Int(desc.n_fields)).map { desc.fields[$0].id }.filter { $0 >= 100 }.sorted()
    }
}
