import AtomicFile
import Diagnostics

/// Errors thrown while reading or writing Core ML model files.
///
/// Every case names the file (or `"<memory>"` for in-memory buffers), what was expected, what
/// was found, and what the user can do about it (`description`).
public enum CoreMLFormatError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The file could not be read from disk (or, from `Spec.Model.write(toFile:)`, written).
    /// `cause`: the underlying error (a Foundation error, an `AtomicFileError`), kept as a value;
    /// `reason` is then empty or says what was being done.
    case unreadable(file: String, reason: String, cause: DiagnosticCause? = nil)
    /// The bytes are not a Core ML `Model` protobuf (empty, truncated, corrupted, or another
    /// file type). `found` describes the first problem located by a wire-format scan.
    case notAModel(file: String, byteCount: Int, found: String)
    /// An `.mlpackage` directory is missing its manifest or root model, or the manifest is
    /// not valid JSON of the expected shape.
    case invalidPackage(path: String, expected: String, found: String)
    /// A value in the model is outside the range mlconv (and Core ML) can use, e.g. a channel
    /// count of 2^63 or a weight count that overflows: `what` names the layer, `message` the
    /// field, the accepted range and the value found.
    case invalidValue(file: String, what: String, message: String)
    /// The in-memory spec cannot be serialized (for example a string that contains NUL).
    case cannotEncode(what: String, reason: String)

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        switch self {
        case let .unreadable(file, reason, cause):
            let detail = includingCause ? cause.appended(to: reason) : reason
            // `Spec.Model.write(toFile:)` reports its AtomicFile failure with this case too.
            let verb = cause?.error is AtomicFileError ? "write" : "read"
            return "\(file): cannot \(verb) the file\(detail.isEmpty ? "" : " (\(detail))"). Check the path and its permissions."
        case let .notAModel(file, byteCount, found):
            return "\(file): expected a Core ML model (a CoreML.Specification.Model protobuf), "
                + "found \(byteCount) bytes that are not one: \(found). "
                + "Re-export or re-download the model; if it is an .mlpackage, pass the "
                + "package directory instead of a file inside it."
        case let .invalidPackage(path, expected, found):
            return "\(path): expected \(expected), found \(found). An .mlpackage must contain "
                + "Manifest.json and the root model it names (normally "
                + "Data/com.apple.CoreML/model.mlmodel); re-export the package."
        case let .invalidValue(file, what, message):
            return "\(file): \(what) \(message). The file is corrupted or was crafted; re-export the model."
        case let .cannotEncode(what, reason):
            return "cannot encode \(what): \(reason). Fix the value in the spec and retry."
        }
    }
}
