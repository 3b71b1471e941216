import XCTest
@testable import MLGraph
import TestSupport

// MARK: constant folding (issue 12): the fold_constants pass with a stand-in evaluator
// (structure); values through the reference kernels: MLRuntimeTests/FoldConstantsRuntimeTests.

final class FoldConstantsTests: XCTestCase {
    /// Negates every input element of a one-input node (stands in for the runtime's evaluator);
    /// records the nodes it was asked to evaluate.
    final class Negate: @unchecked Sendable {
        var asked: [String] = []
        var evaluator: ConstantEvaluator {
            { [self] node, inputs, types in
                asked.append(node.name)
                guard inputs.count == 1 else { return nil }
                return [ConstantTensor(shape: types[0].shape, floats: inputs[0].floats().map { -$0 })]
            }
        }
    }

    /// c = constant [1, 2, 3] → r1 = relu(c) → r2 = relu(r1); y = add(x, r2).
    func graph() throws -> Graph {
        try typedGraph([3], outputs: ["y"], [
            Node(name: "c", op: .constant, inputs: [], outputs: ["c"], weights: ["value": floatConstant([3], [1, 2, 3])]),
            Node(name: "r1", op: .activation(.relu), inputs: ["c"], outputs: ["r1"]),
            Node(name: "r2", op: .activation(.relu), inputs: ["r1"], outputs: ["r2"]),
            Node(name: "add", op: .elementwise(.add), inputs: ["x", "r2"], outputs: ["y"]),
        ])
    }

    func testFoldsAChainOfConstantComputationsInOneRunAndDropsDeadConstants() throws {
        let original = try graph()
        var g = original
        let negate = Negate()
        XCTAssertTrue(FoldConstants(evaluator: negate.evaluator).apply(to: &g))
        XCTAssertEqual(negate.asked, ["r1", "r2"], "r2 folds after r1 in the same run; add reads x")
        XCTAssertEqual(g.nodes.map(\.name), ["r2", "add"])
        XCTAssertEqual(g.nodes[0].op, .constant)
        XCTAssertEqual(g.nodes[0].outputs, ["r2"])
        XCTAssertEqual(g.nodes[0].weights["value"]?.floats(), [1, 2, 3], "negated twice")
        XCTAssertNil(g.tensorTypes["c"]); XCTAssertNil(g.tensorTypes["r1"])
        XCTAssertEqual(g.tensorTypes["r2"], original.tensorTypes["r2"])
        XCTAssertNoThrow(try g.verify())
        let once = g
        XCTAssertFalse(FoldConstants(evaluator: negate.evaluator).apply(to: &g), "idempotent")
        XCTAssertEqual(g, once)
    }

    func testWithoutEvaluatorOrForNonConstantAndRandomNodesNothingChanges() throws {
        let original = try graph()
        var g = original
        XCTAssertFalse(FoldConstants().apply(to: &g), "the MLGraph pipeline has no evaluator")
        XCTAssertEqual(g, original)
        XCTAssertEqual(try PassPipeline.inference.run(on: &g), [])
        XCTAssertEqual(g, original)
        // An evaluator that declines (nil) or throws leaves the node.
        struct Refused: Error {}
        for evaluator: ConstantEvaluator in [{ _, _, _ in nil }, { _, _, _ in throw Refused() }] {
            var h = original
            XCTAssertFalse(FoldConstants(evaluator: evaluator).apply(to: &h))
            XCTAssertEqual(h, original)
        }
        // Only graph-input-dependent nodes: nothing to ask.
        var onlyInputs = try typedGraph([3], outputs: ["y"], [Node(name: "r", op: .activation(.relu), inputs: ["x"], outputs: ["y"])])
        let negate = Negate()
        let before = onlyInputs
        XCTAssertFalse(FoldConstants(evaluator: negate.evaluator).apply(to: &onlyInputs))
        XCTAssertEqual(onlyInputs, before)
        XCTAssertEqual(negate.asked, [])
    }

    func testOutputsTooLargeToStoreStayComputed() throws {
        let n = FoldConstants.maximumFoldedElements + 1
        var g = try typedGraph([1], outputs: ["y"], [
            Node(name: "c", op: .constant, inputs: [], outputs: ["c"], weights: ["value": floatConstant([1], [2])]),
            Node(name: "t", op: .tile(reps: [n]), inputs: ["c"], outputs: ["t"]),
            Node(name: "s", op: .reduce(ReduceAttributes(function: .sum, axes: [0], keepDims: true)), inputs: ["t"], outputs: ["s"]),
            Node(name: "add", op: .elementwise(.add), inputs: ["x", "s"], outputs: ["y"]),
        ])
        let before = g
        let negate = Negate()
        XCTAssertFalse(FoldConstants(evaluator: negate.evaluator).apply(to: &g))
        XCTAssertEqual(g, before)
        XCTAssertEqual(negate.asked, [])
    }
}
