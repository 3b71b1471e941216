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
        case let .unreadable(p, _), let .unrecognizedFormat(p, _), let .corrupt(p, _, _), let .unsupported(p, _, _),
             let .tooLarge(p, _, _), let .unwritable(p, _):
            return p
        case .invalidImage: return nil
        }
    }
}
