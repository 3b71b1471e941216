// IR `.recurrent` → MIL `lstm` / `gru` / `rnn` (issue 11; coremltools ops/defs/iOS15/recurrent.py).
//
// MIL's recurrent ops take x as [T, B, I] and states as [B, H]; the IR is batch-first. Gate
// blocks are restacked from the IR's (Keras') order to MIL's: LSTM i, f, g, o → i, f, o, g;
// GRU z, r, h → r, o (= h), z — the orders mlconv's MIL importer (MILOpsRecurrent.swift,
// MILOpsMoreA.swift) and coremltools read. A sequence processed from its end (`goBackwards`, and
// the backward half of a Bidirectional layer) is a MIL `reverse` of x along T before a forward op:
// the outputs stay in processing order, which is Keras' `go_backwards`; Bidirectional reverses the
// backward sequence once more so both halves are in time order, then merges them (concat along
// the last axis, add, mul, or add·½), as Keras does. Without initial states the ops start from
// zero states (Keras' default). The last output of a layer without `return_sequences` is the
// final hidden state `h`.
//
// Refused with `MLProgramExportError.unsupportedOp`: masks (`hasMask`), GRU with `reset_after`
// (MIL gru applies the reset gate before the recurrent matmul; Keras' TF2 default is after),
// activations MIL's recurrent ops do not name (they take sigmoid, tanh, relu, linear,
// hard_sigmoid = 0.2·x + 0.5 clipped, scaled_tanh), and go_backwards inside a Bidirectional layer.
import MLGraph

extension MILExportSession {
    /// MIL's name of a recurrent activation, or nil when MIL has none for it.
    static func recurrentActivationName(_ a: Activation) -> String? {
        switch a {
        case .sigmoid: return "sigmoid"
        case .tanh: return "tanh"
        case .relu: return "relu"
        case .hardSigmoid(0.2, 0.5): return "hard_sigmoid"  // coremltools recurrent.py check_activation
        default: return a.isIdentity ? "linear" : nil
        }
    }

    /// Rows of a [gates·H, …] (or [gates·H]) weight restacked so that MIL block g is IR block
    /// `order[g]`.
    static func restack(_ v: [Float], gates: Int, order: [Int]) -> [Float] {
        let per = v.count / gates
        var out: [Float] = []
        out.reserveCapacity(v.count)
        for g in order { out += v[(g * per)..<((g + 1) * per)] }
        return out
    }

