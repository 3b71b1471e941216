import XCTest
@testable import KerasFrontend
import MLGraph

/// Conversion rules of the issue-6 sequence layers on tiny hand-made Keras files (in memory):
/// weight transposes and gate layout, GRU bias split, Conv1D causal padding, rejected options,
/// outputs of return_state, mask propagation, TimeDistributed lowerings.
final class SequenceConversionTests: XCTestCase {
    /// A Functional config with one input of `shape` (no batch) and the given layers chained.
    func chain(_ shape: [Int], _ layers: [(cls: String, name: String, config: String)], version: String = "2.15.0") -> String {
        var entries = [#"{"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, \#(shape.map(String.init).joined(separator: ", "))]}, "inbound_nodes": []}"#]
        var prev = "x"
        for l in layers {
            let cfg = l.config.isEmpty ? #""name": "\#(l.name)""# : #""name": "\#(l.name)", \#(l.config)"#
            entries.append(#"{"class_name": "\#(l.cls)", "name": "\#(l.name)", "config": {\#(cfg)}, "inbound_nodes": [[["\#(prev)", 0, 0, {}]]]}"#)
            prev = l.name
        }
        return #"{"class_name": "Functional", "keras_version": "\#(version)", "config": {"name": "m", "layers": [\#(entries.joined(separator: ", "))], "input_layers": [["x", 0, 0]], "output_layers": [["\#(prev)", 0, 0]]}}"#
    }

    func node(_ g: Graph, _ name: String) throws -> Node { try XCTUnwrap(g.nodes.first { $0.name == name }, "no node \(name) in \(g.nodes.map(\.name))") }

    func recurrent(_ n: Node) throws -> RecurrentAttributes {
        guard case let .recurrent(a) = n.op else { throw XCTSkip("node \(n.name) is \(n.op.name), not recurrent") }
        return a
    }

    /// Standard LSTM weights (input size d, units u) named as tf.keras stores them.
    func lstmWeights(_ d: Int, _ u: Int, prefix: String = "lstm_cell/", bias: Bool = true) -> [(String, [Int], [Float])] {
        var w: [(String, [Int], [Float])] = [(prefix + "kernel", [d, 4 * u], ramp(d * 4 * u, scale: 0.01)),
                                             (prefix + "recurrent_kernel", [u, 4 * u], ramp(u * 4 * u, scale: -0.01))]
        if bias { w.append((prefix + "bias", [4 * u], ramp(4 * u, scale: 0.1))) }
        return w
    }

    func assertUnsupported(_ config: String, weights: [String: [(String, [Int], [Float])]] = [:], version: String = "2.15.0",
                           containing text: String, file: StaticString = #filePath, line: UInt = #line) {
        let t = TinyKeras(config: config, version: version, weights: weights)
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file), file: file, line: line) { e in
            guard let k = e as? KerasConversionError else { return XCTFail("\(e)", file: file, line: line) }
            switch k {
            case .unsupportedConfiguration, .unsupportedLayers: break
            default: XCTFail("expected an unsupported-configuration error, got \(k)", file: file, line: line)
            }
            XCTAssertTrue("\(k)".contains(text), "error does not mention '\(text)': \(k)", file: file, line: line)
        }
    }

    // MARK: Weights and gate layout

