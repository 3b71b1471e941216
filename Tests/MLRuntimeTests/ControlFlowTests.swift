import Foundation
import MLBundle
import MLGraph
@testable import MLRuntime
import TestSupport
import Diagnostics
import XCTest

/// Control flow (cond, whileLoop), tensor lists and run-time shapes, through `Model`'s dynamic
/// executor, against references computed here.
final class ControlFlowTests: XCTestCase {
    // MARK: graphs

    static func constant(_ name: String, _ shape: [Int], _ value: Float, _ type: ElementType = .float32) -> Node {
        Node(name: name, op: .fill(FillAttributes(shape: shape, value: value, elementType: type)), inputs: [], outputs: [name])
    }

    /// sum = 1 + 2 + … + n, with n a float32 (1) input: loop variables (i, acc, n).
    static func sumGraph() throws -> Graph {
        let c = Block(inputs: ["i", "acc", "n"], nodes: [Node(name: "less", op: .compare(.less), inputs: ["i", "n"], outputs: ["p"])], outputs: ["p"])
        let body = Block(inputs: ["i", "acc", "n"], nodes: [
            Node(name: "inc", op: .binary(.add), inputs: ["i"], outputs: ["i1"], weights: ["y": ConstantTensor(shape: [1], floats: [1])]),
            Node(name: "accumulate", op: .binary(.add), inputs: ["acc", "i1"], outputs: ["acc1"]),
        ], outputs: ["i1", "acc1", "n"])
        var g = Graph(inputs: [ValueInfo(name: "n", type: TensorType([1]))], outputs: ["sum"], nodes: [
            constant("zero_i", [1], 0), constant("zero_acc", [1], 0),
            Node(name: "loop", op: .whileLoop, inputs: ["zero_i", "zero_acc", "n"], outputs: ["i_end", "sum", "n_end"], blocks: [c, body]),
        ])
        try g.inferShapes()
        return g
    }

    static let d = 3, h = 2
    static let weights: [String: [Float]] = {
        var w: [String: [Float]] = [:]
        for (k, gate) in ["i", "f", "g", "o"].enumerated() {
            w["W\(gate)"] = randomFloats(count: h * (d + h), seed: UInt64(10 + k))
            w["b\(gate)"] = randomFloats(count: h, seed: UInt64(20 + k))
        }
        return w
    }()

