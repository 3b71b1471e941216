// MARK: errors (issue 13): BundleError in the one error model.
import Diagnostics

extension BundleError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .cannotOpen, .notABundle, .truncated, .corrupted, .invalidGraph: return .inputFile
        case .newerVersion: return .unsupportedModel
        case .writeFailed: return .io
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .cannotOpen(f, _), let .notABundle(f, _, _), let .truncated(f, _, _), let .corrupted(f, _, _),
             let .newerVersion(f, _, _), let .invalidGraph(f, _), let .writeFailed(f, _, _):
            return f
        }
    }
    public var diagnosticExpected: String? {
        switch self {
        case let .truncated(_, e, _): return "\(e) bytes"
        default: return nil
        }
    }
    public var diagnosticFound: String? {
        switch self {
        case let .truncated(_, _, f): return "\(f) bytes"
        default: return nil
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    /// The graph error of `.invalidGraph`, the cause of `.corrupted` and `.writeFailed`, kept as
    /// values.
    public var diagnosticCauses: [any Error] {
        switch self {
        case let .invalidGraph(_, underlying): return [underlying]
        case let .corrupted(_, _, cause), let .writeFailed(_, _, cause): return cause.asCauses
        default: return []
        }
    }
}
