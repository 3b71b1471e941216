// MARK: errors (issue 13): the MLPasses errors in the one error model.
import Diagnostics

extension QuantizationError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .invalidBits, .invalidArgument: return .usage
        case .fp16Overflow, .nonFiniteWeight: return .numericCheckFailed
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .fp16Overflow(node, _, _, _), let .nonFiniteWeight(node, _, _, _): return DiagnosticLocation(.node, node)
        default: return nil
        }
    }
}

extension MILCompressionError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .invalidModel: return .inputFile
        case .unsupported: return .unsupportedModel
        }
    }
}
