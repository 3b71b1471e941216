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

    /// `BorderAmounts.EdgeSizes`: padding or cropping before/after one spatial axis.
    public struct EdgeSizes: Equatable, Sendable {
        public var startEdgeSize: UInt64
        public var endEdgeSize: UInt64
        public init(startEdgeSize: UInt64, endEdgeSize: UInt64) {
            self.startEdgeSize = startEdgeSize
            self.endEdgeSize = endEdgeSize
        }
    }

    /// `BorderAmounts`: one `EdgeSizes` per spatial axis, [height, width].
    public struct BorderAmounts: Equatable, Sendable {
        public var borderAmounts: [EdgeSizes]
        public init(_ borderAmounts: [EdgeSizes] = []) { self.borderAmounts = borderAmounts }
    }

    /// `ValidPadding`: explicit padding amounts (none when `paddingAmounts` is nil or empty).
    public struct ValidPadding: Equatable, Sendable {
        public var paddingAmounts: BorderAmounts?
        public init(paddingAmounts: BorderAmounts? = nil) { self.paddingAmounts = paddingAmounts }
    }

    /// `SamePadding.SamePaddingMode`.
    public struct SamePaddingMode: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// The extra pixel of an odd total goes to the bottom/right (TensorFlow's 'same').
        public static let bottomRightHeavy = SamePaddingMode(rawValue: 0)
        public static let topLeftHeavy = SamePaddingMode(rawValue: 1)
    }

    /// `ConvolutionLayerParams`: 2-D convolution or deconvolution.
    ///
    /// - `weights`: [outputChannels, kernelChannels, kernelSize[0], kernelSize[1]] row-major,
    ///   kernelChannels = inputChannels / nGroups. For deconvolution:
    ///   [kernelChannels, outputChannels / nGroups, kH, kW].
    /// - `bias`: [outputChannels] when `hasBias`.
    /// - `kernelSize`, `stride`, `dilationFactor`: [height, width] (defaults 3×3, 1, 1 when empty).
    public struct ConvolutionLayerParams: Equatable, Sendable {
        public var outputChannels: UInt64
        public var kernelChannels: UInt64
        public var nGroups: UInt64
        public var kernelSize: [UInt64]
        public var stride: [UInt64]
        public var dilationFactor: [UInt64]
        public var padding: Padding?
        public var isDeconvolution: Bool
        public var hasBias: Bool
        public var weights: WeightParams?
        public var bias: WeightParams?
        /// Deconvolution output size [H, W] (optional).
        public var outputShape: [UInt64]
        public var unknownFields: UnknownFields

        /// The `ConvolutionPaddingType` oneof.
        public enum Padding: Equatable, Sendable {
            case valid(ValidPadding)
            case same(SamePaddingMode)
        }

        public init(outputChannels: UInt64 = 0, kernelChannels: UInt64 = 0, nGroups: UInt64 = 1,
                    kernelSize: [UInt64] = [], stride: [UInt64] = [], dilationFactor: [UInt64] = [],
                    padding: Padding? = nil, isDeconvolution: Bool = false, hasBias: Bool = false,
                    weights: WeightParams? = nil, bias: WeightParams? = nil, outputShape: [UInt64] = [],
                    unknownFields: UnknownFields = []) {
            self.outputChannels = outputChannels
            self.kernelChannels = kernelChannels
            self.nGroups = nGroups
            self.kernelSize = kernelSize
            self.stride = stride
            self.dilationFactor = dilationFactor
            self.padding = padding
            self.isDeconvolution = isDeconvolution
            self.hasBias = hasBias
            self.weights = weights
            self.bias = bias
            self.outputShape = outputShape
            self.unknownFields = unknownFields
        }
    }

    /// `PoolingLayerParams` (2-D). `kernelSize` and `stride` are [height, width].
    public struct PoolingLayerParams: Equatable, Sendable {
        public struct PoolingType: RawRepresentable, Hashable, Sendable {
            public var rawValue: Int32
            public init(rawValue: Int32) { self.rawValue = rawValue }
            public static let max = PoolingType(rawValue: 0)
            public static let average = PoolingType(rawValue: 1)
            public static let l2 = PoolingType(rawValue: 2)
        }
        /// The `PoolingPaddingType` oneof.
        public enum Padding: Equatable, Sendable {
            case valid(ValidPadding)
            case same(SamePaddingMode)
            /// Caffe-style "valid complete" padding: [top, left] amounts.
            case includeLastPixel(paddingAmounts: [UInt64])
        }
        public var type: PoolingType
        public var kernelSize: [UInt64]
        public var stride: [UInt64]
        public var padding: Padding?
        public var avgPoolExcludePadding: Bool
        public var globalPooling: Bool
        public var unknownFields: UnknownFields
        public init(type: PoolingType = .max, kernelSize: [UInt64] = [], stride: [UInt64] = [],
                    padding: Padding? = nil, avgPoolExcludePadding: Bool = false, globalPooling: Bool = false,
                    unknownFields: UnknownFields = []) {
            self.type = type
            self.kernelSize = kernelSize
            self.stride = stride
            self.padding = padding
            self.avgPoolExcludePadding = avgPoolExcludePadding
            self.globalPooling = globalPooling
            self.unknownFields = unknownFields
        }
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

// MARK: - C bridge

extension Spec.EdgeSizes: CMessageCodable {
    init(reading r: CReader) throws {
        startEdgeSize = r.uint64(1)
        endEdgeSize = r.uint64(2)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: startEdgeSize)
        w.set(2, uint64: endEdgeSize)
    }
}

