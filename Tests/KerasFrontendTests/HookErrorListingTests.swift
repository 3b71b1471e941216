import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph

/// Without hooks (and without the automatic Lambda lowering, `--no-auto-lambda`), `unsupportedLayers` lists every Lambda / custom-class layer with its class,
/// recovered function, shapes (inferred through merge layers when the file records none) and the
/// exact flags and hooks-file entries that would convert it; the complete suggestions do.
final class HookErrorListingTests: XCTestCase {
    let dir = KerasTestPaths.fixtures

    func fixture(_ name: String) throws -> KerasFixture {
        guard let fx = try KerasFixture.load(dir).first(where: { $0.name == name }) else { throw XCTSkip("fixture \(name) not in the manifest") }
        return fx
    }

    /// The error of converting a fixture without hooks (automatic Lambda lowering off).
    func failure(_ name: String) throws -> (layers: [KerasUnsupportedLayer], message: String) {
        let fx = try fixture(name)
        do {
            _ = try KerasConverter(options: .init(autoLowerLambdas: false)).convert(modelAt: dir.appendingPathComponent(fx.model), architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
        } catch let e as KerasConversionError {
            guard case let .unsupportedLayers(_, layers) = e else { XCTFail("\(e)"); return ([], "") }
            return (layers, e.description)
        }
        XCTFail("\(name) converted without hooks"); return ([], "")
    }

    func assertStyleTransferLambdas(_ name: String, function detail: String, inputs: [Int] = [36, 32, 28, 24, 20]) throws {
        let (layers, message) = try failure(name)
        XCTAssertEqual(layers.map(\.name), (0..<5).map { "res_crop_\($0)" } + ["rescale_output"])
        XCTAssertTrue(layers.allSatisfy { $0.className == "Lambda" })
        for (l, h) in zip(layers, inputs) {
            XCTAssertTrue(l.detail.contains(detail + "res_crop"), l.detail)
            XCTAssertEqual(l.inputShapes, [[1, h, h, 16]], l.name)
            XCTAssertEqual(l.outputShapes.first?.dropFirst().map { $0 }, [h - 4, h - 4, 16], l.name)
            XCTAssertEqual(l.suggestions.map(\.flag), ["--lower res_crop=crop:2,2,2,2", "--custom-layer res_crop=ResCropBlockLambda"])
            XCTAssertEqual(l.suggestions.map(\.isTemplate), [false, false])
        }
        let last = layers[5]
        XCTAssertTrue(last.detail.contains(detail + "rescale_output"), last.detail)
        XCTAssertEqual(last.inputShapes, [[1, 64, 64, 3]])
        XCTAssertEqual(last.suggestions.map(\.flag), ["--lower rescale_output=affine:SCALE,OFFSET", "--custom-layer rescale_output=RescaleOutputLambda"])
        XCTAssertEqual(last.suggestions.map(\.isTemplate), [true, false])
        for s in ["6 layers are not supported",
                  "input (1, 36, 36, 16) → output (", ", 32, 32, 16)\n",  // batch 1 when inferred, None when recorded
                  "fix: --lower res_crop=crop:2,2,2,2   or   --custom-layer res_crop=ResCropBlockLambda",
                  "fix: --lower rescale_output=affine:SCALE,OFFSET   or   --custom-layer rescale_output=RescaleOutputLambda",
                  "all at once: --lower res_crop=crop:2,2,2,2 --custom-layer rescale_output=RescaleOutputLambda",
                  #"{"hooks": [{"match": "res_crop", "lower": "crop:2,2,2,2"}, {"match": "rescale_output", "customLayer": {"className": "RescaleOutputLambda"}}]}"#,
                  "docs/HOOKS.md", "LayerHook"] {
            XCTAssertTrue(message.contains(s), "message lacks '\(s)':\n\(message)")
        }
    }

    func testKeras2MarshalledLambdas() throws {
        // The file records no shapes: the outputs are inferred through the Add layers.
        try assertStyleTransferLambdas("style_transfer_lambda_k2", function: "Python function ")
    }

    func testKeras3FunctionReferences() throws {
        try assertStyleTransferLambdas("style_transfer_lambda_k3", function: "Python function ")
    }

    func testWeightsOnlyWithJSON() throws {
        try assertStyleTransferLambdas("style_transfer_lambda_weights_k2", function: "Python function ")
    }

    func testCustomClassKeras2AndKeras3() throws {
        for name in ["style_transfer_reflect_k2", "style_transfer_reflect_k3"] {
            let (layers, message) = try failure(name)
            XCTAssertEqual(layers.map(\.name), ["reflection_padding2d_1"], name)
            let l = try XCTUnwrap(layers.first)
            XCTAssertEqual(l.className, name.hasSuffix("k3") ? "mlconv>ReflectionPadding2D" : "ReflectionPadding2D")
            XCTAssertEqual(l.inputShapes, [[1, 64, 64, 3]])
            XCTAssertEqual(l.outputShapes.first?.dropFirst().map { $0 }, [144, 144, 3], "from the padding config")
            XCTAssertEqual(l.suggestions.map(\.flag), ["--lower ReflectionPadding2D=pad:reflect",
                                                       "--custom-layer ReflectionPadding2D=ReflectionPadding2D"])
            XCTAssertEqual(l.suggestions.last?.json,
                           #"{"match": "ReflectionPadding2D", "customLayer": {"className": "ReflectionPadding2D", "outputShape": "pad:40,40,40,40"}}"#)
            XCTAssertTrue(message.contains("all at once: --lower ReflectionPadding2D=pad:reflect"), message)
        }
    }

    /// The complete suggestions, parsed back as flags, convert the model (and match Keras).
    func testCompleteSuggestionsConvert() throws {
        for name in ["style_transfer_lambda_k2", "style_transfer_lambda_k3", "style_transfer_reflect_k3"] {
            let (layers, _) = try failure(name)
            var specs: [KerasHookSpec] = []
            var seen = Set<String>()
            for l in layers {
                guard let s = l.suggestions.first(where: { !$0.isTemplate }), seen.insert(s.flag).inserted else { continue }
                let value = String(s.flag.drop { $0 != " " }.dropFirst())
                specs.append(s.flag.hasPrefix("--lower") ? try KerasHookSpec(lowerFlag: value) : try KerasHookSpec(customLayerFlag: value))
            }
            let fx = try fixture(name)
            let g = try KerasConverter(options: .init(hooks: specs.layerHooks(runtimeShapes: registryShapes)))
                .convert(modelAt: dir.appendingPathComponent(fx.model))
            try assertParity(g, fx, dir: dir)
        }
    }

    /// A custom class growing its input without a `padding` config: constant padding from the
    /// recorded shapes; an anonymous lambda is matched by its layer name.
    func testShapesFromBuildConfigAndAnonymousLambda() throws {
        let t = TinyKeras(config: """
            {"class_name": "Functional", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 6, 6, 2]}, "inbound_nodes": []},
              {"class_name": "Grow", "name": "grow", "module": "my.layers", "config": {"name": "grow"}, "inbound_nodes": [[["x", 0, 0, {}]]]},
              {"class_name": "Activation", "name": "act", "config": {"name": "act", "activation": "relu"},
               "build_config": {"input_shape": [null, 9, 10, 2]}, "inbound_nodes": [[["grow", 0, 0, {}]]]},
              {"class_name": "Lambda", "name": "lam", "config": {"name": "lam", "function": ["4wEAAAAAAAAAAAAAAAIAAAADAAAA8xIAAACXAHwAZAF6AAAAZAJ6BQAAUwApA07pAQAAAOcAAAAAAOBfQKkAKQHaAXhzAQAAACD6CDxzdHJpbmc++gg8bGFtYmRhPnIHAAAAAwAAAHMOAAAAgACIUYhxiVOQJYlLgADzAAAAAA==", null, null], "function_type": "lambda"},
               "inbound_nodes": [[["act", 0, 0, {}]]]}],
              "input_layers": [["x", 0, 0]], "output_layers": [["lam", 0, 0]]}}
            """)
        do {
            _ = try KerasConverter(options: .init(autoLowerLambdas: false)).convert(file: t.file)
            XCTFail("converted")
        } catch let KerasConversionError.unsupportedLayers(_, layers) {
            XCTAssertEqual(layers.map(\.name), ["grow", "lam"])
            XCTAssertEqual(layers[0].suggestions.map(\.flag), ["--lower Grow=pad:constant:1,2,2,2", "--custom-layer Grow=Grow"])
            XCTAssertTrue(layers[0].detail.contains("my.layers"), layers[0].detail)
            XCTAssertEqual(layers[1].inputShapes, [[1, 9, 10, 2]], "downstream of a layer whose shape Keras recorded")
            XCTAssertEqual(layers[1].suggestions.map(\.flag).last, "--custom-layer lam=LamLambda")
        }
    }

    /// Shapes recorded by Keras do not apply when the input is resized; nothing is inferred from them.
    func testResizedInputsIgnoreRecordedShapes() throws {
        let fx = try fixture("style_transfer_lambda_k3")
        XCTAssertThrowsError(try KerasConverter(options: .init(hooks: [try KerasHookSpec(lowerFlag: "res_crop=crop"),
                                                                       try KerasHookSpec(lowerFlag: "rescale_output=identity")].layerHooks(),
                                                               inputShapes: ["image": [72, 72, 3]]))
            .convert(modelAt: dir.appendingPathComponent(fx.model))) { e in
            XCTAssertTrue("\(e)".contains("Keras recorded no output shape"), "\(e)")
        }
        // With explicit borders the resized model converts (it is fully convolutional).
        let g = try KerasConverter(options: .init(hooks: [try KerasHookSpec(lowerFlag: "res_crop=crop:2,2,2,2"),
                                                          try KerasHookSpec(lowerFlag: "rescale_output=affine:127.5,127.5")].layerHooks(),
                                                  inputShapes: ["image": [72, 72, 3]]))
            .convert(modelAt: dir.appendingPathComponent(fx.model))
        XCTAssertEqual(g.tensorTypes[g.outputs[0]]?.shape, [1, 72, 72, 3])
    }
}
