// MARK: errors (issue 13): the CoreMLFormat errors in the one error model.
import AtomicFile
import Diagnostics

extension CoreMLFormatError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case let .unreadable(_, _, cause?) where cause.error is AtomicFileError:
            return .io  // `Spec.Model.write(toFile:)` reports AtomicFile failures as .unreadable
        case let .unreadable(_, reason, _) where CoreMLFormatError.isWriteFailure(reason):
            return .io
        case .unreadable, .notAModel, .invalidPackage, .invalidValue: return .inputFile
        case .cannotEncode: return .internal
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .unreadable(f, _, _), let .notAModel(f, _, _), let .invalidPackage(f, _, _), let .invalidValue(f, _, _): return f
        case .cannotEncode: return nil
        }
    }
    public var diagnosticExpected: String? {
        if case let .invalidPackage(_, e, _) = self { return e }
        return nil
    }
    public var diagnosticFound: String? {
        switch self {
        case let .invalidPackage(_, _, f), let .notAModel(_, _, f): return f
        default: return nil
        }
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        if case let .unreadable(_, _, cause) = self { return cause.asCauses }
        return []
    }
}

extension CoreMLImportError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .unsupportedModelType, .unsupportedLayers: return .unsupportedModel
        case .invalidModel: return .inputFile
        }
    }
    public var diagnosticFile: String? {
        switch self {
        case let .unsupportedModelType(f, _, _), let .unsupportedLayers(f, _), let .invalidModel(f, _, _): return f
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        if case let .unsupportedLayers(_, p) = self, p.count == 1 { return DiagnosticLocation(.layer, p[0].layer) }
        return nil
    }
    /// The `description`, without the underlying error's text where `diagnosticCauses` lists it.
    public var diagnosticSummary: String { text(includingCause: false) }
    /// `invalidModel`'s cause; the cause of the only layer problem. With several problems each
    /// cause's text stays on its layer's line (the values are in `problems[i].cause`).
    public var diagnosticCauses: [any Error] {
        switch self {
        case let .invalidModel(_, _, cause): return cause.asCauses
        case let .unsupportedLayers(_, p) where p.count == 1: return p[0].cause.asCauses
        default: return []
        }
    }
}

extension CoreMLExportError: MLConvDiagnostic {
    /// The graph uses something the chosen Core ML format cannot express.
    public var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
}

extension MILBlobError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .inputFile }
}

extension MLProgramExportError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .cannotWrite: return .io
        case .unsupportedBlobDataType, .unsupportedOp, .unsupportedTarget: return .unsupportedModel
        case .blobValueOutOfRange, .invalidGraph, .invalidCompression: return .internal
        }
    }
    public var diagnosticLocation: DiagnosticLocation? {
        if case let .unsupportedOp(node, _, _) = self { return DiagnosticLocation(.node, node) }
        return nil
    }
    /// The `description` without the underlying error's text (printed on a "caused by:" line).
    public var diagnosticSummary: String { text(includingCause: false) }
    public var diagnosticCauses: [any Error] {
        if case let .cannotWrite(_, _, cause) = self { return cause.asCauses }
        return []
    }
}

extension CoreMLFormatError {
    /// Whether `reason` is an `AtomicFileError.reason` ("cannot <operation> …").
    static func isWriteFailure(_ reason: String) -> Bool {
        let ops: [AtomicFileError.Operation] = [.createTemporary, .write, .sync, .close, .rename]
        return ops.contains { reason.hasPrefix("cannot \($0.rawValue)") }
    }
}
