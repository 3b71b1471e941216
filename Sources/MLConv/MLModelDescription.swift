// What a model takes and returns, in the shape of Core ML's `MLModelDescription`.
import CoreMLFormat
import Foundation
import MLGraph
import MLPrediction
import MLRuntime

/// The type of a feature (Core ML's `MLFeatureType`).
public enum MLFeatureType: String, Sendable, Hashable {
    case int64, double, string, multiArray, dictionary, sequence, image, invalid
}

/// The allowed shapes of a multi-array feature (Core ML's `MLMultiArrayConstraint`).
public struct MLMultiArrayConstraint: Sendable, Hashable {
    /// Which shapes a flexible input takes (Core ML's `MLMultiArrayShapeConstraint`).
    public enum ShapeConstraint: Sendable, Hashable {
        /// Only `shape`.
        case unspecified
        /// One of these shapes.
        case enumerated([[Int]])
        /// Per dimension, a range of sizes; `upperBound` nil = unbounded.
        case range([SizeRange])
    }
    /// A closed range of sizes; `upperBound == nil` means unbounded (Core ML's −1).
    public struct SizeRange: Sendable, Hashable {
        public var lowerBound: Int
        public var upperBound: Int?
        public init(lowerBound: Int, upperBound: Int?) {
            self.lowerBound = lowerBound
            self.upperBound = upperBound
        }
        /// Whether `size` lies in the range.
        public func contains(_ size: Int) -> Bool { size >= lowerBound && (upperBound.map { size <= $0 } ?? true) }
    }
    /// The default shape. For `.mlmodel` features, Core ML's shape (`[C]`, `[C, H, W]`, or the
    /// exact rank-N shape); for Keras models and bundles, the graph's shape, batch first (−1 for
    /// a dimension known only at prediction time).
    public var shape: [Int]
    /// Element type values are rounded to (`MultiArray.DataType`; int64 tensors of bundles
    /// are reported as float64).
    public var dataType: MultiArray.DataType
    public var shapeConstraint: ShapeConstraint
    public init(shape: [Int], dataType: MultiArray.DataType, shapeConstraint: ShapeConstraint = .unspecified) {
        self.shape = shape
        self.dataType = dataType
        self.shapeConstraint = shapeConstraint
    }
}

/// The size and pixel format of an image feature (Core ML's `MLImageConstraint`).
public struct MLImageConstraint: Sendable, Hashable {
    public enum ColorSpace: String, Sendable, Hashable { case rgb = "RGB", bgr = "BGR", grayscale = "Grayscale" }
    /// The default size in pixels.
    public var pixelsWide: Int
    public var pixelsHigh: Int
    /// Channel order of the model's pixels (Core ML's `pixelFormatType`: 32BGRA / 32ARGB / OneComponent8).
    public var colorSpace: ColorSpace
    /// Flexible sizes (Core ML's `MLImageSizeConstraint`): the sizes the model also takes.
    public enum SizeConstraint: Sendable, Hashable {
        case unspecified
        case enumerated([MLImageSize])
        case range(width: MLMultiArrayConstraint.SizeRange, height: MLMultiArrayConstraint.SizeRange)
    }
    public var sizeConstraint: SizeConstraint
    /// Whether the model takes an image of `width` × `height` pixels as it is: the default size
    /// or one its `sizeConstraint` allows.
    public func allows(width: Int, height: Int) -> Bool {
        if width == pixelsWide && height == pixelsHigh { return true }
        switch sizeConstraint {
        case .unspecified: return false
        case let .enumerated(sizes): return sizes.contains { $0.width == width && $0.height == height }
        case let .range(w, h): return w.contains(width) && h.contains(height)
        }
    }
    /// A constraint for `FeatureValue.image(contentsOf:constraint:cropAndScale:)`.
    public init(pixelsWide: Int, pixelsHigh: Int, colorSpace: ColorSpace, sizeConstraint: SizeConstraint = .unspecified) {
        self.pixelsWide = pixelsWide
        self.pixelsHigh = pixelsHigh
        self.colorSpace = colorSpace
        self.sizeConstraint = sizeConstraint
    }
}

