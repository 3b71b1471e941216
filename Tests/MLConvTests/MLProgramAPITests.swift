// ML programs through the public API (`import MLConv` only): an `.mlpackage` written by
// coremltools 8.3 from a Keras model (Fixtures/mlprogram, Scripts/make_mlprogram_fixtures.py)
// opens with `MLModel(contentsOf:)` and predicts Keras's recorded output.
import Foundation
import MLConv
import XCTest

final class MLProgramAPITests: XCTestCase {
    func check(_ fixture: String, input: String, tolerance: Double) throws {
        let dir = Paths.fixture("mlprogram/\(fixture)")
        let config = MLModelConfiguration(cacheDirectory: try Paths.temporary(self))
        let model = try MLModel(contentsOf: dir.appendingPathComponent("model.mlpackage"), configuration: config)
        XCTAssertEqual(model.modelDescription.inputs.map(\.name), [input])
        let x = try MultiArray(contentsOfNPY: dir.appendingPathComponent("input_\(input).npy"))
        let y = try MultiArray(contentsOfNPY: dir.appendingPathComponent("expected_Identity.npy"))
        guard case let .multiArray(out)? = try model.prediction(from: [input: .multiArray(x)])["Identity"] else {
            return XCTFail("\(fixture): no multi-array output 'Identity'")
        }
        XCTAssertEqual(out.shape, y.shape, fixture)
        let scale = max(y.values.map(abs).max() ?? 1, 1e-12)
        XCTAssertLessThanOrEqual(maxAbsDiff(out.values, y.values) / scale, tolerance, fixture)
    }

    func testFP32ProgramsMatchKeras() throws {
        try check("dense_softmax_fp32", input: "x", tolerance: 1e-4)
        try check("mobilenet_block_fp32", input: "features", tolerance: 1e-4)
    }

    /// An fp16-typed program runs in exact fp32 by default: within fp16's error of Keras.
    func testFP16ProgramIsWithinFP16ToleranceOfKeras() throws {
        try check("dense_softmax_fp16", input: "x", tolerance: 1e-2)
    }

    /// The ECG LSTM of ../shared (coremltools 8.3, PyTorch): two inputs, one [1, 8] output.
    func testCorpusPackageRunsWithFiniteOutputs() throws {
        let url = try Paths.shared("corpus/mlmodel/ekgapp_rhythm_lstm.mlpackage")
        let model = try MLModel(contentsOf: url, configuration: MLModelConfiguration(cacheDirectory: try Paths.temporary(self)))
        let ecg = try MultiArray(shape: [1, 1, 5000], dataType: .float32, values: (0..<5000).map { sin(Double($0) * 0.05) })
        let demo = try MultiArray(shape: [1, 2], dataType: .float32, values: [0.5, 1])
        let out = try model.prediction(from: ["ecg": .multiArray(ecg), "demo": .multiArray(demo)])
        guard case let .multiArray(y)? = out["var_346"] else { return XCTFail("no output var_346: \(out.keys.sorted())") }
        XCTAssertEqual(y.shape, [1, 8])
        XCTAssertTrue(y.values.allSatisfy(\.isFinite))
    }
}
