// The typed error of the MLConv front door (what `MLModel` throws besides the errors of the
// modules it wraps: `KerasConversionError`, `BundleError`, `CoreMLFormatError`,
// `CoreMLImportError`, `RuntimeError`, `FeatureError`, `ImageCodecError`).
import Foundation
import MLGraph

/// Why `MLModel` could not open, compile or run a model, or take a value.
/// Each message names the file or feature, what was expected, what was found and what to do.
public enum MLModelError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path names no file. `cwd` is the current directory when the path was relative.
    case fileNotFound(path: String, cwd: String?)
    /// The path is a directory that is not an `.mlpackage`.
    case notAModelFile(path: String, reason: String)
    /// The file cannot be read (permissions, I/O).
    case unreadable(path: String, reason: String)
    /// The model type has no compiled `.mlbundle` form (`compileModel(at:)` of a classical Core
    /// ML model, a pipeline or an ML program).
    case notCompilable(path: String, modelType: String)
    /// The cache directory cannot be created or written.
    case cacheUnavailable(directory: String, reason: String)
    /// A prediction input names no input of the model.
    case unknownFeature(name: String, inputs: [String])
    /// A value cannot be given to an input of this type.
    case typeMismatch(feature: String, expected: String, found: String)
    /// An image option or raw pixel buffer is invalid.
    case invalidImage(feature: String, reason: String)
    /// An image was given for an input that takes a multi-array of `shape` (graph layout).
    case notAnImageInput(feature: String, shape: [Int])
    /// An option (C ABI options JSON, configuration) is invalid.
    case invalidOption(name: String, reason: String)

    public var description: String {
        switch self {
        case let .fileNotFound(path, cwd):
            return "'\(path)': no such file" + (cwd.map { " (relative to \($0))" } ?? "")
                + "; give the path of a .h5, .keras, .mlmodel, .mlpackage or .mlbundle file"
        case let .notAModelFile(path, reason): return "'\(path)' \(reason)"
        case let .unreadable(path, reason): return "cannot read '\(path)': \(reason)"
        case let .notCompilable(path, type):
            return "'\(path)' is a Core ML \(type) model, which has no compiled .mlbundle form (only neural networks and Keras models compile); open the .mlmodel itself with MLModel(contentsOf:)"
        case let .cacheUnavailable(dir, reason):
            return "cannot use the model cache '\(dir)': \(reason); set MLModelConfiguration.cacheDirectory (or MLCONV_CACHE_DIR) to a writable directory, or usesCache = false"
        case let .unknownFeature(name, inputs):
            return "the model has no input '\(name)'; its inputs: " + inputs.joined(separator: ", ")
        case let .typeMismatch(feature, expected, found):
            return "input '\(feature)': expected \(expected), found \(found)"
        case let .invalidImage(feature, reason): return "image input '\(feature)': \(reason)"
        case let .notAnImageInput(feature, shape):
            return "input '\(feature)' has shape \(formatShape(shape)), which is not an image; give it a .npy array, or re-convert the model with --image-input \(feature) so it takes images"
        case let .invalidOption(name, reason): return "option '\(name)': \(reason)"
        }
    }
}
