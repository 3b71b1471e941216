// IR sequence nodes (`.recurrent`, `.embedding`, `.sequenceMask`, `.applyMask`) → Core ML
// classic recurrent and embedding layers (spec 1), as coremltools' Keras converter writes them
// (CT@5.2 `_layers2.py`; `../shared/docs/coreml-format-facts.md` §2.13).
//
// Layout. The writer keeps IR [N, S, D] tensors as [D, S, 1] blobs — the steps on H, Seq = 1 —
// so that Conv1D, 1-D pooling, padding and cropping work as on images. Core ML's recurrent and
// embedding layers read the sequence on the Seq axis ([S, Batch, D, 1, 1]). Like the Permute
// layers the Keras converter inserts at 1-D boundaries, a permute [2, 1, 0, 3] (H ↔ Seq, its
// own inverse) goes before each recurrent layer and after each sequence output (none when S = 1,
// where both layouts are the same).
import MLGraph

/// One recurrent-state feature the writer adds to the model description (Core ML's optional
/// state inputs `<layer>_h_in`, … and the state outputs `<layer>_h_out`, …).
struct RecurrentStateFeature {
    /// The feature (and blob) name.
    var name: String
    /// The state size (units); the feature is declared [size].
    var size: Int
    /// The feature's short description.
    var text: String
}

/// The recurrent-state features collected while lowering, appended to the model description
/// after the graph's own inputs and outputs (as `NeuralNetworkBuilder.add_optionals` does).
struct RecurrentStateFeatures {
    /// Optional inputs: initial states, zeros when absent at prediction time.
    var inputs: [RecurrentStateFeature] = []
    /// Final-state outputs.
    var outputs: [RecurrentStateFeature] = []
    /// Blob → its copy with the steps on the Seq axis, so that recurrent layers reading the same
    /// sequence share one permute.
    var seqAxis: [String: String] = [:]
    /// Mask blob [T, 1, 1] → its copy [1, T, 1] (steps on H), shared by the ops it masks.
    var maskOnH: [String: String] = [:]
    /// Mask blob → step → (m_t, 1 − m_t) blobs [1, 1, 1], shared by the unrolled layers.
    var maskSteps: [String: [Int: (m: String, oneMinus: String)]] = [:]
    /// TimeDistributed image tensors (IR [N, T, H, W, C] and the per-step [N·T, H, W, C]) →
    /// their steps stacked on H (see `lowerStepStacked`).
    var stacked: [String: StackedSteps] = [:]
    /// IR tensors [T, D] / [T, 1, D] of per-step vectors held as the [D, T, 1] blob of [1, T, D].
    var stepVectors: Set<String> = []
}

/// Frames of a TimeDistributed image tensor stacked on H: blob [C, T·period, W], step t in rows
/// [t·period, t·period + height); the rows in between (valid-convolution borders) are unused.
struct StackedSteps {
    var steps: Int
    var period: Int
    var height: Int
    /// The stack's blob when it is not the tensor's own (a graph input's reshaped copy).
    var blob: String? = nil
}

extension CoreMLExporter {
    /// How the IR's sequence ops are written (the rows `layerTable` does not list). All need spec 1
    /// only; weights add their own requirement (fp16 → 2).
    public static let sequenceLayerTable: [CoreMLLayerMapping] = [
        .init(irOp: "recurrent lstm", coreML: "uniDirectionalLSTM between permutes [2, 1, 0, 3] (H ↔ Seq)", minimumSpecificationVersion: 1,
              notes: "gates Keras [i, f, c, o] → input/forget/blockInput/output matrices; activations [recurrent, activation, activation]; "
                + "forgetBias false (the trained bias already holds Keras' unit_forget_bias); cellClipThreshold 50000; go_backwards → reverseInput"),
        .init(irOp: "recurrent bidirectional lstm", coreML: "biDirectionalLSTM (+ split and add / multiply / average for sum / mul / ave)",
              minimumSpecificationVersion: 1, notes: "concat is the layer's own output, as the Keras converter writes it"),
        .init(irOp: "recurrent gru (resetAfter false)", coreML: "gru", minimumSpecificationVersion: 1,
              notes: "gates z, r, h → update, reset, output; activations [recurrent, activation]"),
        .init(irOp: "recurrent gru (resetAfter true)", coreML: "unrolled: 1×1 convolution (input projections), then per step slice, split, innerProduct, add, multiply, activation layers",
              minimumSpecificationVersion: 1,
              notes: "Core ML's gru applies the reset gate before the recurrent matmul (Keras reset_after=False); reset_after=True is exact only unrolled, "
                + "O(steps) layers, no optional state features"),
        .init(irOp: "recurrent simpleRNN", coreML: "simpleRecurrent", minimumSpecificationVersion: 1),
        .init(irOp: "recurrent bidirectional gru / simpleRNN", coreML: "two layers (the backward one reverseInput) + slices/concat/reshape reversing the backward sequence + merge",
              minimumSpecificationVersion: 1, notes: "biDirectionalLSTM exists for LSTM only"),
        .init(irOp: "recurrent state features", coreML: "optional inputs <layer>_h_in, <layer>_c_in (…_rev backward), outputs <layer>_h_out, <layer>_c_out",
              minimumSpecificationVersion: 1,
              notes: "added for every Core ML recurrent layer whose IR node has no initial-state inputs / state outputs, as the Keras converter adds them"),
        .init(irOp: "TimeDistributed image layers (transpose / reshape to [N·T, H, W, C] around conv2d, pool2d, activation, flatten; N = 1)",
              coreML: "frames stacked on H: rank-5 input declared [T·H·W·C] (NHWC order), reshaped (CHANNEL_LAST) to [C, T·H, W]; convolution / pooling on the stack; per-step slice + CHANNEL_LAST reshape + concat for Flatten",
              minimumSpecificationVersion: 1,
              notes: "valid (unpadded) convolution and pooling only, with the row stride dividing the per-step row period; transposes and step reshapes write no layer"),
        .init(irOp: "embedding", coreML: "embedding between permutes [1, 0, 2, 3] (C → Seq) and [2, 1, 0, 3] (Seq → H)", minimumSpecificationVersion: 1,
              notes: "weight [outputChannels, inputDim], no bias"),
        .init(irOp: "sequenceMask", coreML: "linear (x − value), unary abs, 1×1 convolution of ones (Σ features), 4 × activation sigmoidHard(α 1e4, β 0), permute",
              minimumSpecificationVersion: 1,
              notes: "mask [N, T] as a [T, 1, 1] blob; exact 0/1 unless a step's Σ|x − value| is non-zero but below 1e-16; inputs (N, T) or (N, T, D) only"),
        .init(irOp: "applyMask", coreML: "multiply by the mask permuted to [1, T, 1]", minimumSpecificationVersion: 1),
        .init(irOp: "recurrent with a mask", coreML: "unrolled: 1×1 convolution (input projections), then per step slice, split, innerProduct, add, multiply, activation layers "
                + "and the masked update s_t = m_t·s_new + (1 − m_t)·s_{t−1}", minimumSpecificationVersion: 1,
              notes: "Core ML recurrent layers cannot skip masked steps; O(steps) layers, no optional state features; masked outputs as Keras "
                + "(previous output, zeros inside Bidirectional with return_sequences)"),
    ]
}

