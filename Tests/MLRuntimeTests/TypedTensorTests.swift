import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Typed tensors (issue 9): `.npy` round trips per element type, typed `NDArray`s, graphs mixing
/// element types through `Model`, the byte-sized memory plan, and the refusal of float kernels on
/// non-float tensors.
final class TypedTensorTests: XCTestCase {
    // MARK: .npy

    func testNPYRoundTripsEveryElementType() throws {
        let arrays: [(NDArray, String)] = [
            (try NDArray(shape: [2, 3], scalars: [1.5, -2, 0, .infinity, -0.25, 3e-38]), "<f4"),
            (try NDArray(shape: [3], float16s: [1, -2.5, 65504]), "<f2"),
            (try NDArray(shape: [2, 2], int32s: [.max, .min, 0, -7]), "<i4"),
            (try NDArray(shape: [1, 3], int64s: [.max, .min, 1 << 40 + 1]), "<i8"),
            (try NDArray(shape: [5], bools: [true, false, false, true, true]), "|b1"),
        ]
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("typed-npy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (a, descr) in arrays {
            let data = NPY.encode(a)
            let header = String(decoding: data[10..<min(data.count, 80)], as: UTF8.self)
            XCTAssertTrue(header.contains("'descr': '\(descr)'"), "\(a.elementType): header \(header)")
            XCTAssertEqual((data.count - a.count * a.elementType.byteSize) % 64, 0, "header padded to 64 bytes")
            let back = try NPY.decode(data, name: "t.npy")
            XCTAssertEqual(back, a, "\(a.elementType) round trip")
            XCTAssertEqual(back.elementType, a.elementType)
            let url = dir.appendingPathComponent("\(a.elementType).npy")
            try NPY.write(a, to: url)
            XCTAssertEqual(try NPY.read(contentsOf: url), a)
        }
        XCTAssertEqual(try NPY.decode(NPY.encode(arrays[3].0), name: "x").int64s, [.max, .min, 1 << 40 + 1], "int64 exact beyond 2^24")
    }

    func testNPYReadsFloat64AsFloat32AndBoolBytesAsBools() throws {
        func npy(_ descr: String, _ shape: String, _ body: [UInt8]) -> Data {
            var h = "{'descr': '\(descr)', 'fortran_order': False, 'shape': \(shape), }"
            h += String(repeating: " ", count: (64 - (10 + h.utf8.count + 1) % 64) % 64) + "\n"
            var d = Data([0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(h.utf8.count & 0xFF), UInt8(h.utf8.count >> 8)])
            d.append(contentsOf: Array(h.utf8)); d.append(contentsOf: body)
            return d
        }
        let f8 = try NPY.decode(npy("<f8", "(2,)", [1.5, -0.1].flatMap { withUnsafeBytes(of: $0) { Array($0) } }), name: "f8")
        XCTAssertEqual(f8.elementType, .float32)
        XCTAssertEqual(f8.scalars, [1.5, Float(-0.1)])
        let b = try NPY.decode(npy("|b1", "(3,)", [0, 1, 2]), name: "b1")
        XCTAssertEqual(b.elementType, .bool)
        XCTAssertEqual(b.bools, [false, true, true])
        XCTAssertEqual(b.withUnsafeBytes { Array($0) }, [0, 1, 1], "bool bytes are normalized to 0/1")
    }

    // MARK: NDArray

