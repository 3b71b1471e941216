// MARK: errors (issue 13): DiagnosticCause, the stored form of a nested cause.
import Diagnostics
import Foundation
import XCTest

final class DiagnosticCauseTests: XCTestCase {
    struct Leaf: MLConvDiagnostic, CustomStringConvertible {
        var n: Int
        var description: String { "leaf \(n) failed" }
        var diagnosticCategory: DiagnosticCategory { .inputFile }
    }

    /// An error that keeps its cause the way the package's errors do.
    struct Wrapper: MLConvDiagnostic, CustomStringConvertible, Equatable {
        var cause: DiagnosticCause?
        var description: String { cause.appended(to: "cannot convert 'm.h5'") }
        var diagnosticSummary: String { "cannot convert 'm.h5'" }
        var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
        var diagnosticCauses: [any Error] { cause.asCauses }
    }

    func testCausesCompareByTheirSnapshot() {
        XCTAssertEqual(DiagnosticCause(Leaf(n: 1)), DiagnosticCause(Leaf(n: 1)))
        XCTAssertNotEqual(DiagnosticCause(Leaf(n: 1)), DiagnosticCause(Leaf(n: 2)))
        XCTAssertEqual(Set([DiagnosticCause(Leaf(n: 1)), DiagnosticCause(Leaf(n: 1)), DiagnosticCause(Leaf(n: 2))]).count, 2)
        XCTAssertEqual(Wrapper(cause: DiagnosticCause(Leaf(n: 3))), Wrapper(cause: DiagnosticCause(Leaf(n: 3))))
        XCTAssertNotEqual(Wrapper(cause: DiagnosticCause(Leaf(n: 3))), Wrapper(cause: nil))
    }

    func testTextJoiningAndCauseLists() {
        let c: DiagnosticCause? = DiagnosticCause(Leaf(n: 4))
        XCTAssertEqual(c.appended(to: "outer"), "outer: leaf 4 failed")
        XCTAssertEqual(c.appended(to: ""), "leaf 4 failed")
        XCTAssertEqual(c.suffix, ": leaf 4 failed")
        XCTAssertEqual(c.asCauses.count, 1)
        XCTAssertTrue(c.asCauses.first is Leaf)
        let none: DiagnosticCause? = nil
        XCTAssertEqual(none.appended(to: "outer"), "outer")
        XCTAssertEqual(none.suffix, "")
        XCTAssertTrue(none.asCauses.isEmpty)
    }

    func testRendererPrintsTheCauseOnceOnItsOwnLine() {
        let w = Wrapper(cause: DiagnosticCause(Leaf(n: 5)))
        XCTAssertEqual(DiagnosticRenderer.render(w), "error: cannot convert 'm.h5'\n  caused by: leaf 5 failed")
        XCTAssertEqual(w.description, "cannot convert 'm.h5': leaf 5 failed")
        XCTAssertEqual(Diagnostic(w).causes.first?.errorType, "Leaf")
        XCTAssertEqual(Diagnostic(w).causes.first?.category, .inputFile)
    }

    /// Foundation's file errors are summarised by their localizedDescription (what the
    /// messages used to paste), not their domain-and-code description.
    func testFoundationErrorsAreSummarisedByTheirLocalizedDescription() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-no-such-\(getpid()).json")
        do {
            _ = try Data(contentsOf: missing)
            XCTFail("read a missing file")
        } catch {
            let d = Diagnostic(error)
            XCTAssertEqual(d.summary, error.localizedDescription)
            XCTAssertEqual(d.category, .inputFile)
            XCTAssertEqual(DiagnosticCause(error).text, error.localizedDescription)
        }
        // Other errors keep their description.
        XCTAssertEqual(Diagnostic(Leaf(n: 6)).summary, "leaf 6 failed")
    }
}
