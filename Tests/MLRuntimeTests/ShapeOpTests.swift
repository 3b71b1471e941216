import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// matmul's oneDNN kernel against the reference (random shapes: rank-1 operands, batch
/// broadcasting, transposes, constant second operand), and graphs with `constant` nodes (no
/// inputs) through the memory plan and `Model`.
final class ShapeOpTests: XCTestCase {
    func testDNNLMatMulMatchesReference() throws {
        var g = SeededGenerator(seed: 0x3A7)
        func int(_ lo: Int, _ hi: Int) -> Int { Int.random(in: lo...hi, using: &g) }
        var tested = 0, constants = 0, rank1 = 0, broadcast = 0
        for trial in 0..<120 {
            let m = int(1, 9), k = int(1, 17), n = int(1, 11)
            let tx = int(0, 1) == 1, ty = int(0, 1) == 1
            let batchRank = int(0, 3)
            let batch = (0..<batchRank).map { _ in int(1, 3) }
            // Each operand keeps a random suffix of the batch axes, with some axes set to 1.
            func batchOf() -> [Int] { Array(batch.suffix(int(0, batchRank))).map { int(0, 3) == 0 ? 1 : $0 } }
            var x = batchOf() + (tx ? [k, m] : [m, k])
            var y = batchOf() + (ty ? [n, k] : [k, n])
            switch trial % 6 {
            case 0 where !tx: x = [k]; rank1 += 1
            case 1: y = [k]; rank1 += 1
            default: break
            }
            if x.count == 1 && y.count == 1 { y = [k, n] }
            let useConstant = trial % 3 == 0
            let yValues = (0..<y.reduce(1, *)).map { _ in Float.random(in: -2...2, using: &g) }
            let node = Node(name: "mm\(trial)", op: .matmul(MatMulAttributes(transposeX: tx, transposeY: ty)),
                            inputs: useConstant ? ["x"] : ["x", "y"], outputs: ["out"],
                            weights: useConstant ? ["y": ConstantTensor(shape: y, floats: yValues)] : [:])
            let inTypes = useConstant ? [TensorType(x)] : [TensorType(x), TensorType(y)]
            let outTypes = try node.inferOutputTypes(inTypes)
            let ctx = KernelContext(node: node, inputTypes: inTypes, outputTypes: outTypes, threadCount: 2)
            let reference = try XCTUnwrap(try ReferenceKernels.table[.matmul]!(ctx))
            let fast = try XCTUnwrap(try OptimizedKernels.table[.matmul]!(ctx), "oneDNN declined \(x) · \(y) tx=\(tx) ty=\(ty)")
            XCTAssertTrue(fast is DNNLKernel)
            let xValues = (0..<x.reduce(1, *)).map { _ in Float.random(in: -2...2, using: &g) }
            let ins = useConstant ? [xValues] : [xValues, yValues]
            let want = runKernel(reference, ins, outputCounts: [outTypes[0].elementCount])[0]
            let got = runKernel(fast, ins, outputCounts: [outTypes[0].elementCount])[0]
            for (i, (a, b)) in zip(got, want).enumerated() where abs(a - b) > 1e-4 * max(1, abs(b)) {
                XCTFail("\(x) · \(y) tx=\(tx) ty=\(ty) const=\(useConstant): element \(i) is \(a), reference \(b)")
                break
            }
            tested += 1
            if useConstant { constants += 1 }
            if outTypes[0].shape.count > 2, x.count != y.count || x.dropLast(2) != y.dropLast(2) { broadcast += 1 }
        }
        XCTAssertEqual(tested, 120)
        XCTAssertGreaterThan(constants, 20); XCTAssertGreaterThan(rank1, 20); XCTAssertGreaterThan(broadcast, 10)
    }

    func testMatMulRank1ByRank1IsADotProductOfRank0() throws {
        let node = Node(name: "mm", op: .matmul(MatMulAttributes()), inputs: ["a", "b"], outputs: ["c"])
        let outs = try node.inferOutputTypes([TensorType([3]), TensorType([3])])
        XCTAssertEqual(outs, [TensorType([])])
        let ctx = KernelContext(node: node, inputTypes: [TensorType([3]), TensorType([3])], outputTypes: outs, threadCount: 1)
        let kernel = try KernelRegistry.makeKernel(ctx, referenceOnly: true)
        XCTAssertEqual(runKernel(kernel, [[1, 2, 3], [4, 5, -6]], outputCounts: [1]), [[-4]])
        let t = Node(name: "mm", op: .matmul(MatMulAttributes(transposeX: true)), inputs: ["a", "b"], outputs: ["c"])
        XCTAssertThrowsError(try t.inferOutputTypes([TensorType([3]), TensorType([3, 2])]))
    }

