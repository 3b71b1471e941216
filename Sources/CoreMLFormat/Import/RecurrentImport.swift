// Core ML recurrent layers (uniDirectionalLSTM, biDirectionalLSTM, gru, simpleRecurrent), the
// embedding of an index sequence, and permutes that move the Seq axis → IR `.recurrent` /
// `.embedding` nodes on sequence tensors.
//
// Sequence tensors. CoreMLImporter's blobs are NHWC [1, H, W, C] or vectors [1, C] (Seq = 1). A
// blob whose Seq axis holds S > 1 steps of vectors ([S, Batch, C, 1, 1], what recurrent layers
// read and write) is the IR tensor [1, S, C]; a one-step sequence stays a vector [1, C]. Only the
// layers here (and elementwise ones that keep shapes) read sequence tensors; a classic layer that
// cannot take one fails with the IR's shape error rather than computing something else. The
// sequence length is fixed at import: a model input declared [D] (Core ML lets the caller pass
// any number of steps on Seq at run time) is a one-step sequence.
//
// Recurrent state. Core ML adds optional model inputs for the initial states of recurrent layers
// (coremltools: `<layer>_h_in`, `<layer>_c_in`, `…_rev`), zeros when the caller leaves them out.
// The IR's initial-state inputs are required tensors and graph inputs cannot be optional, so an
// optional input that only recurrent layers read as a state is omitted: the node then has no
// initial states, i.e. zeros, which is Core ML's behaviour when the feature is absent. Each
// omission is listed in the warnings and in the metadata entry `mlconv.omittedOptionalInputs`.
// (Keeping them would need `ValueInfo`/`FeatureDescription` to carry an "optional, default
// zeros" flag that `MLRuntime.Model` honours by allocating zeros for a missing feed.) Required
// state inputs (e.g. a Create ML activity classifier's `stateIn`, sliced into h and c) are
// ordinary inputs. State outputs (`<layer>_h_out`, …) are the node's state outputs.
import MLGraph

/// Recurrent-layer import rules shared by `CoreMLImporter` and `LayerImporter`.
enum RecurrentImport {
    /// The IR tensor standing for an omitted optional state input (no tensor: zeros).
    static let absentState = ""

    /// Whether `l` is one of Core ML's recurrent layers.
    static func isRecurrent(_ l: Spec.NeuralNetworkLayer.Layer) -> Bool {
        switch l {
        case .simpleRecurrent, .gru, .uniDirectionalLSTM, .biDirectionalLSTM: return true
        default: return false
        }
    }

    /// Optional multi-array inputs that only recurrent layers read, and only as initial states
    /// (input positions ≥ 1): these are omitted (see the file comment).
    static func omittedStateInputs(_ desc: Spec.ModelDescription, layers: [Spec.NeuralNetworkLayer]) -> Set<String> {
        var result = Set<String>()
        for f in desc.input {
            guard let t = f.type, t.isOptional, case .multiArray = t.kind else { continue }
            var used = false, onlyStates = true
            for l in layers {
                for (i, name) in l.input.enumerated() where name == f.name {
                    used = true
                    if i == 0 || !isRecurrent(l.layer) { onlyStates = false }
                }
            }
            if used && onlyStates { result.insert(f.name) }
        }
        return result
    }

    /// Records the omission of optional state input `f` (blob → `absentState`).
    static func omit(_ f: Spec.FeatureDescription, builder b: ImportBuilder, description: inout ModelDescription) {
        b.blobs[f.name] = absentState
        b.warnings.append("input '\(f.name)' is an optional recurrent-state input: omitted, so the state starts at zeros "
            + "(Core ML's value when the feature is absent); mlconv's graph inputs cannot be optional")
        let key = "mlconv.omittedOptionalInputs"
        let old = description.metadata.userDefined[key]
        description.metadata.userDefined[key] = (old.map { $0 + "," } ?? "") + f.name
    }

