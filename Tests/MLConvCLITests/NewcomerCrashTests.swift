import Foundation
@testable import MLConvCLI
import TestSupport
import XCTest

/// Regressions for crashes and raw error dumps a newcomer found: a directory given to
/// `mlconv keras`, stdout closed by `| head`, a bad `--output-dir`, files of unknown type.
final class NewcomerCrashTests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func fixture(_ p: String) -> String { root.appendingPathComponent(p).path }

    /// Regression: `mlconv keras DIR -o x.mlbundle` trapped in `KerasArchive.isZip`
    /// (`readData(ofLength:)` on a directory, "Is a directory").
    func testKerasOfADirectorySaysItIsADirectory() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = dir.appendingPathComponent("saved_model")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let r = CLIRun(["keras", model.path, "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(r.status, 1, r.err)
        XCTAssertTrue(r.err.contains("'\(model.path)' is a directory; give a model file (.h5, .mlmodel, .mlbundle) or an .mlpackage"), r.err)
        // The same words as inspect.
        let i = CLIRun(["inspect", model.path])
        XCTAssertTrue(i.err.contains("is a directory; give a model file (.h5, .mlmodel, .mlbundle) or an .mlpackage"), i.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.mlbundle").path))
    }

    /// Regression: writing to a stdout whose reader had gone (`| head`, with SIGPIPE ignored
    /// by the graph writer) trapped with "Broken pipe" in `Console.standard`.
    func testConsoleWritingToAClosedPipeDoesNotTrap() throws {
        let previous = signal(SIGPIPE, SIG_IGN)  // as GraphFileWriter leaves it
        defer { signal(SIGPIPE, previous) }
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let console = Console(output: pipe.fileHandleForWriting, error: pipe.fileHandleForWriting)
        for i in 0..<3 {
            console.print("line \(i)")
            console.error("error \(i)")
        }
        // Still alive; and the same console writes to an open pipe.
        let open = Pipe()
        let live = Console(output: open.fileHandleForWriting, error: open.fileHandleForWriting)
        live.print("hello")
        try open.fileHandleForWriting.close()
        let read = try open.fileHandleForReading.readToEnd() ?? Data()
        XCTAssertEqual(String(decoding: read, as: UTF8.self), "hello\n")
    }

    /// Regression: `--output-dir` naming a file, or a directory that cannot be created, printed
    /// `NSCocoaErrorDomain Code=516/4` after the results.
    func testPredictRefusesABadOutputDirectoryBeforePredicting() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let file = dir.appendingPathComponent("afile")
        try Data("x".utf8).write(to: file)
        let base = ["predict", fixture("Fixtures/demo/digits_cnn.h5"), "--input", "digit=" + fixture("Fixtures/demo/digit_7.npy")]
        for (out, reason) in [(file.path, "it is a file, not a directory"),
                              (file.appendingPathComponent("sub").path, "'\(file.path)' is a file, not a directory")] {
            let r = CLIRun(base + ["--output-dir", out])
            XCTAssertEqual(r.status, 5, r.out)  // I/O (issue 13 exit codes)
            XCTAssertTrue(r.err.contains("--output-dir: cannot write '\(out)': \(reason); nothing was written (check that the directory exists and is writable)"), r.err)
            XCTAssertFalse(r.err.contains("NSCocoaErrorDomain") || r.err.contains("Code="), r.err)
            XCTAssertFalse(r.out.contains("probabilities"), "predicted before checking --output-dir: \(r.out)")
        }
        let ok = CLIRun(base + ["--output-dir", dir.appendingPathComponent("new/out").path])
        XCTAssertEqual(ok.status, 0, ok.err)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("new/out/probabilities.npy").path))
    }

    /// Regression: `inspect notes.txt` was decoded as a Core ML protobuf (a wire-format error);
    /// a real .mlmodel under another name is still read.
    func testUnknownExtensionIsRefusedUnlessTheBytesAreCoreML() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let notes = dir.appendingPathComponent("notes.txt")
        try Data("just some text\n".utf8).write(to: notes)
        let r = CLIRun(["inspect", notes.path])
        XCTAssertEqual(r.status, 1, r.out)
        XCTAssertTrue(r.err.contains("unknown model type '.txt'; give .h5, .keras, .mlmodel, .mlpackage or .mlbundle"), r.err)
        XCTAssertFalse(r.err.contains("wire"), r.err)
        let renamed = dir.appendingPathComponent("model.bin")
        try FileManager.default.copyItem(atPath: fixture("Fixtures/flexible/enumerated_cnn.mlmodel"), toPath: renamed.path)
        let ok = CLIRun(["inspect", renamed.path])
        XCTAssertEqual(ok.status, 0, ok.err)
    }

    /// Regression: a NumPy array given as a model was reported as an unknown HDF5 / protobuf file.
    func testNumPyArrayIsNamedAsSuch() throws {
        let npy = fixture("Fixtures/demo/digit_7.npy")
        let k = CLIRun(["keras", npy, "-o", try TestPaths.temporaryDirectory(for: self).appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(k.status, 1, k.out)
        XCTAssertTrue(k.err.contains("NumPy array (.npy), not a Keras model"), k.err)
        let i = CLIRun(["inspect", npy])
        XCTAssertEqual(i.status, 1, i.out)
        XCTAssertTrue(i.err.contains("is a NumPy array (.npy), not a model"), i.err)
    }
}