    /// A graph whose nodes read `constant` nodes (zero inputs): as a matmul operand, an add
    /// operand, and directly as a graph output; checked on the reference and optimized paths.
    func testGraphReadingConstants() throws {
        let w: [Float] = [1, 2, 3, 4, 5, 6]  // [3, 2]
        let b: [Float] = [10, 20]
        let nodes = [
            Node(name: "w", op: .constant, inputs: [], outputs: ["w"], weights: ["value": ConstantTensor(shape: [3, 2], floats: w)]),
            Node(name: "b", op: .constant, inputs: [], outputs: ["b"], weights: ["value": ConstantTensor(shape: [1, 2], floats: b)]),
            Node(name: "mm", op: .matmul(MatMulAttributes()), inputs: ["x", "w"], outputs: ["xw"]),
            Node(name: "add", op: .elementwise(.add), inputs: ["xw", "b"], outputs: ["y"]),
        ]
        var graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 3]))], outputs: ["y", "b"], nodes: nodes)
        try graph.inferShapes()
        XCTAssertEqual(graph.tensorTypes["w"]?.shape, [3, 2])
        let plan = MemoryPlan(graph: graph)
        XCTAssertNotNil(plan.locations["w"]); XCTAssertNotNil(plan.locations["b"])
        for referenceOnly in [true, false] {
            let model = try Model(graph: graph, configuration: .init(referenceOnly: referenceOnly))
            let x = try NDArray(shape: [2, 3], scalars: [1, 0, -1, 2, 1, 0])
            for _ in 0..<2 {  // the second run reuses the pooled arena
                let out = try model.prediction(from: ["x": x])
                // [1,0,-1]·W = [1-5, 2-6] = [-4, -4]; [2,1,0]·W = [2+3, 4+4] = [5, 8]; + b.
                XCTAssertEqual(out["y"]?.scalars, [6, 16, 15, 28], "referenceOnly=\(referenceOnly)")
                XCTAssertEqual(out["y"]?.shape, [2, 2])
                XCTAssertEqual(out["b"]?.scalars, b)
            }
        }
    }

    func testConstantWithInputsOrWithoutValueIsRejected() {
        let noValue = Node(name: "c", op: .constant, inputs: [], outputs: ["c"])
        XCTAssertThrowsError(try noValue.inferOutputTypes([]))
        let withInput = Node(name: "c", op: .constant, inputs: ["x"], outputs: ["c"], weights: ["value": randomConstant([2])])
        XCTAssertThrowsError(try withInput.inferOutputTypes([TensorType([2])]))
    }

    func testHostileSliceAttributesDoNotTrap() {
        let cases: [SliceByIndexAttributes] = [
            SliceByIndexAttributes(begin: [Int.min], end: [Int.max], stride: [Int.max]),
            SliceByIndexAttributes(begin: [Int.max], end: [Int.min], stride: [-Int.max]),
            SliceByIndexAttributes(begin: [0], end: [1], stride: [Int.min]),
            SliceByIndexAttributes(begin: [0], end: [1], stride: [0]),
        ]
        for (i, a) in cases.enumerated() {
            let node = Node(name: "s", op: .sliceByIndex(a), inputs: ["x"], outputs: ["y"])
            let r = try? node.inferOutputTypes([TensorType([5])])
            if i == 0 { XCTAssertEqual(r?.first?.shape, [1]) }
            if i == 1 { XCTAssertEqual(r?.first?.shape, [1]) }
            if i >= 2 { XCTAssertNil(r) }
        }
    }
}

/// Rank-0 tensors (one element, shape []) flow through `Model`: in, between nodes and out.
final class RankZeroTests: XCTestCase {
    func testScalarInputReductionAndOutput() throws {
        let sum = Node(name: "sum", op: .reduce(ReduceAttributes(function: .sum, axes: [], keepDims: false)), inputs: ["x"], outputs: ["s"])
        let add = Node(name: "add", op: .binary(.add), inputs: ["s", "bias"], outputs: ["y"])
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 3])), ValueInfo(name: "bias", type: TensorType([]))],
                      outputs: ["s", "y"], nodes: [sum, add])
        try g.inferShapes()
        XCTAssertEqual(g.tensorTypes["s"], TensorType([]))
        XCTAssertEqual(g.tensorTypes["y"], TensorType([]))
        for referenceOnly in [true, false] {
            let m = try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
            let out = try m.prediction(from: ["x": try NDArray(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6]),
                                              "bias": try NDArray(shape: [], scalars: [0.5])])
            XCTAssertEqual(out["s"]?.shape, [])
            XCTAssertEqual(out["s"]?.scalars, [21])
            XCTAssertEqual(out["y"]?.scalars, [21.5])
        }
    }
}
