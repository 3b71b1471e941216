// MARK: errors (issue 13): TrainingError in the one error model.
import Diagnostics

extension TrainingError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .notUpdatable, .unsupportedLayer: return .unsupportedModel
        case .invalidUpdateDescription, .invalidExample, .invalidTrainingData: return .inputFile
        case .invalidParameter: return .usage
        case .cancelled: return .internal
        case .diverged: return .numericCheckFailed
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .notUpdatable(m, _), let .invalidUpdateDescription(m, _, _, _), let .unsupportedLayer(m, _, _, _),
             let .invalidExample(m, _, _, _), let .invalidParameter(m, _, _), let .cancelled(m), let .diverged(m, _, _):
            return m
        case let .invalidTrainingData(s, _): return s
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .invalidUpdateDescription(_, layer, _, _) where !layer.isEmpty: return DiagnosticLocation(.layer, layer)
        case let .unsupportedLayer(_, node, _, _): return DiagnosticLocation(.node, node)
        case let .invalidExample(_, _, feature, _): return DiagnosticLocation(.feature, feature)
        case let .invalidParameter(_, p, _): return DiagnosticLocation(.option, p)
        default: return nil
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        if case let .invalidUpdateDescription(_, _, _, cause) = self { return cause.asCauses }
        return []
    }
}
