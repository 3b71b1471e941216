// Bundle format 2.1's compressed weight encodings (docs/BUNDLE_FORMAT.md §5.3, §6): blockwise,
// palettized and sparse constants expand to the values of their formulas (computed here with
// plain loops), round-trip through a bundle written as 2.1 (a graph without them stays 2.0),
// and every malformed field, an unknown encoding kind and a lying sparse mask are typed errors.
import Foundation
import MLGraph
@testable import MLBundle
import MLRuntime
import XCTest

final class CompressedEncodingFormatTests: XCTestCase {
    // dense1.weight [4, 6]: int4 codes, blocks [2, 3] (2×2 elements each), scale and zero point per block.
    let codes1: [Int] = (0..<24).map { ($0 * 5) % 16 - 8 }
    let scale1: [Float] = (0..<6).map { 0.5 + 0.25 * Float($0) }
    let zero1: [Float] = (0..<6).map { Float($0 - 3) }
    // dense1.bias [4]: 2-bit codes, 2 palettes of 4.
    let codesB1: [UInt8] = [3, 0, 1, 2]
    let table1: [Float] = [0.1, 0.2, 0.3, 0.4, -1, -2, -3, -4]
    // dense2.weight [3, 4]: sparse (mask i % 3 ≠ 0), 1-bit codes, one 2-entry palette per row.
    var mask2: [Bool] { (0..<12).map { $0 % 3 != 0 } }
    let table2: [Float] = [1, -1, 0.5, -0.5, 2, -2]
    // dense2.bias [3]: sparse fp16.
    let maskB2: [Bool] = [true, false, true]
    let valuesB2: [Float] = [0.5, -2]

    /// The dense values, from the formulas.
    var expected1: [Float] {
        (0..<24).map { i in
            let b = (i / 6 / 2) * 3 + (i % 6) / 2
            return Float(Double(scale1[b]) * (Double(codes1[i]) - Double(zero1[b])))
        }
    }
    var expectedB1: [Float] { (0..<4).map { table1[($0 / 2) * 4 + Int(codesB1[$0])] } }
    var codes2: [UInt8] { (0..<12).filter { $0 % 3 != 0 }.map { UInt8($0 % 2) } }
    var expected2: [Float] { (0..<12).map { $0 % 3 == 0 ? 0 : table2[($0 / 4) * 2 + $0 % 2] } }

    func tensors() throws -> (w1: ConstantTensor, b1: ConstantTensor, w2: ConstantTensor, b2: ConstantTensor) {
        let w1 = try ConstantTensor.compressed(
            shape: [4, 6], encoding: .blockwise(BlockwiseQuantization(bits: 4, signed: true, blocks: [2, 3], hasZeroPoint: true)),
            codes: codes1.map { UInt8(truncatingIfNeeded: $0) }, parameters: scale1 + zero1)
        let b1 = try ConstantTensor.compressed(shape: [4], encoding: .palettized(PalettizedQuantization(bits: 2, blocks: [2])),
                                               codes: codesB1, parameters: table1)
        let w2 = try ConstantTensor.compressed(
            shape: [3, 4], encoding: .sparse(SparseEncoding(nonzeroCount: 8, values: .palettized(PalettizedQuantization(bits: 1, blocks: [3, 1])))),
            codes: codes2, parameters: table2, mask: mask2)
        let b2 = try ConstantTensor.compressed(shape: [3], encoding: .sparse(SparseEncoding(nonzeroCount: 2, values: .float16)),
                                               codes: [], parameters: valuesB2, mask: maskB2)
        return (w1, b1, w2, b2)
    }

    func graph(_ t: (w1: ConstantTensor, b1: ConstantTensor, w2: ConstantTensor, b2: ConstantTensor)) throws -> Graph {
        var g = Graph(
            inputs: [ValueInfo(name: "x", type: TensorType([1, 6]))], outputs: ["y"],
            nodes: [
                Node(name: "dense1", op: .dense(DenseAttributes(outputChannels: 4)), inputs: ["x"], outputs: ["h"],
                     weights: ["weight": t.w1, "bias": t.b1]),
                Node(name: "dense2", op: .dense(DenseAttributes(outputChannels: 3)), inputs: ["h"], outputs: ["y"],
                     weights: ["weight": t.w2, "bias": t.b2]),
            ])
        try g.inferShapes()
        return g
    }

