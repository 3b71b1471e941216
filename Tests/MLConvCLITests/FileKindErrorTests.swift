import Foundation
import MLConvCLI
import TestSupport
import XCTest

/// Errors for files that are not what their name or the command expects (found by a newcomer
/// trying the README).
final class FileKindErrorTests: XCTestCase {
    /// Regression: a text file named .h5 was read as a Core ML protobuf ("wire type end-group").
    func testTextFileNamedH5IsReportedAsNotHDF5() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let fake = dir.appendingPathComponent("notes.h5")
        try Data("just some text\n".utf8).write(to: fake)
        for command in ["inspect", "predict"] {
            let r = CLIRun([command, fake.path] + (command == "predict" ? ["--input", "x=y.npy"] : []))
            XCTAssertEqual(r.status, 1, command)
            XCTAssertTrue(r.err.contains("notes.h5"), r.err)
            XCTAssertFalse(r.err.contains("protobuf"), "\(command): \(r.err)")
            XCTAssertTrue(r.err.lowercased().contains("hdf5"), "\(command): \(r.err)")
        }
    }

    /// Regression: `compile` on a bundle advised `mlconv keras`.
    func testCompileOfABundleOrKerasFileSaysWhatToRun() throws {
        let root = TestPaths.repositoryRoot
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("x.mlbundle").path
        let b = CLIRun(["compile", root.appendingPathComponent("Fixtures/bundles/digits_cnn_format1.0.mlbundle").path, "-o", out])
        XCTAssertEqual(b.status, 1)
        XCTAssertTrue(b.err.contains("already a compiled .mlbundle") && b.err.contains("mlconv predict"), b.err)
        let k = CLIRun(["compile", root.appendingPathComponent("Fixtures/demo/digits_cnn.h5").path, "-o", out])
        XCTAssertEqual(k.status, 1)
        XCTAssertTrue(k.err.contains("Keras file") && k.err.contains("mlconv keras digits_cnn.h5"), k.err)
    }

    /// Regression: inspect and predict said only "no such file".
    func testMissingFileSaysWhereItLookedAndWhatToGive() {
        let r = CLIRun(["inspect", "no/such/model.h5"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("no such file (relative to \(FileManager.default.currentDirectoryPath))"), r.err)
        XCTAssertTrue(r.err.contains(".mlbundle file"), r.err)
    }

    /// Regression: inspect swallowed the conversion error of a damaged Keras file (exit 0, no word).
    func testInspectReportsWhyAKerasFileDoesNotConvert() {
        let file = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/model_weights_hard_links_to_itself.h5").path
        let r = CLIRun(["inspect", file])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("conversionError: "), r.out)
        let ok = CLIRun(["inspect", TestPaths.repositoryRoot.appendingPathComponent("Fixtures/demo/digits_cnn.h5").path])
        XCTAssertFalse(ok.out.contains("conversionError"), ok.out)
    }
}