    func testTypedArrayViewsAndConversions() throws {
        var a = try NDArray(shape: [2, 2], int32s: [1, -2, 3, 1 << 24 + 1])
        XCTAssertEqual(a.elementType, .int32)
        XCTAssertEqual(a.scalars, [1, -2, 3, Float(1 << 24)])  // float view rounds beyond 2^24
        XCTAssertEqual(a.int32s, [1, -2, 3, 1 << 24 + 1])      // the values themselves are exact
        a[0, 1] = -7.9  // set through the float view: cast semantics
        XCTAssertEqual(a.int32s, [1, -7, 3, 1 << 24 + 1])
        XCTAssertEqual(a.converted(to: .bool).bools, [true, true, true, true])
        XCTAssertEqual(try NDArray(shape: [3], scalars: [-2.7, 0, 2.7]).converted(to: .int64).int64s, [-2, 0, 2])
        XCTAssertEqual(try NDArray(shape: [2], scalars: [.nan, 1e20]).converted(to: .int32).int32s, [0, .max], "NaN → 0, saturating")
        XCTAssertEqual(try a.reshaped([4]).int32s, a.int32s)
        a.withUnsafeMutableBufferPointer { $0[3] = 2.5 }  // float-view edits reach the typed values
        XCTAssertEqual(a.int32s, [1, -7, 3, 2])
        a = try NDArray(shape: [2, 2], int32s: [1, -7, 3, 1 << 24 + 1])
        var empty = try NDArray(shape: [0, 2], int64s: [])
        empty.withUnsafeMutableBufferPointer { XCTAssertEqual($0.count, 0) }
        XCTAssertEqual(empty.int64s, [])
        XCTAssertEqual(a.description, "NDArray<int32>(2, 2)[1, -7, 3, 16777217]")
        XCTAssertNotEqual(try NDArray(shape: [1], int32s: [1]), try NDArray(shape: [1], scalars: [1]), "element types differ")
        assertRuntimeError(.invalidArray(shape: [2], elementCount: 1, message: "the shape needs 2 int64 values (16 bytes), found 8 bytes")) {
            try NDArray(shape: [2], elementType: .int64, bytes: [UInt8](repeating: 0, count: 8))
        }
    }

    // MARK: Model

    /// float → argmax → cast → gather (and a float kernel after the gather), end to end.
    static func mixedGraph() -> Graph {
        Graph(inputs: [ValueInfo(name: "scores", type: TensorType([1, 4, 5])), ValueInfo(name: "table", type: TensorType([1, 5, 3]))],
              outputs: ["best", "rows", "probs", "isFirst"],
              nodes: [Node(name: "argmax", op: .argmax(ArgReduceAttributes(axis: -1)), inputs: ["scores"], outputs: ["best"]),
                      Node(name: "cast", op: .cast(to: .int64), inputs: ["best"], outputs: ["best64"]),
                      Node(name: "gather", op: .gather(axis: 1), inputs: ["table", "best64"], outputs: ["rows"]),
                      Node(name: "softmax", op: .softmax(axis: 3), inputs: ["rows"], outputs: ["probs"]),
                      Node(name: "zero", op: .fill(FillAttributes(shape: [1], value: 0, elementType: .int32)), inputs: [], outputs: ["zero"]),
                      Node(name: "eq", op: .compare(.equal), inputs: ["best", "zero"], outputs: ["isFirst"])])
    }

    func testMixedElementTypesRunEndToEnd() throws {
        let scores = randomFloats(count: 20, seed: 3), table = randomFloats(count: 15, seed: 4)
        var s = scores
        s[10] = 10  // row 2 picks index 0
        let best = (0..<4).map { r in let row = Array(s[(r * 5)..<(r * 5 + 5)]); return row.firstIndex(of: row.max()!)! }
        for referenceOnly in [true, false] {
            let m = try Model(graph: Self.mixedGraph(), configuration: .init(referenceOnly: referenceOnly))
            XCTAssertEqual(m.modelDescription.outputs.map(\.elementType), [.int32, .float32, .float32, .bool])
            let out = try m.prediction(from: ["scores": nd([1, 4, 5], s), "table": nd([1, 5, 3], table)])
            XCTAssertEqual(out["best"]?.elementType, .int32)
            XCTAssertEqual(out["best"]?.int32s, best.map { Int32($0) })
            XCTAssertEqual(out["rows"]?.shape, [1, 1, 4, 3])
            XCTAssertEqual(out["rows"]?.scalars, best.flatMap { Array(table[($0 * 3)..<($0 * 3 + 3)]) })
            XCTAssertEqual(out["isFirst"]?.bools, best.map { $0 == 0 })
            let probs = try XCTUnwrap(out["probs"]?.scalars)
            for r in 0..<4 { XCTAssertEqual(probs[(r * 3)..<(r * 3 + 3)].reduce(0, +), 1, accuracy: 1e-5) }
            // .npy out in the output's dtype (what `mlconv predict` writes).
            XCTAssertEqual(try NPY.decode(NPY.encode(out["isFirst"]!), name: "o").elementType, .bool)
        }
    }

