// Keras masks (`.sequenceMask`, `.applyMask`, `.recurrent` with `hasMask`) → spec-1 Core ML
// layers. Core ML neural networks have no masking, so:
// - the mask is computed from its source with activation / unary / convolution layers:
//   m = hardSigmoid chain of Σ_features |x − value| (see `lowerSequenceMask`);
// - `.applyMask` is a broadcast multiply;
// - a masked recurrent layer is unrolled per step (like the reset-after GRU): the cell in
//   innerProduct / split / add / multiply / activation layers, then
//   h_t = m_t·h_new + (1 − m_t)·h_{t−1} (c likewise) and the output of a masked step the previous
//   output (zeros before the first unmasked step) — or zeros inside Bidirectional with
//   return_sequences — exactly as `MLRuntime`'s reference recurrent kernel defines masking.
//
// Layout: the mask [N, T] is a rank-2 IR tensor, i.e. a [T, 1, 1] blob (steps on C); step t of
// it is a channel slice [1, 1, 1] that broadcasts against a [U, 1, 1] state.
import MLGraph

extension ExportWriter {
    /// Factor of each hard-sigmoid layer of the mask chain (fp16-representable, so the chain is
    /// safe on fp16 devices), and the chain length: Σ|x − value| ≥ 1e-16 gives 1, 0 gives 0.
    static let maskGain: Float = 1e4
    static let maskChainLength = 4

    // MARK: - sequenceMask / applyMask

    /// `.sequenceMask(value: v)` of x [N, T] or [N, T, D] → mask [N, T] (blob [T, 1, 1]):
    /// d = x − v (linear), |d| (unary abs), Σ over the features (1×1 convolution of ones, rank 3
    /// only), then `maskChainLength` hardSigmoid(α = 1e4, β = 0) = min(max(1e4·s, 0), 1) layers.
    /// Exact (0/1 as Keras' `any(x ≠ v)`) whenever the features of a step are all equal to v, or
    /// their |x − v| sum to ≥ 1e-16; a step whose only differences are smaller gets a fractional
    /// mask (NaN features: NaN).
    mutating func lowerSequenceMask(_ node: Node, value: Float) {
        guard let x = types[node.inputs[0]], x.rank == 2 || x.rank == 3 else {
            fail(node, "mask of shape \(formatShape(types[node.inputs[0]]?.shape ?? [])): the .mlmodel mask is computed for (N, T) or (N, T, D) inputs only",
                 "Flatten the features of each step before Masking.")
            return
        }
        let input = blob(node.inputs[0]), out = blob(node.outputs[0])
        func b(_ what: String) -> String { tempBlob("\(out)__\(what)") }
        func l(_ what: String) -> String { freshLayerName("\(node.name)__\(what)") }
        var current = input
        if value != 0 {
            let d = b("minus_value")
            emit(l("minus_value"), [current], [d], Self.act(.linear(alpha: 1, beta: -value)))
            current = d
        }
        let a = b("abs")
        emit(l("abs"), [current], [a], Self.unary(.abs))
        current = a
        let t = x.shape[1]
        if x.rank == 3 {
            let dIn = x.shape[2]
            let s = b("sum")
            emit(l("sum"), [current], [s], .convolution(Spec.ConvolutionLayerParams(
                outputChannels: 1, kernelChannels: UInt64(dIn), nGroups: 1, kernelSize: [1, 1], stride: [1, 1],
                dilationFactor: [1, 1], padding: Self.convPadding(.valid), hasBias: false,
                weights: Spec.WeightParams([Float](repeating: 1, count: dIn)), bias: nil)))
            current = s
        }
        let onH = x.rank == 3 && t > 1
        for k in 0..<Self.maskChainLength {
            let last = k == Self.maskChainLength - 1
            let next = last && !onH ? out : b("step\(k)")
            emit(k == 0 ? node.name : l("step\(k)"), [current], [next], Self.act(.sigmoidHard(alpha: Self.maskGain, beta: 0)))
            current = next
        }
        if onH {
            // [1, T, 1] (steps on H) → [T, 1, 1], the layout of an [N, T] tensor; the H copy is reused.
            emit(l("to_channels"), [current], [out], .permute(axis: [0, 2, 1, 3]))
            recurrentState.maskOnH[out] = current
        }
    }