extension ExportWriter {
    /// Lowers a sequence node: `.recurrent`, `.embedding`, or the masking ops (MaskExport.swift).
    mutating func lowerSequenceNode(_ node: Node) {
        switch node.op {
        case let .recurrent(a): lowerRecurrent(node, a)
        case let .embedding(d): lowerEmbedding(node, outputChannels: d)
        case let .sequenceMask(value): lowerSequenceMask(node, value: value)  // MaskExport.swift
        case .applyMask: lowerApplyMask(node)
        default: fail(node, "not a sequence op", "Report this as a bug.")
        }
    }

    // MARK: - Layout helpers

    /// Emits permute [2, 1, 0, 3] (Seq ↔ H): [D, S, 1] → [S, D, 1, 1] and back.
    mutating func swapSeqAndH(_ input: String, output: String, layerName: String) {
        emit(freshLayerName(layerName), [input], [output], .permute(axis: [2, 1, 0, 3]))
    }

    /// The Core ML activation of a recurrent layer for IR activation `a`, or nil when Core ML's
    /// recurrent layers cannot apply it (they take linear, ReLU, tanh, sigmoid and sigmoidHard).
    static func recurrentActivation(_ a: Activation) -> Spec.ActivationParams? {
        switch a {
        case let .linear(alpha, beta): return Spec.ActivationParams(.linear(alpha: alpha, beta: beta))
        case .relu: return Spec.ActivationParams(.relu)
        case .tanh: return Spec.ActivationParams(.tanh)
        case .sigmoid: return Spec.ActivationParams(.sigmoid)
        case let .hardSigmoid(alpha, beta): return Spec.ActivationParams(.sigmoidHard(alpha: alpha, beta: beta))
        default: return nil
        }
    }

    /// Whether `a` is unbounded (linear, ReLU), where Core ML's ±50 pre-activation clip shows.
    static func isUnbounded(_ a: Activation) -> Bool {
        if case .linear = a { return true }
        return a == .relu
    }

    /// State roles per direction: LSTM h and c, the others h.
    static func stateRoles(_ kind: RecurrentKind) -> [String] { kind == .lstm ? ["h", "c"] : ["h"] }

    /// Rows [k·u, (k+1)·u) of weight `key` of `node` (a [g·u, cols] matrix or a [g·u] vector),
    /// plus `add` elementwise when given. fp16 blocks stay fp16 (spec 2); quantized weights are
    /// dequantized to float32 (a gate block of a per-tensor code book is not a Core ML tensor of
    /// its own), with a note.
    mutating func gateBlock(_ node: Node, _ key: String, gate k: Int, units u: Int, add: [Float]? = nil) -> Spec.WeightParams? {
        guard let c = node.weights[key] else { return nil }
        let cols = c.shape.count == 2 ? c.shape[1] : 1
        let range = (k * u * cols)..<((k + 1) * u * cols)
        if case .float16 = c.encoding, add == nil {
            need(2, "fp16 weights", node: node.name)
            return Spec.WeightParams(float16Value: Array(c.storage.buffer[(2 * range.lowerBound)..<(2 * range.upperBound)]))
        }
        switch c.encoding {
        case .float32, .float16: break
        default:
            let note = "node '\(node.name)': \(key) (\(c.encoding)) written as float32 gate blocks"
            if !notes.contains(note) { notes.append(note) }
        }
        var v = Array(c.floats()[range])
        if let add { for i in v.indices { v[i] += add[i] } }
        return Spec.WeightParams(v)
    }

    /// Bias of gate `k`: "bias" + (non-GRU) "recurrentBias" (the IR adds it outside the gate
    /// nonlinearity, so it folds into the bias); nil when the node has neither.
    mutating func gateBias(_ node: Node, suffix: String, gate k: Int, units u: Int) -> Spec.WeightParams? {
        let rb = node.weights["recurrentBias" + suffix].map { Array($0.floats()[(k * u)..<((k + 1) * u)]) }
        if node.weights["bias" + suffix] != nil { return gateBlock(node, "bias" + suffix, gate: k, units: u, add: rb) }
        return rb.map { Spec.WeightParams($0) }
    }

    // MARK: - Recurrent

