import XCTest
@testable import MLGraph
import TestSupport

// MARK: inference passes (issue 12): positive and negative tests of each pass on small graphs.
// Numeric equivalence (oneDNN fused vs reference fused vs unfused) is in
// MLRuntimeTests/InferencePassDifferentialTests and KerasFrontendTests/InferencePassFixtureTests.

/// Builds and types a graph with input x of `shape`.
func typedGraph(_ shape: [Int], outputs: [String], _ nodes: [Node]) throws -> Graph {
    var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType(shape))], outputs: outputs, nodes: nodes)
    try g.inferShapes()
    return g
}

/// gamma [4, 2], beta [0.5, 0], mean [1, 2], variance [3, 15], ε 1: scale s = [2, 0.5], exact in float32.
func exactBatchNorm(_ input: String, _ output: String, axis: Int = 3) -> Node {
    Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: axis, epsilon: 1)), inputs: [input], outputs: [output],
         weights: ["gamma": floatConstant([2], [4, 2]), "beta": floatConstant([2], [0.5, 0]),
                   "mean": floatConstant([2], [1, 2]), "variance": floatConstant([2], [3, 15])])
}

final class FoldBatchNormIntoConvTests: XCTestCase {
    /// x [1, 3, 3, 1] → conv 1×1 (2 channels, weight [2, 3], bias [1, −1]) → c → bn → y.
    func convBN(activation: Activation? = nil, outputs: [String] = ["y"], extraReader: Bool = false) throws -> Graph {
        var nodes = [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2, activation: activation)),
                 inputs: ["x"], outputs: ["c"], weights: ["weight": floatConstant([2, 1, 1, 1], [2, 3]), "bias": floatConstant([2], [1, -1])]),
            exactBatchNorm("c", "y"),
        ]
        if extraReader { nodes.append(Node(name: "other", op: .activation(.relu), inputs: ["c"], outputs: ["z"])) }
        return try typedGraph([1, 3, 3, 1], outputs: outputs + (extraReader ? ["z"] : []), nodes)
    }

    func testFoldsIntoConvolutionWeightsAndBias() throws {
        let original = try convBN()
        var g = original
        XCTAssertTrue(FoldBatchNormIntoConv().apply(to: &g))
        XCTAssertEqual(g.nodes.map(\.name), ["conv"])
        XCTAssertEqual(g.nodes[0].outputs, ["y"])
        // s = [2, 0.5]; weight s·W = [4, 1.5]; bias s·(b − mean) + beta = [2·0 + 0.5, 0.5·(−3) + 0] = [0.5, −1.5].
        XCTAssertEqual(g.nodes[0].weights["weight"]?.floats(), [4, 1.5])
        XCTAssertEqual(g.nodes[0].weights["bias"]?.floats(), [0.5, -1.5])
        XCTAssertEqual(g.nodes[0].weights["weight"]?.shape, [2, 1, 1, 1])
        XCTAssertNil(g.tensorTypes["c"])
        XCTAssertEqual(g.tensorTypes["y"], original.tensorTypes["y"])
        XCTAssertNoThrow(try g.verify())
        // Idempotent.
        let once = g
        XCTAssertFalse(FoldBatchNormIntoConv().apply(to: &g))
        XCTAssertEqual(g, once)
    }

    func testFoldsIntoDenseWithoutBias() throws {
        var g = try typedGraph([3, 1], outputs: ["y"], [
            Node(name: "dense", op: .dense(DenseAttributes(outputChannels: 2)), inputs: ["x"], outputs: ["d"],
                 weights: ["weight": floatConstant([2, 1], [2, 3])]),
            exactBatchNorm("d", "y", axis: 1),
        ])
        XCTAssertTrue(FoldBatchNormIntoConv().apply(to: &g))
        XCTAssertEqual(g.nodes.map(\.name), ["dense"])
        XCTAssertEqual(g.nodes[0].weights["weight"]?.floats(), [4, 1.5])
        // bias: s·(0 − mean) + beta = [−2 + 0.5, −1 + 0].
        XCTAssertEqual(g.nodes[0].weights["bias"]?.floats(), [-1.5, -1])
    }

    func testFoldsIntoTransposedConvolutionAlongItsOutputChannelAxis() throws {
        // deconv weight [Cin 2, Cout 2, 1, 1] = [[1, 2], [3, 4]]: output channel j is axis 1.
        var g = try typedGraph([1, 2, 2, 2], outputs: ["y"], [
            Node(name: "deconv", op: .deconv2d(Deconv2DAttributes(kernel: [1, 1], strides: [1, 1], padding: .valid, outputChannels: 2)),
                 inputs: ["x"], outputs: ["d"], weights: ["weight": floatConstant([2, 2, 1, 1], [1, 2, 3, 4])]),
            exactBatchNorm("d", "y"),
        ])
        XCTAssertTrue(FoldBatchNormIntoConv().apply(to: &g))
        XCTAssertEqual(g.nodes[0].weights["weight"]?.floats(), [2, 1, 6, 2])
        XCTAssertEqual(g.nodes[0].weights["bias"]?.floats(), [-1.5, -1])
    }

    func testLeavesOutputsSharedTensorsFusedActivationsAndCompressedWeightsAlone() throws {
        var fp16 = try convBN()
        let w = fp16.nodes[0].weights["weight"]!
        fp16.nodes[0].weights["weight"] = try ConstantTensor(shape: w.shape, encoding: .float16,
                                                             storage: .copying([0x00, 0x40, 0x00, 0x42]))  // 2, 3 in binary16
        for original in [try convBN(activation: .relu), try convBN(outputs: ["y", "c"]), try convBN(extraReader: true), fp16] {
            var g = original
            XCTAssertFalse(FoldBatchNormIntoConv().apply(to: &g))
            XCTAssertEqual(g, original)
        }
    }
}

