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