    mutating func lowerRecurrent(_ node: Node, _ a: RecurrentAttributes) {
        guard let x = types[node.inputs[0]], x.rank == 3 else {
            fail(node, "recurrent input of shape \(formatShape(types[node.inputs[0]]?.shape ?? [])); expected (N, steps, features)", "Reshape the input to (N, T, D).")
            return
        }
        if a.hasMask {
            lowerMaskedRecurrent(node, a, x)  // MaskExport.swift
            return
        }
        if a.kind == .gru && a.resetAfter {
            lowerUnrolledGRU(node, a, x)
            return
        }
        if a.kind == .gru, node.weights.keys.contains(where: { $0.hasPrefix("recurrentBias") }) {
            fail(node, "GRU with reset_after=False and a separate recurrent bias (inside the reset gate's product) has no Core ML gru form",
                 "Fold the recurrent bias into the input bias where it is exact, or use reset_after=True.")
            return
        }
        guard let f = Self.recurrentActivation(a.recurrentActivation), let g = Self.recurrentActivation(a.activation) else {
            fail(node, "activation \(a.activation) / recurrent activation \(a.recurrentActivation): Core ML recurrent layers take linear, "
                + "relu, tanh, sigmoid and hard_sigmoid only", "Use one of those activations.")
            return
        }
        let t = x.shape[1], d = x.shape[2], u = a.units
        let roles = Self.stateRoles(a.kind)
        let nStates = roles.count
        let dirSuffix = ["", "_rev"]
        let dirText = ["forward", "backward"]

        // Initial states: the node's inputs, or Core ML's optional state inputs (zeros when absent).
        var stateIn: [[String]] = []
        var stateOut: [[String]] = []
        for dir in 0..<a.directions {
            var ins: [String] = [], outs: [String] = []
            for (r, role) in roles.enumerated() {
                if a.initialStates {
                    ins.append(blob(node.inputs[1 + dir * nStates + r]))
                } else {
                    let name = tempBlob("\(node.name)_\(role)_in\(dirSuffix[dir])")
                    ins.append(name)
                    recurrentState.inputs.append(RecurrentStateFeature(
                        name: name, size: u,
                        text: "Initial \(role == "h" ? "hidden state h" : "cell state c") of recurrent layer '\(node.name)'"
                            + (a.directions == 2 ? " (\(dirText[dir]))" : "") + "; optional: zeros when absent"))
                }
                if a.returnState {
                    outs.append(blob(node.outputs[1 + dir * nStates + r]))
                } else {
                    let name = tempBlob("\(node.name)_\(role)_out\(dirSuffix[dir])")
                    outs.append(name)
                    recurrentState.outputs.append(RecurrentStateFeature(
                        name: name, size: u,
                        text: "Final \(role == "h" ? "hidden state h" : "cell state c") of recurrent layer '\(node.name)'"
                            + (a.directions == 2 ? " (\(dirText[dir]))" : "")))
                }
            }
            stateIn.append(ins)
            stateOut.append(outs)
        }

        let xBlob = blob(node.inputs[0])
        let out = blob(node.outputs[0])
        var xSeq = xBlob
        if t > 1 {
            if let shared = recurrentState.seqAxis[xBlob] {
                xSeq = shared
            } else {
                xSeq = tempBlob("\(xBlob)__seq_axis")
                swapSeqAndH(xBlob, output: xSeq, layerName: "\(node.name)__to_seq_axis")
                recurrentState.seqAxis[xBlob] = xSeq
            }
        }
        if Self.isUnbounded(a.activation) || Self.isUnbounded(a.recurrentActivation) {
            notes.append("node '\(node.name)': Core ML clips recurrent pre-activations to [-50, 50] (the LSTM cell to 50000), Keras does not: "
                + "unbounded \(a.activation) / \(a.recurrentActivation) activations differ beyond that range")
        }

        switch (a.kind, a.bidirectional) {
        case (.lstm, nil):
            guard let w = lstmWeights(node, suffix: "", units: u) else { return }
            let layer = CoreMLLayer.uniDirectionalLSTM(Spec.UniDirectionalLSTMLayerParams(
                inputVectorSize: UInt64(d), outputVectorSize: UInt64(u), activations: [f, g, g],
                params: lstmParams(node, a), weightParams: w, reverseInput: a.goBackwards))
            emitRecurrent(node.name, layer, input: xSeq, states: stateIn[0], y: out, stateOutputs: stateOut[0], sequences: a.returnSequences && t > 1)
        case let (.lstm, merge?):
            guard let fw = lstmWeights(node, suffix: "", units: u), let bw = lstmWeights(node, suffix: "_backward", units: u) else { return }
            let layer = CoreMLLayer.biDirectionalLSTM(Spec.BiDirectionalLSTMLayerParams(
                inputVectorSize: UInt64(d), outputVectorSize: UInt64(u), activationsForwardLSTM: [f, g, g],
                activationsBackwardLSTM: [f, g, g], params: lstmParams(node, a), weightParams: [fw, bw]))
            let y = merge == .concat ? out : tempBlob("\(out)__both_directions")
            emitRecurrent(node.name, layer, input: xSeq, states: stateIn[0] + stateIn[1], y: y,
                          stateOutputs: stateOut[0] + stateOut[1], sequences: a.returnSequences && t > 1)
            if merge != .concat {
                let yf = tempBlob("\(out)__forward"), yb = tempBlob("\(out)__backward")
                emit(freshLayerName("\(node.name)__split"), [y], [yf, yb], .split(nOutputs: 2))
                mergeDirections(merge, yf, yb, out: out, layerName: freshLayerName("\(node.name)__merge"))
                notes.append("node '\(node.name)': biDirectionalLSTM + split + \(merge.rawValue) merge (as the Keras converter writes merge modes other than concat)")
            }
        case (.gru, _), (.simpleRNN, _):
            var ys: [String] = []
            for dir in 0..<a.directions {
                let suffix = dir == 0 ? "" : "_backward"
                let reverse = dir == 1 || a.goBackwards
                guard let layer = gruOrRNNLayer(node, a, suffix: suffix, inputSize: d, f: f, g: g, reverse: reverse) else { return }
                let name = dir == 0 ? node.name : freshLayerName("\(node.name)__backward")
                let y = a.directions == 1 ? out : tempBlob("\(out)__\(dirText[dir])")
                if dir == 1 && a.returnSequences && t > 1 {
                    // Core ML returns the backward sequence in processing order; Keras aligns it with the input.
                    let processed = tempBlob("\(out)__backward_processing_order")
                    emitRecurrent(name, layer, input: xSeq, states: stateIn[dir], y: processed, stateOutputs: stateOut[dir], sequences: true)
                    reverseSteps(processed, units: u, steps: t, output: y, layerName: "\(node.name)__reverse_backward")
                } else {
                    emitRecurrent(name, layer, input: xSeq, states: stateIn[dir], y: y, stateOutputs: stateOut[dir], sequences: a.returnSequences && t > 1)
                }
                ys.append(y)
            }
            if let merge = a.bidirectional {
                mergeDirections(merge, ys[0], ys[1], out: out, layerName: freshLayerName("\(node.name)__merge"))
                notes.append("node '\(node.name)': bidirectional \(a.kind.rawValue) written as two \(a.kind == .gru ? "gru" : "simpleRecurrent") layers "
                    + "(the backward one reverseInput) and a \(merge.rawValue) merge")
            }
        }
    }