    /// Core ML recurrent activation → IR activation (nil when the IR has none).
    static func activation(_ p: Spec.ActivationParams) -> Activation? {
        switch p.nonlinearity {
        case let .linear(alpha, beta): return .linear(alpha: alpha, beta: beta)
        case .relu: return .relu
        case .tanh: return .tanh
        case .sigmoid: return .sigmoid
        case let .sigmoidHard(alpha, beta): return .hardSigmoid(alpha: alpha, beta: beta)
        case let .scaledTanh(alpha, beta) where alpha == 1 && beta == 1: return .tanh
        case let .leakyReLU(alpha): return .leakyReLU(alpha: alpha)
        case let .elu(alpha): return .elu(alpha: alpha)
        case .softsign: return .softsign
        case .softplus: return .softplus
        default: return nil
        }
    }

    /// `list`, or `defaults` when the layer leaves its activations unset.
    static func activations(_ list: [Spec.ActivationParams], defaults: [Activation], what: String) throws -> [Activation] {
        if list.isEmpty { return defaults }
        guard list.count == defaults.count else {
            throw LayerImportFailure("has \(list.count) \(what) activations; expected \(defaults.count)")
        }
        return try list.map { p in
            guard let a = activation(p) else {
                throw LayerImportFailure("recurrent activation \(p.nonlinearity.name) is not expressible in mlconv's IR")
            }
            return a
        }
    }

    static func lstmActivations(_ list: [Spec.ActivationParams]) throws -> (gate: Activation, cell: Activation) {
        let a = try activations(list, defaults: [.sigmoid, .tanh, .tanh], what: "LSTM")
        guard a[1] == a[2] else {
            throw LayerImportFailure("uses different cell-input (\(a[1])) and cell-output (\(a[2])) activations; mlconv's IR (as Keras) has one")
        }
        return (a[0], a[1])
    }

    /// Why a recurrent layer can never be imported (shape-independent), or nil.
    static func unsupportedReason(_ l: Spec.NeuralNetworkLayer.Layer) -> String? {
        do {
            switch l {
            case let .uniDirectionalLSTM(p):
                if let r = lstmParamsReason(p.params) { return r }
                _ = try lstmActivations(p.activations)
            case let .biDirectionalLSTM(p):
                if let r = lstmParamsReason(p.params) { return r }
                guard p.weightParams.count == 2 else { return "has \(p.weightParams.count) weight sets; a bidirectional LSTM needs 2 (forward, backward)" }
                let f = try lstmActivations(p.activationsForwardLSTM), b = try lstmActivations(p.activationsBackwardLSTM)
                guard f == b else { return "forward and backward LSTMs use different activations; mlconv's IR has one set for both" }
            case let .gru(p):
                _ = try activations(p.activations, defaults: [.sigmoid, .tanh], what: "GRU")
            case let .simpleRecurrent(p):
                if let a = p.activation, activation(a) == nil {
                    return "recurrent activation \(a.nonlinearity.name) is not expressible in mlconv's IR"
                }
            default: return nil
            }
        } catch let e as LayerImportFailure {
            return e.reason
        } catch {
            return "\(error)"
        }
        return nil
    }

    static func lstmParamsReason(_ p: Spec.LSTMParams?) -> String? {
        guard let p else { return nil }
        if p.hasPeepholeVectors { return "LSTM peephole connections are not expressible in mlconv's IR (Keras LSTMs have none)" }
        if p.coupledInputAndForgetGate { return "LSTM with a coupled input and forget gate is not expressible in mlconv's IR" }
        return nil
    }

    /// Stacks per-gate blocks (each [rows] or [rows, cols]) into one constant [gates·rows(, cols)],
    /// in the given order. All-fp16 blocks stay fp16; anything else becomes float32.
    static func stack(_ parts: [(Spec.WeightParams?, String)], rows: Int, cols: Int?) throws -> ConstantTensor {
        let shape = cols.map { [rows, $0] } ?? [rows]
        let blocks = try parts.map { try WeightImport.constant($0.0, shape: shape, what: $0.1) }
        let total = cols.map { [rows * parts.count, $0] } ?? [rows * parts.count]
        if blocks.allSatisfy({ if case .float16 = $0.encoding { return true } else { return false } }) {
            var bytes: [UInt8] = []
            for c in blocks { bytes += Array(c.storage.buffer.prefix(c.encodedByteCount)) }
            return try ConstantTensor(shape: total, encoding: .float16, storage: .copying(bytes))
        }
        return ConstantTensor(shape: total, floats: blocks.flatMap { $0.floats() })
    }
}

