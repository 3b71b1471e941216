// Parameters of the classic (rank-5) layers and the rank-N layers with several fields.
// Weight layouts are row-major, as in Apple's NeuralNetwork.proto.

extension Spec {
    /// `FlattenLayerParams.FlattenOrder`.
    public struct FlattenOrder: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// Flatten [C, H, W] in C, H, W order.
        public static let channelFirst = FlattenOrder(rawValue: 0)
        /// Flatten in H, W, C order (what Keras' Flatten produces).
        public static let channelLast = FlattenOrder(rawValue: 1)
    }

    /// `GeluLayerParams.GeluMode`.
    public struct GeluMode: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let exact = GeluMode(rawValue: 0)
        public static let tanhApproximation = GeluMode(rawValue: 1)
        public static let sigmoidApproximation = GeluMode(rawValue: 2)
    }

    /// `CustomLayerParams`: a layer implemented by the app (`className`), with opaque weights
    /// and named parameters.
    public struct CustomLayerParams: Equatable, Sendable {
        public enum ParamValue: Equatable, Sendable {
            case double(Double)
            case string(String)
            case int(Int32)
            case long(Int64)
            case bool(Bool)
            /// The value message is absent or has no member set.
            case unset
        }
        public struct Parameter: Equatable, Sendable {
            public var key: String
            public var value: ParamValue
            public init(key: String, value: ParamValue) {
                self.key = key
                self.value = value
            }
        }
        public var className: String
        public var weights: [WeightParams]
        /// `map<string, CustomLayerParamValue> parameters`, in wire order.
        public var parameters: [Parameter]
        public var description: String
        public var unknownFields: UnknownFields
        public init(className: String, weights: [WeightParams] = [], parameters: [Parameter] = [],
                    description: String = "", unknownFields: UnknownFields = []) {
            self.className = className
            self.weights = weights
            self.parameters = parameters
            self.description = description
            self.unknownFields = unknownFields
        }
        /// `parameters` as a dictionary (last entry wins).
        public var parameterDictionary: [String: ParamValue] {
            Dictionary(parameters.map { ($0.key, $0.value) }, uniquingKeysWith: { _, b in b })
        }
    }

    /// The shared layout of the ten generated `ReduceXxxLayerParams` messages, as
    /// `NeuralNetworkLayer.Layer.reduceND` presents them (their unknown fields are dropped).
    public struct ReduceNDLayerParams: Equatable, Sendable {
        public var axes: [Int64]
        public var keepDims: Bool
        public var reduceAll: Bool
        public init(axes: [Int64], keepDims: Bool, reduceAll: Bool = false) {
            self.axes = axes
            self.keepDims = keepDims
            self.reduceAll = reduceAll
        }
    }

}

// Convenience forms of generated convolution / pooling / border types (no field-number code):
// the `padding` oneof under the name the importer and writer use, and the classic defaults.
extension Spec {
    /// `BorderAmounts.EdgeSizes`: padding or cropping before/after one spatial axis.
    public typealias EdgeSizes = BorderAmounts.EdgeSizes
}

extension Spec.BorderAmounts {
    /// One `EdgeSizes` per spatial axis, [height, width].
    public init(_ borderAmounts: [EdgeSizes]) { self.init(borderAmounts: borderAmounts) }
}

extension Spec.ConvolutionLayerParams {
    /// The `ConvolutionPaddingType` oneof.
    public typealias Padding = ConvolutionPaddingType
    /// The `ConvolutionPaddingType` oneof (`convolutionPaddingType`).
    public var padding: Padding? {
        get { convolutionPaddingType }
        set { convolutionPaddingType = newValue }
    }
    /// A convolution with its padding; nGroups defaults to 1 (Core ML reads 0 as 1).
    public init(outputChannels: UInt64 = 0, kernelChannels: UInt64 = 0, nGroups: UInt64 = 1,
                kernelSize: [UInt64] = [], stride: [UInt64] = [], dilationFactor: [UInt64] = [],
                padding: Padding?, isDeconvolution: Bool = false, hasBias: Bool = false,
                weights: Spec.WeightParams? = nil, bias: Spec.WeightParams? = nil, outputShape: [UInt64] = []) {
        self.init(outputChannels: outputChannels, kernelChannels: kernelChannels, nGroups: nGroups, kernelSize: kernelSize,
                  stride: stride, dilationFactor: dilationFactor, isDeconvolution: isDeconvolution, hasBias: hasBias,
                  weights: weights, bias: bias, outputShape: outputShape, convolutionPaddingType: padding)
    }
}

extension Spec.PoolingLayerParams {
    /// The `PoolingPaddingType` oneof.
    public typealias Padding = PoolingPaddingType
    /// The `PoolingPaddingType` oneof (`poolingPaddingType`).
    public var padding: Padding? {
        get { poolingPaddingType }
        set { poolingPaddingType = newValue }
    }
    /// A pooling layer with its padding.
    public init(type: PoolingType = .max, kernelSize: [UInt64] = [], stride: [UInt64] = [],
                padding: Padding?, avgPoolExcludePadding: Bool = false, globalPooling: Bool = false) {
        self.init(type: type, kernelSize: kernelSize, stride: stride, avgPoolExcludePadding: avgPoolExcludePadding,
                  globalPooling: globalPooling, poolingPaddingType: padding)
    }
}


// MARK: - C bridge

extension Spec.CustomLayerParams.Parameter: CMessageCodable {
    init(reading r: CReader) throws {
        key = r.string(1)
        guard let v = r.sub(2) else {
            value = .unset
            return
        }
        switch v.oneofCase(10) {
        case 10: value = .double(v.double(10))
        case 20: value = .string(v.string(20))
        case 30: value = .int(v.int32(30))
        case 40: value = .long(v.int64(40))
        case 50: value = .bool(v.bool(50))
        default: value = .unset
        }
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: key)
        switch value {
        case .unset: w.sub(2)
        case let .double(d): w.sub(2) { $0.set(10, double: d) }
        case let .string(s): try w.sub(2) { try $0.set(20, string: s) }
        case let .int(i): w.sub(2) { $0.set(30, int32: i) }
        case let .long(l): w.sub(2) { $0.set(40, int64: l) }
        case let .bool(b): w.sub(2) { $0.set(50, bool: b) }
        }
    }
}

extension Spec.CustomLayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        className = r.string(10)
        weights = try r.messages(20)
        parameters = try r.messages(30)
        description = r.string(40)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(10, string: className)
        try w.set(20, messages: weights)
        try w.set(30, messages: parameters)
        try w.set(40, string: description)
        w.setUnknownFields(unknownFields)
    }
}
