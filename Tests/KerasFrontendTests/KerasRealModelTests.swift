import XCTest
@testable import KerasFrontend
import MLGraph

/// Real third-party Keras files in `<repo>/../shared` (skipped with a visible message when absent).
final class KerasRealModelTests: XCTestCase {
    func corpus(_ name: String) throws -> URL { try KerasTestPaths.sharedFile("corpus/keras/\(name)") }
    func model(_ name: String) throws -> URL { try KerasTestPaths.sharedFile("models/\(name)") }

    func unsupported(_ body: () throws -> Graph) -> [KerasUnsupportedLayer]? {
        do { _ = try body(); XCTFail("conversion unexpectedly succeeded"); return nil } catch let KerasConversionError.unsupportedLayers(_, layers) {
            return layers
        } catch { XCTFail("unexpected error: \(error)"); return nil }
    }

    /// No automatic Lambda lowering (`--no-auto-lambda`), as before it existed.
    let manual = KerasConverter(options: .init(autoLowerLambdas: false))

    /// tf.keras 2.21 full model with 6 Lambdas, not lowered automatically: all listed, with their
    /// function names and shapes.
    func testStyleTransferH5ListsAllSixLambdas() throws {
        let url = try model("style_transfer_vangogh.h5")
        var message = ""
        do { _ = try manual.convert(modelAt: url) } catch { message = "\(error)" }
        guard let layers = unsupported({ try manual.convert(modelAt: url) }) else { return }
        XCTAssertEqual(layers.map(\.name), ["res_crop_0", "res_crop_1", "res_crop_2", "res_crop_3", "res_crop_4", "rescale_output"])
        XCTAssertTrue(layers.allSatisfy { $0.className == "Lambda" })
        XCTAssertTrue(layers.dropLast().allSatisfy { $0.detail.contains("res_crop") })
        XCTAssertTrue(layers.last!.detail.contains("rescale_output"))
        XCTAssertEqual(layers[0].inputShapes, [[1, 100, 100, 64]])
        for s in ["style_transfer_vangogh.h5", "6 layers", "res_crop_4", "--custom-layer", "--lower", "LayerHook"] {
            XCTAssertTrue(message.contains(s), "message lacks '\(s)':\n\(message)")
        }
    }

    /// Weights-only Keras 2.0.6 file + tf.keras JSON: names differ, so weights are matched by
    /// order; with hooks for the Lambdas the model converts completely.
    func testStyleTransferWeightsOnlyWithJSONAndHooks() throws {
        let weights = try model("van-gogh-starry-night_style.h5"), json = try model("style_transfer_vangogh.json")
        XCTAssertThrowsError(try KerasConverter().convert(modelAt: weights)) { e in
            guard case KerasConversionError.weightsOnlyWithoutArchitecture = e else { return XCTFail("\(e)") }
        }
        guard let layers = unsupported({ try manual.convert(modelAt: weights, architectureJSON: json) }) else { return }
        XCTAssertEqual(layers.count, 6)
        XCTAssertEqual(layers[0].outputShapes, [[nil, 96, 96, 64]], "from the consumer's build_config in the JSON")
        let g = try KerasConverter(options: .init(hooks: StyleTransferHooks.all)).convert(modelAt: weights, architectureJSON: json)
        XCTAssertEqual(g.inputs.map(\.name), ["image"])
        XCTAssertEqual(g.inputs[0].type.shape, [1, 320, 320, 3])
        XCTAssertEqual(g.outputs, ["rescale_output"])
        XCTAssertEqual(g.tensorTypes["rescale_output"]?.shape, [1, 320, 320, 3])
        XCTAssertEqual(g.opCounts["crop"], 5)
        XCTAssertEqual(g.description.metadata.userDefined["keras.version"], "2.0.6")
        XCTAssertEqual(g.description.metadata.userDefined["keras.architectureFile"], "style_transfer_vangogh.json")
        // The same weights as the full model (order matching picked the right groups).
        let full = try KerasConverter(options: .init(hooks: StyleTransferHooks.all)).convert(modelAt: try model("style_transfer_vangogh.h5"))
        for n in full.nodes where !n.weights.isEmpty {
            let m = try XCTUnwrap(g.nodes.first { $0.name == n.name })
            for (k, w) in n.weights { XCTAssertEqual(m.weights[k]?.floats(), w.floats(), "\(n.name).\(k)") }
        }
    }

    func testCustomReflectionPaddingClassIsListed() throws {
        let url = try model("style_transfer_vangogh_reflect.h5")  // resolved outside the closure: its XCTSkip must escape
        guard let layers = unsupported({ try manual.convert(modelAt: url) }) else { return }
        XCTAssertEqual(layers.first?.className, "ReflectionPadding2D")
        XCTAssertEqual(layers.count, 7)
        // With the Lambdas lowered automatically only the custom class is left.
        XCTAssertEqual(unsupported({ try KerasConverter().convert(modelAt: url) })?.map(\.className), ["ReflectionPadding2D"])
    }

