// MIL lstm (iOS15; forward or bidirectional) → the IR's recurrent op. MIL's x is [T, B, I] and
// its gates are stacked i, f, o, g (coremltools' lstm definition); the IR takes [B, T, I] and
// Keras' order i, f, g, o.
import MLGraph

enum MILRecurrentOps {
    static func activation(_ name: String) throws -> Activation {
        switch name {
        case "sigmoid": return .sigmoid
        case "tanh": return .tanh
        case "relu": return .relu
        case "linear": return .identity
        case "sigmoid_hard", "hard_sigmoid": return .hardSigmoid(alpha: 0.2, beta: 0.5)  // coremltools names it hard_sigmoid (recurrent.py check_activation)
        case "scaled_tanh": return .scaledTanh(alpha: 1, beta: 1)
        default: throw LayerImportFailure("has activation '\(name)', which mlconv's recurrent op does not support")
        }
    }

    /// Rows of a [4H, …] (or [4H]) LSTM weight reordered from MIL's i, f, o, g to i, f, g, o.
    static func reorderLSTM(_ k: MILConst, hidden h: Int) throws -> ConstantTensor {
        guard let rows = k.shape.first, rows == 4 * h else { throw LayerImportFailure("has an LSTM weight of shape \(k.shape); expected \(4 * h) rows") }
        let v = k.floats()
        let per = v.count / rows * h
        let order = [0, 1, 3, 2]
        var out: [Float] = []
        out.reserveCapacity(v.count)
        for g in order { out += v[(g * per)..<((g + 1) * per)] }
        return ConstantTensor(shape: k.shape, floats: out)
    }

    static func lstm(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let xs = c.shape(x)
        guard xs.count == 3 else { throw LayerImportFailure("has an input of rank \(xs.count); expected [T, B, I]") }
        if c.has("peephole") || c.has("peephole_back") { throw LayerImportFailure("uses peephole connections, which mlconv does not support") }
        if c.has("clip") { throw LayerImportFailure("clips its cell state, which mlconv does not support") }
        let direction = try c.string("direction", default: "forward")
        guard direction == "forward" || direction == "bidirectional" else {
            throw LayerImportFailure("runs in direction '\(direction)'; mlconv imports forward and bidirectional lstm")
        }
        let bi = direction == "bidirectional"
        let cellAct = try c.string("cell_activation", default: "tanh"), outAct = try c.string("activation", default: "tanh")
        guard cellAct == outAct else {
            throw LayerImportFailure("has cell_activation \(cellAct) and activation \(outAct); mlconv's recurrent op uses one activation for both")
        }
        let wih = try c.requiredConstant("weight_ih"), whh = try c.requiredConstant("weight_hh")
        guard whh.shape.count == 2 else { throw LayerImportFailure("has weight_hh of shape \(whh.shape)") }
        let h = whh.shape[1]
        var weights = ["kernel": try reorderLSTM(wih, hidden: h), "recurrentKernel": try reorderLSTM(whh, hidden: h)]
        if let bias = try c.constant("bias") { weights["bias"] = try reorderLSTM(bias, hidden: h) }
        if bi {
            weights["kernel_backward"] = try reorderLSTM(try c.requiredConstant("weight_ih_back"), hidden: h)
            weights["recurrentKernel_backward"] = try reorderLSTM(try c.requiredConstant("weight_hh_back"), hidden: h)
            if let bias = try c.constant("bias_back") { weights["bias_backward"] = try reorderLSTM(bias, hidden: h) }
        }
        let sequence = try c.bool("output_sequence", default: false)
        let attrs = RecurrentAttributes(kind: .lstm, units: h, activation: try activation(cellAct),
                                        recurrentActivation: try activation(try c.string("recurrent_activation", default: "sigmoid")),
                                        returnSequences: sequence, returnState: true, bidirectional: bi ? .concat : nil, initialStates: true)
        let xb = try c.helper("batch_first", .transpose(perm: [1, 0, 2]), [x])
        // Initial states [B, H] (bidirectional: [B, 2H], forward then backward).
        func states(_ p: String) throws -> [String] {
            let t = try c.tensor(p)
            if !bi { return [t] }
            return try c.b.emitMulti(c.name + "__" + p + "_split", .split(SplitAttributes(axis: 1, numSplits: 2)), [t],
                                     outputs: [c.name + "__" + p + "_fwd", c.name + "__" + p + "_bwd"])
        }
        let h0 = try states("initial_h"), c0 = try states("initial_c")
        var ins = [xb, h0[0], c0[0]]
        if bi { ins += [h0[1], c0[1]] }
        let outNames = ["y", "h", "c"] + (bi ? ["h_back", "c_back"] : [])
        let outs = try c.b.emitMulti(c.name + "__lstm", .recurrent(attrs), ins, outputs: outNames.map { c.name + "__" + $0 }, weights: weights)
        let y: MILValue
        if sequence {
            y = try c.emit(.transpose(perm: [1, 0, 2]), [outs[0]], output: 0)
        } else {
            y = try c.emit(.expandDims(axes: [0]), [outs[0]], output: 0)
        }
        if !bi {
            return [y, try c.emit(.identity, [outs[1]], output: 1), try c.emit(.identity, [outs[2]], output: 2)]
        }
        return [y, try c.emit(.concat(axis: 1), [outs[1], outs[3]], output: 1), try c.emit(.concat(axis: 1), [outs[2], outs[4]], output: 2)]
    }

    static var mappers: [String: MILOpMapper] { ["lstm": lstm] }
}
