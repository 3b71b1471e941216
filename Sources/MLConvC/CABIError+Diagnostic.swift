// MARK: errors (issue 13): the C ABI's own argument errors in the one error model.
import MLConv

extension CABIError: MLConvDiagnostic {
    /// A bad argument from the C caller (null pointer, malformed options JSON, wrong count); for
    /// an error that wraps another (a batch row's), the category of that error.
    var diagnosticCategory: DiagnosticCategory { cause.map { Diagnostic.category(of: $0.error) } ?? .usage }
    var diagnosticSummary: String { message }
    var diagnosticCauses: [any Error] { cause.asCauses }
}
