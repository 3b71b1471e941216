// activation (IR `activation`): ReLU, sigmoid, tanh (and linear) backward; any kind forward.
import MLGraph

/// Forward applies the activation's scalar definition (`Activation.apply`, the reference
/// kernels' formula). Backward, from the saved input x and output y:
/// ReLU dL/dx = dL/dy·[x > 0]; sigmoid dL/dy·y(1 − y); tanh dL/dy·(1 − y²); linear dL/dy·α.
/// Those are the activations Core ML back-propagates (NeuralNetworkValidatorGraph: ReLU,
/// sigmoid, tanh); any other kind is refused on the path to the loss.
enum ActivationRule: LayerRule {
    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        guard case let .activation(a) = node.op else { throw RuleFailure("is not an activation node") }
        return TrainTensor(shape: x.shape, values: x.values.map { a.apply($0) })
    }

    /// Whether backward supports `a`.
    static func isDifferentiable(_ a: Activation) -> Bool {
        switch a {
        case .relu, .sigmoid, .tanh, .linear: return true
        default: return false
        }
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output y: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        guard case let .activation(a) = node.op else { throw RuleFailure("is not an activation node") }
        var g = gy.values
        switch a {
        case .relu: for k in g.indices where !(x.values[k] > 0) { g[k] = 0 }
        case .sigmoid: for k in g.indices { g[k] *= y.values[k] * (1 - y.values[k]) }
        case .tanh: for k in g.indices { g[k] *= 1 - y.values[k] * y.values[k] }
        case let .linear(alpha, _): for k in g.indices { g[k] *= alpha }
        default:
            throw RuleFailure("the \(a) activation has no backward rule; Core ML back-propagates only through ReLU, sigmoid and tanh activations")
        }
        return Gradients(inputs: [TrainTensor(shape: x.shape, values: g)])
    }
}
