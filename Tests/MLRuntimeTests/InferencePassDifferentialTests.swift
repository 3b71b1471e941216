import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// MARK: inference passes (issue 12)

/// Differential tests of the inference passes: each graph runs four ways — unfused on the
/// reference kernels (the oracle), fused on the reference kernels (the fused semantics of the
/// reference conv / dense / deconv kernels), fused on oneDNN (post-ops) as `Model` loads it by
/// default, and unfused on oneDNN (the issue-12 passes disabled) — and every result must match
/// the oracle.
final class InferencePassDifferentialTests: XCTestCase {
    static let issue12Passes: Set<String> = ["remove_no_op_nodes", "merge_reshapes_transposes", "cancel_transpose_pairs", "sink_transposes",
                                             "fold_batchnorm_into_conv", "fuse_activation", "fuse_residual_add"]

    /// A batch norm on the last axis of a `c`-channel tensor with random statistics.
    func batchNorm(_ input: String, _ output: String, c: Int, axis: Int, seed: UInt64) -> Node {
        Node(name: "bn_" + output, op: .batchNorm(BatchNormAttributes(axis: axis, epsilon: 1e-3)), inputs: [input], outputs: [output],
             weights: ["gamma": randomConstant([c], seed: seed, in: 0.5...2), "beta": randomConstant([c], seed: seed + 1),
                       "mean": randomConstant([c], seed: seed + 2), "variance": randomConstant([c], seed: seed + 3, in: 0.1...3)])
    }

    /// Runs `graph` the four ways on input x; asserts that the fused graph has `fusedNodeCount`
    /// nodes and that every result is within `tolerance`·max(1, max|oracle|) of the oracle.
    func assertFusionPreservesValues(_ graph: Graph, fusedNodeCount: Int, tolerance: Float = 1e-4,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        var g = graph
        try g.inferShapes()
        let xType = try XCTUnwrap(g.inputs.first?.type)
        let x = nd(xType.shape, randomFloats(count: xType.elementCount, seed: 7, in: -3 ... 3))
        var fused = g
        try PassPipeline.inference.run(on: &fused)
        XCTAssertEqual(fused.nodes.count, fusedNodeCount, "fused: \(fused.nodes.map { "\($0.name) \($0.op)" })", file: file, line: line)
        let oracle = try Model(graph: g, configuration: .init(referenceOnly: true))
        let referenceFused = try Model(graph: fused, configuration: .init(referenceOnly: true))
        let dnnlFused = try Model(graph: g)
        XCTAssertEqual(dnnlFused.graph.nodes.count, fusedNodeCount, file: file, line: line)
        let dnnlUnfused = try Model(graph: g, configuration: .init(disabledPasses: Self.issue12Passes))
        XCTAssertEqual(dnnlUnfused.graph.nodes.count, g.nodes.count, file: file, line: line)
        let expected = try XCTUnwrap(try oracle.prediction(from: ["x": x])[g.outputs[0]])
        let scale = max(1, expected.scalars.map(abs).max() ?? 0)
        for (what, model) in [("reference fused", referenceFused), ("oneDNN fused", dnnlFused), ("oneDNN unfused", dnnlUnfused)] {
            let y = try XCTUnwrap(try model.prediction(from: ["x": x])[g.outputs[0]])
            XCTAssertEqual(y.shape, expected.shape, what, file: file, line: line)
            let err = maxAbsDiff(y.scalars, expected.scalars)
            XCTAssertLessThanOrEqual(err, tolerance * scale, "\(what): max|err| \(err)", file: file, line: line)
        }
    }