    func testCaffeHDF5IsNotAKerasFile() throws {
        let url = try corpus("hollance_cifar10_caffemodel.h5")
        XCTAssertThrowsError(try KerasConverter().convert(modelAt: url)) { e in
            guard case KerasConversionError.notKerasFile = e else { return XCTFail("\(e)") }
            let s = "\(e)"
            XCTAssertTrue(s.contains("hollance_cifar10_caffemodel.h5") && s.contains("model_config") && s.contains("What to do"), s)
        }
        XCTAssertThrowsError(try KerasInspector.inspect(url))
    }

    /// The raw TensorFlow `Transpose` op is converted (numbers: LambdaCorpusParityTests).
    func testTensorFlowOpLayerConverts() throws {
        let url = try corpus("dl4j_tfkeras_tensorflowoplayer_transpose.h5")
        let g = try KerasConverter().convert(modelAt: url)
        XCTAssertEqual(g.nodes.compactMap { if case let .transpose(p) = $0.op { return p }; return nil }, [[0, 2, 1]])
    }

    func testKeras1LambdaFunctionNameIsRecovered() throws {
        let url = try corpus("ncondo_carnd_behavioral_cloning.h5"), json = try corpus("ncondo_carnd_behavioral_cloning.json")
        guard let layers = unsupported({ try manual.convert(modelAt: url, architectureJSON: json) }) else { return }
        let lambda = try XCTUnwrap(layers.first { $0.className == "Lambda" })
        XCTAssertTrue(lambda.detail.contains("normalize"), lambda.detail)
        // The Keras 1 classes (Convolution2D, Dense with output_dim, …) convert: only the Lambda is left.
        XCTAssertEqual(layers.map(\.className), ["Lambda"])
    }

    /// Keras 2.1.6 MNIST CNN (bare-list Sequential).
    func testR4ghuMNISTKeras216Converts() throws {
        let g = try KerasConverter().convert(modelAt: try corpus("r4ghu_mnistCNN.h5"))
        XCTAssertEqual(g.inputs.map(\.name), ["conv2d_1_input"])
        XCTAssertEqual(g.inputs[0].type.shape, [1, 28, 28, 1])
        XCTAssertEqual(g.outputs, ["dense_2"])
        XCTAssertEqual(g.tensorTypes["dense_2"]?.shape, [1, 10])
        XCTAssertEqual(g.opCounts["conv2d"], 3)
        XCTAssertEqual(g.parameterCount, 94602)
        XCTAssertEqual(g.description.metadata.userDefined["keras.version"], "2.1.6")
        XCTAssertEqual(g.description.metadata.userDefined["keras.backend"], "tensorflow")
        XCTAssertEqual(g.description.metadata.userDefined["keras.sourceFile"], "r4ghu_mnistCNN.h5")
    }

    /// Keras 3.14 legacy-h5 MLP.
    func testShreyanshKeras314MLPConverts() throws {
        let g = try KerasConverter().convert(modelAt: try corpus("shreyansh_keras3_mnist_sequential.h5"))
        XCTAssertEqual(g.inputs.map(\.name), ["input_layer"])
        XCTAssertEqual(g.inputs[0].type.shape, [1, 28, 28])
        XCTAssertEqual(g.outputs, ["dense_3"])
        XCTAssertEqual(g.opCounts["dense"], 4)
    }