    /// Emits the recurrent layer `name` from `input` (on the Seq axis) and `states`, writing its
    /// first output to `y` — through a permute back to the [U, S, 1] layout when `sequences` —
    /// and its final states to `stateOutputs`.
    mutating func emitRecurrent(_ name: String, _ layer: CoreMLLayer, input: String, states: [String], y: String,
                                stateOutputs: [String], sequences: Bool) {
        if sequences {
            let raw = tempBlob("\(y)__seq_axis")
            emit(name, [input] + states, [raw] + stateOutputs, layer)
            swapSeqAndH(raw, output: y, layerName: "\(name)__from_seq_axis")
        } else {
            emit(name, [input] + states, [y] + stateOutputs, layer)
        }
    }

    mutating func mergeDirections(_ merge: BidirectionalMerge, _ f: String, _ b: String, out: String, layerName: String) {
        let layer: CoreMLLayer
        switch merge {
        case .concat: layer = .concat(sequenceConcat: false)
        case .sum: layer = .add(alpha: 0)
        case .mul: layer = .multiply(alpha: 0)
        case .ave: layer = .average
        }
        emit(layerName, [f, b], [out], layer)
    }

    /// Reverses the steps of a [units, steps, 1] blob: one slice per step (H axis), a channel
    /// concat in reverse order ([steps·units, 1, 1]) and a CHANNEL_LAST reshape back to
    /// [units, steps, 1] (classic layers have no reverse before spec 4).
    mutating func reverseSteps(_ input: String, units: Int, steps: Int, output: String, layerName: String) {
        var parts: [String] = []
        for s in (0..<steps).reversed() {
            let p = tempBlob("\(output)__step\(s)")
            emit(freshLayerName("\(layerName)__step\(s)"), [input], [p],
                 .slice(Spec.SliceLayerParams(startIndex: Int64(s), endIndex: Int64(s + 1), stride: 1, axis: .heightAxis)))
            parts.append(p)
        }
        let cat = tempBlob("\(output)__steps")
        emit(freshLayerName("\(layerName)__concat"), parts, [cat], .concat(sequenceConcat: false))
        emit(freshLayerName(layerName), [cat], [output], .reshape(Spec.ReshapeLayerParams(
            targetShape: [Int64(units), Int64(steps), 1], mode: .channelLast)))
    }

    func lstmParams(_ node: Node, _ a: RecurrentAttributes) -> Spec.LSTMParams {
        let hasBias = node.weights.keys.contains { $0.hasPrefix("bias") || $0.hasPrefix("recurrentBias") }
        // forgetBias stays false: Keras' unit_forget_bias only initialised the trained bias, which already holds the +1.
        return Spec.LSTMParams(sequenceOutput: a.returnSequences, hasBiasVectors: hasBias, forgetBias: false,
                               hasPeepholeVectors: false, coupledInputAndForgetGate: false, cellClipThreshold: 50000)
    }

    /// The LSTM weights of one direction: Keras gate blocks [i, f, c, o] → Core ML's input,
    /// forget, block-input (c, "z") and output gate matrices (Core ML order [i, f, o, z]).
    mutating func lstmWeights(_ node: Node, suffix: String, units u: Int) -> Spec.LSTMWeightParams? {
        guard node.weights["kernel" + suffix] != nil, node.weights["recurrentKernel" + suffix] != nil else {
            fail(node, "missing weight 'kernel\(suffix)' or 'recurrentKernel\(suffix)'", "Check the graph.")
            return nil
        }
        var w = Spec.LSTMWeightParams()
        let gates: [(Int, WritableKeyPath<Spec.LSTMWeightParams, Spec.WeightParams?>, WritableKeyPath<Spec.LSTMWeightParams, Spec.WeightParams?>,
                     WritableKeyPath<Spec.LSTMWeightParams, Spec.WeightParams?>)] = [
            (0, \.inputGateWeightMatrix, \.inputGateRecursionMatrix, \.inputGateBiasVector),
            (1, \.forgetGateWeightMatrix, \.forgetGateRecursionMatrix, \.forgetGateBiasVector),
            (2, \.blockInputWeightMatrix, \.blockInputRecursionMatrix, \.blockInputBiasVector),
            (3, \.outputGateWeightMatrix, \.outputGateRecursionMatrix, \.outputGateBiasVector),
        ]
        for (k, wk, rk, bk) in gates {
            w[keyPath: wk] = gateBlock(node, "kernel" + suffix, gate: k, units: u)
            w[keyPath: rk] = gateBlock(node, "recurrentKernel" + suffix, gate: k, units: u)
            w[keyPath: bk] = gateBias(node, suffix: suffix, gate: k, units: u)
        }
        return w
    }

