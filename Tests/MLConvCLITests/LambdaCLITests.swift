import Foundation
import XCTest
@testable import MLConvCLI
import TestSupport

/// `--no-auto-lambda` on `keras`, `predict` and `inspect`; `inspect` shows each Lambda's
/// recovered expression.
final class LambdaCLITests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func path(_ p: String) -> String { root.appendingPathComponent(p).path }

    func testInspectShowsExpressionsAndTheSwitch() throws {
        let model = path("Fixtures/keras/style_transfer_lambda_k2/model.h5")
        let auto = CLIRun(["inspect", model])
        XCTAssertEqual(auto.status, 0, auto.err)
        XCTAssertTrue(auto.out.contains("res_crop_0: def res_crop(x): return x[:, 2:-2, 2:-2]  [lowered to IR]"), auto.out)
        XCTAssertTrue(auto.out.contains("rescale_output: def rescale_output(x): return (x + 1) * 127.5  [lowered to IR]"), auto.out)
        XCTAssertFalse(auto.out.contains("conversionError"), auto.out)
        let off = CLIRun(["inspect", model, "--no-auto-lambda", "--json"])
        XCTAssertEqual(off.status, 0, off.err)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(off.out.utf8)) as? [String: Any])
        let lambdas = try XCTUnwrap(report["lambdas"] as? [[String: Any]])
        XCTAssertEqual(lambdas.count, 6)
        XCTAssertTrue(lambdas.allSatisfy { $0["autoLowered"] as? Bool == false && $0["note"] as? String == "--no-auto-lambda" })
        XCTAssertEqual((report["unsupportedLayers"] as? [Any])?.count, 6)
    }

    func testKerasAndPredictSwitch() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = path("Fixtures/keras/style_transfer_lambda_k2/model.h5")
        let bundle = dir.appendingPathComponent("s.mlbundle").path
        let converted = CLIRun(["keras", model, "-o", bundle])
        XCTAssertEqual(converted.status, 0, converted.err)
        let refused = CLIRun(["keras", model, "--no-auto-lambda", "-o", bundle])
        XCTAssertEqual(refused.status, 4)  // unsupported model (issue 13 exit codes)
        XCTAssertTrue(refused.err.contains("6 layers are not supported") && refused.err.contains("--lower res_crop=crop:2,2,2,2"), refused.err)
        let input = path("Fixtures/keras/style_transfer_lambda_k2/input_0.npy")
        let out = dir.appendingPathComponent("out").path
        let predicted = CLIRun(["predict", model, "--input", "image=\(input)", "--output-dir", out])
        XCTAssertEqual(predicted.status, 0, predicted.err)
        let noAuto = CLIRun(["predict", model, "--no-auto-lambda", "--input", "image=\(input)", "--output-dir", out])
        XCTAssertEqual(noAuto.status, 4)  // unsupported model
        XCTAssertTrue(noAuto.err.contains("not supported"), noAuto.err)
    }
}