    /// Teachable Machine: Sequential ⊃ Sequential ⊃ Functional MobileNetV2 (ReLU(6),
    /// DepthwiseConv2D, ZeroPadding2D), weights in the nested models' groups.
    func testTeachableMachineNestedMobileNetV2Converts() throws {
        let g = try KerasConverter().convert(modelAt: try corpus("teachablemachine_0N1cky1_keras_model.h5"))
        XCTAssertEqual(g.inputs.map(\.name), ["sequential_9_input"])
        XCTAssertEqual(g.inputs[0].type.shape, [1, 224, 224, 3])
        XCTAssertEqual(g.outputs, ["sequential_11"])
        XCTAssertEqual(g.tensorTypes["sequential_11"]?.shape, [1, 3])
        XCTAssertEqual(g.opCounts["pad"], 5)
        XCTAssertEqual(g.opCounts["batchNorm"], 52)
        XCTAssertEqual(g.nodes.filter { if case let .conv2d(a) = $0.op { return a.groups > 1 } else { return false } }.count, 17)
        XCTAssertTrue(g.nodes.contains { $0.op == .activation(.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)) })
        let conv1 = try XCTUnwrap(g.nodes.first { $0.name == "Conv1" })
        XCTAssertEqual(conv1.weights["weight"]?.shape, [16, 3, 3, 3])
    }

    func testInspectorSummaries() throws {
        let s = try KerasInspector.inspect(try corpus("teachablemachine_0N1cky1_keras_model.h5"))
        XCTAssertEqual(s.kerasVersion, "2.4.0")
        XCTAssertEqual(s.backend, "tensorflow")
        XCTAssertEqual(s.modelClass, "Sequential")
        XCTAssertFalse(s.isWeightsOnly)
        XCTAssertEqual(s.classCounts["DepthwiseConv2D"], 17)
        XCTAssertEqual(s.classCounts["Sequential"], 2)
        XCTAssertEqual(s.classCounts["Functional"], 1)
        XCTAssertEqual(s.inputs.first?.name, "sequential_9_input")
        XCTAssertEqual(s.inputs.first?.shape, [nil, 224, 224, 3])
        XCTAssertEqual(s.outputs.first?.shape, [nil, 3])
        XCTAssertTrue(s.unsupportedLayers.isEmpty)
        XCTAssertGreaterThan(s.parameterCount, 500_000)
        XCTAssertNotNil(s.jsonObject["layerCounts"] as? [String: Int])

        let w = try KerasInspector.inspect(try model("van-gogh-starry-night_style.h5"))
        XCTAssertTrue(w.isWeightsOnly); XCTAssertFalse(w.hasArchitecture)
        XCTAssertEqual(w.kerasVersion, "2.0.6")
        XCTAssertEqual(w.layers.count, 56)
        XCTAssertGreaterThan(w.parameterCount, 0)

        let l = try KerasInspector.inspect(try model("style_transfer_vangogh.h5"), options: .init(autoLowerLambdas: false))
        XCTAssertEqual(l.unsupportedLayers.count, 6)
        XCTAssertTrue(l.description.contains("Lambda"), l.description)
        // By default the Lambdas are lowered and inspect shows each recovered expression.
        let a = try KerasInspector.inspect(try model("style_transfer_vangogh.h5"))
        XCTAssertTrue(a.unsupportedLayers.isEmpty)
        XCTAssertNil(a.conversionError)
        XCTAssertEqual(a.lambdas.map(\.expression), Array(repeating: "def res_crop(x): return x[:, 2:-2, 2:-2]", count: 5)
                       + ["def rescale_output(x): return (x + 1) * 127.5"])
        XCTAssertTrue(a.description.contains("res_crop_0: def res_crop(x): return x[:, 2:-2, 2:-2]  [lowered to IR]"), a.description)
    }
}

/// Hooks lowering the style-transfer model's custom parts to built-in ops (what a later
/// `--lower` option would generate): Lambda `res_crop` (x[:, 2:-2, 2:-2]) → crop, Lambda
/// `rescale_output` ((x + 1)·127.5) → linear, custom `ReflectionPadding2D(padding)` → reflect pad.
enum StyleTransferHooks {
    static let all: [LayerHook] = [
        LayerHook(.lambdaFunction("res_crop")) { ctx in
            [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0], [2, 2], [2, 2], [0, 0]]), inputs: ctx.inputs, outputs: ctx.outputNames)]
        },
        LayerHook(.lambdaFunction("rescale_output")) { ctx in
            [Node(name: ctx.nodeName, op: .activation(.linear(alpha: 127.5, beta: 127.5)), inputs: ctx.inputs, outputs: ctx.outputNames)]
        },
        LayerHook(.className("ReflectionPadding2D")) { ctx in
            let p = try ctx.ints("padding", count: 2, default: [1, 1])
            return [Node(name: ctx.nodeName, op: .pad(PadAttributes(mode: .reflect, pads: [[0, 0], [p[0], p[0]], [p[1], p[1]], [0, 0]])),
                         inputs: ctx.inputs, outputs: ctx.outputNames)]
        },
    ]
}

/// The issue-3 fixtures (Lambdas, custom classes) with hooks: numeric parity with Keras.
final class KerasHookParityTests: XCTestCase {
    func check(_ name: String) throws {
        let dir = KerasTestPaths.fixtures
        guard let fx = try KerasFixture.load(dir).first(where: { $0.name == name }) else { throw XCTSkip("fixture \(name) not in the manifest") }
        let g = try KerasConverter(options: .init(hooks: StyleTransferHooks.all))
            .convert(modelAt: dir.appendingPathComponent(fx.model), architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
        try assertParity(g, fx, dir: dir)
    }

    func test_style_transfer_lambda_k2_withHooks() throws { try check("style_transfer_lambda_k2") }
    func test_style_transfer_lambda_k3_withHooks() throws { try check("style_transfer_lambda_k3") }
    func test_style_transfer_lambda_weights_k2_withHooks() throws { try check("style_transfer_lambda_weights_k2") }
    func test_style_transfer_reflect_k2_withHooks() throws { try check("style_transfer_reflect_k2") }
    func test_style_transfer_reflect_k3_withHooks() throws { try check("style_transfer_reflect_k3") }
}
