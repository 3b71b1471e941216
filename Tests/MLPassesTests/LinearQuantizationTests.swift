import MLGraph
@testable import MLPasses
import TestSupport
import XCTest

/// Linear and linear-symmetric quantization: hand-computed scales, biases, codes and packed bytes.
final class LinearQuantizationTests: XCTestCase {
    /// Dense weight [3, 4], 2 bits, axis 0, every number worked out by hand:
    /// ch0 [-1, -0.5, 0.25, 2]: a = -1, scale = 3/3 = 1, (w−a)·1 = 0, 0.5, 1.25, 3 → 0, 0 (tie to
    ///     even), 1, 3;
    /// ch1 [1, 2.5, 1.75, 1.25]: a = 1, scale = 1.5/3 = 0.5, inv 2, → 0, 3, 1.5 → 2 (tie to even),
    ///     0.5 → 0;
    /// ch2 [4, 4, 4, 4]: scale 0 ≤ 1e-6 so inv = 0 → codes 0, bias 4 (exact).
    /// Codes 0 0 1 3 | 0 3 2 0 | 0 0 0 0 packed MSB-first: 00000111 00111000 00000000.
    func testLinear2BitHandComputed() throws {
        let w: [Float] = [-1, -0.5, 0.25, 2, 1, 2.5, 1.75, 1.25, 4, 4, 4, 4]
        let q = try linearQuantize(w, shape: [3, 4], axis: 0, bits: 2)
        XCTAssertEqual(q.scale, [1, 0.5, 0])
        XCTAssertEqual(q.bias, [-1, 1, 4])
        XCTAssertEqual(q.codes, [0, 0, 1, 3, 0, 3, 2, 0, 0, 0, 0, 0])
        XCTAssertEqual(q.packed, [0x07, 0x38, 0x00])
        XCTAssertEqual(q.dequantized(), [-1, -1, 0, 2, 1, 2.5, 2, 1, 4, 4, 4, 4])
        // The same through MLGraph's decoder.
        let t = q.constant()
        XCTAssertEqual(t.floats(), q.dequantized())
        XCTAssertEqual(t.encodedByteCount, 3)
    }

    /// Deconvolution weights [Cin, Cout, kH, kW] are per output channel along axis 1.
    func testAxis1PerOutputChannel() throws {
        // [2, 3, 1, 1]: channel c has values {w[0,c], w[1,c]}.
        let w: [Float] = [0, 10, -4, 1, 20, 4]
        let q = try linearQuantize(w, shape: [2, 3, 1, 1], axis: 1, bits: 1)
        XCTAssertEqual(q.axis, 1)
        XCTAssertEqual(q.bias, [0, 10, -4])
        XCTAssertEqual(q.scale, [1, 10, 8])
        XCTAssertEqual(q.codes, [0, 0, 0, 1, 1, 1])
        XCTAssertEqual(q.dequantized(), w)
    }

    /// 1-D tensors (biases, BN vectors) get one scale and bias, as coremltools reshapes them to (1, N).
    func testOneDimensionalIsPerTensor() throws {
        let q = try linearQuantize([0, 1, 2, 3, 6], shape: [5], axis: 0, bits: 2)
        XCTAssertEqual(q.scale, [2]); XCTAssertEqual(q.bias, [0])
        XCTAssertEqual(q.codes, [0, 0, 1, 2, 3])  // 0.5 → 0, 1.5 → 2 (ties to even)
    }

    /// Symmetric 8-bit: scale = r/127, bias = −128·scale, codes in 1…255.
    /// ch0 r = 127: scale 1, bias −128, (w+128) → 1, 128, 191.5 → 192, 255.
    /// ch1 r = 63.5: scale 0.5, bias −64, (w+64)/0.5 → 128.5 → 128, 1, 148, 129.5 → 130.
    /// ch2 all zero: scale 0 → codes 0, bias −0, decodes to exactly 0.
    func testLinearSymmetricHandComputed() throws {
        let w: [Float] = [-127, 0, 63.5, 127, 0.25, -63.5, 10, 0.75, 0, 0, 0, 0]
        let q = try linearSymmetricQuantize(w, shape: [3, 4], axis: 0)
        XCTAssertEqual(q.bits, 8)
        XCTAssertEqual(q.scale, [1, 0.5, 0])
        XCTAssertEqual(q.bias, [-128, -64, 0])
        XCTAssertEqual(q.codes, [1, 128, 192, 255, 128, 1, 148, 130, 0, 0, 0, 0])
        XCTAssertEqual(q.packed, q.codes, "8-bit codes are stored as plain bytes")
        XCTAssertEqual(q.dequantized(), [-127, 0, 64, 127, 0, -63.5, 10, 1, 0, 0, 0, 0])
    }

