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
        case let .missingInput(_, f, _), let .typeMismatch(_, f, _, _), let .invalidValue(_, f, _): return DiagnosticLocation(.feature, f)
        case let .shapeMismatch(f?, _, _): return DiagnosticLocation(.feature, f)
        default: return nil
        }
    }
}
