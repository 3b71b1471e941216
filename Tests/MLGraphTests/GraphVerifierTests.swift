import Diagnostics
import Foundation
import XCTest
@testable import MLGraph

/// The layered graph verifier (issue 13): each layer refuses a graph crafted to break exactly
/// that layer, naming it; sizes never trap; valid graphs pass. (The readers' fixtures are swept
/// by `GraphVerifierFixtureTests` in MLConvCLITests, which can import every format.)
final class GraphVerifierTests: XCTestCase {
    // MARK: helpers

    private let x = ValueInfo(name: "x", type: TensorType([1, 4]))

    private func dense(_ name: String, _ input: String, cin: Int = 4, cout: Int = 3, weight: ConstantTensor? = nil) -> Node {
        Node(name: name, op: .dense(DenseAttributes(outputChannels: cout)), inputs: [input], outputs: [name],
             weights: ["weight": weight ?? ConstantTensor(shape: [cout, cin], floats: (0..<(cout * cin)).map { Float($0) / 10 }),
                       "bias": ConstantTensor(shape: [cout], floats: Array(repeating: 0.5, count: cout))])
    }

    private func relu(_ name: String, _ input: String) -> Node {
        Node(name: name, op: .activation(.relu), inputs: [input], outputs: [name])
    }

    /// x → dense "d" (4 → 3) → relu "r"; types inferred.
    private func goodGraph() throws -> Graph {
        var g = Graph(inputs: [x], outputs: ["r"], nodes: [dense("d", "x"), relu("r", "d")])
        try g.inferShapes()
        return g
    }

    /// The verifier's failure for `g`, failing the test when it passes or throws something else.
    private func failure(_ g: Graph, file: StaticString = #filePath, line: UInt = #line) -> GraphVerificationFailure? {
        do {
            try g.verify()
            XCTFail("the graph verified", file: file, line: line)
        } catch let GraphError.verificationFailed(f) {
            return f
        } catch {
            XCTFail("not a verifier failure: \(error)", file: file, line: line)
        }
        return nil
    }

    private func assertFails(_ g: Graph, at layer: GraphVerifier.Layer, node: String? = nil, tensor: String? = nil, weight: String? = nil,
                             mentioning text: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        guard let f = failure(g, file: file, line: line) else { return }
        XCTAssertEqual(f.layer, layer, f.description, file: file, line: line)
        XCTAssertTrue(f.description.hasPrefix("invalid graph (\(layer.rawValue) check): "), f.description, file: file, line: line)
        if let node { XCTAssertEqual(f.node, node, f.description, file: file, line: line) }
        if let tensor { XCTAssertEqual(f.tensor, tensor, f.description, file: file, line: line) }
        if let weight { XCTAssertEqual(f.weight, weight, f.description, file: file, line: line) }
        if let text { XCTAssertTrue(f.description.contains(text), "'\(text)' not in: \(f.description)", file: file, line: line) }
        XCTAssertNotNil(f.expected, f.description, file: file, line: line)
        XCTAssertNotNil(f.found, f.description, file: file, line: line)
        // The layers before the failing one pass.
        if let before = GraphVerifier.Layer.allCases.last(where: { $0 < layer }) {
            XCTAssertNoThrow(try GraphVerifier.verify(g, through: before), "layers up to \(before)", file: file, line: line)
        }
    }

    // MARK: valid graphs

    func testLayersAreNamedAndRunInOrder() {
        XCTAssertEqual(GraphVerifier.Layer.allCases.map(\.rawValue), ["structure", "references", "types", "shapes", "sizes"])
        XCTAssertTrue(GraphVerifier.Layer.structure < .sizes)
    }

