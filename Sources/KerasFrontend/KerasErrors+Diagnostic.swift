// MARK: errors (issue 13): the KerasFrontend errors in the one error model.
import Diagnostics

extension KerasConversionError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .unsupportedLayers, .unsupportedConfiguration, .unknownInputShape:
            return .unsupportedModel
        case .notKerasFile, .invalidArchitecture, .invalidLayerConfig, .missingWeight, .weightShapeMismatch,
             .weightLayerCountMismatch, .danglingInput, .missingInputs, .invalidTensorReference, .invalidArchive:
            return .inputFile
        case let .hdf5(_, cause):
            return cause.diagnosticCategory  // input file; resource limit for a refused allocation
        case .weightsOnlyWithoutArchitecture, .unmatchedHooks:
            return .usage
        case .invalidHookResult:
            return .unsupportedModel
        case .invalidGraph:
            return .internal
        }
    }
    public var diagnosticFile: String? { file }
    public var diagnosticLocation: DiagnosticLocation? {
        switch self {
        case let .unsupportedConfiguration(_, layer, _, _, _), let .invalidLayerConfig(_, layer, _, _, _, _),
             let .missingWeight(_, layer, _, _, _), let .weightShapeMismatch(_, layer, _, _, _, _, _),
             let .danglingInput(_, layer, _, _), let .missingInputs(_, layer, _, _, _),
             let .invalidTensorReference(_, layer, _, _, _), let .invalidHookResult(_, layer, _, _, _):
            return DiagnosticLocation(.layer, layer)
        case let .invalidGraph(_, layer?, _, _, _): return DiagnosticLocation(.layer, layer)
        case let .unsupportedLayers(_, layers) where layers.count == 1: return DiagnosticLocation(.layer, layers[0].name)
        case let .unknownInputShape(_, input, _): return DiagnosticLocation(.input, input)
        default: return nil
        }
    }
    public var diagnosticExpected: String? {
        switch self {
        case let .invalidLayerConfig(_, _, _, _, e, _), let .missingWeight(_, _, _, e, _), let .invalidTensorReference(_, _, _, e, _):
            return e
        case let .weightShapeMismatch(_, _, _, _, e, _, _): return "(" + e.map(String.init).joined(separator: ", ") + ")"
        case let .missingInputs(_, _, _, e, _): return "\(e) input tensor(s)"
        default: return nil
        }
    }
    public var diagnosticFound: String? {
        switch self {
        case let .invalidLayerConfig(_, _, _, _, _, f), let .missingWeight(_, _, _, _, f), let .invalidTensorReference(_, _, _, _, f):
            return f
        case let .weightShapeMismatch(_, _, _, _, _, f, _): return "(" + f.map(String.init).joined(separator: ", ") + ")"
        case let .missingInputs(_, _, _, _, f): return "\(f) input tensor(s)"
        default: return nil
        }
    }
    public var diagnosticHint: String? {
        switch self {
        case let .unsupportedConfiguration(_, _, _, _, h), let .weightShapeMismatch(_, _, _, _, _, _, h),
             let .invalidArchive(_, _, _, h, _):
            return h
        default: return nil
        }
    }
    // MARK: errors (issue 13): nested causes
    /// The `description` without the underlying error's text, which the renderer prints as a
    /// "caused by:" line of its own.
    public var diagnosticSummary: String { text(includingCause: false) }
    /// The underlying error (`cause`), kept as a value.
    public var diagnosticCauses: [any Error] { cause.map { [$0] } ?? [] }
}

extension CustomLayerLoweringError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .doesNotFit, .unsupported: return .unsupportedModel
        case .unmatched: return .usage
        }
    }
}

extension KerasHookSpecError: MLConvDiagnostic {
    /// A hooks file or `--lower` / `--custom-layer` value that cannot be parsed.
    public var diagnosticCategory: DiagnosticCategory { .usage }
    public var diagnosticSummary: String { ownMessage }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}

extension KerasJSONError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .inputFile }
}

extension LambdaDecodingError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
}

extension PythonLoweringFailure: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
    public var diagnosticSummary: String { ownReason }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}

extension PythonExpressionFailure: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
    public var diagnosticSummary: String { ownReason }
    public var diagnosticCauses: [any Error] { cause.asCauses }
}