    /// A `gru` (reset before the recurrent matmul) or `simpleRecurrent` layer for one direction.
    mutating func gruOrRNNLayer(_ node: Node, _ a: RecurrentAttributes, suffix: String, inputSize d: Int,
                                f: Spec.ActivationParams, g: Spec.ActivationParams, reverse: Bool) -> CoreMLLayer? {
        let u = a.units
        guard node.weights["kernel" + suffix] != nil, node.weights["recurrentKernel" + suffix] != nil else {
            fail(node, "missing weight 'kernel\(suffix)' or 'recurrentKernel\(suffix)'", "Check the graph.")
            return nil
        }
        let hasBias = node.weights["bias" + suffix] != nil || node.weights["recurrentBias" + suffix] != nil
        if a.kind == .simpleRNN {
            return .simpleRecurrent(Spec.SimpleRecurrentLayerParams(
                inputVectorSize: UInt64(d), outputVectorSize: UInt64(u), activation: g, sequenceOutput: a.returnSequences,
                hasBiasVector: hasBias, weightMatrix: gateBlock(node, "kernel" + suffix, gate: 0, units: u),
                recursionMatrix: gateBlock(node, "recurrentKernel" + suffix, gate: 0, units: u),
                biasVector: hasBias ? gateBias(node, suffix: suffix, gate: 0, units: u) : nil, reverseInput: reverse))
        }
        // Keras GRU gates z, r, h map directly to Core ML's update, reset, output gates.
        return .gru(Spec.GRULayerParams(
            inputVectorSize: UInt64(d), outputVectorSize: UInt64(u), activations: [f, g], sequenceOutput: a.returnSequences,
            hasBiasVectors: hasBias,
            updateGateWeightMatrix: gateBlock(node, "kernel" + suffix, gate: 0, units: u),
            resetGateWeightMatrix: gateBlock(node, "kernel" + suffix, gate: 1, units: u),
            outputGateWeightMatrix: gateBlock(node, "kernel" + suffix, gate: 2, units: u),
            updateGateRecursionMatrix: gateBlock(node, "recurrentKernel" + suffix, gate: 0, units: u),
            resetGateRecursionMatrix: gateBlock(node, "recurrentKernel" + suffix, gate: 1, units: u),
            outputGateRecursionMatrix: gateBlock(node, "recurrentKernel" + suffix, gate: 2, units: u),
            updateGateBiasVector: hasBias ? gateBias(node, suffix: suffix, gate: 0, units: u) : nil,
            resetGateBiasVector: hasBias ? gateBias(node, suffix: suffix, gate: 1, units: u) : nil,
            outputGateBiasVector: hasBias ? gateBias(node, suffix: suffix, gate: 2, units: u) : nil,
            reverseInput: reverse))
    }

    // MARK: - GRU reset_after=True, unrolled

    /// Keras GRU with `reset_after=True` (the TF2 default):
    ///   z = f(W_z x + b_z + R_z h + rb_z), r = f(W_r x + b_r + R_r h + rb_r),
    ///   n = g(W_h x + b_h + r ⊙ (R_h h + rb_h)), h' = n + z ⊙ (h − n).
    /// Core ML's `gru` computes R_h (r ⊙ h) instead, so the layer is unrolled into spec-1 layers
    /// our importer and runtime also run: one 1×1 convolution for the input projections of all
    /// steps (bias b + [rb_z, rb_r, 0]), then per step a slice, splits, an innerProduct for
    /// R h + [0, 0, rb_h], adds, multiplies and the activations. The first step with zero
    /// initial state skips the recurrent product. Outputs: the step states concatenated and
    /// reshaped (CHANNEL_LAST) to [units, steps, 1], or the last state.
    mutating func lowerUnrolledGRU(_ node: Node, _ a: RecurrentAttributes, _ x: TensorType) {
        let t = x.shape[1], d = x.shape[2], u = a.units
        let xBlob = blob(node.inputs[0]), out = blob(node.outputs[0])
        var perDirection: [(steps: [String], final: String)] = []
        for dir in 0..<a.directions {
            let suffix = dir == 0 ? "" : "_backward"
            guard let r = unrollGRU(node, a, suffix: suffix, tag: dir == 0 ? "" : "_backward", input: xBlob, steps: t, inputSize: d, units: u,
                                    reverse: dir == 1 || a.goBackwards,
                                    initial: a.initialStates ? blob(node.inputs[1 + dir]) : nil) else { return }
            perDirection.append(r)
        }
        if a.returnState {
            for (dir, r) in perDirection.enumerated() {
                emit(freshLayerName("\(node.name)__state\(dir)"), [r.final], [blob(node.outputs[1 + dir])], Self.act(.linear(alpha: 1, beta: 0)))
            }
        }
        var ys: [String] = []
        for (dir, r) in perDirection.enumerated() {
            let y = a.directions == 1 ? out : tempBlob("\(out)__\(dir == 0 ? "forward" : "backward")")
            if a.returnSequences {
                // Processing order for one direction (Keras keeps go_backwards sequences reversed);
                // the backward direction of a Bidirectional layer is aligned with the input.
                let ordered = dir == 1 ? Array(r.steps.reversed()) : r.steps
                if ordered.count == 1 {
                    emit(freshLayerName("\(node.name)__output\(dir)"), ordered, [y], Self.act(.linear(alpha: 1, beta: 0)))
                } else {
                    let cat = tempBlob("\(y)__steps")
                    emit(freshLayerName("\(node.name)__steps\(dir)"), ordered, [cat], .concat(sequenceConcat: false))
                    emit(freshLayerName("\(node.name)__sequence\(dir)"), [cat], [y], .reshape(Spec.ReshapeLayerParams(
                        targetShape: [Int64(u), Int64(t), 1], mode: .channelLast)))
                }
            } else {
                emit(freshLayerName("\(node.name)__output\(dir)"), [r.final], [y], Self.act(.linear(alpha: 1, beta: 0)))
            }
            ys.append(y)
        }
        if let merge = a.bidirectional {
            mergeDirections(merge, ys[0], ys[1], out: out, layerName: freshLayerName("\(node.name)__merge"))
        }
        notes.append("node '\(node.name)': GRU reset_after=True unrolled over \(t) steps into classic layers "
            + "(Core ML's gru applies the reset gate before the recurrent matmul, i.e. reset_after=False)")
    }

