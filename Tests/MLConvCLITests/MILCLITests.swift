// The CLI on ML programs: `ops --mil`, `inspect` (MIL text), `compile` / `predict` of an
// .mlpackage (fp32 and --precision fp16, --function), `compare` between package and bundle.
import CoreMLFormat
import Foundation
import MLRuntime
import TestSupport
import XCTest

final class MILCLITests: XCTestCase {
    private func fixture(_ name: String) -> String {
        TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram/\(name)").path
    }

    private func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-milcli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }

    func testOpsMILListsTheImportersTable() throws {
        let r = CLIRun(["ops", "--mil", "--json"])
        XCTAssertEqual(r.status, 0, r.err)
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]])
        let byOp = Dictionary(list.map { ($0["op"] as! String, $0) }, uniquingKeysWith: { a, _ in a })
        for op in MILOpTable.opsetOps { XCTAssertNotNil(byOp[op], op) }
        for op in ["conv", "lstm", "linear", "layer_norm", "max_pool", "reduce_sum", "slice_by_index", "const", "while_loop", "cond",
                   "make_list", "list_scatter", "constexpr_lut_to_dense", "constexpr_blockwise_shift_scale"] {
            XCTAssertEqual(byOp[op]?["imported"] as? Bool, true, op)
        }
        // MARK: milopsb — the random ops are imported (mlconv's seeded generator); a refused op names why.
        for op in ["random_normal", "non_zero", "pixel_shuffle", "non_maximum_suppression"] { XCTAssertEqual(byOp[op]?["imported"] as? Bool, true, op) }
        for (op, row) in byOp where row["imported"] as? Bool == false { XCTAssertFalse((row["note"] as? String ?? "").isEmpty, op) }
        XCTAssertEqual(byOp["read_state"]?["imported"] as? Bool, true)
    }

    func testInspectPrintsMILText() {
        let r = CLIRun(["inspect", fixture("conv_relu_pool/model.mlpackage")])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("MIL program:"), r.out)
        XCTAssertTrue(r.out.contains("main(%x_in: (1, 3, 10, 10, fp32)) [opset CoreML5] {"), r.out)
        XCTAssertTrue(r.out.contains("%conv_0_weight_0: (6, 3, 3, 3, fp32) = const(val=blob(@model_path/weights/weight.bin, offset 64))"), r.out)
        XCTAssertTrue(r.out.contains("= max_pool(ceil_mode=%y_ceil_mode_0"), r.out)
        XCTAssertTrue(r.out.contains("} -> (%y)"), r.out)
    }

    /// `inspect --graph` draws an ML program op by op (MILPicture), constants folded into labels.
    func testInspectGraphDrawsTheProgram() throws {
        let dot = try tempDir().appendingPathComponent("p.dot")
        let r = CLIRun(["inspect", fixture("conv_relu_pool/model.mlpackage"), "--graph", dot.path])
        XCTAssertEqual(r.status, 0, r.err)
        let text = try String(contentsOf: dot, encoding: .utf8)
        XCTAssertTrue(text.contains("function main (CoreML5)"), text)
        XCTAssertTrue(text.contains(#"conv_0\nconv\n→ float32[1×6×10×10]\nweights: float32"#), text)
        XCTAssertTrue(text.contains(#"y\nmax_pool"#), text)
        XCTAssertFalse(text.contains("conv_0_strides_0"), "constant parameters are not drawn: " + text)
    }

    func testCompilePredictAndCompareAPackage() throws {
        let dir = try tempDir()
        let pkg = fixture("small_cnn_fp16/model.mlpackage")
        let input = "image=" + fixture("small_cnn_fp16/input_image.npy")
        let bundle = dir.appendingPathComponent("cnn.mlbundle").path
        let c = CLIRun(["compile", pkg, "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        let p1 = CLIRun(["predict", pkg, "--input", input, "--output-dir", dir.appendingPathComponent("pkg").path])
        XCTAssertEqual(p1.status, 0, p1.err)
        let p2 = CLIRun(["predict", bundle, "--input", input, "--output-dir", dir.appendingPathComponent("bundle").path])
        XCTAssertEqual(p2.status, 0, p2.err)
        let p3 = CLIRun(["predict", pkg, "--input", input, "--precision", "fp16", "--output-dir", dir.appendingPathComponent("fp16").path])
        XCTAssertEqual(p3.status, 0, p3.err)
        let a = try NPY.read(contentsOf: dir.appendingPathComponent("pkg/Identity.npy")).scalars
        let b = try NPY.read(contentsOf: dir.appendingPathComponent("bundle/Identity.npy")).scalars
        let h = try NPY.read(contentsOf: dir.appendingPathComponent("fp16/Identity.npy")).scalars
        let expected = try NPY.read(contentsOf: URL(fileURLWithPath: fixture("small_cnn_fp16/expected_Identity.npy"))).scalars
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, h)
        for (x, y) in zip(h, expected) { XCTAssertEqual(x, y, accuracy: 1e-2) }
        let cmp = CLIRun(["compare", pkg, bundle, "--input", input, "--min-snr", "50"])  // identical outputs: compare reports its capped SNR
        XCTAssertEqual(cmp.status, 0, cmp.out + cmp.err)
        let cmp16 = CLIRun(["compare", fixture("small_cnn_fp32/model.mlpackage"), pkg, "--input", input, "--min-snr", "30"])
        XCTAssertEqual(cmp16.status, 0, cmp16.out + cmp16.err)
    }

    func testPredictStartsAStatefulProgramFromZeros() throws {
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_state")
        let dir = try tempDir()
        let r = CLIRun(["predict", d.appendingPathComponent("model.mlpackage").path, "--input", "x=" + d.appendingPathComponent("input_x_0.npy").path,
                        "--output-dir", dir.path])
        XCTAssertEqual(r.status, 0, r.err)
        let y = try NPY.read(contentsOf: dir.appendingPathComponent("y.npy")).scalars
        let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_y_0.npy")).scalars
        for (a, b) in zip(y, expected) { XCTAssertEqual(a, b, accuracy: 1e-3) }
        XCTAssertTrue(r.out.contains("acc__next"), r.out)
    }

    /// compare between a Keras .h5 and its coremltools conversion (outputs paired by position).
    func testCompareKerasWithItsMLProgram() {
        let input = "image=" + fixture("small_cnn_fp32/input_image.npy")
        func maxError(_ out: String) -> Double? {
            guard let r = out.range(of: "max abs error ") else { return nil }
            return Double(out[r.upperBound...].prefix { !$0.isWhitespace && $0 != "," })
        }
        let r = CLIRun(["compare", fixture("small_cnn_fp32/keras.h5"), fixture("small_cnn_fp32/model.mlpackage"), "--input", input,
                        "--min-snr", "45"])
        XCTAssertEqual(r.status, 0, r.out + r.err)
        XCTAssertTrue(r.out.contains("outputs paired by position: probs ↔ Identity"), r.out)
        XCTAssertLessThan(maxError(r.out) ?? 1, 1e-6, r.out)
        // The fp16 conversion: fp16 weights cost precision, still within fp16 tolerance.
        let r16 = CLIRun(["compare", fixture("small_cnn_fp32/keras.h5"), fixture("small_cnn_fp16/model.mlpackage"), "--input", input,
                          "--min-snr", "30"])
        XCTAssertEqual(r16.status, 0, r16.out + r16.err)
        let e16 = maxError(r16.out) ?? 1
        XCTAssertTrue(e16 > 1e-6 && e16 < 1e-2, r16.out)
    }

    func testUnknownFunctionAndPrecisionAreRefused() {
        let pkg = fixture("layer_norm/model.mlpackage")
        let input = "x_in=" + fixture("layer_norm/input_x_in.npy")
        let f = CLIRun(["predict", pkg, "--input", input, "--function", "nope"])
        XCTAssertNotEqual(f.status, 0)
        XCTAssertTrue(f.err.contains("no function 'nope'") && f.err.contains("main"), f.err)
        let p = CLIRun(["predict", pkg, "--input", input, "--precision", "fp8"])
        XCTAssertNotEqual(p.status, 0)
        XCTAssertTrue(p.err.contains("--precision takes fp32 or fp16"), p.err)
    }
}
