import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// Hand-checked cases of `Op.recurrent`. SimpleRNN cases use linear / relu activations so the
// expected values are exact and worked out in the comments. LSTM and GRU cases (units 2, D 2,
// T 3) compare against values from an independent NumPy implementation written in Keras'
// convention (x @ kernel with kernel [D, G·U]; `backend.rnn` masking; Bidirectional reversing
// the backward sequence and zeroing masked outputs when returning sequences); the weights below
// are written in that Keras layout and transposed to the IR's [G·U, D].
//
// Every case runs twice: the reference kernel (the oracle) and the default configuration (oneDNN
// RNN primitive or the batched-gates kernel, whichever takes the node).

final class RecurrentTests: XCTestCase {
    // MARK: SimpleRNN (exact)

    /// W = 2, R = 0.5, b = 1 on x = 1, 2, 3:
    /// h₁ = 2·1 + 1 = 3; h₂ = 2·2 + 0.5·3 + 1 = 6.5; h₃ = 2·3 + 0.5·6.5 + 1 = 10.25.
    func testSimpleRNNSequenceAndLast() throws {
        for act: Activation in [.identity, .relu] {
            try check(rnn(act, returnSequences: true), [x123], rnnWeights, [[3, 6.5, 10.25]])
            try check(rnn(act), [x123], rnnWeights, [[10.25]])
            try check(rnn(act, returnState: true), [x123], rnnWeights, [[10.25], [10.25]])
        }
    }

    /// go_backwards reads 3, 2, 1: h = 2·3 + 1 = 7; 2·2 + 0.5·7 + 1 = 8.5; 2·1 + 0.5·8.5 + 1 = 7.25;
    /// the sequence stays in processing order.
    func testSimpleRNNGoBackwards() throws {
        for act: Activation in [.identity, .relu] {
            try check(rnn(act, returnSequences: true, goBackwards: true), [x123], rnnWeights, [[7, 8.5, 7.25]])
            try check(rnn(act, goBackwards: true), [x123], rnnWeights, [[7.25]])
        }
    }

    /// Mask [1, 0, 1]: step 2 keeps h = 3 and repeats the output; step 3: 2·3 + 0.5·3 + 1 = 8.5.
    /// Mask [0, 1, 1]: output 0 (no previous output), h stays 0; then 2·2 + 1 = 5; 2·3 + 2.5 + 1 = 9.5.
    /// Mask [1, 1, 0]: the last step repeats 6.5, which is also the final state.
    func testSimpleRNNMasking() throws {
        let a = rnn(.identity, returnSequences: true, returnState: true, hasMask: true)
        try check(a, [x123, nd([1, 3], [1, 0, 1])], rnnWeights, [[3, 3, 8.5], [8.5]])
        try check(a, [x123, nd([1, 3], [0, 1, 1])], rnnWeights, [[0, 5, 9.5], [9.5]])
        try check(a, [x123, nd([1, 3], [1, 1, 0])], rnnWeights, [[3, 6.5, 6.5], [6.5]])
        try check(a, [x123, nd([1, 3], [0, 0, 0])], rnnWeights, [[0, 0, 0], [0]])
        // go_backwards reads the mask reversed: steps 3 (used), 2 (masked), 1 (used).
        var back = a
        back.goBackwards = true
        try check(back, [x123, nd([1, 3], [1, 0, 1])], rnnWeights, [[7, 7, 2 + 3.5 + 1], [6.5]])
    }

    /// Initial state h₀ = 2: h₁ = 2 + 1 + 1 = 4, h₂ = 4 + 2 + 1 = 7, h₃ = 6 + 3.5 + 1 = 10.5.
    func testSimpleRNNInitialState() throws {
        var a = rnn(.relu, returnSequences: true)
        a.initialStates = true
        try check(a, [x123, nd([1, 1], [2])], rnnWeights, [[4, 7, 10.5]])
    }

    /// Forward (W 2, R 0.5, b 1): 3, 6.5, 10.25. Backward (W 1, R 1, no bias) reads 3, 2, 1:
    /// 3, 5, 6 — reversed to input order 6, 5, 3 before merging.
    func testBidirectionalSimpleRNNMergeModes() throws {
        var w = rnnWeights
        w["kernel_backward"] = const([1, 1], [1])
        w["recurrentKernel_backward"] = const([1, 1], [1])
        let cases: [(BidirectionalMerge, [Float], [Float])] = [
            (.concat, [3, 6, 6.5, 5, 10.25, 3], [10.25, 6]),
            (.sum, [9, 11.5, 13.25], [16.25]),
            (.mul, [18, 32.5, 30.75], [61.5]),
            (.ave, [4.5, 5.75, 6.625], [8.125]),
        ]
        for act: Activation in [.identity, .relu] {
            for (merge, sequence, last) in cases {
                try check(rnn(act, returnSequences: true, bidirectional: merge), [x123], w, [sequence], label: "\(merge) seq")
                try check(rnn(act, returnState: true, bidirectional: merge), [x123], w, [last, [10.25], [6]],
                          label: "\(merge) last")
            }
        }
    }

