// Spec-level tests of the writer's sequence layers (RecurrentExport.swift): LSTM gate reorder
// (Keras [i, f, c, o] → Core ML input / forget / block-input / output matrices), forgetBias
// false, activations (Keras 2 and Keras 3 hard_sigmoid), the permutes moving the steps onto the
// Seq axis, Core ML's optional state features (`<layer>_h_in`, `_c_in`, `_rev`, `_h_out`, …),
// bidirectional merges, GRU reset_after False (gru layer) and True (unrolled), SimpleRNN,
// initial states and returned states as graph tensors, embeddings, masks (MaskExport.swift) and
// TimeDistributed frames stacked on H.
import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

/// Small recurrent IR graphs whose weights tell their rows apart: row r of every matrix holds
/// r·100 + column, bias element r holds r + 0.5.
extension ConstantTensor {
    /// The same values with shape `shape`.
    func reshapedForTest(_ shape: [Int]) -> ConstantTensor { floatConstant(shape, floats()) }
}

enum RecurrentGraphs {
    static func rows(_ rows: Int, _ cols: Int) -> ConstantTensor {
        floatConstant([rows, cols], (0..<(rows * cols)).map { Float(($0 / cols) * 100 + $0 % cols) })
    }

    static func bias(_ n: Int, offset: Float = 0.5) -> ConstantTensor { floatConstant([n], (0..<n).map { Float($0) + offset }) }

    /// The weights of one direction (`suffix` "" or "_backward").
    static func weights(_ kind: RecurrentKind, units u: Int, inputSize d: Int, suffix: String = "", bias: Bool = true,
                        recurrentBias: Bool = false) -> [String: ConstantTensor] {
        let g = kind.gateCount * u
        var w = ["kernel" + suffix: rows(g, d), "recurrentKernel" + suffix: rows(g, u)]
        if bias { w["bias" + suffix] = Self.bias(g) }
        if recurrentBias { w["recurrentBias" + suffix] = Self.bias(g, offset: 0.25) }
        return w
    }

    /// x [1, steps, d] → one recurrent node "rnn" → y (and its state outputs when `returnState`).
    static func single(_ a: RecurrentAttributes, steps: Int = 5, inputSize d: Int = 3, extraInputs: [ValueInfo] = [],
                       recurrentBias: Bool = false) -> Graph {
        var w = weights(a.kind, units: a.units, inputSize: d, recurrentBias: recurrentBias)
        if a.bidirectional != nil {
            w.merge(weights(a.kind, units: a.units, inputSize: d, suffix: "_backward", recurrentBias: recurrentBias)) { x, _ in x }
        }
        var outputs = ["y"]
        if a.returnState { outputs += (0..<(a.kind.stateCount * a.directions)).map { "state\($0)" } }
        let node = Node(name: "rnn", op: .recurrent(a), inputs: ["x"] + extraInputs.map(\.name), outputs: outputs, weights: w)
        return Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, steps, d]))] + extraInputs, outputs: outputs, nodes: [node])
    }

    /// The one layer of `type` in `m`.
    static func layer(_ m: Spec.Model, _ type: String) -> Spec.NeuralNetworkLayer? {
        m.neuralNetwork?.layers.first { $0.layer.typeName == type }
    }
}

final class CoreMLRecurrentExportTests: XCTestCase {
    typealias G = RecurrentGraphs

    func floats(_ w: Spec.WeightParams?) -> [Float] { w?.floats ?? [] }

    /// Rows [from, to) of a `rows`-style matrix with `cols` columns.
    func rowValues(_ from: Int, _ to: Int, cols: Int) -> [Float] {
        (from..<to).flatMap { r in (0..<cols).map { Float(r * 100 + $0) } }
    }

    // MARK: LSTM

