import Foundation
import MLBundle
import MLConvCLI
import MLGraph
import MLPasses
import MLRuntime
import TestSupport
import XCTest

/// `mlconv quantize` and `mlconv compare` end to end (issue 5).
final class QuantizeCompareTests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func fixture(_ p: String) -> String { root.appendingPathComponent(p).path }

    func testQuantizeEveryModeShrinksAndStaysClose() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let h5 = fixture("Fixtures/keras/fer_cnn_k2/model.h5")
        let float = dir.appendingPathComponent("f.mlbundle").path
        XCTAssertEqual(CLIRun(["keras", h5, "-o", float]).status, 0)
        let floatSize = try FileManager.default.attributesOfItem(atPath: float)[.size] as! Int
        // Expected shrink factors of the bundle (weights dominate; LUT/scale overheads are small).
        let cases: [([String], Double, Double)] = [
            (["--fp16"], 1.8, 50), (["--bits", "8", "--linear"], 3.2, 35), (["--bits", "8", "--kmeans"], 3.2, 35),
            (["--bits", "8", "--linear-symmetric"], 3.2, 30), (["--bits", "4", "--kmeans"], 5.5, 10),
            (["--bits", "2", "--linear"], 10, 0), (["--bits", "1", "--kmeans"], 14, -10),
        ]
        for (flags, minShrink, minSNR) in cases {
            let out = dir.appendingPathComponent("q\(flags.joined()).mlbundle").path
            let q = CLIRun(["quantize", float, "-o", out] + flags)
            XCTAssertEqual(q.status, 0, "\(flags): \(q.err)")
            XCTAssertTrue(q.out.contains("SQNR"), q.out)
            let size = try FileManager.default.attributesOfItem(atPath: out)[.size] as! Int
            XCTAssertGreaterThanOrEqual(Double(floatSize) / Double(size), minShrink, "\(flags): \(floatSize) → \(size) bytes")
            let c = CLIRun(["compare", float, out, "--input", "layer_1_conv2d_input=" + fixture("Fixtures/keras/fer_cnn_k2/input_0.npy")])
            XCTAssertEqual(c.status, 0, c.err)
            let snr = try XCTUnwrap(Double(c.out.components(separatedBy: "SNR ").dropFirst().first?.components(separatedBy: " dB").first ?? ""), c.out)
            XCTAssertGreaterThan(snr, minSNR, "\(flags): \(c.out)")
        }
    }

    func testCompareMinSNRFailsWithStatus3() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let float = dir.appendingPathComponent("f.mlbundle").path, q = dir.appendingPathComponent("q.mlbundle").path
        XCTAssertEqual(CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "--class-labels", fixture("Fixtures/demo/labels.txt"), "-o", float]).status, 0)
        XCTAssertEqual(CLIRun(["quantize", float, "-o", q, "--bits", "1", "--linear"]).status, 0)
        let input = "digit=" + fixture("Fixtures/demo/digit_7.npy")
        // Identical models: SNR = 10·log10(mean(q²)/1e-7) (coremltools' ε) = 60 dB for these probabilities.
        let ok = CLIRun(["compare", float, float, "--input", input, "--min-snr", "55"])
        XCTAssertEqual(ok.status, 0, ok.err)
        XCTAssertTrue(ok.out.contains("SNR 60.00 dB"), ok.out)
        XCTAssertTrue(ok.out.contains("top-1 agreement: 1/1"), ok.out)
        let bad = CLIRun(["compare", float, q, "--input", input, "--min-snr", "55"])
        XCTAssertEqual(bad.status, 3, bad.out + bad.err)
        XCTAssertTrue(bad.err.contains("below --min-snr"), bad.err)
    }

    func testQuantizeUsageErrors() {
        XCTAssertEqual(CLIRun(["quantize", "x.mlbundle", "-o", "y.mlbundle"]).status, 2)
        XCTAssertEqual(CLIRun(["quantize", "x.mlbundle", "-o", "y.mlbundle", "--kmeans"]).status, 2)
        XCTAssertEqual(CLIRun(["quantize", "x.mlbundle", "-o", "y.mlbundle", "--kmeans", "--bits", "9"]).status, 2)
        XCTAssertEqual(CLIRun(["quantize", "x.mlbundle", "-o", "y.mlbundle", "--fp16", "--linear", "--bits", "8"]).status, 2)
        let r = CLIRun(["quantize", "x.mlbundle", "-o", "y.mlbundle", "--linear-symmetric", "--bits", "4"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("8-bit only"), r.err)
    }

    /// Issue 5 acceptance: the stylized Big Ben from the 8-bit k-means style-transfer model has
    /// PSNR ≥ 45 dB against the float model's output (as 0–255 PNG pixels); 4-bit is far lower.
    func testStyleTransferKMeansPSNR() throws {
        let model = try TestPaths.sharedFile("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        let photo = try TestPaths.sharedFile("models/reference/london_big-ben_320.npy")
        let dir = try TestPaths.temporaryDirectory(for: self)
        let float = dir.appendingPathComponent("f.mlbundle").path
        XCTAssertEqual(CLIRun(["compile", model.path, "-o", float]).status, 0)
        var psnr: [Int: Double] = [:]
        let floatOut = try predictImage(float, photo)
        for bits in [8, 4] {
            let q = dir.appendingPathComponent("k\(bits).mlbundle").path
            let r = CLIRun(["quantize", float, "-o", q, "--bits", "\(bits)", "--kmeans"])
            XCTAssertEqual(r.status, 0, r.err)
            psnr[bits] = imagePSNR(floatOut, try predictImage(q, photo))
        }
        XCTAssertGreaterThanOrEqual(psnr[8]!, 45, "8-bit k-means PSNR \(psnr[8]!) dB")
        XCTAssertLessThan(psnr[4]!, psnr[8]! - 10, "4-bit k-means should be clearly worse: \(psnr)")
    }

    private func predictImage(_ bundle: String, _ input: URL) throws -> [Float] {
        let g = try BundleFile(contentsOf: URL(fileURLWithPath: bundle)).graph
        let m = try Model(graph: g)
        let out = try m.prediction(from: [g.inputs[0].name: try NPY.read(contentsOf: input)])
        return out[g.outputs[0]]!.scalars
    }

    /// PSNR of two images after clamping to 0–255 and rounding, as written to PNG: 10·log10(255²/MSE).
    private func imagePSNR(_ a: [Float], _ b: [Float]) -> Double {
        func px(_ x: Float) -> Double { Double(min(255, max(0, x)).rounded(.toNearestOrEven)) }
        let mse = zip(a, b).reduce(0.0) { $0 + pow(px($1.0) - px($1.1), 2) } / Double(a.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