    /// 3-, 5- and 7-bit codes straddle byte boundaries; the tail is zero-padded.
    func testPackingStraddlesBytes() throws {
        // Per-tensor with min 0 and max 2^n − 1: scale 1, so the codes equal the values.
        let q3 = try linearQuantize([5, 3, 7, 1, 0], shape: [5], axis: 0, bits: 3)
        XCTAssertEqual(q3.codes, [5, 3, 7, 1, 0])
        XCTAssertEqual(q3.packed, [0xAF, 0x90])  // 101 011 11|1 001 000 0
        let q5 = try linearQuantize([31, 0, 17], shape: [3], axis: 0, bits: 5)
        XCTAssertEqual(q5.packed, [0xF8, 0x22])  // 11111 000|00 10001 0
        let q7 = try linearQuantize([127, 0, 64, 1], shape: [4], axis: 0, bits: 7)
        XCTAssertEqual(q7.packed, [0xFE, 0x02, 0x00, 0x10])
        for q in [q3, q5, q7] {
            let back = q.packed.withUnsafeBytes { unpackMSBFirst($0, bits: q.bits, count: q.codes.count) }
            XCTAssertEqual(back, q.codes)
        }
    }

    /// Every bit width decodes within half a step of the original, per channel.
    func testAllBitWidthsWithinHalfStep() throws {
        let shape = [6, 5, 3, 3]
        let w = randomFloats(count: shape.reduce(1, *), seed: 7)
        for bits in 1...8 {
            let q = try linearQuantize(w, shape: shape, axis: 0, bits: bits)
            XCTAssertEqual(q.scale.count, 6)
            XCTAssertEqual(q.packed.count, (w.count * bits + 7) / 8)
            XCTAssertTrue(q.codes.allSatisfy { Int($0) < 1 << bits })
            let d = q.dequantized()
            for i in w.indices {
                let c = i / 45
                XCTAssertLessThanOrEqual(abs(d[i] - w[i]), q.scale[c] / 2 * 1.0001 + 1e-7, "bits \(bits) i \(i)")
            }
        }
    }

    /// The float64 maths matches NumPy's (w − a)·inv_scale, which differs from (w − a)/scale here:
    /// 6 bits, per tensor, scale = 23.31f/63; 4.995f → 12.9999… → 13 (division gives 14) and
    /// 11.655f → 31 (division 32). coremltools 7.2 gives codes [0, 13, 31, 63].
    func testFloat64InverseScaleMaths() throws {
        let w: [Float] = [0, 4.995, 11.655, 23.31]
        let q = try linearQuantize(w, shape: [4], axis: 0, bits: 6)
        XCTAssertEqual(q.codes, [0, 13, 31, 63])
        XCTAssertEqual(q.scale, [Float(Double(Float(23.31)) / 63)])
        XCTAssertEqual(q.bias, [0])
    }

    func testErrors() {
        XCTAssertThrowsError(try linearQuantize([1, 2], shape: [2], axis: 0, bits: 0)) {
            XCTAssertEqual($0 as? QuantizationError, .invalidBits(mode: "linear", bits: 0))
        }
        XCTAssertThrowsError(try linearQuantize([1, 2], shape: [2], axis: 0, bits: 9))
        XCTAssertThrowsError(try linearQuantize([1, 2, 3], shape: [2], axis: 0, bits: 4))
        XCTAssertThrowsError(try linearQuantize([1, 2], shape: [1, 2], axis: 2, bits: 4))
        XCTAssertThrowsError(try linearQuantize([1, .nan], shape: [2], axis: 0, bits: 4)) {
            guard case .nonFiniteWeight(_, _, 1, _)? = $0 as? QuantizationError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try linearSymmetricQuantize([.infinity], shape: [1], axis: 0))
    }
}
