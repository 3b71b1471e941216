// A model opened from any format mlconv reads, in the shape of Core ML's `MLModel`.
import CoreMLFormat
import Foundation
import ImageIO
import KerasFrontend
import MLBundle
import MLGraph
import MLPrediction
import MLRuntime

/// A model ready to predict (Core ML's `MLModel`).
///
/// Opens, by content (not by name):
/// - `.mlbundle` (mlconv's compiled format, memory-mapped);
/// - Keras `.h5` / `.keras`: converted and compiled on first open into an `.mlbundle` in the
///   cache (`MLModelConfiguration.cacheDirectory`), keyed by the file's content hash, so later
///   opens of the same bytes only map the bundle;
/// - Core ML `.mlmodel` / `.mlpackage` of every type mlconv runs (neural networks, pipelines,
///   tree ensembles, GLMs, SVMs, kNN, encoders, ML programs, ...), run as Core ML runs them on
///   feature values. Stateful ML programs (iOS 18 states) are refused with a typed error.
///
/// Instances are immutable and thread-safe: any number of threads may predict at once.
public final class MLModel: Sendable {
    /// The file the model was opened from.
    public let url: URL
    public let configuration: MLModelConfiguration
    /// Inputs, outputs, classifier labels and metadata.
    public let modelDescription: MLModelDescription
    /// The `.mlbundle` this model runs: the file itself, or the cache entry for a Keras file;
    /// nil for Core ML models (run from their specification) and for conversions done in memory.
    public let compiledModelURL: URL?
    /// Whether opening found the compiled bundle in the cache (a previous open or
    /// `compileModel(at:)` of the same content) instead of converting.
    public let loadedFromCache: Bool
    let engine: Engine

    enum Engine: Sendable {
        /// A compiled graph (bundles, Keras models): tensors in the graph's layout (NHWC).
        case graph(MLRuntime.Model)
        /// A Core ML model of any type, through feature values.
        case features(any FeatureModel)
    }