/// One image size in pixels.
public struct MLImageSize: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// One input or output (Core ML's `MLFeatureDescription`).
public struct MLFeatureDescription: Sendable, Hashable {
    public var name: String
    public var type: MLFeatureType
    /// Optional inputs may be left out of `prediction(from:)`.
    public var isOptional: Bool
    /// The model's own text about the feature, or "".
    public var shortDescription: String
    /// Set for multi-array features.
    public var multiArrayConstraint: MLMultiArrayConstraint?
    /// Set for image features.
    public var imageConstraint: MLImageConstraint?
    /// Dictionary features: the key type, `.string` or `.int64`.
    public var dictionaryKeyType: MLFeatureType?
    /// Sequence features: the element type, `.string` or `.int64`.
    public var sequenceElementType: MLFeatureType?
}

/// Classifier labels (String or Int64, as the model declares them): the feature models' own
/// `ClassLabels` (MLPrediction), under Core ML's name.
public typealias MLClassLabels = ClassLabels

/// Author, license, version and user-defined entries (Core ML's `MLModelMetadataKey`s).
public struct MLModelMetadata: Sendable, Hashable {
    public var author = ""
    public var license = ""
    public var shortDescription = ""
    public var versionString = ""
    /// `creatorDefinedKey` entries; converters record their source here (`mlconv.source`).
    public var userDefined: [String: String] = [:]
}

/// Inputs, outputs, classifier names and metadata (Core ML's `MLModelDescription`).
public struct MLModelDescription: Sendable, Hashable {
    /// Inputs in model order.
    public var inputs: [MLFeatureDescription]
    /// Outputs in model order.
    public var outputs: [MLFeatureDescription]
    /// Classifiers and regressors: the primary output's name.
    public var predictedFeatureName: String?
    /// Classifiers: the output holding the label → probability dictionary (or, for bundles, the
    /// probabilities tensor).
    public var predictedProbabilitiesName: String?
    /// Classifiers: the labels in class order.
    public var classLabels: MLClassLabels?
    public var metadata: MLModelMetadata
    /// The Core ML model type (`neuralNetworkClassifier`, `pipeline`, `treeEnsembleRegressor`, ...),
    /// `"mlbundle"` for compiled bundles and Keras models.
    public var modelType: String
    /// The `.mlmodel`'s `specificationVersion`; nil for bundles and Keras models.
    public var specificationVersion: Int?