    func testValidGraphsPass() throws {
        let g = try goodGraph()
        XCTAssertNoThrow(try g.verify())
        for layer in GraphVerifier.Layer.allCases { XCTAssertNoThrow(try GraphVerifier.verify(g, through: layer), "\(layer)") }
        // Without recorded types (before inferShapes), an input used as an output, unknown dimensions.
        XCTAssertNoThrow(try Graph(inputs: [x], outputs: ["x", "r"], nodes: [relu("r", "x")]).verify())
        let dynamic = ValueInfo(name: "x", type: TensorType([TensorType.unknown, 4]))
        var d = Graph(inputs: [dynamic], outputs: ["d"], nodes: [dense("d", "x")])
        try d.inferShapes()
        XCTAssertNoThrow(try d.verify())
        // Compressed and quantized weights whose storage is exactly what their encoding needs.
        let lut = try ConstantTensor(shape: [3, 4], encoding: .lookupTable(LookupTableQuantization(bits: 2, table: [-1, 0, 1, 2])),
                                     storage: .copying(packMSBFirst(Array(repeating: 1, count: 12), bits: 2)))
        let pal = try ConstantTensor.compressed(shape: [3, 4], encoding: .palettized(PalettizedQuantization(bits: 1, blocks: [3, 1])),
                                                codes: Array(repeating: 1, count: 12), parameters: [0, 1, 0, 2, 0, 3])
        let sparse = try ConstantTensor.compressed(shape: [3, 4], encoding: .sparse(SparseEncoding(nonzeroCount: 2, values: .float16)),
                                                   codes: [], parameters: [1, 2], mask: (0..<12).map { $0 == 0 || $0 == 5 })
        for w in [lut, pal, sparse] {
            var q = Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: w)])
            try q.inferShapes()
            XCTAssertNoThrow(try q.verify(), "\(w.encoding)")
        }
    }

    // MARK: structure

    func testStructure() throws {
        var g = try goodGraph()
        g.nodes[1].name = "d"
        assertFails(g, at: .structure, node: "d", mentioning: "two nodes are named 'd'")

        g = try goodGraph()
        g.nodes.swapAt(0, 1)  // relu reads d before dense produces it
        assertFails(g, at: .structure, node: "r", tensor: "d", mentioning: "topological order")

        g = try goodGraph()
        g.nodes[1].outputs = ["d"]
        assertFails(g, at: .structure, node: "r", tensor: "d", mentioning: "produced twice")

        g = try goodGraph()
        g.nodes[0].outputs = ["x"]  // writes over the graph input
        assertFails(g, at: .structure, tensor: "x", mentioning: "produced twice")

        g = try goodGraph()
        g.inputs.append(x)
        assertFails(g, at: .structure, tensor: "x", mentioning: "declared twice")

        g = try goodGraph()
        g.outputs.append("nowhere")
        assertFails(g, at: .structure, tensor: "nowhere", mentioning: "not produced")

        g = try goodGraph()
        g.nodes[1].outputs = []
        assertFails(g, at: .structure, node: "r", mentioning: "has no outputs")

        g = try goodGraph()
        g.nodes[1].blocks = [Block(inputs: [], nodes: [], outputs: [])]
        assertFails(g, at: .structure, node: "r", mentioning: "only cond and whileLoop own blocks")
    }

    /// Blocks are checked recursively, and nesting deeper than `Node.maxBlockNesting` is refused
    /// before any recursion of shape inference.
    func testStructureOfBlocks() throws {
        let pred = Node(name: "p", op: .fill(FillAttributes(shape: [1], value: 0, elementType: .bool)), inputs: [], outputs: ["p"])
        func loop(_ name: String, body: Block) -> Node {
            Node(name: name, op: .whileLoop, inputs: ["x"], outputs: [name],
                 blocks: [Block(inputs: ["v"], nodes: [pred], outputs: ["p"]), body])
        }
        var body = Block(inputs: ["v"], nodes: [], outputs: ["v"])
        for level in 0..<Node.maxBlockNesting {
            body = Block(inputs: ["v"], nodes: [Node(name: "loop\(level)", op: .whileLoop, inputs: ["v"], outputs: ["w"],
                                                     blocks: [Block(inputs: ["v"], nodes: [pred], outputs: ["p"]), body])], outputs: ["w"])
        }
        let tooDeep = Graph(inputs: [x], outputs: ["top"], nodes: [loop("top", body: body)])
        assertFails(tooDeep, at: .structure, node: "top", mentioning: "nest \(Node.maxBlockNesting + 1) levels deep")

        let twice = Block(inputs: ["v"], nodes: [Node(name: "a", op: .activation(.relu), inputs: ["v"], outputs: ["v"])], outputs: ["v"])
        assertFails(Graph(inputs: [x], outputs: ["top"], nodes: [loop("top", body: twice)]), at: .structure, node: "top",
                    mentioning: "block 1 of node 'top': tensor 'v' is produced twice")
        let unproduced = Block(inputs: ["v"], nodes: [], outputs: ["w"])
        assertFails(Graph(inputs: [x], outputs: ["top"], nodes: [loop("top", body: unproduced)]), at: .structure, node: "top",
                    mentioning: "block output 'w' is not produced")
    }

    // MARK: references

    func testReferences() throws {
        var g = try goodGraph()
        g.nodes[1].inputs = ["nope"]
        assertFails(g, at: .references, node: "r", tensor: "nope", mentioning: "reads tensor 'nope'")

        g = try goodGraph()
        g.description.inputs = [FeatureDescription(name: "image")]
        assertFails(g, at: .references, tensor: "image", mentioning: "description names input 'image'")

        g = try goodGraph()
        g.description.outputs = [FeatureDescription(name: "d")]  // a tensor, but not a graph output
        assertFails(g, at: .references, tensor: "d", mentioning: "description names output 'd'")

        g = try goodGraph()
        g.description.probabilitiesOutput = "probs"
        assertFails(g, at: .references, tensor: "probs", mentioning: "probabilities output 'probs'")

        // Blocks are closed: a block node may not read a tensor of the outer graph.
        let pred = Node(name: "p", op: .fill(FillAttributes(shape: [1], value: 0, elementType: .bool)), inputs: [], outputs: ["p"])
        let body = Block(inputs: ["v"], nodes: [Node(name: "a", op: .binary(.add), inputs: ["v", "x"], outputs: ["w"])], outputs: ["w"])
        let captured = Graph(inputs: [x], outputs: ["top"], nodes: [
            Node(name: "top", op: .whileLoop, inputs: ["x"], outputs: ["top"], blocks: [Block(inputs: ["v"], nodes: [pred], outputs: ["p"]), body])])
        assertFails(captured, at: .references, node: "top", tensor: "x", mentioning: "blocks are closed")
    }

    // MARK: types

    func testTypes() throws {
        var g = try goodGraph()
        g.tensorTypes["r"] = TensorType([1, 3], .int32)
        assertFails(g, at: .types, node: "r", tensor: "r", mentioning: "recorded as int32")
        XCTAssertEqual(failure(g)?.expected, "float32")
        XCTAssertEqual(failure(g)?.found, "int32")

        // A look-up table with fewer entries than 2^bits (floats() would index past it).
        let codes = ByteStorage.copying(packMSBFirst(Array(repeating: 3, count: 12), bits: 2))
        let shortTable = try ConstantTensor(shape: [3, 4], encoding: .lookupTable(LookupTableQuantization(bits: 2, table: [0, 1, 2])), storage: codes)
        g = Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: shortTable)])
        assertFails(g, at: .types, node: "d", weight: "weight", mentioning: "look-up table has 3 entries")

        // Per-channel linear scales that do not match the axis, and a negative axis.
        let wrongScales = try ConstantTensor(shape: [3, 4], encoding: .linear(LinearQuantization(bits: 2, axis: 0, scale: [1, 2], bias: [])), storage: codes)
        assertFails(Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: wrongScales)]), at: .types, weight: "weight", mentioning: "2 scales for axis 0")
        let negativeAxis = try ConstantTensor(shape: [3, 4], encoding: .linear(LinearQuantization(bits: 2, axis: -1, scale: [1, 2, 3], bias: [])), storage: codes)
        assertFails(Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: negativeAxis)]), at: .types, weight: "weight", mentioning: "axis is out of range")

        // float32 values at an odd address.
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        defer { bytes.deallocate() }
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        let owner = NSObject()
        let misaligned = try ConstantTensor(shape: [3, 4], encoding: .float32,
                                            storage: ByteStorage(borrowing: UnsafeRawPointer(bytes + 1), count: 48, owner: owner))
        assertFails(Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: misaligned)]), at: .types, weight: "weight", mentioning: "not aligned for float32")
    }

    // MARK: shapes

    func testShapes() throws {
        var g = try goodGraph()
        g.tensorTypes["r"] = TensorType([1, 4])
        assertFails(g, at: .shapes, node: "r", tensor: "r", mentioning: "recorded as float32[1×4]")
        XCTAssertEqual(failure(g)?.expected, "(1, 3)")

        g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 0, 4]))], outputs: ["x"], nodes: [])
        assertFails(g, at: .shapes, tensor: "x", mentioning: "dimension 0 is not positive")
        g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([Int](repeating: 1, count: Node.maxRank + 1)))], outputs: ["x"], nodes: [])
        assertFails(g, at: .shapes, tensor: "x", mentioning: "rank \(Node.maxRank + 1) is more than \(Node.maxRank)")

        // The op's shape rule refuses the node: its error is the cause.
        g = Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", cin: 5)])
        assertFails(g, at: .shapes, node: "d", mentioning: "shape rule refuses")
        guard case let .graph(GraphError.invalidNode(node, op, _))? = failure(g)?.cause else { return XCTFail("no cause") }
        XCTAssertEqual([node, op], ["d", "dense"])

        // A weight with a negative dimension (ConstantTensor's init does not check dimensions).
        let negative = try ConstantTensor(shape: [-3, 4], encoding: .float32, storage: .copying([UInt8](repeating: 0, count: 48)))
        assertFails(Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: negative)]), at: .shapes, node: "d", weight: "weight",
                    mentioning: "dimension -3 is negative")
    }

    // MARK: sizes

    /// Shapes whose element count or byte size overflows Int give a typed error, never a trap.
    func testOverflowingSizesAreTypedErrors() throws {
        for shape in [[1 << 62, 4], [1, 1 << 30, 1 << 30, 1 << 30], [Int.max, Int.max], [1 << 41]] {
            let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType(shape))], outputs: ["r"], nodes: [relu("r", "x")])
            assertFails(g, at: .sizes, tensor: "x", mentioning: "more than 2^40 elements")
        }
        // A weight of 2^41 elements (its bytes are never read: the storage only claims them).
        let owner = NSObject()
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        defer { scratch.deallocate() }
        let huge = try ConstantTensor(shape: [1 << 21, 1 << 20], encoding: .linear(LinearQuantization(bits: 1, axis: 0, scale: [1], bias: [])),
                                      storage: ByteStorage(borrowing: UnsafeRawPointer(scratch), count: 1 << 38, owner: owner))
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 1 << 20]))], outputs: ["d"],
                      nodes: [Node(name: "d", op: .dense(DenseAttributes(outputChannels: 1 << 21)), inputs: ["x"], outputs: ["d"], weights: ["weight": huge])])
        assertFails(g, at: .sizes, node: "d", weight: "weight", mentioning: "more than 2^40 elements")
        XCTAssertEqual(GraphVerifier.checkedByteCount(.float32, elements: Int.max / 2), nil)
        XCTAssertEqual(GraphVerifier.checkedByteCount(.palettized(PalettizedQuantization(bits: 8, blocks: [Int.max / 2, 4])), elements: 8), nil)
    }

    /// A weight whose stored bytes disagree with its shape and encoding is refused (too many bytes:
    /// ConstantTensor's init accepts them, the verifier does not).
    func testWeightByteCountMustMatchItsShape() throws {
        let tooLong = try ConstantTensor(shape: [3, 4], encoding: .float32, storage: .copying([UInt8](repeating: 0, count: 52)))
        var g = Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: tooLong)])
        assertFails(g, at: .sizes, node: "d", weight: "weight", mentioning: "needs 48 bytes, its storage holds 52")
        XCTAssertEqual(failure(g)?.expected, "48 bytes")
        XCTAssertEqual(failure(g)?.found, "52 bytes")
        // 4-bit codes of 12 values take 6 bytes.
        let q = LinearQuantization(bits: 4, axis: 0, scale: [1], bias: [])
        let codes = try ConstantTensor(shape: [3, 4], encoding: .linear(q), storage: .copying([UInt8](repeating: 0, count: 7)))
        g = Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: codes)])
        assertFails(g, at: .sizes, weight: "weight", mentioning: "needs 6 bytes, its storage holds 7")
        let exact = try ConstantTensor(shape: [3, 4], encoding: .linear(q), storage: .copying([UInt8](repeating: 0, count: 6)))
        XCTAssertNoThrow(try Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: exact)]).verify())
    }

    /// The weights held in memory, and the largest tensor, are checked against `MemoryLimit`;
    /// the cause is `MemoryLimitExceeded` and the category `.resourceLimit`.
    func testMemoryLimitRefusesABigWeight() throws {
        let big = ConstantTensor(shape: [3, 1 << 16], floats: Array(repeating: 0, count: 3 << 16))  // 768 KiB
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 1 << 16]))], outputs: ["d"], nodes: [
            Node(name: "d", op: .dense(DenseAttributes(outputChannels: 3)), inputs: ["x"], outputs: ["d"], weights: ["weight": big])])
        XCTAssertNoThrow(try g.verify())
        MemoryLimit.with(512 << 10) {
            assertFails(g, at: .sizes, mentioning: "the weights held in memory take 768.0 KiB")
            do { try g.verify() } catch let e as GraphError {
                guard case let .verificationFailed(f) = e, case let .memoryLimit(m)? = f.cause else { return XCTFail("\(e)") }
                XCTAssertEqual(m.requestedBytes, 3 << 18)
                XCTAssertEqual(m.limitBytes, 512 << 10)
                XCTAssertEqual(Diagnostic(e).category, .resourceLimit)
                XCTAssertEqual(Diagnostic(e).causes.first?.errorType, "MemoryLimitExceeded")
                XCTAssertEqual(e.memoryLimitExceeded(file: "m.h5")?.file, "m.h5")
            } catch { XCTFail("\(error)") }
        }
        // The largest single tensor: the 256 KiB input under a 128 KiB limit.
        MemoryLimit.with(128 << 10) {
            let small = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 1 << 16]))], outputs: ["r"], nodes: [relu("r", "x")])
            assertFails(small, at: .sizes, tensor: "x", mentioning: "takes 256.0 KiB, more than the memory limit of 128.0 KiB")
        }
        XCTAssertNoThrow(try g.verify(), "the limit is restored")
    }

    /// The readers' entry: types recorded on success; when inference fails, the verifier's
    /// layered error (here the shapes layer, with the op's error as cause) instead of the bare one.
    func testInferShapesAndVerify() throws {
        var g = Graph(inputs: [x], outputs: ["r"], nodes: [dense("d", "x"), relu("r", "d")])
        try g.inferShapesAndVerify()
        XCTAssertEqual(g.tensorTypes["r"], TensorType([1, 3]))
        var bad = Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", cin: 5)])
        XCTAssertThrowsError(try bad.inferShapes()) { error in
            guard case GraphError.invalidNode = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try bad.inferShapesAndVerify()) { error in
            guard case let GraphError.verificationFailed(f) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(f.layer, .shapes)
            XCTAssertEqual(f.node, "d")
            guard case .graph(GraphError.invalidNode)? = f.cause else { return XCTFail("\(String(describing: f.cause))") }
        }
        var loop = Graph(inputs: [x], outputs: ["r"], nodes: [relu("r", "r")])
        XCTAssertThrowsError(try loop.inferShapesAndVerify()) { error in
            guard case let GraphError.verificationFailed(f) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(f.layer, .structure)
        }
    }

    // MARK: order and diagnostics

    /// The first failing layer is reported when several are broken.
    func testFirstFailingLayerWins() throws {
        var g = try goodGraph()
        g.tensorTypes["r"] = TensorType([1, 9])  // shapes
        g.nodes[1].inputs = ["nope"]  // references
        assertFails(g, at: .references)
        g.nodes[1].name = "d"  // structure
        assertFails(g, at: .structure)
    }

    func testFailureIsADiagnostic() throws {
        var g = try goodGraph()
        g.tensorTypes["r"] = TensorType([1, 4])
        do {
            try g.verify()
            XCTFail("verified")
        } catch {
            let d = Diagnostic(error)
            XCTAssertEqual(d.category, .inputFile)
            XCTAssertEqual(d.location, DiagnosticLocation(.node, "r"))
            XCTAssertEqual(d.expected, "(1, 3)")
            XCTAssertEqual(d.found, "(1, 4)")
            XCTAssertTrue(d.summary.contains("shapes check"), d.summary)
        }
        let w = try ConstantTensor(shape: [3, 4], encoding: .float32, storage: .copying([UInt8](repeating: 0, count: 52)))
        XCTAssertThrowsError(try Graph(inputs: [x], outputs: ["d"], nodes: [dense("d", "x", weight: w)]).verify()) { error in
            XCTAssertEqual(Diagnostic(error).location, DiagnosticLocation(.weight, "d.weight"))
        }
    }
}

/// Regression (found by the mlmodel fuzz target): `RangeAttributes.count` converted a huge
/// negative ceil((end − start) / step) with `Int(_:)`, which traps below Int.min.
final class RangeAttributesCountTests: XCTestCase {
    func testHugeNegativeCountIsZeroNotATrap() {
        XCTAssertEqual(RangeAttributes(start: 0, end: -3.0e38, step: 1).count, 0)
        XCTAssertEqual(RangeAttributes(start: 3.0e38, end: 0, step: 1).count, 0)
        XCTAssertNil(RangeAttributes(start: 0, end: 3.0e38, step: 1).count)  // over 2^50 values
        XCTAssertEqual(RangeAttributes(start: 0, end: 5, step: 2).count, 3)
        XCTAssertEqual(RangeAttributes(start: 5, end: 0, step: -2).count, 3)
    }
}