    /// One direction of an unrolled reset-after GRU; returns the state blob of every step (in
    /// processing order) and the last one.
    mutating func unrollGRU(_ node: Node, _ a: RecurrentAttributes, suffix: String, tag: String, input: String, steps t: Int,
                            inputSize d: Int, units u: Int, reverse: Bool, initial: String?) -> (steps: [String], final: String)? {
        guard let wc = node.weights["kernel" + suffix], let rc = node.weights["recurrentKernel" + suffix] else {
            fail(node, "missing weight 'kernel\(suffix)' or 'recurrentKernel\(suffix)'", "Check the graph.")
            return nil
        }
        let g3 = 3 * u
        let base = "\(node.name)\(tag)"
        let bias = node.weights["bias" + suffix]?.floats() ?? [Float](repeating: 0, count: g3)
        let rb = node.weights["recurrentBias" + suffix]?.floats() ?? [Float](repeating: 0, count: g3)
        var xb = bias
        for i in 0..<(2 * u) { xb[i] += rb[i] }
        let rbh = Array(rb[(2 * u)..<g3])
        let hasRbh = rbh.contains { $0 != 0 }
        let hasXBias = xb.contains { $0 != 0 }

        let xp = tempBlob("\(base)__x_proj")
        emit(freshLayerName("\(base)__x_proj"), [input], [xp], .convolution(Spec.ConvolutionLayerParams(
            outputChannels: UInt64(g3), kernelChannels: UInt64(d), nGroups: 1, kernelSize: [1, 1], stride: [1, 1],
            dilationFactor: [1, 1], padding: Self.convPadding(.valid), hasBias: hasXBias, weights: Spec.WeightParams(wc.floats()),
            bias: hasXBias ? Spec.WeightParams(xb) : nil)))
        let recurrentWeights = Spec.WeightParams(rc.floats())

        var h = initial
        var outs: [String] = []
        for step in 0..<t {
            let ti = reverse ? t - 1 - step : step
            let p = "\(base)__t\(ti)"
            func blob(_ what: String) -> String { tempBlob("\(p)_\(what)") }
            func layer(_ what: String) -> String { freshLayerName("\(p)_\(what)") }
            var xt = xp
            if t > 1 {
                xt = blob("x")
                emit(layer("x"), [xp], [xt], .slice(Spec.SliceLayerParams(startIndex: Int64(ti), endIndex: Int64(ti + 1), stride: 1, axis: .heightAxis)))
            }
            let xz = blob("xz"), xr = blob("xr"), xh = blob("xh")
            emit(layer("x_split"), [xt], [xz, xr, xh], .split(nOutputs: 3))
            let hNew = blob("h")
            if let hPrev = h {
                let hp = blob("rh_all"), hz = blob("hz"), hr = blob("hr"), hh = blob("hh")
                var rbias = [Float](repeating: 0, count: g3)
                for i in 0..<u { rbias[2 * u + i] = rbh[i] }
                emit(layer("recurrent"), [hPrev], [hp], .innerProduct(Spec.InnerProductLayerParams(
                    inputChannels: UInt64(u), outputChannels: UInt64(g3), hasBias: hasRbh, weights: recurrentWeights,
                    bias: hasRbh ? Spec.WeightParams(rbias) : nil)))
                emit(layer("h_split"), [hp], [hz, hr, hh], .split(nOutputs: 3))
                let az = blob("z_pre"), z = blob("z"), ar = blob("r_pre"), r = blob("r")
                emit(layer("z_pre"), [xz, hz], [az], .add(alpha: 0))
                lowerActivation(a.recurrentActivation, node: node, input: az, output: z, layerName: layer("z"))
                emit(layer("r_pre"), [xr, hr], [ar], .add(alpha: 0))
                lowerActivation(a.recurrentActivation, node: node, input: ar, output: r, layerName: layer("r"))
                let rh = blob("r_hh"), an = blob("n_pre"), n = blob("n")
                emit(layer("r_hh"), [r, hh], [rh], .multiply(alpha: 0))
                emit(layer("n_pre"), [xh, rh], [an], .add(alpha: 0))
                lowerActivation(a.activation, node: node, input: an, output: n, layerName: layer("n"))
                // h' = n + z ⊙ (h − n)
                let negN = blob("minus_n"), diff = blob("h_minus_n"), zd = blob("z_h_minus_n")
                emit(layer("minus_n"), [n], [negN], Self.act(.linear(alpha: -1, beta: 0)))
                emit(layer("h_minus_n"), [hPrev, negN], [diff], .add(alpha: 0))
                emit(layer("z_h_minus_n"), [z, diff], [zd], .multiply(alpha: 0))
                emit(layer("h"), [n, zd], [hNew], .add(alpha: 0))
            } else {
                // Zero initial state: R h = 0, so z = f(x_z), n = g(x_h + r ⊙ rb_h), h' = (1 − z) ⊙ n.
                let z = blob("z"), n = blob("n")
                lowerActivation(a.recurrentActivation, node: node, input: xz, output: z, layerName: layer("z"))
                if hasRbh {
                    let r = blob("r"), rh = blob("r_hh"), an = blob("n_pre")
                    lowerActivation(a.recurrentActivation, node: node, input: xr, output: r, layerName: layer("r"))
                    emit(layer("r_hh"), [r], [rh], .scale(Spec.ScaleLayerParams(shapeScale: [UInt64(u)], scale: Spec.WeightParams(rbh))))
                    emit(layer("n_pre"), [xh, rh], [an], .add(alpha: 0))
                    lowerActivation(a.activation, node: node, input: an, output: n, layerName: layer("n"))
                } else {
                    lowerActivation(a.activation, node: node, input: xh, output: n, layerName: layer("n"))
                }
                let oneMinusZ = blob("one_minus_z")
                emit(layer("one_minus_z"), [z], [oneMinusZ], Self.act(.linear(alpha: -1, beta: 1)))
                emit(layer("h"), [n, oneMinusZ], [hNew], .multiply(alpha: 0))
            }
            outs.append(hNew)
            h = hNew
        }
        return (outs, h!)
    }

