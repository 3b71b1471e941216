extension Spec {
    /// `NeuralNetworkMultiArrayShapeMapping`: how multi-array inputs map to layer blobs.
    public struct ArrayShapeMapping: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// Classic layers: inputs are padded to rank 5 [Seq, Batch, C, H, W].
        public static let rank5 = ArrayShapeMapping(rawValue: 0)
        /// Rank-N layers (spec 4+): shapes are used as given.
        public static let exact = ArrayShapeMapping(rawValue: 1)
    }

    /// `NeuralNetworkImageShapeMapping`.
    public struct ImageShapeMapping: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// Images become rank-5 [1, 1, C, H, W].
        public static let rank5 = ImageShapeMapping(rawValue: 0)
        /// Images become rank-4 [1, C, H, W] (spec 4+).
        public static let rank4 = ImageShapeMapping(rawValue: 1)
    }

    /// `NeuralNetwork`: layers run in order; blobs are matched by name.
    public struct NeuralNetwork: Equatable, Sendable {
        public var layers: [NeuralNetworkLayer]
        public var preprocessing: [NeuralNetworkPreprocessing]
        public var arrayInputShapeMapping: ArrayShapeMapping
        public var imageInputShapeMapping: ImageShapeMapping
        /// On-device training settings (`NetworkUpdateParameters`), kept verbatim; nil if absent.
        /// Decoded by `updateParameters()`.
        public var updateParams: UnknownFields?
        public var unknownFields: UnknownFields

        public init(layers: [NeuralNetworkLayer] = [], preprocessing: [NeuralNetworkPreprocessing] = [],
                    arrayInputShapeMapping: ArrayShapeMapping = .rank5,
                    imageInputShapeMapping: ImageShapeMapping = .rank5,
                    updateParams: UnknownFields? = nil, unknownFields: UnknownFields = []) {
            self.layers = layers
            self.preprocessing = preprocessing
            self.arrayInputShapeMapping = arrayInputShapeMapping
            self.imageInputShapeMapping = imageInputShapeMapping
            self.updateParams = updateParams
            self.unknownFields = unknownFields
        }
    }

    /// `NeuralNetworkClassifier`: a network plus class labels; the model's description names
    /// the label and probability outputs.
    public struct NeuralNetworkClassifier: Equatable, Sendable {
        public var network: NeuralNetwork
        public var classLabels: ClassLabels?
        /// Layer whose output holds the probabilities (defaults to the last layer's output).
        public var labelProbabilityLayerName: String

        public enum ClassLabels: Equatable, Sendable {
            case strings([String])
            case int64s([Int64])
        }

        public init(network: NeuralNetwork, classLabels: ClassLabels?, labelProbabilityLayerName: String = "") {
            self.network = network
            self.classLabels = classLabels
            self.labelProbabilityLayerName = labelProbabilityLayerName
        }
    }

    /// `NeuralNetworkRegressor`.
    public struct NeuralNetworkRegressor: Equatable, Sendable {
        public var network: NeuralNetwork
        public init(network: NeuralNetwork) { self.network = network }
    }

    /// `NeuralNetworkPreprocessing` for one image input.
    public struct NeuralNetworkPreprocessing: Equatable, Sendable {
        public var featureName: String
        public var preprocessor: Preprocessor?
        public var unknownFields: UnknownFields

        public enum Preprocessor: Equatable, Sendable {
            case scaler(ImageScaler)
            /// Mean image subtracted from the input, [C, H, W] row-major.
            case meanImage([Float])
        }

        public init(featureName: String, preprocessor: Preprocessor?, unknownFields: UnknownFields = []) {
            self.featureName = featureName
            self.preprocessor = preprocessor
            self.unknownFields = unknownFields
        }
    }

    /// `NeuralNetworkImageScaler`: y = channelScale * x + bias (per channel; grayBias for
    /// grayscale images).
    public struct ImageScaler: Equatable, Sendable {
        public var channelScale: Float
        public var blueBias: Float
        public var greenBias: Float
        public var redBias: Float
        public var grayBias: Float
        public init(channelScale: Float = 0, blueBias: Float = 0, greenBias: Float = 0, redBias: Float = 0,
                    grayBias: Float = 0) {
            self.channelScale = channelScale
            self.blueBias = blueBias
            self.greenBias = greenBias
            self.redBias = redBias
            self.grayBias = grayBias
        }
    }

    /// `ActivationParams`: the non-linearity of an activation layer (also used by recurrent
    /// layers).
    public struct ActivationParams: Equatable, Sendable {
        public var nonlinearity: Nonlinearity
        public var unknownFields: UnknownFields
        public init(_ nonlinearity: Nonlinearity, unknownFields: UnknownFields = []) {
            self.nonlinearity = nonlinearity
            self.unknownFields = unknownFields
        }

        /// The `NonlinearityType` oneof.
        public enum Nonlinearity: Equatable, Sendable {
            case none
            /// alpha * x + beta
            case linear(alpha: Float, beta: Float)
            case relu
            /// x if x >= 0 else alpha * x
            case leakyReLU(alpha: Float)
            /// x if x >= alpha else 0
            case thresholdedReLU(alpha: Float)
            /// Per-channel alpha, [C] (or one value).
            case preLU(alpha: WeightParams?)
            case tanh
            /// alpha * tanh(beta * x)
            case scaledTanh(alpha: Float, beta: Float)
            case sigmoid
            /// min(max(alpha * x + beta, 0), 1)
            case sigmoidHard(alpha: Float, beta: Float)
            /// x if x >= 0 else alpha * (exp(x) - 1)
            case elu(alpha: Float)
            case softsign
            case softplus
            /// alpha * log(1 + exp(beta * x)), per-channel alpha and beta, [C].
            case parametricSoftplus(alpha: WeightParams?, beta: WeightParams?)

            /// Apple's field name, e.g. "ReLU".
            public var name: String {
                switch self {
                case .none: return "none"
                case .linear: return "linear"
                case .relu: return "ReLU"
                case .leakyReLU: return "leakyReLU"
                case .thresholdedReLU: return "thresholdedReLU"
                case .preLU: return "PReLU"
                case .tanh: return "tanh"
                case .scaledTanh: return "scaledTanh"
                case .sigmoid: return "sigmoid"
                case .sigmoidHard: return "sigmoidHard"
                case .elu: return "ELU"
                case .softsign: return "softsign"
                case .softplus: return "softplus"
                case .parametricSoftplus: return "parametricSoftplus"
                }
            }
        }
    }
}