    func testInputsAreConvertedToTheInputElementType() throws {
        let g = Graph(inputs: [ValueInfo(name: "i", type: TensorType([1, 3], .int32))], outputs: ["y"],
                      nodes: [Node(name: "c", op: .cast(to: .float32), inputs: ["i"], outputs: ["y"])])
        let m = try Model(graph: g)
        XCTAssertEqual(m.modelDescription.inputs[0].elementType, .int32)
        XCTAssertEqual(try m.prediction(from: ["i": nd([1, 3], [2.9, -1.5, 4])])["y"]?.scalars, [2, -1, 4], "float → int32 truncates")
        XCTAssertEqual(try m.prediction(from: ["i": try NDArray(shape: [3], int64s: [5, 6, 7])])["y"]?.scalars, [5, 6, 7])
    }

    func testFloatKernelOnIntegerTensorIsRefusedAtLoad() throws {
        let g = Graph(inputs: [ValueInfo(name: "i", type: TensorType([1, 3], .int32))], outputs: ["y"],
                      nodes: [Node(name: "relu", op: .activation(.relu), inputs: ["i"], outputs: ["y"])])
        for referenceOnly in [true, false] {
            assertRuntimeError(.elementTypeMismatch(node: "relu", op: "activation", tensor: "i", expected: .float32, found: .int32)) {
                try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
            }
        }
        let e = RuntimeError.elementTypeMismatch(node: "relu", op: "activation", tensor: "i", expected: .float32, found: .int32)
        XCTAssertTrue(e.description.contains("'relu'") && e.description.contains("float32") && e.description.contains("int32"), e.description)
        // A float kernel writing a bool tensor is refused too: elementwise propagates its input type.
        let b = Graph(inputs: [ValueInfo(name: "a", type: TensorType([1, 3], .bool)), ValueInfo(name: "b", type: TensorType([1, 3], .bool))],
                      outputs: ["y"], nodes: [Node(name: "add", op: .elementwise(.add), inputs: ["a", "b"], outputs: ["y"])])
        XCTAssertThrowsError(try Model(graph: b)) { error in
            guard case let .elementTypeMismatch(node, _, _, expected, found)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual([node, expected.rawValue, found.rawValue], ["add", "float32", "bool"])
        }
        // After a cast to float32 the same float kernel loads and runs.
        let ok = Graph(inputs: [ValueInfo(name: "i", type: TensorType([1, 3], .int32))], outputs: ["y"],
                       nodes: [Node(name: "c", op: .cast(to: .float32), inputs: ["i"], outputs: ["f"]),
                               Node(name: "relu", op: .activation(.relu), inputs: ["f"], outputs: ["y"])])
        XCTAssertEqual(try Model(graph: ok).prediction(from: ["i": try NDArray(shape: [1, 3], int32s: [-2, 0, 3])])["y"]?.scalars, [0, 0, 3])
    }

    func testEmbeddingTakesIntegerIndices() throws {
        let w = randomFloats(count: 2 * 4, seed: 5)  // [D=2, vocab=4]
        func graph(_ t: ElementType) -> Graph {
            Graph(inputs: [ValueInfo(name: "ids", type: TensorType([1, 5], t))], outputs: ["y"],
                  nodes: [Node(name: "emb", op: .embedding(outputChannels: 2), inputs: ["ids"], outputs: ["y"],
                               weights: ["weight": ConstantTensor(shape: [2, 4], floats: w)])])
        }
        let ids: [Int64] = [3, 0, -1, 4, 1]
        let expected: [Float] = ids.flatMap { i -> [Float] in (0..<4).contains(i) ? [w[Int(i)], w[4 + Int(i)]] : [0, 0] }
        for t in [ElementType.int32, .int64] {
            let out = try Model(graph: graph(t)).prediction(from: ["ids": try NDArray(shape: [1, 5], int64s: ids)])
            XCTAssertEqual(out["y"]?.scalars, expected, "\(t) indices")
        }
        let floatOut = try Model(graph: graph(.float32)).prediction(from: ["ids": nd([1, 5], ids.map { Float($0) })])
        XCTAssertEqual(floatOut["y"]?.scalars, expected, "float-held indices as before")
        XCTAssertThrowsError(try Model(graph: graph(.bool)))
    }

