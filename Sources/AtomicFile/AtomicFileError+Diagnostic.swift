// MARK: errors (issue 13): AtomicFileError in the one error model.
import Diagnostics

extension AtomicFileError: MLConvDiagnostic {
    /// Writing an output failed: `.io`.
    public var diagnosticCategory: DiagnosticCategory { .io }
    /// `reason` ("cannot rename the temporary file into place: No space left on device"): the
    /// renderer adds the path on a "file:" line, and the errors that keep an `AtomicFileError`
    /// as their cause (issue 13) append this text after their own, which names the path.
    public var diagnosticSummary: String { reason }
    public var diagnosticFile: String? { path }
    public var diagnosticHint: String? {
        "check that '\(directory)' exists, is writable and has free space"
    }
}
