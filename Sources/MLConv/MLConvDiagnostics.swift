// MARK: errors (issue 13): the one error model, seen from the front door.
//
// `import MLConv` brings `MLConvDiagnostic`, `Diagnostic`, `DiagnosticCategory`,
// `DiagnosticRenderer` and `MemoryLimit` (module Diagnostics) with it.
@_exported import Diagnostics

extension MLModelError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .fileNotFound, .notAModelFile, .unreadable: return .inputFile
        case .notCompilable: return .unsupportedModel
        case .cacheUnavailable: return .io
        case .unknownFeature, .typeMismatch, .invalidImage, .notAnImageInput: return .inputFile
        case .invalidOption: return .usage
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .fileNotFound(p, _), let .notAModelFile(p, _), let .unreadable(p, _, _), let .notCompilable(p, _): return p
        case let .cacheUnavailable(d, _, _): return d
        default: return nil
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .unknownFeature(f, _), let .typeMismatch(f, _, _), let .invalidImage(f, _), let .notAnImageInput(f, _):
            return DiagnosticLocation(.feature, f)
        case let .invalidOption(name, _): return DiagnosticLocation(.option, name)
        default: return nil
        }
    }
    public var diagnosticExpected: String? {
        if case let .typeMismatch(_, e, _) = self { return e }
        return nil
    }
    public var diagnosticFound: String? {
        if case let .typeMismatch(_, _, f) = self { return f }
        return nil
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}

/// The message of any error thrown by `MLModel` (or any mlconv module), rendered the way the
/// `mlconv` CLI prints it (without its "error: " prefix): the summary, then file, location,
/// expected, found, hint and the causes, each on an indented line when not already said.
/// The C ABI's `mlconv_last_error()` returns this text.
public func diagnosticMessage(for error: any Error) -> String {
    DiagnosticRenderer.message(error)
}
