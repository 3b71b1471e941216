// MARK: errors (issue 13): FeatureError in the one error model.
import Diagnostics

extension FeatureError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .missingInput, .typeMismatch, .shapeMismatch, .invalidShape, .invalidModel, .invalidValue: return .inputFile
        case .appleProprietary, .unsupportedModel: return .unsupportedModel
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .missingInput(_, f, _), let .typeMismatch(_, f, _, _), let .invalidValue(_, f, _, _): return DiagnosticLocation(.feature, f)
        case let .shapeMismatch(f?, _, _): return DiagnosticLocation(.feature, f)
        default: return nil
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        if case let .invalidValue(_, _, _, cause) = self { return cause.asCauses }
        return []
    }
}