extension ImportBuilder {
    /// Whether `tensor` is a sequence tensor [1, S, C] (S > 1 steps on Core ML's Seq axis).
    func isSequence(_ tensor: String) -> Bool { shape(tensor).count == 3 }

    /// `tensor` as a sequence [1, S, C] for a recurrent layer: itself, or a one-step sequence
    /// [1, 1, C] reshaped from a [C, 1, 1] blob (named `<base>__steps`).
    /// - Throws: `LayerImportFailure` for blobs with H or W > 1.
    func asSequence(_ tensor: String, base: String) throws -> String {
        if isSequence(tensor) { return tensor }
        let d = chw(tensor)
        guard d.h == 1, d.w == 1 else {
            throw LayerImportFailure("reads a [C, H, W] = [\(d.c), \(d.h), \(d.w)] blob; recurrent layers take a sequence of vectors "
                + "([Seq, Batch, C, 1, 1])")
        }
        return try emit(base + "__steps", .reshape(targetShape: [1, d.c]), [tensor])
    }
}

extension LayerImporter {
    // MARK: - Recurrent layers

    /// uniDirectionalLSTM / biDirectionalLSTM / gru / simpleRecurrent → one `.recurrent` node
    /// named after the layer, its outputs named after the layer's output blobs.
    ///
    /// Weights: Core ML's per-gate matrices [U, D] / [U, U] and vectors [U] are stacked in Keras'
    /// gate order (LSTM [i, f, z(c), o] from Core ML's input / forget / block-input / output
    /// fields; GRU update, reset, output = z, r, h; reset before the recurrent matmul, i.e.
    /// `resetAfter` false). The LSTM forget bias is used as stored, also with `forgetBias` set
    /// (coremltools' NumPy reference and onnxmltools' converter use it as is: the +1 is already
    /// in the trained bias), which is recorded in the warnings. Inputs: the sequence, then 0 or all
    /// initial states (an omitted optional one becomes zeros); outputs: y, then 0 or all final
    /// states (`returnState`). A sequence output of one step is the vector [1, U].
    ///
    /// Divergences (documented, not errors): Core ML clips the gate pre-activations to [−50, 50]
    /// and the LSTM cell to `cellClipThreshold`; the IR does not (only unbounded activations can
    /// tell).
    func recurrent(_ layer: Spec.NeuralNetworkLayer, _ ins: [String]) throws -> [String] {
        if let r = RecurrentImport.unsupportedReason(layer.layer) { throw LayerImportFailure(r) }
        let name = layer.name
        guard let x0 = ins.first, x0 != RecurrentImport.absentState else { throw LayerImportFailure("has no sequence input") }
        let x = try b.asSequence(x0, base: name)
        let steps = b.shape(x)[1], d = b.shape(x)[2]
        var attrs: RecurrentAttributes
        var weights: [String: ConstantTensor] = [:]
        let inputSize: Int, units: Int
        func checkSizes(_ i: UInt64, _ o: UInt64) throws -> (Int, Int) {
            guard try Checked.int(i, "inputVectorSize") == d else { throw LayerImportFailure("has inputVectorSize \(i) but its input has \(d) channels") }
            guard o > 0 else { throw LayerImportFailure("has outputVectorSize 0") }
            return (d, try Checked.int(o, "outputVectorSize"))
        }
        switch layer.layer {
        case let .uniDirectionalLSTM(p):
            (inputSize, units) = try checkSizes(p.inputVectorSize, p.outputVectorSize)
            let acts = try RecurrentImport.lstmActivations(p.activations)
            guard let w = p.weightParams else { throw LayerImportFailure("has no weights") }
            weights = try lstmWeights(w, params: p.params, inputSize: inputSize, units: units, suffix: "")
            attrs = RecurrentAttributes(kind: .lstm, units: units, activation: acts.cell, recurrentActivation: acts.gate,
                                        returnSequences: p.params?.sequenceOutput ?? false, goBackwards: p.reverseInput)
            lstmWarnings(p.params, layer: name)
        case let .biDirectionalLSTM(p):
            (inputSize, units) = try checkSizes(p.inputVectorSize, p.outputVectorSize)
            let acts = try RecurrentImport.lstmActivations(p.activationsForwardLSTM)
            for (k, w) in p.weightParams.enumerated() {
                weights.merge(try lstmWeights(w, params: p.params, inputSize: inputSize, units: units, suffix: k == 0 ? "" : "_backward")) { a, _ in a }
            }
            attrs = RecurrentAttributes(kind: .lstm, units: units, activation: acts.cell, recurrentActivation: acts.gate,
                                        returnSequences: p.params?.sequenceOutput ?? false, bidirectional: .concat)
            lstmWarnings(p.params, layer: name)
        case let .gru(p):
            (inputSize, units) = try checkSizes(p.inputVectorSize, p.outputVectorSize)
            let acts = try RecurrentImport.activations(p.activations, defaults: [.sigmoid, .tanh], what: "GRU")
            let g = [(p.updateGateWeightMatrix, "update gate weight"), (p.resetGateWeightMatrix, "reset gate weight"),
                     (p.outputGateWeightMatrix, "output gate weight")]
            let r = [(p.updateGateRecursionMatrix, "update gate recursion"), (p.resetGateRecursionMatrix, "reset gate recursion"),
                     (p.outputGateRecursionMatrix, "output gate recursion")]
            weights["kernel"] = try RecurrentImport.stack(g, rows: units, cols: inputSize)
            weights["recurrentKernel"] = try RecurrentImport.stack(r, rows: units, cols: units)
            if p.hasBiasVectors {
                weights["bias"] = try RecurrentImport.stack([(p.updateGateBiasVector, "update gate bias"), (p.resetGateBiasVector, "reset gate bias"),
                                                             (p.outputGateBiasVector, "output gate bias")], rows: units, cols: nil)
            }
            attrs = RecurrentAttributes(kind: .gru, units: units, activation: acts[1], recurrentActivation: acts[0],
                                        returnSequences: p.sequenceOutput, goBackwards: p.reverseInput, resetAfter: false)
        case let .simpleRecurrent(p):
            (inputSize, units) = try checkSizes(p.inputVectorSize, p.outputVectorSize)
            let act = try p.activation.map { a -> Activation in
                guard let v = RecurrentImport.activation(a) else { throw LayerImportFailure("activation \(a.nonlinearity.name) is not expressible") }
                return v
            } ?? .tanh
            weights["kernel"] = try RecurrentImport.stack([(p.weightMatrix, "weight")], rows: units, cols: inputSize)
            weights["recurrentKernel"] = try RecurrentImport.stack([(p.recursionMatrix, "recursion")], rows: units, cols: units)
            if p.hasBiasVector {
                weights["bias"] = try RecurrentImport.stack([(p.biasVector, "bias")], rows: units, cols: nil)
            }
            attrs = RecurrentAttributes(kind: .simpleRNN, units: units, activation: act, recurrentActivation: .sigmoid,
                                        returnSequences: p.sequenceOutput, goBackwards: p.reverseInput)
        default:
            throw LayerImportFailure("is not a recurrent layer")
        }

        // Initial states: none, or all (an omitted optional one is zeros).
        let nStates = attrs.kind.stateCount * attrs.directions
        let stateIns = Array(ins.dropFirst())
        guard stateIns.isEmpty || stateIns.count == nStates else {
            throw LayerImportFailure("has \(stateIns.count) state input(s); a \(layer.layer.typeName) takes none or \(nStates)")
        }
        var irIns = [x]
        if stateIns.contains(where: { $0 != RecurrentImport.absentState }) {
            attrs.initialStates = true
            for (i, s) in stateIns.enumerated() {
                if s == RecurrentImport.absentState {
                    irIns.append(try b.constantTensor([Float](repeating: 0, count: units), c: units, h: 1, w: 1, anchor: x, base: "\(name)__zero_state\(i)"))
                } else {
                    let v = try b.toVector(s, base: "\(name)__state\(i)")
                    guard b.chw(v).c == units else {
                        throw LayerImportFailure("state input \(i + 1) ('\(layer.input[i + 1])') has \(b.chw(v).c) channels; the layer has \(units) units")
                    }
                    irIns.append(v)
                }
            }
        }

        // Outputs: y, then the final states when any is read.
        guard layer.output.count >= 1, layer.output.count <= 1 + nStates else {
            throw LayerImportFailure("has \(layer.output.count) output blobs; a \(layer.layer.typeName) gives 1 + \(nStates) at most")
        }
        attrs.returnState = layer.output.count > 1
        var outNames = layer.output
        if attrs.returnState {
            while outNames.count < 1 + nStates { outNames.append("\(name)__state\(outNames.count - 1)") }
        }
        var outs = try b.emitMulti(name, .recurrent(attrs), irIns, outputs: outNames, weights: weights)
        outs = Array(outs.prefix(layer.output.count))
        if attrs.returnSequences && steps == 1 {
            let u = b.shape(outs[0])[2]
            outs[0] = try b.emit(name + "__vector", .reshape(targetShape: [u]), [outs[0]])
        }
        return outs
    }

