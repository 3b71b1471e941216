// Classifier ML programs (issue 11): `mlconv keras fer_cnn_k2/model.h5 --class-labels L -o
// M.mlpackage` writes a `classify` op; the package, read back by mlconv (`MLModel`, `mlconv
// predict`), gives Keras' probabilities (Fixtures/keras/fer_cnn_k2/output_0.npy) as the label
// dictionary and Keras' argmax as the predicted label, for fp32 and fp16 programs.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLConv
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class MLProgramExportClassifierTests: XCTestCase {
    let labels = ["angry", "disgust", "fear", "happy", "sad", "surprise", "neutral"]

    func testKerasClassifierPackageGivesKerasLabelAndProbabilities() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let fx = CoreMLExportParityTests.kerasDir.appendingPathComponent("fer_cnn_k2")
        let labelFile = dir.appendingPathComponent("labels.txt")
        try labels.joined(separator: "\n").write(to: labelFile, atomically: true, encoding: .utf8)
        let ref = try NPY.read(contentsOf: fx.appendingPathComponent("output_0.npy")).scalars
        let best = try XCTUnwrap(ref.indices.max { ref[$0] < ref[$1] })
        let x = try NPY.read(contentsOf: fx.appendingPathComponent("input_0.npy"))
        for (precision, tolerance) in [("fp32", 1e-4), ("fp16", 1e-2)] {
            let pkg = dir.appendingPathComponent("fer_\(precision).mlpackage").path
            let w = CLIRun(["keras", fx.appendingPathComponent("model.h5").path, "--class-labels", labelFile.path,
                            "--precision", precision, "-o", pkg])
            XCTAssertEqual(w.status, 0, w.err)

            let spec = try Spec.Model.load(contentsOf: pkg)
            XCTAssertEqual(spec.description?.predictedFeatureName, "classLabel")
            XCTAssertEqual(spec.description?.predictedProbabilitiesName, "output")
            let ops = spec.mlProgramOperationTypes()
            XCTAssertEqual(ops.last, "classify", "\(ops)")

            let model = try MLModel(contentsOf: URL(fileURLWithPath: pkg))
            XCTAssertEqual(model.modelDescription.classLabels, .strings(labels))
            let inputName = try XCTUnwrap(spec.description?.input.first?.name)
            let out = try model.prediction(from: [inputName: .multiArray(try MultiArray(shape: x.shape, dataType: .float32, values: x.scalars.map(Double.init)))])
            guard case let .string(label)? = out["classLabel"], case let .dictionary(.stringKeys(probs))? = out["output"] else {
                return XCTFail("\(precision): outputs \(out.keys.sorted()) are not a string label and a string-keyed dictionary")
            }
            XCTAssertEqual(label, labels[best], precision)
            for (l, p) in zip(labels, ref) { XCTAssertEqual(probs[l] ?? -1, Double(p), accuracy: tolerance, "\(precision) \(l)") }

            let npy = dir.appendingPathComponent("x.npy")
            try NPY.write(x, to: npy)
            let r = CLIRun(["predict", pkg, "--input", "\(inputName)=\(npy.path)"])
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertTrue(r.out.contains("1. \(labels[best]) "), r.out)
        }
    }

    /// The classifier's probabilities output must hold one value per label.
    func testLabelCountMismatchIsATypedError() throws {
        let graph = try KerasConverterForTests.fer()
        var g = graph
        g.description.classLabels = ["a", "b"]
        g.description.probabilitiesOutput = g.outputs.first
        XCTAssertThrowsError(try MLProgramExporter.export(g)) { e in
            guard case .invalidGraph? = e as? MLProgramExportError else { return XCTFail("\(e)") }
        }
    }
}

enum KerasConverterForTests {
    static func fer() throws -> Graph {
        try KerasConverter().convert(modelAt: CoreMLExportParityTests.kerasDir.appendingPathComponent("fer_cnn_k2/model.h5"), architectureJSON: nil)
    }
}

extension Spec.Model {
    /// The op types of function `main` of an ML program, in order.
    func mlProgramOperationTypes() -> [String] {
        guard let p = try? mlProgram(), let f = p.functions["main"], let block = f.blockSpecializations[f.opset] else { return [] }
        return block.operations.map(\.type)
    }
}

/// Masks and split (issue 11) written as MIL (`not_equal`/`cast`/`reduce_max`, `mul`, `split`)
/// import back and run like the IR graph they came from (the IR ops are at Keras parity in the
/// Keras frontend's tests; `conv_lstm1d_k2` covers split against Keras in the parity test).
final class MLProgramExportMaskSplitTests: XCTestCase {
    func testWrittenMasksAndSplitImportBack() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        // Steps 1 and 3 are all 0.5 (masked), the others are not.
        var v: [Float] = []
        for t in 0..<5 { for c in 0..<3 { v.append(t == 1 || t == 3 ? 0.5 : Float(t * 3 + c) * 0.1 - 0.3) } }
        let x = try NDArray(shape: [1, 5, 3], scalars: v)
        let nodes = [
            Node(name: "mask", op: .sequenceMask(value: 0.5), inputs: ["x"], outputs: ["m"]),
            Node(name: "apply", op: .applyMask, inputs: ["x", "m"], outputs: ["y"]),
            Node(name: "parts", op: .split(SplitAttributes(axis: 1, splitSizes: [2, 3])), inputs: ["y"], outputs: ["a", "b"]),
        ]
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 3], .float32))], outputs: ["m", "a", "b"], nodes: nodes)
        try g.inferShapes()
        let want = try Model(graph: g).prediction(from: ["x": x])
        XCTAssertEqual(want["m"]?.scalars, [1, 0, 1, 0, 1])
        for precision in MLProgramExportOptions.Precision.allCases {
            let path = dir.appendingPathComponent("mask_\(precision.rawValue).mlpackage").path
            try MLProgramExporter.write(g, to: path, options: MLProgramExportOptions(precision: precision))
            let spec = try Spec.Model.load(contentsOf: path)
            let root = try MLPackage.read(at: path).rootModelPath
            let back = try MILImporter.importModel(spec, fileName: path, modelPath: (root as NSString).deletingLastPathComponent).graph
            let out = try Model(graph: back).prediction(from: ["x": x])
            for name in ["m", "a", "b"] {
                let got = try XCTUnwrap(out[name], "\(precision) \(name): outputs \(out.keys.sorted())")
                let ref = try XCTUnwrap(want[name])
                XCTAssertEqual(got.shape, ref.shape, "\(precision) \(name)")
                let err = zip(got.scalars, ref.scalars).map { abs($0 - $1) }.max() ?? 1
                XCTAssertLessThanOrEqual(err, precision == .float32 ? 1e-6 : 1e-3, "\(precision) \(name)")
            }
        }
    }
}
