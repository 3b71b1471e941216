// Typed errors of on-device update.
import Diagnostics

/// Why an update cannot run or a model cannot be updated. Every message names the model, the
/// layer (or feature, or setting), the rule that failed and what to do.
public enum TrainingError: Error, Equatable, CustomStringConvertible {
    /// The model is not updatable at all (`Model.isUpdatable` false, or a kind without updates).
    case notUpdatable(model: String, reason: String)
    /// The update description breaks one of Core ML's rules (UpdatableNeuralNetworkValidator):
    /// `layer` names the layer or loss layer (empty when the rule is about the whole model).
    /// `cause`: the underlying error (the `CoreMLFormatError` of unreadable update parameters),
    /// kept as a value (issue 13); `rule` is then empty or says what was being done.
    case invalidUpdateDescription(model: String, layer: String, rule: String, cause: DiagnosticCause? = nil)
    /// A graph node on the path from an updatable layer to the loss has no backward rule.
    case unsupportedLayer(model: String, node: String, op: String, reason: String)
    /// A training example is missing a feature or has one of the wrong type or size.
    case invalidExample(model: String, example: Int, feature: String, reason: String)
    /// An update setting (epochs, learning rate, …) is outside what the model allows.
    case invalidParameter(model: String, parameter: String, reason: String)
    /// The training data cannot be read (file, folder or format).
    case invalidTrainingData(source: String, reason: String)
    /// The update was cancelled (`UpdateTask.cancel()`).
    case cancelled(model: String)
    /// Training produced a non-finite loss or weight.
    case diverged(model: String, epoch: Int, reason: String)

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        switch self {
        case let .notUpdatable(m, r):
            return "\(m): the model cannot be updated: \(r)"
        case let .invalidUpdateDescription(m, l, r, cause):
            let d = includingCause ? cause.appended(to: r) : r
            return "\(m): invalid update description" + (l.isEmpty ? "" : " at layer '\(l)'") + (d.isEmpty ? "" : ": " + d)
        case let .unsupportedLayer(m, n, op, r):
            return "\(m): node '\(n)' (\(op)) cannot be trained: \(r)"
        case let .invalidExample(m, i, f, r):
            return "\(m): training example \(i), feature '\(f)': \(r)"
        case let .invalidParameter(m, p, r):
            return "\(m): update parameter \(p): \(r)"
        case let .invalidTrainingData(s, r):
            return "training data \(s): \(r)"
        case let .cancelled(m):
            return "\(m): the update was cancelled"
        case let .diverged(m, e, r):
            return "\(m): training diverged in epoch \(e + 1): \(r); lower the learning rate (--learning-rate)"
        }
    }
}
