// Sequence models through the Core ML writer and reader (issue 6): each Keras sequence fixture
// of Fixtures/keras/manifest.json ("issue": 6) is converted (KerasConverter), written as a
// `.mlmodel` (CoreMLExporter: uniDirectionalLSTM, biDirectionalLSTM, gru, simpleRecurrent,
// embedding, the unrolled reset-after GRU), encoded, decoded, imported back (CoreMLImporter) and
// run with `MLRuntime.Model`; every output must equal real Keras' reference within
// max|Δ| ≤ 1e-4·max(1, max|Keras|). Fixtures with Keras masks (Embedding mask_zero, Masking) go
// through too: the writer computes the mask with activation layers and unrolls masked layers. The real Create ML activity classifier of ../shared (uniDirectionalLSTM
// with `stateIn`/`stateOut`) is checked against a direct implementation of Core ML's layer
// equations (convolution, LSTM step, inner products, batchnorm, softmax) written here from the
// spec's weights.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLGraph
import MLPasses
import MLRuntime
import TestSupport
import XCTest

final class CoreMLRecurrentParityTests: XCTestCase {
    struct Fixture: Decodable {
        struct IO: Decodable { var name: String; var file: String }
        var name: String
        var model: String
        var config: String?
        var issue: Int?
        var inputs: [IO]
        var outputs: [IO]
    }

    static let kerasDir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras")

