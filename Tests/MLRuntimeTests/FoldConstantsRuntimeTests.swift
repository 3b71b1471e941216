import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// MARK: constant folding (issue 12)

/// `fold_constants` with the runtime's evaluator (`ReferenceConstantEvaluator`: the reference
/// kernels): the folded model computes exactly what the unfolded graph computes on the reference
/// kernels, and the folded nodes are gone from the graph `Model` runs.
final class FoldConstantsRuntimeTests: XCTestCase {
    /// c [2, 3] constant → transpose → reshape [6] → tanh → k; y = relu(x · k + b), b = constant
    /// [6] · 2 (a multiply of two constants).
    func graph() throws -> Graph {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([6]))], outputs: ["y"], nodes: [
            Node(name: "c", op: .constant, inputs: [], outputs: ["c"], weights: ["value": randomConstant([2, 3], seed: 1, in: -2 ... 2)]),
            Node(name: "t", op: .transpose(perm: [1, 0]), inputs: ["c"], outputs: ["t"]),
            Node(name: "r", op: .reshapeND(shape: [6]), inputs: ["t"], outputs: ["r"]),
            Node(name: "k", op: .activation(.tanh), inputs: ["r"], outputs: ["k"]),
            Node(name: "b0", op: .constant, inputs: [], outputs: ["b0"], weights: ["value": randomConstant([6], seed: 2)]),
            Node(name: "two", op: .constant, inputs: [], outputs: ["two"], weights: ["value": floatConstant([1], [2])]),
            Node(name: "b", op: .elementwise(.multiply), inputs: ["b0", "two"], outputs: ["b"]),
            Node(name: "xk", op: .elementwise(.multiply), inputs: ["x", "k"], outputs: ["xk"]),
            Node(name: "sum", op: .elementwise(.add), inputs: ["xk", "b"], outputs: ["s"]),
            Node(name: "relu", op: .activation(.relu), inputs: ["s"], outputs: ["y"]),
        ])
        try g.inferShapes()
        return g
    }

    func testFoldedModelMatchesTheReferenceOnTheUnfoldedGraph() throws {
        let g = try graph()
        let folded = try Model(graph: g)
        XCTAssertEqual(folded.graph.nodes.map(\.name).sorted(), ["b", "k", "relu", "sum", "xk"],
                       "\(folded.graph.nodes.map { "\($0.name) \($0.op)" })")
        XCTAssertEqual(folded.graph.nodes.filter { $0.op == .constant }.map(\.name).sorted(), ["b", "k"])
        let unfolded = try Model(graph: g, configuration: .init(disabledPasses: ["fold_constants"]))
        XCTAssertEqual(unfolded.graph.nodes.count, g.nodes.count)
        let oracle = try Model(graph: g, configuration: .init(referenceOnly: true))
        let x = nd([6], randomFloats(count: 6, seed: 5, in: -3 ... 3))
        let expected = try XCTUnwrap(try oracle.prediction(from: ["x": x])["y"]).scalars
        for model in [folded, unfolded] {
            let y = try XCTUnwrap(try model.prediction(from: ["x": x])["y"]).scalars
            XCTAssertLessThanOrEqual(maxAbsDiff(y, expected), 1e-6)
        }
        // The folded values are the reference kernels' values: k = tanh(transpose(c)) exactly.
        let k = try XCTUnwrap(folded.graph.nodes.first { $0.name == "k" }?.weights["value"]).floats()
        let c = try XCTUnwrap(g.nodes[0].weights["value"]).floats()
        XCTAssertEqual(k, [0, 3, 1, 4, 2, 5].map { Activation.tanh.apply(c[$0]) })
    }

    func testEvaluatorRunsOneNodeOnTheReferenceKernels() throws {
        let node = Node(name: "m", op: .elementwise(.maximum), inputs: ["a", "a"], outputs: ["m"])
        let a = floatConstant([2, 2], [1, -2, 3, -4])
        let out = try XCTUnwrap(try ReferenceConstantEvaluator.evaluate(node, [a, a], [TensorType([2, 2])]))
        XCTAssertEqual(out.count, 1)
        XCTAssertEqual(out[0].shape, [2, 2])
        XCTAssertEqual(out[0].floats(), [1, -2, 3, -4])
        // Output types that do not match the node's: declined.
        XCTAssertNil(try ReferenceConstantEvaluator.evaluate(node, [a, a], [TensorType([4])]))
    }
}
