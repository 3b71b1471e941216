// MARK: errors (issue 13): the C ABI's own argument errors in the one error model.
import MLConv

extension CABIError: MLConvDiagnostic {
    /// A bad argument from the C caller (null pointer, malformed options JSON, wrong count).
    var diagnosticCategory: DiagnosticCategory { .usage }
}
