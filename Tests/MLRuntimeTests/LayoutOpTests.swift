import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Reference pad, crop, upsample2d, reshape, transpose, concat, repeatVector and identity.
final class LayoutOpTests: XCTestCase {
    func testPadModes1D() throws {
        let x = nd([1, 3], [1, 2, 3])
        let c = try runOp(.pad(PadAttributes(mode: .constant, pads: [[0, 0], [2, 1]], value: 7)), [x])
        XCTAssertEqual(c.shape, [1, 6])
        XCTAssertEqual(c.scalars, [7, 7, 1, 2, 3, 7])
        XCTAssertEqual(try runOp(.pad(PadAttributes(mode: .reflect, pads: [[0, 0], [2, 2]])), [x]).scalars, [3, 2, 1, 2, 3, 2, 1])
        XCTAssertEqual(try runOp(.pad(PadAttributes(mode: .edge, pads: [[0, 0], [2, 1]])), [x]).scalars, [1, 1, 1, 2, 3, 3])
    }

    func testReflectPadNHWC() throws {
        // [[1, 2, 3], [4, 5, 6]] padded 1 on each side of H and W.
        let y = try runOp(.pad(PadAttributes(mode: .reflect, pads: [[0, 0], [1, 1], [1, 1], [0, 0]])), [iota([1, 2, 3, 1])])
        XCTAssertEqual(y.shape, [1, 4, 5, 1])
        XCTAssertEqual(y.scalars, [5, 4, 5, 6, 5,
                                   2, 1, 2, 3, 2,
                                   5, 4, 5, 6, 5,
                                   2, 1, 2, 3, 2])
    }

    func testConstantPadOnChannelsKeepsPixelOrder() throws {
        let y = try runOp(.pad(PadAttributes(mode: .constant, pads: [[0, 0], [0, 0], [0, 0], [1, 0]], value: -1)), [nd([1, 1, 2, 2], [1, 2, 3, 4])])
        XCTAssertEqual(y.scalars, [-1, 1, 2, -1, 3, 4])
    }

    func testCrop() throws {
        let y = try runOp(.crop(crops: [[0, 0], [1, 0], [0, 1], [0, 0]]), [iota([1, 3, 3, 1])])
        XCTAssertEqual(y.shape, [1, 2, 2, 1])
        XCTAssertEqual(y.scalars, [4, 5, 7, 8])
    }

    func testUpsampleNearest() throws {
        let y = try runOp(.upsample2d(Upsample2DAttributes(scale: [2, 3], mode: .nearest)), [nd([1, 2, 2, 1], [1, 2, 3, 4])])
        XCTAssertEqual(y.shape, [1, 4, 6, 1])
        XCTAssertEqual(y.scalars, [1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4])
    }

    /// The input [[1, 2], [3, 4]] is f(r, c) = 1 + c + 2r, linear, so bilinear resizing gives
    /// f at the source coordinates clamped to [0, 1].
    func bilinear(_ mode: UpsampleMode, scale: Int, coordinate: (Int) -> Double) throws {
        let y = try runOp(.upsample2d(Upsample2DAttributes(scale: [scale, scale], mode: mode)), [nd([1, 2, 2, 1], [1, 2, 3, 4])])
        let n = 2 * scale
        XCTAssertEqual(y.shape, [1, n, n, 1])
        func clamp(_ d: Int) -> Double { min(max(coordinate(d), 0), 1) }
        var expected: [Float] = []
        for r in 0..<n { for c in 0..<n { expected.append(Float(1 + clamp(c) + 2 * clamp(r))) } }
        assertClose(y.scalars, expected, tolerance: 1e-6, "\(mode) ×\(scale)")
    }

    func testUpsampleBilinearHalfPixelMatchesTF2Resize() throws {
        // tf.image.resize([1, 2] → 4): [1, 1.25, 1.75, 2].
        let row = try runOp(.upsample2d(Upsample2DAttributes(scale: [1, 2], mode: .bilinearHalfPixel)), [nd([1, 1, 2, 1], [1, 2])])
        XCTAssertEqual(row.scalars, [1, 1.25, 1.75, 2])
        try bilinear(.bilinearHalfPixel, scale: 2) { (Double($0) + 0.5) / 2 - 0.5 }
        try bilinear(.bilinearHalfPixel, scale: 3) { (Double($0) + 0.5) / 3 - 0.5 }
    }

    func testUpsampleBilinearAlignCornersAndAsymmetric() throws {
        try bilinear(.bilinearAlignCorners, scale: 2) { Double($0) / 3 }
        try bilinear(.bilinearAsymmetric, scale: 2) { Double($0) / 2 }
        let row = try runOp(.upsample2d(Upsample2DAttributes(scale: [1, 2], mode: .bilinearAsymmetric)), [nd([1, 1, 2, 1], [1, 2])])
        XCTAssertEqual(row.scalars, [1, 1.5, 2, 2])
    }

    func testReshapeKeepsRowMajorData() throws {
        let y = try runOp(.reshape(targetShape: [3, 2]), [iota([1, 2, 3])])
        XCTAssertEqual(y.shape, [1, 3, 2])
        XCTAssertEqual(y.scalars, [1, 2, 3, 4, 5, 6])
        let f = try runOp(.reshape(targetShape: [-1]), [iota([1, 2, 2, 2])])
        XCTAssertEqual(f.shape, [1, 8])
        XCTAssertEqual(f.scalars, (1...8).map(Float.init))
    }

    func testTranspose() throws {
        let y = try runOp(.transpose(perm: [0, 2, 1]), [iota([1, 2, 3])])
        XCTAssertEqual(y.shape, [1, 3, 2])
        XCTAssertEqual(y.scalars, [1, 4, 2, 5, 3, 6])
        // NHWC → NCHW: value h·4 + w·2 + c lands at [c][h][w].
        let z = try runOp(.transpose(perm: [0, 3, 1, 2]), [iota([1, 2, 2, 2], from: 0)])
        XCTAssertEqual(z.shape, [1, 2, 2, 2])
        XCTAssertEqual(z.scalars, [0, 2, 4, 6, 1, 3, 5, 7])
    }

    func testConcat() throws {
        let ch = try runOp(.concat(axis: 3), [nd([1, 1, 2, 1], [1, 2]), nd([1, 1, 2, 2], [10, 11, 20, 21])])
        XCTAssertEqual(ch.shape, [1, 1, 2, 3])
        XCTAssertEqual(ch.scalars, [1, 10, 11, 2, 20, 21])
        let rows = try runOp(.concat(axis: 1), [nd([1, 1, 2], [1, 2]), nd([1, 2, 2], [3, 4, 5, 6]), nd([1, 1, 2], [7, 8])])
        XCTAssertEqual(rows.shape, [1, 4, 2])
        XCTAssertEqual(rows.scalars, [1, 2, 3, 4, 5, 6, 7, 8])
        let batch = try runOp(.concat(axis: 2), [nd([2, 1, 1], [1, 2]), nd([2, 1, 2], [10, 11, 20, 21])])
        XCTAssertEqual(batch.scalars, [1, 10, 11, 2, 20, 21])
    }

    func testRepeatVector() throws {
        let y = try runOp(.repeatVector(n: 2), [nd([2, 2], [1, 2, 3, 4])])
        XCTAssertEqual(y.shape, [2, 2, 2])
        XCTAssertEqual(y.scalars, [1, 2, 1, 2, 3, 4, 3, 4])
    }

    func testIdentity() throws {
        let x = nd([1, 3], [1, .infinity, -2])
        XCTAssertEqual(try runOp(.identity, [x]), x)
    }
}
