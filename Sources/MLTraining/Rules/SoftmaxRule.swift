// softmax (IR `softmax`).
import Foundation
import MLGraph

/// Forward y = exp(x − max)/Σ exp(x − max) along `axis`. Backward dL/dx = y ⊙ (dL/dy − Σ dL/dy ⊙ y)
/// along the axis. When a categorical cross-entropy loss reads the softmax, the engine skips
/// this rule and uses the combined gradient y − onehot (see `Loss`), as Core ML pairs them.
enum SoftmaxRule: LayerRule {
    static func layout(_ node: Node, _ x: TrainTensor) throws -> (outer: Int, n: Int, inner: Int) {
        guard case let .softmax(axis0) = node.op else { throw RuleFailure("is not a softmax node") }
        let r = x.shape.count
        let axis = axis0 < 0 ? axis0 + r : axis0
        guard axis >= 0, axis < r else { throw RuleFailure("axis \(axis0) is outside the input shape \(x.shape)") }
        return (x.shape[..<axis].reduce(1, *), x.shape[axis], x.shape[(axis + 1)...].reduce(1, *))
    }

    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let (outer, n, inner) = try layout(node, x)
        var y = x.values
        for o in 0..<outer { for i in 0..<inner {
            let base = o * n * inner + i
            var m = -Float.infinity
            for k in 0..<n { m = max(m, x.values[base + k * inner]) }
            var s: Float = 0
            for k in 0..<n { let e = expf(x.values[base + k * inner] - m); y[base + k * inner] = e; s += e }
            for k in 0..<n { y[base + k * inner] /= s }
        } }
        return TrainTensor(shape: x.shape, values: y)
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output y: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        let (outer, n, inner) = try layout(node, x)
        var g = gy.values
        for o in 0..<outer { for i in 0..<inner {
            let base = o * n * inner + i
            var dot: Float = 0
            for k in 0..<n { dot += gy.values[base + k * inner] * y.values[base + k * inner] }
            for k in 0..<n { let idx = base + k * inner; g[idx] = y.values[idx] * (gy.values[idx] - dot) }
        } }
        return Gradients(inputs: [TrainTensor(shape: x.shape, values: g)])
    }
}
