import MLGraph
@testable import MLPasses
import TestSupport
import XCTest

/// fp16 conversion: round-to-nearest-even ties, subnormals, overflow error versus clamp, NaN/inf.
final class Float16Tests: XCTestCase {
    private func bits(_ v: [Float], clamp: Bool = false) throws -> [UInt16] {
        try convertToFloat16(v, clamp: clamp).map(\.bitPattern)
    }

    /// Bit patterns checked against NumPy's float16.
    func testRoundHalfToEvenTies() throws {
        let one: Float = 1
        XCTAssertEqual(try bits([one + 0x1p-11]), [0x3C00])        // tie between 1 and 1+2⁻¹⁰ → 1 (even)
        XCTAssertEqual(try bits([one + 3 * 0x1p-11]), [0x3C02])    // tie → 1+2⁻⁹ (even)
        XCTAssertEqual(try bits([2049, 2051, -2049]), [0x6800, 0x6802, 0xE800])  // spacing 2 above 2048
        XCTAssertEqual(try bits([0x1p-25, 3 * 0x1p-25]), [0x0000, 0x0002])       // subnormal ties
        XCTAssertEqual(try bits([0.1]), [0x2E66])
        XCTAssertEqual(try bits([65504, -65504]), [0x7BFF, 0xFBFF])  // the largest finite value is kept
    }

    func testOverflowThrowsOrClamps() throws {
        XCTAssertThrowsError(try bits([1, 65505])) {
            XCTAssertEqual($0 as? QuantizationError, .fp16Overflow(node: "", weight: "", index: 1, value: 65505))
        }
        // 65519 would round to 65504 in RNE, but |w| > 65504 is still refused: never silently change range.
        XCTAssertThrowsError(try bits([65519]))
        XCTAssertThrowsError(try bits([-1e9]))
        XCTAssertEqual(try bits([70000, -1e30, 3], clamp: true), [0x7BFF, 0xFBFF, 0x4200])
    }

    func testNaNAndInfinityPassThrough() throws {
        let h = try convertToFloat16([.nan, .infinity, -.infinity], clamp: true)
        XCTAssertTrue(h[0].isNaN)
        XCTAssertEqual(h[1], .infinity)
        XCTAssertEqual(h[2], -.infinity)
    }

    /// Through the pass: the error names the node and weight; clamping is reported.
    func testPassNamesNodeAndWeight() throws {
        let node = Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 2)), inputs: ["x"], outputs: ["y"],
                        weights: ["weight": ConstantTensor(shape: [2, 2], floats: [1, 2, 3, 1e6])])
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 2]))], outputs: ["y"], nodes: [node])
        XCTAssertThrowsError(try WeightQuantizer(mode: .fp16).quantize(g)) { error in
            XCTAssertEqual(error as? QuantizationError, .fp16Overflow(node: "fc", weight: "weight", index: 3, value: 1e6))
            XCTAssertTrue("\(error)".contains("node 'fc' weight 'weight'"), "\(error)")
        }
        let (out, report) = try WeightQuantizer(mode: .fp16, options: QuantizationOptions(clampFP16: true)).quantize(g)
        XCTAssertEqual(out.nodes[0].weights["weight"]!.floats(), [1, 2, 3, 65504])
        XCTAssertEqual(report.entries.first?.note, "clamped 1 value(s) to ±65504")
    }
}
