import Foundation
import ImageIO
import MLConvCLI
import MLRuntime
import TestSupport
import XCTest

/// Issue 4 through the CLI: Keras → .mlmodel with coremltools-style options, compile, inspect,
/// predict on images (PNG/JPEG, Vision-style crops), image outputs as PNG.
final class CoreMLCLITests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func fixture(_ p: String) -> String { root.appendingPathComponent(p).path }

    func testKerasToClassifierMLModelWithImageInput() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let mlmodel = dir.appendingPathComponent("digits.mlmodel").path
        // The digits CNN was trained on pixels 0–16 scaled to 0–1: a 0–255 grayscale image needs 1/255.
        let r = CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "-o", mlmodel,
                        "--class-labels", fixture("Fixtures/demo/labels.txt"),
                        "--image-input", "digit", "--image-scale", String(1.0 / 255.0),
                        "--author", "mlconv tests", "--license", "MIT", "--short-description", "8×8 digits",
                        "--description", "digit=an 8×8 grayscale digit"])
        XCTAssertEqual(r.status, 0, r.err)
        let inspect = CLIRun(["inspect", mlmodel, "--json"])
        XCTAssertEqual(inspect.status, 0, inspect.err)
        let text = inspect.out
        XCTAssertTrue(text.contains("neuralNetworkClassifier"), text)
        XCTAssertTrue(text.contains("GRAYSCALE"), text)
        XCTAssertTrue(text.contains("mlconv tests") && text.contains("8×8 digits"), text)
        XCTAssertTrue(text.contains("an 8×8 grayscale digit"), text)

        // The committed digit as a grayscale PNG at 0–255 (value·255), fed to the image input:
        // same probabilities as the Keras model on the 0–1 array.
        let digit = try NPY.read(contentsOf: URL(fileURLWithPath: fixture("Fixtures/demo/digit_7.npy")))
        let png = dir.appendingPathComponent("seven.png")
        let pixels = digit.scalars.map { UInt8(($0 * 255).rounded()) }
        try ImageCodec.writePNG(Image(width: 8, height: 8, channels: 1, pixels: pixels), to: png)
        let p = CLIRun(["predict", mlmodel, "--input", "digit=" + png.path])
        XCTAssertEqual(p.status, 0, p.err)
        XCTAssertTrue(p.out.contains("  1. 7  1.0000") || p.out.contains("  1. 7  0.99"), p.out)
    }

    func testCompileInspectPredictStyleTransferMLModel() throws {
        let model = try TestPaths.sharedFile("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        let photo = try TestPaths.sharedFile("images/london_big-ben_320.png")
        let reference = try TestPaths.sharedFile("models/reference/style_transfer_vangogh__london_big-ben.npy")
        let dir = try TestPaths.temporaryDirectory(for: self)
        let bundle = dir.appendingPathComponent("style.mlbundle").path
        let c = CLIRun(["compile", model.path, "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        let i = CLIRun(["inspect", model.path])
        XCTAssertEqual(i.status, 0, i.err)
        XCTAssertTrue(i.out.contains("ResCropBlockLambda") && i.out.contains("RescaleOutputLambda"), i.out)
        let out = dir.appendingPathComponent("out")
        let p = CLIRun(["predict", bundle, "--input", "image=" + photo.path, "--output-dir", out.path])
        XCTAssertEqual(p.status, 0, p.err)
        // The PNG written for the image output matches the Keras output (same weights) at ≥ 45 dB.
        let png = try ImageCodec.read(contentsOf: out.appendingPathComponent("output.png"))
        XCTAssertEqual([png.width, png.height, png.channels], [320, 320, 3])
        let keras = try NPY.read(contentsOf: reference).scalars
        let mse = zip(png.pixels, keras).reduce(0.0) { acc, pair in
            let k = Double(min(255, max(0, pair.1)).rounded(.toNearestOrEven))
            return acc + pow(Double(pair.0) - k, 2)
        } / Double(keras.count)
        let psnr = mse == 0 ? Double.infinity : 10 * log10(255 * 255 / mse)
        XCTAssertGreaterThanOrEqual(psnr, 45, "PSNR \(psnr) dB")
    }

    func testPredictOnFullJPEGWithCenterCrop() throws {
        let model = try TestPaths.sharedFile("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        let jpeg = try TestPaths.sharedFile("images/london_big-ben.jpg")
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("out")
        let p = CLIRun(["predict", model.path, "--input", "image=" + jpeg.path, "--crop", "center", "--output-dir", out.path])
        XCTAssertEqual(p.status, 0, p.err)
        let png = try ImageCodec.read(contentsOf: out.appendingPathComponent("output.png"))
        XCTAssertEqual([png.width, png.height], [320, 320])
        // The centre crop of the full photo is the 320 reference crop (ImageIO matches Pillow), so
        // the stylized result equals the one made from london_big-ben_320.png.
        let photo320 = try TestPaths.sharedFile("images/london_big-ben_320.png")
        let out2 = dir.appendingPathComponent("out2")
        XCTAssertEqual(CLIRun(["predict", model.path, "--input", "image=" + photo320.path, "--output-dir", out2.path]).status, 0)
        let png2 = try ImageCodec.read(contentsOf: out2.appendingPathComponent("output.png"))
        let maxDiff = zip(png.pixels, png2.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        XCTAssertLessThanOrEqual(maxDiff, 1)
        let bad = CLIRun(["predict", model.path, "--input", "image=" + jpeg.path, "--crop", "zoom"])
        XCTAssertEqual(bad.status, 2)
    }

    func testCorruptMLModelIsAnError() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let mlmodel = dir.appendingPathComponent("d.mlmodel")
        XCTAssertEqual(CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "-o", mlmodel.path]).status, 0)
        let bytes = try Data(contentsOf: mlmodel)
        let truncated = dir.appendingPathComponent("t.mlmodel")
        try bytes.prefix(bytes.count / 2).write(to: truncated)
        for cmd in [["inspect", truncated.path], ["compile", truncated.path, "-o", dir.appendingPathComponent("x.mlbundle").path]] {
            let r = CLIRun(cmd)
            XCTAssertEqual(r.status, 1, "\(cmd): \(r.out)")
            XCTAssertTrue(r.err.contains("t.mlmodel"), r.err)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.mlbundle").path))
    }
}