final class FuseActivationTests: XCTestCase {
    func convThen(_ op: Op, conv activation: Activation? = nil, outputs: [String] = ["y"]) throws -> Graph {
        try typedGraph([1, 3, 3, 1], outputs: outputs, [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2, activation: activation)),
                 inputs: ["x"], outputs: ["c"], weights: ["weight": floatConstant([2, 1, 1, 1], [2, -3])]),
            Node(name: "act", op: op, inputs: ["c"], outputs: ["y"]),
        ])
    }

    func testFusesActivationsAndReLU6ClipIntoTheProducer() throws {
        let cases: [(Op, Activation)] = [
            (.activation(.relu), .relu), (.activation(.gelu(approximate: true)), .gelu(approximate: true)),
            (.activation(.hardSwish), .hardSwish), (.activation(.leakyReLU(alpha: 0.1)), .leakyReLU(alpha: 0.1)),
            (.clip(alpha: 0, beta: 6), .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)),
        ]
        for (op, expected) in cases {
            let original = try convThen(op)
            var g = original
            XCTAssertTrue(FuseActivation().apply(to: &g), "\(op)")
            XCTAssertEqual(g.nodes.map(\.name), ["conv"])
            XCTAssertEqual(g.nodes[0].outputs, ["y"])
            guard case let .conv2d(a) = g.nodes[0].op else { return XCTFail("\(g.nodes[0].op)") }
            XCTAssertEqual(a.activation, expected)
            XCTAssertEqual(g.tensorTypes["y"], original.tensorTypes["y"])
            XCTAssertNil(g.tensorTypes["c"])
            XCTAssertNoThrow(try g.verify())
        }
    }

    func testFusesIntoDense() throws {
        var g = try typedGraph([3, 4], outputs: ["y"], [
            Node(name: "dense", op: .dense(DenseAttributes(outputChannels: 2)), inputs: ["x"], outputs: ["d"],
                 weights: ["weight": floatConstant([2, 4], [1, 2, 3, 4, 5, 6, 7, 8])]),
            Node(name: "act", op: .activation(.swish), inputs: ["d"], outputs: ["y"]),
        ])
        XCTAssertTrue(FuseActivation().apply(to: &g))
        guard case let .dense(a) = g.nodes[0].op else { return XCTFail("\(g.nodes[0].op)") }
        XCTAssertEqual(a.activation, .swish)
        XCTAssertEqual(g.nodes.count, 1)
    }

    func testLeavesGeneralClipFusedProducersAndOutputsAlone() throws {
        for original in [try convThen(.clip(alpha: -1, beta: 1)), try convThen(.activation(.relu), conv: .tanh),
                         try convThen(.activation(.relu), outputs: ["y", "c"]), try convThen(.softmax(axis: -1))] {
            var g = original
            XCTAssertFalse(FuseActivation().apply(to: &g))
            XCTAssertEqual(g, original)
        }
    }
}

