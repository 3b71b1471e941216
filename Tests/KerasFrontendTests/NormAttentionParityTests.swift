import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Parity with Keras on the issue-14 fixtures of `Scripts/keras_fixtures/norm_attention.py`
/// (normalization, attention, preprocessing layers): every fixture's `.h5`, and for Keras 3 also
/// its native `.keras` archive and its `model.weights.h5` + `model.json`, converted and run,
/// each output within 1e-4·max(1, max|Keras|) of Keras'.
final class NormAttentionParityTests: XCTestCase {
    static let fixtures = [
        "norm_layers_k2", "norm_layers_k3",
        "dot_attention_k2", "dot_attention_k3",
        "multi_head_attention_k2", "multi_head_attention_k3",
        "preprocessing_layers_k2", "preprocessing_layers_k3",
    ]

    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard var fx = try KerasFixture.load(KerasTestPaths.fixtures).first(where: { $0.name == name }) else {
            throw XCTSkip("fixture \(name) is not in the manifest any more")
        }
        // Several outputs of one layer (return_attention_scores) share the layer's name in Keras;
        // the converter names the k-th repeat "<name>_<k>" (`KerasConverter` output naming).
        var seen: [String: Int] = [:]
        for i in fx.outputs.indices {
            let n = fx.outputs[i].name
            if let k = seen[n] { seen[n] = k + 1; fx.outputs[i].name = "\(n)_\(k)" } else { seen[n] = 1 }
        }
        let dir = KerasTestPaths.fixtures
        var forms: [(String, URL, URL?)] = [("h5", dir.appendingPathComponent(fx.model), fx.config.map { dir.appendingPathComponent($0) })]
        if fx.flavor == "keras3" {
            guard let archive = fx.archive, let weights = fx.weights_h5, let config = fx.weights_config else {
                XCTFail("\(name): a Keras 3 fixture of issue 14 must list archive, weights_h5 and weights_config", file: file, line: line)
                return
            }
            forms.append((".keras", dir.appendingPathComponent(archive), nil))
            forms.append((".weights.h5 + config", dir.appendingPathComponent(weights), dir.appendingPathComponent(config)))
        }
        for (label, model, config) in forms {
            let graph: Graph
            do {
                graph = try KerasConverter().convert(modelAt: model, architectureJSON: config)
            } catch let e as KerasConversionError {
                XCTFail("\(name) (\(label)): conversion failed:\n\(e)", file: file, line: line)
                continue
            }
            try assertParity(graph, fx, dir: dir, file: file, line: line)
        }
    }

    func test_norm_layers_k2() throws { try check("norm_layers_k2") }
    func test_norm_layers_k3() throws { try check("norm_layers_k3") }
    func test_dot_attention_k2() throws { try check("dot_attention_k2") }
    func test_dot_attention_k3() throws { try check("dot_attention_k3") }
    func test_multi_head_attention_k2() throws { try check("multi_head_attention_k2") }
    func test_multi_head_attention_k3() throws { try check("multi_head_attention_k3") }
    func test_preprocessing_layers_k2() throws { try check("preprocessing_layers_k2") }
    func test_preprocessing_layers_k3() throws { try check("preprocessing_layers_k3") }
}
