import Foundation
import XCTest
@testable import KerasFrontend

/// Malformed model configs and weight files end in typed errors naming the file and the layer
/// (issue 13, "never crash on a file"; the inputs that once crashed are in Fixtures/crashes/keras).
final class KerasMalformedConfigTests: XCTestCase {
    private func functional(_ layers: String, outputs: String) -> String {
        #"{"class_name": "Functional", "config": {"name": "m", "layers": ["#
            + #"{"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [], "config": {"name": "input_1", "batch_input_shape": [null, 4]}}, "#
            + layers + #"], "input_layers": [["input_1", 0, 0]], "output_layers": "# + outputs + "}}"
    }

    func testLayerCalledWithoutInputsIsMissingInputs() throws {
        for (cls, cfg) in [("Activation", #""activation": "relu""#), ("Dense", #""units": 2"#), ("Reshape", #""target_shape": [2, 2]"#),
                           ("Masking", #""mask_value": 0"#), ("Flatten", "")] {
            let sep = cfg.isEmpty ? "" : ", "
            let t = TinyKeras(config: functional(#"{"class_name": "\#(cls)", "name": "x", "inbound_nodes": [[]], "config": {"name": "x"\#(sep)\#(cfg)}}"#,
                                                 outputs: #"[["x", 0, 0]]"#),
                              weights: cls == "Dense" ? ["x": [("kernel", [4, 2], ramp(8)), ("bias", [2], [0, 0])]] : [:])
            XCTAssertThrowsError(try KerasConverter().convert(file: t.file), cls) { e in
                guard case let .missingInputs(file, layer, className, expected, found)? = e as? KerasConversionError else {
                    return XCTFail("\(cls): \(e)")
                }
                XCTAssertEqual([file, layer, className], ["tiny.h5", "x", cls])
                XCTAssertEqual([expected, found], [1, 0])
                XCTAssertTrue("\(e)".contains("What to do"))
            }
        }
    }

    func testOutOfRangeTensorReferencesAreRejectedByTheParser() throws {
        let act1 = #"{"class_name": "Activation", "name": "a1", "inbound_nodes": [[["input_1", 0, 0, {}]]], "config": {"name": "a1", "activation": "relu"}}"#
        func act2(_ ref: String) -> String {
            #"{"class_name": "Activation", "name": "a2", "inbound_nodes": [[\#(ref)]], "config": {"name": "a2", "activation": "relu"}}"#
        }
        let bad: [(String, String, String)] = [
            (act1 + ", " + act2(#"["a1", 0, 2147483648, {}]"#), #"[["a2", 0, 0]]"#, "output index 2147483648"),
            (act1 + ", " + act2(#"["a1", 0, -2, {}]"#), #"[["a2", 0, 0]]"#, "output index -2"),
            (act1 + ", " + act2(#"["a1", 3, 0, {}]"#), #"[["a2", 0, 0]]"#, "call index 3"),
            (act1, #"[["a1", 0, 1099511627776]]"#, "output index 1099511627776"),
            (act1, #"[["a1", -1, 0]]"#, "call index -1"),
        ]
        for (layers, outputs, found) in bad {
            XCTAssertThrowsError(try KerasModelConfig.parse(text: functional(layers, outputs: outputs), file: "m.json"), found) { e in
                guard case let .invalidTensorReference(file, _, _, _, f)? = e as? KerasConversionError else { return XCTFail("\(e)") }
                XCTAssertEqual(file, "m.json")
                XCTAssertEqual(f, found)
            }
        }
        // In range: parses.
        XCTAssertNoThrow(try KerasModelConfig.parse(text: functional(act1 + ", " + act2(#"["a1", 0, 0, {}]"#), outputs: #"[["a2", 0, 0]]"#), file: "m.json"))
    }

    func testWeightSearchVisitsEachGroupOnceDespiteLinksToItself() throws {
        for name in ["model_weights_soft_links_to_itself.h5", "model_weights_hard_links_to_itself.h5"] {
            let url = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/" + name)
            XCTAssertThrowsError(try KerasConverter().convert(modelAt: url), name) { e in
                guard case let .missingWeight(file, layer, _, _, _)? = e as? KerasConversionError else { return XCTFail("\(e)") }
                XCTAssertEqual(file, url.path)
                XCTAssertEqual(layer, "dense")
            }
        }
    }
}
