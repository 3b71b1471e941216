import XCTest
@testable import KerasFrontend
import MLGraph

/// Model-config parsing for both Keras schemas (2.x / tf.keras and Keras 3), on small inline JSON.
final class KerasConfigParsingTests: XCTestCase {
    func testJSONParserAcceptsPythonSpecialFloatsAndEscapes() throws {
        let j = try KerasJSON.parse(#"{"a": NaN, "b": -Infinity, "c": [1, 2.5e3, "x\u00e9\n", true, null], "d": Infinity}"#)
        XCTAssertTrue(j["a"]!.double!.isNaN)
        XCTAssertEqual(j["b"]?.double, -.infinity)
        XCTAssertEqual(j["d"]?.double, .infinity)
        XCTAssertEqual(j["c"]?[1]?.int, 2500)
        XCTAssertEqual(j["c"]?[2]?.string, "xé\n")
        XCTAssertEqual(j["c"]?[3]?.bool, true)
        XCTAssertTrue(j["c"]![4]!.isNull)
        XCTAssertThrowsError(try KerasJSON.parse(#"{"a": 1,}"#)) { e in
            XCTAssertTrue("\(e)".contains("byte"), "\(e)")
        }
    }

    func testKeras22SequentialBareListGetsSynthesizedInput() throws {
        let m = try KerasModelConfig.parse(text: """
            {"class_name": "Sequential", "keras_version": "2.1.6", "config": [
              {"class_name": "Conv2D", "config": {"name": "conv2d_1", "filters": 2, "kernel_size": [3, 3],
                "batch_input_shape": [null, 28, 28, 1], "padding": "valid"}},
              {"class_name": "Flatten", "config": {"name": "flatten_1"}},
              {"class_name": "Dense", "config": {"name": "dense_1", "units": 10}}]}
            """, file: "t.json")
        XCTAssertEqual(m.className, "Sequential")
        XCTAssertEqual(m.layers.map(\.name), ["conv2d_1_input", "conv2d_1", "flatten_1", "dense_1"])
        XCTAssertEqual(m.layers[0].className, "InputLayer")
        XCTAssertEqual(m.layers[0].batchInputShape, [nil, 28, 28, 1])
        XCTAssertEqual(m.inputs, [KerasTensorRef(layer: "conv2d_1_input")])
        XCTAssertEqual(m.outputs, [KerasTensorRef(layer: "dense_1")])
        XCTAssertEqual(m.layers[2].inboundNodes, [KerasInboundNode(inputs: [KerasTensorRef(layer: "conv2d_1")])])
    }

    func testKeras3SequentialWithInputLayerAndDTypePolicies() throws {
        let m = try KerasModelConfig.parse(text: """
            {"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": true,
              "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null},
              "layers": [
                {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28], "dtype": "float32", "name": "input_layer"}, "registered_name": null},
                {"module": "keras.layers", "class_name": "Flatten", "config": {"name": "flatten", "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}}, "registered_name": null, "build_config": {"input_shape": [null, 28, 28]}},
                {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "units": 4, "activation": "relu"}, "registered_name": null}],
              "build_input_shape": [null, 28, 28]}}
            """, file: "t.json")
        XCTAssertEqual(m.layers.map(\.name), ["input_layer", "flatten", "dense"])
        XCTAssertEqual(m.layers[0].batchInputShape, [nil, 28, 28])
        XCTAssertEqual(m.layers[1].module, "keras.layers")
        XCTAssertEqual(m.layers[1].buildInputShapes, [[nil, 28, 28]])
        XCTAssertEqual(m.inputs.map(\.layer), ["input_layer"])
        XCTAssertEqual(m.outputs.map(\.layer), ["dense"])
    }

    func testKeras2FunctionalInboundNodesAndSharedLayerCalls() throws {
        let m = try KerasModelConfig.parse(text: """
            {"class_name": "Model", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
              {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
              {"class_name": "Dense", "name": "shared", "config": {"name": "shared", "units": 2},
               "inbound_nodes": [[["a", 0, 0, {}]], [["b", 0, 0, {"training": false}]]]},
              {"class_name": "Add", "name": "add", "config": {"name": "add"},
               "inbound_nodes": [[["shared", 0, 0, {}], ["shared", 1, 0, {}]]]}],
             "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["add", 0, 0]]}}
            """, file: "t.json")
        XCTAssertEqual(m.inputs.map(\.layer), ["a", "b"])
        let shared = m.layer(named: "shared")!
        XCTAssertEqual(shared.inboundNodes.count, 2)
        XCTAssertEqual(shared.inboundNodes[1].inputs, [KerasTensorRef(layer: "b")])
        XCTAssertEqual(m.layer(named: "add")!.inboundNodes[0].inputs,
                       [KerasTensorRef(layer: "shared", node: 0), KerasTensorRef(layer: "shared", node: 1)])
    }

    func testKeras3FunctionalArgsSingleTensorAndList() throws {
        func kt(_ l: String, _ n: Int = 0) -> String {
            #"{"class_name": "__keras_tensor__", "config": {"shape": [null, 8, 8, 3], "dtype": "float32", "keras_history": ["\#(l)", \#(n), 0]}}"#
        }
        let m = try KerasModelConfig.parse(text: """
            {"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "f", "trainable": true, "layers": [
              {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3], "name": "img"}, "registered_name": null, "name": "img", "inbound_nodes": []},
              {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv"}, "registered_name": null, "name": "conv",
               "inbound_nodes": [{"args": [\(kt("img"))], "kwargs": {}}]},
              {"module": "keras.layers", "class_name": "Add", "config": {"name": "add"}, "registered_name": null, "name": "add",
               "inbound_nodes": [{"args": [[\(kt("conv")), \(kt("img"))]], "kwargs": {}}]}],
             "input_layers": ["img", 0, 0], "output_layers": [["add", 0, 0]]}}
            """, file: "t.json")
        XCTAssertEqual(m.inputs, [KerasTensorRef(layer: "img")])
        XCTAssertEqual(m.layer(named: "conv")!.inboundNodes[0].inputs, [KerasTensorRef(layer: "img")])
        XCTAssertEqual(m.layer(named: "conv")!.inboundNodes[0].inputShapes, [[nil, 8, 8, 3]])
        XCTAssertEqual(m.layer(named: "add")!.inboundNodes[0].inputs.map(\.layer), ["conv", "img"])
    }

    /// tf.keras numbers the calls of a nested model built with an InputLayer from 1.
    func testTfKerasNestedModelNodeIndicesAreRenumbered() throws {
        let m = try KerasModelConfig.parse(text: """
            {"class_name": "Functional", "config": {"name": "outer", "layers": [
              {"class_name": "InputLayer", "name": "image", "config": {"name": "image", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
              {"class_name": "Sequential", "name": "block", "config": {"name": "block", "layers": [
                 {"class_name": "InputLayer", "config": {"name": "inner_in", "batch_input_shape": [null, 4]}},
                 {"class_name": "Dense", "config": {"name": "inner_dense", "units": 3}}]},
               "inbound_nodes": [[["image", 0, 0, {}]]]},
              {"class_name": "Dense", "name": "head", "config": {"name": "head", "units": 2}, "inbound_nodes": [[["block", 1, 0, {}]]]}],
             "input_layers": [["image", 0, 0]], "output_layers": [["head", 0, 0]]}}
            """, file: "t.json")
        XCTAssertEqual(m.layer(named: "head")!.inboundNodes[0].inputs, [KerasTensorRef(layer: "block", node: 0)])
        XCTAssertEqual(m.layer(named: "block")!.nestedModel?.layers.map(\.name), ["inner_in", "inner_dense"])
    }

    func testDoubleEncodedJSONSidecar() throws {
        let inner = #"{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d", "units": 1, "batch_input_shape": [null, 2]}}]}"#
        let outer = KerasJSON.string(inner).description
        let m = try KerasModelConfig.parse(text: outer, file: "double.json")
        XCTAssertEqual(m.layers.map(\.name), ["d_input", "d"])
    }

    func testNotAModelConfigIsAnArchitectureError() {
        XCTAssertThrowsError(try KerasModelConfig.parse(text: #"{"class_name": "Dense", "config": {}}"#, file: "x.json")) { e in
            let s = "\(e)"
            XCTAssertTrue(s.contains("x.json") && s.contains("Dense") && s.contains("What to do"), s)
        }
    }

    func testKerasVersionParsing() {
        XCTAssertEqual(KerasVersion("2.2.4-tf").minor, 2)
        XCTAssertTrue(KerasVersion("3.14.0").isKeras3)
        XCTAssertFalse(KerasVersion("2.21.0").isKeras3)
        XCTAssertTrue(KerasVersion(nil).isUnknown)
        XCTAssertLessThan(KerasVersion("2.2.5"), KerasVersion("2.3.0"))
    }

    func testLambdaInfoKeras3NamedFunction() throws {
        let layer = KerasLayerConfig(name: "crop", className: "Lambda", config: try KerasJSON.parse(
            #"{"name": "crop", "function": {"module": "builtins", "class_name": "function", "config": "res_crop", "registered_name": "function"}}"#))
        XCTAssertEqual(KerasLambdaInfo(layer: layer)?.functionName, "res_crop")
        XCTAssertFalse(KerasLambdaInfo(layer: layer)!.isBytecode)
    }

    func testLambdaInfoFromMarshalledBytecode() throws {
        // tf.keras 2.x: base64 of a CPython 3.11 code object for `def res_crop(x)` in make_real_style_transfer.py.
        let code = "4wEAAAAAAAAAAAAAAAUAAAADAAAA8yQAAACXAHwAZABkAIUCZAFkAoUCZAFkAoUCZgMZAAAAAAAA\\nAAAAUwApA07pAgAAAOn+////qQCpAdoBeHMBAAAAIPobbWFrZV9yZWFsX3N0eWxlX3RyYW5zZmVy\\nLnB52ghyZXNfY3JvcHIIAAAAHwAAAHMfAAAAgADYCwyIUYhRiFGQAZAikASQYZgCkGSIXdQLG9AE\\nG/MAAAAA\\n"
        let layer = KerasLayerConfig(name: "res_crop_0", className: "Lambda", config: try KerasJSON.parse(
            #"{"name": "res_crop_0", "function_type": "lambda", "function": ["\#(code)", null, null]}"#))
        let info = try XCTUnwrap(KerasLambdaInfo(layer: layer))
        XCTAssertEqual(info.functionName, "res_crop")
        XCTAssertEqual(info.sourceFile, "make_real_style_transfer.py")
        XCTAssertTrue(info.isBytecode)
        // Keras 1 stored the marshal bytes as Latin-1 text.
        let k1 = KerasLayerConfig(name: "lambda_1", className: "Lambda", config: .object([
            "function_type": .string("lambda"),
            "function": .array([.string("\u{e3}\u{1}\u{0}\u{0}\u{fa}\u{8}model.py\u{da}\u{9}normalizeM\u{0}"), .null, .null])]))
        XCTAssertEqual(KerasLambdaInfo(layer: k1)?.functionName, "normalize")
        XCTAssertEqual(KerasLambdaInfo(layer: k1)?.sourceFile, "model.py")
    }

    func testGlobPatterns() {
        XCTAssertTrue(globMatch("res_crop_*", "res_crop_3"))
        XCTAssertTrue(globMatch("conv?d_[0-9]", "conv2d_7"))
        XCTAssertFalse(globMatch("conv?d_[!0-9]", "conv2d_7"))
        XCTAssertFalse(globMatch("res_*", "rescale"))
        XCTAssertTrue(globMatch("*", ""))
    }

    func testRegistryHasNoDuplicateClassNames() {
        XCTAssertEqual(KerasLayerRegistry.duplicateClassNames, [], "a Keras class is registered by two converters")
        for name in ["InputLayer", "Conv2D", "DepthwiseConv2D", "SeparableConv2D", "Conv2DTranspose", "Dense", "BatchNormalization",
                     "Activation", "ReLU", "LeakyReLU", "PReLU", "ELU", "ThresholdedReLU", "Softmax", "MaxPooling2D",
                     "AveragePooling2D", "GlobalMaxPooling2D", "GlobalAveragePooling2D", "ZeroPadding2D", "Cropping2D",
                     "UpSampling2D", "Flatten", "Reshape", "Permute", "Dropout", "SpatialDropout1D", "SpatialDropout2D",
                     "GaussianNoise", "GaussianDropout", "ActivityRegularization", "Add", "Subtract", "Multiply", "Average",
                     "Maximum", "Minimum", "Concatenate", "RepeatVector", "Rescaling"] {
            XCTAssertNotNil(KerasLayerRegistry.converter(for: name), "\(name) is not registered")
        }
        XCTAssertNil(KerasLayerRegistry.converter(for: "Lambda"))
    }
}
