// MIL ops of issue 11, group A, from the CLI and the ML program writer: `mlconv predict` on a
// classify program ranks the labels as for NeuralNetwork classifiers; the `resize_bilinear` the
// ML program writer emits (every sampling mode) imports back and runs like the graph it came from;
// `MLModel` describes and runs a classify program as Core ML does (labels, label, dictionary).
import CoreMLFormat
import Foundation
import MLConv
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class MILMoreACLITests: XCTestCase {
    func testPredictRanksTheLabelsOfAClassifyProgram() throws {
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_classifier/keras_strings")
        let r = CLIRun(["predict", d.appendingPathComponent("model.mlpackage").path,
                        "--input", "features=" + d.appendingPathComponent("input_features.npy").path])
        XCTAssertEqual(r.status, 0, r.err)
        let case_ = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: d.appendingPathComponent("case.json"))) as? [String: Any])
        let label = try XCTUnwrap(case_["expected_label"] as? String)
        XCTAssertTrue(r.out.contains("1. \(label) "), r.out)
    }

    func testMLModelDescribesAndRunsAClassifyProgram() throws {
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_classifier/builder_int64")
        let model = try MLModel(contentsOf: d.appendingPathComponent("model.mlpackage"))
        let case_ = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: d.appendingPathComponent("case.json"))) as? [String: Any])
        let labels = try XCTUnwrap(case_["labels"] as? [String]).compactMap { Int64($0) }
        XCTAssertEqual(model.modelDescription.classLabels, .int64s(labels))
        let x = try NPY.read(contentsOf: d.appendingPathComponent("input_x_in.npy"))
        let out = try model.prediction(from: ["x_in": .multiArray(try MultiArray(shape: x.shape, dataType: .float32, values: x.scalars.map(Double.init)))])
        let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_probabilities.npy")).scalars
        guard case let .int64(label)? = out[try XCTUnwrap(case_["label_output"] as? String)],
              case let .dictionary(.int64Keys(probs))? = out[try XCTUnwrap(case_["probabilities_output"] as? String)] else {
            return XCTFail("outputs \(out.keys.sorted()) are not an int64 label and an int64-keyed dictionary")
        }
        XCTAssertEqual(String(label), case_["expected_label"] as? String)
        for (l, p) in zip(labels, expected) { XCTAssertEqual(probs[l] ?? -1, Double(p), accuracy: 1e-4 * Double(expected.max() ?? 1)) }
    }

    /// Regression: the writer's resize_bilinear (UNALIGN_CORNERS, ALIGN_CORNERS,
    /// STRICT_ALIGN_CORNERS, DEFAULT) goes back through MILImporter to the same outputs.
    func testWrittenResizeBilinearImportsBack() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        var seed: UInt32 = 5
        let x = try NDArray(shape: [1, 4, 5, 3], scalars: (0..<60).map { _ in
            seed = seed &* 1664525 &+ 1013904223
            return Float(seed >> 8) / Float(1 << 24) - 0.5
        })
        for mode in ResizeSamplingMode.allCases {
            let node = Node(name: "up", op: .resize(ResizeAttributes(method: .bilinear, samplingMode: mode, size: [7, 9])), inputs: ["x"], outputs: ["y"])
            var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 5, 3], .float32))], outputs: ["y"], nodes: [node])
            try g.inferShapes()
            let want = try XCTUnwrap(try Model(graph: g).prediction(from: ["x": x])["y"])
            let path = dir.appendingPathComponent("resize_\(mode.rawValue).mlpackage").path
            try MLProgramExporter.write(g, to: path)
            let spec = try Spec.Model.load(contentsOf: path)
            let root = try MLPackage.read(at: path).rootModelPath
            let back = try MILImporter.importModel(spec, fileName: path, modelPath: (root as NSString).deletingLastPathComponent).graph
            let out = try Model(graph: back).prediction(from: [MLProgramExporter.featureName(for: "x"): x])
            let got = try XCTUnwrap(out[MLProgramExporter.featureName(for: "y")], "\(mode): outputs \(out.keys.sorted())")
            XCTAssertEqual(got.shape, want.shape, "\(mode)")
            let err = zip(got.scalars, want.scalars).map { abs($0 - $1) }.max() ?? 1
            XCTAssertLessThanOrEqual(err, 1e-5, "\(mode)")
        }
    }
}
