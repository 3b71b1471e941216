// MARK: elementwise math ops — issue 9 acceptance: a Keras-like graph using every activation
// (exact GELU included), the unary functions Core ML's classic `unary` layer has, clip, and
// binary ops, exported to .mlmodel, imported back and run at parity with the original graph.
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class ElementwiseMathExportParityTests: XCTestCase {
    static let activations: [Activation] = [
        .linear(alpha: 2, beta: -1), .relu, .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0),
        .clippedReLU(maxValue: 1.5, negativeSlope: 0.1, threshold: 0.2), .leakyReLU(alpha: 0.3), .elu(alpha: 1.2), .selu, .sigmoid,
        .hardSigmoid(alpha: 0.2, beta: 0.5), .hardSigmoid(alpha: 1.0 / 6.0, beta: 0.5), .tanh, .softplus, .softsign, .swish,
        .gelu(approximate: false), .gelu(approximate: true), .exponential, .thresholdedReLU(theta: 0.4),
        .mish, .hardSwish, .parametricSoftplus(alpha: 1.5, beta: 0.75), .scaledTanh(alpha: 1.7159, beta: 0.6667), .geluSigmoid, .logSigmoid,
    ]

    /// x [1, 4, 5, 3] → conv (fused exact GELU) → one output per activation; a second conv with
    /// fused hardSwish; unary / clip / binary nodes on a positive tensor.
    static func graph() -> Graph {
        var nodes: [Node] = [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 6, activation: .gelu(approximate: false))),
                 inputs: ["x"], outputs: ["h"], weights: ["weight": randomConstant([6, 3, 3, 3], in: -2 ... 2), "bias": randomConstant([6], seed: 3)]),
            Node(name: "conv_hs", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 4, activation: .hardSwish)),
                 inputs: ["h"], outputs: ["hs"], weights: ["weight": randomConstant([4, 6, 1, 1], seed: 5, in: -3 ... 3)]),
            Node(name: "pos", op: .activation(.sigmoid), inputs: ["h"], outputs: ["p"]),
        ]
        var outputs = ["hs"]
        for (i, a) in activations.enumerated() {
            nodes.append(Node(name: "act\(i)", op: .activation(a), inputs: ["h"], outputs: ["a\(i)"]))
            outputs.append("a\(i)")
        }
        // p = sigmoid(h) ∈ (0, 1): every domain below is valid.
        let unaries: [UnaryAttributes] = [
            UnaryAttributes(.sqrt, scale: 2, shift: 0.5), UnaryAttributes(.rsqrt, epsilon: 1e-3, scale: 1.5, shift: 0.25),
            UnaryAttributes(.rsqrt), UnaryAttributes(.inverse, epsilon: 1e-4, shift: 0.5), UnaryAttributes(.inverse, scale: -2, shift: -0.1),
            UnaryAttributes(.power, alpha: 2.5, scale: 3), UnaryAttributes(.exp, scale: -1.5, shift: 0.25), UnaryAttributes(.log, epsilon: 1e-6, scale: 4),
            UnaryAttributes(.log), UnaryAttributes(.abs, scale: 3, shift: -1.5), UnaryAttributes(.threshold, alpha: 0.4, scale: 1.2),
            UnaryAttributes(.neg, scale: 2, shift: 1), UnaryAttributes(.square, shift: -0.5), UnaryAttributes(.exp2, scale: 3, shift: -1),
        ]
        for (i, u) in unaries.enumerated() {
            nodes.append(Node(name: "unary\(i)", op: .unary(u), inputs: ["p"], outputs: ["u\(i)"]))
            outputs.append("u\(i)")
        }
        let more: [Node] = [
            Node(name: "clip", op: .clip(alpha: -0.5, beta: 0.75), inputs: ["h"], outputs: ["c0"]),
            Node(name: "clip_lo", op: .clip(alpha: -0.25, beta: .infinity), inputs: ["h"], outputs: ["c1"]),
            Node(name: "clip_hi", op: .clip(alpha: -.infinity, beta: 0.3), inputs: ["h"], outputs: ["c2"]),
            Node(name: "add", op: .binary(.add), inputs: ["h", "p"], outputs: ["b0"]),
            Node(name: "sub", op: .binary(.sub), inputs: ["h", "p"], outputs: ["b1"]),
            Node(name: "mul", op: .binary(.mul), inputs: ["h", "p"], outputs: ["b2"]),
            Node(name: "div", op: .binary(.realDiv), inputs: ["h", "p"], outputs: ["b3"]),
            Node(name: "max", op: .binary(.maximum), inputs: ["h", "p"], outputs: ["b4"]),
            Node(name: "min", op: .binary(.minimum), inputs: ["h", "p"], outputs: ["b5"]),
            Node(name: "addc", op: .binary(.add), inputs: ["h"], outputs: ["k0"], weights: ["y": floatConstant([1], [0.75])]),
            Node(name: "subc", op: .binary(.sub), inputs: ["h"], outputs: ["k1"], weights: ["y": floatConstant([1], [0.75])]),
            Node(name: "mulc", op: .binary(.mul), inputs: ["h"], outputs: ["k2"], weights: ["y": floatConstant([1, 1], [-1.25])]),
            Node(name: "divc", op: .binary(.realDiv), inputs: ["h"], outputs: ["k3"], weights: ["y": floatConstant([1], [4])]),
            Node(name: "maxc", op: .binary(.maximum), inputs: ["h"], outputs: ["k4"], weights: ["y": floatConstant([1], [0.1])]),
            Node(name: "minc", op: .binary(.minimum), inputs: ["h"], outputs: ["k5"], weights: ["y": floatConstant([1], [0.1])]),
            Node(name: "powc", op: .binary(.pow), inputs: ["p"], outputs: ["k6"], weights: ["y": floatConstant([1], [1.5])]),
        ]
        nodes += more
        outputs += more.flatMap(\.outputs)
        return Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 5, 3]))], outputs: outputs, nodes: nodes)
    }

    func testEveryActivationAndMathOpRoundTripsThroughCoreMLAtParity() throws {
        let g = Self.graph()
        let x = try NDArray(shape: [1, 4, 5, 3], scalars: randomFloats(count: 60, seed: 11, in: -2 ... 2))
        let (err, model, imported) = try CoreMLExportParityTests.roundTrip(g, feeds: ["x": x], label: "elementwise_math")
        XCTAssertLessThanOrEqual(err, 1e-4, "Core ML round trip differs from the IR by \(err) (relative)")
        XCTAssertEqual(model.specificationVersion, 1, "spec-1 layers only")
        let types = Set(model.neuralNetwork?.layers.map(\.layer.typeName) ?? [])
        XCTAssertTrue(types.contains("unary"), "\(types)")
        // The importer maps Core ML unary layers to the IR's unary op (exact GELU's INVERSE among them).
        let kinds = Set(imported.nodes.map(\.op.kind))
        XCTAssertTrue(kinds.contains(.unary), "\(kinds)")
        let fns = Set(imported.nodes.compactMap { n -> UnaryFunction? in if case let .unary(a) = n.op { return a.function } else { return nil } })
        XCTAssertTrue(fns.isSuperset(of: [.inverse, .rsqrt, .sqrt, .log, .power, .exp, .abs, .threshold]), "\(fns)")
    }

    func testUnaryFunctionsWithoutAClassicLayerAreRefusedWithAReason() throws {
        for f: UnaryFunction in [.sin, .cos, .tan, .erf, .floor, .ceil, .round, .sign] {
            let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4]))], outputs: ["y"],
                          nodes: [Node(name: "u", op: .unary(UnaryAttributes(f)), inputs: ["x"], outputs: ["y"])])
            XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly), "\(f)") { error in
                XCTAssertTrue("\(error)".contains("rank-N"), "\(f): \(error)")
            }
            XCTAssertEqual(try CoreMLExporter.model(from: g).specificationVersion, 4, "\(f): the rank-N writer has the layer")
        }
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4]))], outputs: ["y"],
                      nodes: [Node(name: "m", op: .binary(.mod), inputs: ["x"], outputs: ["y"], weights: ["y": floatConstant([1], [2])])])
        XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly))
    }
}
