// SGD (with momentum) and Adam, as Core ML's SGDOptimizer and AdamOptimizer describe them.
import Foundation

/// The optimizer and its hyper-parameters (NeuralNetwork.proto `Optimizer`; coremltools'
/// `SgdParams` / `AdamParams`). The mini-batch size is part of `UpdateSettings`.
public enum OptimizerSettings: Equatable, Sendable {
    /// Stochastic gradient descent. With momentum μ > 0 each parameter keeps a velocity:
    /// v ← μ·v + g, w ← w − lr·v (momentum 0: w ← w − lr·g).
    ///
    /// This is the "heavy ball" form of PyTorch's `torch.optim.SGD` and of Metal Performance
    /// Shaders' `MPSNNOptimizerStochasticGradientDescent` (which Core ML trains with on device),
    /// whose velocity is kept pre-multiplied by the learning rate (v' ← μ·v' + lr·g, w ← w − v');
    /// both give identical weights while the learning rate is constant, which it is during one
    /// update. Core ML's documentation (SgdParams) says no more than "momentum factor".
    case sgd(learningRate: Double, momentum: Double)
    /// Adam (Kingma & Ba 2015, the form of their Algorithm 1 with the bias corrections folded
    /// into the step size, as MPSNNOptimizerAdam computes it): at step t (counted over every
    /// mini-batch of the update), m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g²,
    /// w ← w − lr·√(1 − β₂ᵗ)/(1 − β₁ᵗ) · m/(√v + ε).
    case adam(learningRate: Double, beta1: Double, beta2: Double, epsilon: Double)

    public var learningRate: Double {
        switch self {
        case let .sgd(lr, _): return lr
        case let .adam(lr, _, _, _): return lr
        }
    }

    public var name: String {
        switch self {
        case .sgd: return "SGD"
        case .adam: return "Adam"
        }
    }
}

/// Per-parameter optimizer state (velocity, or Adam moments) and the step counter.
final class OptimizerState {
    let settings: OptimizerSettings
    private var first: [String: [Float]] = [:]
    private var second: [String: [Float]] = [:]
    /// Mini-batch steps taken.
    private(set) var step = 0

    init(_ settings: OptimizerSettings) { self.settings = settings }

    /// Starts a new mini-batch step (Adam's t).
    func beginStep() { step += 1 }

    /// Applies one step to the parameter `key` (its gradient `g` is the mini-batch mean).
    func apply(_ key: String, to w: inout [Float], gradient g: [Float]) {
        switch settings {
        case let .sgd(lr, momentum):
            let lrF = Float(lr)
            if momentum == 0 {
                for i in w.indices { w[i] -= lrF * g[i] }
            } else {
                var v = first[key] ?? [Float](repeating: 0, count: w.count)
                let mu = Float(momentum)
                for i in w.indices {
                    v[i] = mu * v[i] + g[i]
                    w[i] -= lrF * v[i]
                }
                first[key] = v
            }
        case let .adam(lr, b1, b2, eps):
            var m = first[key] ?? [Float](repeating: 0, count: w.count)
            var v = second[key] ?? [Float](repeating: 0, count: w.count)
            let t = Double(step)
            let stepSize = Float(lr * (1 - pow(b2, t)).squareRoot() / (1 - pow(b1, t)))
            let (b1f, b2f, epsf) = (Float(b1), Float(b2), Float(eps))
            for i in w.indices {
                m[i] = b1f * m[i] + (1 - b1f) * g[i]
                v[i] = b2f * v[i] + (1 - b2f) * g[i] * g[i]
                w[i] -= stepSize * m[i] / (v[i].squareRoot() + epsf)
            }
            first[key] = m
            second[key] = v
        }
    }
}
