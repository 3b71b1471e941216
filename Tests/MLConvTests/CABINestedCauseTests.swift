// MARK: errors (issue 13): mlconv_predict_batch keeps a bad row's error as the cause of its
// "row N" error; the C caller sees the row error's status and both in mlconv_last_error().
import CMLConv
import Foundation
import MLConv
import XCTest

final class CABINestedCauseTests: XCTestCase {
    func testBadBatchRowIsTheCauseOfTheRowError() throws {
        let cache = try Paths.temporary(self)
        let m = try XCTUnwrap(mlconv_open(Paths.fixture("demo/digits_cnn.h5").path, "{\"cache_dir\": \"\(cache.path)\"}"), lastError())
        defer { mlconv_close(m) }
        let digit = try MultiArray(contentsOfNPY: Paths.fixture("demo/digit_7.npy"))
        let c = CFeatures()
        c.float32("digit", shape: digit.shape, digit.values.map { Float($0) })  // row 0: fine
        c.float32("digit", shape: [1, -28, 28, 1], [])                      // row 1: a negative dimension
        var results = [OpaquePointer?](repeating: nil, count: 2)
        let status = mlconv_predict_batch(m, c.features, [1, 1], 2, &results)
        XCTAssertEqual(status, Int32(MLCONV_ERROR_FEATURE.rawValue), lastError())
        XCTAssertEqual(results.compactMap { $0 }.count, 0, "no result on failure")
        let lines = lastError().split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "row 1", lastError())
        XCTAssertEqual(lines.dropFirst().first, "  caused by: feature 'digit': dimension 1 is -28; dimensions are ≥ 0", lastError())
    }
}
