// Regression: mlconv_open rejected {"threads": 1} ("must be an integer ≥ 1, found 1"): on Linux
// JSONSerialization's NSNumber for 1 also answers `is Bool`. A JSON boolean must still be refused.
import CMLConv
import Foundation
import MLConv
import XCTest

final class CABIThreadsOptionTests: XCTestCase {
    func open(_ extra: String) throws -> OpaquePointer? {
        let dir = try Paths.temporary(self)
        return mlconv_open(Paths.fixture("demo/digits_cnn.h5").path, "{\"cache_dir\": \"\(dir.path)\", \(extra)}")
    }

    func testThreadsOneAndTwoOpenAndPredictAsKeras() throws {
        for n in [1, 2] {
            let m = try XCTUnwrap(try open("\"threads\": \(n)"), "threads \(n): \(lastError())")
            defer { mlconv_close(m) }
            let digit = try MultiArray(contentsOfNPY: Paths.fixture("demo/digit_7.npy"))
            let c = CFeatures()
            c.float32("digit", shape: digit.shape, digit.values.map { Float($0) })
            var r: OpaquePointer?
            XCTAssertEqual(mlconv_predict(m, c.features, c.features.count, &r), 0, lastError())
            let result = try XCTUnwrap(r)
            defer { mlconv_result_free(result) }
            let i = mlconv_result_index(result, "probabilities")
            XCTAssertGreaterThanOrEqual(i, 0)
            let data = try XCTUnwrap(mlconv_result_data(result, Int(i))).assumingMemoryBound(to: Float.self)
            let probabilities = (0..<10).map { Double(data[$0]) }
            XCTAssertLessThan(maxAbsDiff(probabilities, try kerasDigitProbabilities()), 1e-5, "threads \(n)")
        }
    }

    func testThreadsRefusesBooleansFractionsZeroAndStrings() throws {
        for bad in ["true", "false", "0", "1.5", "\"2\""] {
            XCTAssertNil(try open("\"threads\": \(bad)"), bad)
            XCTAssertTrue(lastError().contains("\"threads\" must be an integer ≥ 1"), "\(bad): \(lastError())")
        }
    }
}