    // MARK: memory plan

    func testMemoryPlanSizesTensorsInBytesByElementType() throws {
        // bool [1, 100] (100 B → 128), int64 [1, 100] (800 B → 832), float [1, 100] (400 B → 448).
        let graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 100])), ValueInfo(name: "z", type: TensorType([1]))],
                          outputs: ["y", "b"],
                          nodes: [Node(name: "gt", op: .compare(.greater), inputs: ["x", "z"], outputs: ["b"]),
                                  Node(name: "i64", op: .cast(to: .int64), inputs: ["b"], outputs: ["l"]),
                                  Node(name: "back", op: .cast(to: .float32), inputs: ["l"], outputs: ["f"]),
                                  Node(name: "relu", op: .activation(.relu), inputs: ["f"], outputs: ["y"])])
        let m = try Model(graph: graph, configuration: .init(referenceOnly: true))
        let plan = m.memoryPlan
        XCTAssertEqual(plan.intermediateByteCount, 832 + 448)
        XCTAssertEqual(plan.outputByteCount, 448 + 128)  // y (float) then b (bool)
        XCTAssertEqual(plan.arenaByteCount, 832 + 448, "l and f are live together (f is produced while l is read)")
        for (_, loc) in plan.locations {
            switch loc {
            case let .arena(o), let .output(o): XCTAssertEqual(o % MemoryPlan.alignmentBytes, 0)
            case .input: break
            }
        }
        let x = randomFloats(count: 100, seed: 6)
        let out = try m.prediction(from: ["x": nd([1, 100], x), "z": nd([1], [0.25])])
        XCTAssertEqual(out["b"]?.bools, x.map { $0 > 0.25 })
        XCTAssertEqual(out["y"]?.scalars, x.map { $0 > 0.25 ? 1 : 0 })
    }

    // MARK: data movement on typed tensors

    /// Reshape, identity, transpose, concat, crop and repeatVector run on int64 / bool / float16
    /// tensors through their typed versions, giving what the float kernels give on the same values.
    func testDataMovementOpsRunOnEveryElementType() throws {
        let cases: [(Op, [[Int]])] = [
            (.reshape(targetShape: [6, 2]), [[1, 3, 4]]), (.identity, [[2, 3]]), (.transpose(perm: [0, 2, 1]), [[2, 3, 4]]),
            (.concat(axis: 1), [[2, 3, 2], [2, 1, 2]]), (.crop(crops: [[0, 0], [1, 0], [0, 2]]), [[1, 3, 4]]), (.repeatVector(n: 3), [[2, 4]]),
        ]
        for (op, shapes) in cases {
            let node = Node(name: "n", op: op, inputs: shapes.indices.map { "in\($0)" }, outputs: ["out"])
            let floats = try shapes.enumerated().map { i, s in
                try NDArray(shape: s, scalars: randomFloats(count: s.reduce(1, *), seed: UInt64(20 + i)).map { Float(Int($0 * 9)) })
            }
            let floatTypes = shapes.map { TensorType($0) }
            let outFloat = try node.inferOutputTypes(floatTypes)
            let ref = try KernelRegistry.makeKernel(KernelContext(node: node, inputTypes: floatTypes, outputTypes: outFloat, threadCount: 1),
                                                    referenceOnly: true)
            let expected = try runTypedKernel(ref, floats, outputTypes: outFloat)[0]
            for t in [ElementType.int64, .bool, .float16, .int32] {
                let types = shapes.map { TensorType($0, t) }
                let outs = try node.inferOutputTypes(types)
                XCTAssertEqual(outs[0].elementType, t, "\(op) propagates the element type")
                let k = try KernelRegistry.makeKernel(KernelContext(node: node, inputTypes: types, outputTypes: outs, threadCount: 1),
                                                      referenceOnly: false)
                XCTAssertTrue(k is TypedKernel, "\(op) on \(t)")
                let got = try runTypedKernel(k, floats.map { $0.converted(to: t) }, outputTypes: outs)[0]
                XCTAssertEqual(got, expected.converted(to: t), "\(op) on \(t)")
            }
        }
    }
}
