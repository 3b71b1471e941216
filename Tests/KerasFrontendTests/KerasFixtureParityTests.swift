import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Numeric parity with real Keras on every fixture of `Fixtures/keras/manifest.json`
/// (written by `Scripts/make_fixtures.py`): convert, run with `MLRuntime.Model`, and compare each
/// output with Keras' own: max|ours − Keras| ≤ 1e-4·max(1, max|Keras|).
///
/// One test per fixture; `testEveryManifestFixtureHasATest` fails when the manifest gains a
/// fixture without its test here (or in `SequenceParityTests`, which covers the issue-6 sequence
/// fixtures). Fixtures whose `issue` is 3 (Lambda / custom layers) are expected to be rejected
/// with `unsupportedLayers`; the test checks that and skips with a message naming the missing
/// feature.
final class KerasFixtureParityTests: XCTestCase {
    static func manifest() throws -> [KerasFixture] { try KerasFixture.load(KerasTestPaths.fixtures) }

    /// Features the converter does not have, by manifest `issue` number.
    /// Issue-3 fixtures hold the seed's Lambdas (`res_crop`, `rescale_output`) and a custom
    /// `ReflectionPadding2D`: converted with the lowering hooks a user would pass on the command line.
    static func issue3Hooks() throws -> [LayerHook] {
        try ["res_crop=crop:2,2,2,2", "rescale_output=affine:127.5,127.5", "ReflectionPadding2D=pad:reflect"]
            .map { try KerasHookSpec(lowerFlag: $0) }.layerHooks()
    }

    /// The names with a test method below (kept in sync with the manifest by a test).
    static let covered: [String] = [
        "fer_cnn_k2",
        "fer_cnn_k3",
        "tiny_yolo_k2",
        "tiny_yolo_k3",
        "style_transfer_k2",
        "style_transfer_k3",
        "style_transfer_lambda_k2",
        "style_transfer_lambda_k3",
        "style_transfer_lambda_weights_k2",
        "style_transfer_reflect_k2",
        "style_transfer_reflect_k3",
        "sketch_cnn_k2",
        "sketch_cnn_k3",
        "small_unet_k2",
        "small_unet_k3",
        "quickdraw_rnn_k2",
        "quickdraw_rnn_k3",
        "conv2d_variants_k2",
        "conv2d_variants_k3",
        "depthwise_separable_k2",
        "depthwise_separable_k3",
        "conv_transpose_k2",
        "conv_transpose_k3",
        "dense_ranks_k2",
        "dense_ranks_k3",
        "batchnorm_variants_k2",
        "batchnorm_variants_k3",
        "activations_k2",
        "activations_k3",
        "advanced_activations_k2",
        "advanced_activations_k3",
        "pooling_k2",
        "pooling_k3",
        "pad_crop_upsample_k2",
        "pad_crop_upsample_k3",
        "flatten_dense_k2",
        "flatten_dense_k3",
        "reshape_permute_repeat_k2",
        "reshape_permute_repeat_k3",
        "inference_identities_k2",
        "inference_identities_k3",
        "merge_ops_k2",
        "merge_ops_k3",
        "nested_seq_in_func_k2",
        "nested_seq_in_func_k3",
        "nested_func_in_seq_k2",
        "nested_func_in_seq_k3",
        "shared_layers_k2",
        "shared_layers_k3",
        "multi_io_k2",
        "multi_io_k3",
        "rescaling_k2",
        "rescaling_k3",
        "lstm_variants_k2",
        "lstm_variants_k3",
        // MARK: convolution and pooling in 3-D (issue 9)
        "volumetric_3d_k2",
        "volumetric_3d_k3",
    ]

    func testEveryManifestFixtureHasATest() throws {
        let names = try Self.manifest().map(\.name)
        let missing = names.filter {
            !Self.covered.contains($0) && !SequenceParityTests.fixtures.contains($0) && !NormAttentionParityTests.fixtures.contains($0)
                && !LambdaParityTests.fixtures.contains($0) && !ConvFamilyParityTests.fixtures.contains($0)
        }
        XCTAssertTrue(missing.isEmpty, "fixtures without a parity test in KerasFixtureParityTests: \(missing)")
    }

    /// Converts and runs fixture `name`, comparing every output with Keras.
    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let fx = try Self.manifest().first(where: { $0.name == name }) else {
            throw XCTSkip("fixture \(name) is not in the manifest any more")
        }
        let dir = KerasTestPaths.fixtures
        let graph: Graph
        var options = KerasConversionOptions()
        if fx.issue == 3 { options.hooks = try Self.issue3Hooks() }
        do {
            graph = try KerasConverter(options: options).convert(modelAt: dir.appendingPathComponent(fx.model),
                                                                 architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
        } catch let e as KerasConversionError {
            XCTFail("\(name): conversion failed:\n\(e)", file: file, line: line)
            return
        }
        try assertParity(graph, fx, dir: dir, file: file, line: line)
    }

