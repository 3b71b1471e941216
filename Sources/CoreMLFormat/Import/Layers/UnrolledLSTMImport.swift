// uniDirectionalLSTM configurations the IR's recurrent op cannot express — peephole connections,
// a coupled input and forget gate — in EXACT networks ([Seq, B, I, 1, 1] blobs, so the number of
// steps is known at import): the recurrence unrolled into IR ops, one group of nodes per step,
// following LSTMParams' formulas in NeuralNetwork.proto:
//   i = f(Wi x + Ri h + pi ⊙ c + bi), f' = f(Wf x + Rf h + pf ⊙ c + bf) (coupled: f' = 1 − i),
//   z = g(Wz x + Rz h + bz), c = f' ⊙ c + i ⊙ z clipped to ±cellClipThreshold,
//   o = f(Wo x + Ro h + po ⊙ c + bo), h = h(c) ⊙ o,
// with forgetBias adding 1 to bf and every gate pre-activation clipped to [−50, 50] (as Core ML's
// comment on LSTM says activations are). Outputs as the recurrent layers in ExactMapping.swift.
import MLGraph

extension LayerImporter {
    /// Whether a uniDirectionalLSTM needs the unrolled form (and the network allows it).
    static func needsUnrolledLSTM(_ l: Spec.NeuralNetworkLayer.Layer) -> Bool {
        guard case let .uniDirectionalLSTM(p) = l, let lp = p.params else { return false }
        return lp.hasPeepholeVectors || lp.coupledInputAndForgetGate
    }