    static func fixture(_ name: String) throws -> Fixture {
        struct M: Decodable { var fixtures: [Fixture] }
        let url = kerasDir.appendingPathComponent("manifest.json")
        guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("\(url.path) is missing") }
        guard let fx = try JSONDecoder().decode(M.self, from: Data(contentsOf: url)).fixtures.first(where: { $0.name == name }) else {
            throw XCTSkip("fixture \(name) is not in the manifest")
        }
        return fx
    }

    /// [1, S, D] (IR) → [1, D, S, 1], the imported layout of a feature declared [D, S, 1];
    /// other ranks unchanged (TimeDistributed frames [1, T, H, W, C] are declared as the flat
    /// vector [T·H·W·C] in the same order).
    static func coreMLLayout(_ a: NDArray) throws -> NDArray {
        guard a.rank == 3 else { return a }
        let (s, d) = (a.shape[1], a.shape[2])
        var out = [Float](repeating: 0, count: a.count)
        for i in 0..<s { for j in 0..<d { out[j * s + i] = a.scalars[i * d + j] } }
        return try NDArray(shape: [1, d, s, 1], scalars: out)
    }

    struct Result {
        var model: Spec.Model
        var imported: Graph
        /// Max relative error per fixture output, in manifest order.
        var errors: [Float]
    }

    /// Keras fixture → IR → .mlmodel bytes → Spec → IR → run; compares with Keras' outputs.
    static func roundTrip(_ name: String) throws -> Result {
        let fx = try fixture(name)
        let graph = try KerasConverter().convert(modelAt: kerasDir.appendingPathComponent(fx.model),
                                                 architectureJSON: fx.config.map { kerasDir.appendingPathComponent($0) })
        let model = try CoreMLExporter.model(from: graph)
        let decoded = try Spec.Model.decode(try model.encode(), fileName: name + ".mlmodel")
        XCTAssertEqual(decoded, model, "\(name): encode → decode changed the spec")
        let imported = try CoreMLImporter.graph(from: decoded, fileName: name + ".mlmodel")
        var feeds: [String: NDArray] = [:]
        for i in fx.inputs {
            let v = try NPY.read(contentsOf: kerasDir.appendingPathComponent(i.file))
            guard let t = imported.inputs.first(where: { $0.name == i.name })?.type else {
                throw NSError(domain: "parity", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(name): input \(i.name) missing after import (have \(imported.inputs.map(\.name)))"])
            }
            feeds[i.name] = try coreMLLayout(v).reshaped(t.shape)
        }
        let got = try Model(graph: imported).prediction(from: feeds)
        var errors: [Float] = []
        for (o, irName) in zip(fx.outputs, graph.outputs) {
            let expected = try NPY.read(contentsOf: kerasDir.appendingPathComponent(o.file))
            guard let g = got[irName] else {
                throw NSError(domain: "parity", code: 2, userInfo: [NSLocalizedDescriptionKey: "\(name): output \(irName) missing (have \(got.keys.sorted()))"])
            }
            let ref = try coreMLLayout(expected)
            guard ref.count == g.count else { errors.append(.infinity); continue }
            let scale = max(1, ref.scalars.map(abs).max() ?? 0)
            errors.append(maxAbsDiff(g.scalars, ref.scalars) / scale)
        }
        return Result(model: decoded, imported: imported, errors: errors)
    }

    /// Layer type counts of a network, e.g. ["uniDirectionalLSTM": 2, …].
    static func layerTypes(_ m: Spec.Model) -> [String: Int] {
        var c: [String: Int] = [:]
        for l in m.neuralNetwork?.layers ?? [] { c[l.layer.typeName, default: 0] += 1 }
        return c
    }

    /// Round trip of `name`, asserting parity and the presence of `layers` in the written model.
    func check(_ name: String, layers: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Self.roundTrip(name)
        let types = Self.layerTypes(r.model)
        print("CoreMLRecurrentParityTests \(name): spec \(r.model.specificationVersion), \(r.model.neuralNetwork?.layers.count ?? 0) layers "
            + "\(types.filter { ["uniDirectionalLSTM", "biDirectionalLSTM", "gru", "simpleRecurrent", "embedding"].contains($0.key) }), "
            + "max rel err per output \(r.errors)")
        for (i, e) in r.errors.enumerated() {
            XCTAssertLessThanOrEqual(e, 1e-4, "\(name): output \(i) differs from Keras by \(e) (relative)", file: file, line: line)
        }
        for l in layers { XCTAssertNotNil(types[l], "\(name): no \(l) layer written (have \(types))", file: file, line: line) }
        XCTAssertEqual(r.model.specificationVersion, 1, "\(name): recurrent layers need spec 1 only", file: file, line: line)
    }

    // MARK: - Keras fixtures

    func testQuickDrawRNN() throws {
        try check("quickdraw_rnn_k2", layers: ["biDirectionalLSTM", "convolution"])
        try check("quickdraw_rnn_k3", layers: ["biDirectionalLSTM", "convolution"])
    }

    func testLSTMVariants() throws {
        try check("lstm_variants_k2", layers: ["uniDirectionalLSTM", "biDirectionalLSTM", "split"])
        try check("lstm_variants_k3", layers: ["uniDirectionalLSTM", "biDirectionalLSTM", "split"])
    }

    func testGRUVariantsIncludingResetAfter() throws {
        try check("gru_variants_k2", layers: ["gru", "innerProduct"])
        try check("gru_variants_k3", layers: ["gru", "innerProduct"])
    }

    func testSimpleRNN() throws {
        try check("simple_rnn_k2", layers: ["simpleRecurrent"])
        try check("simple_rnn_k3", layers: ["simpleRecurrent"])
    }

    func testBidirectionalMergeModes() throws {
        try check("bidirectional_merge_k2", layers: ["biDirectionalLSTM", "gru", "simpleRecurrent"])
        try check("bidirectional_merge_k3", layers: ["biDirectionalLSTM", "gru", "simpleRecurrent"])
    }

    func testStackedReturnState() throws {
        try check("stacked_return_state_k2", layers: ["uniDirectionalLSTM", "simpleRecurrent"])
        try check("stacked_return_state_k3", layers: ["uniDirectionalLSTM", "simpleRecurrent"])
    }

    func testConv1DCausalDilated() throws {
        try check("conv1d_causal_dilated_k2", layers: ["convolution"])
        try check("conv1d_causal_dilated_k3", layers: ["convolution"])
    }

    /// TimeDistributed(Conv2D → MaxPooling2D → Flatten → Dense) → LSTM: the frames input is
    /// declared flat [T·H·W·C], reshaped to [C, T·H, W] (frames stacked on H), and the per-step
    /// image layers run on the stack.
    func testTimeDistributed() throws {
        try check("time_distributed_k2", layers: ["uniDirectionalLSTM", "convolution", "pooling"])
        try check("time_distributed_k3", layers: ["uniDirectionalLSTM", "convolution", "pooling"])
    }

    /// TimeDistributed frames with a stride-2 convolution (the row period halves) and an average
    /// pooling, as the Keras frontend lowers them (transpose, reshape, op, reshape, transpose),
    /// run like the IR; a 'same'-padded convolution is refused.
    func testTimeDistributedStridedGraph() throws {
        let (t, h, w, c) = (3, 8, 6, 2)
        var nodes = [
            Node(name: "to_steps", op: .transpose(perm: [1, 0, 2, 3, 4]), inputs: ["frames"], outputs: ["a"]),
            Node(name: "merge", op: .reshape(targetShape: [h, w, c]), inputs: ["a"], outputs: ["b"]),
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .valid, outputChannels: 4, activation: .relu)),
                 inputs: ["b"], outputs: ["c"], weights: ["weight": randomConstant([4, c, 3, 3], seed: 1), "bias": randomConstant([4], seed: 2)]),
            Node(name: "pool", op: .pool2d(Pool2DAttributes(kind: .average, kernel: [2, 2], strides: [1, 1], padding: .valid)), inputs: ["c"], outputs: ["d"]),
            Node(name: "flat", op: .reshape(targetShape: [8]), inputs: ["d"], outputs: ["e"]),
            Node(name: "split", op: .reshape(targetShape: [1, 8]), inputs: ["e"], outputs: ["f"]),
            Node(name: "from_steps", op: .transpose(perm: [1, 0, 2]), inputs: ["f"], outputs: ["g"]),
            Node(name: "dense", op: .dense(DenseAttributes(outputChannels: 5)), inputs: ["g"], outputs: ["y"],
                 weights: ["weight": randomConstant([5, 8], seed: 3), "bias": randomConstant([5], seed: 4)]),
        ]
        var graph = Graph(inputs: [ValueInfo(name: "frames", type: TensorType([1, t, h, w, c]))], outputs: ["y"], nodes: nodes)
        let feeds = ["frames": try NDArray(shape: [1, t, h, w, c], scalars: randomFloats(count: t * h * w * c, seed: 5))]
        let (err, model) = try Self.irRoundTrip(graph, feeds: feeds, label: "td_strided.mlmodel")
        print("CoreMLRecurrentParityTests TimeDistributed strided graph: \(model.neuralNetwork?.layers.count ?? 0) layers, max rel err \(err)")
        XCTAssertLessThanOrEqual(err, 1e-5)
        guard case let .multiArray(array)? = model.description?.input.first?.type?.kind else { return XCTFail("frames is not a multi-array") }
        XCTAssertEqual(array.shape, [Int64(t * h * w * c)], "frames declared flat, in NHWC order")
        nodes[2].op = .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 4))
        graph = Graph(inputs: graph.inputs, outputs: ["c"], nodes: Array(nodes.prefix(3)))
        XCTAssertThrowsError(try CoreMLExporter.model(from: graph, options: .classicOnly)) { error in
            XCTAssertTrue("\(error)".contains("valid (unpadded) Conv2D"), "\(error)")
        }
    }

    /// Keras masks (Embedding mask_zero, Masking) through the .mlmodel: the mask computed with
    /// activation layers, the masked LSTMs / Bidirectional LSTM / reset-after GRU unrolled.
    func testMaskedTextClassifier() throws {
        try check("lstm_text_classifier_k2", layers: ["embedding", "innerProduct", "unary"])
        try check("lstm_text_classifier_k3", layers: ["embedding", "innerProduct", "unary"])
    }

    // MARK: - A real Core ML LSTM: Create ML's activity classifier

    /// miyakooti's motionClassifier (Create ML activity classifier, spec 1): concat → reshape →
    /// convolution 1×100 → ReLU → uniDirectionalLSTM(64 → 200) with h and c sliced from the
    /// required `stateIn` and concatenated into `stateOut` → innerProduct → batchnorm → ReLU →
    /// innerProduct → softmax. The imported graph runs like Core ML's layer equations evaluated
    /// here from the spec's weights (the LSTM step as NeuralNetwork.proto writes it, with its
    /// [−50, 50] pre-activation clip), for random windows and a random non-zero state.
    func testMotionClassifierLSTMMatchesCoreMLEquations() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/miyakooti_motionClassifier.mlmodel")
        let spec = try Spec.Model.load(contentsOf: url.path)
        let result = try CoreMLImporter.importModel(spec, fileName: url.lastPathComponent)
        let graph = result.graph
        XCTAssertEqual(Set(graph.inputs.map(\.name)), ["acceleration_x", "acceleration_y", "acceleration_z", "stateIn"])
        let lstmNode = try XCTUnwrap(graph.nodes.first { $0.name == "lstm" })
        guard case let .recurrent(a) = lstmNode.op else { return XCTFail("lstm is \(lstmNode.op.name)") }
        XCTAssertEqual(a.kind, .lstm)
        XCTAssertEqual(a.units, 200)
        XCTAssertTrue(a.initialStates, "h and c come from stateIn")
        XCTAssertTrue(a.returnState, "h and c go to stateOut")
        XCTAssertFalse(a.returnSequences)

        let layers = try XCTUnwrap(spec.neuralNetwork?.layers)
        func layer(_ n: String) -> Spec.NeuralNetworkLayer.Layer { layers.first { $0.name == n }!.layer }
        guard case let .convolution(conv) = layer("conv"), case let .uniDirectionalLSTM(lstm) = layer("lstm"),
              case let .innerProduct(d0) = layer("dense0"), case let .batchnorm(bn) = layer("bn"),
              case let .innerProduct(d1) = layer("dense1") else { return XCTFail("unexpected layer types") }
        let lw = try XCTUnwrap(lstm.weightParams)
        func f(_ w: Spec.WeightParams?) -> [Float] { w?.floats ?? [] }
        func matvec(_ w: [Float], _ x: [Float], rows: Int) -> [Float] {
            let cols = x.count
            return (0..<rows).map { r in (0..<cols).reduce(Float(0)) { $0 + w[r * cols + $1] * x[$1] } }
        }
        func clip(_ v: Float) -> Float { min(50, max(-50, v)) }
        func sigmoid(_ v: Float) -> Float { 1 / (1 + exp(-v)) }

        for trial in 0..<3 {
            let ax = randomFloats(count: 100, seed: UInt64(10 + trial)), ay = randomFloats(count: 100, seed: UInt64(20 + trial))
            let az = randomFloats(count: 100, seed: UInt64(30 + trial))
            let state = randomFloats(count: 400, seed: UInt64(40 + trial), in: -0.5...0.5)
            // concat + reshape [1, 3, 1, 100] + convolution 1×100 stride 100 (one output position) + ReLU.
            let features = ax + ay + az
            let cw = f(conv.weights), cb = f(conv.bias)
            let x: [Float] = (0..<64).map { o in max(0, cb[o] + (0..<300).reduce(Float(0)) { $0 + cw[o * 300 + $1] * features[$1] }) }
            // One LSTM step (Core ML: gates i, f, o with the gate activation, block input z with tanh).
            let h = Array(state[0..<200]), c = Array(state[200..<400])
            func gate(_ w: Spec.WeightParams?, _ r: Spec.WeightParams?, _ b: Spec.WeightParams?) -> [Float] {
                let wx = matvec(f(w), x, rows: 200), rh = matvec(f(r), h, rows: 200), bv = f(b)
                return (0..<200).map { clip(wx[$0] + rh[$0] + bv[$0]) }
            }
            let i = gate(lw.inputGateWeightMatrix, lw.inputGateRecursionMatrix, lw.inputGateBiasVector).map(sigmoid)
            let fg = gate(lw.forgetGateWeightMatrix, lw.forgetGateRecursionMatrix, lw.forgetGateBiasVector).map(sigmoid)
            let z = gate(lw.blockInputWeightMatrix, lw.blockInputRecursionMatrix, lw.blockInputBiasVector).map(tanh)
            let o = gate(lw.outputGateWeightMatrix, lw.outputGateRecursionMatrix, lw.outputGateBiasVector).map(sigmoid)
            let c2 = (0..<200).map { fg[$0] * c[$0] + i[$0] * z[$0] }
            let h2 = (0..<200).map { o[$0] * tanh(c2[$0]) }
            // Head: innerProduct + batchnorm + ReLU + innerProduct (no bias) + softmax.
            let y0 = zip(matvec(f(d0.weights), h2, rows: 128), f(d0.bias)).map(+)
            let (g, be, mu, va) = (f(bn.gamma), f(bn.beta), f(bn.mean), f(bn.variance))
            let y1 = (0..<128).map { max(0, g[$0] * (y0[$0] - mu[$0]) / (va[$0] + bn.epsilon).squareRoot() + be[$0]) }
            let logits = matvec(f(d1.weights), y1, rows: 2)
            let m = logits.max()!
            let e = logits.map { exp($0 - m) }
            let probs = e.map { $0 / e.reduce(0, +) }

            let got = try Model(graph: graph).prediction(from: [
                "acceleration_x": try NDArray(shape: [1, 100], scalars: ax), "acceleration_y": try NDArray(shape: [1, 100], scalars: ay),
                "acceleration_z": try NDArray(shape: [1, 100], scalars: az), "stateIn": try NDArray(shape: [1, 400], scalars: state),
            ])
            let stateOut = try XCTUnwrap(got["stateOut"]).scalars
            let p = try XCTUnwrap(got[graph.description.probabilitiesOutput ?? "labelProbability"]).scalars
            let stateErr = maxAbsDiff(stateOut, h2 + c2) / max(1, (h2 + c2).map(abs).max()!)
            let probErr = maxAbsDiff(p, probs)
            print("CoreMLRecurrentParityTests motionClassifier trial \(trial): stateOut max rel err \(stateErr), probabilities max err \(probErr) "
                + "(p = \(p), reference \(probs))")
            XCTAssertLessThanOrEqual(stateErr, 1e-4, "stateOut (h, c) differs from Core ML's LSTM equations")
            XCTAssertLessThanOrEqual(probErr, 1e-4, "class probabilities differ from Core ML's layer equations")
        }
    }

    // MARK: - IR-built graphs (no Keras reference): the imported model runs like the IR

    /// Runs `graph` and its exported-then-imported copy on `feeds`; returns the worst relative
    /// error over the graph's outputs and the written model.
    static func irRoundTrip(_ graph: Graph, feeds: [String: NDArray], label: String) throws -> (Float, Spec.Model) {
        let model = try Spec.Model.decode(try CoreMLExporter.model(from: graph).encode(), fileName: label)
        let imported = try CoreMLImporter.graph(from: model, fileName: label)
        let expected = try Model(graph: graph).prediction(from: feeds)
        var adapted: [String: NDArray] = [:]
        for (k, v) in feeds {
            let t = try XCTUnwrap(imported.inputs.first { $0.name == k }?.type, "\(label): input \(k)")
            adapted[k] = try coreMLLayout(v).reshaped(t.shape)
        }
        let got = try Model(graph: imported).prediction(from: adapted)
        var worst: Float = 0
        for o in graph.outputs {
            let ref = try coreMLLayout(try XCTUnwrap(expected[o]))
            let g = try XCTUnwrap(got[o], "\(label): output \(o)")
            worst = max(worst, maxAbsDiff(g.scalars, ref.scalars) / max(1, ref.scalars.map(abs).max() ?? 0))
        }
        return (worst, model)
    }

    /// Embedding of a token sequence → LSTM (sequences, initial states from graph inputs) →
    /// Bidirectional GRU with reset_after=True (ave) → last outputs: every sequence op the writer
    /// has, in one graph.
    func testEmbeddingLSTMAndResetAfterGRUGraph() throws {
        typealias R = RecurrentAttributes
        func w(_ kind: RecurrentKind, _ u: Int, _ d: Int, _ suffix: String = "", seed: UInt64, resetAfter: Bool = false) -> [String: ConstantTensor] {
            let g = kind.gateCount * u
            var out = ["kernel" + suffix: randomConstant([g, d], seed: seed), "recurrentKernel" + suffix: randomConstant([g, u], seed: seed + 1),
                       "bias" + suffix: randomConstant([g], seed: seed + 2)]
            if resetAfter { out["recurrentBias" + suffix] = randomConstant([g], seed: seed + 3) }
            return out
        }
        let emb = Node(name: "emb", op: .embedding(outputChannels: 4), inputs: ["tokens"], outputs: ["e"],
                       weights: ["weight": randomConstant([4, 10], seed: 1)])
        let lstm = Node(name: "lstm", op: .recurrent(R(kind: .lstm, units: 3, returnSequences: true, initialStates: true)),
                        inputs: ["e", "h0", "c0"], outputs: ["s"], weights: w(.lstm, 3, 4, seed: 10))
        var gw = w(.gru, 2, 3, seed: 20, resetAfter: true)
        gw.merge(w(.gru, 2, 3, "_backward", seed: 30, resetAfter: true)) { a, _ in a }
        let gru = Node(name: "bigru", op: .recurrent(R(kind: .gru, units: 2, returnSequences: true, returnState: true, resetAfter: true, bidirectional: .ave)),
                       inputs: ["s"], outputs: ["g", "gh_f", "gh_b"], weights: gw)
        let last = Node(name: "last", op: .recurrent(R(kind: .simpleRNN, units: 2, activation: .relu, goBackwards: true)),
                        inputs: ["g"], outputs: ["y"], weights: w(.simpleRNN, 2, 2, seed: 40))
        let graph = Graph(inputs: [ValueInfo(name: "tokens", type: TensorType([1, 6])), ValueInfo(name: "h0", type: TensorType([1, 3])),
                                   ValueInfo(name: "c0", type: TensorType([1, 3]))],
                          outputs: ["y", "g", "gh_f", "gh_b", "s"], nodes: [emb, lstm, gru, last])
        let feeds: [String: NDArray] = [
            "tokens": try NDArray(shape: [1, 6], scalars: [3, 0, 9, 1, 1, 7]),
            "h0": try NDArray(shape: [1, 3], scalars: randomFloats(count: 3, seed: 50)),
            "c0": try NDArray(shape: [1, 3], scalars: randomFloats(count: 3, seed: 51)),
        ]
        let (err, model) = try Self.irRoundTrip(graph, feeds: feeds, label: "embedding_lstm_gru.mlmodel")
        print("CoreMLRecurrentParityTests embedding+LSTM+GRU graph: \(model.neuralNetwork?.layers.count ?? 0) layers, max rel err \(err)")
        XCTAssertLessThanOrEqual(err, 1e-4)
        XCTAssertNotNil(Self.layerTypes(model)["embedding"])
        XCTAssertEqual(model.description?.input.filter { $0.type?.isOptional == true }.map(\.name), ["last_h_in"],
                       "the LSTM takes its states from graph inputs; the unrolled GRU has no optional states")
    }

    /// Masked recurrent layers of every kind and option, unrolled by the writer, run like the
    /// IR's reference kernel: Masking(0.5) on float features with steps 0, 2 and 5 equal to the
    /// mask value (step 0 masked: outputs before the first unmasked step), each variant fed the
    /// same mask; also `.applyMask` and the mask itself as graph outputs.
    func testMaskedRecurrentVariantsGraph() throws {
        typealias R = RecurrentAttributes
        let t = 7, d = 3
        func w(_ kind: RecurrentKind, _ u: Int, _ suffix: String = "", seed: UInt64) -> [String: ConstantTensor] {
            let g = kind.gateCount * u
            return ["kernel" + suffix: randomConstant([g, d], seed: seed), "recurrentKernel" + suffix: randomConstant([g, u], seed: seed + 1),
                    "bias" + suffix: randomConstant([g], seed: seed + 2), "recurrentBias" + suffix: randomConstant([g], seed: seed + 3)]
        }
        func bi(_ kind: RecurrentKind, _ u: Int, seed: UInt64) -> [String: ConstantTensor] {
            w(kind, u, seed: seed).merging(w(kind, u, "_backward", seed: seed + 10)) { a, _ in a }
        }
        let variants: [(String, R, [String: ConstantTensor], [String])] = [
            ("lstm_seq", R(kind: .lstm, units: 3, returnSequences: true, hasMask: true), w(.lstm, 3, seed: 10), []),
            ("lstm_back_state", R(kind: .lstm, units: 2, returnState: true, goBackwards: true, initialStates: true, hasMask: true),
             w(.lstm, 2, seed: 20), ["h0", "c0"]),
            ("lstm_init_seq", R(kind: .lstm, units: 2, returnSequences: true, initialStates: true, hasMask: true), w(.lstm, 2, seed: 25), ["h0", "c0"]),
            ("gru_after", R(kind: .gru, units: 2, returnSequences: true, resetAfter: true, hasMask: true), w(.gru, 2, seed: 30), []),
            ("gru_before", R(kind: .gru, units: 2, returnSequences: true, goBackwards: true, resetAfter: false, hasMask: true),
             w(.gru, 2, seed: 40).filter { !$0.key.hasPrefix("recurrentBias") }, []),
            ("rnn_last", R(kind: .simpleRNN, units: 2, activation: .relu, hasMask: true), w(.simpleRNN, 2, seed: 50), []),
            ("bi_lstm_sum_seq", R(kind: .lstm, units: 2, returnSequences: true, bidirectional: .sum, hasMask: true), bi(.lstm, 2, seed: 60), []),
            ("bi_gru_concat_last", R(kind: .gru, units: 2, returnState: true, resetAfter: true, bidirectional: .concat, hasMask: true),
             bi(.gru, 2, seed: 80), []),
        ]
        var nodes = [Node(name: "mask", op: .sequenceMask(value: 0.5), inputs: ["x"], outputs: ["m"]),
                     Node(name: "masked_x", op: .applyMask, inputs: ["x", "m"], outputs: ["xm"])]
        var outputs = ["m", "xm"]
        for (name, a, weights, states) in variants {
            var outs = [name]
            if a.returnState { outs += (0..<(a.kind.stateCount * a.directions)).map { "\(name)_state\($0)" } }
            nodes.append(Node(name: name, op: .recurrent(a), inputs: ["x"] + states + ["m"], outputs: outs, weights: weights))
            outputs += outs
        }
        let graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, t, d])), ValueInfo(name: "h0", type: TensorType([1, 2])),
                                   ValueInfo(name: "c0", type: TensorType([1, 2]))], outputs: outputs, nodes: nodes)
        var x = randomFloats(count: t * d, seed: 90)
        for step in [0, 2, 5] { for j in 0..<d { x[step * d + j] = 0.5 } }
        x[3 * d + 1] = 0.5  // one feature equal to the mask value does not mask the step
        let feeds: [String: NDArray] = [
            "x": try NDArray(shape: [1, t, d], scalars: x),
            "h0": try NDArray(shape: [1, 2], scalars: randomFloats(count: 2, seed: 91)),
            "c0": try NDArray(shape: [1, 2], scalars: randomFloats(count: 2, seed: 92)),
        ]
        let (err, model) = try Self.irRoundTrip(graph, feeds: feeds, label: "masked_recurrent.mlmodel")
        print("CoreMLRecurrentParityTests masked recurrent variants: \(model.neuralNetwork?.layers.count ?? 0) layers, max rel err \(err)")
        XCTAssertLessThanOrEqual(err, 1e-5)
        XCTAssertEqual(model.specificationVersion, 1)
        let types = Self.layerTypes(model)
        for l in ["uniDirectionalLSTM", "biDirectionalLSTM", "gru", "simpleRecurrent"] { XCTAssertNil(types[l], "masked layers are unrolled: \(l)") }
    }

    /// fp16 and 8-bit weights (MLPasses) through the recurrent layers: gate blocks stay fp16
    /// (spec 2) or are written as float32 blocks, and predictions equal the compressed IR's.
    func testCompressedRecurrentWeights() throws {
        let fx = try Self.fixture("lstm_variants_k2")
        let graph = try KerasConverter().convert(modelAt: Self.kerasDir.appendingPathComponent(fx.model), architectureJSON: nil)
        let x = try NPY.read(contentsOf: Self.kerasDir.appendingPathComponent(fx.inputs[0].file))
        for mode in [QuantizationMode.fp16, .linear(bits: 8)] {
            var opts = QuantizationOptions()
            opts.minWeights = 0
            let (q, _) = try WeightQuantizer(mode: mode, options: opts).quantize(graph)
            let (err, model) = try Self.irRoundTrip(q, feeds: [fx.inputs[0].name: x], label: "lstm_variants_\(mode).mlmodel")
            print("CoreMLRecurrentParityTests lstm_variants_k2 \(mode): spec \(model.specificationVersion), max rel err vs compressed IR \(err)")
            XCTAssertLessThanOrEqual(err, 1e-4, "\(mode)")
        }
    }
}
