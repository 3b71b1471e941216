// From a decoded Core ML specification to a runnable `FeatureModel`: one loader per model kind.
import CoreMLFormat
import Foundation

/// What a loader gets besides the model's own specification.
public struct ModelLoadContext: Sendable {
    /// Names the model in messages: the file name, or `file › pipeline stage 2 (glmClassifier)`.
    public var name: String
    /// Threads for neural-network stages (`MLRuntime.Model.Configuration.threadCount`).
    public var threadCount: Int
    /// The directory an ML program's `@model_path` names (where `weights/weight.bin` is): the
    /// root model's directory inside an `.mlpackage`, the file's directory for an `.mlmodel`.
    /// nil: blob-file weights are refused. See `ModelLoadContext.modelDirectory(of:)`.
    public var modelPath: String?
    /// How ML programs are imported (function, `--precision fp16` rounding).
    public var programOptions: MILImportOptions
    public init(name: String, threadCount: Int = ProcessInfo.processInfo.activeProcessorCount,
                modelPath: String? = nil, programOptions: MILImportOptions = MILImportOptions()) {
        self.name = name
        self.threadCount = threadCount
        self.modelPath = modelPath
        self.programOptions = programOptions
    }
    /// The `modelPath` of a model file: for an `.mlpackage` directory, the directory of the root
    /// model its manifest names; for an `.mlmodel` file, the file's directory.
    /// - Throws: `CoreMLFormatError.invalidPackage` for a package without a readable manifest.
    public static func modelDirectory(of url: URL) throws -> String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue {
            return (try MLPackage.read(at: url.path).rootModelPath as NSString).deletingLastPathComponent
        }
        return url.deletingLastPathComponent().path
    }
    /// The context of a nested model (a pipeline stage).
    public func stage(_ index: Int, kind: String) -> ModelLoadContext {
        var c = self
        c.name = "\(name) › stage \(index) (\(kind))"
        return c
    }
}

/// Loads Core ML models of every kind mlconv runs.
public enum CoreMLModelLoader {
    /// A loader builds the runnable model of one `Spec.ModelKind` from the whole `Spec.Model`
    /// (its description says the input and output feature names and types).
    public typealias Loader = @Sendable (Spec.Model, ModelLoadContext) throws -> any FeatureModel

    /// One row per model kind mlconv runs. Kinds without a row are refused by `load`
    /// (Apple-proprietary kinds with `FeatureError.appleProprietary`).
    static let table: [Spec.ModelKind: Loader] = {
        var t: [Spec.ModelKind: Loader] = [:]
        // Rows are added by each model family's file (see `registerX` functions below).
        for register in registrations { register(&t) }
        return t
    }()

    /// Model families register their loaders here (one line per family file).
    static var registrations: [(inout [Spec.ModelKind: Loader]) -> Void] { [
        registerPipelines,
        registerNeuralNetworks,
        registerOneHotEncoder,
        registerFeatureVectorizer,
        registerDictVectorizer,
        registerArrayFeatureExtractor,
        registerCategoricalMapping,
        registerNormalizer,
        registerScaler,
        registerImputer,
        registerIdentity,
        registerNonMaximumSuppression,
        registerItemSimilarityRecommender,
        GLMFamily.register,
        TreeEnsembleFamily.register,
        SupportVectorFamily.register,
        NearestNeighborsFamily.register,
    ] }

    /// Model kinds whose parameters only Apple's Core ML framework can run.
    public static let appleProprietaryKinds: Set<Spec.ModelKind> = [
        .visionFeaturePrint, .audioFeaturePrint, .soundAnalysisPreprocessing, .textClassifier,
        .wordTagger, .gazetteer, .wordEmbedding,
    ]

    /// The model kinds `load` runs.
    public static var supportedKinds: Set<Spec.ModelKind> { Set(table.keys) }

    /// Loads `spec` into a runnable model.
    /// - Throws: `FeatureError.appleProprietary` for Apple-only kinds,
    ///   `FeatureError.unsupportedModel` for other kinds mlconv does not run,
    ///   `FeatureError.invalidModel` / `CoreMLFormatError` for damaged parameters.
    public static func load(_ spec: Spec.Model, context: ModelLoadContext) throws -> any FeatureModel {
        guard let kind = spec.kind else {
            throw FeatureError.invalidModel(model: context.name, reason: "the model sets no model type (Model.Type is empty)")
        }
        if let loader = table[kind] {
            let model = try loader(spec, context)
            if let defaults = try DefaultedInputsModel.defaults(of: spec.description, model: context.name) {
                return DefaultedInputsModel(base: model, defaults: defaults)
            }
            return model
        }
        if appleProprietaryKinds.contains(kind) {
            throw FeatureError.appleProprietary(model: context.name, kind: kind.description)
        }
        throw FeatureError.unsupportedModel(
            model: context.name, kind: kind.description,
            hint: "mlconv runs: " + supportedKinds.map(\.description).sorted().joined(separator: ", "))
    }
}