    mutating func lowerRecurrent(_ node: Node, _ a: RecurrentAttributes) throws {
        let nm = MILProgramBuilder.sanitize(node.name)
        if a.hasMask { throw unsupported(node, "masked recurrent layers (Masking, mask_zero) have no MIL lowering in mlconv; write an .mlmodel") }
        if a.kind == .gru && a.resetAfter {
            throw unsupported(node, "GRU with reset_after=True (the TF2 default): MIL gru applies the reset gate before the recurrent matmul; "
                + "build the layer with reset_after=False, or write an .mlmodel")
        }
        if a.bidirectional != nil && a.goBackwards { throw unsupported(node, "go_backwards inside a Bidirectional layer") }
        guard let act = Self.recurrentActivationName(a.activation) else {
            throw unsupported(node, "activation \(a.activation): MIL recurrent ops take sigmoid, tanh, relu, linear and hard_sigmoid (0.2·x + 0.5)")
        }
        guard let gateAct = Self.recurrentActivationName(a.recurrentActivation) else {
            throw unsupported(node, "recurrent_activation \(a.recurrentActivation): MIL recurrent ops take sigmoid, tanh, relu, linear and hard_sigmoid (0.2·x + 0.5)")
        }
        let xt = node.inputs[0]
        let xs = try irType(xt).shape
        guard xs.count == 3 else { throw unsupported(node, "input of shape \(xs); expected [N, T, D]") }
        let (n, steps, d) = (xs[0], xs[1], xs[2])
        let h = a.units, gates = a.kind.gateCount
        let sc = try scalar(try irType(xt).elementType, node: node.name)
        let expectedOutputs = 1 + (a.returnState ? a.directions * a.kind.stateCount : 0)
        let expectedInputs = 1 + (a.initialStates ? a.directions * a.kind.stateCount : 0)
        guard node.outputs.count == expectedOutputs, node.inputs.count == expectedInputs else {
            throw unsupported(node, "\(node.inputs.count) inputs and \(node.outputs.count) outputs; expected \(expectedInputs) and \(expectedOutputs)")
        }
        let order: [Int]
        switch a.kind {
        case .lstm: order = [0, 1, 3, 2]
        case .gru: order = [1, 2, 0]
        case .simpleRNN: order = [0]
        }
        let opType = a.kind == .lstm ? "lstm" : a.kind == .gru ? "gru" : "rnn"
        // iOS15 recurrent ops take fp32 only (type domain T = fp32); iOS17's take fp16 too. An
        // fp16 program for iOS15/16 casts around them, as coremltools' fp16 pass does.
        let rc: MILScalar = sc == .float16 && (options.target == .iOS15 || options.target == .iOS16) ? .float32 : sc
        func cast(_ s: inout MILExportSession, _ v: String, _ shape: [Int], to target: MILScalar) -> String {
            let c = s.b.fresh(v + (target == .float32 ? "_to_fp32" : "_to_fp16"))
            return s.b.op("cast", name: c, inputs: [("x", [v]), ("dtype", [s.b.constString(c + "_dtype_0", target == .float32 ? "fp32" : "fp16")])],
                          outputs: [(c, MILProgramBuilder.tensorType(target, shape))])[0]
        }

        // x as [T, B, I].
        let xv = try value(xt, node: node.name)
        let tbi = b.fresh(nm + "_x_time_major" + suffix)
        b.op("transpose", name: tbi, inputs: [("x", [xv]), ("perm", [b.constInts(tbi + "_perm_0", [1, 0, 2])])],
             outputs: [(tbi, MILProgramBuilder.tensorType(sc, [steps, n, d]))])
        let xr = rc == sc ? tbi : cast(&self, tbi, [steps, n, d], to: rc)
        var reversedX: String?
        func reverseT(_ s: inout MILExportSession, _ v: String, _ shape: [Int], _ base: String) -> String {
            let r = s.b.fresh(base + s.suffix)
            return s.b.op("reverse", name: r, inputs: [("x", [v]), ("axes", [s.b.constInts(r + "_axes_0", [0])])],
                          outputs: [(r, MILProgramBuilder.tensorType(rc, shape))])[0]
        }

        var ys: [String] = []       // per direction: [B, T, H] or [B, H]
        var states: [String] = []   // per direction: h (and c)
        for dir in 0..<a.directions {
            let sfx = dir == 0 ? "" : "_backward"
            let reversed = dir == 1 || a.goBackwards
            var x = xr
            if reversed {
                if reversedX == nil { reversedX = reverseT(&self, xr, [steps, n, d], nm + "_x_reversed") }
                x = reversedX ?? xr
            }
            guard let k = node.weights["kernel" + sfx], let r = node.weights["recurrentKernel" + sfx],
                  k.shape == [gates * h, d], r.shape == [gates * h, h] else {
                throw unsupported(node, "weights kernel\(sfx) [\(gates * h), \(d)] and recurrentKernel\(sfx) [\(gates * h), \(h)] are missing or of another shape")
            }
            let wsfx = rc == .float16 ? "_to_fp16" : ""
            let base = nm + sfx
            var ins: [(String, [String])] = [("x", [x])]
            // Initial states: the node's inputs, else zeros.
            for s in 0..<a.kind.stateCount {
                let param = s == 0 ? "initial_h" : "initial_c"
                if a.initialStates {
                    let v = try value(node.inputs[1 + dir * a.kind.stateCount + s], node: node.name)
                    ins.append((param, [rc == sc ? v : cast(&self, v, [n, h], to: rc)]))
                } else {
                    ins.append((param, [b.constFloats(base + "_" + param + wsfx, [Float](repeating: 0, count: n * h), shape: [n, h], as: rc)]))
                }
            }
            ins.append(("weight_ih", [b.constFloats(base + "_weight_ih" + wsfx, Self.restack(k.floats(), gates: gates, order: order), shape: k.shape, as: rc)]))
            ins.append(("weight_hh", [b.constFloats(base + "_weight_hh" + wsfx, Self.restack(r.floats(), gates: gates, order: order), shape: r.shape, as: rc)]))
            var bias = node.weights["bias" + sfx]?.floats()
            if let rb = node.weights["recurrentBias" + sfx]?.floats() {
                // Non-GRU recurrent bias: added outside the nonlinearities, so it sums into bias.
                bias = zip(bias ?? [Float](repeating: 0, count: rb.count), rb).map { $0 + $1 }
            }
            if let bias {
                guard bias.count == gates * h else { throw unsupported(node, "bias\(sfx) of \(bias.count) values; expected \(gates * h)") }
                ins.append(("bias", [b.constFloats(base + "_bias" + wsfx, Self.restack(bias, gates: gates, order: order), shape: [gates * h], as: rc)]))
            }
            ins.append(("direction", [b.constString(base + "_direction_0", "forward")]))
            ins.append(("output_sequence", [b.constBool(base + "_output_sequence_0", a.returnSequences)]))
            if a.kind != .simpleRNN { ins.append(("recurrent_activation", [b.constString(base + "_recurrent_activation_0", gateAct)])) }
            if a.kind == .lstm { ins.append(("cell_activation", [b.constString(base + "_cell_activation_0", act)])) }
            ins.append(("activation", [b.constString(base + "_activation_0", act)]))
            let yName = b.fresh(base + "_" + opType + "_y" + suffix), hName = b.fresh(base + "_" + opType + "_h" + suffix)
            var outs: [(String, Spec.MILSpec.ValueType)] = [(yName, MILProgramBuilder.tensorType(rc, [a.returnSequences ? steps : 1, n, h])),
                                                            (hName, MILProgramBuilder.tensorType(rc, [n, h]))]
            if a.kind == .lstm { let cName = b.fresh(base + "_" + opType + "_c" + suffix); outs.append((cName, MILProgramBuilder.tensorType(rc, [n, h]))) }
            var o = b.op(opType, name: yName, inputs: ins, outputs: outs)
            if rc != sc { for i in 1..<o.count { o[i] = cast(&self, o[i], [n, h], to: sc) } }
            states += o.dropFirst()
            if a.returnSequences {
                var y = o[0]
                if dir == 1 { y = reverseT(&self, y, [steps, n, h], base + "_y_time_order") }
                if rc != sc { y = cast(&self, y, [steps, n, h], to: sc) }
                let bth = b.fresh(base + "_y_batch_major" + suffix)
                ys.append(b.op("transpose", name: bth, inputs: [("x", [y]), ("perm", [b.constInts(bth + "_perm_0", [1, 0, 2])])],
                               outputs: [(bth, MILProgramBuilder.tensorType(sc, [n, steps, h]))])[0])
            } else {
                ys.append(o[1])
            }
        }

        // Merge the directions into the node's first output.
        let out = node.outputs[0]
        let type = try milType(out, node: node.name)
        let name = varName(out)
        if let merge = a.bidirectional, ys.count == 2 {
            switch merge {
            case .concat:
                b.op("concat", name: name, inputs: [("values", ys), ("axis", [b.constInt(nm + "_axis_0", -1)]),
                                                   ("interleave", [b.constBool(nm + "_interleave_0", false)])], outputs: [(name, type)])
            case .sum:
                b.op("add", name: name, inputs: [("x", [ys[0]]), ("y", [ys[1]])], outputs: [(name, type)])
            case .mul:
                b.op("mul", name: name, inputs: [("x", [ys[0]]), ("y", [ys[1]])], outputs: [(name, type)])
            case .ave:
                let s = b.fresh(nm + "_sum" + suffix)
                b.op("add", name: s, inputs: [("x", [ys[0]]), ("y", [ys[1]])], outputs: [(s, type)])
                b.op("mul", name: name, inputs: [("x", [s]), ("y", [floatScalar(nm + "_half", 0.5)])], outputs: [(name, type)])
            }
        } else {
            b.op("identity", name: name, inputs: [("x", [ys[0]])], outputs: [(name, type)])
        }
        irVar[out] = name
        if a.returnState {
            for (t, v) in zip(node.outputs.dropFirst(), states) { irVar[t] = v }
        }
    }
}
