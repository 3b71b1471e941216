import Diagnostics
import XCTest

/// The one error model (issue 13): snapshot, renderer, categories and the memory limit parser.
final class DiagnosticTests: XCTestCase {
    struct Leaf: MLConvDiagnostic, CustomStringConvertible {
        var description: String { "the dataset is truncated" }
        var diagnosticCategory: DiagnosticCategory { .inputFile }
        var diagnosticFile: String? { "w.h5" }
        var diagnosticExpected: String? { "400 bytes" }
        var diagnosticFound: String? { "12 bytes" }
    }
    struct Outer: MLConvDiagnostic, CustomStringConvertible {
        var description: String { "cannot convert 'model.h5'" }
        var diagnosticCategory: DiagnosticCategory { .unsupportedModel }
        var diagnosticFile: String? { "model.h5" }
        var diagnosticLocation: DiagnosticLocation? { DiagnosticLocation(.layer, "conv1") }
        var diagnosticHint: String? { "re-save the model" }
        var diagnosticCauses: [any Error] { [Leaf()] }
    }

    func testSnapshotKeepsCausesAsValues() {
        let d = Diagnostic(Outer())
        XCTAssertEqual(d.category, .unsupportedModel)
        XCTAssertEqual(d.location, DiagnosticLocation(.layer, "conv1"))
        XCTAssertEqual(d.causes.count, 1)
        XCTAssertEqual(d.causes.first?.category, .inputFile)
        XCTAssertEqual(d.causes.first?.expected, "400 bytes")
        XCTAssertEqual(d.causes.first?.found, "12 bytes")
        XCTAssertEqual(d.causes.first?.errorType, "Leaf")
    }

    func testRendererPrintsFieldsNotInTheSummaryAndNestsCauses() {
        let text = DiagnosticRenderer.render(Outer(), prefix: "mlconv keras: ")
        XCTAssertEqual(text, """
            mlconv keras: error: cannot convert 'model.h5'
              at: layer 'conv1'
              hint: re-save the model
              caused by: the dataset is truncated
                file: w.h5
                expected: 400 bytes
                found: 12 bytes
            """)
        // The file is already named in the summary, so it is not repeated.
        XCTAssertFalse(text.contains("  file: model.h5"))
    }

    func testUnknownErrorsAreClassified() {
        struct Plain: Error {}
        XCTAssertEqual(Diagnostic.category(of: Plain()), .internal)
        XCTAssertEqual(Diagnostic.category(of: CocoaError(.fileReadNoSuchFile)), .inputFile)
        XCTAssertEqual(Diagnostic.category(of: CocoaError(.fileWriteOutOfSpace)), .io)
        XCTAssertEqual(Diagnostic.category(of: POSIXError(.ENOSPC)), .io)
    }

    func testCategoriesHaveDistinctCodes() {
        let codes = DiagnosticCategory.allCases.map(\.exitCode)
        XCTAssertEqual(Set(codes).count, codes.count)
        XCTAssertFalse(codes.contains(0))
        XCTAssertEqual(DiagnosticCategory.usage.exitCode, 2)
        XCTAssertEqual(DiagnosticCategory.numericCheckFailed.exitCode, 3)
    }

    func testMemorySizesParse() {
        XCTAssertEqual(MemoryLimit.parse("512M"), 512 << 20)
        XCTAssertEqual(MemoryLimit.parse("4G"), 4 << 30)
        XCTAssertEqual(MemoryLimit.parse("4GiB"), 4 << 30)
        XCTAssertEqual(MemoryLimit.parse("1k"), 1024)
        XCTAssertEqual(MemoryLimit.parse("1048576"), 1 << 20)
        XCTAssertNotNil(MemoryLimit.parse("25%"))
        for bad in ["", "0", "-1G", "1.5G", "G", "12Q", "101%", "99999999999999999999T", "9999999999T"] {
            XCTAssertNil(MemoryLimit.parse(bad), bad)
        }
    }

    func testMemoryCheckThrowsNamingFileWhatAndLimit() throws {
        try MemoryLimit.with(1 << 20) {
            XCTAssertNoThrow(try MemoryLimit.check(count: 1000, elementSize: 4, for: "x", file: "a.npy"))
            do {
                try MemoryLimit.check(shape: [1024, 1024], elementSize: 4, for: "array 'x'", file: "a.npy")
                XCTFail("no error")
            } catch let error as MemoryLimitExceeded {
                XCTAssertEqual(error.requestedBytes, 4 << 20)
                XCTAssertEqual(error.limitBytes, 1 << 20)
                XCTAssertTrue(error.description.contains("'a.npy'"), error.description)
                XCTAssertTrue(error.description.contains("array 'x'"), error.description)
                XCTAssertTrue(error.description.contains("--max-memory"), error.description)
                XCTAssertEqual(Diagnostic(error).category, .resourceLimit)
            } catch { XCTFail("\(error)") }
            // An overflowing product is refused too, without trapping.
            XCTAssertThrowsError(try MemoryLimit.check(shape: [Int.max, 3], elementSize: 4, for: "y", file: nil))
            XCTAssertThrowsError(try MemoryLimit.check(shape: [-1, 3], elementSize: 4, for: "y", file: nil))
        }
    }
}