    func test_fer_cnn_k2() throws { try check("fer_cnn_k2") }
    func test_fer_cnn_k3() throws { try check("fer_cnn_k3") }
    func test_tiny_yolo_k2() throws { try check("tiny_yolo_k2") }
    func test_tiny_yolo_k3() throws { try check("tiny_yolo_k3") }
    func test_style_transfer_k2() throws { try check("style_transfer_k2") }
    func test_style_transfer_k3() throws { try check("style_transfer_k3") }
    func test_style_transfer_lambda_k2() throws { try check("style_transfer_lambda_k2") }
    func test_style_transfer_lambda_k3() throws { try check("style_transfer_lambda_k3") }
    func test_style_transfer_lambda_weights_k2() throws { try check("style_transfer_lambda_weights_k2") }
    func test_style_transfer_reflect_k2() throws { try check("style_transfer_reflect_k2") }
    func test_style_transfer_reflect_k3() throws { try check("style_transfer_reflect_k3") }
    func test_sketch_cnn_k2() throws { try check("sketch_cnn_k2") }
    func test_sketch_cnn_k3() throws { try check("sketch_cnn_k3") }
    func test_small_unet_k2() throws { try check("small_unet_k2") }
    func test_small_unet_k3() throws { try check("small_unet_k3") }
    func test_quickdraw_rnn_k2() throws { try check("quickdraw_rnn_k2") }
    func test_quickdraw_rnn_k3() throws { try check("quickdraw_rnn_k3") }
    func test_conv2d_variants_k2() throws { try check("conv2d_variants_k2") }
    func test_conv2d_variants_k3() throws { try check("conv2d_variants_k3") }
    func test_depthwise_separable_k2() throws { try check("depthwise_separable_k2") }
    func test_depthwise_separable_k3() throws { try check("depthwise_separable_k3") }
    func test_conv_transpose_k2() throws { try check("conv_transpose_k2") }
    func test_conv_transpose_k3() throws { try check("conv_transpose_k3") }
    func test_dense_ranks_k2() throws { try check("dense_ranks_k2") }
    func test_dense_ranks_k3() throws { try check("dense_ranks_k3") }
    func test_batchnorm_variants_k2() throws { try check("batchnorm_variants_k2") }
    func test_batchnorm_variants_k3() throws { try check("batchnorm_variants_k3") }
    func test_activations_k2() throws { try check("activations_k2") }
    func test_activations_k3() throws { try check("activations_k3") }
    func test_advanced_activations_k2() throws { try check("advanced_activations_k2") }
    func test_advanced_activations_k3() throws { try check("advanced_activations_k3") }
    func test_pooling_k2() throws { try check("pooling_k2") }
    func test_pooling_k3() throws { try check("pooling_k3") }
    func test_pad_crop_upsample_k2() throws { try check("pad_crop_upsample_k2") }
    func test_pad_crop_upsample_k3() throws { try check("pad_crop_upsample_k3") }
    func test_flatten_dense_k2() throws { try check("flatten_dense_k2") }
    func test_flatten_dense_k3() throws { try check("flatten_dense_k3") }
    func test_reshape_permute_repeat_k2() throws { try check("reshape_permute_repeat_k2") }
    func test_reshape_permute_repeat_k3() throws { try check("reshape_permute_repeat_k3") }
    func test_inference_identities_k2() throws { try check("inference_identities_k2") }
    func test_inference_identities_k3() throws { try check("inference_identities_k3") }
    func test_merge_ops_k2() throws { try check("merge_ops_k2") }
    func test_merge_ops_k3() throws { try check("merge_ops_k3") }
    func test_nested_seq_in_func_k2() throws { try check("nested_seq_in_func_k2") }
    func test_nested_seq_in_func_k3() throws { try check("nested_seq_in_func_k3") }
    func test_nested_func_in_seq_k2() throws { try check("nested_func_in_seq_k2") }
    func test_nested_func_in_seq_k3() throws { try check("nested_func_in_seq_k3") }
    func test_shared_layers_k2() throws { try check("shared_layers_k2") }
    func test_shared_layers_k3() throws { try check("shared_layers_k3") }
    func test_multi_io_k2() throws { try check("multi_io_k2") }
    func test_multi_io_k3() throws { try check("multi_io_k3") }
    func test_rescaling_k2() throws { try check("rescaling_k2") }
    func test_rescaling_k3() throws { try check("rescaling_k3") }
    func test_lstm_variants_k2() throws { try check("lstm_variants_k2") }
    func test_lstm_variants_k3() throws { try check("lstm_variants_k3") }
    // MARK: convolution and pooling in 3-D (issue 9)
    func test_volumetric_3d_k2() throws { try check("volumetric_3d_k2") }
    func test_volumetric_3d_k3() throws { try check("volumetric_3d_k3") }
}
