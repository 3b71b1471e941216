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