    // MARK: - TimeDistributed image layers

    /// Keras TimeDistributed(Conv2D / pooling / Flatten …), which the frontend lowers to
    /// transpose [1, 0, …] + reshape [N·T, H, W, C] → op → reshape + transpose back (N = 1).
    /// Classic layers have no rank-5 tensors, so the frames are stacked on H ([C, T·H, W]; a
    /// rank-5 graph input is declared as a flat vector, see `stackedSteps`), the
    /// transposes and step reshapes are free, a valid (unpadded) convolution / pooling runs on the
    /// whole stack — with stride s_h dividing the per-step row period, step t's output rows come
    /// from step t's input rows only — and a per-step flatten slices each step's rows, flattens
    /// them (CHANNEL_LAST reshape, Keras order) and stacks the vectors into [D, T, 1]. Returns
    /// false for nodes that do not read such a tensor.
    mutating func lowerStepStacked(_ node: Node) -> Bool {
        guard let first = node.inputs.first, let x = types[first], let outName = node.outputs.first, let y = types[outName] else { return false }
        if recurrentState.stepVectors.contains(first) {
            let src = blob(first)
            switch node.op {
            case .reshape where y.rank == 3 && y.shape[1] == 1:  // [T, D] → [T, 1, D]
                alias(outName, src)
                recurrentState.stepVectors.insert(outName)
            case .transpose(perm: [1, 0, 2]) where x.rank == 3 && x.shape[1] == 1:  // [T, 1, D] → [1, T, D]: the normal layout
                alias(outName, src)
            default:
                fail(node, "\(node.op.name) of per-step vectors \(formatShape(x.shape)) (TimeDistributed) is not written", "Report the model.")
            }
            return true
        }
        guard var s = stackedSteps(first, x) else { return false }
        let src = s.blob ?? blob(first)  // a graph input's stack, else the tensor's own blob
        s.blob = nil
        func valid(_ p: PaddingMode) -> Bool {
            if case .valid = p { return true }
            if case let .explicit(t, b, l, r) = p { return t == 0 && b == 0 && l == 0 && r == 0 }
            return false
        }
        let stepsRank = x.rank == 5 ? 2 : 1  // leading axes holding N·T
        switch node.op {
        case .transpose(perm: [1, 0, 2, 3, 4]) where x.shape[0] == 1 || x.shape[1] == 1:
            alias(outName, src)
            recurrentState.stacked[outName] = s
        case .reshape where (y.rank == 4 || y.rank == 5) && Array(y.shape.suffix(3)) == Array(x.shape.suffix(3))
            && y.shape.prefix(y.rank - 3).reduce(1, *) == s.steps:
            alias(outName, src)
            recurrentState.stacked[outName] = s
        case .reshape where x.rank == 4 && y.rank == 2 && y.shape[0] == s.steps:
            // Per-step Flatten: step rows → [h·w·c, 1, 1] (Keras order) → concat → [D, T, 1].
            let (h, w, c) = (x.shape[1], x.shape[2], x.shape[3])
            let d = h * w * c
            var parts: [String] = []
            for t in 0..<s.steps {
                var rows = src
                if s.steps > 1 || s.period != h {
                    rows = tempBlob("\(node.name)__step\(t)_rows")
                    emit(freshLayerName("\(node.name)__step\(t)_rows"), [src], [rows], .slice(Spec.SliceLayerParams(
                        startIndex: Int64(t * s.period), endIndex: Int64(t * s.period + h), stride: 1, axis: .heightAxis)))
                }
                let v = tempBlob("\(node.name)__step\(t)")
                emit(freshLayerName("\(node.name)__step\(t)"), [rows], [v], .reshape(Spec.ReshapeLayerParams(
                    targetShape: [Int64(d), 1, 1], mode: .channelLast)))
                parts.append(v)
            }
            let out = blob(outName)
            if parts.count == 1 {
                emit(freshLayerName(node.name), parts, [out], Self.act(.linear(alpha: 1, beta: 0)))
            } else {
                let cat = tempBlob("\(out)__steps")
                emit(freshLayerName("\(node.name)__steps"), parts, [cat], .concat(sequenceConcat: false))
                emit(node.name, [cat], [out], .reshape(Spec.ReshapeLayerParams(targetShape: [Int64(d), Int64(s.steps), 1], mode: .channelLast)))
            }
            recurrentState.stepVectors.insert(outName)
        case let .conv2d(a) where x.rank == 4 && valid(a.padding) && s.period % a.strides[0] == 0:
            lowerConv(node, a, x, src, blob(outName))
            recurrentState.stacked[outName] = StackedSteps(steps: s.steps, period: s.period / a.strides[0], height: y.shape[1])
        case let .pool2d(a) where x.rank == 4 && valid(a.padding) && s.period % a.strides[0] == 0:
            emit(node.name, [src], [blob(outName)], .pooling(Spec.PoolingLayerParams(
                type: a.kind == .max ? .max : .average, kernelSize: a.kernel.map(UInt64.init),
                stride: a.strides.map(UInt64.init), padding: Self.poolPadding(a.padding), avgPoolExcludePadding: true)))
            recurrentState.stacked[outName] = StackedSteps(steps: s.steps, period: s.period / a.strides[0], height: y.shape[1])
        case let .activation(a) where y.shape == x.shape:
            lowerActivation(a, node: node, input: src, output: blob(outName), layerName: node.name)
            recurrentState.stacked[outName] = s
        default:
            fail(node, "\(node.op.name) on TimeDistributed frames \(formatShape(x.shape)) (steps stacked on H, \(stepsRank) leading step axes): "
                + "the writer handles valid (unpadded) Conv2D and pooling with a row stride dividing \(s.period), activations and Flatten per step",
                 "Use valid padding inside TimeDistributed, or convert to .mlbundle.")
        }
        return true
    }

