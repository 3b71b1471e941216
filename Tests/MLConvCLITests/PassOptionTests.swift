import CoreMLFormat
import Foundation
import MLBundle
import MLGraph
import MLRuntime
import TestSupport
import XCTest

/// `--disable-pass NAME` on `mlconv compile`, `keras` and `predict`: the inference pipeline
/// rewrites the stored graph (compile/keras), disabled passes are recorded in the bundle and
/// stay off at load (predict), and an unknown name is a usage error listing the known passes.
final class PassOptionTests: XCTestCase {
    /// A Core ML model whose imported graph has a zero pad feeding a 'valid' convolution.
    func padConvMLModel(in dir: URL) throws -> String {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 5, 1]))], outputs: ["y"], nodes: [
            Node(name: "pad", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 2], [3, 0], [0, 0]])),
                 inputs: ["x"], outputs: ["p"]),
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .valid, outputChannels: 2)),
                 inputs: ["p"], outputs: ["y"], weights: ["weight": floatConstant([2, 1, 3, 3], (0..<18).map { Float($0) - 9 })]),
        ])
        try g.inferShapes()
        let path = dir.appendingPathComponent("padconv.mlmodel").path
        try CoreMLExporter.export(g).model.write(toFile: path)
        return path
    }

    func bundle(_ path: String) throws -> BundleFile { try BundleFile(contentsOf: URL(fileURLWithPath: path)) }
    func opCount(_ path: String, _ op: String) throws -> Int { try bundle(path).graph.opCounts[op] ?? 0 }

    func testCompileRewritesTheStoredGraphUnlessDisabled() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let mlmodel = try padConvMLModel(in: dir)
        let fused = dir.appendingPathComponent("fused.mlbundle").path
        let plain = dir.appendingPathComponent("plain.mlbundle").path

        let a = CLIRun(["compile", mlmodel, "-o", fused])
        XCTAssertEqual(a.status, 0, a.err)
        XCTAssertTrue(a.out.contains("inference passes applied: fuse_pad_into_conv (4 → 3 layers)"), a.out)
        XCTAssertEqual(try opCount(fused, "pad"), 0)
        XCTAssertEqual(try bundle(fused).disabledPasses, [])

        let b = CLIRun(["compile", mlmodel, "-o", plain, "--disable-pass", "fuse_pad_into_conv"])
        XCTAssertEqual(b.status, 0, b.err)
        XCTAssertFalse(b.out.contains("inference passes applied"), b.out)
        XCTAssertTrue(b.out.contains("inference passes disabled (recorded in the bundle): fuse_pad_into_conv"), b.out)
        XCTAssertEqual(try opCount(plain, "pad"), 1)
        XCTAssertEqual(try bundle(plain).disabledPasses, ["fuse_pad_into_conv"])
        // inspect shows what the bundle records (regression: it was only in the raw file).
        let shown = CLIRun(["inspect", plain])
        XCTAssertTrue(shown.out.contains("disabledPasses: fuse_pad_into_conv"), shown.out)
        XCTAssertFalse(CLIRun(["inspect", fused]).out.contains("disabledPasses"))
        let conv = try XCTUnwrap(try bundle(fused).graph.nodes.first { $0.name == "conv" })
        guard case let .conv2d(attributes) = conv.op else { return XCTFail("\(conv.op)") }
        XCTAssertEqual(attributes.padding, .explicit(top: 1, bottom: 2, left: 3, right: 0))

        // predict: the recorded pass stays off at load (the pad layer runs); the fused bundle has none;
        // predict --disable-pass turns it off for a model that did not record it. Same values.
        let x = dir.appendingPathComponent("x.npy")
        try NPY.write(NDArray(shape: [1, 1, 5, 5], scalars: (0..<25).map { Float($0) }), to: x)
        var outputs: [NDArray] = []
        for (i, (model, flags, runsPad)) in [(plain, [String](), true), (fused, [], false), (mlmodel, [], false),
                                             (mlmodel, ["--disable-pass", "fuse_pad_into_conv"], true)].enumerated() {
            let out = dir.appendingPathComponent("out\(i)").path
            let r = CLIRun(["predict", model, "--input", "x=" + x.path, "--output-dir", out, "--profile"] + flags)
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertEqual(r.out.contains("  pad  ["), runsPad, "\(model) \(flags): \(r.out)")
            outputs.append(try NPY.read(contentsOf: URL(fileURLWithPath: out + "/y.npy")))
        }
        for o in outputs.dropFirst() { XCTAssertLessThanOrEqual(maxAbsDiff(o.scalars, outputs[0].scalars), 1e-4) }
    }

    func testUnknownPassNameIsAUsageErrorListingTheKnownPasses() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let mlmodel = try padConvMLModel(in: dir)
        let known = "the known passes are: \(PassPipeline.inference.names.joined(separator: ", "))"
        for args in [["compile", mlmodel, "-o", dir.appendingPathComponent("o.mlbundle").path],
                     ["keras", "model.h5", "-o", dir.appendingPathComponent("o.mlbundle").path],
                     ["predict", mlmodel, "--input", "x=x.npy"]] {
            let r = CLIRun(args + ["--disable-pass", "fuse_everything"])
            XCTAssertEqual(r.status, 2, "\(args[0]): \(r.err)")
            XCTAssertTrue(r.err.contains("--disable-pass: unknown pass 'fuse_everything'; \(known)"), r.err)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("o.mlbundle").path))
        // keras writing .mlmodel: the passes do not apply there.
        let k = CLIRun(["keras", "model.h5", "-o", dir.appendingPathComponent("o.mlmodel").path, "--disable-pass", "fuse_pad_into_conv"])
        XCTAssertEqual(k.status, 2, k.err)
        XCTAssertTrue(k.err.contains("--disable-pass applies to .mlbundle output"), k.err)
    }

    func testHelpListsThePasses() {
        for command in ["keras", "compile", "predict"] {
            let r = CLIRun([command, "--help"])
            XCTAssertTrue(r.out.contains("--disable-pass NAME"), "\(command): \(r.out)")
            XCTAssertTrue(r.out.contains("fuse_pad_into_conv"), "\(command): \(r.out)")
        }
    }
}
