import Foundation
import MLConvCLI
import MLRuntime
import TestSupport
import XCTest

/// Runs `mlconv` in-process and captures what it prints.
struct CLIRun {
    let status: Int32
    let out: String
    let err: String

    init(_ args: [String]) {
        var o = "", e = ""
        status = MLConv.main(args, console: Console(out: { o += $0 }, err: { e += $0 }))
        out = o; err = e
    }
}

final class CLITests: XCTestCase {
    let root = TestPaths.repositoryRoot

    func fixture(_ p: String) -> String { root.appendingPathComponent(p).path }

    /// The README's main job: convert the trained digits CNN, predict the committed 7.
    func testDemoConvertThenPredict() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let bundle = dir.appendingPathComponent("digits.mlbundle").path
        let convert = CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "--class-labels",
                              fixture("Fixtures/demo/labels.txt"), "-o", bundle])
        XCTAssertEqual(convert.status, 0, convert.err)
        XCTAssertTrue(convert.out.contains("input  digit (1, 8, 8, 1)"), convert.out)
        let outDir = dir.appendingPathComponent("out").path
        let predict = CLIRun(["predict", bundle, "--input", "digit=" + fixture("Fixtures/demo/digit_7.npy"), "--output-dir", outDir])
        XCTAssertEqual(predict.status, 0, predict.err)
        XCTAssertTrue(predict.out.contains("  1. 7  1.0000"), predict.out)
        // The written probabilities equal Keras' (Fixtures/demo/expected.json).
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: fixture("Fixtures/demo/expected.json")))) as! [String: Any]
        let keras = (expected["probabilities"] as! [Double]).map { Float($0) }
        let ours = try NPY.read(contentsOf: URL(fileURLWithPath: outDir + "/probabilities.npy"))
        XCTAssertEqual(ours.shape, [1, 10])
        XCTAssertLessThanOrEqual(maxAbsDiff(ours.scalars, keras), 1e-5)
    }

    func testInspectKerasAndBundle() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let bundle = dir.appendingPathComponent("d.mlbundle").path
        XCTAssertEqual(CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "-o", bundle]).status, 0)
        let text = CLIRun(["inspect", bundle])
        XCTAssertEqual(text.status, 0, text.err)
        XCTAssertTrue(text.out.contains("parameters: 38282"), text.out)
        XCTAssertTrue(text.out.contains("digit  float32[1×8×8×1]"), text.out)
        let json = CLIRun(["inspect", bundle, "--json"])
        XCTAssertEqual(json.status, 0, json.err)
        let obj = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as! [String: Any]
        XCTAssertEqual(obj["parameterCount"] as? Int, 38282)
        XCTAssertEqual(obj["format"] as? String, "mlbundle")
        XCTAssertEqual((obj["weightBytes"] as? [String: Int])?["fp32"], 38282 * 4)
        let h5 = CLIRun(["inspect", fixture("Fixtures/demo/digits_cnn.h5"), "--json"])
        XCTAssertEqual(h5.status, 0, h5.err)
        let k = try JSONSerialization.jsonObject(with: Data(h5.out.utf8)) as! [String: Any]
        XCTAssertEqual(k["parameterCount"] as? Int, 38282)
    }

    func testErrorsAreMessagesWithStatus() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let missing = CLIRun(["keras", dir.appendingPathComponent("nope.h5").path, "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.err.contains("nope.h5"), missing.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.mlbundle").path))

        let unknown = CLIRun(["keras", "--frobnicate"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.err.contains("unknown option --frobnicate"), unknown.err)

        XCTAssertEqual(CLIRun(["transmogrify"]).status, 2)
        XCTAssertEqual(CLIRun([]).status, 2)

        let bundle = dir.appendingPathComponent("d.mlbundle").path
        XCTAssertEqual(CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "-o", bundle]).status, 0)
        let badName = CLIRun(["predict", bundle, "--input", "image=" + fixture("Fixtures/demo/digit_7.npy")])
        XCTAssertEqual(badName.status, 1)
        XCTAssertTrue(badName.err.contains("unknown input 'image'") && badName.err.contains("digit"), badName.err)
        let noInput = CLIRun(["predict", bundle])
        XCTAssertEqual(noInput.status, 1)
        XCTAssertTrue(noInput.err.contains("missing input 'digit'"), noInput.err)
        let badLabels = dir.appendingPathComponent("labels.txt")
        try "a\nb\n".write(to: badLabels, atomically: true, encoding: .utf8)
        let labels = CLIRun(["keras", fixture("Fixtures/demo/digits_cnn.h5"), "--class-labels", badLabels.path, "-o", bundle])
        XCTAssertEqual(labels.status, 1)
        XCTAssertTrue(labels.err.contains("has 2 labels, but output 'probabilities' has 10 classes"), labels.err)
        let notModel = CLIRun(["inspect", fixture("Fixtures/demo/labels.txt")])
        XCTAssertEqual(notModel.status, 1)
    }

    func testHelpAndVersion() {
        let v = CLIRun(["--version"])
        XCTAssertEqual(v.status, 0)
        XCTAssertEqual(v.out, "mlconv \(MLConv.version)\n")
        let h = CLIRun(["--help"])
        XCTAssertEqual(h.status, 0)
        for c in ["keras", "compile", "inspect", "predict"] {
            XCTAssertTrue(h.out.contains("  \(c)"), "top-level help lists \(c)")
            let ch = CLIRun([c, "--help"])
            XCTAssertEqual(ch.status, 0)
            XCTAssertTrue(ch.out.hasPrefix("Usage: mlconv \(c)"), ch.out)
        }
    }
}
