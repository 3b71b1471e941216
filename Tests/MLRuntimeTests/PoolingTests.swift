import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Reference pool2d and globalPool2d.
final class PoolingTests: XCTestCase {
    func pool(_ kind: PoolKind, _ x: NDArray, k: Int, s: Int, _ p: PaddingMode) throws -> NDArray {
        try runOp(.pool2d(Pool2DAttributes(kind: kind, kernel: [k, k], strides: [s, s], padding: p)), [x])
    }

    func testMaxPoolValid() throws {
        let y = try pool(.max, iota([1, 4, 4, 1]), k: 2, s: 2, .valid)
        XCTAssertEqual(y.shape, [1, 2, 2, 1])
        XCTAssertEqual(y.scalars, [6, 8, 14, 16])
    }

    func testAveragePoolSameExcludesPaddingAtBorders() throws {
        // 3×3 same on 1…9: each output is the mean of the in-range pixels only.
        let y = try pool(.average, iota([1, 3, 3, 1]), k: 3, s: 1, .same)
        XCTAssertEqual(y.scalars, [3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7])
    }

    func testPoolSameStride2OddInputPadsBottomRight() throws {
        // 5×5, k2, s2 → 3×3, total padding 1 at bottom/right: the last row/column windows are 1 wide.
        let mx = try pool(.max, iota([1, 5, 5, 1]), k: 2, s: 2, .same)
        XCTAssertEqual(mx.shape, [1, 3, 3, 1])
        XCTAssertEqual(mx.scalars, [7, 9, 10, 17, 19, 20, 22, 24, 25])
        let av = try pool(.average, iota([1, 5, 5, 1]), k: 2, s: 2, .same)
        XCTAssertEqual(av.scalars, [4, 6, 7.5, 14, 16, 17.5, 21.5, 23.5, 25])
    }

    func testMaxPoolChannelsAreIndependentAndNegativeValuesSurvivePadding() throws {
        // Channel 1 is −channel 0; padded pixels must not contribute a 0 to the max.
        let base = iota([1, 3, 3, 1]).scalars
        let x = nd([1, 3, 3, 2], base.flatMap { [$0, -$0] })
        let y = try pool(.max, x, k: 2, s: 2, .same)
        XCTAssertEqual(y.shape, [1, 2, 2, 2])
        XCTAssertEqual(y.scalars, [5, -1, 6, -3, 8, -7, 9, -9])
    }

    func testMaxPoolPropagatesNaN() throws {
        let y = try pool(.max, nd([1, 2, 2, 1], [1, .nan, 3, 4]), k: 2, s: 2, .valid)
        XCTAssertTrue(y.scalars[0].isNaN)
    }

    func testGlobalPool() throws {
        let x = nd([1, 2, 2, 2], [1, 10, 2, 20, 3, 30, 4, 40])
        let avg = try runOp(.globalPool2d(kind: .average, keepDims: false), [x])
        XCTAssertEqual(avg.shape, [1, 2])
        XCTAssertEqual(avg.scalars, [2.5, 25])
        let mx = try runOp(.globalPool2d(kind: .max, keepDims: true), [x])
        XCTAssertEqual(mx.shape, [1, 1, 1, 2])
        XCTAssertEqual(mx.scalars, [4, 40])
    }
}
