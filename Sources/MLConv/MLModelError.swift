// The typed error of the MLConv front door (what `MLModel` throws besides the errors of the
// modules it wraps: `KerasConversionError`, `BundleError`, `CoreMLFormatError`,
// `CoreMLImportError`, `RuntimeError`, `FeatureError`, `ImageCodecError`).
import Diagnostics
import Foundation
import MLGraph

/// Why `MLModel` could not open, compile or run a model, or take a value.
/// Each message names the file or feature, what was expected, what was found and what to do.
public enum MLModelError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path names no file. `cwd` is the current directory when the path was relative.
    case fileNotFound(path: String, cwd: String?)
    /// The path is a directory that is not an `.mlpackage`.
    case notAModelFile(path: String, reason: String)
    /// The file cannot be read (permissions, I/O). `cause`: the system's error, kept as a value
    /// (issue 13); `reason` is then empty or says what was being done.
    case unreadable(path: String, reason: String, cause: DiagnosticCause? = nil)
    /// The model type has no compiled `.mlbundle` form (`compileModel(at:)` of a classical Core
    /// ML model, a pipeline or an ML program).
    case notCompilable(path: String, modelType: String)
    /// The cache directory cannot be created or written. `cause`: the system's error, kept as a
    /// value (issue 13).
    case cacheUnavailable(directory: String, reason: String, cause: DiagnosticCause? = nil)
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

    public var description: String { text(includingCause: true) }

    /// The underlying error, when the case keeps one.
    public var cause: DiagnosticCause? {
        switch self {
        case let .unreadable(_, _, c), let .cacheUnavailable(_, _, c): return c
        default: return nil
        }
    }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        func detail(_ m: String, _ c: DiagnosticCause?) -> String { includingCause ? c.appended(to: m) : m }
        switch self {
        case let .fileNotFound(path, cwd):
            return "'\(path)': no such file" + (cwd.map { " (relative to \($0))" } ?? "")
                + "; give the path of a .h5, .keras, .mlmodel, .mlpackage or .mlbundle file"
        case let .notAModelFile(path, reason): return "'\(path)' \(reason)"
        case let .unreadable(path, reason, cause):
            let d = detail(reason, cause)
            return "cannot read '\(path)'" + (d.isEmpty ? "" : ": " + d)
        case let .notCompilable(path, type):
            return "'\(path)' is a Core ML \(type) model, which has no compiled .mlbundle form (only neural networks and Keras models compile); open the .mlmodel itself with MLModel(contentsOf:)"
        case let .cacheUnavailable(dir, reason, cause):
            let d = detail(reason, cause)
            return "cannot use the model cache '\(dir)'\(d.isEmpty ? "" : ": " + d); set MLModelConfiguration.cacheDirectory (or MLCONV_CACHE_DIR) to a writable directory, or usesCache = false"
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
