/// Swift mirror of the Core ML model specification (`CoreML.Specification`), for the subset
/// mlconv reads and writes. Field names follow Apple's `.proto` files; every struct keeps the
/// fields mlconv's schema does not know in `unknownFields`, so decode → encode is lossless.
public enum Spec {}

extension Spec {
    /// A Core ML model: `Model.proto` `Model`.
    public struct Model: Equatable, Sendable {
        /// Core ML specification version (1 = iOS 11 … 9 = iOS 18).
        public var specificationVersion: Int32
        public var description: ModelDescription?
        public var isUpdatable: Bool
        /// The model's kind and parameters (`Model.Type` oneof).
        public var type: ModelType
        public var unknownFields: UnknownFields
        /// Filled by `decode`: one line per message with fields mlconv's schema does not declare
        /// and per unsupported layer type (message path, field numbers, layer name). Empty for
        /// models built in Swift. Not part of the encoded model.
        public var unknownFieldWarnings: [String]

        public init(specificationVersion: Int32 = 1, description: ModelDescription? = nil,
                    isUpdatable: Bool = false, type: ModelType = .none,
                    unknownFields: UnknownFields = []) {
            self.specificationVersion = specificationVersion
            self.description = description
            self.isUpdatable = isUpdatable
            self.type = type
            self.unknownFields = unknownFields
            self.unknownFieldWarnings = []
        }

        /// The model kind (`nil` when the `Type` oneof is not set).
        public var kind: ModelKind? { type.kind }
    }

    /// The `Model.Type` oneof. Kinds mlconv decodes have typed payloads; every other kind is
    /// `.other`, named by `ModelKind`, with its content kept verbatim.
    public enum ModelType: Equatable, Sendable {
        case none
        case pipelineClassifier(PipelineClassifier)
        case pipelineRegressor(PipelineRegressor)
        case pipeline(Pipeline)
        case neuralNetworkRegressor(NeuralNetworkRegressor)
        case neuralNetworkClassifier(NeuralNetworkClassifier)
        case neuralNetwork(NeuralNetwork)
        case serializedModel(SerializedModel)
        /// A kind without a typed case here; `content` is the message's wire content, kept
        /// byte-for-byte. Classical kinds (trees, GLMs, SVMs, kNN, encoders, …) decode from it
        /// with `Spec.Model.classicalParameters()`; the others are recognised by name only.
        case other(kind: ModelKind, content: UnknownFields)

        public var kind: ModelKind? {
            switch self {
            case .none: return nil
            case .pipelineClassifier: return .pipelineClassifier
            case .pipelineRegressor: return .pipelineRegressor
            case .pipeline: return .pipeline
            case .neuralNetworkRegressor: return .neuralNetworkRegressor
            case .neuralNetworkClassifier: return .neuralNetworkClassifier
            case .neuralNetwork: return .neuralNetwork
            case .serializedModel: return .serializedModel
            case let .other(kind, _): return kind
            }
        }
    }