final class RemoveNoOpNodesTests: XCTestCase {
    func testRemovesIdentitiesNoOpLayoutNodesAndDeadNodes() throws {
        let original = try typedGraph([1, 2, 3, 4], outputs: ["y"], [
            Node(name: "dropout", op: .identity, inputs: ["x"], outputs: ["a"]),
            Node(name: "relu", op: .activation(.relu), inputs: ["a"], outputs: ["b"]),
            Node(name: "unused", op: .activation(.tanh), inputs: ["b"], outputs: ["u"]),
            Node(name: "unused2", op: .activation(.sigmoid), inputs: ["u"], outputs: ["u2"]),
            Node(name: "same_reshape", op: .reshape(targetShape: [2, 3, 4]), inputs: ["b"], outputs: ["c"]),
            Node(name: "perm", op: .transpose(perm: [0, 1, 2, 3]), inputs: ["c"], outputs: ["y"]),
        ])
        var g = original
        XCTAssertTrue(RemoveNoOpNodes().apply(to: &g))
        // relu reads x; the last no-op's output is the graph output, so relu writes "y".
        XCTAssertEqual(g.nodes.map(\.name), ["relu"])
        XCTAssertEqual(g.nodes[0].inputs, ["x"])
        XCTAssertEqual(g.nodes[0].outputs, ["y"])
        XCTAssertEqual(g.tensorTypes["y"], original.tensorTypes["y"])
        XCTAssertEqual(Set(g.tensorTypes.keys), ["x", "y"])
        XCTAssertNoThrow(try g.verify())
        let once = g
        XCTAssertFalse(RemoveNoOpNodes().apply(to: &g))
        XCTAssertEqual(g, once)
    }

    func testKeepsAnIdentityFromInputToOutputAndRealLayoutChanges() throws {
        for original in [
            try typedGraph([1, 2], outputs: ["y"], [Node(name: "id", op: .identity, inputs: ["x"], outputs: ["y"])]),
            // "b" is both read by the identity and a graph output: the identity must stay.
            try typedGraph([1, 2], outputs: ["y", "b"], [
                Node(name: "relu", op: .activation(.relu), inputs: ["x"], outputs: ["b"]),
                Node(name: "id", op: .identity, inputs: ["b"], outputs: ["y"]),
            ]),
            try typedGraph([1, 2, 3], outputs: ["y"], [Node(name: "t", op: .transpose(perm: [0, 2, 1]), inputs: ["x"], outputs: ["y"])]),
            try typedGraph([1, 2, 3], outputs: ["y"], [Node(name: "r", op: .reshape(targetShape: [6]), inputs: ["x"], outputs: ["y"])]),
        ] {
            var g = original
            XCTAssertFalse(RemoveNoOpNodes().apply(to: &g))
            XCTAssertEqual(g, original)
        }
    }
}

final class MergeReshapesTransposesTests: XCTestCase {
    func testInverseTransposesVanishAndOthersCompose() throws {
        var g = try typedGraph([1, 2, 3, 4], outputs: ["y", "z"], [
            Node(name: "to_nchw", op: .transpose(perm: [0, 3, 1, 2]), inputs: ["x"], outputs: ["t1"]),
            Node(name: "to_nhwc", op: .transpose(perm: [0, 2, 3, 1]), inputs: ["t1"], outputs: ["t2"]),
            Node(name: "relu", op: .activation(.relu), inputs: ["t2"], outputs: ["y"]),
            Node(name: "swap", op: .transpose(perm: [0, 1, 3, 2]), inputs: ["x"], outputs: ["s1"]),
            Node(name: "swap2", op: .transpose(perm: [0, 3, 2, 1]), inputs: ["s1"], outputs: ["z"]),
        ])
        let original = g
        XCTAssertTrue(MergeReshapesTransposes().apply(to: &g))
        XCTAssertEqual(g.nodes.map(\.name), ["relu", "swap2"])
        XCTAssertEqual(g.nodes[0].inputs, ["x"])
        XCTAssertEqual(g.nodes[1].inputs, ["x"])
        // swap2 ∘ swap: output axis i is input axis [0, 1, 3, 2][[0, 3, 2, 1][i]] = [0, 2, 3, 1][i].
        XCTAssertEqual(g.nodes[1].op, .transpose(perm: [0, 2, 3, 1]))
        XCTAssertEqual(g.tensorTypes["z"], original.tensorTypes["z"])
        XCTAssertNoThrow(try g.verify())
        let once = g
        XCTAssertFalse(MergeReshapesTransposes().apply(to: &g))
        XCTAssertEqual(g, once)
    }