    func unrolledLSTM(_ p: Spec.UniDirectionalLSTMLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer) throws -> [String] {
        let name = layer.name
        guard let x0 = ins.first, x0 != RecurrentImport.absentState else { throw LayerImportFailure("has no sequence input") }
        let s = b.shape(x0)
        guard s.count == 5, s[3] == 1, s[4] == 1, s.allSatisfy({ $0 > 0 }) else {
            throw LayerImportFailure("recurrent layers read a sequence [Seq, Batch, C, 1, 1], found shape \(s)")
        }
        let (steps, batch) = (s[0], s[1])
        let inputSize = try Checked.int(p.inputVectorSize, "inputVectorSize"), units = try Checked.int(p.outputVectorSize, "outputVectorSize", in: 1...Node.maxCountAttribute)
        guard inputSize == s[2] else { throw LayerImportFailure("has inputVectorSize \(inputSize) but its input has \(s[2]) channels") }
        guard steps <= 4096 else { throw LayerImportFailure("unrolling \(steps) steps is too many (at most 4096)") }
        let lp = p.params ?? Spec.LSTMParams()
        guard let w = p.weightParams else { throw LayerImportFailure("has no weights") }
        let acts = try RecurrentImport.activations(p.activations, defaults: [.sigmoid, .tanh, .tanh], what: "LSTM")
        let kernel = try RecurrentImport.stack([(w.inputGateWeightMatrix, "input gate weight"), (w.forgetGateWeightMatrix, "forget gate weight"),
                                                (w.blockInputWeightMatrix, "block input weight"), (w.outputGateWeightMatrix, "output gate weight")],
                                               rows: units, cols: inputSize)
        let recurrent = try RecurrentImport.stack([(w.inputGateRecursionMatrix, "input gate recursion"), (w.forgetGateRecursionMatrix, "forget gate recursion"),
                                                   (w.blockInputRecursionMatrix, "block input recursion"), (w.outputGateRecursionMatrix, "output gate recursion")],
                                                  rows: units, cols: units)
        var bias = [Float](repeating: 0, count: 4 * units)
        if lp.hasBiasVectors {
            bias = try RecurrentImport.stack([(w.inputGateBiasVector, "input gate bias"), (w.forgetGateBiasVector, "forget gate bias"),
                                              (w.blockInputBiasVector, "block input bias"), (w.outputGateBiasVector, "output gate bias")],
                                             rows: units, cols: nil).floats()
        }
        if lp.forgetBias { for k in units..<(2 * units) { bias[k] += 1 } }
        func peephole(_ v: Spec.WeightParams?, _ what: String) throws -> ConstantTensor? {
            lp.hasPeepholeVectors ? try WeightImport.constant(v, shape: [units], what: what) : nil
        }
        let pi = try peephole(w.inputGatePeepholeVector, "input gate peephole")
        let pf = try peephole(w.forgetGatePeepholeVector, "forget gate peephole")
        let po = try peephole(w.outputGatePeepholeVector, "output gate peephole")
        let clipValue = lp.cellClipThreshold > 0 ? lp.cellClipThreshold : 50_000

        func e(_ suffix: String, _ op: Op, _ xs: [String], weights: [String: ConstantTensor] = [:], output: String? = nil) throws -> String {
            try b.emit("\(name)__\(suffix)", op, xs, output: output, weights: weights)
        }
        let seq = try e("steps", .reshapeND(shape: [steps, batch, inputSize]), [x0])
        let proj = try e("input_projection", .dense(DenseAttributes(outputChannels: 4 * units)), [seq],
                         weights: ["weight": kernel, "bias": ConstantTensor(shape: [4 * units], floats: bias)])
        func state(_ i: Int, _ what: String) throws -> String {
            if i < ins.count, ins[i] != RecurrentImport.absentState {
                return try e("\(what)0", .reshapeND(shape: [batch, units]), [ins[i]])
            }
            return try e("\(what)0", .constant, [], weights: ["value": ConstantTensor(shape: [batch, units], floats: [Float](repeating: 0, count: batch * units))])
        }
        var h = try state(1, "h"), c = try state(2, "c")
        var ys: [String] = []
        let order = p.reverseInput ? Array((0..<steps).reversed()) : Array(0..<steps)
        for (k, t) in order.enumerated() {
            let tag = "t\(k)"
            let xt = try e(tag + "_x", .sliceByIndex(SliceByIndexAttributes(begin: [t, 0, 0], end: [t + 1, 0, 0], stride: [1, 1, 1],
                                                                            beginMask: [false, true, true], endMask: [false, true, true],
                                                                            squeezeMask: [true, false, false])), [proj])
            let rh = try e(tag + "_recurrent", .dense(DenseAttributes(outputChannels: 4 * units)), [h], weights: ["weight": recurrent])
            let pre = try e(tag + "_pre", .binary(.add), [xt, rh])
            let g = try b.emitMulti("\(name)__\(tag)_gates", .split(SplitAttributes(axis: -1, numSplits: 4)), [pre],
                                    outputs: ["i", "f", "z", "o"].map { "\(name)__\(tag)_\($0)_pre" })
            func gate(_ x: String, peep: ConstantTensor?, cell: String, _ act: Activation, _ g: String) throws -> String {
                var v = x
                if let peep {
                    let pc = try e("\(tag)_\(g)_peephole", .binary(.mul), [cell], weights: ["y": peep])
                    v = try e("\(tag)_\(g)_with_peephole", .binary(.add), [v, pc])
                }
                v = try e("\(tag)_\(g)_clipped", .clip(alpha: -50, beta: 50), [v])
                return try e("\(tag)_\(g)", .activation(act), [v])
            }
            let i = try gate(g[0], peep: pi, cell: c, acts[0], "i")
            let z = try gate(g[2], peep: nil, cell: c, acts[1], "z")
            let f = lp.coupledInputAndForgetGate
                ? try e(tag + "_f", .activation(.linear(alpha: -1, beta: 1)), [i])
                : try gate(g[1], peep: pf, cell: c, acts[0], "f")
            let kept = try e(tag + "_kept", .binary(.mul), [f, c])
            let added = try e(tag + "_added", .binary(.mul), [i, z])
            let sum = try e(tag + "_cell", .binary(.add), [kept, added])
            c = try e(tag + "_cell_clipped", .clip(alpha: -clipValue, beta: clipValue), [sum])
            let o = try gate(g[3], peep: po, cell: c, acts[0], "o")
            let hc = try e(tag + "_cell_activation", .activation(acts[2]), [c])
            h = try e(tag + "_h", .binary(.mul), [hc, o])
            ys.append(h)
        }
        var outs: [String] = []
        if lp.sequenceOutput {
            let st = try e("sequence", .stack(axis: 0), ys)
            outs.append(try e("y", .reshapeND(shape: [steps, batch, units, 1, 1]), [st]))
        } else {
            outs.append(try e("y", .reshapeND(shape: [1, batch, units, 1, 1]), [h]))
        }
        guard (1...3).contains(layer.output.count) else { throw LayerImportFailure("has \(layer.output.count) outputs; a uniDirectionalLSTM gives 1 to 3") }
        if layer.output.count > 1 { outs.append(try e("h_out", .reshapeND(shape: [1, batch, units, 1, 1]), [h])) }
        if layer.output.count > 2 { outs.append(try e("c_out", .reshapeND(shape: [1, batch, units, 1, 1]), [c])) }
        if lp.cellClipThreshold > 0 && lp.cellClipThreshold < 50_000 { b.warnings.append("LSTM '\(name)': cell clipped to ±\(lp.cellClipThreshold) (unrolled)") }
        return outs
    }
}