    /// A member of the `Model.Type` oneof, identified by its field number in `Model.proto`.
    public struct ModelKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let pipelineClassifier = ModelKind(rawValue: 200)
        public static let pipelineRegressor = ModelKind(rawValue: 201)
        public static let pipeline = ModelKind(rawValue: 202)
        public static let glmRegressor = ModelKind(rawValue: 300)
        public static let supportVectorRegressor = ModelKind(rawValue: 301)
        public static let treeEnsembleRegressor = ModelKind(rawValue: 302)
        public static let neuralNetworkRegressor = ModelKind(rawValue: 303)
        public static let bayesianProbitRegressor = ModelKind(rawValue: 304)
        public static let glmClassifier = ModelKind(rawValue: 400)
        public static let supportVectorClassifier = ModelKind(rawValue: 401)
        public static let treeEnsembleClassifier = ModelKind(rawValue: 402)
        public static let neuralNetworkClassifier = ModelKind(rawValue: 403)
        public static let kNearestNeighborsClassifier = ModelKind(rawValue: 404)
        public static let neuralNetwork = ModelKind(rawValue: 500)
        public static let itemSimilarityRecommender = ModelKind(rawValue: 501)
        public static let mlProgram = ModelKind(rawValue: 502)
        public static let customModel = ModelKind(rawValue: 555)
        public static let linkedModel = ModelKind(rawValue: 556)
        public static let classConfidenceThresholding = ModelKind(rawValue: 560)
        public static let oneHotEncoder = ModelKind(rawValue: 600)
        public static let imputer = ModelKind(rawValue: 601)
        public static let featureVectorizer = ModelKind(rawValue: 602)
        public static let dictVectorizer = ModelKind(rawValue: 603)
        public static let scaler = ModelKind(rawValue: 604)
        public static let categoricalMapping = ModelKind(rawValue: 606)
        public static let normalizer = ModelKind(rawValue: 607)
        public static let arrayFeatureExtractor = ModelKind(rawValue: 609)
        public static let nonMaximumSuppression = ModelKind(rawValue: 610)
        public static let identity = ModelKind(rawValue: 900)
        public static let textClassifier = ModelKind(rawValue: 2000)
        public static let wordTagger = ModelKind(rawValue: 2001)
        public static let visionFeaturePrint = ModelKind(rawValue: 2002)
        public static let soundAnalysisPreprocessing = ModelKind(rawValue: 2003)
        public static let gazetteer = ModelKind(rawValue: 2004)
        public static let wordEmbedding = ModelKind(rawValue: 2005)
        public static let audioFeaturePrint = ModelKind(rawValue: 2006)
        public static let serializedModel = ModelKind(rawValue: 3000)

        static let names: [UInt32: String] = [
            200: "pipelineClassifier", 201: "pipelineRegressor", 202: "pipeline",
            300: "glmRegressor", 301: "supportVectorRegressor", 302: "treeEnsembleRegressor",
            303: "neuralNetworkRegressor", 304: "bayesianProbitRegressor",
            400: "glmClassifier", 401: "supportVectorClassifier", 402: "treeEnsembleClassifier",
            403: "neuralNetworkClassifier", 404: "kNearestNeighborsClassifier",
            500: "neuralNetwork", 501: "itemSimilarityRecommender", 502: "mlProgram",
            555: "customModel", 556: "linkedModel", 560: "classConfidenceThresholding",
            600: "oneHotEncoder", 601: "imputer", 602: "featureVectorizer", 603: "dictVectorizer",
            604: "scaler", 606: "categoricalMapping", 607: "normalizer",
            609: "arrayFeatureExtractor", 610: "nonMaximumSuppression", 900: "identity",
            2000: "textClassifier", 2001: "wordTagger", 2002: "visionFeaturePrint",
            2003: "soundAnalysisPreprocessing", 2004: "gazetteer", 2005: "wordEmbedding",
            2006: "audioFeaturePrint", 3000: "serializedModel",
        ]

        /// Every kind declared in mlconv's schema.
        public static var allKnown: [ModelKind] { names.keys.sorted().map(ModelKind.init(rawValue:)) }

        /// Apple's field name, e.g. `"treeEnsembleClassifier"`; `"field N"` if unknown.
        public var name: String { Self.names[rawValue] ?? "field \(rawValue)" }
        public var description: String { name }
    }

    /// Stages run in order (`Model.proto` `Pipeline`).
    public struct Pipeline: Equatable, Sendable {
        public var models: [Model]
        /// Optional stage names.
        public var names: [String]
        public var unknownFields: UnknownFields
        public init(models: [Model] = [], names: [String] = [], unknownFields: UnknownFields = []) {
            self.models = models
            self.names = names
            self.unknownFields = unknownFields
        }
    }

    public struct PipelineClassifier: Equatable, Sendable {
        public var pipeline: Pipeline?
        public var unknownFields: UnknownFields
        public init(pipeline: Pipeline? = nil, unknownFields: UnknownFields = []) {
            self.pipeline = pipeline
            self.unknownFields = unknownFields
        }
    }

    public struct PipelineRegressor: Equatable, Sendable {
        public var pipeline: Pipeline?
        public var unknownFields: UnknownFields
        public init(pipeline: Pipeline? = nil, unknownFields: UnknownFields = []) {
            self.pipeline = pipeline
            self.unknownFields = unknownFields
        }
    }

    /// A model embedded as bytes (`Model.proto` `SerializedModel`).
    public struct SerializedModel: Equatable, Sendable {
        public var identifier: String
        public var model: [UInt8]
        public var unknownFields: UnknownFields
        public init(identifier: String = "", model: [UInt8] = [], unknownFields: UnknownFields = []) {
            self.identifier = identifier
            self.model = model
            self.unknownFields = unknownFields
        }
    }
}

