// ML programs run through MILImporter and MLRuntime: the fixtures of
// Scripts/make_mlprogram_fixtures.py (Keras models converted by coremltools 8.3, and MIL Builder
// programs with NumPy references) at parity, and the two corpus .mlpackage files of
// ../shared/corpus/mlmodel (finite outputs of the described shapes; fp32 vs --precision fp16).
import CoreMLFormat
import Foundation
import ImageIO
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

    /// A multifunction package (ct.utils.save_multifunction): the default function and
    /// `--function tanh_head` each match their NumPy reference; an unknown name is refused.
    func testMultifunctionPackage() throws {
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_multifunction")
        let pkg = d.appendingPathComponent("model.mlpackage")
        let x = try NPY.read(contentsOf: d.appendingPathComponent("input_x_in.npy"))
        XCTAssertEqual(MILImporter.functionNames(try Spec.Model.load(contentsOf: pkg.path)), ["main", "tanh_head"])
        for (function, file) in [(nil, "expected_main.npy"), ("main", "expected_main.npy"), ("tanh_head", "expected_tanh_head.npy")] {
            let expected = try NPY.read(contentsOf: d.appendingPathComponent(file))
            let y = try XCTUnwrap(run(pkg, inputs: ["x_in": x], roundFP16: false, function: function)["y"])
            XCTAssertEqual(y.shape, expected.shape, function ?? "default")
            XCTAssertLessThanOrEqual(relativeError(y.scalars, expected.scalars), 1e-5, function ?? "default")
        }
        XCTAssertThrowsError(try run(pkg, inputs: ["x_in": x], roundFP16: false, function: "nope")) { e in
            guard case let CoreMLImportError.invalidModel(_, message, _) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(message.contains("main, tanh_head"), message)
        }
    }

    /// An iOS 18 stateful program (state acc += x; y = 2·acc): the state persists across the
    /// predictions of one StatefulModel and `resetStates()` starts again from zeros.
    func testStatefulProgramKeepsItsState() throws {
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_state")
        let pkg = d.appendingPathComponent("model.mlpackage")
        for roundFP16 in [false, true] {
            let spec = try Spec.Model.load(contentsOf: pkg.path)
            let root = try MLPackage.read(at: pkg.path).rootModelPath
            let graph = try MILImporter.importModel(spec, fileName: "state", modelPath: (root as NSString).deletingLastPathComponent,
                                                    options: MILImportOptions(roundFP16: roundFP16)).graph
            let states = MILStates.states(of: graph)
            XCTAssertEqual(states.map(\.input), ["acc"])
            let model = try StatefulModel(graph: graph, states: states)
            for pass in 0..<2 {
                for t in 0..<3 {
                    let x = try NPY.read(contentsOf: d.appendingPathComponent("input_x_\(t).npy"))
                    let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_y_\(t).npy"))
                    let y = try XCTUnwrap(model.prediction(from: ["x": x])["y"])
                    XCTAssertLessThanOrEqual(relativeError(y.scalars, expected.scalars), 1e-3, "pass \(pass) step \(t)")
                }
                model.resetStates()
                XCTAssertEqual(model.stateValues["acc"]?.scalars, [0, 0, 0, 0])
            }
        }
    }

    /// Packages with corrupted bytes (in the program and in the weight file) import with a
    /// typed error or run; they never crash the process.
    func testCorruptedPackagesNeverCrash() throws {
        var random = MutationRandom(state: 12345)
        // A compressed-weight program and a while_loop / tensor-list program.
        for (name, input) in [("compressed_ios18_palettize4", "x_in"), ("lstm_seq_fp16", "seq")] {
            let src = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram/\(name)/model.mlpackage")
            let x = try NPY.read(contentsOf: src.deletingLastPathComponent().appendingPathComponent("input_\(input).npy"))
            let outcomes = try runMutatedPackages(src, files: ["Data/com.apple.CoreML/model.mlmodel", "Data/com.apple.CoreML/weights/weight.bin"],
                                                  iterations: 40, random: &random, feeds: [input: x])
            XCTAssertEqual(outcomes.ran + outcomes.refused, 40, name)
        }
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

    /// SuperPoint on a real photo (dog.jpg from ../shared/images, grayscale, resized to the
    /// declared 320 × 240, scaled to [0, 1] as SuperPoint expects; the program itself applies no
    /// scaling). fp32 gives unit-norm descriptors; with --precision fp16 the program's own fp16
    /// descriptor norm (Σ x² over 256 channels) overflows 65504 at every pixel, so `desc` is 0.
    /// The overflow is the model's (its pre-normalisation descriptors reach |x| ≈ 600 on a real
    /// photo, Σ x² 1e5…1e7), not an artefact of a synthetic input (docs/ML_PROGRAMS.md).
    func testSuperPointPackageRuns() throws {
        let pkg = try corpusPackage("autonerf_superpoint")
        let photo = try ImageCodec.read(contentsOf: try TestPaths.sharedFile("images/dog.jpg"))
            .converted(to: .grayscale).resized(to: 320, height: 240)
        let image = try NDArray(shape: [1, 240, 320, 1], scalars: photo.floatHWC(scale: 1 / 255))  // NHWC, as image inputs are
        let spec = try Spec.Model.load(contentsOf: pkg.path)
        let root = try MLPackage.read(at: pkg.path).rootModelPath
        func graph(_ roundFP16: Bool) throws -> Graph {
            var g = try MILImporter.importModel(spec, fileName: pkg.lastPathComponent, modelPath: (root as NSString).deletingLastPathComponent,
                                                options: MILImportOptions(roundFP16: roundFP16)).graph
            g.outputs.append("reduce_sum_0_cast_fp16")  // Σ |x|² over the descriptor channels, before the square root
            return g
        }
        let a = try Model(graph: graph(false)).prediction(from: ["image": image])
        let b = try Model(graph: graph(true)).prediction(from: ["image": image])
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
        // The cause: in fp32 the sum of squares exceeds fp16's largest value at every pixel.
        let sumSquares = try XCTUnwrap(a["reduce_sum_0_cast_fp16"]).scalars
        XCTAssertEqual(sumSquares.count, 30 * 40)
        XCTAssertGreaterThan(sumSquares.min() ?? 0, 65504, "Σ x² in fp32 (\(sumSquares.min() ?? 0)…\(sumSquares.max() ?? 0))")
        // The effect in fp16: Σ x² = inf, desc = x / inf = 0 everywhere.
        XCTAssertTrue(try XCTUnwrap(b["reduce_sum_0_cast_fp16"]).scalars.allSatisfy { $0 == .infinity })
        XCTAssertTrue(b["desc"]!.scalars.allSatisfy { $0 == 0 })
    }
}
