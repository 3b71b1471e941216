// The two loss layers Core ML trains with (NeuralNetwork.proto `LossLayer`).
import Foundation

/// A loss layer: which graph tensor it reads and how the target is given.
public enum LossFunction: Equatable, Sendable {
    /// −log p[target] per sample (Core ML `CategoricalCrossEntropyLossLayer`); the input must be a
    /// softmax output; the target is a class index (0-based), mapped from the classifier's label.
    case categoricalCrossEntropy
    /// mean over the elements of (input − target)² per sample (Core ML `MeanSquaredErrorLossLayer`).
    case meanSquaredError

    public var name: String {
        switch self {
        case .categoricalCrossEntropy: return "categoricalCrossEntropy"
        case .meanSquaredError: return "meanSquaredError"
        }
    }
}

/// The target of one training example.
enum LossTarget {
    case classIndex(Int)
    case values([Float])
}

/// Loss of a mini-batch and its gradient. The mini-batch loss is the mean of the per-sample
/// losses (so gradients are means over the mini-batch; a smaller last mini-batch is averaged
/// over its own size).
struct LossEvaluation {
    /// Σ of the per-sample losses (the engine divides by the sample count for reporting).
    var sum: Double
    /// dL/d(input), or, for cross-entropy fused with its softmax, dL/d(softmax input) = (p − onehot)/N.
    var gradient: TrainTensor

    /// - Parameters:
    ///   - input: the loss input [N, …] (probabilities for cross-entropy).
    ///   - fusedWithSoftmax: cross-entropy reads a softmax over the last axis: return the gradient
    ///     with respect to the softmax's input (p − onehot)/N, which is exact where the chained
    ///     −1/p form loses precision.
    static func evaluate(_ loss: LossFunction, input: TrainTensor, targets: [LossTarget], fusedWithSoftmax: Bool) throws -> LossEvaluation {
        let n = input.batch
        let per = input.sampleCount
        guard targets.count == n, n > 0 else { throw RuleFailure("\(targets.count) targets for a mini-batch of \(n)") }
        var g = [Float](repeating: 0, count: input.count)
        var sum = 0.0
        switch loss {
        case .categoricalCrossEntropy:
            for (s, t) in targets.enumerated() {
                guard case let .classIndex(k) = t, k >= 0, k < per else {
                    throw RuleFailure("sample \(s): the class index is outside the \(per) probabilities")
                }
                let p = input.values[s * per + k]
                sum += -Foundation.log(Double(max(p, Float.leastNormalMagnitude)))
                if fusedWithSoftmax {
                    for j in 0..<per { g[s * per + j] = input.values[s * per + j] / Float(n) }
                    g[s * per + k] -= 1 / Float(n)
                } else {
                    g[s * per + k] = -1 / (max(p, Float.leastNormalMagnitude) * Float(n))
                }
            }
        case .meanSquaredError:
            for (s, t) in targets.enumerated() {
                guard case let .values(v) = t, v.count == per else {
                    throw RuleFailure("sample \(s): the target has the wrong number of values (\(per) expected)")
                }
                var acc = 0.0
                for j in 0..<per {
                    let d = input.values[s * per + j] - v[j]
                    acc += Double(d) * Double(d)
                    g[s * per + j] = 2 * d / Float(per * n)
                }
                sum += acc / Double(per)
            }
        }
        return LossEvaluation(sum: sum, gradient: TrainTensor(shape: input.shape, values: g))
    }
}
