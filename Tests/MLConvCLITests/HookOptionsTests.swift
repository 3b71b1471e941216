import Foundation
import KerasFrontend
@testable import MLConvCLI
import MLRuntime
import TestSupport
import XCTest

/// `--custom-layer`, `--lower`, `--hooks`: parsing, errors and exit statuses, and a round trip
/// through `mlconv keras` + `mlconv predict` on the small fixtures.
final class HookOptionsTests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func path(_ p: String) -> String { root.appendingPathComponent(p).path }

    func parse(_ args: [String]) throws -> ParsedArguments {
        try parseArguments(args, OptionSpec(positionalRange: 0...1).adding(hookOptionSpec))
    }

    func testSpecsFromFlagsAndFile() throws {
        let specs = try parseHookSpecs(try parse(["--lower", "res_crop=crop:2,2,2,2", "--custom-layer", "rescale_output=RescaleOutputLambda",
                                                  "--lower=ReflectionPadding2D=pad:reflect",
                                                  "--hooks", path("Fixtures/hooks/style_transfer_lowered.json")]))
        XCTAssertEqual(specs.map(\.description), [
            "--custom-layer rescale_output=RescaleOutputLambda",
            "--lower res_crop=crop:2,2,2,2",
            "--lower ReflectionPadding2D=pad:reflect",
            #"{"function": "res_crop", "lower": "crop:2,2,2,2"}"#,
            #"{"function": "rescale_output", "lower": "affine:127.5,127.5"}"#,
            #"{"class": "ReflectionPadding2D", "lower": "pad:reflect"}"#,
        ])
        XCTAssertEqual(try parseHooks(try parse(["--lower", "res_crop_*=identity", "--lower", "f=affine:1,0"])).map(\.pattern),
                       [.glob("res_crop_*"), .name("f"), .lambdaFunction("f"), .className("f")])
        XCTAssertTrue(try parseHooks(try parse([])).isEmpty)
    }

    func testFlagErrorsAreUsageErrors() throws {
        for (args, needle) in [(["--lower", "res_crop"], "--lower takes MATCH=OP[:ARGS]"),
                               (["--lower", "res_crop=crop:2,2,2"], "invalid lowering 'crop:2,2,2'"),
                               (["--lower", "x=scale:2"], "unknown operation 'scale'"),
                               (["--custom-layer", "x"], "--custom-layer takes MATCH=ClassName"),
                               (["--lower", "x=identity", "--custom-layer", "x=X"], "'x' is given two conversions"),
                               (["--lower", "x=identity", "--lower", "x=crop:1"], "'x' is given two conversions")] {
            XCTAssertThrowsError(try parseHookSpecs(try parse(args)), "\(args)") { e in
                XCTAssertTrue(e is UsageError, "\(type(of: e)): \(e)")
                XCTAssertTrue("\(e)".contains(needle), "'\(needle)' not in \(e)")
            }
        }
        XCTAssertThrowsError(try parse(["--hooks", "a.json", "--hooks", "b.json"])) { e in
            XCTAssertTrue("\(e)".contains("--hooks given twice"), "\(e)")
        }
    }

    func testMalformedHooksFileNamesFileAndProblem() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let file = dir.appendingPathComponent("bad.json")
        try #"{"hooks": [{"match": "res_crop", "lower": "crop:2,2"}, {"match": "x", "lower": "crop:1,2,3"}]}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try parseHookSpecs(try parse(["--hooks", file.path]))) { e in
            XCTAssertEqual("\(e)", "--hooks: \(file.path): hooks[1] (x): invalid lowering 'crop:1,2,3': '1,2,3' is not a list of borders: give N, V,H or TOP,BOTTOM,LEFT,RIGHT as non-negative whole numbers (forms: \(KerasLowering.syntax))")
        }
        try "{\"hooks\": [\n  {\"match\": \"a\" \"lower\": \"identity\"}\n]}".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try parseHookSpecs(try parse(["--hooks", file.path]))) { e in
            XCTAssertTrue("\(e)".contains("\(file.path):2:") && "\(e)".contains("not valid JSON"), "\(e)")
        }
    }

    // MARK: Through `mlconv keras` (needs the options wired into KerasCommand)

    func testKerasCommandAcceptsHookOptions() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let help = CLIRun(["keras", "--help"])
        for flag in ["--custom-layer MATCH=CLASS", "--lower MATCH=OP[:ARGS]", "--hooks FILE.json"] {
            XCTAssertTrue(help.out.contains(flag), "keras --help lacks \(flag):\n\(help.out)")
        }
        let bad = CLIRun(["keras", path("Fixtures/keras/style_transfer_lambda_k2/model.h5"), "--lower", "res_crop=crop:2,2,2",
                          "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(bad.status, 2, bad.err)
        XCTAssertTrue(bad.err.contains("invalid lowering 'crop:2,2,2'"), bad.err)
        let missing = CLIRun(["keras", path("Fixtures/keras/style_transfer_lambda_k2/model.h5"), "--hooks", dir.appendingPathComponent("none.json").path,
                              "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(missing.status, 1, missing.err)
        XCTAssertTrue(missing.err.contains("--hooks: no such file") && missing.err.contains("none.json"), missing.err)
    }

    /// With --no-auto-lambda the error names every layer and the flags that fix them; with those
    /// flags the model converts and `predict` matches Keras.
    func testSuggestedFlagsConvertAndPredict() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = path("Fixtures/keras/style_transfer_lambda_k2/model.h5")
        let bundle = dir.appendingPathComponent("s.mlbundle").path
        let fail = CLIRun(["keras", model, "--no-auto-lambda", "-o", bundle])
        XCTAssertEqual(fail.status, 4)  // unsupported model (issue 13 exit codes)
        for s in ["'res_crop_0' (Lambda): Python function res_crop(x)", "'rescale_output' (Lambda)",
                  "fix: --lower res_crop=crop:2,2,2,2   or   --custom-layer res_crop=ResCropBlockLambda",
                  "fix: --lower rescale_output=affine:SCALE,OFFSET   or   --custom-layer rescale_output=RescaleOutputLambda",
                  "all at once: --lower res_crop=crop:2,2,2,2 --custom-layer rescale_output=RescaleOutputLambda"] {
            XCTAssertTrue(fail.err.contains(s), "stderr lacks '\(s)':\n\(fail.err)")
        }
        let ok = CLIRun(["keras", model, "--lower", "res_crop=crop:2,2,2,2", "--custom-layer", "rescale_output=RescaleOutputLambda", "-o", bundle])
        XCTAssertEqual(ok.status, 0, ok.err)
        let out = dir.appendingPathComponent("out").path
        let predict = CLIRun(["predict", bundle, "--input", "image=" + path("Fixtures/keras/style_transfer_lambda_k2/input_0.npy"), "--output-dir", out])
        XCTAssertEqual(predict.status, 0, predict.err)
        let ours = try NPY.read(contentsOf: URL(fileURLWithPath: out + "/rescale_output.npy"))
        let keras = try NPY.read(contentsOf: URL(fileURLWithPath: path("Fixtures/keras/style_transfer_lambda_k2/output_0.npy")))
        XCTAssertEqual(ours.shape, keras.shape)
        let tolerance = 1e-4 * max(1, keras.scalars.map(abs).max() ?? 0)
        XCTAssertLessThanOrEqual(maxAbsDiff(ours.scalars, keras.scalars), tolerance)
    }
}

final class UnmatchedHookTests: XCTestCase {
    /// Regression (newcomer trial): a misspelt MATCH was silently ignored.
    func testMisspeltMatchIsAnError() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/style_transfer_lambda_k2/model.h5").path
        let out = dir.appendingPathComponent("x.mlbundle").path
        let r = CLIRun(["keras", model, "--lower", "res_crop=crop:2,2,2,2", "--lower", "rescale_output=affine:127.5,127.5",
                        "--lower", "rescale_ouput=identity", "-o", out])
        XCTAssertEqual(r.status, 2, r.out)  // usage (issue 13 exit codes)
        XCTAssertTrue(r.err.contains("hook 'rescale_ouput' matches no layer"), r.err)
        XCTAssertTrue(r.err.contains("res_crop_0 (Lambda)"), r.err)  // the layers are listed
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }
}

final class UnknownCustomClassTests: XCTestCase {
    /// Regression (newcomer trial): a bundle with an unregistered custom class was written silently.
    func testBundleWithUnregisteredClassWarns() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/style_transfer_lambda_k2/model.h5").path
        let out = dir.appendingPathComponent("x.mlbundle").path
        let r = CLIRun(["keras", model, "--lower", "res_crop=crop:2,2,2,2", "--custom-layer", "rescale_output=NoSuchClass", "-o", out])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.contains("warning: custom layer class 'NoSuchClass' (layer(s) rescale_output)"), r.err)
        let p = CLIRun(["predict", out, "--input", "image=" + TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/style_transfer_lambda_k2/input_0.npy").path])
        XCTAssertEqual(p.status, 4)  // unsupported model (issue 13 exit codes)
        XCTAssertTrue(p.err.contains("NoSuchClass"), p.err)
    }
}