extension Spec.BorderAmounts: CMessageCodable {
    init(reading r: CReader) throws { borderAmounts = try r.messages(10) }
    func write(to w: CWriter) throws { try w.set(10, messages: borderAmounts) }
}

extension Spec.ValidPadding: CMessageCodable {
    init(reading r: CReader) throws { paddingAmounts = try r.message(1) }
    func write(to w: CWriter) throws { try w.set(1, message: paddingAmounts) }
}

extension Spec.ConvolutionLayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        outputChannels = r.uint64(1)
        kernelChannels = r.uint64(2)
        nGroups = r.uint64(10)
        kernelSize = r.uint64s(20)
        stride = r.uint64s(30)
        dilationFactor = r.uint64s(40)
        switch r.oneofCase(50) {
        case 50: padding = .valid(try r.message(50)!)
        case 51: padding = .same(Spec.SamePaddingMode(rawValue: r.sub(51)!.enumValue(1)))
        default: padding = nil
        }
        isDeconvolution = r.bool(60)
        hasBias = r.bool(70)
        weights = try r.message(90)
        bias = try r.message(91)
        outputShape = r.uint64s(100)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: outputChannels)
        w.set(2, uint64: kernelChannels)
        w.set(10, uint64: nGroups)
        w.set(20, uint64s: kernelSize)
        w.set(30, uint64s: stride)
        w.set(40, uint64s: dilationFactor)
        switch padding {
        case nil: break
        case let .valid(v): try w.set(50, message: v)
        case let .same(mode): w.sub(51) { $0.set(1, enum: mode.rawValue) }
        }
        w.set(60, bool: isDeconvolution)
        w.set(70, bool: hasBias)
        try w.set(90, message: weights)
        try w.set(91, message: bias)
        w.set(100, uint64s: outputShape)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.PoolingLayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        type = PoolingType(rawValue: r.enumValue(1))
        kernelSize = r.uint64s(10)
        stride = r.uint64s(20)
        switch r.oneofCase(30) {
        case 30: padding = .valid(try r.message(30)!)
        case 31: padding = .same(Spec.SamePaddingMode(rawValue: r.sub(31)!.enumValue(1)))
        case 32: padding = .includeLastPixel(paddingAmounts: r.sub(32)!.uint64s(10))
        default: padding = nil
        }
        avgPoolExcludePadding = r.bool(50)
        globalPooling = r.bool(60)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        w.set(1, enum: type.rawValue)
        w.set(10, uint64s: kernelSize)
        w.set(20, uint64s: stride)
        switch padding {
        case nil: break
        case let .valid(v): try w.set(30, message: v)
        case let .same(mode): w.sub(31) { $0.set(1, enum: mode.rawValue) }
        case let .includeLastPixel(amounts): w.sub(32) { $0.set(10, uint64s: amounts) }
        }
        w.set(50, bool: avgPoolExcludePadding)
        w.set(60, bool: globalPooling)
        w.setUnknownFields(unknownFields)
    }
}

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
