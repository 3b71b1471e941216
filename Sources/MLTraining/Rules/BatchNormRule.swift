// batchnorm in its inference form (IR `batchNorm`): fixed statistics, not updated.
import MLGraph

/// y = γ·(x − μ)/√(σ² + ε) + β along `axis` (γ = 1, β = 0 when absent); the statistics are the
/// layer's constants, so the layer is an affine map per channel and dL/dx = dL/dy·γ/√(σ² + ε).
/// Core ML never updates batchnorm parameters (only convolution and innerProduct are updatable).
enum BatchNormRule: LayerRule {
    static func scaleShift(_ node: Node, _ x: TrainTensor, _ w: [String: [Float]]) throws -> (axis: Int, scale: [Float], shift: [Float]) {
        guard case let .batchNorm(a) = node.op else { throw RuleFailure("is not a batchNorm node") }
        guard a.axis >= 0, a.axis < x.shape.count else { throw RuleFailure("axis \(a.axis) is outside the input shape \(x.shape)") }
        let c = x.shape[a.axis]
        func role(_ r: String, _ d: Float) throws -> [Float] {
            guard let v = w[r] else { return [Float](repeating: d, count: c) }
            guard v.count == c else { throw RuleFailure("\(r) has \(v.count) values for \(c) channels") }
            return v
        }
        let mean = try role("mean", 0), variance = try role("variance", 1), gamma = try role("gamma", 1), beta = try role("beta", 0)
        var scale = [Float](repeating: 0, count: c), shift = [Float](repeating: 0, count: c)
        for i in 0..<c {
            scale[i] = gamma[i] / (variance[i] + a.epsilon).squareRoot()
            shift[i] = beta[i] - scale[i] * mean[i]
        }
        return (a.axis, scale, shift)
    }

    /// Channel index of flat element k.
    static func channelMap(_ shape: [Int], axis: Int) -> (inner: Int, c: Int) {
        (shape[(axis + 1)...].reduce(1, *), shape[axis])
    }

    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let (axis, scale, shift) = try scaleShift(node, x, weights)
        let (inner, c) = channelMap(x.shape, axis: axis)
        var y = x.values
        for k in y.indices {
            let ch = (k / inner) % c
            y[k] = scale[ch] * x.values[k] + shift[ch]
        }
        return TrainTensor(shape: x.shape, values: y)
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        let (axis, scale, _) = try scaleShift(node, x, weights)
        let (inner, c) = channelMap(x.shape, axis: axis)
        var gx = gy.values
        for k in gx.indices { gx[k] *= scale[(k / inner) % c] }
        return Gradients(inputs: [TrainTensor(shape: x.shape, values: gx)])
    }
}
