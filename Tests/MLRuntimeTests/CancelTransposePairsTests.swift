@testable import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// `cancel_transpose_pairs` (PassPipeline.inference): NHWC → NCHW → element-wise ops → NHWC
/// (how an imported ML program reads between two convolutions) loses both transposes and
/// computes the same values; chains it cannot move through are left alone.
final class CancelTransposePairsTests: XCTestCase {
    /// x [1, 3, 4, 5] → conv 1×1 → T(0,3,1,2) → batchNorm(axis 1) → relu6 → mul 0.5 → T(0,2,3,1) → conv 1×1 → y.
    static func graph(middle: [Node]? = nil) throws -> Graph {
        let c = 5
        let bn = Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: 1, epsilon: 1e-3)), inputs: ["t1"], outputs: ["b"],
                      weights: ["mean": floatConstant([c], (0..<c).map { Float($0) * 0.1 }),
                                "variance": floatConstant([c], (0..<c).map { 1 + Float($0) * 0.2 }),
                                "gamma": floatConstant([c], (0..<c).map { 0.5 + Float($0) }),
                                "beta": floatConstant([c], (0..<c).map { Float($0) - 2 })])
        let chain = middle ?? [
            bn,
            Node(name: "relu6", op: .activation(.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)), inputs: ["b"], outputs: ["r"]),
            Node(name: "half", op: .binary(.mul), inputs: ["r"], outputs: ["m"], weights: ["y": floatConstant([1], [0.5])]),
        ]
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 4, 5]))], outputs: ["y"], nodes: [
            Node(name: "conv_a", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: c)),
                 inputs: ["x"], outputs: ["a"], weights: ["weight": randomConstant([c, 5, 1, 1], seed: 3)]),
            Node(name: "to_nchw", op: .transpose(perm: [0, 3, 1, 2]), inputs: ["a"], outputs: ["t1"]),
        ] + chain + [
            Node(name: "to_nhwc", op: .transpose(perm: [0, 2, 3, 1]), inputs: [chain.last!.outputs[0]], outputs: ["t2"]),
            Node(name: "conv_b", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 2)),
                 inputs: ["t2"], outputs: ["y"], weights: ["weight": randomConstant([2, c, 1, 1], seed: 4)]),
        ])
        try g.inferShapes()
        return g
    }

    func testPairAroundElementwiseChainIsRemovedAndValuesKept() throws {
        let g = try Self.graph()
        var h = g
        // This pass alone (the batch norm and ReLU6 would otherwise be folded into conv_a).
        let fusions: Set<String> = ["fold_batchnorm_into_conv", "fuse_activation"]
        XCTAssertEqual(try PassPipeline.inference.run(on: &h, disabling: fusions), ["cancel_transpose_pairs"])
        XCTAssertEqual(h.nodes.map(\.name), ["conv_a", "bn", "relu6", "half", "conv_b"])
        XCTAssertEqual(h.nodes[1].op, .batchNorm(BatchNormAttributes(axis: 3, epsilon: 1e-3)), "axis 1 of NCHW is axis 3 of NHWC")
        XCTAssertEqual(h.nodes[3].outputs, ["t2"])
        let again = h
        XCTAssertEqual(try PassPipeline.inference.run(on: &h, disabling: fusions), [], "idempotent")
        XCTAssertEqual(h, again)

        let x = try NDArray(shape: [1, 3, 4, 5], scalars: randomFloats(count: 60, seed: 9, in: -3 ... 3))
        let reference = try Model(graph: g, configuration: .init(referenceOnly: true))
        let optimized = try Model(graph: g)
        XCTAssertEqual(optimized.graph.nodes.filter { $0.op.name == "transpose" }.count, 0)
        let a = try XCTUnwrap(try reference.prediction(from: ["x": x])["y"])
        let b = try XCTUnwrap(try optimized.prediction(from: ["x": x])["y"])
        XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, b.scalars), 1e-4)
        XCTAssertGreaterThan(a.scalars.map(abs).max() ?? 0, 0.1)
    }

    func testPadBetweenThePairMovesItsAmountsAndIsThenFused() throws {
        // NCHW pad of H by (1, 2) and W by (0, 3) → NHWC pads [[0,0],[1,2],[0,3],[0,0]], which
        // fuse_pad_into_conv then folds into conv_b.
        let pad = Node(name: "pad", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [0, 0], [1, 2], [0, 3]])), inputs: ["t1"], outputs: ["p"])
        let g = try Self.graph(middle: [pad])
        var h = g
        XCTAssertEqual(try PassPipeline.inference.run(on: &h), ["cancel_transpose_pairs", "fuse_pad_into_conv"])
        XCTAssertEqual(h.nodes.map(\.name), ["conv_a", "conv_b"])
        let x = try NDArray(shape: [1, 3, 4, 5], scalars: randomFloats(count: 60, seed: 5, in: -3 ... 3))
        let a = try XCTUnwrap(try Model(graph: g, configuration: .init(referenceOnly: true)).prediction(from: ["x": x])["y"])
        let b = try XCTUnwrap(try Model(graph: g).prediction(from: ["x": x])["y"])
        XCTAssertEqual(a.shape, [1, 6, 7, 2])
        XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, b.scalars), 1e-4)
    }

    func testChainWithANonElementwiseOpOrASecondConsumerIsLeftAlone() throws {
        // A reshape between the transposes is not layout-agnostic.
        let reshape = Node(name: "flat", op: .reshapeND(shape: [1, 5, 3, 4]), inputs: ["t1"], outputs: ["p"])
        var g = try Self.graph(middle: [reshape])
        try g.inferShapes()
        var h = g
        XCTAssertFalse(CancelTransposePairs().apply(to: &h))
        // The NCHW tensor is also a graph output: the pair must stay.
        var k = try Self.graph()
        k.outputs.append("b")
        try k.inferShapes()
        XCTAssertFalse(CancelTransposePairs().apply(to: &k))
        XCTAssertFalse(CancelTransposePairs.inverse([0, 3, 1, 2], [0, 3, 1, 2]))
        XCTAssertTrue(CancelTransposePairs.inverse([0, 3, 1, 2], [0, 2, 3, 1]))
    }
}