    /// The mask blob [T, 1, 1] as [1, T, 1] (steps on H), to broadcast against [D, T, 1].
    mutating func maskOnH(_ mask: String, steps t: Int, layerName: String) -> String {
        if t == 1 { return mask }
        if let m = recurrentState.maskOnH[mask] { return m }
        let m = tempBlob("\(mask)__on_h")
        emit(freshLayerName(layerName), [mask], [m], .permute(axis: [0, 2, 1, 3]))
        recurrentState.maskOnH[mask] = m
        return m
    }

    /// `.applyMask`: x [N, T] or [N, T, D] times mask [N, T] (classic multiply broadcasting [1, T, 1]).
    mutating func lowerApplyMask(_ node: Node) {
        guard let x = types[node.inputs[0]], x.rank == 2 || x.rank == 3 else {
            fail(node, "applyMask on shape \(formatShape(types[node.inputs[0]]?.shape ?? [])): only (N, T) and (N, T, D) are written",
                 "Flatten the features of each step first.")
            return
        }
        let xb = blob(node.inputs[0]), out = blob(node.outputs[0])
        let mask = blob(node.inputs[1])
        let m = x.rank == 3 ? maskOnH(mask, steps: x.shape[1], layerName: "\(node.name)__mask_on_h") : mask
        emit(node.name, [xb, m], [out], .multiply(alpha: 0))
    }

    /// Step `t` ([1, 1, 1]) of the mask blob [T, 1, 1], shared between layers.
    mutating func maskStep(_ mask: String, _ t: Int, steps: Int) -> (m: String, oneMinus: String) {
        if let s = recurrentState.maskSteps[mask]?[t] { return s }
        var m = mask
        if steps > 1 {
            m = tempBlob("\(mask)__t\(t)")
            emit(freshLayerName("\(mask)__t\(t)"), [mask], [m], .slice(Spec.SliceLayerParams(
                startIndex: Int64(t), endIndex: Int64(t + 1), stride: 1, axis: .channelAxis)))
        }
        let om = tempBlob("\(mask)__t\(t)_one_minus")
        emit(freshLayerName("\(mask)__t\(t)_one_minus"), [m], [om], Self.act(.linear(alpha: -1, beta: 1)))
        recurrentState.maskSteps[mask, default: [:]][t] = (m, om)
        return (m, om)
    }

    // MARK: - Masked recurrent layers, unrolled