    /// The stacked layout of IR tensor `name` (type `x`). A rank-5 graph input [1, T, H, W, C]
    /// is declared as the vector [T·H·W·C] — the frames' own NHWC element order, what a
    /// flattened Keras array holds — and one CHANNEL_LAST reshape turns it into the stack
    /// [C, T·H, W].
    mutating func stackedSteps(_ name: String, _ x: TensorType) -> StackedSteps? {
        if let s = recurrentState.stacked[name] { return s }
        guard x.rank == 5, x.shape[0] == 1, graph.inputs.contains(where: { $0.name == name }) else { return nil }
        let (t, h, w, c) = (x.shape[1], x.shape[2], x.shape[3], x.shape[4])
        nchwFeatures[name] = [Int64(t * h * w * c)]
        let stack = tempBlob("\(blob(name))__frames_stacked")
        emit(freshLayerName("\(name)__frames_stacked"), [blob(name)], [stack], .reshape(Spec.ReshapeLayerParams(
            targetShape: [Int64(c), Int64(t * h), Int64(w)], mode: .channelLast)))
        let s = StackedSteps(steps: t, period: h, height: h, blob: stack)
        recurrentState.stacked[name] = s
        notes.append("input '\(name)' (1, \(t), \(h), \(w), \(c)): TimeDistributed frames declared as the vector [\(t * h * w * c)] "
            + "(NHWC element order), reshaped to [\(c), \(t * h), \(w)] (the \(t) frames stacked on H)")
        return s
    }

    /// Makes IR tensor `name` an alias of blob `source` (layout-only ops); graph outputs get a copy.
    mutating func alias(_ name: String, _ source: String) {
        if graph.outputs.contains(name) {
            emit(freshLayerName("\(name)__copy"), [source], [blob(name)], Self.act(.linear(alpha: 1, beta: 0)))
        } else {
            blobOf[name] = source
        }
    }

    // MARK: - Embedding

    /// IR embedding x [N, L] → [N, L, D]: the indices ([L, 1, 1] in the writer's layout) move to
    /// the Seq axis (permute [1, 0, 2, 3]), the `embedding` layer gives [L, D, 1, 1], and a permute
    /// [2, 1, 0, 3] brings the steps back to H ([D, L, 1]). L = 1 needs no permute.
    mutating func lowerEmbedding(_ node: Node, outputChannels dim: Int) {
        guard let x = types[node.inputs[0]], x.rank == 2, let w = node.weights["weight"], w.shape.count == 2 else {
            fail(node, "embedding of shape \(formatShape(types[node.inputs[0]]?.shape ?? [])); expected indices (N, L) and a weight (D, vocabulary)",
                 "Check the graph.")
            return
        }
        guard let wp = weightParams(w, node: node, role: "weight") else { return }
        let l = x.shape[1], vocab = w.shape[1]
        let input = blob(node.inputs[0]), out = blob(node.outputs[0])
        let layer = CoreMLLayer.embedding(Spec.EmbeddingLayerParams(inputDim: UInt64(vocab), outputChannels: UInt64(dim), hasBias: false, weights: wp))
        if l == 1 {
            emit(node.name, [input], [out], layer)
            return
        }
        let seq = tempBlob("\(input)__indices_on_seq_axis"), raw = tempBlob("\(out)__seq_axis")
        emit(freshLayerName("\(node.name)__to_seq_axis"), [input], [seq], .permute(axis: [1, 0, 2, 3]))
        emit(node.name, [seq], [raw], layer)
        swapSeqAndH(raw, output: out, layerName: "\(node.name)__from_seq_axis")
    }

    // MARK: - Description

    /// Appends the recurrent-state features (optional inputs, outputs) to `description`.
    mutating func appendRecurrentStateFeatures(to description: inout Spec.ModelDescription) {
        for f in recurrentState.inputs {
            var type = arrayType([Int64(f.size)])
            type.isOptional = true
            description.input.append(Spec.FeatureDescription(name: f.name, shortDescription: f.text, type: type))
        }
        for f in recurrentState.outputs {
            description.output.append(Spec.FeatureDescription(name: f.name, shortDescription: f.text, type: arrayType([Int64(f.size)])))
        }
    }
}
