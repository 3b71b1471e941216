// Decodes the real FastStyleTransfer model from ../shared (skipped, visibly, when absent).
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

final class StyleTransferModelTests: XCTestCase {
    private func loadBytes() throws -> (URL, [UInt8]) {
        let url = try TestPaths.sharedFile("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        return (url, [UInt8](try Data(contentsOf: url)))
    }

    func testDecodesStructure() throws {
        let (url, bytes) = try loadBytes()
        let model = try Spec.Model.decode(bytes, fileName: url.path)
        XCTAssertEqual(model.specificationVersion, 2)
        XCTAssertEqual(model.kind, .neuralNetwork)
        XCTAssertEqual(model.unknownFieldWarnings, [], "the style model uses only fields in our schema")

        let desc = try XCTUnwrap(model.description)
        XCTAssertEqual(desc.input.map(\.name), ["image"])
        XCTAssertEqual(desc.output.map(\.name), ["output"])
        guard case let .image(image)? = desc.input.first?.type?.kind else {
            return XCTFail("input is not an image: \(String(describing: desc.input.first?.type))")
        }
        XCTAssertEqual(image.colorSpace, .rgb)
        XCTAssertEqual(image.width, 320)
        XCTAssertEqual(image.height, 320)
        guard case .image? = desc.output.first?.type?.kind else { return XCTFail("output is not an image") }

        let network = try XCTUnwrap(model.neuralNetwork)
        var histogram: [String: Int] = [:]
        for layer in network.layers { histogram[layer.layer.typeName, default: 0] += 1 }
        XCTAssertEqual(histogram, ["convolution": 16, "batchnorm": 15, "activation": 11, "custom": 6,
                                   "add": 5, "upsample": 2, "padding": 1])
        XCTAssertEqual(network.layers.count, 56)

        let customClasses = network.layers.compactMap { layer -> String? in
            if case let .custom(p) = layer.layer { return p.className }
            return nil
        }
        XCTAssertEqual(customClasses.filter { $0 == "ResCropBlockLambda" }.count, 5)
        XCTAssertEqual(customClasses.filter { $0 == "RescaleOutputLambda" }.count, 1)

        // Per Core ML, ConvolutionLayerParams.weights is [outputChannels, kernelChannels, kH, kW].
        let conv1 = try XCTUnwrap(network.layers.first { $0.name == "conv2d_1" })
        guard case let .convolution(conv) = conv1.layer else { return XCTFail("conv2d_1 is \(conv1.layer.typeName)") }
        let weights = try XCTUnwrap(conv.weights?.floats)
        XCTAssertEqual(weights.count, 15_552)
        XCTAssertEqual(UInt64(weights.count),
                       conv.outputChannels * conv.kernelChannels * conv.kernelSize.reduce(1, *))
        XCTAssertEqual(conv.weights?.storage, .float32)

        guard case let .padding(pad)? = network.layers.first(where: { $0.layer.typeName == "padding" })?.layer else {
            return XCTFail("no padding layer")
        }
        if case let .constant(value)? = pad.paddingType { XCTAssertEqual(value.value, 0) } else {
            XCTFail("expected zero (constant) padding, got \(String(describing: pad.paddingType))")
        }
        XCTAssertFalse(network.preprocessing.isEmpty, "the model scales its input image")
    }

    func testReencodesByteIdentical() throws {
        let (url, bytes) = try loadBytes()
        let model = try Spec.Model.decode(bytes, fileName: url.path)
        let encoded = try model.encode()
        let again = try Spec.Model.decode(encoded, fileName: "re-encoded")
        XCTAssertEqual(again, model)
        XCTAssertEqual(encoded.count, bytes.count)
        XCTAssertTrue(encoded == bytes, "re-encoding should reproduce the original bytes")
    }

    func testLoadFromPath() throws {
        let (url, _) = try loadBytes()
        let model = try Spec.Model.load(contentsOf: url.path)
        XCTAssertEqual(model.neuralNetwork?.layers.count, 56)
    }
}

