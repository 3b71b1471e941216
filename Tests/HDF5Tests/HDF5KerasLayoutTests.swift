import Foundation
import HDF5
import XCTest

/// The two Keras layouts the frontend reads, on the small committed fixtures, and on the real
/// models in ../shared/models when present (skipped otherwise).
final class HDF5KerasLayoutTests: XCTestCase {
    // MARK: Fixtures

    func testKeras2WeightsOnlyLayout() throws {
        let file = try HDF5File(path: HDF5TestPaths.fixture("keras2_weights.h5"))
        XCTAssertEqual(try file.stringAttribute("keras_version"), "2.0.6")
        XCTAssertEqual(try file.stringAttribute("backend"), "tensorflow")
        let layers = try XCTUnwrap(try file.stringArrayAttribute("layer_names"))
        XCTAssertEqual(layers, ["input_1", "conv2d_1", "dense_1"])
        XCTAssertEqual(try file.group(at: "input_1").stringArrayAttribute("weight_names"), [])
        let conv = try file.group(at: "conv2d_1")
        let weightNames = try XCTUnwrap(try conv.stringArrayAttribute("weight_names"))
        XCTAssertEqual(weightNames, ["conv2d_1/kernel:0", "conv2d_1/bias:0"])
        let kernel = try conv.dataset(at: weightNames[0])
        XCTAssertEqual(kernel.shape, [3, 3, 1, 2])
        XCTAssertEqual(try kernel.readFloats(), (0..<18).map { Float($0) / 10 })
        XCTAssertEqual(try conv.dataset(at: weightNames[1]).readFloats(), [0.25, -0.5])
        XCTAssertEqual(try file.root.childNames(), ["conv2d_1", "dense_1", "input_1"])
    }

    func testFullModelLayout() throws {
        let file = try HDF5File(path: HDF5TestPaths.fixture("keras_model.h5"))
        XCTAssertEqual(try file.stringAttribute("keras_version"), "2.21.0")
        let config = try XCTUnwrap(try file.stringAttribute("model_config"))
        let json = try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any]
        XCTAssertEqual(json?["class_name"] as? String, "Sequential")
        let weights = try file.group(at: "model_weights")
        XCTAssertEqual(try weights.stringArrayAttribute("layer_names"), ["in", "dense"])
        XCTAssertEqual(try weights.stringAttribute("backend"), "tensorflow")
        let dense = try weights.group(at: "dense")
        let names = try XCTUnwrap(try dense.stringArrayAttribute("weight_names"))
        XCTAssertEqual(names, ["dense/kernel:0", "dense/bias:0"])
        XCTAssertEqual(try dense.dataset(at: names[0]).readFloats(expectingShape: [2, 3]),
                       [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(try weights.group(at: "in").stringArrayAttribute("weight_names"), [])
    }

    // MARK: Real models (../shared/models)

    func testRealWeightsOnlyKeras206File() throws {
        let path = try HDF5TestPaths.sharedModel("van-gogh-starry-night_style.h5")
        let file = try HDF5File(path: path)
        XCTAssertEqual(try file.stringAttribute("keras_version"), "2.0.6")
        XCTAssertEqual(try file.stringAttribute("backend"), "tensorflow")
        XCTAssertNil(try file.stringAttribute("model_config"))
        let layers = try XCTUnwrap(try file.stringArrayAttribute("layer_names"))
        XCTAssertEqual(layers.count, 56)
        XCTAssertEqual(Array(layers.prefix(3)), ["input_1", "reflection_padding2d_1", "conv2d_1"])
        XCTAssertEqual(try file.attributeDescription("layer_names")?.elementType,
                       .fixedLengthString(byteCount: 22))
        for layer in layers {
            XCTAssertNotNil(try file.group(at: layer).stringArrayAttribute("weight_names"), layer)
        }
        XCTAssertEqual(try file.group(at: "lambda_1").stringArrayAttribute("weight_names"), [])
        let conv = try file.group(at: "conv2d_1")
        XCTAssertEqual(try conv.stringArrayAttribute("weight_names"),
                       ["conv2d_1/kernel:0", "conv2d_1/bias:0"])
        let kernel = try file.dataset(at: "conv2d_1/conv2d_1/kernel:0")
        XCTAssertEqual(kernel.shape, [9, 9, 3, 64])
        XCTAssertEqual(kernel.elementType, .float32)
        let values = try kernel.readFloats()
        XCTAssertEqual(values.count, 9 * 9 * 3 * 64)
        XCTAssertEqual(values[0], -0.0017626099288463593)
        XCTAssertEqual(values[1], -0.03422415629029274)
        XCTAssertEqual(values.last, -0.029114509)
        XCTAssertEqual(values.reduce(0.0) { $0 + Double($1) }, -17.113867406935412, accuracy: 1e-6)
        let variance = try file.dataset(at: "batch_normalization_1/batch_normalization_1/moving_variance:0")
        XCTAssertEqual(Array(try variance.readFloats().prefix(3)), [3534.60400390625, 141755.75, 8167.2451171875])
    }

    func testRealFullModelFile() throws {
        let path = try HDF5TestPaths.sharedModel("style_transfer_vangogh.h5")
        let file = try HDF5File(path: path)
        XCTAssertEqual(try file.root.childNames(), ["model_weights"])
        XCTAssertEqual(try file.stringAttribute("keras_version"), "2.21.0")
        let config = try XCTUnwrap(try file.stringAttribute("model_config"))
        XCTAssertGreaterThan(config.utf8.count, 30_000)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any])
        XCTAssertEqual(json["class_name"] as? String, "Functional")
        let layersJSON = (json["config"] as? [String: Any])?["layers"] as? [Any]
        XCTAssertEqual(layersJSON?.count, 56)

