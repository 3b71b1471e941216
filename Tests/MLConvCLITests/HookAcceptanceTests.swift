import Foundation
import KerasFrontend
@testable import MLConvCLI
import MLGraph
import MLRuntime
import TestSupport
import XCTest

/// Issue 3 acceptance on the real style-transfer networks in `../shared/models` (skipped with a
/// visible message when absent): the full model, the `ReflectionPadding2D` variant and the
/// weights-only file + JSON, each converted both ways — Lambdas as the runtime's custom layers
/// `ResCropBlockLambda` / `RescaleOutputLambda`, and lowered to built-in ops — and run on the
/// London photo (320×320, NHWC 0–255); the output must match Keras' within 1e-3·255.
///
/// Six predictions of a 320×320 network with 9×9 convolutions (≈ 2 s each with oneDNN): four
/// through the Swift API, two through `mlconv keras` + `mlconv predict` (flags, and the committed
/// hooks file).
final class HookAcceptanceTests: XCTestCase {
    static let tolerance: Float = 1e-3 * 255

    static let loweredFlags = ["--lower", "res_crop=crop:2,2,2,2", "--lower", "rescale_output=affine:127.5,127.5"]
    static let customFlags = ["--custom-layer", "res_crop=ResCropBlockLambda", "--custom-layer", "rescale_output=RescaleOutputLambda"]
    /// Only the reflect model has the class (a flag whose MATCH selects nothing is an error).
    static let reflectFlags = ["--lower", "ReflectionPadding2D=pad:reflect"]

    func model(_ name: String) throws -> URL { try TestPaths.sharedFile("models/\(name)") }

    /// The photo as the model input, and Keras' output for `reference`.
    func data(_ reference: String) throws -> (input: NDArray, expected: NDArray) {
        (try NPY.read(contentsOf: try model("reference/london_big-ben_320.npy")),
         try NPY.read(contentsOf: try model("reference/\(reference)")))
    }

    /// Converts with the hooks of `flags` (parsed as `mlconv keras` parses them), runs, compares.
    func check(_ h5: String, json: String? = nil, flags: [String], reference: String,
               customLayers: Int, crops: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let args = try parseArguments(flags, OptionSpec().adding(hookOptionSpec))
        let graph = try KerasConverter(options: .init(hooks: try parseHooks(args)))
            .convert(modelAt: try model(h5), architectureJSON: try json.map(model))
        let customs = graph.nodes.compactMap { n -> String? in if case let .custom(a) = n.op { return a.className } else { return nil } }
        XCTAssertEqual(customs.count, customLayers, "custom layers \(customs)", file: file, line: line)
        XCTAssertEqual(graph.opCounts["crop"] ?? 0, crops, "crop nodes", file: file, line: line)
        let (input, expected) = try data(reference)
        let t0 = Date()
        let out = try Model(graph: graph).prediction(from: ["image": input])["rescale_output"]
        let got = try XCTUnwrap(out, file: file, line: line)
        XCTAssertEqual(got.shape, [1, 320, 320, 3], file: file, line: line)
        let err = maxAbsDiff(got.scalars, expected.scalars)
        print("acceptance \(h5)\(json.map { " + \($0)" } ?? "") [\(customLayers > 0 ? "custom layers" : "lowered")]: max|err| = \(err) (tolerance \(Self.tolerance)), \(String(format: "%.2f", Date().timeIntervalSince(t0))) s")
        XCTAssertLessThanOrEqual(err, Self.tolerance, file: file, line: line)
    }

    // MARK: Swift API (hooks parsed from the flags)

    func testFullModelAsCustomLayers() throws {
        try check("style_transfer_vangogh.h5", flags: Self.customFlags, reference: "style_transfer_vangogh__london_big-ben.npy",
                  customLayers: 6, crops: 0)
    }

    func testReflectModelLowered() throws {
        try check("style_transfer_vangogh_reflect.h5", flags: Self.loweredFlags + Self.reflectFlags,
                  reference: "style_transfer_vangogh_reflect__london_big-ben.npy", customLayers: 0, crops: 5)
    }

    func testWeightsOnlyWithJSONLowered() throws {
        try check("van-gogh-starry-night_style.h5", json: "style_transfer_vangogh.json", flags: Self.loweredFlags,
                  reference: "style_transfer_vangogh__london_big-ben.npy", customLayers: 0, crops: 5)
    }

