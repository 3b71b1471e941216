import XCTest
@testable import MLGraph
import TestSupport

// MARK: residual add fusion (issue 12): the fuse_residual_add pass on small graphs (structure);
// values: MLRuntimeTests/FuseResidualAddDifferentialTests.

final class FuseResidualAddTests: XCTestCase {
    /// x [1, 3, 3, 2] → conv 1×1 (2 ch) → c; out = add(c, x) or add(x, c) → optional activation.
    func convAdd(convFirst: Bool = true, activation: Activation? = nil, after: Op? = nil, outputs: [String] = ["y"],
                 addOp: Op = .elementwise(.add)) throws -> Graph {
        var nodes = [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2, activation: activation)),
                 inputs: ["x"], outputs: ["c"], weights: ["weight": floatConstant([2, 2, 1, 1], [1, 2, 3, 4])]),
            Node(name: "add", op: addOp, inputs: convFirst ? ["c", "x"] : ["x", "c"], outputs: [after == nil ? "y" : "s"]),
        ]
        if let after { nodes.append(Node(name: "act", op: after, inputs: ["s"], outputs: ["y"])) }
        return try typedGraph([1, 3, 3, 2], outputs: outputs, nodes)
    }

    func testFusesTheAddAndTheActivationAfterItInEitherOperandOrder() throws {
        for convFirst in [true, false] {
            for addOp in [Op.elementwise(.add), .binary(.add)] {
                let original = try convAdd(convFirst: convFirst, activation: .relu, after: .clip(alpha: 0, beta: 6), addOp: addOp)
                var g = original
                XCTAssertTrue(FuseResidualAdd().apply(to: &g))
                XCTAssertEqual(g.nodes.map(\.name), ["conv"])
                XCTAssertEqual(g.nodes[0].inputs, ["x", "x"])
                XCTAssertEqual(g.nodes[0].outputs, ["y"])
                guard case let .conv2d(a) = g.nodes[0].op else { return XCTFail("\(g.nodes[0].op)") }
                XCTAssertEqual(a.activation, .relu, "the convolution's own activation stays before the sum")
                XCTAssertEqual(a.residual, ResidualAdd(activation: .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)))
                XCTAssertNil(g.tensorTypes["c"]); XCTAssertNil(g.tensorTypes["s"])
                XCTAssertEqual(g.tensorTypes["y"], original.tensorTypes["y"])
                XCTAssertNoThrow(try g.verify())
                var again = g
                XCTAssertFalse(FuseResidualAdd().apply(to: &again), "idempotent")
                XCTAssertEqual(again, g)
            }
        }
    }

    func testWithoutActivationAfterTheAddAndMovesTheConvolutionAfterALaterOperand() throws {
        // x → a (relu) ; conv(x) → c ; b = tanh(a) is computed after the conv; y = add(c, b):
        // the fused convolution must run where the add was, after b.
        let original = try typedGraph([1, 2, 2, 2], outputs: ["y"], [
            Node(name: "a", op: .activation(.relu), inputs: ["x"], outputs: ["a"]),
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2)),
                 inputs: ["x"], outputs: ["c"], weights: ["weight": floatConstant([2, 2, 1, 1], [1, 2, 3, 4])]),
            Node(name: "b", op: .activation(.tanh), inputs: ["a"], outputs: ["b"]),
            Node(name: "add", op: .elementwise(.add), inputs: ["c", "b"], outputs: ["y"]),
        ])
        var g = original
        XCTAssertTrue(FuseResidualAdd().apply(to: &g))
        XCTAssertEqual(g.nodes.map(\.name), ["a", "b", "conv"])
        XCTAssertEqual(g.nodes[2].inputs, ["x", "b"])
        guard case let .conv2d(a) = g.nodes[2].op else { return XCTFail("\(g.nodes[2].op)") }
        XCTAssertEqual(a.residual, ResidualAdd(activation: nil))
        XCTAssertNoThrow(try g.verify())
    }

    func testLeavesSharedOutputsBroadcastsAndFusedConvolutionsAlone() throws {
        // The conv's output is a graph output / read twice; the add's output is a graph output
        // (the activation after it is then not absorbed, the add still is).
        for original in [try convAdd(outputs: ["y", "c"]),
                         try typedGraph([1, 3, 3, 2], outputs: ["y"], [
                             Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2)),
                                  inputs: ["x"], outputs: ["c"], weights: ["weight": floatConstant([2, 2, 1, 1], [1, 2, 3, 4])]),
                             Node(name: "add", op: .elementwise(.add), inputs: ["c", "c"], outputs: ["y"])]),
                         // broadcast: bias-like [2] operand
                         try typedGraph([1, 3, 3, 2], outputs: ["y"], [
                             Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2)),
                                  inputs: ["x"], outputs: ["c"], weights: ["weight": floatConstant([2, 2, 1, 1], [1, 2, 3, 4])]),
                             Node(name: "pool", op: .globalPool2d(kind: .average, keepDims: true), inputs: ["x"], outputs: ["p"]),
                             Node(name: "add", op: .elementwise(.add), inputs: ["c", "p"], outputs: ["y"])]),
                         // not an add
                         try convAdd(addOp: .elementwise(.multiply))] {
            var g = original
            XCTAssertFalse(FuseResidualAdd().apply(to: &g))
            XCTAssertEqual(g, original)
        }
        var g = try convAdd(after: .activation(.relu), outputs: ["y", "s"])
        XCTAssertTrue(FuseResidualAdd().apply(to: &g))
        XCTAssertEqual(g.nodes.map(\.name), ["conv", "act"])
        guard case let .conv2d(a) = g.nodes[0].op else { return XCTFail("\(g.nodes[0].op)") }
        XCTAssertEqual(a.residual, ResidualAdd(activation: nil))
    }

    func testGraphsWithFlexibleInputShapesStayUnfused() throws {
        var original = try convAdd()
        original.description.inputs = [FeatureDescription(name: "x", shapeFlexibility: .enumerated([[1, 3, 3, 2], [1, 5, 5, 2]]))]
        var g = original
        XCTAssertFalse(FuseResidualAdd().apply(to: &g))
        XCTAssertEqual(g, original)
    }

    func testFuseActivationLeavesAResidualConvolutionAlone() throws {
        var g = try convAdd()
        XCTAssertTrue(FuseResidualAdd().apply(to: &g))
        g.nodes.append(Node(name: "relu", op: .activation(.relu), inputs: ["y"], outputs: ["z"]))
        g.outputs = ["z"]
        try g.inferShapes()
        let before = g
        XCTAssertFalse(FuseActivation().apply(to: &g), "an activation after the sum is not the conv's activation")
        XCTAssertEqual(g, before)
    }

    func testShapeInferenceAndEncodingOfTheResidualAttribute() throws {
        var g = try convAdd(after: .activation(.relu))
        XCTAssertTrue(FuseResidualAdd().apply(to: &g))
        let node = g.nodes[0]
        // Attribute encoding round trip (bundles) keeps the residual; plain convs have no key.
        let encoded = node.op.attributes
        XCTAssertNotNil(encoded["residual"])
        XCTAssertEqual(try OpKind.conv2d.decodeOp(encoded), node.op)
        guard case var .conv2d(plain) = node.op else { return XCTFail() }
        plain.residual = nil
        XCTAssertNil(Op.conv2d(plain).attributes["residual"])
        // A residual of another shape, or a missing residual input, is refused.
        var bad = g
        bad.nodes[0].inputs = ["x"]
        XCTAssertThrowsError(try bad.inferShapes())
        var wrong = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 3, 2])), ValueInfo(name: "r", type: TensorType([1, 3, 3, 1]))],
                          outputs: ["y"], nodes: [node])
        wrong.nodes[0].inputs = ["x", "r"]
        XCTAssertThrowsError(try wrong.inferShapes()) { XCTAssertTrue("\($0)".contains("residual"), "\($0)") }
    }
}
