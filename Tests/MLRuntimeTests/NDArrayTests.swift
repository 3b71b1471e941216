@testable import MLRuntime
import XCTest

final class NDArrayTests: XCTestCase {
    func testInitChecksShapeAndCount() throws {
        assertRuntimeError(.invalidArray(shape: [2, 2], elementCount: 3, message: "the shape needs 4 values")) {
            try NDArray(shape: [2, 2], scalars: [1, 2, 3])
        }
        assertRuntimeError(.invalidArray(shape: [-1, 2], elementCount: 2, message: "dimensions must be non-negative")) {
            try NDArray(shape: [-1, 2], scalars: [1, 2])
        }
        XCTAssertEqual(try NDArray(shape: [], scalars: [5]).count, 1)
        XCTAssertEqual(try NDArray(shape: [0, 3], scalars: []).count, 0)
    }

    func testSubscriptIsRowMajor() throws {
        var a = try NDArray(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(a[1, 0], 4)
        XCTAssertEqual(a[0, 2], 3)
        a[1, 2] = 60
        XCTAssertEqual(a.scalars, [1, 2, 3, 4, 5, 60])
        XCTAssertEqual(a.strides, [3, 1])
        XCTAssertEqual(try a.reshaped([3, 2])[2, 1], 60)
        XCTAssertThrowsError(try a.reshaped([4, 2]))
    }
}