        let weights = try file.group(at: "model_weights")
        let layers = try XCTUnwrap(try weights.stringArrayAttribute("layer_names"))
        XCTAssertEqual(Array(layers.prefix(3)), ["image", "zero_padding2d", "conv2d"])
        XCTAssertEqual(layers.count, 56)
        let names = try XCTUnwrap(try weights.group(at: "conv2d").stringArrayAttribute("weight_names"))
        XCTAssertEqual(names, ["conv2d/kernel:0", "conv2d/bias:0"])
        let kernel = try weights.group(at: "conv2d").dataset(at: names[0])
        XCTAssertEqual(kernel.shape, [9, 9, 3, 64])

        // Same weights as the weights-only file.
        let weightsOnly = try HDF5File(path: try HDF5TestPaths.sharedModel("van-gogh-starry-night_style.h5"))
        XCTAssertEqual(try kernel.readFloats(),
                       try weightsOnly.dataset(at: "conv2d_1/conv2d_1/kernel:0").readFloats())
    }

    func testTruncatedCopyOfRealModelThrows() throws {
        let path = try HDF5TestPaths.sharedModel("style_transfer_vangogh.h5")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let url = try HDF5TestPaths.temporaryDirectory(for: self).appendingPathComponent("cut.h5")
        try bytes.prefix(1_000_000).write(to: url)
        let error = assertHDF5Error(.corruptFile) { try HDF5File(path: url.path) }
        XCTAssertTrue(error?.summary.contains("truncated") ?? false, String(describing: error))
        XCTAssertTrue(error?.description.contains(url.path) ?? false)
    }

    func testRealCoreMLModelIsNotHDF5() throws {
        let path = try HDF5TestPaths.sharedModel("FastStyleTransferVanGoghStarryNight.mlmodel")
        let error = assertHDF5Error(.notHDF5) { try HDF5File(path: path) }
        XCTAssertTrue(error?.description.contains("is this an HDF5 file?") ?? false)
        let json = try HDF5TestPaths.sharedModel("style_transfer_vangogh.json")
        let jsonError = assertHDF5Error(.notHDF5) { try HDF5File(path: json) }
        XCTAssertTrue(jsonError?.summary.contains("JSON") ?? false)
    }
}