    /// Bidirectional with a mask: returning sequences, Keras zeroes masked outputs (forward
    /// 3, 0, 8.5; backward reads t = 2, 1, 0: 3, masked (0, state 3), 1 + 3 = 4 → 4, 0, 3).
    /// Returning the last output, masked steps repeat it: mask [1, 1, 0] gives forward 6.5 and
    /// backward (t = 2 masked → 0, then 2, then 1 + 2 = 3) 3.
    func testBidirectionalMasking() throws {
        var w = rnnWeights
        w["kernel_backward"] = const([1, 1], [1])
        w["recurrentKernel_backward"] = const([1, 1], [1])
        try check(rnn(.identity, returnSequences: true, bidirectional: .concat, hasMask: true),
                  [x123, nd([1, 3], [1, 0, 1])], w, [[3, 4, 0, 0, 8.5, 3]])
        try check(rnn(.identity, bidirectional: .concat, hasMask: true), [x123, nd([1, 3], [1, 1, 0])], w, [[6.5, 3]])
    }

    /// Batch rows are independent (row 2 is row 1 scaled by 0 → h = 1, 1.5, 1.75 from the bias).
    func testSimpleRNNBatch() throws {
        let x = nd([2, 3, 1], [1, 2, 3, 0, 0, 0])
        try check(rnn(.relu, returnSequences: true), [x], rnnWeights, [[3, 6.5, 10.25, 1, 1.5, 1.75]])
    }

    // MARK: LSTM (NumPy oracle, units 2)

    func testLSTMSigmoidAndHardSigmoid() throws {
        try check(lstm(returnSequences: true, returnState: true), [x3], lstmWeights, [
            [0.11573453, 0.265417367, 0.0249610908, 0.0354536762, -0.119832735, 0.202823423],
            [-0.119832735, 0.202823423], [-0.328352271, 0.329974209],
        ])
        try check(lstm(.hardSigmoid(alpha: 0.2, beta: 0.5), returnSequences: true, returnState: true), [x3], lstmWeights, [
            [0.116262023, 0.253634838, 0.0253164769, 0.0383686315, -0.122146006, 0.191327639],
            [-0.122146006, 0.191327639], [-0.315232616, 0.323218334],
        ])
        try check(lstm(), [x3], lstmWeights, [[-0.119832735, 0.202823423]])
    }

    func testLSTMGoBackwardsHardSigmoid() throws {
        try check(lstm(.hardSigmoid(alpha: 0.2, beta: 0.5), returnSequences: true, returnState: true, goBackwards: true),
                  [x3], lstmWeights, [
                      [-0.126545135, 0.151785863, -0.0652655258, -0.0114705466, 0.0892124118, 0.244724738],
                      [0.0892124118, 0.244724738], [0.21351286, 0.515103647],
                  ])
    }

    func testLSTMMaskInMiddleAndAtStart() throws {
        let a = lstm(returnSequences: true, returnState: true, hasMask: true)
        try check(a, [x3, nd([1, 3], [1, 0, 1])], lstmWeights, [
            [0.11573453, 0.265417367, 0.11573453, 0.265417367, -0.082291749, 0.376338802],
            [-0.082291749, 0.376338802], [-0.224657054, 0.661020498],
        ])
        try check(a, [x3, nd([1, 3], [0, 1, 1])], lstmWeights, [
            [0, 0, 0.00556380522, -0.0682480418, -0.118955624, 0.0743061614],
            [-0.118955624, 0.0743061614], nil,
        ])
    }

    func testLSTMInitialStates() throws {
        var a = lstm(returnSequences: true, returnState: true)
        a.initialStates = true
        try check(a, [x3, nd([1, 2], [0.5, -0.25]), nd([1, 2], [-1, 0.75])], lstmWeights, [
            [-0.120848094, 0.382841623, -0.0718296538, 0.0911644869, -0.144244876, 0.264651535],
            [-0.144244876, 0.264651535], [-0.420790346, 0.44526313],
        ])
    }