    func testEncodingsExpandToTheirFormulas() throws {
        let t = try tensors()
        XCTAssertEqual(t.w1.floats(), expected1)
        XCTAssertEqual(t.b1.floats(), expectedB1)
        XCTAssertEqual(t.w2.floats(), expected2)
        XCTAssertEqual(t.b2.floats(), [0.5, 0, -2])
        // Bytes: codes padded to 4, then float32 parameters.
        XCTAssertEqual(t.w1.encodedByteCount, 12 + 4 * 12)
        XCTAssertEqual(t.b1.encodedByteCount, 4 + 4 * 8)
        XCTAssertEqual(t.w2.encodedByteCount, 4 + 4 + 4 * 6)
        XCTAssertEqual(t.b2.encodedByteCount, 4 + 2 * 2)
        // Reshaping follows the block grid across unit dimensions only.
        XCTAssertEqual(t.w1.reshaped(to: [1, 4, 1, 6])?.floats(), expected1)
        XCTAssertNil(t.w1.reshaped(to: [6, 4]))
        XCTAssertEqual(t.w2.reshaped(to: [3, 1, 4])?.floats(), expected2)
    }

    func testBundleRoundTripIsFormat21AndPredictsAsFloat32() throws {
        let dir = try makeTemporaryDirectory(self)
        let g = try graph(try tensors())
        let url = dir.appendingPathComponent("c.mlbundle")
        try BundleWriter.write(g, to: url, producer: "mlconv test")
        let bundle = try BundleFile(contentsOf: url)
        XCTAssertEqual(bundle.formatVersion, BundleFormatVersion(major: 2, minor: 1))
        assertGraphsEqual(g, bundle.graph)
        // Plain float32 copies of the same values.
        var plain = g
        for i in plain.nodes.indices {
            for (k, w) in plain.nodes[i].weights { plain.nodes[i].weights[k] = ConstantTensor(shape: w.shape, floats: w.floats()) }
        }
        let x = try NDArray(shape: [1, 6], scalars: [0.5, -1, 2, 0.25, -0.75, 1.5])
        let a = try XCTUnwrap(Model(graph: bundle.graph).prediction(from: ["x": x])["y"])
        let b = try XCTUnwrap(Model(graph: plain).prediction(from: ["x": x])["y"])
        XCTAssertEqual(a.scalars, b.scalars)
        // The weights borrow the mapped file (no copy until a kernel expands them).
        let w = try XCTUnwrap(bundle.graph.nodes.first?.weights["weight"])
        let section = bundle.weightSection
        XCTAssertTrue(w.storage.baseAddress >= section.baseAddress! && w.storage.baseAddress < section.baseAddress! + section.count)
        // A graph without the new encodings is still written as 2.0.
        XCTAssertEqual(try BundleFile(contentsOf: { let u = dir.appendingPathComponent("p.mlbundle")
            try BundleWriter.write(plain, to: u, producer: "mlconv test"); return u }()).formatVersion, BundleFormat.currentVersion)
    }