    /// A masked recurrent layer (any kind, direction, merge; initial / returned states) unrolled
    /// into spec-1 layers, following `ReferenceRecurrent` step for step.
    mutating func lowerMaskedRecurrent(_ node: Node, _ a: RecurrentAttributes, _ x: TensorType) {
        let t = x.shape[1], d = x.shape[2], u = a.units
        let sc = a.kind.stateCount
        guard node.inputs.count == 1 + (a.initialStates ? sc * a.directions : 0) + 1 else {
            fail(node, "masked recurrent node with \(node.inputs.count) inputs", "Report this as a bug.")
            return
        }
        let xBlob = blob(node.inputs[0]), out = blob(node.outputs[0])
        let mask = blob(node.inputs[node.inputs.count - 1])
        let zeroOutputForMask = a.bidirectional != nil && a.returnSequences
        var perDirection: [(outputs: [String], finals: [String])] = []
        for dir in 0..<a.directions {
            let suffix = dir == 0 ? "" : "_backward"
            let initial: [String]? = a.initialStates ? (0..<sc).map { blob(node.inputs[1 + dir * sc + $0]) } : nil
            guard let r = unrollMasked(node, a, suffix: suffix, tag: dir == 0 ? "" : "_backward", input: xBlob, mask: mask,
                                       steps: t, inputSize: d, units: u, reverse: dir == 1 ? !a.goBackwards : a.goBackwards,
                                       initial: initial, zeroOutputForMask: zeroOutputForMask) else { return }
            perDirection.append(r)
        }
        if a.returnState {
            for (dir, r) in perDirection.enumerated() {
                for (s, f) in r.finals.enumerated() {
                    emit(freshLayerName("\(node.name)__state\(dir)_\(s)"), [f], [blob(node.outputs[1 + dir * sc + s])],
                         Self.act(.linear(alpha: 1, beta: 0)))
                }
            }
        }
        var ys: [String] = []
        for (dir, r) in perDirection.enumerated() {
            let y = a.directions == 1 ? out : tempBlob("\(out)__\(dir == 0 ? "forward" : "backward")")
            if a.returnSequences {
                // Processing order for one direction (Keras keeps go_backwards sequences reversed);
                // the backward direction of a Bidirectional layer is aligned with the input.
                let ordered = dir == 1 ? Array(r.outputs.reversed()) : r.outputs
                if ordered.count == 1 {
                    emit(freshLayerName("\(node.name)__output\(dir)"), ordered, [y], Self.act(.linear(alpha: 1, beta: 0)))
                } else {
                    let cat = tempBlob("\(y)__steps")
                    emit(freshLayerName("\(node.name)__steps\(dir)"), ordered, [cat], .concat(sequenceConcat: false))
                    emit(freshLayerName("\(node.name)__sequence\(dir)"), [cat], [y], .reshape(Spec.ReshapeLayerParams(
                        targetShape: [Int64(u), Int64(t), 1], mode: .channelLast)))
                }
            } else {
                emit(freshLayerName("\(node.name)__output\(dir)"), [r.outputs.last!], [y], Self.act(.linear(alpha: 1, beta: 0)))
            }
            ys.append(y)
        }
        if let merge = a.bidirectional {
            mergeDirections(merge, ys[0], ys[1], out: out, layerName: freshLayerName("\(node.name)__merge"))
        }
        notes.append("node '\(node.name)': masked \(a.kind.rawValue) unrolled over \(t) steps into classic layers "
            + "(Core ML recurrent layers cannot skip masked steps)")
    }