    func testConsecutiveReshapesBecomeOne() throws {
        var g = try typedGraph([2, 3, 4], outputs: ["y"], [
            Node(name: "flatten", op: .reshape(targetShape: [12]), inputs: ["x"], outputs: ["f"]),
            Node(name: "unflatten", op: .reshapeND(shape: [2, 6, 2]), inputs: ["f"], outputs: ["y"]),
        ])
        XCTAssertTrue(MergeReshapesTransposes().apply(to: &g))
        XCTAssertEqual(g.nodes.map(\.name), ["unflatten"])
        XCTAssertEqual(g.nodes[0].inputs, ["x"])
        XCTAssertEqual(g.tensorTypes["y"], TensorType([2, 6, 2]))
    }

    func testLeavesReshapeAfterReshapeNDAndSharedTensorsUnmerged() throws {
        // A reshape takes its batch size from its input, which reshapeND changed.
        let a = try typedGraph([2, 3, 4], outputs: ["y"], [
            Node(name: "nd", op: .reshapeND(shape: [4, 6]), inputs: ["x"], outputs: ["f"]),
            Node(name: "r", op: .reshape(targetShape: [3, 2]), inputs: ["f"], outputs: ["y"]),
        ])
        let b = try typedGraph([1, 2, 3], outputs: ["y"], [
            Node(name: "t", op: .transpose(perm: [0, 2, 1]), inputs: ["x"], outputs: ["t1"]),
            Node(name: "relu", op: .activation(.relu), inputs: ["t1"], outputs: ["y"]),
        ])
        for original in [a, b] {
            var g = original
            XCTAssertFalse(MergeReshapesTransposes().apply(to: &g))
            XCTAssertEqual(g, original)
        }
    }
}

final class InferencePipelineTests: XCTestCase {
    /// MobileNet-like: conv → bn → relu6 (clip) → depthwise conv → bn → relu → dropout → dense → softmax.
    static func mobileBlock() throws -> Graph {
        try typedGraph([1, 4, 4, 2], outputs: ["y"], [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2)),
                 inputs: ["x"], outputs: ["c1"], weights: ["weight": randomConstant([2, 2, 1, 1], seed: 1)]),
            exactBatchNorm("c1", "b1"),
            Node(name: "relu6", op: .clip(alpha: 0, beta: 6), inputs: ["b1"], outputs: ["r1"]),
            Node(name: "dw", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, groups: 2, outputChannels: 2)),
                 inputs: ["r1"], outputs: ["c2"], weights: ["weight": randomConstant([2, 1, 3, 3], seed: 2)]),
            { var n = exactBatchNorm("c2", "b2"); n.name = "bn2"; return n }(),
            Node(name: "relu", op: .activation(.relu), inputs: ["b2"], outputs: ["r2"]),
            Node(name: "dropout", op: .identity, inputs: ["r2"], outputs: ["d"]),
            Node(name: "pool", op: .globalPool2d(kind: .average, keepDims: false), inputs: ["d"], outputs: ["p"]),
            Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 3)), inputs: ["p"], outputs: ["l"],
                 weights: ["weight": randomConstant([3, 2], seed: 3)]),
            Node(name: "softmax", op: .softmax(axis: -1), inputs: ["l"], outputs: ["y"]),
        ])
    }

    func testPipelineFusesAMobileNetBlockAndIsIdempotent() throws {
        var g = try Self.mobileBlock()
        let changed = try PassPipeline.inference.run(on: &g)
        XCTAssertEqual(changed, ["remove_no_op_nodes", "fold_batchnorm_into_conv", "fuse_activation"])
        XCTAssertEqual(g.nodes.map(\.name), ["conv", "dw", "pool", "fc", "softmax"])
        guard case let .conv2d(a) = g.nodes[0].op, case let .conv2d(b) = g.nodes[1].op else { return XCTFail("not convs") }
        XCTAssertEqual(a.activation, .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0))
        XCTAssertEqual(b.activation, .relu)
        let once = g
        XCTAssertEqual(try PassPipeline.inference.run(on: &g), [])
        XCTAssertEqual(g, once)
    }
}
