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
        /// A layer type of the schema without a case of its own here (branch, scatter, topK, …):
        /// its generated parameters. mlconv decodes and re-encodes it but does not import it.
        case other(Spec.LayerParameters)

        /// The field number of this case in `NeuralNetworkLayer` (0 for `.none`).
        public var fieldNumber: UInt32 {
            switch self {
            case .none: return 0
            case let .unsupported(n): return n
            case let .simple(k): return k.rawValue
            case let .reduceND(op, _): return op.rawValue
            default: return parameters?.fieldNumber ?? 0  // numbers come from the generated schema
            }
        }

        /// Apple's name of the layer type, e.g. "convolution", "batchedMatmul".
        public var typeName: String { Spec.NeuralNetworkLayer.typeName(fieldNumber: fieldNumber) }
    }

    /// Apple's name for a `NeuralNetworkLayer.layer` field number ("field N" if not an Apple layer).
    public static func typeName(fieldNumber: UInt32) -> String {
        fieldNumber == 0 ? "none" : (Spec.LayerParameters.typeName(fieldNumber: fieldNumber) ?? "field \(fieldNumber)")
    }
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
        guard let p = try Spec.LayerParameters.read(fieldNumber: c, r) else {
            preconditionFailure("mlconv schema/code mismatch: layer field \(c) is declared but not generated")
        }
        self.init(p)
    }

    func write(to w: CWriter) throws { try parameters?.write(to: w) }

    /// The case that presents generated layer parameters `p` (`.other(p)` for layer types
    /// without a case of their own). Field values the case does not carry (for example the
    /// unknown fields of an `AddLayerParams`) are dropped.
    public init(_ p: Spec.LayerParameters) {
        if Spec.SimpleLayerKind.all.contains(p.fieldNumber) {
            self = .simple(Spec.SimpleLayerKind(rawValue: p.fieldNumber))
            return
        }
        switch p {
        case let .convolution(v): self = .convolution(v)
        case let .pooling(v): self = .pooling(v)
        case let .activation(v): self = .activation(v)
        case let .innerProduct(v): self = .innerProduct(v)
        case let .embedding(v): self = .embedding(v)
        case let .batchnorm(v): self = .batchnorm(v)
        case let .mvn(v): self = .mvn(v)
        case let .l2normalize(v): self = .l2normalize(epsilon: v.epsilon)
        case .softmax: self = .softmax
        case let .lrn(v): self = .lrn(v)
        case let .crop(v): self = .crop(v)
        case let .padding(v): self = .padding(v)
        case let .upsample(v): self = .upsample(v)
        case let .resizeBilinear(v): self = .resizeBilinear(v)
        case let .unary(v): self = .unary(v)
        case let .add(v): self = .add(alpha: v.alpha)
        case let .multiply(v): self = .multiply(alpha: v.alpha)
        case .average: self = .average
        case let .scale(v): self = .scale(v)
        case let .bias(v): self = .bias(v)
        case .max: self = .max
        case .min: self = .min
        case let .dot(v): self = .dot(cosineSimilarity: v.cosineSimilarity)
        case let .reduce(v): self = .reduce(v)
        case let .loadConstant(v): self = .loadConstant(v)  // LoadConstantND shares its layout
        case let .reshape(v): self = .reshape(v)
        case let .flatten(v): self = .flatten(mode: Spec.FlattenOrder(rawValue: v.mode.rawValue))
        case let .permute(v): self = .permute(axis: v.axis)
        case let .concat(v): self = .concat(sequenceConcat: v.sequenceConcat)
        case let .split(v): self = .split(nOutputs: v.nOutputs)
        case let .sequenceRepeat(v): self = .sequenceRepeat(nRepetitions: v.nRepetitions)
        case let .reorganizeData(v): self = .reorganizeData(v)
        case let .slice(v): self = .slice(v)
        case let .simpleRecurrent(v): self = .simpleRecurrent(v)
        case let .gru(v): self = .gru(v)
        case let .uniDirectionalLSTM(v): self = .uniDirectionalLSTM(v)
        case let .biDirectionalLSTM(v): self = .biDirectionalLSTM(v)
        case let .custom(v): self = .custom(v)
        case let .clip(v): self = .clip(minVal: v.minVal, maxVal: v.maxVal)
        case let .gelu(v): self = .gelu(mode: Spec.GeluMode(rawValue: v.mode.rawValue))
        case let .tile(v): self = .tile(reps: v.reps)
        case let .stack(v): self = .stack(axis: v.axis)
        case let .gather(v): self = .gather(axis: v.axis)
        case let .softmaxND(v): self = .softmaxND(axis: v.axis)
        case let .splitND(v): self = .splitND(v)
        case let .concatND(v): self = .concatND(axis: v.axis, interleave: v.interleave)
        case let .transpose(v): self = .transpose(axes: v.axes)
        case let .sliceStatic(v): self = .sliceStatic(v)
        case let .argMax(v): self = .argMax(axis: v.axis, removeDim: v.removeDim)
        case let .embeddingND(v): self = .embeddingND(v)
        case let .batchedMatmul(v): self = .batchedMatmul(v)
        case let .loadConstantND(v): self = .loadConstantND(.init(shape: v.shape, data: v.data, unknownFields: v.unknownFields))
        case let .squeeze(v): self = .squeeze(axes: v.axes, squeezeAll: v.squeezeAll)
        case let .expandDims(v): self = .expandDims(axes: v.axes)
        case let .flattenTo2D(v): self = .flattenTo2D(axis: v.axis)
        case let .reshapeStatic(v): self = .reshapeStatic(targetShape: v.targetShape)
        case let .constantPad(v): self = .constantPad(v)
        case let .reduceL1(v): self = .reduceND(.l1, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceL2(v): self = .reduceND(.l2, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceMax(v): self = .reduceND(.max, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceMin(v): self = .reduceND(.min, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceSum(v): self = .reduceND(.sum, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceProd(v): self = .reduceND(.prod, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceMean(v): self = .reduceND(.mean, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceLogSum(v): self = .reduceND(.logSum, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceSumSquare(v): self = .reduceND(.sumSquare, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .reduceLogSumExp(v): self = .reduceND(.logSumExp, .init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
        case let .layerNormalization(v): self = .layerNormalization(v)
        case let .clampedReLU(v): self = .clampedReLU(alpha: v.alpha, beta: v.beta)
        default: self = .other(p)
        }
    }

    /// The generated parameters this case stands for; nil for `.none` and `.unsupported`.
    public var parameters: Spec.LayerParameters? {
        switch self {
        case .none, .unsupported: return nil
        case let .other(p): return p
        case let .simple(k): return Spec.LayerParameters.parameterless(fieldNumber: k.rawValue)
        case let .convolution(v): return .convolution(v)
        case let .pooling(v): return .pooling(v)
        case let .activation(v): return .activation(v)
        case let .innerProduct(v): return .innerProduct(v)
        case let .embedding(v): return .embedding(v)
        case let .batchnorm(v): return .batchnorm(v)
        case let .mvn(v): return .mvn(v)
        case let .l2normalize(eps): return .l2normalize(.init(epsilon: eps))
        case .softmax: return .softmax(.init())
        case let .lrn(v): return .lrn(v)
        case let .crop(v): return .crop(v)
        case let .padding(v): return .padding(v)
        case let .upsample(v): return .upsample(v)
        case let .resizeBilinear(v): return .resizeBilinear(v)
        case let .unary(v): return .unary(v)
        case let .add(a): return .add(.init(alpha: a))
        case let .multiply(a): return .multiply(.init(alpha: a))
        case .average: return .average(.init())
        case let .scale(v): return .scale(v)
        case let .bias(v): return .bias(v)
        case .max: return .max(.init())
        case .min: return .min(.init())
        case let .dot(cos): return .dot(.init(cosineSimilarity: cos))
        case let .reduce(v): return .reduce(v)
        case let .loadConstant(v): return .loadConstant(v)
        case let .reshape(v): return .reshape(v)
        case let .flatten(mode): return .flatten(.init(mode: .init(rawValue: mode.rawValue)))
        case let .permute(axis): return .permute(.init(axis: axis))
        case let .concat(seq): return .concat(.init(sequenceConcat: seq))
        case let .split(n): return .split(.init(nOutputs: n))
        case let .sequenceRepeat(n): return .sequenceRepeat(.init(nRepetitions: n))
        case let .reorganizeData(v): return .reorganizeData(v)
        case let .slice(v): return .slice(v)
        case let .simpleRecurrent(v): return .simpleRecurrent(v)
        case let .gru(v): return .gru(v)
        case let .uniDirectionalLSTM(v): return .uniDirectionalLSTM(v)
        case let .biDirectionalLSTM(v): return .biDirectionalLSTM(v)
        case let .custom(v): return .custom(v)
        case let .clip(lo, hi): return .clip(.init(minVal: lo, maxVal: hi))
        case let .gelu(mode): return .gelu(.init(mode: .init(rawValue: mode.rawValue)))
        case let .tile(reps): return .tile(.init(reps: reps))
        case let .stack(axis): return .stack(.init(axis: axis))
        case let .gather(axis): return .gather(.init(axis: axis))
        case let .softmaxND(axis): return .softmaxND(.init(axis: axis))
        case let .splitND(v): return .splitND(v)
        case let .concatND(axis, interleave): return .concatND(.init(axis: axis, interleave: interleave))
        case let .transpose(axes): return .transpose(.init(axes: axes))
        case let .sliceStatic(v): return .sliceStatic(v)
        case let .argMax(axis, removeDim): return .argMax(.init(axis: axis, removeDim: removeDim))
        case let .embeddingND(v): return .embeddingND(v)
        case let .batchedMatmul(v): return .batchedMatmul(v)
        case let .loadConstantND(v): return .loadConstantND(.init(shape: v.shape, data: v.data, unknownFields: v.unknownFields))
        case let .squeeze(axes, all): return .squeeze(.init(axes: axes, squeezeAll: all))
        case let .expandDims(axes): return .expandDims(.init(axes: axes))
        case let .flattenTo2D(axis): return .flattenTo2D(.init(axis: axis))
        case let .reshapeStatic(shape): return .reshapeStatic(.init(targetShape: shape))
        case let .constantPad(v): return .constantPad(v)
        case let .reduceND(op, v):
            switch op {
            case .l1: return .reduceL1(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .l2: return .reduceL2(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .max: return .reduceMax(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .min: return .reduceMin(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .sum: return .reduceSum(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .prod: return .reduceProd(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .mean: return .reduceMean(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .logSum: return .reduceLogSum(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .sumSquare: return .reduceSumSquare(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            case .logSumExp: return .reduceLogSumExp(.init(axes: v.axes, keepDims: v.keepDims, reduceAll: v.reduceAll))
            default: return nil  // not a reduce layer field number
            }
        case let .layerNormalization(v): return .layerNormalization(v)
        case let .clampedReLU(a, b): return .clampedReLU(.init(alpha: a, beta: b))
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