    func testLSTMGateReorderForgetBiasAndActivations() throws {
        let a = RecurrentAttributes(kind: .lstm, units: 2, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5), returnSequences: true)
        let m = try CoreMLExporter.model(from: G.single(a))
        XCTAssertEqual(m.specificationVersion, 1)
        let l = try XCTUnwrap(G.layer(m, "uniDirectionalLSTM"))
        guard case let .uniDirectionalLSTM(p) = l.layer else { return XCTFail() }
        XCTAssertEqual(p.inputVectorSize, 3)
        XCTAssertEqual(p.outputVectorSize, 2)
        XCTAssertEqual(p.activations.map(\.nonlinearity), [.sigmoidHard(alpha: 0.2, beta: 0.5), .tanh, .tanh])
        let params = try XCTUnwrap(p.params)
        XCTAssertFalse(params.forgetBias, "Keras' unit_forget_bias is already in the trained bias")
        XCTAssertTrue(params.sequenceOutput)
        XCTAssertTrue(params.hasBiasVectors)
        XCTAssertFalse(params.hasPeepholeVectors)
        XCTAssertEqual(params.cellClipThreshold, 50000)
        XCTAssertFalse(p.reverseInput)
        let w = try XCTUnwrap(p.weightParams)
        // Keras blocks: i = rows 0–1, f = 2–3, c = 4–5, o = 6–7.
        XCTAssertEqual(floats(w.inputGateWeightMatrix), rowValues(0, 2, cols: 3))
        XCTAssertEqual(floats(w.forgetGateWeightMatrix), rowValues(2, 4, cols: 3))
        XCTAssertEqual(floats(w.blockInputWeightMatrix), rowValues(4, 6, cols: 3), "Keras' candidate c is Core ML's block input z")
        XCTAssertEqual(floats(w.outputGateWeightMatrix), rowValues(6, 8, cols: 3))
        XCTAssertEqual(floats(w.outputGateRecursionMatrix), rowValues(6, 8, cols: 2))
        XCTAssertEqual(floats(w.blockInputRecursionMatrix), rowValues(4, 6, cols: 2))
        XCTAssertEqual(floats(w.forgetGateBiasVector), [2.5, 3.5], "the forget bias is written as stored")
        XCTAssertEqual(floats(w.outputGateBiasVector), [6.5, 7.5])
        XCTAssertNil(w.inputGatePeepholeVector)

        // Steps moved onto Seq before the layer and back after it.
        let layers = try XCTUnwrap(m.neuralNetwork?.layers)
        let idx = try XCTUnwrap(layers.firstIndex { $0.name == "rnn" })
        XCTAssertEqual(layers[idx - 1].layer, .permute(axis: [2, 1, 0, 3]))
        XCTAssertEqual(layers[idx - 1].input, ["x"])
        XCTAssertEqual(layers[idx + 1].layer, .permute(axis: [2, 1, 0, 3]))
        XCTAssertEqual(layers[idx + 1].output, ["y"])