    /// The IR weights of one LSTM direction: Core ML's gate matrices stacked in Keras' order
    /// [i, f, z(c), o] (Core ML's own order is [i, f, o, z]).
    private func lstmWeights(_ w: Spec.LSTMWeightParams, params: Spec.LSTMParams?, inputSize: Int, units: Int,
                             suffix: String) throws -> [String: ConstantTensor] {
        let dir = suffix.isEmpty ? "" : " (backward)"
        var out: [String: ConstantTensor] = [:]
        out["kernel" + suffix] = try RecurrentImport.stack([
            (w.inputGateWeightMatrix, "input gate weight\(dir)"), (w.forgetGateWeightMatrix, "forget gate weight\(dir)"),
            (w.blockInputWeightMatrix, "block input weight\(dir)"), (w.outputGateWeightMatrix, "output gate weight\(dir)"),
        ], rows: units, cols: inputSize)
        out["recurrentKernel" + suffix] = try RecurrentImport.stack([
            (w.inputGateRecursionMatrix, "input gate recursion\(dir)"), (w.forgetGateRecursionMatrix, "forget gate recursion\(dir)"),
            (w.blockInputRecursionMatrix, "block input recursion\(dir)"), (w.outputGateRecursionMatrix, "output gate recursion\(dir)"),
        ], rows: units, cols: units)
        if params?.hasBiasVectors ?? false {
            out["bias" + suffix] = try RecurrentImport.stack([
                (w.inputGateBiasVector, "input gate bias\(dir)"), (w.forgetGateBiasVector, "forget gate bias\(dir)"),
                (w.blockInputBiasVector, "block input bias\(dir)"), (w.outputGateBiasVector, "output gate bias\(dir)"),
            ], rows: units, cols: nil)
        }
        return out
    }

