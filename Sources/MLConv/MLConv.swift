// MLConv: the one module apps import to open, compile and run Core ML and Keras models on Linux,
// in the shape of Apple's Core ML (`MLModel`, `MLModelDescription`, `MLFeatureDescription`,
// feature values). See MLConv.docc.
//
// The feature value types are MLPrediction's, re-exported under their names so that `import
// MLConv` is all an app needs; the implementation modules (MLRuntime, MLGraph, ...) stay hidden.
import Foundation
import ImageIO
import MLPrediction
import MLRuntime

/// One Core ML feature value: `.int64`, `.double`, `.string`, `.multiArray`, `.dictionary`,
/// `.sequence`, `.image` (Core ML's `MLFeatureValue`).
public typealias FeatureValue = MLPrediction.FeatureValue
/// Named feature values, as Core ML's `MLFeatureProvider` / `MLDictionaryFeatureProvider`.
public typealias FeatureProvider = MLPrediction.FeatureProvider
/// A row-major multi-dimensional array of Double values with a declared data type (`MLMultiArray`).
public typealias MultiArray = MLPrediction.MultiArray
/// A dictionary value (`[String: Double]` or `[Int64: Double]`), e.g. classifier probabilities.
public typealias FeatureDictionary = MLPrediction.FeatureDictionary
/// A sequence of Int64 or of String.
public typealias FeatureSequence = MLPrediction.FeatureSequence
/// Interleaved 8-bit pixels, `height × width × channels`, RGB, BGR or grayscale (`CVPixelBuffer`).
public typealias FeatureImage = MLPrediction.FeatureImage
/// The error of feature-level problems (missing inputs, wrong types or shapes, invalid models).
public typealias FeatureError = MLPrediction.FeatureError

/// The version of this library (as `mlconv --version`).
public let mlconvVersion = "0.1.0"

/// How an image of another size is fitted to an image input's size, as Apple's Vision
/// `VNImageCropAndScaleOption`.
public enum ImageCropAndScale: String, Sendable, CaseIterable {
    /// Scale keeping the aspect ratio to cover the target, then crop the centre (Vision `.centerCrop`).
    case centerCrop
    /// Scale keeping the aspect ratio to fit inside the target, padding the rest with black (`.scaleFit`).
    case scaleFit
    /// Stretch to the target size, ignoring the aspect ratio (`.scaleFill`).
    case scaleFill

    var mode: ImageCropMode {
        switch self {
        case .centerCrop: return .center
        case .scaleFit: return .fit
        case .scaleFill: return .fill
        }
    }
}

/// Load options (Core ML's `MLModelConfiguration`).
public struct MLModelConfiguration: Sendable, Hashable {
    /// CPU threads for the oneDNN kernels, ≥ 1. Default: every active core.
    public var threadCount: Int
    /// Run the plain reference kernels and the graph exactly as stored (slow; for checking
    /// numerics). Core ML's nearest notion is `computeUnits`.
    public var usesReferenceKernels: Bool
    /// Where converted and compiled models are cached, keyed by the source file's content hash.
    /// `nil`: `$MLCONV_CACHE_DIR`, else `$XDG_CACHE_HOME/mlconv`, else `~/.cache/mlconv`.
    public var cacheDirectory: URL?
    /// When false, Keras files are converted in memory on every open and nothing is written.
    public var usesCache: Bool
    /// How `imageFeature(...)` and image inputs of another size are fitted (default `.centerCrop`,
    /// as Vision's usual option).
    public var imageCropAndScale: ImageCropAndScale

    public init(threadCount: Int = ProcessInfo.processInfo.activeProcessorCount, usesReferenceKernels: Bool = false,
                cacheDirectory: URL? = nil, usesCache: Bool = true, imageCropAndScale: ImageCropAndScale = .centerCrop) {
        self.threadCount = threadCount
        self.usesReferenceKernels = usesReferenceKernels
        self.cacheDirectory = cacheDirectory
        self.usesCache = usesCache
        self.imageCropAndScale = imageCropAndScale
    }

    /// The cache directory in effect (see `cacheDirectory`).
    public var effectiveCacheDirectory: URL {
        if let d = cacheDirectory { return d }
        let env = ProcessInfo.processInfo.environment
        if let d = env["MLCONV_CACHE_DIR"], !d.isEmpty { return URL(fileURLWithPath: d, isDirectory: true) }
        if let x = env["XDG_CACHE_HOME"], !x.isEmpty { return URL(fileURLWithPath: x, isDirectory: true).appendingPathComponent("mlconv") }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache/mlconv")
    }
}

// MARK: NumPy interchange

extension MultiArray {
    /// Reads a NumPy `.npy` file (`<f4`, `<f8`, `<f2`, `<i4`, `<i8`, `|b1`, C order) as a
    /// multi-array of its shape: float32 for `<f4` and `<f8` (read as float32, as everywhere in
    /// mlconv), float16 for `<f2`, int32 for `<i4` and `|b1`, float64 for `<i8`.
    /// - Throws: `RuntimeError` naming the file when it is not a supported `.npy`.
    public init(contentsOfNPY url: URL) throws {
        let a = try NPY.read(contentsOf: url)
        switch a.elementType {
        case .float32: try self.init(shape: a.shape, dataType: .float32, values: a.scalars.map(Double.init))
        case .float16: try self.init(shape: a.shape, dataType: .float16, values: a.float16s.map { Double(Float($0)) })
        case .int32: try self.init(shape: a.shape, dataType: .int32, values: a.int32s.map(Double.init))
        case .int64: try self.init(shape: a.shape, dataType: .float64, values: a.int64s.map(Double.init))
        case .bool: try self.init(shape: a.shape, dataType: .int32, values: a.bools.map { $0 ? 1 : 0 })
        }
    }
}
