// `mlconv quantize X.mlpackage --linear int8|int4` (issue 11's spelling; `--linear-symmetric
// --bits 8|4` stays as an alias), and the compressed package it writes compiling to a bundle that
// keeps the weights compressed (format 2.1) and predicts as the package.
import Foundation
import MLBundle
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class MILQuantizeCLITests: XCTestCase {
    private func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-milquant-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }

    private let fixture = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram/small_cnn_fp32")

    private func weightFile(_ pkg: URL) throws -> Data {
        try Data(contentsOf: pkg.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin"))
    }

    func testLinearInt8AndInt4MatchTheOlderSpelling() throws {
        let dir = try tempDir()
        let pkg = fixture.appendingPathComponent("model.mlpackage").path
        for (new, old) in [(["--linear", "int8"], ["--linear-symmetric", "--bits", "8"]),
                           (["--linear=int4"], ["--linear-symmetric", "--bits", "4"]),
                           (["--linear", "int4", "--block-size", "4"], ["--linear-symmetric", "--bits", "4", "--block-size", "4"])] {
            let a = dir.appendingPathComponent("a_\(new.joined()).mlpackage"), b = dir.appendingPathComponent("b_\(new.joined()).mlpackage")
            let ra = CLIRun(["quantize", pkg, "-o", a.path, "--min-weights", "100"] + new)
            XCTAssertEqual(ra.status, 0, ra.err)
            let rb = CLIRun(["quantize", pkg, "-o", b.path, "--min-weights", "100"] + old)
            XCTAssertEqual(rb.status, 0, rb.err)
            XCTAssertTrue(ra.out.contains("weight(s) compressed"), ra.out)
            XCTAssertEqual(try weightFile(a), try weightFile(b), "\(new) vs \(old)")
            XCTAssertEqual(ra.out, rb.out.replacingOccurrences(of: b.path, with: a.path))
        }
        let help = CLIRun(["quantize", "--help"])
        XCTAssertTrue((help.out + help.err).contains("--linear int8|int4"), help.out + help.err)
    }

    func testLinearUsageErrors() {
        let pkg = fixture.appendingPathComponent("model.mlpackage").path
        let cases: [([String], String)] = [
            (["--linear"], "takes int8 or int4"),
            (["--linear", "int8", "--bits", "4"], "drop --bits 4"),
            (["--linear=int16"], "takes one of int4, int8"),
            (["--linear", "int8", "--palettize", "4"], "exactly one of --linear int8|int4"),
        ]
        for (flags, message) in cases {
            let r = CLIRun(["quantize", pkg, "-o", "/tmp/never-written.mlpackage"] + flags)
            XCTAssertEqual(r.status, 2, "\(flags)")
            XCTAssertTrue(r.err.contains(message), "\(flags): \(r.err)")
        }
        let nn = CLIRun(["quantize", "x.mlbundle", "-o", "y.mlbundle", "--linear", "int8"])
        XCTAssertEqual(nn.status, 2)
        XCTAssertTrue(nn.err.contains("--bits N --linear"), nn.err)
    }

    /// `quantize --linear int8` then `compile`: the bundle keeps int8 codes (about a quarter of
    /// float32) and predicts exactly as the quantized package.
    func testQuantizedPackageCompilesToACompressedBundle() throws {
        let dir = try tempDir()
        let q = dir.appendingPathComponent("q.mlpackage")
        let r = CLIRun(["quantize", fixture.appendingPathComponent("model.mlpackage").path, "-o", q.path, "--linear", "int8", "--min-weights", "100"])
        XCTAssertEqual(r.status, 0, r.err)
        let bundleURL = dir.appendingPathComponent("q.mlbundle")
        let c = CLIRun(["compile", q.path, "-o", bundleURL.path])
        XCTAssertEqual(c.status, 0, c.err)
        let bundle = try BundleFile(contentsOf: bundleURL)
        XCTAssertEqual(bundle.formatVersion, BundleFormat.compressedWeightsVersion)
        let compressed = bundle.graph.nodes.flatMap { $0.weights.values }.filter { $0.encoding.isFormat21Encoding }
        XCTAssertEqual(compressed.count, 3, "the three quantized weights")
        let bytes = compressed.reduce(0) { $0 + $1.encodedByteCount }, fp32 = compressed.reduce(0) { $0 + 4 * $1.elementCount }
        XCTAssertLessThan(Double(bytes), 0.4 * Double(fp32))
        let input = "image=" + fixture.appendingPathComponent("input_image.npy").path
        let p1 = CLIRun(["predict", q.path, "--input", input, "--output-dir", dir.appendingPathComponent("pkg").path])
        XCTAssertEqual(p1.status, 0, p1.err)
        let p2 = CLIRun(["predict", bundleURL.path, "--input", input, "--output-dir", dir.appendingPathComponent("bundle").path])
        XCTAssertEqual(p2.status, 0, p2.err)
        XCTAssertEqual(try NPY.read(contentsOf: dir.appendingPathComponent("pkg/Identity.npy")).scalars,
                       try NPY.read(contentsOf: dir.appendingPathComponent("bundle/Identity.npy")).scalars)
    }
}
