import Diagnostics
import Foundation
import ImageIO
import MLConvCLI
import MLRuntime
import TestSupport
import XCTest

/// Issue 13: each error category exits with its named code, and --max-memory refuses files that
/// ask for more memory, naming the file, what needed it, the limit and the option.
final class ExitCodeTests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func fixture(_ p: String) -> String { root.appendingPathComponent(p).path }
    var digits: String { fixture("Fixtures/demo/digits_cnn.h5") }

    func testHelpDocumentsEveryExitCode() {
        let r = CLIRun(["--help"])
        XCTAssertEqual(r.status, 0)
        for c in DiagnosticCategory.allCases {
            XCTAssertTrue(r.out.contains("\(c.exitCode)") && r.out.contains(c.name), "\(c.name) missing from --help:\n\(r.out)")
        }
        XCTAssertTrue(r.out.contains("--max-memory"), r.out)
    }

    func testMissingFileIsInputFile() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["keras", dir.appendingPathComponent("nope.h5").path, "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(r.status, DiagnosticCategory.inputFile.exitCode, r.err)
        XCTAssertTrue(r.err.contains("nope.h5"), r.err)
    }

    func testUnsupportedLayerIsUnsupportedModel() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["keras", fixture("Fixtures/keras/style_transfer_lambda_k2/model.h5"), "--no-auto-lambda",
                        "-o", dir.appendingPathComponent("s.mlbundle").path])
        XCTAssertEqual(r.status, DiagnosticCategory.unsupportedModel.exitCode, r.err)
        XCTAssertTrue(r.err.contains("not supported"), r.err)
    }

    func testBadFlagIsUsage() {
        let r = CLIRun(["keras", digits, "--no-such-flag", "-o", "x.mlbundle"])
        XCTAssertEqual(r.status, DiagnosticCategory.usage.exitCode, r.err)
        XCTAssertEqual(CLIRun(["no-such-command"]).status, DiagnosticCategory.usage.exitCode)
        let m = CLIRun(["--max-memory", "lots", "inspect", digits])
        XCTAssertEqual(m.status, DiagnosticCategory.usage.exitCode, m.err)
        XCTAssertTrue(m.err.contains("--max-memory takes a size"), m.err)
    }

    func testUnwritableOutputIsIO() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        // A regular file where a directory should be: creating the temporary file fails (ENOTDIR),
        // even for root, who ignores permission bits.
        let blocker = dir.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        for ext in ["mlbundle", "mlmodel"] {
            let r = CLIRun(["keras", digits, "-o", blocker.appendingPathComponent("out.\(ext)").path])
            XCTAssertEqual(r.status, DiagnosticCategory.io.exitCode, "\(ext): \(r.err)")
        }
        let p = CLIRun(["predict", digits, "--input", "digit=" + fixture("Fixtures/demo/digit_7.npy"),
                        "--output-dir", blocker.appendingPathComponent("out").path])
        XCTAssertEqual(p.status, DiagnosticCategory.io.exitCode, p.err)
    }

    func testCompareBelowToleranceIsNumericCheckFailed() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let float = dir.appendingPathComponent("f.mlbundle").path, q = dir.appendingPathComponent("q.mlbundle").path
        XCTAssertEqual(CLIRun(["keras", digits, "-o", float]).status, 0)
        XCTAssertEqual(CLIRun(["quantize", float, "-o", q, "--bits", "1", "--linear"]).status, 0)
        let r = CLIRun(["compare", float, q, "--input", "digit=" + fixture("Fixtures/demo/digit_7.npy"), "--min-snr", "55"])
        XCTAssertEqual(r.status, DiagnosticCategory.numericCheckFailed.exitCode, r.out + r.err)
    }

    // MARK: --max-memory

    func testMaxMemoryRefusesHDF5Weights() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("x.mlbundle").path
        let r = CLIRun(["--max-memory", "4K", "keras", digits, "-o", out])
        XCTAssertEqual(r.status, DiagnosticCategory.resourceLimit.exitCode, r.err)
        XCTAssertTrue(r.err.contains("digits_cnn.h5") && r.err.contains("--max-memory") && r.err.contains("4.0 KiB"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // After the command (or among its options), the same; a large limit converts.
        XCTAssertEqual(CLIRun(["keras", digits, "-o", out, "--max-memory=4K"]).status, DiagnosticCategory.resourceLimit.exitCode)
        let ok = CLIRun(["keras", digits, "-o", out, "--max-memory", "1G"])
        XCTAssertEqual(ok.status, 0, ok.err)
        XCTAssertEqual(MemoryLimit.current, MemoryLimit.defaultLimit, "the next command without the option has the default")
        _ = CLIRun(["inspect", out])
        XCTAssertEqual(MemoryLimit.current, MemoryLimit.defaultLimit)
    }

    func testMaxMemoryRefusesNPYImageAndArena() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let bundle = dir.appendingPathComponent("d.mlbundle").path
        XCTAssertEqual(CLIRun(["keras", digits, "-o", bundle]).status, 0)
        // An .npy input of 2000 float32 values (8000 bytes) under a 4 KiB limit.
        let npy = try NPYRoundTrip.write(count: 2000, to: dir.appendingPathComponent("big.npy"))
        let n = CLIRun(["--max-memory", "4K", "predict", bundle, "--input", "digit=\(npy)"])
        XCTAssertEqual(n.status, DiagnosticCategory.resourceLimit.exitCode, n.err)
        // The graph verifier refuses first: the 8 KiB output of conv2 alone exceeds 4 KiB (issue 13).
        XCTAssertTrue(n.err.contains("tensor arena") || n.err.contains("big.npy") || n.err.contains("tensor 'conv2'"), n.err)
        // The arena of the digits CNN (8×8 input) takes 12.3 KiB; the model file itself is mapped, not copied.
        let a = CLIRun(["--max-memory", "8K", "predict", bundle, "--input", "digit=" + fixture("Fixtures/demo/digit_7.npy")])
        XCTAssertEqual(a.status, DiagnosticCategory.resourceLimit.exitCode, a.err)
        XCTAssertTrue(a.err.contains("tensor arena"), a.err)
    }

    /// The readers' own checks, below the CLI.
    func testReadersCheckTheLimitBeforeAllocating() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let npy = try NPYRoundTrip.write(count: 2000, to: dir.appendingPathComponent("v.npy"))
        try MemoryLimit.with(4096) {
            XCTAssertThrowsError(try NPY.read(contentsOf: URL(fileURLWithPath: npy))) { e in
                XCTAssertEqual((e as? MemoryLimitExceeded)?.requestedBytes, 8000, "\(e)")
                XCTAssertEqual((e as? MemoryLimitExceeded)?.file, npy)
            }
            // 28×28 PNG decodes to 28·28·3 bytes counted (2352) > 1 KiB.
            try MemoryLimit.with(1024) {
                XCTAssertThrowsError(try ImageCodec.read(contentsOf: URL(fileURLWithPath: fixture("Fixtures/demo/digit_7.png")))) { e in
                    guard case .tooLarge = e as? ImageIOError else { return XCTFail("\(e)") }
                    XCTAssertEqual(Diagnostic(e).category, .resourceLimit)
                    XCTAssertTrue("\(e)".contains("--max-memory"), "\(e)")
                }
            }
        }
        XCTAssertNoThrow(try NPY.read(contentsOf: URL(fileURLWithPath: npy)))
        XCTAssertNoThrow(try ImageCodec.read(contentsOf: URL(fileURLWithPath: fixture("Fixtures/demo/digit_7.png"))))
    }
}

/// Writes a float32 .npy vector of `count` zeros (no Python in tests).
enum NPYRoundTrip {
    static func write(count: Int, to url: URL) throws -> String {
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(count),), }"
        while (10 + header.utf8.count + 1) % 64 != 0 { header += " " }
        header += "\n"
        var d = Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0])
        d.append(UInt8(header.utf8.count & 0xFF)); d.append(UInt8(header.utf8.count >> 8))
        d.append(Data(header.utf8))
        d.append(Data(count: count * 4))
        try d.write(to: url)
        return url.path
    }
}
