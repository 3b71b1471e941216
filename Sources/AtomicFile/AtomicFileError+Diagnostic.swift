// MARK: errors (issue 13): AtomicFileError in the one error model.
import Diagnostics

extension AtomicFileError: MLConvDiagnostic {
    /// Writing an output failed: `.io`.
    public var diagnosticCategory: DiagnosticCategory { .io }
    public var diagnosticFile: String? { path }
    public var diagnosticHint: String? {
        "check that '\(directory)' exists, is writable and has free space"
    }
}