    /// An LSTM-like recurrence over x [T, 1, D] with T known only at prediction time:
    /// z = [x_t, h]; i, f, o = σ(W·z + b), g = tanh(W·z + b); c = f·c + i·g; h = o·tanh(c);
    /// h written to a tensor list each step, stacked with listGather at the end (indices
    /// 0..<T from a dynamic fill and cumsum). Outputs: hs [T, 1, H], h, c [1, H].
    static func lstmGraph() throws -> Graph {
        let d = Self.d, h = Self.h
        func dense(_ gate: String, _ act: Activation) -> Node {
            Node(name: "dense_\(gate)", op: .dense(DenseAttributes(outputChannels: h, activation: act)), inputs: ["z"], outputs: ["gate_\(gate)"],
                 weights: ["weight": ConstantTensor(shape: [h, d + h], floats: weights["W\(gate)"]!), "bias": ConstantTensor(shape: [h], floats: weights["b\(gate)"]!)])
        }
        let vars = ["i", "t", "x", "h", "c", "list"]
        let c = Block(inputs: vars, nodes: [Node(name: "less", op: .compare(.less), inputs: ["i", "t"], outputs: ["p"])], outputs: ["p"])
        let body = Block(inputs: vars, nodes: [
            Node(name: "index", op: .cast(to: .int32), inputs: ["i"], outputs: ["ii"]),
            Node(name: "x_t", op: .gather(axis: 0), inputs: ["x", "ii"], outputs: ["xt3"]),
            Node(name: "x_t2", op: .reshape(targetShape: [d]), inputs: ["xt3"], outputs: ["xt"]),
            Node(name: "z", op: .concat(axis: 1), inputs: ["xt", "h"], outputs: ["z"]),
            dense("i", .sigmoid), dense("f", .sigmoid), dense("g", .tanh), dense("o", .sigmoid),
            Node(name: "fc", op: .elementwise(.multiply), inputs: ["gate_f", "c"], outputs: ["fc"]),
            Node(name: "ig", op: .elementwise(.multiply), inputs: ["gate_i", "gate_g"], outputs: ["ig"]),
            Node(name: "c1", op: .elementwise(.add), inputs: ["fc", "ig"], outputs: ["c1"]),
            Node(name: "tanh_c", op: .activation(.tanh), inputs: ["c1"], outputs: ["tc"]),
            Node(name: "h1", op: .elementwise(.multiply), inputs: ["gate_o", "tc"], outputs: ["h1"]),
            Node(name: "write", op: .listWrite, inputs: ["list", "ii", "h1"], outputs: ["list1"]),
            Node(name: "inc", op: .binary(.add), inputs: ["i"], outputs: ["i1"], weights: ["y": ConstantTensor(shape: [1], floats: [1])]),
        ], outputs: ["i1", "t", "x", "h1", "c1", "list1"])
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([-1, 1, d]))], outputs: ["hs", "h_end", "c_end"], nodes: [
            Node(name: "shape", op: .shape, inputs: ["x"], outputs: ["x_shape"]),
            constant("zero_index", [1], 0, .int32),
            Node(name: "steps", op: .gather(axis: 0), inputs: ["x_shape", "zero_index"], outputs: ["t_int"]),
            Node(name: "steps_f", op: .cast(to: .float32), inputs: ["t_int"], outputs: ["t"]),
            constant("i0", [1], 0), constant("h0", [1, h], 0), constant("c0", [1, h], 0),
            Node(name: "list0", op: .makeList(MakeListAttributes(elementShape: [1, h])), inputs: [], outputs: ["list0"]),
            Node(name: "loop", op: .whileLoop, inputs: ["i0", "t", "x", "h0", "c0", "list0"],
                 outputs: ["i_end", "t_end", "x_end", "h_end", "c_end", "list_end"], blocks: [c, body]),
            // indices 0..<T: cumsum of T ones, exclusive, as int32.
            Node(name: "ones", op: .fill(FillAttributes(shape: [], value: 1)), inputs: ["t_int"], outputs: ["ones"]),
            Node(name: "positions", op: .cumsum(CumsumAttributes(axis: 0, exclusive: true)), inputs: ["ones"], outputs: ["positions"]),
            Node(name: "indices", op: .cast(to: .int32), inputs: ["positions"], outputs: ["indices"]),
            Node(name: "stack", op: .listGather, inputs: ["list_end", "indices"], outputs: ["hs"]),
        ])
        try g.inferShapes()
        return g
    }

    /// The same recurrence in plain loops (NumPy style: z @ W.T + b).
    static func lstmReference(_ x: [Float], steps: Int) -> (hs: [Float], h: [Float], c: [Float]) {
        let d = Self.d, hn = Self.h
        var h = [Float](repeating: 0, count: hn), c = h, hs: [Float] = []
        func sigmoid(_ v: Float) -> Float { 1 / (1 + exp(-v)) }
        for t in 0..<steps {
            let z = Array(x[(t * d)..<(t * d + d)]) + h
            func gate(_ name: String, _ f: (Float) -> Float) -> [Float] {
                let w = weights["W\(name)"]!, b = weights["b\(name)"]!
                return (0..<hn).map { j in f((0..<(d + hn)).reduce(b[j]) { $0 + w[j * (d + hn) + $1] * z[$1] }) }
            }
            let i = gate("i", sigmoid), f = gate("f", sigmoid), g = gate("g", tanhf), o = gate("o", sigmoid)
            c = (0..<hn).map { f[$0] * c[$0] + i[$0] * g[$0] }
            h = (0..<hn).map { o[$0] * tanhf(c[$0]) }
            hs += h
        }
        return (hs, h, c)
    }

    // MARK: tests

    func testWhileLoopSumsOneToN() throws {
        let g = try Self.sumGraph()
        XCTAssertEqual(g.tensorTypes["sum"], TensorType([1]))
        for referenceOnly in [true, false] {
            let m = try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
            XCTAssertTrue(m.isDynamic)
            for n in [0, 1, 10, 100] {
                let out = try m.prediction(from: ["n": try NDArray(shape: [1], scalars: [Float(n)])])
                XCTAssertEqual(out["sum"]?.scalars, [Float(n * (n + 1) / 2)], "n = \(n)")
            }
        }
    }

    func testLSTMRecurrenceOverATensorListMatchesReference() throws {
        let g = try Self.lstmGraph()
        XCTAssertEqual(g.tensorTypes["hs"], TensorType([-1, 1, Self.h]))
        XCTAssertEqual(g.tensorTypes["list_end"], .list(elementShape: [1, Self.h]))
        for referenceOnly in [true, false] {
            let m = try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
            XCTAssertEqual(m.modelDescription.inputs[0].shape, [-1, 1, Self.d])
            for steps in [1, 4, 7, 4] {  // shapes change between runs; 4 again reuses cached kernels
                let x = randomFloats(count: steps * Self.d, seed: UInt64(steps))
                let out = try m.prediction(from: ["x": try NDArray(shape: [steps, 1, Self.d], scalars: x)])
                let r = Self.lstmReference(x, steps: steps)
                XCTAssertEqual(out["hs"]?.shape, [steps, 1, Self.h])
                assertClose(out["hs"]!.scalars, r.hs, tolerance: 1e-5)
                assertClose(out["h_end"]!.scalars, r.h, tolerance: 1e-5)
                assertClose(out["c_end"]!.scalars, r.c, tolerance: 1e-5)
            }
        }
    }

    func testCondChoosesABranchByItsPredicate() throws {
        // then: 2x → (2, 3); else: concat(x, x + 10) on axis 0 → (4, 3): the output's first dimension is unknown.
        let then = Block(inputs: ["x"], nodes: [Node(name: "double", op: .activation(.linear(alpha: 2, beta: 0)), inputs: ["x"], outputs: ["y"])], outputs: ["y"])
        let otherwise = Block(inputs: ["x"], nodes: [
            Node(name: "shift", op: .activation(.linear(alpha: 1, beta: 10)), inputs: ["x"], outputs: ["s"]),
            Node(name: "both", op: .concat(axis: 0), inputs: ["x", "s"], outputs: ["y"]),
        ], outputs: ["y"])
        for predType in [ElementType.bool, .float32, .int32] {
            var g = Graph(inputs: [ValueInfo(name: "p", type: TensorType([1], predType)), ValueInfo(name: "x", type: TensorType([2, 3]))],
                          outputs: ["y"], nodes: [Node(name: "choose", op: .cond, inputs: ["p", "x"], outputs: ["y"], blocks: [then, otherwise])])
            try g.inferShapes()
            XCTAssertEqual(g.tensorTypes["y"], TensorType([-1, 3]))
            let m = try Model(graph: g)
            let x = randomFloats(count: 6, seed: 3)
            let xa = try NDArray(shape: [2, 3], scalars: x)
            func pred(_ v: Float) throws -> NDArray { try NDArray(shape: [1], scalars: [v]).converted(to: predType) }
            let yes = try m.prediction(from: ["p": try pred(1), "x": xa])["y"]!
            XCTAssertEqual(yes.shape, [2, 3])
            XCTAssertEqual(yes.scalars, x.map { 2 * $0 })
            let no = try m.prediction(from: ["p": try pred(0), "x": xa])["y"]!
            XCTAssertEqual(no.shape, [4, 3])
            XCTAssertEqual(no.scalars, x + x.map { $0 + 10 })
        }
    }

    func testShapeAndDynamicFill() throws {
        // y = x + fill(shape(x), 2.5), x of shape (?, 3).
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([-1, 3]))], outputs: ["s", "y"], nodes: [
            Node(name: "shape", op: .shape, inputs: ["x"], outputs: ["s"]),
            Node(name: "fill", op: .fill(FillAttributes(shape: [], value: 2.5)), inputs: ["s"], outputs: ["f"]),
            Node(name: "add", op: .elementwise(.add), inputs: ["x", "f"], outputs: ["y"]),
        ])
        try g.inferShapes()
        XCTAssertEqual(g.tensorTypes["s"], TensorType([2], .int32))
        XCTAssertEqual(g.tensorTypes["f"], TensorType([-1, -1]))
        XCTAssertEqual(g.tensorTypes["y"], TensorType([-1, 3]))
        let m = try Model(graph: g)
        XCTAssertTrue(m.isDynamic)
        for rows in [1, 4] {
            let x = randomFloats(count: rows * 3, seed: 9)
            let out = try m.prediction(from: ["x": try NDArray(shape: [rows, 3], scalars: x)])
            XCTAssertEqual(out["s"]?.int32s, [Int32(rows), 3])
            XCTAssertEqual(out["y"]?.shape, [rows, 3])
            XCTAssertEqual(out["y"]?.scalars, x.map { $0 + 2.5 })
        }
        XCTAssertThrowsError(try m.prediction(from: ["x": try NDArray(shape: [2, 4], scalars: .init(repeating: 0, count: 8))])) { error in
            guard case RuntimeError.shapeMismatch(let input, let expected, let found) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(input, "x"); XCTAssertEqual(expected, [-1, 3]); XCTAssertEqual(found, [2, 4])
        }
        // A fill of a run-time shape with a non-positive dimension is a typed error.
        var bad = Graph(inputs: [ValueInfo(name: "s", type: TensorType([2], .int32))], outputs: ["f"], nodes: [
            Node(name: "fill", op: .fill(FillAttributes(shape: [], value: 1)), inputs: ["s"], outputs: ["f"]),
        ])
        try bad.inferShapes()
        XCTAssertThrowsError(try Model(graph: bad).prediction(from: ["s": try NDArray(shape: [2], int32s: [3, 0])])) { error in
            guard case let RuntimeError.kernelFailure(node, own, cause) = error else { return XCTFail("\(error)") }
            let message = cause.appended(to: own)
            XCTAssertEqual(node, "fill"); XCTAssertTrue(message.contains("below 1"), message)
        }
    }

    func testShapeOfAStaticGraphKeepsTheStaticPlan() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 5, 3]))], outputs: ["s"], nodes: [
            Node(name: "shape", op: .shape, inputs: ["x"], outputs: ["s"]),
        ])
        try g.inferShapes()
        let m = try Model(graph: g)
        XCTAssertFalse(m.isDynamic)
        XCTAssertEqual(try m.prediction(from: ["x": NDArray(shape: [2, 5, 3])])["s"]?.int32s, [2, 5, 3])
    }

    func testWhileLoopWithAGrowingShape() throws {
        // acc = concat(acc, row) n times: acc's first dimension becomes unknown.
        let c = Block(inputs: ["i", "n", "acc"], nodes: [Node(name: "less", op: .compare(.less), inputs: ["i", "n"], outputs: ["p"])], outputs: ["p"])
        let body = Block(inputs: ["i", "n", "acc"], nodes: [
            Node(name: "inc", op: .binary(.add), inputs: ["i"], outputs: ["i1"], weights: ["y": ConstantTensor(shape: [1], floats: [1])]),
            Node(name: "row", op: .fill(FillAttributes(shape: [1, 2], value: 7)), inputs: [], outputs: ["row"]),
            Node(name: "grow", op: .concat(axis: 0), inputs: ["acc", "row"], outputs: ["acc1"]),
        ], outputs: ["i1", "n", "acc1"])
        var g = Graph(inputs: [ValueInfo(name: "n", type: TensorType([1]))], outputs: ["acc_end"], nodes: [
            Self.constant("i0", [1], 0), Self.constant("acc0", [1, 2], 1),
            Node(name: "loop", op: .whileLoop, inputs: ["i0", "n", "acc0"], outputs: ["i_end", "n_end", "acc_end"], blocks: [c, body]),
        ])
        try g.inferShapes()
        XCTAssertEqual(g.tensorTypes["acc_end"], TensorType([-1, 2]))
        let out = try Model(graph: g).prediction(from: ["n": try NDArray(shape: [1], scalars: [3])])["acc_end"]!
        XCTAssertEqual(out.shape, [4, 2])
        XCTAssertEqual(out.scalars, [1, 1, 7, 7, 7, 7, 7, 7])
    }

    func testIterationGuardThrowsATypedError() throws {
        let g = try Self.sumGraph()
        let m = try Model(graph: g, configuration: .init(threadCount: 1, maximumLoopIterations: 1000))
        XCTAssertEqual(try m.prediction(from: ["n": try NDArray(shape: [1], scalars: [1000])])["sum"]?.scalars, [500_500])
        XCTAssertThrowsError(try m.prediction(from: ["n": try NDArray(shape: [1], scalars: [.infinity])])) { error in
            XCTAssertEqual(error as? RuntimeError, .iterationLimitExceeded(node: "loop", limit: 1000))
            XCTAssertTrue("\(error)".contains("maximumLoopIterations"), "\(error)")
        }
    }

    func testListIndexOutOfRangeIsATypedError() throws {
        var g = Graph(inputs: [ValueInfo(name: "i", type: TensorType([1], .int32))], outputs: ["y"], nodes: [
            Node(name: "list", op: .makeList(MakeListAttributes(elementShape: [2], length: 3, dynamicLength: false)), inputs: [], outputs: ["l"]),
            Node(name: "read", op: .listRead, inputs: ["l", "i"], outputs: ["y"]),
        ])
        try g.inferShapes()
        let m = try Model(graph: g)
        XCTAssertEqual(try m.prediction(from: ["i": try NDArray(shape: [1], int32s: [-1])])["y"]?.scalars, [0, 0])
        XCTAssertThrowsError(try m.prediction(from: ["i": try NDArray(shape: [1], int32s: [3])])) { error in
            guard case let RuntimeError.kernelFailure(node, own, cause) = error else { return XCTFail("\(error)") }
            let message = cause.appended(to: own)
            XCTAssertEqual(node, "read"); XCTAssertTrue(message.contains("out of range"), message)
        }
    }

    func testListScatterThenGatherAndLength() throws {
        // Scatter rows of v (3, 2) at positions [2, 0, 1] of a growing list, gather [0, 1, 2].
        var g = Graph(inputs: [ValueInfo(name: "v", type: TensorType([3, 2]))], outputs: ["stacked", "n"], nodes: [
            Node(name: "list", op: .makeList(MakeListAttributes(elementShape: [-1])), inputs: [], outputs: ["l"]),
            Node(name: "where", op: .range1d(RangeAttributes(start: 2, end: -1, step: -1, elementType: .int32)), inputs: [], outputs: ["where"]),
            Node(name: "scatter", op: .listScatter, inputs: ["l", "where", "v"], outputs: ["l1"]),
            Node(name: "order", op: .range1d(RangeAttributes(start: 0, end: 3, step: 1, elementType: .int32)), inputs: [], outputs: ["order"]),
            Node(name: "gather", op: .listGather, inputs: ["l1", "order"], outputs: ["stacked"]),
            Node(name: "length", op: .listLength, inputs: ["l1"], outputs: ["n"]),
        ])
        try g.inferShapes()
        XCTAssertEqual(g.tensorTypes["stacked"], TensorType([3, -1]))
        let out = try Model(graph: g).prediction(from: ["v": try NDArray(shape: [3, 2], scalars: [1, 2, 3, 4, 5, 6])])
        XCTAssertEqual(out["stacked"]?.shape, [3, 2])
        XCTAssertEqual(out["stacked"]?.scalars, [5, 6, 3, 4, 1, 2])
        XCTAssertEqual(out["n"]?.int32s, [3])
    }

    // MARK: type errors

    func testMismatchedBranchTypesAreRefused() {
        let then = Block(inputs: ["x"], nodes: [], outputs: ["x"])
        let otherwise = Block(inputs: ["x"], nodes: [Node(name: "to_int", op: .cast(to: .int32), inputs: ["x"], outputs: ["y"])], outputs: ["y"])
        let node = Node(name: "choose", op: .cond, inputs: ["p", "x"], outputs: ["y"], blocks: [then, otherwise])
        XCTAssertThrowsError(try node.inferOutputTypes([TensorType([1], .bool), TensorType([2, 3])])) { error in
            guard case let GraphError.invalidNode(name, _, message) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "choose")
            XCTAssertTrue(message.contains("branches must agree"), message)
        }
        var oneBlock = node
        oneBlock.blocks = [then]
        XCTAssertThrowsError(try oneBlock.inferOutputTypes([TensorType([1], .bool), TensorType([2, 3])])) { error in
            XCTAssertTrue("\(error)".contains("needs 2 blocks"), "\(error)")
        }
        // A predicate of several elements.
        XCTAssertThrowsError(try node.inferOutputTypes([TensorType([2], .bool), TensorType([2, 3])]))
    }

    func testLoopCarriedTypesMustBeKept() {
        let c = Block(inputs: ["x"], nodes: [Self.constant("t", [1], 1, .bool)], outputs: ["t"])
        let flatten = Block(inputs: ["x"], nodes: [Node(name: "flat", op: .reshape(targetShape: [6]), inputs: ["x"], outputs: ["y"])], outputs: ["y"])
        let x = TensorType([1, 2, 3])
        var node = Node(name: "loop", op: .whileLoop, inputs: ["x"], outputs: ["y"], blocks: [c, flatten])
        XCTAssertThrowsError(try node.inferOutputTypes([x])) { error in
            XCTAssertTrue("\(error)".contains("must keep its element type, rank"), "\(error)")
        }
        let toInt = Block(inputs: ["x"], nodes: [Node(name: "to_int", op: .cast(to: .int32), inputs: ["x"], outputs: ["y"])], outputs: ["y"])
        node.blocks = [c, toInt]
        XCTAssertThrowsError(try node.inferOutputTypes([x]))
        // The body must yield one value per loop variable; blocks are closed.
        node.blocks = [c, Block(inputs: ["x"], nodes: [], outputs: ["x", "x"])]
        XCTAssertThrowsError(try node.inferOutputTypes([x])) { error in XCTAssertTrue("\(error)".contains("yields 2 value(s)"), "\(error)") }
        node.blocks = [c, Block(inputs: ["x"], nodes: [Node(name: "r", op: .activation(.relu), inputs: ["outer"], outputs: ["y"])], outputs: ["y"])]
        XCTAssertThrowsError(try node.inferOutputTypes([x])) { error in XCTAssertTrue("\(error)".contains("blocks are closed"), "\(error)") }
        // A list written with a value of another element type.
        let write = Node(name: "w", op: .listWrite, inputs: ["l", "i", "v"], outputs: ["l1"])
        XCTAssertThrowsError(try write.inferOutputTypes([.list(elementShape: [2]), TensorType([1], .int32), TensorType([2], .int32)]))
        // Lists cannot feed ordinary ops.
        let relu = Node(name: "r", op: .activation(.relu), inputs: ["l"], outputs: ["y"])
        XCTAssertThrowsError(try relu.inferOutputTypes([.list(elementShape: [2])])) { error in
            XCTAssertTrue("\(error)".contains("tensor list"), "\(error)")
        }
        // Unknown dimensions are −1 only.
        XCTAssertNotNil(TensorType([2, -2]).shapeProblem)
        XCTAssertNotNil(TensorType([0, -1]).shapeProblem)
        XCTAssertNil(TensorType([-1, 3]).shapeProblem)
    }

    // MARK: bundle

    func testBundleRoundTripOfAGraphWithBlocks() throws {
        let g = try Self.sumGraph()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("control-flow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("sum.mlbundle")
        try BundleWriter.write(g, to: url, producer: "mlconv test")
        let loaded = try BundleFile(contentsOf: url).graph
        XCTAssertEqual(loaded, g)
        XCTAssertEqual(loaded.nodes.last?.blocks.count, 2)
        let out = try Model(graph: loaded).prediction(from: ["n": try NDArray(shape: [1], scalars: [10])])
        XCTAssertEqual(out["sum"]?.scalars, [55])
        // And JSON alone (the explicit encoding) keeps the blocks; nodes without blocks write no key.
        let json = String(decoding: try JSONEncoder().encode(g.nodes), as: UTF8.self)
        XCTAssertEqual(json.components(separatedBy: "\"blocks\"").count - 1, 1)
    }

    /// A graph whose input and outputs have a dimension unknown until prediction (the sequence
    /// length) is stored in a bundle and runs from it.
    func testBundleRoundTripWithUnknownDimensions() throws {
        let g = try Self.lstmGraph()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("control-flow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("lstm.mlbundle")
        try BundleWriter.write(g, to: url, producer: "mlconv test")
        let loaded = try BundleFile(contentsOf: url).graph
        XCTAssertEqual(loaded.inputs[0].type.shape, [-1, 1, Self.d])
        let x = randomFloats(count: 5 * Self.d, seed: 5)
        let out = try Model(graph: loaded).prediction(from: ["x": try NDArray(shape: [5, 1, Self.d], scalars: x)])
        assertClose(out["hs"]!.scalars, Self.lstmReference(x, steps: 5).hs, tolerance: 1e-5)
    }
}

extension ControlFlowTests {
    /// Hostile files: nesting deeper than `Node.maxBlockNesting` is refused before inference.
    func testDeepBlockNestingIsRefused() throws {
        var inner = Block(inputs: ["x"], nodes: [], outputs: ["x"])
        for level in 0...Node.maxBlockNesting {
            let pred = Block(inputs: ["x"], nodes: [ControlFlowTests.constant("f\(level)", [1], 0, .bool)], outputs: ["f\(level)"])
            inner = Block(inputs: ["x"], nodes: [Node(name: "loop\(level)", op: .whileLoop, inputs: ["x"], outputs: ["y"], blocks: [pred, inner])], outputs: ["y"])
        }
        let top = inner.nodes[0]
        XCTAssertEqual(top.blockNesting, Node.maxBlockNesting + 1)
        XCTAssertThrowsError(try top.inferOutputTypes([TensorType([2])])) { error in
            XCTAssertTrue("\(error)".contains("nest"), "\(error)")
        }
        // One level less is fine.
        XCTAssertEqual(try inner.nodes[0].blocks[1].nodes[0].inferOutputTypes([TensorType([2])]), [TensorType([2])])
    }
}

extension ControlFlowTests {
    /// A weight inside a block with an overflowing shape or bad quantization is a typed error
    /// at decoding, never a trap.
    func testHostileBlockWeightsAreRefusedWhenDecoding() throws {
        func block(_ weight: String) -> String {
            #"{"inputs":["x"],"outputs":["y"],"nodes":[{"name":"n","op":"binary","attributes":{"function":"add"},"inputs":["x"],"outputs":["y"],"weights":{"y":\#(weight)}}]}"#
        }
        let bad = [#"{"shape":[9223372036854775807,4],"encoding":{"kind":"float32"},"bytes":"AAAAAA=="}"#,
                   #"{"shape":[1],"encoding":{"kind":"linear","bits":0,"axis":0,"scale":[1],"bias":[]},"bytes":"AA=="}"#]
        for w in bad {
            XCTAssertThrowsError(try JSONDecoder().decode(Block.self, from: Data(block(w).utf8))) { error in
                guard case GraphError.invalidConstant = error else { return XCTFail("\(error)") }
            }
        }
        let good = try JSONDecoder().decode(Block.self, from: Data(block(#"{"shape":[1],"encoding":{"kind":"float32"},"bytes":"AACAPw=="}"#).utf8))
        XCTAssertEqual(good.nodes.first?.weights["y"]?.floats(), [1])
    }
}