    /// Inputs by name (Core ML's `inputDescriptionsByName`).
    public var inputDescriptionsByName: [String: MLFeatureDescription] {
        Dictionary(inputs.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }
    /// Outputs by name (Core ML's `outputDescriptionsByName`).
    public var outputDescriptionsByName: [String: MLFeatureDescription] {
        Dictionary(outputs.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }
}

// MARK: - From a Core ML specification

extension MLModelDescription {
    init(spec: Spec.Model) {
        let d = spec.description ?? Spec.ModelDescription()
        inputs = d.input.map(MLFeatureDescription.init(spec:))
        outputs = d.output.map(MLFeatureDescription.init(spec:))
        predictedFeatureName = d.predictedFeatureName.isEmpty ? nil : d.predictedFeatureName
        predictedProbabilitiesName = d.predictedProbabilitiesName.isEmpty ? nil : d.predictedProbabilitiesName
        classLabels = Self.classLabels(of: spec)
        var m = MLModelMetadata()
        if let md = d.metadata {
            m.author = md.author; m.license = md.license
            m.shortDescription = md.shortDescription; m.versionString = md.versionString
            m.userDefined = md.userDefinedDictionary
        }
        metadata = m
        modelType = spec.kind?.name ?? "none"
        specificationVersion = Int(exactly: spec.specificationVersion)
    }
}

extension MLModelDescription {
    /// The description of the Core ML model (`.mlmodel` or `.mlpackage`) at `url`, read without
    /// loading the model — also for model types `MLModel` cannot run (Apple-proprietary ones,
    /// ML programs), as Xcode's model viewer shows them. For `.mlbundle` and Keras files, open
    /// the model (`MLModel.modelDescription`).
    /// - Throws: `MLModelError` (no such file, not a Core ML file), `CoreMLFormatError` (damaged file).
    public init(contentsOf url: URL) throws {
        guard try ModelFileKind.detect(url) == .coreML else {
            throw MLModelError.notAModelFile(path: url.path, reason: "is not a Core ML model (.mlmodel or .mlpackage); open it with MLModel(contentsOf:) and read its modelDescription")
        }
        self.init(spec: try Spec.Model.load(contentsOf: url.path))
    }

    /// A classifier's labels: a neural network classifier's, a GLM / SVM / tree ensemble / kNN
    /// classifier's, or a pipeline classifier's last stage's.
    static func classLabels(of spec: Spec.Model) -> MLClassLabels? {
        switch spec.type {
        case let .neuralNetworkClassifier(c):
            switch c.classLabels {
            case let .strings(s)?: return .strings(s)
            case let .int64s(v)?: return .int64s(v)
            case nil: return nil
            }
        case let .pipelineClassifier(p):
            return p.pipeline?.models.last.flatMap(classLabels(of:))
        // MARK: milopsa — an ML program's classify op
        case .other(kind: .mlProgram, _):
            guard let c = MILImporter.classifierLabels(of: spec) else { return nil }
            if c.int64 {
                let v = c.labels.compactMap { Int64($0) }
                return v.count == c.labels.count ? .int64s(v) : nil
            }
            return .strings(c.labels)
        default:
            break
        }
        switch try? spec.classicalParameters() {
        case let .glmClassifier(m)?:
            switch m.classLabels {
            case let .stringClassLabels(v)?: return .strings(v.vector)
            case let .int64ClassLabels(v)?: return .int64s(v.vector)
            case nil: return nil
            }
        case let .supportVectorClassifier(m)?:
            switch m.classLabels {
            case let .stringClassLabels(v)?: return .strings(v.vector)
            case let .int64ClassLabels(v)?: return .int64s(v.vector)
            case nil: return nil
            }
        case let .treeEnsembleClassifier(m)?:
            switch m.classLabels {
            case let .stringClassLabels(v)?: return .strings(v.vector)
            case let .int64ClassLabels(v)?: return .int64s(v.vector)
            case nil: return nil
            }
        case let .kNearestNeighborsClassifier(m)?:
            switch m.classLabels {
            case let .stringClassLabels(v)?: return .strings(v.vector)
            case let .int64ClassLabels(v)?: return .int64s(v.vector)
            case nil: return nil
            }
        default:
            return nil
        }
    }
}

extension MLFeatureDescription {
    init(spec f: Spec.FeatureDescription) {
        name = f.name
        shortDescription = f.shortDescription
        isOptional = f.type?.isOptional ?? false
        multiArrayConstraint = nil; imageConstraint = nil; dictionaryKeyType = nil; sequenceElementType = nil
        guard let kind = f.type?.kind else { type = .invalid; return }
        switch kind {
        case .none, .state: type = .invalid
        case .int64: type = .int64
        case .double: type = .double
        case .string: type = .string
        case let .dictionary(t):
            type = .dictionary
            dictionaryKeyType = t.keyType == .int64 ? .int64 : t.keyType == .string ? .string : .invalid
        case let .sequence(t):
            type = .sequence
            sequenceElementType = t.elementType == .int64 ? .int64 : t.elementType == .string ? .string : .invalid
        case let .multiArray(t):
            type = .multiArray
            let dt: MultiArray.DataType
            switch t.dataType {
            case .float16: dt = .float16
            case .double: dt = .float64
            case .int32: dt = .int32
            default: dt = .float32
            }
            var c = MLMultiArrayConstraint.ShapeConstraint.unspecified
            switch t.shapeFlexibility {
            case let .enumeratedShapes(shapes)?: c = .enumerated(shapes.map { $0.map { Int(clamping: $0) } })
            case let .shapeRange(ranges)?: c = .range(ranges.map(MLMultiArrayConstraint.SizeRange.init(spec:)))
            case nil: break
            }
            multiArrayConstraint = MLMultiArrayConstraint(shape: t.shape.map { Int(clamping: $0) }, dataType: dt, shapeConstraint: c)
        case let .image(t):
            type = .image
            let cs: MLImageConstraint.ColorSpace = t.colorSpace == .bgr ? .bgr : (t.colorSpace == .rgb ? .rgb : .grayscale)
            var c = MLImageConstraint.SizeConstraint.unspecified
            switch t.sizeFlexibility {
            case let .enumeratedSizes(sizes)?:
                c = .enumerated(sizes.map { MLImageSize(width: Int(clamping: $0.width), height: Int(clamping: $0.height)) })
            case let .imageSizeRange(w, h)?:
                c = .range(width: w.map(MLMultiArrayConstraint.SizeRange.init(spec:)) ?? .init(lowerBound: 0, upperBound: nil),
                           height: h.map(MLMultiArrayConstraint.SizeRange.init(spec:)) ?? .init(lowerBound: 0, upperBound: nil))
            case nil: break
            }
            imageConstraint = MLImageConstraint(pixelsWide: Int(clamping: t.width), pixelsHigh: Int(clamping: t.height),
                                                colorSpace: cs, sizeConstraint: c)
        }
    }
}

extension MLMultiArrayConstraint.SizeRange {
    /// MLGraph's range (upper bound −1 = unbounded) as Core ML's (nil = unbounded).
    init(dimension r: DimensionRange) {
        lowerBound = r.lowerBound
        upperBound = r.upperBound < 0 ? nil : r.upperBound
    }
    init(spec r: Spec.SizeRange) {
        lowerBound = Int(clamping: r.lowerBound)
        upperBound = r.upperBound < 0 ? nil : Int(clamping: r.upperBound)
    }
}

// MARK: - From a compiled graph (bundles, Keras models)

extension MLModelDescription {
    init(runtime d: MLRuntime.Model.Description) {
        inputs = d.inputs.map(MLFeatureDescription.init(runtime:))
        outputs = d.outputs.map(MLFeatureDescription.init(runtime:))
        predictedProbabilitiesName = d.probabilitiesOutput
        predictedFeatureName = nil
        classLabels = d.classLabels.map { .strings($0) }
        var m = MLModelMetadata()
        m.author = d.metadata.author; m.license = d.metadata.license
        m.shortDescription = d.metadata.shortDescription; m.versionString = d.metadata.versionString
        m.userDefined = d.metadata.userDefined
        metadata = m
        modelType = "mlbundle"
        specificationVersion = nil
    }
}

extension MLFeatureDescription {
    init(runtime f: MLRuntime.Model.Feature) {
        name = f.name
        shortDescription = f.shortDescription
        isOptional = false
        dictionaryKeyType = nil; sequenceElementType = nil
        if let img = f.image {
            type = .image
            multiArrayConstraint = nil
            let cs: MLImageConstraint.ColorSpace = img.colorSpace == .bgr ? .bgr : (img.colorSpace == .rgb ? .rgb : .grayscale)
            // A bundle keeps an image's flexibility in its NHWC layout [1, H, W, C].
            var sizes = MLImageConstraint.SizeConstraint.unspecified
            switch f.shapeFlexibility {
            case let .ranges(r)? where r.count == 4:
                sizes = .range(width: .init(dimension: r[2]), height: .init(dimension: r[1]))
            case let .enumerated(shapes)?:
                sizes = .enumerated(shapes.filter { $0.count == 4 }.map { MLImageSize(width: $0[2], height: $0[1]) })
            default: break
            }
            imageConstraint = MLImageConstraint(pixelsWide: img.width, pixelsHigh: img.height, colorSpace: cs, sizeConstraint: sizes)
        } else {
            type = .multiArray
            imageConstraint = nil
            let dt: MultiArray.DataType
            switch f.elementType {
            case .float16: dt = .float16
            case .int32, .bool: dt = .int32
            case .int64: dt = .float64
            case .float32: dt = .float32
            }
            // A declared flexibility (ranges or enumerated shapes) first; else a dimension known
            // only at prediction time (−1) takes any size ≥ 1.
            let constraint: MLMultiArrayConstraint.ShapeConstraint
            switch f.shapeFlexibility {
            case let .ranges(r)?: constraint = .range(r.map(MLMultiArrayConstraint.SizeRange.init(dimension:)))
            case let .enumerated(shapes)?: constraint = .enumerated(shapes)
            case nil:
                constraint = f.shape.contains { $0 < 0 }
                    ? .range(f.shape.map { $0 < 0 ? .init(lowerBound: 1, upperBound: nil) : .init(lowerBound: $0, upperBound: $0) })
                    : .unspecified
            }
            multiArrayConstraint = MLMultiArrayConstraint(shape: f.shape, dataType: dt, shapeConstraint: constraint)
        }
    }
}