    func testBatchNormFoldedIntoConvDepthwiseDenseAndGroupedDeconv() throws {
        let conv = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 6, 5, 3]))], outputs: ["y"], nodes: [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], strides: [2, 1], padding: .same, outputChannels: 4)),
                 inputs: ["x"], outputs: ["c"], weights: ["weight": randomConstant([4, 3, 3, 3], seed: 1), "bias": randomConstant([4], seed: 2)]),
            batchNorm("c", "y", c: 4, axis: 3, seed: 10),
        ])
        try assertFusionPreservesValues(conv, fusedNodeCount: 1)
        let depthwise = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 5, 3]))], outputs: ["y"], nodes: [
            Node(name: "dw", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .valid, groups: 3, outputChannels: 6)),
                 inputs: ["x"], outputs: ["c"], weights: ["weight": randomConstant([6, 1, 3, 3], seed: 3)]),
            batchNorm("c", "y", c: 6, axis: 3, seed: 20),
        ])
        try assertFusionPreservesValues(depthwise, fusedNodeCount: 1)
        let dense = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 3, 5]))], outputs: ["y"], nodes: [
            Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 4)), inputs: ["x"], outputs: ["d"],
                 weights: ["weight": randomConstant([4, 5], seed: 4), "bias": randomConstant([4], seed: 5)]),
            batchNorm("d", "y", c: 4, axis: 2, seed: 30),
        ])
        try assertFusionPreservesValues(dense, fusedNodeCount: 1)
        let deconv = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 4, 4]))], outputs: ["y"], nodes: [
            Node(name: "deconv", op: .deconv2d(Deconv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .same, groups: 2, outputChannels: 6)),
                 inputs: ["x"], outputs: ["d"], weights: ["weight": randomConstant([4, 3, 3, 3], seed: 6), "bias": randomConstant([6], seed: 7)]),
            batchNorm("d", "y", c: 6, axis: 3, seed: 40),
        ])
        try assertFusionPreservesValues(deconv, fusedNodeCount: 1)
    }

    func testEveryActivationFusedIntoConvAndDense() throws {
        let activations: [Op] = [
            .activation(.relu), .clip(alpha: 0, beta: 6), .activation(.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)),
            .activation(.leakyReLU(alpha: 0.2)), .activation(.elu(alpha: 1)), .activation(.selu), .activation(.sigmoid),
            .activation(.tanh), .activation(.hardSwish), .activation(.gelu(approximate: false)), .activation(.gelu(approximate: true)),
            .activation(.swish), .activation(.hardSigmoid(alpha: 0.2, beta: 0.5)), .activation(.softsign),
            .activation(.softplus), .activation(.linear(alpha: 2, beta: 1)),
        ]
        for op in activations {
            let conv = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 4, 3]))], outputs: ["y"], nodes: [
                Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 4)),
                     inputs: ["x"], outputs: ["c"], weights: ["weight": randomConstant([4, 3, 3, 3], seed: 1), "bias": randomConstant([4], seed: 2)]),
                batchNorm("c", "b", c: 4, axis: 3, seed: 10),
                Node(name: "act", op: op, inputs: ["b"], outputs: ["y"]),
            ])
            try assertFusionPreservesValues(conv, fusedNodeCount: 1)
            let dense = Graph(inputs: [ValueInfo(name: "x", type: TensorType([3, 6]))], outputs: ["y"], nodes: [
                Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 5)), inputs: ["x"], outputs: ["d"],
                     weights: ["weight": randomConstant([5, 6], seed: 3), "bias": randomConstant([5], seed: 4)]),
                Node(name: "act", op: op, inputs: ["d"], outputs: ["y"]),
            ])
            try assertFusionPreservesValues(dense, fusedNodeCount: 1)
        }
    }

    func testLayoutNoOpsRemovedAndTransposesMerged() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 3, 2]))], outputs: ["y"], nodes: [
            Node(name: "to_nchw", op: .transpose(perm: [0, 3, 1, 2]), inputs: ["x"], outputs: ["t1"]),
            Node(name: "dropout", op: .identity, inputs: ["t1"], outputs: ["t1d"]),
            Node(name: "to_nhwc", op: .transpose(perm: [0, 2, 3, 1]), inputs: ["t1d"], outputs: ["t2"]),
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 3)),
                 inputs: ["t2"], outputs: ["c"], weights: ["weight": randomConstant([3, 2, 1, 1], seed: 1)]),
            Node(name: "swap", op: .transpose(perm: [0, 2, 1, 3]), inputs: ["c"], outputs: ["s"]),
            Node(name: "swap_back", op: .transpose(perm: [0, 2, 1, 3]), inputs: ["s"], outputs: ["s2"]),
            Node(name: "flatten", op: .reshape(targetShape: [36]), inputs: ["s2"], outputs: ["f"]),
            Node(name: "unflatten", op: .reshape(targetShape: [12, 3]), inputs: ["f"], outputs: ["y"]),
        ])
        try assertFusionPreservesValues(g, fusedNodeCount: 2)
    }
}