    /// Opens the model at `url` (see the type's documentation for the formats).
    /// - Throws: `MLModelError` (no such file, unreadable, cache not writable),
    ///   `KerasConversionError`, `BundleError`, `CoreMLFormatError`, `CoreMLImportError`,
    ///   `FeatureError` (unsupported or Apple-proprietary model types, stateful ML programs),
    ///   `RuntimeError` (a graph that cannot be prepared).
    public init(contentsOf url: URL, configuration: MLModelConfiguration = MLModelConfiguration()) throws {
        self.url = url
        self.configuration = configuration
        var runtime = MLRuntime.Model.Configuration(threadCount: max(1, configuration.threadCount),
                                                    referenceOnly: configuration.usesReferenceKernels)
        switch try ModelFileKind.detect(url) {
        case .coreML:
            let spec = try Spec.Model.load(contentsOf: url.path)
            let model = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: url.lastPathComponent,
                                                                                 threadCount: max(1, configuration.threadCount),
                                                                                 modelPath: try ModelLoadContext.modelDirectory(of: url)))
            engine = .features(model)
            modelDescription = MLModelDescription(spec: spec)
            compiledModelURL = nil
            loadedFromCache = false
        case .bundle, .keras:
            let bundleURL: URL?, hit: Bool, graph: Graph, disabled: Set<String>
            if try ModelFileKind.detect(url) == .bundle || configuration.usesCache {
                (bundleURL, hit) = try MLModel.compile(url, configuration: configuration)
                let b = try BundleFile(contentsOf: bundleURL ?? url)
                graph = b.graph
                disabled = b.disabledPasses.intersection(PassPipeline.inference.names)
            } else {
                (bundleURL, hit) = (nil, false)
                graph = try KerasConverter().convert(modelAt: url)
                disabled = []
            }
            runtime.disabledPasses = disabled
            let m = try MLRuntime.Model(graph: graph, configuration: runtime)
            engine = .graph(m)
            modelDescription = MLModelDescription(runtime: m.modelDescription)
            compiledModelURL = bundleURL
            loadedFromCache = hit
        }
    }

    /// Opens a model without blocking the caller (Core ML's `MLModel.load(contentsOf:configuration:)`).
    public static func load(contentsOf url: URL, configuration: MLModelConfiguration = MLModelConfiguration()) async throws -> MLModel {
        try await Task.detached { try MLModel(contentsOf: url, configuration: configuration) }.value
    }

    /// Compiles a model into an `.mlbundle` and returns its URL (Core ML's
    /// `MLModel.compileModel(at:)`, used for models downloaded at run time): a Keras file or a
    /// Core ML neural network is converted and written atomically into the cache
    /// (`configuration.cacheDirectory`), named by the source's content hash — compiling the same
    /// bytes again returns the same file without converting. An `.mlbundle` returns its own URL.
    /// - Throws: `MLModelError.notCompilable` for Core ML types other than neural networks
    ///   (open them with `init(contentsOf:)`), `.cacheUnavailable`, and the converters' errors.
    public static func compileModel(at url: URL, configuration: MLModelConfiguration = MLModelConfiguration()) throws -> URL {
        try compile(url, configuration: configuration).url
    }

    /// `compileModel(at:)` without blocking the caller.
    public static func compileModel(at url: URL, configuration: MLModelConfiguration = MLModelConfiguration()) async throws -> URL {
        try await Task.detached { try compile(url, configuration: configuration).url }.value
    }

    /// The bundle for `url` and whether it was already in the cache.
    static func compile(_ url: URL, configuration: MLModelConfiguration) throws -> (url: URL, hit: Bool) {
        let kind = try ModelFileKind.detect(url)
        if kind == .bundle { return (url, false) }
        var spec: Spec.Model?
        if kind == .coreML {
            let s = try Spec.Model.load(contentsOf: url.path)
            switch s.type {
            case .neuralNetwork, .neuralNetworkClassifier, .neuralNetworkRegressor: spec = s
            default: throw MLModelError.notCompilable(path: url.path, modelType: s.kind?.name ?? "none")
            }
        }
        let entry = try ModelCache.entry(for: url, in: configuration.effectiveCacheDirectory)
        if FileManager.default.fileExists(atPath: entry.path), (try? BundleFile(contentsOf: entry)) != nil {
            return (entry, true)
        }
        let graph: Graph
        let source: String
        if let spec {
            graph = try CoreMLImporter.graph(from: spec, fileName: url.lastPathComponent)
            source = "coreml:" + url.lastPathComponent
        } else {
            graph = try KerasConverter().convert(modelAt: url)
            source = "keras:" + url.lastPathComponent
        }
        try ModelCache.prepare(entry)
        try BundleWriter.write(graph, to: entry, producer: "mlconv \(mlconvVersion)", source: source)
        return (entry, false)
    }

    // MARK: Prediction

    /// Predicts one row (Core ML's `prediction(from:)`).
    ///
    /// `inputs` holds every non-optional input of `modelDescription` by name:
    /// - multi-arrays in the described shape (a leading batch dimension of 1 may be left out for
    ///   bundles and Keras models, whose shapes are the graph's NHWC shapes);
    /// - images as `.image(FeatureImage)` of any size and colour space: fitted to the input's size
    ///   with `configuration.imageCropAndScale` and converted to its colour space first
    ///   (`imageFeature(contentsOf:for:)` reads PNG/JPEG files);
    /// - Int64, Double, String, dictionary and sequence values for Core ML models that take them.
    /// Returns every output: multi-arrays in the output's declared type, classifier labels and
    /// label → probability dictionaries for Core ML classifiers, images for image outputs.
    /// - Throws: `MLModelError.unknownFeature` for a name that is no input, `FeatureError`
    ///   (missing inputs, wrong types or shapes), `RuntimeError` (the graph failed).
    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let fitted = try fit(inputs)
        switch engine {
        case let .features(m): return try m.prediction(from: fitted)
        case let .graph(m): return try graphPrediction(m, fitted)
        }
    }

    /// Predicts many rows (Core ML's batch `predictions(from:)`); outputs in input order.
    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let fitted = try batch.map(fit)
        switch engine {
        case let .features(m): return try m.predictions(from: fitted)
        case let .graph(m): return try fitted.map { try graphPrediction(m, $0) }
        }
    }

    /// `prediction(from:)` without blocking the caller.
    public func prediction(from inputs: FeatureProvider) async throws -> FeatureProvider {
        try await Task.detached { try self.prediction(from: inputs) }.value
    }

    /// `predictions(from:)` without blocking the caller.
    public func predictions(from batch: [FeatureProvider]) async throws -> [FeatureProvider] {
        try await Task.detached { try self.predictions(from: batch) }.value
    }

    /// Checks the names and fits images to their inputs' constraints.
    private func fit(_ inputs: FeatureProvider) throws -> FeatureProvider {
        let described = modelDescription.inputDescriptionsByName
        var out = inputs
        for (name, value) in inputs {
            guard let d = described[name] else {
                throw MLModelError.unknownFeature(name: name, inputs: modelDescription.inputs.map(\.name))
            }
            if case let .image(img) = value, let c = d.imageConstraint {
                out[name] = .image(try img.fitted(to: c, cropAndScale: configuration.imageCropAndScale, feature: name))
            }
        }
        return out
    }

    private func graphPrediction(_ m: MLRuntime.Model, _ inputs: FeatureProvider) throws -> FeatureProvider {
        var arrays: [String: NDArray] = [:]
        for f in m.modelDescription.inputs {
            guard let value = inputs[f.name] else { continue }  // the runtime names a missing input
            arrays[f.name] = try tensor(value, for: f)
        }
        let out = try m.prediction(from: arrays)
        var result: FeatureProvider = [:]
        for f in m.modelDescription.outputs {
            guard let a = out[f.name] else { continue }
            if let img = f.image, a.shape.count == 4, a.shape[0] == 1, a.shape[3] == (img.colorSpace == .grayscale ? 1 : 3) {
                let image = Image(floatHWC: a.scalars, width: a.shape[2], height: a.shape[1], channels: a.shape[3])
                let cs: FeatureImage.ColorSpace = img.colorSpace == .bgr ? .bgr : img.colorSpace == .rgb ? .rgb : .grayscale
                result[f.name] = .image(try FeatureImage(width: image.width, height: image.height, colorSpace: cs, pixels: image.pixels))
                continue
            }
            let values: [Double], dt: MultiArray.DataType
            switch a.elementType {
            case .float32: values = a.scalars.map(Double.init); dt = .float32
            case .float16: values = a.float16s.map { Double(Float($0)) }; dt = .float16
            case .int32: values = a.int32s.map(Double.init); dt = .int32
            case .int64: values = a.int64s.map(Double.init); dt = .float64
            case .bool: values = a.bools.map { $0 ? 1 : 0 }; dt = .int32
            }
            result[f.name] = .multiArray(try MultiArray(shape: a.shape, dataType: dt, values: values))
        }
        return result
    }

    private func tensor(_ value: FeatureValue, for f: MLRuntime.Model.Feature) throws -> NDArray {
        switch value {
        case let .multiArray(a):
            return try NDArray(shape: a.shape, scalars: a.values.map { Float($0) })
        case let .image(img):
            guard f.image != nil || (f.shape.count == 4 && (f.shape[3] == 1 || f.shape[3] == 3)) else {
                throw MLModelError.typeMismatch(feature: f.name, expected: "a MultiArray of shape \(f.shape)", found: "an Image")
            }
            // fit(_:) has brought described images to size and colour space; NHWC inputs without
            // an image description take the pixels as they are.
            var image = Image(width: img.width, height: img.height, channels: img.channels, pixels: img.pixels)
            if f.image == nil, f.shape[3] != img.channels {
                image = image.converted(to: f.shape[3] == 1 ? .grayscale : .rgb)
            }
            return try NDArray(shape: [1, image.height, image.width, image.channels], scalars: image.floatHWC())
        case let .double(d):
            return try NDArray(shape: f.shape.allSatisfy({ $0 == 1 }) ? f.shape : [1], scalars: [Float(d)])
        case let .int64(i):
            return try NDArray(shape: f.shape.allSatisfy({ $0 == 1 }) ? f.shape : [1], scalars: [Float(i)])
        case let other:
            throw MLModelError.typeMismatch(feature: f.name, expected: "a MultiArray or an Image", found: other.typeName)
        }
    }
}