    /// One direction of a masked recurrent layer; returns each step's output (processing order)
    /// and the final states (h, then c for LSTM).
    mutating func unrollMasked(_ node: Node, _ a: RecurrentAttributes, suffix: String, tag: String, input: String, mask: String,
                               steps t: Int, inputSize d: Int, units u: Int, reverse: Bool, initial: [String]?,
                               zeroOutputForMask: Bool) -> (outputs: [String], finals: [String])? {
        guard let wc = node.weights["kernel" + suffix], let rc = node.weights["recurrentKernel" + suffix] else {
            fail(node, "missing weight 'kernel\(suffix)' or 'recurrentKernel\(suffix)'", "Check the graph.")
            return nil
        }
        let g = a.kind.gateCount, gu = g * u
        let base = "\(node.name)\(tag)"
        let bias = node.weights["bias" + suffix]?.floats() ?? [Float](repeating: 0, count: gu)
        let rb = node.weights["recurrentBias" + suffix]?.floats() ?? [Float](repeating: 0, count: gu)
        let rk = rc.floats()
        // The recurrent bias folds into the input projection, except the GRU candidate's with
        // reset_after (inside r ⊙ (R_h h + rb_h)).
        let gruAfter = a.kind == .gru && a.resetAfter
        let gruBefore = a.kind == .gru && !a.resetAfter
        var xb = bias
        for i in 0..<gu where !(gruAfter && i >= 2 * u) { xb[i] += rb[i] }
        let rbh = gruAfter ? Array(rb[(2 * u)..<gu]) : []
        let hasRbh = rbh.contains { $0 != 0 }
        let hasXBias = xb.contains { $0 != 0 }

        let xp = tempBlob("\(base)__x_proj")
        emit(freshLayerName("\(base)__x_proj"), [input], [xp], .convolution(Spec.ConvolutionLayerParams(
            outputChannels: UInt64(gu), kernelChannels: UInt64(d), nGroups: 1, kernelSize: [1, 1], stride: [1, 1],
            dilationFactor: [1, 1], padding: Self.convPadding(.valid), hasBias: hasXBias, weights: Spec.WeightParams(wc.floats()),
            bias: hasXBias ? Spec.WeightParams(xb) : nil)))

        var h: String? = initial?[0]
        var c: String? = a.kind == .lstm ? initial?[1] : nil
        // The previous output, when it can differ from h (initial states given): zeros (nil) at first.
        var previousOutput: String? = nil
        let separateOutput = initial != nil && !zeroOutputForMask
        var outs: [String] = []
        for step in 0..<t {
            let ti = reverse ? t - 1 - step : step
            let p = "\(base)__t\(ti)"
            func blob(_ what: String) -> String { tempBlob("\(p)_\(what)") }
            func layer(_ what: String) -> String { freshLayerName("\(p)_\(what)") }
            func actv(_ f: Activation, _ i: String, _ o: String) { lowerActivation(f, node: node, input: i, output: o, layerName: freshLayerName(o)) }
            var xt = xp
            if t > 1 {
                xt = blob("x")
                emit(layer("x"), [xp], [xt], .slice(Spec.SliceLayerParams(startIndex: Int64(ti), endIndex: Int64(ti + 1), stride: 1, axis: .heightAxis)))
            }
            let xs = (0..<g).map { blob("x\($0)") }
            if g > 1 { emit(layer("x_split"), [xt], xs, .split(nOutputs: UInt64(g))) }
            let xg = g > 1 ? xs : [xt]
            // Pre-activations per gate: x_k (+ (R h)_k).
            var pre = xg
            var hh: String? = nil  // GRU reset_after: R_h h + rb_h
            if let hPrev = h {
                if gruBefore {
                    // z, r from R_zr h; the candidate's recurrent term from R_h (r ⊙ h) below.
                    let hp = blob("rh_zr"), hz = blob("hz"), hr = blob("hr")
                    emit(layer("recurrent_zr"), [hPrev], [hp], .innerProduct(Spec.InnerProductLayerParams(
                        inputChannels: UInt64(u), outputChannels: UInt64(2 * u), hasBias: false,
                        weights: Spec.WeightParams(Array(rk[0..<(2 * u * u)])), bias: nil)))
                    emit(layer("h_split"), [hp], [hz, hr], .split(nOutputs: 2))
                    for (k, r) in [hz, hr].enumerated() {
                        let s = blob("pre\(k)")
                        emit(layer("pre\(k)"), [xg[k], r], [s], .add(alpha: 0))
                        pre[k] = s
                    }
                } else {
                    let hp = blob("rh_all")
                    var rbias = [Float](repeating: 0, count: gu)
                    if gruAfter { for i in 0..<u { rbias[2 * u + i] = rbh[i] } }
                    let withBias = gruAfter && hasRbh
                    emit(layer("recurrent"), [hPrev], [hp], .innerProduct(Spec.InnerProductLayerParams(
                        inputChannels: UInt64(u), outputChannels: UInt64(gu), hasBias: withBias, weights: Spec.WeightParams(rk),
                        bias: withBias ? Spec.WeightParams(rbias) : nil)))
                    let hs = g > 1 ? (0..<g).map { blob("h\($0)") } : [hp]
                    if g > 1 { emit(layer("h_split"), [hp], hs, .split(nOutputs: UInt64(g))) }
                    for k in 0..<g {
                        if gruAfter && k == 2 { hh = hs[2]; continue }
                        let s = blob("pre\(k)")
                        emit(layer("pre\(k)"), [xg[k], hs[k]], [s], .add(alpha: 0))
                        pre[k] = s
                    }
                }
            }
            let hNew = blob("h_new")
            var cNew: String? = nil
            switch a.kind {
            case .simpleRNN:
                actv(a.activation, pre[0], hNew)
            case .lstm:
                let i = blob("i"), f = blob("f"), cc = blob("cc"), o = blob("o")
                actv(a.recurrentActivation, pre[0], i)
                actv(a.recurrentActivation, pre[3], o)
                actv(a.activation, pre[2], cc)
                let ic = blob("i_cc"), cn = blob("c_new")
                emit(layer("i_cc"), [i, cc], [ic], .multiply(alpha: 0))
                if let cPrev = c {
                    actv(a.recurrentActivation, pre[1], f)
                    let fc = blob("f_c")
                    emit(layer("f_c"), [f, cPrev], [fc], .multiply(alpha: 0))
                    emit(layer("c_new"), [fc, ic], [cn], .add(alpha: 0))
                } else {
                    emit(layer("c_new"), [ic], [cn], Self.act(.linear(alpha: 1, beta: 0)))
                }
                let ac = blob("act_c")
                actv(a.activation, cn, ac)
                emit(layer("h_new"), [o, ac], [hNew], .multiply(alpha: 0))
                cNew = cn
            case .gru:
                let z = blob("z"), r = blob("r"), n = blob("n")
                actv(a.recurrentActivation, pre[0], z)
                var candidatePre = xg[2]
                if let hPrev = h {
                    actv(a.recurrentActivation, pre[1], r)
                    let rterm = blob("r_term")
                    if gruAfter {
                        emit(layer("r_term"), [r, hh!], [rterm], .multiply(alpha: 0))
                    } else {
                        let rh = blob("r_h")
                        emit(layer("r_h"), [r, hPrev], [rh], .multiply(alpha: 0))
                        emit(layer("r_term"), [rh], [rterm], .innerProduct(Spec.InnerProductLayerParams(
                            inputChannels: UInt64(u), outputChannels: UInt64(u), hasBias: false,
                            weights: Spec.WeightParams(Array(rk[(2 * u * u)..<(3 * u * u)])), bias: nil)))
                    }
                    candidatePre = blob("n_pre")
                    emit(layer("n_pre"), [xg[2], rterm], [candidatePre], .add(alpha: 0))
                } else if gruAfter && hasRbh {
                    // Zero state: r ⊙ (R_h·0 + rb_h) = r ⊙ rb_h.
                    actv(a.recurrentActivation, xg[1], r)
                    let rterm = blob("r_term")
                    emit(layer("r_term"), [r], [rterm], .scale(Spec.ScaleLayerParams(shapeScale: [UInt64(u)], scale: Spec.WeightParams(rbh))))
                    candidatePre = blob("n_pre")
                    emit(layer("n_pre"), [xg[2], rterm], [candidatePre], .add(alpha: 0))
                }
                actv(a.activation, candidatePre, n)
                let oneMinusZ = blob("one_minus_z"), zn = blob("one_minus_z_n")
                emit(layer("one_minus_z"), [z], [oneMinusZ], Self.act(.linear(alpha: -1, beta: 1)))
                if let hPrev = h {
                    // h' = z ⊙ h + (1 − z) ⊙ n
                    let zh = blob("z_h")
                    emit(layer("z_h"), [z, hPrev], [zh], .multiply(alpha: 0))
                    emit(layer("one_minus_z_n"), [oneMinusZ, n], [zn], .multiply(alpha: 0))
                    emit(layer("h_new"), [zh, zn], [hNew], .add(alpha: 0))
                } else {
                    emit(layer("h_new"), [oneMinusZ, n], [hNew], .multiply(alpha: 0))
                }
            }
            // Masked update: s_t = m·s_new + (1 − m)·s_{t−1} (s_{t−1} = 0: m·s_new).
            let (m, om) = maskStep(mask, ti, steps: t)
            func masked(_ new: String, _ old: String?, _ what: String) -> String {
                let o = blob(what), mn = blob("\(what)_m_new")
                if let old {
                    let ko = blob("\(what)_keep_old")
                    emit(layer("\(what)_m_new"), [new, m], [mn], .multiply(alpha: 0))
                    emit(layer("\(what)_keep_old"), [old, om], [ko], .multiply(alpha: 0))
                    emit(layer(what), [mn, ko], [o], .add(alpha: 0))
                } else {
                    emit(layer(what), [new, m], [o], .multiply(alpha: 0))
                }
                return o
            }
            let hT = masked(hNew, h, "h")
            if let cNew { c = masked(cNew, c, "c") }
            let output: String
            if zeroOutputForMask {
                output = blob("y")
                emit(layer("y"), [hNew, m], [output], .multiply(alpha: 0))
            } else if separateOutput {
                output = masked(hNew, previousOutput, "y")
                previousOutput = output
            } else {
                output = hT  // zero initial state: the output always equals h
            }
            h = hT
            outs.append(output)
        }
        if t == 0 { return nil }
        return (outs, a.kind == .lstm ? [h!, c!] : [h!])
    }
}
