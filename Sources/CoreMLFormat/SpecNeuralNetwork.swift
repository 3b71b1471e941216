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
