import Diagnostics

/// Why a Core ML model could not be imported into the graph IR (`CoreMLImporter`).
///
/// Every case names the file. Layer problems are collected over the whole network before the
/// importer throws, so one error lists every layer that needs work.
public enum CoreMLImportError: Error, Equatable, CustomStringConvertible, Sendable {
    /// One layer the importer cannot express in the IR (unsupported type or configuration) or
    /// that is inconsistent (wrong weight count, unknown input blob, impossible shape).
    public struct LayerProblem: Equatable, Sendable, CustomStringConvertible {
        /// The Core ML layer name.
        public var layer: String
        /// Apple's layer type name, e.g. "convolution", "uniDirectionalLSTM", "custom(Swish)".
        public var type: String
        /// What is unsupported or wrong, and what to do about it when something can be done;
        /// followed by the text of `cause` when there is one.
        public var reason: String
        /// The underlying error (the IR's `GraphError` for a converted node it rejects, …), kept
        /// as a value (issue 13).
        public var cause: DiagnosticCause?

        /// A problem with `layer` of `type`: `reason`, caused by `cause` (whose text is appended
        /// to `reason`).
        public init(layer: String, type: String, reason: String, cause: (any Error)? = nil) {
            self.layer = layer; self.type = type
            self.cause = cause.map(DiagnosticCause.init)
            self.reason = self.cause.appended(to: reason)
        }

        /// `reason` without the cause's text.
        var ownReason: String {
            guard let c = cause else { return reason }
            if reason == c.text { return "" }
            return reason.hasSuffix(": " + c.text) ? String(reason.dropLast(c.text.count + 2)) : reason
        }

        /// `layer 'name' (type): reason`.
        public var description: String { "layer '\(layer)' (\(type)): \(reason)" }
    }

    /// The model is not a neural network (`neuralNetwork`, `neuralNetworkClassifier` or
    /// `neuralNetworkRegressor`); `kind` is Apple's model type name (e.g. "mlProgram").
    case unsupportedModelType(file: String, kind: String, message: String)
    /// One or more layers cannot be imported; every problem of the network is listed.
    case unsupportedLayers(file: String, problems: [LayerProblem])
    /// The model's description or structure is inconsistent (a feature without a type, an
    /// input shape Core ML does not allow, an output no layer produces, …). `cause`: the
    /// underlying error (a `CoreMLFormatError` reading the program, the IR's `GraphError` when
    /// the imported graph does not verify), kept as a value.
    case invalidModel(file: String, message: String, cause: DiagnosticCause? = nil)

    /// The problems of `.unsupportedLayers` (empty for the other cases).
    public var problems: [LayerProblem] {
        if case let .unsupportedLayers(_, p) = self { return p }
        return []
    }

    /// The file named by the error.
    public var file: String {
        switch self {
        case let .unsupportedModelType(f, _, _), let .unsupportedLayers(f, _), let .invalidModel(f, _, _): return f
        }
    }

    /// The message: the file, what cannot be imported, and (for layers) one line per layer.
    public var description: String { text(includingCause: true) }

    /// The message; without `includingCause`, the underlying error's text is left out where the
    /// error lists the cause in `diagnosticCauses` (`invalidModel`, a single layer problem).
    func text(includingCause: Bool) -> String {
        switch self {
        case let .unsupportedModelType(file, kind, message):
            return "\(file): cannot import a Core ML \(kind) model: \(message)"
        case let .unsupportedLayers(file, problems):
            let lines = problems.map { p in
                !includingCause && problems.count == 1 ? "  - layer '\(p.layer)' (\(p.type))" + (p.ownReason.isEmpty ? "" : ": " + p.ownReason) : "  - \(p)"
            }.joined(separator: "\n")
            let n = problems.count
            return "\(file): \(n) layer\(n == 1 ? "" : "s") cannot be imported into mlconv's graph:\n\(lines)"
        case let .invalidModel(file, message, cause):
            let detail = includingCause ? cause.appended(to: message) : message
            return "\(file): invalid Core ML neural network\(detail.isEmpty ? "" : ": " + detail)"
        }
    }
}
