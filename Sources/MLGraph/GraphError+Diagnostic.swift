// MARK: errors (issue 13): the MLGraph errors in the one error model.
import Diagnostics

extension GraphError: MLConvDiagnostic {
    /// An invalid graph read from a file is a bad input file; a pass that broke a graph, or an
    /// unknown pass name, is not the file's fault.
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .invalidNode, .invalidTopology, .invalidConstant, .invalidAttribute: return .inputFile
        case .passProducedInvalidGraph: return .internal
        case .unknownPass, .duplicatePassName: return .usage
        case let .verificationFailed(f):
            if case .memoryLimit? = f.cause { return .resourceLimit }
            return .inputFile
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .invalidNode(node, _, _): return DiagnosticLocation(.node, node)
        case let .invalidAttribute(op, _, _, _): return DiagnosticLocation(.op, op)
        case let .unknownPass(name, _): return DiagnosticLocation(.option, name)
        case let .verificationFailed(f): return f.location
        default: return nil
        }
    }
    public var diagnosticExpected: String? {
        if case let .invalidAttribute(_, _, expected, _) = self { return expected }
        if case let .verificationFailed(f) = self { return f.expected }
        return nil
    }
    public var diagnosticFound: String? {
        if case let .invalidAttribute(_, _, _, found) = self { return found }
        if case let .verificationFailed(f) = self { return f.found }
        return nil
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        if case let .verificationFailed(f) = self, let c = f.cause { return [c.error] }
        if case let .passProducedInvalidGraph(_, _, cause) = self { return cause.asCauses }
        return []
    }
}

extension FlexibleShapeError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
    public var diagnosticLocation: DiagnosticLocation? { DiagnosticLocation(.input, input) }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}

extension MatMulShapeError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .inputFile }
}

extension EinsumSyntaxError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .inputFile }
}

extension EinsumSizeConflict: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .inputFile }
}
