import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// The static memory plan: reuse, in-place aliasing, and that reuse never clobbers a live tensor.
final class MemoryPlanTests: XCTestCase {
    func testChainReusesTwoBuffers() throws {
        // x → t1 → t2 → t3 → y, four transposes (not in-place): t1 and t3 can share.
        let perm = Op.transpose(perm: [0, 2, 1, 3])
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 4, 4]))], outputs: ["y"],
                      nodes: [Node(name: "n1", op: perm, inputs: ["x"], outputs: ["t1"]),
                              Node(name: "n2", op: perm, inputs: ["t1"], outputs: ["t2"]),
                              Node(name: "n3", op: perm, inputs: ["t2"], outputs: ["t3"]),
                              Node(name: "n4", op: perm, inputs: ["t3"], outputs: ["y"])])
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        let plan = m.memoryPlan
        XCTAssertEqual(plan.intermediateElementCount, 3 * 64)
        XCTAssertEqual(plan.arenaElementCount, 2 * 64)
        XCTAssertLessThan(plan.arenaByteCount, plan.intermediateByteCount)
        XCTAssertEqual(plan.locations["t1"], plan.locations["t3"])
        XCTAssertNotEqual(plan.locations["t1"], plan.locations["t2"])
        XCTAssertEqual(plan.locations["x"], .input(index: 0))
        XCTAssertEqual(plan.locations["y"], .output(offset: 0))
        let x = nd([1, 4, 4, 4], randomFloats(count: 64, seed: 1))
        XCTAssertEqual(try m.prediction(from: ["x": x])["y"], x)  // four H/W swaps
    }

    func testInPlaceChainUsesOneBuffer() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 64]))], outputs: ["y"],
                      nodes: [Node(name: "a", op: .activation(.linear(alpha: 2, beta: 0)), inputs: ["x"], outputs: ["a1"]),
                              Node(name: "b", op: .activation(.linear(alpha: 1, beta: 1)), inputs: ["a1"], outputs: ["a2"]),
                              Node(name: "c", op: .activation(.relu), inputs: ["a2"], outputs: ["y"])])
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        XCTAssertEqual(m.memoryPlan.inPlaceNodeCount, 1)
        XCTAssertEqual(m.memoryPlan.locations["a1"], m.memoryPlan.locations["a2"])
        XCTAssertEqual(m.memoryPlan.arenaElementCount, 64)
        let xs = randomFloats(count: 64, seed: 2)
        XCTAssertEqual(try m.prediction(from: ["x": nd([1, 64], xs)])["y"]?.scalars, xs.map { max(2 * $0 + 1, 0) })
    }

    func testNoInPlaceWhenInputIsReadLater() throws {
        // a2 = f(a1) cannot overwrite a1: the add reads a1 afterwards.
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3]))], outputs: ["y"],
                      nodes: [Node(name: "a", op: .activation(.linear(alpha: 2, beta: 0)), inputs: ["x"], outputs: ["a1"]),
                              Node(name: "b", op: .activation(.linear(alpha: 1, beta: 1)), inputs: ["a1"], outputs: ["a2"]),
                              Node(name: "c", op: .elementwise(.add), inputs: ["a1", "a2"], outputs: ["y"])])
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        XCTAssertEqual(m.memoryPlan.inPlaceNodeCount, 0)
        XCTAssertNotEqual(m.memoryPlan.locations["a1"], m.memoryPlan.locations["a2"])
        XCTAssertEqual(try m.prediction(from: ["x": nd([1, 3], [1, 2, 3])])["y"]?.scalars, [5, 9, 13])  // 2x + (2x + 1)
    }

    // MARK: Random graphs against an independent interpreter

    /// A random DAG of 1-D ops on [1, n] tensors (pad, crop, affine, add, concat) and its values
    /// computed with plain arrays.
    struct RandomGraph {
        var graph: Graph
        var expected: [String: [Float]]
        var input: [Float]

        init(seed: UInt64, nodeCount: Int) {
            var rng = SeededGenerator(seed: seed)
            input = randomFloats(count: 5, seed: seed)
            var values: [String: [Float]] = ["x": input]
            var names = ["x"]
            var nodes: [Node] = []
            for i in 0..<nodeCount {
                let out = "t\(i)"
                let a = names[Int.random(in: 0..<names.count, using: &rng)]
                let va = values[a]!
                var op: Op, ins = [a], v: [Float]
                switch Int.random(in: 0..<5, using: &rng) {
                case 0:
                    let (l, r) = (Int.random(in: 0...3, using: &rng), Int.random(in: 0...3, using: &rng))
                    op = .pad(PadAttributes(mode: .constant, pads: [[0, 0], [l, r]], value: Float(i)))
                    v = [Float](repeating: Float(i), count: l) + va + [Float](repeating: Float(i), count: r)
                case 1 where va.count > 2:
                    op = .crop(crops: [[0, 0], [1, 1]])
                    v = Array(va[1..<(va.count - 1)])
                case 2:
                    op = .activation(.linear(alpha: -1, beta: Float(i)))
                    v = va.map { -$0 + Float(i) }
                case 3:
                    if let b = names.filter({ values[$0]!.count == va.count }).randomElement(using: &rng) {
                        op = .elementwise(.add); ins = [a, b]
                        v = zip(va, values[b]!).map { $0 + $1 }
                    } else {
                        op = .identity; v = va
                    }
                default:
                    let b = names[Int.random(in: 0..<names.count, using: &rng)]
                    op = .concat(axis: 1); ins = [a, b]
                    v = va + values[b]!
                }
                nodes.append(Node(name: "n\(i)", op: op, inputs: ins, outputs: [out]))
                values[out] = v
                names.append(out)
            }
            let outputs = ["t\(nodeCount - 1)", "t\(nodeCount / 2)", "t\(nodeCount / 3)"]
            graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5]))], outputs: outputs, nodes: nodes)
            expected = values.filter { outputs.contains($0.key) }
        }
    }

    func testRandomGraphsComputeTheSameValuesAsAnInterpreter() throws {
        for seed in UInt64(1)...25 {
            let r = RandomGraph(seed: seed, nodeCount: 30)
            let m = try Model(graph: r.graph, configuration: .init(referenceOnly: true))
            XCTAssertLessThanOrEqual(m.memoryPlan.arenaElementCount, m.memoryPlan.intermediateElementCount)
            let out = try m.prediction(from: ["x": nd([1, 5], r.input)])
            for (name, v) in r.expected { XCTAssertEqual(out[name]?.scalars, v, "seed \(seed), \(name)") }
        }
    }

    func testTensorsThatAreLiveTogetherNeverOverlap() throws {
        for seed in UInt64(1)...25 {
            var g = RandomGraph(seed: seed, nodeCount: 30).graph
            try g.inferShapes()
            let plan = MemoryPlan(graph: g)  // no in-place: every tensor has its own live range
            var def: [String: Int] = [:], last: [String: Int] = [:]
            for (i, n) in g.nodes.enumerated() {
                for t in n.outputs { def[t] = i; last[t] = max(last[t] ?? i, i) }
                for t in n.inputs { last[t] = i }
            }
            let arena = plan.locations.compactMap { name, loc -> (String, Int)? in
                if case let .arena(offset) = loc { return (name, offset) } else { return nil }
            }
            func size(_ t: String) -> Int { g.tensorTypes[t]!.elementCount * g.tensorTypes[t]!.elementType.byteSize }  // offsets are bytes
            for (a, oa) in arena {
                for (b, ob) in arena where a < b && def[a]! <= last[b]! && def[b]! <= last[a]! {
                    XCTAssertTrue(oa + size(a) <= ob || ob + size(b) <= oa, "seed \(seed): \(a) and \(b) are live together and overlap")
                }
            }
            XCTAssertEqual(Set(plan.locations.keys), Set(g.tensorTypes.keys))
        }
    }
}
