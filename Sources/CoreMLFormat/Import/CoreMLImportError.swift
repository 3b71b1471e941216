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
        /// What is unsupported or wrong, and what to do about it when something can be done.
        public var reason: String

        /// A problem with `layer` of `type`.
        public init(layer: String, type: String, reason: String) {
            self.layer = layer; self.type = type; self.reason = reason
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
    /// input shape Core ML does not allow, an output no layer produces, …).
    case invalidModel(file: String, message: String)

    /// The problems of `.unsupportedLayers` (empty for the other cases).
    public var problems: [LayerProblem] {
        if case let .unsupportedLayers(_, p) = self { return p }
        return []
    }

    /// The file named by the error.
    public var file: String {
        switch self {
        case let .unsupportedModelType(f, _, _), let .unsupportedLayers(f, _), let .invalidModel(f, _): return f
        }
    }

    /// The message: the file, what cannot be imported, and (for layers) one line per layer.
    public var description: String {
        switch self {
        case let .unsupportedModelType(file, kind, message):
            return "\(file): cannot import a Core ML \(kind) model: \(message)"
        case let .unsupportedLayers(file, problems):
            let lines = problems.map { "  - \($0)" }.joined(separator: "\n")
            let n = problems.count
            return "\(file): \(n) layer\(n == 1 ? "" : "s") cannot be imported into mlconv's graph:\n\(lines)"
        case let .invalidModel(file, message):
            return "\(file): invalid Core ML neural network: \(message)"
        }
    }
}
