// Issue 13: the C ABI's last-error message and `diagnosticMessage(for:)` are the one renderer's.
import CMLConv
import Foundation
import MLConv
import XCTest

final class DiagnosticMessageTests: XCTestCase {
    func testCABIMessageIsTheRenderedDiagnostic() throws {
        let path = "/nonexistent/model.h5"
        XCTAssertNil(mlconv_open(path, nil))
        let cMessage = String(cString: mlconv_last_error())
        do {
            _ = try MLModel(contentsOf: URL(fileURLWithPath: path))
            XCTFail("opened a missing file")
        } catch {
            XCTAssertEqual(Diagnostic(error).category, .inputFile)
            XCTAssertEqual(cMessage, diagnosticMessage(for: error))
            XCTAssertEqual(DiagnosticRenderer.render(error, prefix: "x: "), "x: error: " + diagnosticMessage(for: error))
        }
    }

    func testMessageAddsOnlyWhatTheSummaryLacks() {
        // The summary already names the feature, expected and found: nothing is repeated.
        let e = MLModelError.typeMismatch(feature: "image", expected: "an image", found: "a string")
        XCTAssertEqual(diagnosticMessage(for: e), e.description)
        XCTAssertEqual(Diagnostic(e).location, DiagnosticLocation(.feature, "image"))
        XCTAssertEqual(Diagnostic(MLModelError.invalidOption(name: "threads", reason: "must be ≥ 1")).category, .usage)
    }
}