    func testBidirectionalLSTMEachMergeMode() throws {
        let w = bilstmWeights
        let sequences: [(BidirectionalMerge, [Float])] = [
            (.concat, [0.11573453, 0.265417367, -0.00629232036, 0.0898572844, 0.0249610908, 0.0354536762,
                       0.0549681882, 0.2133829, -0.119832735, 0.202823423, 0.0893502076, 0.0738857217]),
            (.sum, [0.10944221, 0.355274651, 0.079929279, 0.248836576, -0.0304825277, 0.276709144]),
            (.mul, [-0.00072823874, 0.0238496838, 0.00137206594, 0.00756520825, -0.0107070798, 0.014985755]),
            (.ave, [0.0547211049, 0.177637326, 0.0399646395, 0.124418288, -0.0152412638, 0.138354572]),
        ]
        for (merge, expected) in sequences {
            try check(lstm(returnSequences: true, bidirectional: merge), [x3], w, [expected], label: "bilstm \(merge)")
        }
        // Last output and states: forward h, c then backward h, c.
        try check(lstm(returnState: true, bidirectional: .concat), [x3], w, [
            [-0.119832735, 0.202823423, -0.00629232036, 0.0898572844],
            [-0.119832735, 0.202823423], [-0.328352271, 0.329974209],
            [-0.00629232036, 0.0898572844], [-0.0111721702, 0.17989407],
        ])
    }

    func testBidirectionalLSTMMasked() throws {
        try check(lstm(returnSequences: true, bidirectional: .concat, hasMask: true), [x3, nd([1, 3], [1, 0, 1])],
                  bilstmWeights, [[0.11573453, 0.265417367, -0.00881889516, 0.0288525923, 0, 0, 0, 0,
                                   -0.082291749, 0.376338802, 0.0893502076, 0.0738857217]])
        try check(lstm(bidirectional: .concat, hasMask: true), [x3, nd([1, 3], [1, 1, 0])],
                  bilstmWeights, [[0.0249610908, 0.0354536762, -0.0413267186, 0.0766275174]])
    }

    // MARK: GRU (NumPy oracle, units 2)

    func testGRUResetAfterAndBefore() throws {
        var after = RecurrentAttributes(kind: .gru, units: 2, returnSequences: true, resetAfter: true)
        try check(after, [x3], gruWeights(recurrentBias: true), [
            [0.2194718, 0.167465449, 0.0967610393, 0.114018586, -0.121271439, 0.22172332],
        ])
        after.resetAfter = false
        try check(after, [x3], gruWeights(recurrentBias: false), [
            [0.174468021, 0.204824215, 0.0533152714, 0.145238453, -0.163249607, 0.301382191],
        ])
    }