    /// Kernel (D, 4u) → [4u, D] (rows = gate·units, gates i, f, c, o as Keras stores them), recurrent
    /// kernel (u, 4u) → [4u, u], bias used as stored: unit_forget_bias does not add 1 again.
    func testLSTMKernelsAreTransposedAndTheBiasIsUsedAsStored() throws {
        let (d, u) = (2, 3)
        let w = lstmWeights(d, u)
        let t = TinyKeras(config: chain([5, d], [("LSTM", "lstm", #""units": 3, "unit_forget_bias": true, "implementation": 2"#)]),
                          weights: ["lstm": w])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "lstm")
        let a = try recurrent(n)
        XCTAssertEqual(a.kind, .lstm); XCTAssertEqual(a.units, 3)
        XCTAssertEqual(a.activation, .tanh); XCTAssertEqual(a.recurrentActivation, .sigmoid)
        XCTAssertFalse(a.returnSequences); XCTAssertFalse(a.hasMask); XCTAssertNil(a.bidirectional)
        let k = try XCTUnwrap(n.weights["kernel"]), r = try XCTUnwrap(n.weights["recurrentKernel"])
        XCTAssertEqual(k.shape, [4 * u, d]); XCTAssertEqual(r.shape, [4 * u, u])
        for row in 0..<(4 * u) {
            for i in 0..<d { XCTAssertEqual(k.floats()[row * d + i], w[0].2[i * 4 * u + row]) }
            for j in 0..<u { XCTAssertEqual(r.floats()[row * u + j], w[1].2[j * 4 * u + row]) }
        }
        XCTAssertEqual(n.weights["bias"]?.floats(), w[2].2, "the forget-gate block must not get +1 again")
        XCTAssertNil(n.weights["recurrentBias"])
        XCTAssertEqual(g.tensorTypes["lstm"]?.shape, [1, 3])
    }

    /// GRU reset_after=True stores a (2, 3u) bias: row 0 input bias, row 1 recurrent bias. A config
    /// without reset_after (Keras < 2.3) is decided by the stored bias shape.
    func testGRUResetAfterBiasIsSplit() throws {
        let (d, u) = (3, 2)
        let bias = ramp(2 * 3 * u, scale: 0.5)
        for cfg in [#""units": 2, "reset_after": true"#, #""units": 2"#] {
            let t = TinyKeras(config: chain([4, d], [("GRU", "gru", cfg)]),
                              weights: ["gru": [("gru_cell/kernel", [d, 3 * u], ramp(d * 3 * u)), ("gru_cell/recurrent_kernel", [u, 3 * u], ramp(u * 3 * u)),
                                                ("gru_cell/bias", [2, 3 * u], bias)]])
            let n = try node(try KerasConverter().convert(file: t.file), "gru")
            XCTAssertTrue(try recurrent(n).resetAfter, cfg)
            XCTAssertEqual(n.weights["bias"]?.floats(), Array(bias[0..<(3 * u)]), cfg)
            XCTAssertEqual(n.weights["recurrentBias"]?.floats(), Array(bias[(3 * u)...]), cfg)
        }
        let t = TinyKeras(config: chain([4, d], [("GRU", "gru", #""units": 2, "reset_after": false"#)]),
                          weights: ["gru": [("gru_cell/kernel", [d, 3 * u], ramp(d * 3 * u)), ("gru_cell/recurrent_kernel", [u, 3 * u], ramp(u * 3 * u)),
                                            ("gru_cell/bias", [3 * u], ramp(3 * u))]])
        let n = try node(try KerasConverter().convert(file: t.file), "gru")
        XCTAssertFalse(try recurrent(n).resetAfter)
        XCTAssertEqual(n.weights["bias"]?.floats(), ramp(3 * u)); XCTAssertNil(n.weights["recurrentBias"])
    }

    /// hard_sigmoid is 0.2x + 0.5 before Keras 3 and x/6 + 0.5 from Keras 3 on; Keras < 2.3 files
    /// without recurrent_activation default to hard_sigmoid.
    func testHardSigmoidFollowsTheKerasVersion() throws {
        let cases: [(String, String, Activation)] = [
            ("2.15.0", #""units": 2, "recurrent_activation": "hard_sigmoid""#, .hardSigmoid(alpha: 0.2, beta: 0.5)),
            ("3.5.0", #""units": 2, "recurrent_activation": "hard_sigmoid""#, .hardSigmoid(alpha: 1.0 / 6.0, beta: 0.5)),
            ("2.1.6", #""units": 2"#, .hardSigmoid(alpha: 0.2, beta: 0.5)),
            ("2.15.0", #""units": 2"#, .sigmoid),
        ]
        for (v, cfg, expected) in cases {
            let t = TinyKeras(config: chain([3, 2], [("LSTM", "lstm", cfg)], version: v), version: v, weights: ["lstm": lstmWeights(2, 2)])
            XCTAssertEqual(try recurrent(try node(try KerasConverter().convert(file: t.file), "lstm")).recurrentActivation, expected, "\(v) \(cfg)")
        }
    }

    /// `implementation` (1 or 2) and `unroll` change neither the weights nor the result: same graph.
    func testImplementationAndUnrollGiveTheSameGraph() throws {
        func graph(_ extra: String) throws -> Graph {
            let t = TinyKeras(config: chain([4, 2], [("LSTM", "lstm", #""units": 2, \#(extra)"#)]), weights: ["lstm": lstmWeights(2, 2)])
            return try KerasConverter().convert(file: t.file)
        }
        let a = try graph(#""implementation": 1, "unroll": true"#), b = try graph(#""implementation": 2, "unroll": false"#)
        XCTAssertEqual(a.nodes, b.nodes)
    }

    /// Bidirectional: forward weights from `forward_…`, backward ones from `backward_…` (suffix
    /// "_backward"), whatever their order in the file.
    func testBidirectionalWeightsAreSplitByDirection() throws {
        let fw = lstmWeights(2, 2, prefix: "forward_lstm/lstm_cell/"), bw = lstmWeights(2, 2, prefix: "backward_lstm/lstm_cell/").map { ($0.0, $0.1, $0.2.map { $0 + 100 }) }
        let inner = #"{"class_name": "LSTM", "config": {"name": "lstm", "units": 2, "return_sequences": true}}"#
        let t = TinyKeras(config: chain([4, 2], [("Bidirectional", "bi", #""merge_mode": "ave", "layer": \#(inner)"#)]), weights: ["bi": bw + fw])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "bi")
        let a = try recurrent(n)
        XCTAssertEqual(a.bidirectional, .ave); XCTAssertTrue(a.returnSequences); XCTAssertFalse(a.goBackwards)
        XCTAssertEqual(n.weights["bias"]?.floats(), fw[2].2)
        XCTAssertEqual(n.weights["bias_backward"]?.floats(), bw[2].2)
        XCTAssertEqual(n.weights["kernel_backward"]?.floats().first, bw[0].2.first)
        XCTAssertEqual(g.tensorTypes["bi"]?.shape, [1, 4, 2])
    }

    // MARK: Rejected options

    func testStatefulTimeMajorAndMergeModeNoneAreRejected() {
        assertUnsupported(chain([4, 2], [("LSTM", "lstm", #""units": 2, "stateful": true"#)]), weights: ["lstm": lstmWeights(2, 2)], containing: "stateful")
        assertUnsupported(chain([4, 2], [("GRU", "gru", #""units": 2, "time_major": true"#)]),
                          weights: ["gru": [("kernel", [2, 6], ramp(12)), ("recurrent_kernel", [2, 6], ramp(12)), ("bias", [2, 6], ramp(12))]],
                          containing: "time_major")
        let inner = #"{"class_name": "LSTM", "config": {"name": "lstm", "units": 2}}"#
        assertUnsupported(chain([4, 2], [("Bidirectional", "bi", #""merge_mode": null, "layer": \#(inner)"#)]),
                          weights: ["bi": lstmWeights(2, 2, prefix: "forward_lstm/") + lstmWeights(2, 2, prefix: "backward_lstm/")],
                          containing: "merge_mode None")
        assertUnsupported(chain([4, 2], [("SimpleRNN", "rnn", #""units": 2, "activation": "softmax""#)]),
                          weights: ["rnn": [("kernel", [2, 2], ramp(4)), ("recurrent_kernel", [2, 2], ramp(4)), ("bias", [2], ramp(2))]],
                          containing: "softmax")
    }

    // MARK: return_state

    /// The states become extra outputs of the node (`<layer>:<i>` when read, `<layer>__state<i>`
    /// when not); without any state read, no state outputs at all.
    func testReturnStateOutputs() throws {
        func config(_ outputs: String) -> String {
            #"{"class_name": "Functional", "keras_version": "2.15.0", "config": {"name": "m", "layers": [{"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4, 2]}, "inbound_nodes": []}, {"class_name": "LSTM", "name": "lstm", "config": {"name": "lstm", "units": 2, "return_state": true}, "inbound_nodes": [[["x", 0, 0, {}]]]}], "input_layers": [["x", 0, 0]], "output_layers": \#(outputs)}}"#
        }
        let both = try KerasConverter().convert(file: TinyKeras(config: config(#"[["lstm", 0, 0], ["lstm", 0, 1]]"#), weights: ["lstm": lstmWeights(2, 2)]).file)
        let n = try node(both, "lstm")
        XCTAssertTrue(try recurrent(n).returnState)
        XCTAssertEqual(n.outputs.count, 3)
        XCTAssertEqual(n.outputs.last, "lstm__state1")
        XCTAssertEqual(both.outputs, ["lstm", n.outputs[1]])  // "lstm:1", renamed after the Keras output
        let one = try KerasConverter().convert(file: TinyKeras(config: config(#"[["lstm", 0, 0]]"#), weights: ["lstm": lstmWeights(2, 2)]).file)
        XCTAssertFalse(try recurrent(try node(one, "lstm")).returnState)
    }

    // MARK: Conv1D and 1-D layers

    /// Causal padding is (k−1)·dilation zeros on the left only; kernel (k, C, F) → [F, C, 1, k].
    func testConv1DCausalPaddingAndKernelLayout() throws {
        let (k, c, f) = (3, 2, 4)
        let kernel = ramp(k * c * f)
        let t = TinyKeras(config: chain([10, c], [("Conv1D", "conv", #""filters": 4, "kernel_size": [3], "dilation_rate": [2], "padding": "causal", "use_bias": false"#)]),
                          weights: ["conv": [("kernel", [k, c, f], kernel)]])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "conv")
        guard case let .conv2d(a) = n.op else { return XCTFail("\(n.op)") }
        XCTAssertEqual(a.padding, .explicit(top: 0, bottom: 0, left: 4, right: 0))
        XCTAssertEqual(a.kernel, [1, 3]); XCTAssertEqual(a.dilations, [1, 2]); XCTAssertEqual(a.strides, [1, 1])
        let w = try XCTUnwrap(n.weights["weight"])
        XCTAssertEqual(w.shape, [f, c, 1, k])
        for o in 0..<f { for i in 0..<c { for x in 0..<k { XCTAssertEqual(w.floats()[(o * c + i) * k + x], kernel[(x * c + i) * f + o]) } } }
        XCTAssertEqual(g.tensorTypes["conv"]?.shape, [1, 10, 4])
        XCTAssertEqual(Conv1DConverter.padding("causal", kernel: 5, dilation: 3), .explicit(top: 0, bottom: 0, left: 12, right: 0))
        XCTAssertEqual(Conv1DConverter.padding("same", kernel: 5, dilation: 3), .same)
    }

    func testOneDimensionalPaddingCroppingUpsamplingShapes() throws {
        let t = TinyKeras(config: chain([6, 3], [("ZeroPadding1D", "pad", #""padding": [2, 1]"#), ("Cropping1D", "crop", #""cropping": [1, 3]"#),
                                                 ("UpSampling1D", "up", #""size": 3"#), ("MaxPooling1D", "pool", #""pool_size": [2], "strides": [2], "padding": "same""#),
                                                 ("GlobalAveragePooling1D", "gap", #""keepdims": true"#)]))
        let g = try KerasConverter().convert(file: t.file)
        XCTAssertEqual(g.tensorTypes["pad"]?.shape, [1, 9, 3])
        XCTAssertEqual(g.tensorTypes["crop"]?.shape, [1, 5, 3])
        XCTAssertEqual(g.tensorTypes["up"]?.shape, [1, 15, 3])
        XCTAssertEqual(g.tensorTypes["pool"]?.shape, [1, 8, 3])
        XCTAssertEqual(g.tensorTypes["gap"]?.shape, [1, 1, 3])
    }

    // MARK: Embedding and masks

    func testEmbeddingWeightIsTransposed() throws {
        let table = ramp(5 * 3)
        let t = TinyKeras(config: chain([4], [("Embedding", "emb", #""input_dim": 5, "output_dim": 3"#)]), weights: ["emb": [("embeddings", [5, 3], table)]])
        let g = try KerasConverter().convert(file: t.file)
        let w = try XCTUnwrap(try node(g, "emb").weights["weight"])
        XCTAssertEqual(w.shape, [3, 5])
        for d in 0..<3 { for v in 0..<5 { XCTAssertEqual(w.floats()[d * 5 + v], table[v * 3 + d]) } }
        XCTAssertEqual(g.tensorTypes["emb"]?.shape, [1, 4, 3])
    }

    /// Masking → Dropout → Dense → LSTM: the LSTM reads Masking's mask; Masking's own output is
    /// x·mask.
    func testMaskFlowsThroughDropoutAndDenseToTheLSTM() throws {
        let t = TinyKeras(config: chain([5, 3], [("Masking", "masking", #""mask_value": -1.0"#), ("Dropout", "drop", #""rate": 0.5"#),
                                                 ("Dense", "dense", #""units": 2"#), ("LSTM", "lstm", #""units": 2, "return_sequences": true"#),
                                                 ("LSTM", "lstm2", #""units": 2"#)]),
                          weights: ["dense": [("kernel", [3, 2], ramp(6)), ("bias", [2], [0, 0])], "lstm": lstmWeights(2, 2), "lstm2": lstmWeights(2, 2)])
        let g = try KerasConverter().convert(file: t.file)
        let mask = try node(g, "masking__mask")
        XCTAssertEqual(mask.op, .sequenceMask(value: -1)); XCTAssertEqual(mask.inputs, ["x"])
        XCTAssertEqual(try node(g, "masking").op, .applyMask)
        for name in ["lstm", "lstm2"] {
            let n = try node(g, name)
            XCTAssertTrue(try recurrent(n).hasMask, name)
            XCTAssertEqual(n.inputs.last, "masking__mask", name)
        }
    }

    /// Embedding(mask_zero) → LSTM(return_sequences) → LSTM: the first consumer computes the
    /// mask (sequenceMask(0) of the indices), the second reuses it.
    func testEmbeddingMaskIsComputedOnceByItsFirstConsumer() throws {
        let t = TinyKeras(config: chain([6], [("Embedding", "emb", #""input_dim": 7, "output_dim": 2, "mask_zero": true"#),
                                              ("LSTM", "lstm", #""units": 2, "return_sequences": true"#), ("LSTM", "lstm2", #""units": 2"#)]),
                          weights: ["emb": [("embeddings", [7, 2], ramp(14))], "lstm": lstmWeights(2, 2), "lstm2": lstmWeights(2, 2)])
        let g = try KerasConverter().convert(file: t.file)
        let m = try node(g, "lstm__mask")
        XCTAssertEqual(m.op, .sequenceMask(value: 0)); XCTAssertEqual(m.inputs, ["x"])
        XCTAssertEqual(try node(g, "lstm").inputs, ["emb", "lstm__mask"])
        XCTAssertEqual(try node(g, "lstm2").inputs, ["lstm", "lstm__mask"])
        XCTAssertEqual(g.nodes.filter { if case .sequenceMask = $0.op { return true } else { return false } }.count, 1)
    }

    /// tf.keras Concatenate of two masked sequences: the GRU reads the AND (minimum) of both masks.
    func testConcatenatedMasksAreCombined() throws {
        let config = #"{"class_name": "Functional", "keras_version": "2.15.0", "config": {"name": "m", "layers": [{"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 4, 2]}, "inbound_nodes": []}, {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 4, 1]}, "inbound_nodes": []}, {"class_name": "Masking", "name": "ma", "config": {"name": "ma"}, "inbound_nodes": [[["a", 0, 0, {}]]]}, {"class_name": "Masking", "name": "mb", "config": {"name": "mb"}, "inbound_nodes": [[["b", 0, 0, {}]]]}, {"class_name": "Concatenate", "name": "cat", "config": {"name": "cat", "axis": -1}, "inbound_nodes": [[["ma", 0, 0, {}], ["mb", 0, 0, {}]]]}, {"class_name": "GRU", "name": "gru", "config": {"name": "gru", "units": 2, "reset_after": false}, "inbound_nodes": [[["cat", 0, 0, {}]]]}], "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["gru", 0, 0]]}}"#
        let t = TinyKeras(config: config, weights: ["gru": [("kernel", [3, 6], ramp(18)), ("recurrent_kernel", [2, 6], ramp(12)), ("bias", [6], ramp(6))]])
        let g = try KerasConverter().convert(file: t.file)
        let m = try node(g, "cat__mask")
        XCTAssertEqual(m.op, .elementwise(.minimum)); XCTAssertEqual(m.inputs, ["ma__mask", "mb__mask"])
        XCTAssertEqual(try node(g, "gru").inputs, ["cat", "cat__mask"])
    }

    /// Keras 1 recurrent configs (output_dim, one W, U, b per gate in the order i, c, f, o)
    /// convert: the gates are concatenated in Keras 2's order i, f, c, o (Keras 2's loader).
    func testKeras1RecurrentLayerGatesAreReordered() throws {
        var w: [(String, [Int], [Float])] = []
        let offset: [String: Float] = ["i": 0, "c": 100, "f": 200, "o": 300]
        for g in ["i", "c", "f", "o"] {
            w += [("lstm_1_W_\(g)", [2, 3], ramp(6).map { $0 + offset[g]! }), ("lstm_1_U_\(g)", [3, 3], ramp(9).map { $0 + offset[g]! }),
                  ("lstm_1_b_\(g)", [3], ramp(3).map { $0 + offset[g]! })]
        }
        let t = TinyKeras(config: chain([4, 2], [("LSTM", "lstm_1", #""output_dim": 3, "inner_activation": "hard_sigmoid""#)], version: "1.2.2"),
                          version: "1.2.2", weights: ["lstm_1": w])
        let n = try node(try KerasConverter().convert(file: t.file), "lstm_1")
        XCTAssertEqual(try recurrent(n).units, 3)
        // IR kernel [4·units, D]: row g·3 + j, column d = W_g[d, j] = d·3 + j + offset(g).
        var expected: [Float] = []
        for g in ["i", "f", "c", "o"] { for j in 0..<3 { for d in 0..<2 { expected.append(Float(d * 3 + j) + offset[g]!) } } }
        XCTAssertEqual(n.weights["kernel"]?.floats(), expected)
        XCTAssertEqual(n.weights["bias"]?.floats(), ["i", "f", "c", "o"].flatMap { g in ramp(3).map { $0 + offset[g]! } })
    }

    /// Conv1D drops the mask (as Keras): the LSTM after it is unmasked.
    func testConv1DDropsTheMask() throws {
        let t = TinyKeras(config: chain([5, 3], [("Masking", "masking", ""), ("Conv1D", "conv", #""filters": 2, "kernel_size": 1"#), ("LSTM", "lstm", #""units": 2"#)]),
                          weights: ["conv": [("kernel", [1, 3, 2], ramp(6)), ("bias", [2], [0, 0])], "lstm": lstmWeights(2, 2)])
        let g = try KerasConverter().convert(file: t.file)
        XCTAssertFalse(try recurrent(try node(g, "lstm")).hasMask)
    }

    /// Masked GlobalAveragePooling1D (a masked mean in Keras) is rejected; unmasked it converts.
    func testMaskedGlobalAveragePoolingIsRejected() {
        assertUnsupported(chain([5, 3], [("Masking", "masking", ""), ("GlobalAveragePooling1D", "gap", "")]), containing: "mask")
    }

    /// Bidirectional with a mask and return_sequences: Keras zeroes the masked steps, an
    /// applyMask follows the node, and the output carries the mask on.
    func testMaskedBidirectionalSequenceIsZeroedAtMaskedSteps() throws {
        let inner = #"{"class_name": "GRU", "config": {"name": "gru", "units": 2, "return_sequences": true, "reset_after": false}}"#
        let gw: (String) -> [(String, [Int], [Float])] = { p in
            [(p + "gru_cell/kernel", [3, 6], ramp(18, scale: 0.1)), (p + "gru_cell/recurrent_kernel", [2, 6], ramp(12, scale: 0.1)), (p + "gru_cell/bias", [6], ramp(6))]
        }
        let t = TinyKeras(config: chain([5, 3], [("Masking", "masking", ""), ("Bidirectional", "bi", #""merge_mode": "concat", "layer": \#(inner)"#),
                                                 ("LSTM", "lstm", #""units": 2"#)]),
                          weights: ["bi": gw("forward_gru/") + gw("backward_gru/"), "lstm": lstmWeights(4, 2)])
        let g = try KerasConverter().convert(file: t.file)
        XCTAssertTrue(try recurrent(try node(g, "bi")).hasMask)
        let z = try node(g, "bi__zero_masked")
        XCTAssertEqual(z.op, .applyMask); XCTAssertEqual(z.inputs, ["bi__unmasked", "masking__mask"]); XCTAssertEqual(z.outputs, ["bi"])
        XCTAssertEqual(try node(g, "lstm").inputs.last, "masking__mask")
    }

    // MARK: TimeDistributed

    /// TimeDistributed(Dense) is one dense node on the rank-3 tensor; TimeDistributed(Conv2D) runs
    /// the convolution on the steps as a batch between transposes and reshapes.
    func testTimeDistributedLowerings() throws {
        let dense = #"{"class_name": "Dense", "config": {"name": "dense", "units": 2}}"#
        let t1 = TinyKeras(config: chain([4, 3], [("TimeDistributed", "td", #""layer": \#(dense)"#)]), weights: ["td": [("kernel", [3, 2], ramp(6)), ("bias", [2], [1, 2])]])
        let g1 = try KerasConverter().convert(file: t1.file)
        XCTAssertEqual(g1.nodes.map(\.op.name), ["dense"])
        XCTAssertEqual(g1.tensorTypes["td"]?.shape, [1, 4, 2])

        let conv = #"{"class_name": "Conv2D", "config": {"name": "conv", "filters": 2, "kernel_size": [3, 3], "padding": "valid"}}"#
        let t2 = TinyKeras(config: chain([4, 5, 6, 1], [("TimeDistributed", "td", #""layer": \#(conv)"#)]),
                           weights: ["td": [("kernel", [3, 3, 1, 2], ramp(18)), ("bias", [2], [1, 2])]])
        let g2 = try KerasConverter().convert(file: t2.file)
        XCTAssertEqual(g2.nodes.map(\.name), ["td__to_steps", "td__merge_steps", "td", "td__split_steps", "td__from_steps"])
        XCTAssertEqual(g2.tensorTypes["td__merge_steps"]?.shape, [4, 5, 6, 1])
        XCTAssertEqual(g2.tensorTypes["td"]?.shape, [1, 4, 3, 4, 2])
        XCTAssertEqual(try node(g2, "td").weights["bias"]?.floats(), [1, 2])
    }
}
