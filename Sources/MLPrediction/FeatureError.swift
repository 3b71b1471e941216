// The typed errors of feature-value prediction.
import Diagnostics
import Foundation

/// Errors of `MLPrediction`: every message names the model (or pipeline stage), the feature, what
/// was expected and what was found, and what to do.
public enum FeatureError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A required input feature was not given.
    case missingInput(model: String, feature: String, expected: String)
    /// An input feature has the wrong type.
    case typeMismatch(model: String, feature: String, expected: String, found: String)
    /// A multiArray has a shape the description does not allow.
    case shapeMismatch(feature: String?, expected: [Int], found: Int)
    /// A shape with a negative dimension or an overflowing element count.
    case invalidShape(shape: [Int])
    /// The model's parameters are inconsistent (a tree references a missing node, a GLM's weights
    /// do not match its classes, ...): the file is damaged or was written by a buggy converter.
    case invalidModel(model: String, reason: String)
    /// A model type (or pipeline stage) that only Apple's Core ML framework can run
    /// (`visionFeaturePrint`, `audioFeaturePrint`, `soundAnalysisPreprocessing`, `textClassifier`,
    /// `wordTagger`, `gazetteer`, `wordEmbedding`, ...).
    case appleProprietary(model: String, kind: String)
    /// A model type mlconv does not run (yet).
    case unsupportedModel(model: String, kind: String, hint: String)
    /// A value that cannot be converted (a string where a number is needed, a key of the wrong type, ...).
    /// `cause`: the underlying error (the JSON parser's, for malformed JSON), kept as a value (issue 13).
    case invalidValue(model: String, feature: String, reason: String, cause: DiagnosticCause? = nil)

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        switch self {
        case let .missingInput(m, f, e):
            return "\(m): input feature '\(f)' (\(e)) is missing; give it (e.g. --input \(f)=VALUE)"
        case let .typeMismatch(m, f, e, found):
            return "\(m): input feature '\(f)' must be \(e), found \(found); give a value of the described type"
        case let .shapeMismatch(f, e, found):
            return "\(f.map { "feature '\($0)': " } ?? "")expected shape \(e), found \(found) values; give an array of the described shape"
        case let .invalidShape(s):
            return "invalid shape \(s): dimensions must be ≥ 0 and their product must fit in memory"
        case let .invalidModel(m, r):
            return "\(m): invalid model parameters: \(r); the file is damaged or was written by a faulty converter"
        case let .appleProprietary(m, k):
            return "\(m): '\(k)' is an Apple-proprietary model type whose parameters only Apple's Core ML framework can run (on macOS/iOS); mlconv can inspect it but not predict"
        case let .unsupportedModel(m, k, h):
            return "\(m): model type '\(k)' is not supported; \(h)"
        case let .invalidValue(m, f, r, c):
            return "\(m): feature '\(f)': \(r)" + (includingCause ? c.map { " (\($0.text))" } ?? "" : "")
        }
    }
}
