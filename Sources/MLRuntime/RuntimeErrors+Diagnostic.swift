// MARK: errors (issue 13): the MLRuntime errors in the one error model.
import AtomicFile
import Diagnostics

extension RuntimeError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .unsupportedOp, .missingCustomLayer: return .unsupportedModel
        case .missingInput, .unknownInput, .shapeMismatch, .invalidArray, .shapeNotAllowed: return .inputFile
        case .elementTypeMismatch: return .internal
        case .customLayerFailure, .kernelFailure, .shapeResolutionFailed: return .internal
        case .iterationLimitExceeded: return .resourceLimit
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .unsupportedOp(node, _, _), let .customLayerFailure(node, _, _, _), let .kernelFailure(node, _, _),
             let .iterationLimitExceeded(node, _):
            return DiagnosticLocation(.node, node)
        case let .missingInput(name, _), let .unknownInput(name, _): return DiagnosticLocation(.feature, name)
        case let .shapeMismatch(input, _, _), let .shapeNotAllowed(input, _, _, _): return DiagnosticLocation(.feature, input)
        case let .elementTypeMismatch(node, _, _, _, _): return DiagnosticLocation(.node, node)
        default: return nil
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}

extension NPYError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case let .io(_, _, cause?) where cause.error is AtomicFileError: return .io  // writing failed
        case .notNPY, .malformedHeader, .truncated, .io: return .inputFile
        case .unsupportedVersion, .unsupportedDType, .fortranOrder: return .unsupportedModel
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .notNPY(f), let .unsupportedVersion(f, _, _), let .malformedHeader(f, _), let .truncated(f, _, _),
             let .unsupportedDType(f, _), let .fortranOrder(f), let .io(f, _, _):
            return f
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        if case let .io(_, _, cause) = self { return cause.asCauses }
        return []
    }
}

extension CustomLayerError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
}
