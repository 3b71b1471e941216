// ML programs run through MILImporter and MLRuntime: the fixtures of
// Scripts/make_mlprogram_fixtures.py (Keras models converted by coremltools 8.3, and MIL Builder
// programs with NumPy references) at parity, and the two corpus .mlpackage files of
// ../shared/corpus/mlmodel (finite outputs of the described shapes; fp32 vs --precision fp16).
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class MILProgramRunTests: XCTestCase {
    private struct Case: Decodable {
        var inputs: [String]
        var outputs: [String]
        var precision: String
        var source: String
    }

    private func run(_ package: URL, inputs: [String: NDArray], roundFP16: Bool, function: String? = nil) throws -> [String: NDArray] {
        let spec = try Spec.Model.load(contentsOf: package.path)
        let root = try MLPackage.read(at: package.path).rootModelPath
        let result = try MILImporter.importModel(spec, fileName: package.lastPathComponent,
                                                 modelPath: (root as NSString).deletingLastPathComponent,
                                                 options: MILImportOptions(function: function, roundFP16: roundFP16))
        return try Model(graph: result.graph).prediction(from: inputs)
    }

    /// max |a − b| / max |b|.
    private func relativeError(_ a: [Float], _ b: [Float]) -> Float {
        let scale = max(b.map { abs($0) }.max() ?? 0, 1e-6)
        return zip(a, b).map { abs($0 - $1) }.max().map { $0 / scale } ?? .infinity
    }

    func testFixturesMatchTheirReferences() throws {
        let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 12)
        for name in names {
            do { try checkFixture(dir.appendingPathComponent(name), name: name) } catch { XCTFail("\(name): \(error)") }
        }
    }

    private func checkFixture(_ d: URL, name: String) throws {
        do {
            let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: d.appendingPathComponent("case.json")))
            var inputs: [String: NDArray] = [:]
            for i in c.inputs { inputs[i] = try NPY.read(contentsOf: d.appendingPathComponent("input_\(i).npy")) }
            let fp16 = c.precision == "fp16"
            let out = try run(d.appendingPathComponent("model.mlpackage"), inputs: inputs, roundFP16: fp16)
            for o in c.outputs {
                let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_\(o).npy"))
                let got = try XCTUnwrap(out[o], "\(name): no output \(o)")
                XCTAssertEqual(got.shape.reduce(1, *), expected.shape.reduce(1, *), "\(name).\(o): shape \(got.shape) vs \(expected.shape)")
                let err = relativeError(got.scalars, expected.scalars)
                XCTAssertLessThanOrEqual(err, fp16 ? 1e-2 : 1e-4, "\(name).\(o): relative error \(err)")
            }
        }
    }

    /// The fp16 fixtures run in exact fp32 by default: closer to Keras than with rounding.
    func testFP16ProgramsRunInFP32ByDefault() throws {
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram/small_cnn_fp16")
        let x = try NPY.read(contentsOf: d.appendingPathComponent("input_image.npy"))
        let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_Identity.npy"))
        let exact = try run(d.appendingPathComponent("model.mlpackage"), inputs: ["image": x], roundFP16: false)["Identity"]!
        let rounded = try run(d.appendingPathComponent("model.mlpackage"), inputs: ["image": x], roundFP16: true)["Identity"]!
        XCTAssertNotEqual(exact.scalars, rounded.scalars, "--precision fp16 must change an fp16 program's result")
        // The fp16 weights are the only difference left in fp32 mode.
        XCTAssertLessThan(relativeError(exact.scalars, expected.scalars), 5e-3)
    }

    // MARK: corpus packages

    private func corpusPackage(_ name: String) throws -> URL { try TestPaths.sharedFile("corpus/mlmodel/\(name).mlpackage") }

    private func seeded(_ shape: [Int], scale: Float, seed: UInt64) -> NDArray {
        var s = seed
        let n = shape.reduce(1, *)
        let v: [Float] = (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Float(s >> 40) / Float(1 << 24) * scale
        }
        return try! NDArray(shape: shape, scalars: v)
    }

    func testECGLSTMPackageRuns() throws {
        let pkg = try corpusPackage("ekgapp_rhythm_lstm")
        let inputs = ["ecg": seeded([1, 1, 5000], scale: 2, seed: 1), "demo": try NDArray(shape: [1, 2], scalars: [0.6, 1])]
        let a = try run(pkg, inputs: inputs, roundFP16: false)["var_346"]!
        let b = try run(pkg, inputs: inputs, roundFP16: true)["var_346"]!
        XCTAssertEqual(a.shape, [1, 8])
        XCTAssertTrue(a.scalars.allSatisfy(\.isFinite) && b.scalars.allSatisfy(\.isFinite))
        XCTAssertLessThan(relativeError(b.scalars, a.scalars), 1e-2, "fp16 vs fp32: \(a.scalars) vs \(b.scalars)")
        XCTAssertNotEqual(a.scalars, b.scalars)
    }

    func testSuperPointPackageRuns() throws {
        let pkg = try corpusPackage("autonerf_superpoint")
        // A grayscale image in [0, 1] (SuperPoint's training range), NHWC as image inputs are.
        let image = seeded([1, 240, 320, 1], scale: 1, seed: 2)
        let a = try run(pkg, inputs: ["image": image], roundFP16: false)
        let b = try run(pkg, inputs: ["image": image], roundFP16: true)
        let semi = try XCTUnwrap(a["semi"]), desc = try XCTUnwrap(a["desc"])
        XCTAssertEqual(semi.shape, [1, 65, 30, 40])
        XCTAssertEqual(desc.shape, [1, 256, 30, 40])
        XCTAssertTrue(semi.scalars.allSatisfy(\.isFinite) && desc.scalars.allSatisfy(\.isFinite))
        // desc is L2-normalised over its 256 channels at every pixel.
        let v = desc.scalars
        for p in stride(from: 0, to: 30 * 40, by: 97) {
            let norm = (0..<256).reduce(Float(0)) { $0 + v[$1 * 1200 + p] * v[$1 * 1200 + p] }
            XCTAssertEqual(norm, 1, accuracy: 1e-3, "pixel \(p)")
        }
        XCTAssertLessThan(relativeError(b["semi"]!.scalars, semi.scalars), 1e-2)
        // In fp16, Σ desc² (over 256 channels) passes 65504, so the normalised descriptor is 0:
        // the program's own fp16 typing, reproduced (docs/ML_PROGRAMS.md).
        XCTAssertTrue(b["desc"]!.scalars.allSatisfy { $0 == 0 })
    }
}
