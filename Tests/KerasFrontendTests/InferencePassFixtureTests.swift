import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

// MARK: inference passes (issue 12)

/// The inference passes on real Keras fixtures (`Fixtures/keras`, recorded from Keras by
/// `Scripts/make_fixtures.py`): each fixture runs with the passes (oneDNN, as `Model` loads it),
/// without the issue-12 passes (oneDNN), and fused on the reference kernels; every output must
/// stay within the Keras parity tolerance (1e-4·max(1, max|Keras|)) and within it of the unfused
/// run. Each fixture lists the passes that must change its graph, so the test fails when a pass
/// stops applying.
final class InferencePassFixtureTests: XCTestCase {
    static let issue12Passes: Set<String> = ["remove_no_op_nodes", "merge_reshapes_transposes",
                                             "fold_batchnorm_into_conv", "fuse_activation", "fuse_residual_add"]

    func check(_ name: String, changedBy expected: Set<String>, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let fx = try KerasFixture.load(KerasTestPaths.fixtures).first(where: { $0.name == name }) else {
            throw XCTSkip("fixture \(name) is not in the manifest any more")
        }
        let dir = KerasTestPaths.fixtures
        var options = KerasConversionOptions()
        if fx.issue == 3 { options.hooks = try KerasFixtureParityTests.issue3Hooks() }
        let graph = try KerasConverter(options: options).convert(modelAt: dir.appendingPathComponent(fx.model),
                                                                 architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
        var fusedGraph = graph
        let changed = Set(try PassPipeline.inference.run(on: &fusedGraph)).intersection(Self.issue12Passes)
        XCTAssertEqual(changed, expected, "\(name): passes that changed the graph", file: file, line: line)
        var again = fusedGraph
        XCTAssertEqual(try PassPipeline.inference.run(on: &again), [], "\(name): the pipeline is idempotent", file: file, line: line)
        print("inference passes \(name): \(graph.nodes.count) → \(fusedGraph.nodes.count) nodes (\(changed.sorted().joined(separator: ", ")))")

        var feeds: [String: NDArray] = [:]
        for i in fx.inputs { feeds[i.name] = try NPY.read(contentsOf: dir.appendingPathComponent(i.file)) }
        let runs: [(String, Model)] = [
            ("oneDNN fused", try Model(graph: graph)),
            ("oneDNN unfused", try Model(graph: graph, configuration: .init(disabledPasses: Self.issue12Passes))),
            ("reference fused", try Model(graph: fusedGraph, configuration: .init(referenceOnly: true))),
        ]
        XCTAssertEqual(runs[0].1.graph.nodes.count, fusedGraph.nodes.count, file: file, line: line)
        var results: [String: [String: NDArray]] = [:]
        for (what, model) in runs { results[what] = try model.prediction(from: feeds) }
        for o in fx.outputs {
            let keras = try NPY.read(contentsOf: dir.appendingPathComponent(o.file))
            let tolerance = 1e-4 * max(1, keras.scalars.map(abs).max() ?? 0)
            for (what, _) in runs {
                let got = try XCTUnwrap(results[what]?[o.name], "\(name) \(what): output \(o.name) missing", file: file, line: line)
                XCTAssertEqual(got.count, keras.count, file: file, line: line)
                let err = maxError(got.scalars, keras.scalars)
                XCTAssertLessThanOrEqual(err, tolerance, "\(name) \(what) vs Keras, output \(o.name)", file: file, line: line)
                if let unfused = results["oneDNN unfused"]?[o.name] {
                    let d = maxError(got.scalars, unfused.scalars)
                    XCTAssertLessThanOrEqual(d, tolerance, "\(name) \(what) vs unfused, output \(o.name)", file: file, line: line)
                }
            }
        }
    }

    /// max|a − b|, NaN matching NaN; infinity when only one is NaN.
    func maxError(_ a: [Float], _ b: [Float]) -> Float {
        var m: Float = 0
        for (x, y) in zip(a, b) {
            if x.isNaN != y.isNaN { return .infinity }
            if !x.isNaN { m = max(m, abs(x - y)) }
        }
        return m
    }

    func test_batchnorm_variants() throws {
        try check("batchnorm_variants_k2", changedBy: ["fold_batchnorm_into_conv"])
        try check("batchnorm_variants_k3", changedBy: ["fold_batchnorm_into_conv"])
    }
    func test_depthwise_separable() throws {
        try check("depthwise_separable_k2", changedBy: [])
        try check("depthwise_separable_k3", changedBy: [])
    }
    func test_conv2d_variants() throws {
        try check("conv2d_variants_k2", changedBy: [])
        try check("conv2d_variants_k3", changedBy: [])
    }
    func test_conv_transpose() throws {
        try check("conv_transpose_k2", changedBy: [])
        try check("conv_transpose_k3", changedBy: [])
    }
    func test_dense_ranks() throws {
        try check("dense_ranks_k2", changedBy: [])
        try check("dense_ranks_k3", changedBy: [])
    }
    func test_activations() throws {
        try check("activations_k2", changedBy: [])
        try check("activations_k3", changedBy: [])
    }
    func test_advanced_activations() throws {
        try check("advanced_activations_k2", changedBy: [])
        try check("advanced_activations_k3", changedBy: [])
    }
    func test_inference_identities() throws {
        try check("inference_identities_k2", changedBy: [])
        try check("inference_identities_k3", changedBy: [])
    }
    func test_reshape_permute_repeat() throws {
        try check("reshape_permute_repeat_k2", changedBy: [])
        try check("reshape_permute_repeat_k3", changedBy: [])
    }
    func test_style_transfer() throws {
        try check("style_transfer_k2", changedBy: ["fold_batchnorm_into_conv", "fuse_activation", "fuse_residual_add"])
        try check("style_transfer_k3", changedBy: ["fold_batchnorm_into_conv", "fuse_activation", "fuse_residual_add"])
    }
    func test_fer_cnn() throws {
        try check("fer_cnn_k2", changedBy: [])
        try check("fer_cnn_k3", changedBy: [])
    }
    func test_tiny_yolo() throws {
        try check("tiny_yolo_k2", changedBy: ["fold_batchnorm_into_conv", "fuse_activation"])
        try check("tiny_yolo_k3", changedBy: ["fold_batchnorm_into_conv", "fuse_activation"])
    }
    func test_small_unet() throws {
        try check("small_unet_k2", changedBy: [])
        try check("small_unet_k3", changedBy: [])
    }
    func test_sketch_cnn() throws {
        try check("sketch_cnn_k2", changedBy: [])
        try check("sketch_cnn_k3", changedBy: [])
    }
}
