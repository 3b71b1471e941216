// MARK: errors (issue 13): HDF5Error in the one error model.
import Diagnostics

extension HDF5Error: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch kind {
        case .memoryLimitExceeded: return .resourceLimit
        default: return .inputFile
        }
    }
    /// `summary` (the `description` repeats file, object, expected, found and hint on lines of
    /// their own, which the renderer then prints only once).
    /// (The cause is left out: the renderer prints it on a "caused by:" line of its own.)
    public var diagnosticSummary: String { lines(includingCause: false).joined(separator: "\n") }
    public var diagnosticFile: String? { file }
    public var diagnosticLocation: DiagnosticLocation? {
        if let attribute { return DiagnosticLocation(.attribute, (objectPath ?? "/") + "@" + attribute) }
        return objectPath.map { DiagnosticLocation(.object, $0) }
    }
}

extension HDF5Error {
    public var diagnosticExpected: String? { expected }
    public var diagnosticFound: String? { found }
    public var diagnosticHint: String? { hint }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}
