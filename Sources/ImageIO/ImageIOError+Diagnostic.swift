// MARK: errors (issue 13): ImageIOError in the one error model.
import Diagnostics

extension ImageIOError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .unreadable, .unrecognizedFormat, .corrupt, .invalidImage: return .inputFile
        case .unsupported: return .unsupportedModel
        case .tooLarge: return .resourceLimit
        case .unwritable: return .io
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .unreadable(p, _, _), let .unrecognizedFormat(p, _), let .corrupt(p, _, _), let .unsupported(p, _, _),
             let .tooLarge(p, _, _), let .unwritable(p, _, _):
            return p
        case .invalidImage: return nil
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        switch self {
        case let .unreadable(_, _, cause), let .unwritable(_, _, cause): return cause.asCauses
        default: return []
        }
    }
}