    func testWeightsOnlyWithJSONAsCustomLayers() throws {
        try check("van-gogh-starry-night_style.h5", json: "style_transfer_vangogh.json", flags: Self.customFlags,
                  reference: "style_transfer_vangogh__london_big-ben.npy", customLayers: 6, crops: 0)
    }

    // MARK: Command line: `mlconv keras … -o x.mlbundle`, then `mlconv predict`

    /// Converts with `mlconv keras`, predicts with `mlconv predict`, compares the written .npy.
    func runCLI(_ h5: String, extra: [String], reference: String) throws -> URL {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let bundle = dir.appendingPathComponent("style.mlbundle").path
        let convert = CLIRun(["keras", try model(h5).path] + extra + ["-o", bundle])
        XCTAssertEqual(convert.status, 0, convert.err)
        guard convert.status == 0 else { return dir }
        let out = dir.appendingPathComponent("out")
        let predict = CLIRun(["predict", bundle, "--input", "image=" + (try model("reference/london_big-ben_320.npy")).path,
                              "--output-dir", out.path])
        XCTAssertEqual(predict.status, 0, predict.err)
        let got = try NPY.read(contentsOf: out.appendingPathComponent("rescale_output.npy"))
        let err = maxAbsDiff(got.scalars, try data(reference).expected.scalars)
        print("acceptance CLI \(h5) \(extra.joined(separator: " ")): max|err| = \(err) (tolerance \(Self.tolerance))")
        XCTAssertLessThanOrEqual(err, Self.tolerance)
        return out
    }

    func testCommandLineFullModelLoweredWithImageOutput() throws {
        let out = try runCLI("style_transfer_vangogh.h5", extra: Self.loweredFlags + ["--image-output", "rescale_output"],
                             reference: "style_transfer_vangogh__london_big-ben.npy")
        let png = out.appendingPathComponent("rescale_output.png")
        XCTAssertTrue(FileManager.default.fileExists(atPath: png.path), "the stylized picture \(png.path)")
    }

    func testCommandLineReflectModelWithCommittedHooksFile() throws {
        // Fixtures/hooks/style_transfer.json: the Lambdas as custom layers, ReflectionPadding2D lowered.
        _ = try runCLI("style_transfer_vangogh_reflect.h5",
                       extra: ["--hooks", TestPaths.repositoryRoot.appendingPathComponent("Fixtures/hooks/style_transfer.json").path],
                       reference: "style_transfer_vangogh_reflect__london_big-ben.npy")
    }

    /// Without hooks (and with --no-auto-lambda): every Lambda and the custom class listed, with
    /// the flags that fix them.
    func testCommandLineErrorListsLayersAndFixes() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let run = CLIRun(["keras", try model("style_transfer_vangogh_reflect.h5").path, "--no-auto-lambda",
                          "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(run.status, 4)  // unsupported model (issue 13 exit codes)
        for s in ["7 layers are not supported",
                  "'reflection_padding2d' (ReflectionPadding2D): no built-in converter for this Keras class; input (1, 320, 320, 3) → output (1, 400, 400, 3)",
                  "fix: --lower ReflectionPadding2D=pad:reflect   or   --custom-layer ReflectionPadding2D=ReflectionPadding2D",
                  "'res_crop_0' (Lambda): Python function res_crop(x) from make_real_style_transfer.py:31",
                  "input (1, 100, 100, 64) → output (1, 96, 96, 64)",
                  "'res_crop_4' (Lambda)", "input (1, 84, 84, 64) → output (1, 80, 80, 64)",
                  "fix: --lower res_crop=crop:2,2,2,2   or   --custom-layer res_crop=ResCropBlockLambda",
                  "'rescale_output' (Lambda): Python function rescale_output(x)",
                  "fix: --lower rescale_output=affine:SCALE,OFFSET   or   --custom-layer rescale_output=RescaleOutputLambda",
                  "all at once: --lower ReflectionPadding2D=pad:reflect --lower res_crop=crop:2,2,2,2 --custom-layer rescale_output=RescaleOutputLambda"] {
            XCTAssertTrue(run.err.contains(s), "stderr lacks '\(s)':\n\(run.err)")
        }
        // By default the Lambdas (pure expressions) are lowered: only the custom class is left.
        let auto = CLIRun(["keras", try model("style_transfer_vangogh_reflect.h5").path, "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(auto.status, 4)  // unsupported model
        XCTAssertTrue(auto.err.contains("1 layer is not supported") && auto.err.contains("'reflection_padding2d' (ReflectionPadding2D)")
                      && !auto.err.contains("res_crop"), auto.err)
    }
}