    private func lstmWarnings(_ p: Spec.LSTMParams?, layer: String) {
        guard let p else { return }
        if p.forgetBias {
            b.warnings.append("LSTM '\(layer)' sets forgetBias: the stored forget-gate bias is used as is, as coremltools' NumPy reference "
                + "(which its tests compare with Core ML) and onnxmltools' Core ML → ONNX converter do (the +1 is already in the trained bias)")
        }
        if p.cellClipThreshold > 0 && p.cellClipThreshold < 50000 {
            b.warnings.append("LSTM '\(layer)' clips its cell state to ±\(p.cellClipThreshold); mlconv's IR does not clip (results differ only where the cell exceeds it)")
        }
    }

    // MARK: - Embedding of a sequence

    /// Embedding of an index sequence [1, L, 1] (L > 1 indices on Seq, one per step): the IR's
    /// embedding on [1, L] gives the sequence [1, L, D]; a bias is a per-channel affine (axis 2).
    func sequenceEmbedding(_ p: Spec.EmbeddingLayerParams, _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        guard s.count == 3, s[2] == 1 else {
            throw LayerImportFailure("expects one index per step ([Seq, Batch, 1, 1, 1]), found \(s.count == 3 ? s[2] : 0) channels")
        }
        let dim = try Checked.int(p.outputChannels, "outputChannels"), vocab = try Checked.int(p.inputDim, "inputDim")
        let w = try WeightImport.constant(p.weights, shape: [dim, vocab], axis: 0, what: "weight")
        let idx = try b.emit(name + "__indices", .reshape(targetShape: [s[1]]), [x])
        if !p.hasBias { return try b.emit(name, .embedding(outputChannels: dim), [idx], output: out, weights: ["weight": w]) }
        let e = try b.emit(name + "__lookup", .embedding(outputChannels: dim), [idx], weights: ["weight": w])
        let bias = try WeightImport.floats(p.bias, count: dim, what: "bias")
        return try b.emit(name, .batchNorm(BatchNormAttributes(axis: 2, epsilon: 0)), [e], output: out, weights: [
            "mean": ConstantTensor(shape: [dim], floats: [Float](repeating: 0, count: dim)),
            "variance": ConstantTensor(shape: [dim], floats: [Float](repeating: 1, count: dim)),
            "beta": ConstantTensor(shape: [dim], floats: bias),
        ])
    }

