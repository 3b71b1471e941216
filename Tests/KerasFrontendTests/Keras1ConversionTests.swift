import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Keras 1.x files: configs with Keras 1 names (Keras1Config), Keras 1 weights (Keras1Weights),
/// Merge, dim_ordering 'th'. Parity against `Fixtures/keras1` (Scripts/make_keras1_fixtures.py:
/// hand-written Keras 1.2.2 files, references from tf_keras with its legacy Keras 1 weight loader,
/// or NumPy for Merge's formulas).
final class Keras1ConversionTests: XCTestCase {
    static let dir = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras1")

    struct Case: Decodable {
        struct IO: Decodable { var name: String; var file: String; var shape: [Int] }
        var model: String
        var inputs: [IO]
        var outputs: [IO]
    }

    /// Converts `Fixtures/keras1/<name>/model.h5` and compares every output (≤ 1e-4 relative).
    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let d = Self.dir.appendingPathComponent(name)
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: d.appendingPathComponent("case.json")))
        let graph = try KerasConverter().convert(modelAt: d.appendingPathComponent(c.model))
        XCTAssertEqual(graph.inputs.map(\.name), c.inputs.map(\.name), "\(name): input names", file: file, line: line)
        XCTAssertEqual(graph.outputs, c.outputs.map(\.name), "\(name): output names", file: file, line: line)
        let model = try Model(graph: graph)
        var feeds: [String: NDArray] = [:]
        for i in c.inputs { feeds[i.name] = try NPY.read(contentsOf: d.appendingPathComponent(i.file)) }
        let results = try model.prediction(from: feeds)
        for o in c.outputs {
            let expected = try NPY.read(contentsOf: d.appendingPathComponent(o.file))
            guard let got = results[o.name] else { XCTFail("\(name): no output \(o.name)", file: file, line: line); continue }
            XCTAssertEqual(got.shape, expected.shape, "\(name): \(o.name) shape", file: file, line: line)
            guard got.count == expected.count else { continue }
            let scale = max(1, expected.scalars.map(abs).max() ?? 0)
            let err = zip(got.scalars, expected.scalars).map { abs($0 - $1) }.max() ?? 0
            print("keras1 parity \(name) \(o.name): max|err| = \(err)")
            XCTAssertLessThanOrEqual(err, 1e-4 * scale, "\(name): \(o.name) differs from the reference", file: file, line: line)
        }
    }

    func testThOrderedConvPoolPaddingBatchNormFlattenDense() throws { try check("th_conv_pool_flatten_dense") }
    func testGRUPerGateWeightsAndTimeDistributedDense() throws { try check("gru_timedistributed_dense") }
    func testConv1DKeras11And12KernelsAtrousEmbedding() throws { try check("conv1d_atrous_embedding") }
    func testDeconvolution2D() throws { try check("deconvolution2d_tf") }
    func testMergeModesSumMulAveMaxConcatDotCos() throws { try check("merge_modes") }
    func testSequentialStartingWithAMergeOfSequentials() throws { try check("sequential_merge_first") }

    func testEveryFixtureHasATest() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.dir.path).sorted()
        XCTAssertEqual(names, ["conv1d_atrous_embedding", "deconvolution2d_tf", "gru_timedistributed_dense", "merge_modes",
                               "sequential_merge_first", "th_conv_pool_flatten_dense"])
    }

    // MARK: Config translation

    func testKeras1ArgumentsAreRenamedAsKeras2LegacyInterfacesDo() throws {
        let k1 = try KerasJSON.parse("""
        {"class_name": "Sequential", "config": [
          {"class_name": "Convolution2D", "config": {"name": "c", "nb_filter": 8, "nb_row": 3, "nb_col": 5, "subsample": [2, 1],
           "border_mode": "same", "dim_ordering": "th", "bias": false, "init": "he_normal", "W_regularizer": null,
           "batch_input_shape": [null, 3, 16, 16], "input_dtype": "float32"}},
          {"class_name": "MaxPooling1D", "config": {"name": "p", "pool_length": 3, "stride": 1, "border_mode": "valid"}},
          {"class_name": "LSTM", "config": {"name": "l", "output_dim": 7, "inner_activation": "hard_sigmoid", "consume_less": "gpu"}},
          {"class_name": "Dense", "config": {"name": "d", "output_dim": 2, "bias": true}},
          {"class_name": "Dropout", "config": {"name": "o", "p": 0.5}}]}
        """)
        let layers = try XCTUnwrap(Keras1Config.translate(k1)["config"]?.array)
        XCTAssertEqual(layers[0]["class_name"]?.string, "Conv2D")
        let c = try XCTUnwrap(layers[0]["config"])
        XCTAssertEqual(c["filters"]?.int, 8)
        XCTAssertEqual(c["kernel_size"], .array([.number(3), .number(5)]))
        XCTAssertEqual(c["strides"], .array([.number(2), .number(1)]))
        XCTAssertEqual(c["padding"]?.string, "same")
        XCTAssertEqual(c["data_format"]?.string, "channels_first")
        XCTAssertEqual(c["use_bias"]?.bool, false)
        XCTAssertEqual(c["dtype"]?.string, "float32")
        XCTAssertNil(c["nb_filter"]); XCTAssertNil(c["init"]); XCTAssertNil(c["dim_ordering"])
        XCTAssertEqual(layers[1]["config"]?["pool_size"]?.int, 3)
        XCTAssertEqual(layers[1]["config"]?["strides"]?.int, 1)
        XCTAssertEqual(layers[2]["config"]?["units"]?.int, 7)
        XCTAssertEqual(layers[2]["config"]?["recurrent_activation"]?.string, "hard_sigmoid")
        XCTAssertEqual(layers[2]["config"]?["implementation"]?.int, 2)
        XCTAssertEqual(layers[3]["config"]?["units"]?.int, 2)
        XCTAssertEqual(layers[4]["config"]?["rate"]?.double, 0.5)
    }

    func testKeras2ConfigsPassUnchanged() throws {
        let k2 = try KerasJSON.parse("""
        {"class_name": "Sequential", "config": {"name": "s", "layers": [
          {"class_name": "Conv2D", "config": {"name": "c", "filters": 8, "kernel_size": [3, 3], "padding": "same",
           "data_format": "channels_last", "batch_input_shape": [null, 8, 8, 3]}},
          {"class_name": "Embedding", "config": {"name": "e", "input_dim": 10, "output_dim": 4}},
          {"class_name": "GRU", "config": {"name": "g", "units": 3, "recurrent_activation": "sigmoid"}}]}}
        """)
        XCTAssertEqual(Keras1Config.translate(k2), k2)
    }

    // MARK: Typed errors

    func testBatchNormalizationModeOtherThan0IsATypedError() throws {
        let config = """
        {"class_name": "Sequential", "config": [
          {"class_name": "Dense", "config": {"name": "dense_1", "output_dim": 3, "batch_input_shape": [null, 2], "input_dtype": "float32"}},
          {"class_name": "BatchNormalization", "config": {"name": "bn", "mode": 2, "axis": -1, "epsilon": 0.001}}]}
        """
        let t = TinyKeras(config: config, version: "1.2.2", weights: [
            "dense_1": [("dense_1_W", [2, 3], ramp(6)), ("dense_1_b", [3], ramp(3))],
            "bn": [("bn_gamma", [3], [1, 1, 1]), ("bn_beta", [3], [0, 0, 0]), ("bn_running_mean", [3], [0, 0, 0]), ("bn_running_std", [3], [1, 1, 1])],
        ], layerOrder: ["dense_1", "bn"])
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { error in
            guard case let .unsupportedConfiguration(_, layer, className, message, _) = error as? KerasConversionError else {
                return XCTFail("expected unsupportedConfiguration, got \(error)")
            }
            XCTAssertEqual(layer, "bn"); XCTAssertEqual(className, "BatchNormalization")
            XCTAssertTrue(message.contains("mode 2"), message)
        }
    }

    func testMergeWithAPythonModeIsATypedError() throws {
        let config = """
        {"class_name": "Model", "config": {"name": "m", "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["merge_1", 0, 0]],
          "layers": [
            {"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 2]}, "inbound_nodes": []},
            {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 2]}, "inbound_nodes": []},
            {"class_name": "Merge", "name": "merge_1", "config": {"name": "merge_1", "mode": "ã\\u0001", "mode_type": "lambda"},
             "inbound_nodes": [[["a", 0, 0], ["b", 0, 0]]]}]}}
        """
        let t = TinyKeras(config: config, version: "1.2.2")
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { error in
            guard case let .unsupportedConfiguration(_, layer, _, message, _) = error as? KerasConversionError else {
                return XCTFail("expected unsupportedConfiguration, got \(error)")
            }
            XCTAssertEqual(layer, "merge_1")
            XCTAssertTrue(message.contains("lambda"), message)
        }
    }

    // MARK: Real files

    /// ncondo's Keras 1.2.1 weights + JSON with its Lambda (image / 127.5 − 1, read from the
    /// bytecode) lowered by a hook: every other layer converts; parity with the corpus reference.
    func testNcondoWithItsLambdaLowered() throws {
        let stem = "ncondo_carnd_behavioral_cloning"
        let c = try CorpusKerasParityTests.load(stem)
        let model = try KerasTestPaths.sharedFile(c.model)
        let json = try KerasTestPaths.sharedFile(try XCTUnwrap(c.config))
        let hook = LayerHook(.lambdaFunction("normalize")) { ctx in
            [Node(name: ctx.nodeName, op: .activation(.linear(alpha: 1 / 127.5, beta: -1)), inputs: [ctx.inputs[0]], outputs: ctx.outputNames)]
        }
        let graph = try KerasConverter(options: .init(hooks: [hook])).convert(modelAt: model, architectureJSON: json)
        let d = CorpusKerasParityTests.cases.appendingPathComponent(stem)
        let out = try Model(graph: graph).prediction(from: [graph.inputs[0].name: try NPY.read(contentsOf: d.appendingPathComponent("input_0.npy"))])
        let expected = try NPY.read(contentsOf: d.appendingPathComponent("output_0.npy"))
        let got = try XCTUnwrap(out[graph.outputs[0]])
        let err = zip(got.scalars, expected.scalars).map { abs($0 - $1) }.max() ?? .infinity
        print("keras1 parity ncondo (Lambda hooked): max|err| = \(err)")
        XCTAssertLessThanOrEqual(err, 1e-4 * max(1, expected.scalars.map(abs).max() ?? 0))
    }
}