// MARK: - C bridge

extension Spec.Model: CMessageCodable, KeepsWireBytes {
    init(reading r: CReader) throws {
        specificationVersion = r.int32(1)
        description = try r.message(2)
        isUpdatable = r.bool(10)
        unknownFields = r.unknownFields
        unknownFieldWarnings = []
        let c = r.oneofCase(200)
        switch c {
        case 0: type = .none
        case 200: type = .pipelineClassifier(try r.message(200)!)
        case 201: type = .pipelineRegressor(try r.message(201)!)
        case 202: type = .pipeline(try r.message(202)!)
        case 303: type = .neuralNetworkRegressor(try r.message(303)!)
        case 403: type = .neuralNetworkClassifier(try r.message(403)!)
        case 500: type = .neuralNetwork(try r.message(500)!)
        case 3000: type = .serializedModel(try r.message(3000)!)
        default:
            let kind = Spec.ModelKind(rawValue: c)
            // The original bytes (see WireBytes.swift), so re-encoding stays byte-identical.
            let content = r.verbatimContent(c) ?? []
            type = .other(kind: kind, content: content)
            // Classical kinds decode on demand: `classicalParameters()`.
            if !content.isEmpty && !Spec.ClassicalParameters.kinds.contains(kind) && kind != .mlProgram {
                r.ctx.warnings.append("\(r.path).\(kind.name): model type \(kind.name) is recognised "
                    + "by name only; its content (\(content.count) top-level field(s), "
                    + "\(content.reduce(0) { $0 + $1.data.count }) bytes) is kept verbatim, not decoded")
            }
        }
    }

    func write(to w: CWriter) throws {
        w.set(1, int32: specificationVersion)
        try w.set(2, message: description)
        w.set(10, bool: isUpdatable)
        switch type {
        case .none: break
        case let .pipelineClassifier(p): try w.set(200, message: p)
        case let .pipelineRegressor(p): try w.set(201, message: p)
        case let .pipeline(p): try w.set(202, message: p)
        case let .neuralNetworkRegressor(n): try w.set(303, message: n)
        case let .neuralNetworkClassifier(n): try w.set(403, message: n)
        case let .neuralNetwork(n): try w.set(500, message: n)
        case let .serializedModel(s): try w.set(3000, message: s)
        case let .other(kind, content):
            guard Spec.ModelKind.names[kind.rawValue] != nil,
                  ![200, 201, 202, 303, 403, 500, 3000].contains(kind.rawValue) else {
                throw CoreMLFormatError.cannotEncode(
                    what: "\(w.path).type", reason: "model kind \(kind.name) cannot be written as opaque content")
            }
            w.set(kind.rawValue, opaque: content)
        }
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.Pipeline: CMessageCodable, KeepsWireBytes {
    init(reading r: CReader) throws {
        models = try r.messages(1)
        names = r.strings(2)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, messages: models)
        try w.set(2, strings: names)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.PipelineClassifier: CMessageCodable, KeepsWireBytes {
    init(reading r: CReader) throws {
        pipeline = try r.message(1)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, message: pipeline)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.PipelineRegressor: CMessageCodable, KeepsWireBytes {
    init(reading r: CReader) throws {
        pipeline = try r.message(1)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, message: pipeline)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.SerializedModel: CMessageCodable {
    init(reading r: CReader) throws {
        identifier = r.string(1)
        model = r.bytes(2)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: identifier)
        w.set(2, bytes: model)
        w.setUnknownFields(unknownFields)
    }
}
