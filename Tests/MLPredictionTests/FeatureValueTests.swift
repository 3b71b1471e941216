import XCTest
@testable import MLPrediction

final class FeatureValueTests: XCTestCase {
    func testMultiArrayRoundsToItsDataType() throws {
        let a = try MultiArray(shape: [3], dataType: .float32, values: [0.1, 1e40, -2.5])
        XCTAssertEqual(a.values[0], Double(Float(0.1)))
        XCTAssertEqual(a.values[1], Double.infinity)
        let i = MultiArray(vector: [2.7, -2.7, 1e12], dataType: .int32)
        XCTAssertEqual(i.values, [2, -2, 2147483647])
        let h = MultiArray(vector: [0.1], dataType: .float16)
        XCTAssertEqual(h.values[0], Double(Float16(0.1)))
    }

    func testMultiArrayRejectsWrongCountsAndOverflowingShapes() {
        XCTAssertThrowsError(try MultiArray(shape: [2, 2], values: [1, 2, 3])) {
            XCTAssertEqual($0 as? FeatureError, .shapeMismatch(feature: nil, expected: [2, 2], found: 3))
        }
        XCTAssertThrowsError(try MultiArray(shape: [Int.max, 4], values: [])) {
            XCTAssertEqual($0 as? FeatureError, .invalidShape(shape: [Int.max, 4]))
        }
        XCTAssertThrowsError(try FeatureImage(width: 2, height: 2, colorSpace: .rgb, pixels: [0, 0, 0]))
    }
}