        // Core ML's optional state inputs and the state outputs.
        XCTAssertEqual(Array(l.input.dropFirst()), ["rnn_h_in", "rnn_c_in"])
        XCTAssertEqual(Array(l.output.dropFirst()), ["rnn_h_out", "rnn_c_out"])
        let d = try XCTUnwrap(m.description)
        XCTAssertEqual(d.input.map(\.name), ["x", "rnn_h_in", "rnn_c_in"])
        XCTAssertEqual(d.output.map(\.name), ["y", "rnn_h_out", "rnn_c_out"])
        for f in d.input.dropFirst() {
            XCTAssertEqual(f.type?.isOptional, true, f.name)
            guard case let .multiArray(t)? = f.type?.kind else { return XCTFail(f.name) }
            XCTAssertEqual(t.shape, [2])
        }
        XCTAssertEqual(d.input.first?.type?.isOptional, false)
        guard case let .multiArray(x)? = d.input.first?.type?.kind else { return XCTFail() }
        XCTAssertEqual(x.shape, [3, 5, 1], "the sequence input keeps the writer's [D, S, 1] layout")
    }

    func testKeras3HardSigmoidAndGoBackwardsLastOutput() throws {
        let a = RecurrentAttributes(kind: .lstm, units: 2, recurrentActivation: .hardSigmoid(alpha: 1.0 / 6, beta: 0.5), goBackwards: true)
        let m = try CoreMLExporter.model(from: G.single(a))
        guard case let .uniDirectionalLSTM(p)? = G.layer(m, "uniDirectionalLSTM")?.layer else { return XCTFail() }
        XCTAssertEqual(p.activations.first?.nonlinearity, .sigmoidHard(alpha: 1.0 / 6, beta: 0.5))
        XCTAssertTrue(p.reverseInput)
        XCTAssertEqual(p.params?.sequenceOutput, false)
        // The last output [U, 1, 1] is the IR [N, U] as is: only the permute before the layer.
        XCTAssertEqual(m.neuralNetwork?.layers.filter { if case .permute = $0.layer { return true } else { return false } }.count, 1)
        XCTAssertEqual(G.layer(m, "uniDirectionalLSTM")?.output.first, "y")
    }

    func testBidirectionalLSTMConcatAndSum() throws {
        let concat = try CoreMLExporter.model(from: G.single(RecurrentAttributes(kind: .lstm, units: 2, returnSequences: true, bidirectional: .concat)))
        let l = try XCTUnwrap(G.layer(concat, "biDirectionalLSTM"))
        guard case let .biDirectionalLSTM(p) = l.layer else { return XCTFail() }
        XCTAssertEqual(p.weightParams.count, 2)
        XCTAssertEqual(p.params?.forgetBias, false)
        XCTAssertEqual(Array(l.input.dropFirst()), ["rnn_h_in", "rnn_c_in", "rnn_h_in_rev", "rnn_c_in_rev"])
        XCTAssertEqual(Array(l.output.dropFirst()), ["rnn_h_out", "rnn_c_out", "rnn_h_out_rev", "rnn_c_out_rev"])
        XCTAssertEqual(floats(p.weightParams[1].blockInputWeightMatrix), rowValues(4, 6, cols: 3))
        XCTAssertNil(G.layer(concat, "split"), "concat is the layer's own output")

        let sum = try CoreMLExporter.model(from: G.single(RecurrentAttributes(kind: .lstm, units: 2, bidirectional: .sum)))
        let split = try XCTUnwrap(G.layer(sum, "split"))
        XCTAssertEqual(split.layer, .split(nOutputs: 2))
        let add = try XCTUnwrap(G.layer(sum, "add"))
        XCTAssertEqual(add.input, split.output)
        XCTAssertEqual(add.output, ["y"])
    }

    func testStatesAsGraphTensorsReplaceTheOptionalFeatures() throws {
        let a = RecurrentAttributes(kind: .simpleRNN, units: 4, activation: .relu, returnSequences: true, returnState: true, initialStates: true)
        let g = G.single(a, extraInputs: [ValueInfo(name: "h0", type: TensorType([1, 4]))])
        let m = try CoreMLExporter.model(from: g)
        let l = try XCTUnwrap(G.layer(m, "simpleRecurrent"))
        guard case let .simpleRecurrent(p) = l.layer else { return XCTFail() }
        XCTAssertEqual(p.activation?.nonlinearity, .relu)
        XCTAssertTrue(p.sequenceOutput)
        XCTAssertEqual(floats(p.biasVector), [0.5, 1.5, 2.5, 3.5])
        XCTAssertEqual(Array(l.input.dropFirst()), ["h0"])
        XCTAssertEqual(Array(l.output.dropFirst()), ["state0"])
        XCTAssertEqual(m.description?.input.map(\.name), ["x", "h0"])
        XCTAssertEqual(m.description?.input.last?.type?.isOptional, false)
        XCTAssertEqual(m.description?.output.map(\.name), ["y", "state0"])
    }

    func testRecurrentBiasOfLSTMFoldsIntoTheBias() throws {
        let m = try CoreMLExporter.model(from: G.single(RecurrentAttributes(kind: .lstm, units: 2), recurrentBias: true))
        guard case let .uniDirectionalLSTM(p)? = G.layer(m, "uniDirectionalLSTM")?.layer else { return XCTFail() }
        XCTAssertEqual(floats(p.weightParams?.inputGateBiasVector), [0.75, 2.75])
    }

    // MARK: GRU

    func testGRUResetBeforeMapsGatesDirectly() throws {
        let a = RecurrentAttributes(kind: .gru, units: 2, activation: .relu, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5),
                                    returnSequences: true, goBackwards: true)
        let m = try CoreMLExporter.model(from: G.single(a))
        let l = try XCTUnwrap(G.layer(m, "gru"))
        guard case let .gru(p) = l.layer else { return XCTFail() }
        XCTAssertEqual(p.activations.map(\.nonlinearity), [.sigmoidHard(alpha: 0.2, beta: 0.5), .relu])
        XCTAssertEqual(floats(p.updateGateWeightMatrix), rowValues(0, 2, cols: 3))
        XCTAssertEqual(floats(p.resetGateWeightMatrix), rowValues(2, 4, cols: 3))
        XCTAssertEqual(floats(p.outputGateWeightMatrix), rowValues(4, 6, cols: 3))
        XCTAssertEqual(floats(p.outputGateRecursionMatrix), rowValues(4, 6, cols: 2))
        XCTAssertEqual(floats(p.resetGateBiasVector), [2.5, 3.5])
        XCTAssertTrue(p.reverseInput)
        XCTAssertTrue(p.sequenceOutput)
        XCTAssertEqual(Array(l.input.dropFirst()), ["rnn_h_in"])
        XCTAssertEqual(Array(l.output.dropFirst()), ["rnn_h_out"])
    }

    /// Core ML's gru cannot hold reset_after=True: the writer unrolls it into classic layers.
    func testGRUResetAfterIsUnrolled() throws {
        let a = RecurrentAttributes(kind: .gru, units: 2, returnSequences: true, resetAfter: true)
        let r = try CoreMLExporter.export(G.single(a, steps: 4, recurrentBias: true))
        let m = r.model
        XCTAssertNil(G.layer(m, "gru"), "Core ML's gru applies the reset gate before the recurrent matmul")
        let types = m.neuralNetwork?.layers.map(\.layer.typeName) ?? []
        XCTAssertEqual(types.filter { $0 == "innerProduct" }.count, 3, "one recurrent product per step after the first")
        XCTAssertEqual(types.filter { $0 == "slice" }.count, 4)
        XCTAssertEqual(types.filter { $0 == "convolution" }.count, 1, "one 1×1 convolution projects every step")
        XCTAssertEqual(m.specificationVersion, 1)
        XCTAssertEqual(m.description?.input.map(\.name), ["x"], "no optional state features for the unrolled GRU")
        XCTAssertTrue(r.notes.contains { $0.contains("reset_after=True unrolled") }, "\(r.notes)")
        // The recurrent product carries the recurrent bias of the candidate only: [0, 0, rb_h].
        guard case let .innerProduct(ip)? = G.layer(m, "innerProduct")?.layer else { return XCTFail() }
        XCTAssertEqual(floats(ip.bias), [0, 0, 0, 0, 4.25, 5.25])
        // The projection bias is b + [rb_z, rb_r, 0].
        guard case let .convolution(conv)? = G.layer(m, "convolution")?.layer else { return XCTFail() }
        XCTAssertEqual(floats(conv.bias), [0.75, 2.75, 4.75, 6.75, 4.5, 5.5])
    }

    func testBidirectionalGRUIsTwoLayersWithAReversedBackwardSequence() throws {
        let a = RecurrentAttributes(kind: .gru, units: 2, returnSequences: true, bidirectional: .concat)
        let m = try CoreMLExporter.model(from: G.single(a, steps: 3))
        let grus = m.neuralNetwork?.layers.filter { $0.layer.typeName == "gru" } ?? []
        XCTAssertEqual(grus.count, 2)
        guard case let .gru(f) = grus[0].layer, case let .gru(b) = grus[1].layer else { return XCTFail() }
        XCTAssertFalse(f.reverseInput)
        XCTAssertTrue(b.reverseInput)
        XCTAssertEqual(Array(grus[1].input.dropFirst()), ["rnn_h_in_rev"])
        let slices = m.neuralNetwork?.layers.filter { $0.layer.typeName == "slice" } ?? []
        XCTAssertEqual(slices.count, 3, "one slice per step reverses the backward sequence")
        XCTAssertEqual(m.neuralNetwork?.layers.last?.layer, .concat(sequenceConcat: false))
    }

    // MARK: Embedding, masks, errors

    func testEmbeddingMovesIndicesOntoSeq() throws {
        let w = G.rows(5, 7)  // [D = 5, vocab = 7]
        let g = ExportGraphs.single(.embedding(outputChannels: 5), shape: [1, 4], weights: ["weight": w])
        let m = try CoreMLExporter.model(from: g)
        let layers = try XCTUnwrap(m.neuralNetwork?.layers)
        XCTAssertEqual(layers.map(\.layer.typeName), ["permute", "embedding", "permute"])
        XCTAssertEqual(layers[0].layer, .permute(axis: [1, 0, 2, 3]))
        XCTAssertEqual(layers[2].layer, .permute(axis: [2, 1, 0, 3]))
        guard case let .embedding(p) = layers[1].layer else { return XCTFail() }
        XCTAssertEqual(p.inputDim, 7)
        XCTAssertEqual(p.outputChannels, 5)
        XCTAssertFalse(p.hasBias)
        XCTAssertEqual(floats(p.weights), w.floats())
    }

    /// A mask and a masked LSTM: the mask from abs, a 1×1 convolution of ones and a hard-sigmoid
    /// chain, the LSTM unrolled (no uniDirectionalLSTM, no optional state features), spec 1.
    func testMaskedLSTMIsUnrolledWithTheMaskFromActivations() throws {
        let mask = Node(name: "mask", op: .sequenceMask(value: 0), inputs: ["x"], outputs: ["m"])
        let a = RecurrentAttributes(kind: .lstm, units: 2, hasMask: true)
        let rnn = Node(name: "rnn", op: .recurrent(a), inputs: ["x", "m"], outputs: ["y"], weights: G.weights(.lstm, units: 2, inputSize: 3))
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 3]))], outputs: ["y"], nodes: [mask, rnn])
        let r = try CoreMLExporter.export(g)
        let m = r.model
        let layers = try XCTUnwrap(m.neuralNetwork?.layers)
        let types = layers.map(\.layer.typeName)
        XCTAssertEqual(m.specificationVersion, 1)
        XCTAssertNil(G.layer(m, "uniDirectionalLSTM"), "Core ML's LSTM cannot skip masked steps")
        XCTAssertEqual(m.description?.input.map(\.name), ["x"], "no optional state features for an unrolled layer")
        XCTAssertEqual(types.filter { $0 == "innerProduct" }.count, 4, "one recurrent product per step after the first")
        XCTAssertEqual(Array(types.prefix(7)), ["unary", "convolution", "activation", "activation", "activation", "activation", "permute"])
        XCTAssertEqual(layers[0].layer, .unary(Spec.UnaryFunctionLayerParams(type: .abs, alpha: 1, epsilon: 1e-6, shift: 0, scale: 1)))
        XCTAssertEqual(layers[2].layer, .activation(Spec.ActivationParams(.sigmoidHard(alpha: 1e4, beta: 0))))
        XCTAssertEqual(layers[6].layer, .permute(axis: [0, 2, 1, 3]))
        XCTAssertEqual(layers[6].output, ["m"])
        XCTAssertTrue(r.notes.contains { $0.contains("masked lstm unrolled over 5 steps") }, "\(r.notes)")
    }

    func testMaskValueIsSubtractedAndApplyMaskMultiplies() throws {
        let mask = Node(name: "mask", op: .sequenceMask(value: 0.5), inputs: ["x"], outputs: ["m"])
        let apply = Node(name: "apply", op: .applyMask, inputs: ["x", "m"], outputs: ["y"])
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 3]))], outputs: ["y"], nodes: [mask, apply])
        let layers = try XCTUnwrap(try CoreMLExporter.model(from: g).neuralNetwork?.layers)
        XCTAssertEqual(layers.first?.layer, .activation(Spec.ActivationParams(.linear(alpha: 1, beta: -0.5))))
        XCTAssertEqual(layers.last?.layer, .multiply(alpha: 0))
        XCTAssertEqual(layers.last?.input.first, "x", "the full shape first")
        XCTAssertEqual(layers.filter { $0.layer == .permute(axis: [0, 2, 1, 3]) }.count, 1, "the mask on H is reused, not permuted back")
    }

    func testMaskOfRank4IsRefused() throws {
        let mask = Node(name: "mask", op: .sequenceMask(value: 0), inputs: ["x"], outputs: ["m"])
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 3, 2]))], outputs: ["m"], nodes: [mask])
        XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly)) { error in
            guard let e = error as? CoreMLExportError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.problems.map(\.node), ["mask"])
            XCTAssertTrue(e.problems[0].reason.contains("(N, T) or (N, T, D)"), "\(e)")
        }
    }

    // MARK: TimeDistributed frames

    /// frames [1, T, H, W, C] → transpose / reshape [T, H, W, C] → conv (the Keras frontend's
    /// TimeDistributed(Conv2D)) with row stride `strideH`.
    func timeDistributedConv(h: Int, strideH: Int) -> Graph {
        let nodes = [
            Node(name: "to_steps", op: .transpose(perm: [1, 0, 2, 3, 4]), inputs: ["frames"], outputs: ["a"]),
            Node(name: "merge", op: .reshape(targetShape: [h, 4, 2]), inputs: ["a"], outputs: ["b"]),
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], strides: [strideH, 1], padding: .valid, outputChannels: 3)),
                 inputs: ["b"], outputs: ["c"], weights: ["weight": G.rows(3, 18).reshapedForTest([3, 2, 3, 3])]),
            Node(name: "flat", op: .reshape(targetShape: [((h - 3) / strideH + 1) * 2 * 3]), inputs: ["c"], outputs: ["y"]),
        ]
        return Graph(inputs: [ValueInfo(name: "frames", type: TensorType([1, 3, h, 4, 2]))], outputs: ["y"], nodes: nodes)
    }

    func testTimeDistributedFramesAreStackedOnH() throws {
        let r = try CoreMLExporter.export(timeDistributedConv(h: 6, strideH: 2))
        let m = r.model
        guard case let .multiArray(t)? = m.description?.input.first?.type?.kind else { return XCTFail("frames is not a multi-array") }
        XCTAssertEqual(t.shape, [3 * 6 * 4 * 2], "frames declared flat, in NHWC order")
        let layers = try XCTUnwrap(m.neuralNetwork?.layers)
        XCTAssertEqual(layers.first?.layer, .reshape(Spec.ReshapeLayerParams(targetShape: [2, 18, 4], mode: .channelLast)))
        XCTAssertEqual(layers.filter { $0.layer.typeName == "convolution" }.count, 1, "one convolution over the stack of frames")
        XCTAssertEqual(layers.filter { $0.layer.typeName == "slice" }.count, 3, "one slice of rows per step for the per-step Flatten")
        XCTAssertEqual(m.specificationVersion, 1)
        XCTAssertTrue(r.notes.contains { $0.contains("frames stacked on H") }, "\(r.notes)")
    }

    func testTimeDistributedRowStrideMustDivideTheStepPeriod() throws {
        XCTAssertThrowsError(try CoreMLExporter.model(from: timeDistributedConv(h: 7, strideH: 2), options: .classicOnly)) { error in
            guard let e = error as? CoreMLExportError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.problems.first?.node, "conv", "\(e)")
            XCTAssertTrue(e.problems.first?.reason.contains("row stride dividing 7") == true, "\(e)")
        }
    }

    func testActivationsCoreMLRecurrentLayersLackAreRejected() throws {
        let g = G.single(RecurrentAttributes(kind: .lstm, units: 2, activation: .swish))
        XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly)) { error in
            XCTAssertTrue("\(error)".contains("Core ML recurrent layers take linear, relu, tanh, sigmoid and hard_sigmoid"), "\(error)")
        }
    }

    func testFP16WeightsStayFP16PerGate() throws {
        var g = G.single(RecurrentAttributes(kind: .gru, units: 2))
        let k = try XCTUnwrap(g.nodes[0].weights["kernel"])
        g.nodes[0].weights["kernel"] = try ConstantTensor(shape: k.shape, encoding: .float16, storage: .copying(Spec.encodeFloat16(k.floats())))
        let r = try CoreMLExporter.export(g)
        XCTAssertEqual(r.model.specificationVersion, 2)
        guard case let .gru(p)? = G.layer(r.model, "gru")?.layer else { return XCTFail() }
        XCTAssertEqual(p.resetGateWeightMatrix?.storage, .float16)
        XCTAssertEqual(p.resetGateWeightMatrix?.floats, rowValues(2, 4, cols: 3))
        XCTAssertEqual(p.resetGateRecursionMatrix?.storage, .float32)
    }

    func testSequenceLayerTableDocumentsEveryOp() {
        let ops = CoreMLExporter.sequenceLayerTable.map(\.irOp).joined(separator: "\n")
        for op in ["lstm", "bidirectional lstm", "gru (resetAfter false)", "gru (resetAfter true)", "simpleRNN", "embedding", "sequenceMask", "applyMask", "recurrent with a mask"] {
            XCTAssertTrue(ops.contains(op), op)
        }
        XCTAssertTrue(CoreMLExporter.sequenceLayerTable.allSatisfy { $0.minimumSpecificationVersion == 1 })
    }
}