    func testUnknownEncodingKindIsATypedError() throws {
        let dir = try makeTemporaryDirectory(self)
        let bytes = try BundleWriter.serialize(try graph(try tensors()), producer: "mlconv test")
        func replacing(_ s: String, _ r: String, in bytes: [UInt8]) -> [UInt8] {
            let a = Array(s.utf8), b = Array(r.utf8)
            var out = bytes
            var i = 0
            while i + a.count <= out.count {
                if Array(out[i..<(i + a.count)]) == a { out.replaceSubrange(i..<(i + a.count), with: b); i += b.count } else { i += 1 }
            }
            return out
        }
        let unknown = resealed(replacing("\"palettized\"", "\"palettizeX\"", in: bytes))
        expectBundleError(unknown, in: dir) { e in
            guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("palettizeX") && reason.contains("encoding")
        }
        // The same in a file of a newer minor version: the reader advises upgrading.
        var newer = unknown
        newer[10] = 9
        expectBundleError(resealed(newer), in: dir) { e in
            guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("2.9") && reason.contains("upgrade mlconv")
        }
        // A sparse constant whose nonzeroCount disagrees with its mask.
        let lying = resealed(replacing("\"nonzeroCount\":8", "\"nonzeroCount\":7", in: bytes))
        expectBundleError(lying, in: dir) { e in
            guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("set bits") || reason.contains("needs")
        }
    }

    func testInvalidFieldsAreTypedErrors() throws {
        func invalid(_ shape: [Int], _ e: WeightEncoding, _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try e.validate(shape: shape), line: line) { err in
                guard case let GraphError.invalidConstant(m) = err else { return XCTFail("\(err)", line: line) }
                XCTAssertTrue(m.contains(fragment), m, line: line)
            }
            XCTAssertThrowsError(try ConstantTensor.checkBundleLimits(shape: shape, encoding: e, what: "w"), line: line)
            XCTAssertThrowsError(try ConstantTensor(shape: shape, encoding: e, storage: .copying([UInt8](repeating: 0, count: 4096))), line: line)
        }
        invalid([4, 6], .blockwise(BlockwiseQuantization(bits: 0, signed: false, blocks: [1, 1], hasZeroPoint: false)), "bits")
        invalid([4, 6], .blockwise(BlockwiseQuantization(bits: 9, signed: false, blocks: [1, 1], hasZeroPoint: false)), "bits")
        invalid([4, 6], .blockwise(BlockwiseQuantization(bits: 8, signed: false, blocks: [1], hasZeroPoint: false)), "rank")
        invalid([4, 6], .blockwise(BlockwiseQuantization(bits: 8, signed: false, blocks: [3, 1], hasZeroPoint: false)), "divide")
        invalid([4, 6], .blockwise(BlockwiseQuantization(bits: 8, signed: false, blocks: [0, 1], hasZeroPoint: false)), "divide")
        invalid([4, 6], .palettized(PalettizedQuantization(bits: 3, blocks: [4, 12])), "divide")
        invalid([4, 6], .palettized(PalettizedQuantization(bits: 12, blocks: [1, 1])), "bits")
        invalid([4, 6], .sparse(SparseEncoding(nonzeroCount: 25, values: .float32)), "non-zero")
        invalid([4, 6], .sparse(SparseEncoding(nonzeroCount: -1, values: .float32)), "non-zero")
        invalid([4, 6], .sparse(SparseEncoding(nonzeroCount: 2, values: .sparse(SparseEncoding(nonzeroCount: 2, values: .float32)))), "expected float32")
        invalid([4, 6], .sparse(SparseEncoding(nonzeroCount: 2, values: .palettized(PalettizedQuantization(bits: 2, blocks: [5, 1])))), "divide")
        // Too few bytes for the parameters.
        XCTAssertThrowsError(try ConstantTensor(shape: [4, 6], encoding: .blockwise(BlockwiseQuantization(bits: 4, signed: true, blocks: [2, 3], hasZeroPoint: true)),
                                                storage: .copying([UInt8](repeating: 0, count: 12 + 4 * 6))))
        // Parts that do not fit.
        XCTAssertThrowsError(try ConstantTensor.compressed(shape: [4], encoding: .palettized(PalettizedQuantization(bits: 1, blocks: [1])),
                                                           codes: [0, 1, 2, 0], parameters: [1, 2]))
        // A mask whose set bits differ from nonzeroCount.
        XCTAssertThrowsError(try ConstantTensor(shape: [8], encoding: .sparse(SparseEncoding(nonzeroCount: 2, values: .float32)),
                                                storage: .copying([0b1110_0000, 0, 0, 0] + [UInt8](repeating: 0, count: 8))))
    }
}