    func testGRUHardSigmoidGoBackwards() throws {
        let a = RecurrentAttributes(kind: .gru, units: 2, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5),
                                    returnSequences: true, goBackwards: true)
        try check(a, [x3], gruWeights(recurrentBias: false), [
            [-0.209449331, 0.207952721, -0.0755139366, 0.136623717, 0.124997205, 0.336616066],
        ])
    }

    func testGRUReluHardSigmoidMasked() throws {
        let a = RecurrentAttributes(kind: .gru, units: 2, activation: .relu, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5),
                                    returnSequences: true, resetAfter: true, hasMask: true)
        try check(a, [x3, nd([1, 3], [1, 0, 1])], gruWeights(recurrentBias: true), [
            [0.25599, 0.23712, 0.25599, 0.23712, 0.155986739, 0.322390923],
        ])
    }

    // MARK: Fixtures

    /// x = 1, 2, 3 as [1, 3, 1].
    private let x123 = nd([1, 3, 1], [1, 2, 3])
    private let rnnWeights: [String: ConstantTensor] = [
        "kernel": const([1, 1], [2]), "recurrentKernel": const([1, 1], [0.5]), "bias": const([1], [1]),
    ]

    private func rnn(_ act: Activation, returnSequences: Bool = false, returnState: Bool = false, goBackwards: Bool = false,
                     bidirectional: BidirectionalMerge? = nil, hasMask: Bool = false) -> RecurrentAttributes {
        RecurrentAttributes(kind: .simpleRNN, units: 1, activation: act, returnSequences: returnSequences,
                            returnState: returnState, goBackwards: goBackwards, bidirectional: bidirectional, hasMask: hasMask)
    }

    private func lstm(_ gate: Activation = .sigmoid, returnSequences: Bool = false, returnState: Bool = false,
                      goBackwards: Bool = false, bidirectional: BidirectionalMerge? = nil, hasMask: Bool = false) -> RecurrentAttributes {
        RecurrentAttributes(kind: .lstm, units: 2, recurrentActivation: gate, returnSequences: returnSequences,
                            returnState: returnState, goBackwards: goBackwards, bidirectional: bidirectional, hasMask: hasMask)
    }

    /// x [1, 3, 2].
    private let x3 = nd([1, 3, 2], [1, 0.5, -2, 0.25, 0.5, -1])

    /// Keras-layout matrices [D, G·U] (rows = input features).
    private static let kerasKernel: [[Float]] = [[0.5, -0.3, 0.8, 0.2, 0.1, 0.4, -0.6, 0.3],
                                                  [-0.2, 0.6, 0.1, -0.5, 0.7, 0.2, 0.3, -0.4]]
    private static let kerasRecurrent: [[Float]] = [[0.1, 0.4, -0.6, 0.3, 0.2, -0.1, 0.5, 0.25],
                                                     [0.3, -0.2, 0.2, 0.1, -0.4, 0.6, -0.3, 0.15]]
    private static let kerasBias: [Float] = [0.1, 1.0, 0.0, -0.2, 0.05, 0.5, 0.1, 0.0]

    private var lstmWeights: [String: ConstantTensor] {
        ["kernel": transposed(Self.kerasKernel), "recurrentKernel": transposed(Self.kerasRecurrent),
         "bias": const([8], Self.kerasBias)]
    }

    /// Backward direction: kernel × −0.5, recurrent kernel with its columns reversed, bias × 0.5.
    private var bilstmWeights: [String: ConstantTensor] {
        var w = lstmWeights
        w["kernel_backward"] = transposed(Self.kerasKernel.map { $0.map { $0 * -0.5 } })
        w["recurrentKernel_backward"] = transposed(Self.kerasRecurrent.map { $0.reversed() })
        w["bias_backward"] = const([8], Self.kerasBias.map { $0 * 0.5 })
        return w
    }

    /// The first 3·U = 6 columns of the LSTM matrices; reset_after adds a recurrent bias.
    private func gruWeights(recurrentBias: Bool) -> [String: ConstantTensor] {
        var w = ["kernel": transposed(Self.kerasKernel.map { Array($0.prefix(6)) }),
                 "recurrentKernel": transposed(Self.kerasRecurrent.map { Array($0.prefix(6)) }),
                 "bias": const([6], Array(Self.kerasBias.prefix(6)))]
        if recurrentBias { w["recurrentBias"] = const([6], [-0.1, 0.2, 0.3, -0.05, 0.15, -0.2]) }
        return w
    }

    /// A Keras [rows, cols] matrix as the IR's [cols, rows] constant.
    private func transposed(_ m: [[Float]]) -> ConstantTensor {
        let rows = m.count, cols = m[0].count
        return const([cols, rows], (0..<cols).flatMap { c in (0..<rows).map { m[$0][c] } })
    }

    /// Runs `a` with the reference kernels and with the default (optimized) configuration and
    /// compares every output with `expected` (nil = not checked).
    private func check(_ a: RecurrentAttributes, _ inputs: [NDArray], _ weights: [String: ConstantTensor],
                       _ expected: [[Float]?], label: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        for referenceOnly in [true, false] {
            let outs = try runRecurrent(a, inputs, weights: weights, referenceOnly: referenceOnly)
            XCTAssertEqual(outs.count, expected.count, file: file, line: line)
            for (i, (got, want)) in zip(outs, expected).enumerated() {
                guard let want else { continue }
                let d = maxAbsDiff(got.scalars, want)
                XCTAssertLessThanOrEqual(d, 2e-6, "\(label) \(referenceOnly ? "reference" : "optimized") output \(i): got \(got.scalars), want \(want)",
                                         file: file, line: line)
            }
        }
    }
}

/// Runs a one-node recurrent graph and returns all its outputs (y, then the states).
func runRecurrent(_ a: RecurrentAttributes, _ inputs: [NDArray], weights: [String: ConstantTensor],
                  referenceOnly: Bool, threadCount: Int = 2) throws -> [NDArray] {
    let names = inputs.indices.map { "x\($0)" }
    let outputs = ["y"] + (a.returnState ? (0..<(a.kind.stateCount * a.directions)).map { "state\($0)" } : [])
    let graph = Graph(inputs: zip(names, inputs).map { ValueInfo(name: $0, type: TensorType($1.shape)) },
                      outputs: outputs,
                      nodes: [Node(name: "rnn", op: .recurrent(a), inputs: names, outputs: outputs, weights: weights)])
    let model = try Model(graph: graph, configuration: .init(threadCount: threadCount, referenceOnly: referenceOnly))
    let result = try model.prediction(from: Dictionary(uniqueKeysWithValues: zip(names, inputs)))
    return outputs.map { result[$0]! }
}