    // MARK: - Permutes involving the Seq axis

    /// A permute that moves the Seq axis (or permutes a sequence tensor). Core ML numbers the
    /// axes [Seq, C, H, W]; output axis k is input axis `axis[k]`. The IR tensors of blobs are
    /// all row-major over (Seq, H, W, C) with size-1 axes left out (NHWC [1, H, W, C] has Seq = 1,
    /// a sequence [1, S, C] has H = W = 1), so the permute is a reshape when it keeps the order of
    /// the axes longer than 1, else a transpose of those axes between two reshapes. The result
    /// must be an NHWC blob (Seq = 1), a vector, or a sequence of vectors (H = W = 1).
    func sequencePermute(_ axis: [Int], _ x: String, name: String, out: String) throws -> String {
        guard axis.count == 4, axis.sorted() == [0, 1, 2, 3] else {
            throw LayerImportFailure("axis \(axis) is not a permutation of [Seq, C, H, W] = [0, 1, 2, 3]")
        }
        let s = b.shape(x)
        let dims: [Int]  // by Core ML axis: [Seq, C, H, W]
        switch s.count {
        case 2: dims = [1, s[1], 1, 1]
        case 3: dims = [s[1], s[2], 1, 1]
        case 4: dims = [1, s[3], s[1], s[2]]
        default: throw LayerImportFailure("reads a blob of IR shape \(s)")
        }
        let o = axis.map { dims[$0] }
        let outShape: [Int]  // the IR shape without the batch
        if o[0] == 1 {
            outShape = o[2] == 1 && o[3] == 1 ? [o[1]] : [o[2], o[3], o[1]]
        } else if o[2] == 1 && o[3] == 1 {
            outShape = [o[0], o[1]]
        } else {
            throw LayerImportFailure("permute \(axis) of [Seq, C, H, W] = \(dims) gives \(o): a sequence of [C, H, W] images with H or W > 1, "
                + "which mlconv's IR cannot hold (sequences are of vectors)")
        }
        // Memory order (Seq, H, W, C) as Core ML axis numbers.
        let canon = [0, 2, 3, 1]
        let inOrder = canon.filter { dims[$0] > 1 }
        let outOrder = canon.map { axis[$0] }.filter { dims[$0] > 1 }
        var t = x
        if inOrder != outOrder {
            let compact = try b.emit(name + "__compact", .reshape(targetShape: inOrder.map { dims[$0] }), [x])
            let perm = [0] + outOrder.map { inOrder.firstIndex(of: $0)! + 1 }
            t = try b.emit(name + "__transpose", .transpose(perm: perm), [compact])
        }
        return try b.emit(name, .reshape(targetShape: outShape), [t], output: out)
    }
}
