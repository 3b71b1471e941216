// innerProduct (IR `dense`): y = x·Wᵀ + b on the last axis.
import MLGraph

/// Forward y[n, o] = Σᵢ x[n, i]·W[o, i] + b[o] (W [Cout, Cin], Core ML's layout).
/// Backward: dL/dx = dL/dy·W, dL/dW = Σₙ dL/dy[n]ᵀ·x[n], dL/db = Σₙ dL/dy[n].
enum DenseRule: LayerRule {
    static func dims(_ node: Node, _ x: TrainTensor, _ w: [String: [Float]]) throws -> (rows: Int, cin: Int, cout: Int, W: [Float]) {
        guard case let .dense(a) = node.op else { throw RuleFailure("is not a dense node") }
        guard a.activation == nil || a.activation == .identity else {
            throw RuleFailure("has a fused activation, which the training engine does not differentiate")
        }
        guard let W = w["weight"] else { throw RuleFailure("has no weight") }
        let cin = x.shape.last ?? 0
        let cout = a.outputChannels
        guard cin > 0, W.count == cout * cin else {
            throw RuleFailure("weight has \(W.count) values; [\(cout), \(cin)] expected")
        }
        return (x.count / cin, cin, cout, W)
    }

    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let (rows, cin, cout, W) = try dims(node, x, weights)
        let b = weights["bias"]
        var y = [Float](repeating: 0, count: rows * cout)
        for r in 0..<rows {
            for o in 0..<cout {
                var s: Float = b?[o] ?? 0
                for i in 0..<cin { s += x.values[r * cin + i] * W[o * cin + i] }
                y[r * cout + o] = s
            }
        }
        return TrainTensor(shape: Array(x.shape.dropLast()) + [cout], values: y)
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput g: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        let (rows, cin, cout, W) = try dims(node, x, weights)
        var result = Gradients(inputs: [nil])
        if needInputs.first == true {
            var gx = [Float](repeating: 0, count: x.count)
            for r in 0..<rows {
                for o in 0..<cout {
                    let go = g.values[r * cout + o]
                    if go == 0 { continue }
                    for i in 0..<cin { gx[r * cin + i] += go * W[o * cin + i] }
                }
            }
            result.inputs[0] = TrainTensor(shape: x.shape, values: gx)
        }
        if needWeights {
            var gW = [Float](repeating: 0, count: W.count)
            var gb = [Float](repeating: 0, count: cout)
            for r in 0..<rows {
                for o in 0..<cout {
                    let go = g.values[r * cout + o]
                    gb[o] += go
                    for i in 0..<cin { gW[o * cin + i] += go * x.values[r * cin + i] }
                }
            }
            result.weights["weight"] = gW
            if weights["bias"] != nil { result.weights["bias"] = gb }
        }
        return result
    }
}