// MARK: - C bridge

/// Fields 1, 2, 5, 6 and 10, shared by NeuralNetwork, NeuralNetworkClassifier and
/// NeuralNetworkRegressor.
extension Spec.NeuralNetwork: CMessageCodable {
    init(reading r: CReader) throws {
        layers = try r.messages(1)
        preprocessing = try r.messages(2)
        arrayInputShapeMapping = .init(rawValue: r.enumValue(5))
        imageInputShapeMapping = .init(rawValue: r.enumValue(6))
        // Kept verbatim; typed access: `updateParameters()` (SpecNetworkUpdate.swift).
        updateParams = r.verbatimContent(10)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, messages: layers)
        try w.set(2, messages: preprocessing)
        w.set(5, enum: arrayInputShapeMapping.rawValue)
        w.set(6, enum: imageInputShapeMapping.rawValue)
        if let u = updateParams { w.set(10, opaque: u) }
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.NeuralNetworkClassifier: CMessageCodable {
    init(reading r: CReader) throws {
        network = try Spec.NeuralNetwork(reading: r)
        switch r.oneofCase(100) {
        case 100: classLabels = .strings(r.sub(100)!.strings(1))
        case 101: classLabels = .int64s(r.sub(101)!.int64s(1))
        default: classLabels = nil
        }
        labelProbabilityLayerName = r.string(200)
    }
    func write(to w: CWriter) throws {
        try network.write(to: w)
        switch classLabels {
        case nil: break
        case let .strings(s): try w.sub(100) { try $0.set(1, strings: s) }
        case let .int64s(v): w.sub(101) { $0.set(1, int64s: v) }
        }
        try w.set(200, string: labelProbabilityLayerName)
    }
}

extension Spec.NeuralNetworkRegressor: CMessageCodable {
    init(reading r: CReader) throws { network = try Spec.NeuralNetwork(reading: r) }
    func write(to w: CWriter) throws { try network.write(to: w) }
}

extension Spec.NeuralNetworkPreprocessing: CMessageCodable {
    init(reading r: CReader) throws {
        featureName = r.string(1)
        switch r.oneofCase(10) {
        case 10:
            let s = r.sub(10)!
            preprocessor = .scaler(Spec.ImageScaler(channelScale: s.float(10), blueBias: s.float(20),
                                                    greenBias: s.float(21), redBias: s.float(22),
                                                    grayBias: s.float(30)))
        case 11: preprocessor = .meanImage(r.sub(11)!.floats(1))
        default: preprocessor = nil
        }
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: featureName)
        switch preprocessor {
        case nil: break
        case let .scaler(s):
            w.sub(10) {
                $0.set(10, float: s.channelScale)
                $0.set(20, float: s.blueBias)
                $0.set(21, float: s.greenBias)
                $0.set(22, float: s.redBias)
                $0.set(30, float: s.grayBias)
            }
        case let .meanImage(m): w.sub(11) { $0.set(1, floats: m) }
        }
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.ActivationParams: CMessageCodable {
    init(reading r: CReader) throws {
        let c = r.oneofCase(5)
        let s = c == 0 ? nil : r.sub(c)
        switch (c, s) {
        case let (5, s?): nonlinearity = .linear(alpha: s.float(1), beta: s.float(2))
        case (10, _): nonlinearity = .relu
        case let (15, s?): nonlinearity = .leakyReLU(alpha: s.float(1))
        case let (20, s?): nonlinearity = .thresholdedReLU(alpha: s.float(1))
        case let (25, s?): nonlinearity = .preLU(alpha: try s.message(1))
        case (30, _): nonlinearity = .tanh
        case let (31, s?): nonlinearity = .scaledTanh(alpha: s.float(1), beta: s.float(2))
        case (40, _): nonlinearity = .sigmoid
        case let (41, s?): nonlinearity = .sigmoidHard(alpha: s.float(1), beta: s.float(2))
        case let (50, s?): nonlinearity = .elu(alpha: s.float(1))
        case (60, _): nonlinearity = .softsign
        case (70, _): nonlinearity = .softplus
        case let (71, s?): nonlinearity = .parametricSoftplus(alpha: try s.message(1), beta: try s.message(2))
        default: nonlinearity = .none
        }
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        switch nonlinearity {
        case .none: break
        case let .linear(a, b): w.sub(5) { $0.set(1, float: a); $0.set(2, float: b) }
        case .relu: w.sub(10)
        case let .leakyReLU(a): w.sub(15) { $0.set(1, float: a) }
        case let .thresholdedReLU(a): w.sub(20) { $0.set(1, float: a) }
        case let .preLU(a): try w.sub(25) { try $0.set(1, message: a) }
        case .tanh: w.sub(30)
        case let .scaledTanh(a, b): w.sub(31) { $0.set(1, float: a); $0.set(2, float: b) }
        case .sigmoid: w.sub(40)
        case let .sigmoidHard(a, b): w.sub(41) { $0.set(1, float: a); $0.set(2, float: b) }
        case let .elu(a): w.sub(50) { $0.set(1, float: a) }
        case .softsign: w.sub(60)
        case .softplus: w.sub(70)
        case let .parametricSoftplus(a, b): try w.sub(71) { try $0.set(1, message: a); try $0.set(2, message: b) }
        }
        w.setUnknownFields(unknownFields)
    }
}
