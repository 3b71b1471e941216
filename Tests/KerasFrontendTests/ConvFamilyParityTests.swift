import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Numeric parity with real Keras for the convolution-family layers of issue 14 (fixtures written
/// by Scripts/keras_fixtures/conv_family.py through Scripts/make_fixtures.py): Conv1DTranspose,
/// Conv3DTranspose, DepthwiseConv1D, SeparableConv1D, UpSampling3D, ZeroPadding3D, Cropping3D,
/// ConvLSTM1D / ConvLSTM2D and Bidirectional(ConvLSTM). Convert, run with `MLRuntime.Model`, and
/// compare each output with Keras': max|ours − Keras| ≤ 1e-4·max(1, max|Keras|).
///
/// Outputs are compared by position (a layer returning states appears several times under its
/// name in the manifest). The corpus tests do the same for the real models of ../shared whose
/// tf.keras outputs Scripts/make_corpus_keras_refs.py recorded under Fixtures/corpus_keras.
final class ConvFamilyParityTests: XCTestCase {
    /// The fixtures covered here (kept in sync with the manifest by a test).
    static let fixtures: [String] = [
        "conv1d_transpose_k2", "conv1d_transpose_k3",
        "conv3d_transpose_k2", "conv3d_transpose_k3",
        "depthwise_separable_1d_k2", "depthwise_separable_1d_k3",
        "volumetric_3d_reshaping_k2", "volumetric_3d_reshaping_k3",
        "conv_lstm2d_k2", "conv_lstm2d_k3",
        "conv_lstm1d_k2", "conv_lstm1d_k3",
        "bidirectional_conv_lstm_k2", "bidirectional_conv_lstm_k3",
    ]

    func testEveryListedFixtureIsInTheManifest() throws {
        let names = Set(try KerasFixture.load(KerasTestPaths.fixtures).map(\.name))
        XCTAssertEqual(Set(Self.fixtures).subtracting(names), [], "ConvFamilyParityTests lists fixtures the manifest lacks")
    }

    /// Compares `results` (the graph's outputs in order) with the expected arrays, by position.
    static func compare(_ label: String, outputs: [String], results: [String: NDArray], expected: [(name: String, value: NDArray)],
                        file: StaticString, line: UInt) {
        XCTAssertEqual(outputs.count, expected.count, "\(label): output count", file: file, line: line)
        for (irName, want) in zip(outputs, expected) {
            guard let got = results[irName] else {
                XCTFail("\(label): output \(irName) missing (have \(results.keys.sorted()))", file: file, line: line)
                continue
            }
            XCTAssertEqual(got.shape, want.value.shape, "\(label): output \(irName) (Keras \(want.name)) shape", file: file, line: line)
            guard got.count == want.value.count else { continue }
            let scale = max(1, want.value.scalars.map(abs).max() ?? 0)
            var maxErr: Float = 0
            for (a, b) in zip(got.scalars, want.value.scalars) {
                if a.isNaN != b.isNaN { maxErr = .infinity } else if !a.isNaN { maxErr = max(maxErr, abs(a - b)) }
            }
            print("parity \(label) \(irName): max|err| = \(maxErr) (tolerance \(1e-4 * scale))")
            XCTAssertLessThanOrEqual(maxErr, 1e-4 * scale, "\(label): output \(irName) (Keras \(want.name)) differs: max|err| \(maxErr) > \(1e-4 * scale)",
                                     file: file, line: line)
        }
    }

    /// Converts and runs fixture `name`, comparing every output with Keras'.
    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let dir = KerasTestPaths.fixtures
        guard let fx = try KerasFixture.load(dir).first(where: { $0.name == name }) else {
            XCTFail("fixture \(name) is not in the manifest (run Scripts/make_fixtures.py --only \(name))", file: file, line: line)
            return
        }
        let graph: Graph
        do {
            graph = try KerasConverter().convert(modelAt: dir.appendingPathComponent(fx.model),
                                                 architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
        } catch let e as KerasConversionError {
            XCTFail("\(name): conversion failed:\n\(e)", file: file, line: line)
            return
        }
        XCTAssertEqual(graph.inputs.map(\.name), fx.inputs.map(\.name), "\(name): input names", file: file, line: line)
        let model = try Model(graph: graph)
        var feeds: [String: NDArray] = [:]
        for i in fx.inputs { feeds[i.name] = try NPY.read(contentsOf: dir.appendingPathComponent(i.file)) }
        let results = try model.prediction(from: feeds)
        let expected = try fx.outputs.map { ($0.name, try NPY.read(contentsOf: dir.appendingPathComponent($0.file))) }
        Self.compare(name, outputs: graph.outputs, results: results, expected: expected, file: file, line: line)
    }

    func test_conv1d_transpose_k2() throws { try check("conv1d_transpose_k2") }
    func test_conv1d_transpose_k3() throws { try check("conv1d_transpose_k3") }
    func test_conv3d_transpose_k2() throws { try check("conv3d_transpose_k2") }
    func test_conv3d_transpose_k3() throws { try check("conv3d_transpose_k3") }
    func test_depthwise_separable_1d_k2() throws { try check("depthwise_separable_1d_k2") }
    func test_depthwise_separable_1d_k3() throws { try check("depthwise_separable_1d_k3") }
    func test_volumetric_3d_reshaping_k2() throws { try check("volumetric_3d_reshaping_k2") }
    func test_volumetric_3d_reshaping_k3() throws { try check("volumetric_3d_reshaping_k3") }
    func test_conv_lstm2d_k2() throws { try check("conv_lstm2d_k2") }
    func test_conv_lstm2d_k3() throws { try check("conv_lstm2d_k3") }
    func test_conv_lstm1d_k2() throws { try check("conv_lstm1d_k2") }
    func test_conv_lstm1d_k3() throws { try check("conv_lstm1d_k3") }
    func test_bidirectional_conv_lstm_k2() throws { try check("bidirectional_conv_lstm_k2") }
    func test_bidirectional_conv_lstm_k3() throws { try check("bidirectional_conv_lstm_k3") }

    // MARK: corpus models (../shared/corpus/keras) against tf.keras

    /// Fixtures/corpus_keras/<stem>/case.json (Scripts/make_corpus_keras_refs.py).
    struct CorpusCase: Decodable {
        struct Tensor: Decodable { var name: String; var file: String; var shape: [Int] }
        var model: String
        var inputs: [Tensor]
        var outputs: [Tensor]
    }

    /// Converts `../shared/corpus/keras/<stem>.h5` with no hooks and compares its predictions on
    /// the recorded inputs with tf.keras' recorded outputs; skips visibly when ../shared is absent.
    func checkCorpus(_ stem: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let refs = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/corpus_keras/\(stem)")
        let c = try JSONDecoder().decode(CorpusCase.self, from: Data(contentsOf: refs.appendingPathComponent("case.json")))
        let url = try KerasTestPaths.sharedFile(c.model)
        let graph = try KerasConverter().convert(modelAt: url)
        XCTAssertEqual(graph.inputs.map(\.name), c.inputs.map(\.name), "\(stem): input names", file: file, line: line)
        XCTAssertEqual(graph.outputs, c.outputs.map(\.name), "\(stem): output names", file: file, line: line)
        let model = try Model(graph: graph)
        var feeds: [String: NDArray] = [:]
        for i in c.inputs { feeds[i.name] = try NPY.read(contentsOf: refs.appendingPathComponent(i.file)) }
        let results = try model.prediction(from: feeds)
        let expected = try c.outputs.map { ($0.name, try NPY.read(contentsOf: refs.appendingPathComponent($0.file))) }
        Self.compare(stem, outputs: graph.outputs, results: results, expected: expected, file: file, line: line)
    }

    /// ECG U-Net (tf.keras 2.10): Conv1D / BatchNormalization / MaxPooling1D encoder and four
    /// Conv1DTranspose (kernel 8, stride 2, 'same') upsamplings concatenated with skips.
    func testCorpusEkgUNetConv1DTransposeMatchesTFKeras() throws { try checkCorpus("ekgapp_unet_ecg") }

    /// Two Bidirectional(ConvLSTM2D) layers (tf.keras 2.2.4-tf): channels_first, go_backwards=True
    /// on the wrapped layer, hard_sigmoid, merge concat on the last axis of the channels-first
    /// output (the width grows 10 → 20 → 40).
    func testCorpusBidirectionalConvLSTM2DMatchesTFKeras() throws { try checkCorpus("dl4j_tfkeras_bidirectional_convlstm2d") }

    // MARK: structure

    /// The ConvLSTM lowering is unrolled (no control flow), so the static runtime runs it, and the
    /// input convolution of all steps is a single node per direction.
    func testConvLSTMIsUnrolledWithOneInputConvolutionPerDirection() throws {
        let dir = KerasTestPaths.fixtures
        guard let fx = try KerasFixture.load(dir).first(where: { $0.name == "bidirectional_conv_lstm_k2" }) else {
            XCTFail("bidirectional_conv_lstm_k2 is not in the manifest"); return
        }
        let g = try KerasConverter().convert(modelAt: dir.appendingPathComponent(fx.model))
        XCTAssertFalse(g.nodes.contains { !$0.blocks.isEmpty }, "no control-flow nodes expected")
        let inputConvs = g.nodes.filter { $0.name.hasPrefix("bi_concat_seq") && $0.name.hasSuffix("__input_conv") }
        XCTAssertEqual(inputConvs.map(\.name).sorted(), ["bi_concat_seq__input_conv", "bi_concat_seq_backward__input_conv"])
        XCTAssertFalse(try Model(graph: g).isDynamic)
    }
}

/// Configurations of the convolution-family layers the converter cannot express end in typed
/// errors naming the file and layer, never in a crash or a silently wrong graph.
final class ConvFamilyErrorTests: XCTestCase {
    func chain(_ shape: [Int], _ layers: [(cls: String, name: String, config: String)], version: String = "2.15.0") -> String {
        var entries = [#"{"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, \#(shape.map(String.init).joined(separator: ", "))]}, "inbound_nodes": []}"#]
        var prev = "x"
        for l in layers {
            let cfg = l.config.isEmpty ? #""name": "\#(l.name)""# : #""name": "\#(l.name)", \#(l.config)"#
            entries.append(#"{"class_name": "\#(l.cls)", "name": "\#(l.name)", "config": {\#(cfg)}, "inbound_nodes": [[["\#(prev)", 0, 0, {}]]]}"#)
            prev = l.name
        }
        return #"{"class_name": "Functional", "keras_version": "\#(version)", "config": {"name": "m", "layers": [\#(entries.joined(separator: ", "))], "input_layers": [["x", 0, 0]], "output_layers": [["\#(prev)", 0, 0]]}}"#
    }

    /// Converting `layers` on an input of `shape` fails with `unsupportedConfiguration` for layer
    /// `layer` whose message contains `text`.
    func assertUnsupported(_ shape: [Int], _ layers: [(cls: String, name: String, config: String)], layer: String, _ text: String,
                           weights: [String: [(String, [Int], [Float])]] = [:], file: StaticString = #filePath, line: UInt = #line) {
        let t = TinyKeras(config: chain(shape, layers), weights: weights)
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file), file: file, line: line) { e in
            guard case let .unsupportedConfiguration(f, l, _, message, hint)? = e as? KerasConversionError else {
                return XCTFail("expected unsupportedConfiguration, got \(e)", file: file, line: line)
            }
            XCTAssertEqual([f, l], ["tiny.h5", layer], file: file, line: line)
            XCTAssertTrue(message.contains(text), "message: \(message)", file: file, line: line)
            XCTAssertFalse(hint.isEmpty, file: file, line: line)
        }
    }

    func testStatefulConvLSTMIsRefused() {
        let w: [(String, [Int], [Float])] = [("kernel", [3, 3, 2, 8], ramp(144)), ("recurrent_kernel", [3, 3, 2, 8], ramp(144)), ("bias", [8], ramp(8))]
        assertUnsupported([3, 4, 4, 2], [("ConvLSTM2D", "c", #""filters": 2, "kernel_size": [3, 3], "stateful": true"#)], layer: "c", "stateful=True",
                          weights: ["c": w])
    }

    func testCropping3DThatLeavesNothingIsRefused() {
        assertUnsupported([3, 4, 5, 2], [("Cropping3D", "crop", #""cropping": [[1, 2], [0, 0], [0, 0]]"#)], layer: "crop", "leave nothing")
    }

    func testCausalConv1DTransposeIsRefused() {
        assertUnsupported([6, 2], [("Conv1DTranspose", "d", #""filters": 2, "kernel_size": [3], "padding": "causal""#)], layer: "d", "padding 'causal'",
                          weights: ["d": [("kernel", [3, 2, 2], ramp(12)), ("bias", [2], [0, 0])]])
    }

    func testHugeUpSampling3DIsATypedError() {
        assertUnsupported([2, 2, 2, 1], [("UpSampling3D", "up", #""size": [65536, 65536, 65536]"#)], layer: "up", "too many elements")
    }

    func testConv1DTransposeKernelOfTheWrongShapeIsAWeightShapeMismatch() {
        let t = TinyKeras(config: chain([6, 2], [("Conv1DTranspose", "d", #""filters": 3, "kernel_size": [4], "strides": [2], "padding": "same""#)]),
                          weights: ["d": [("kernel", [4, 2, 3], ramp(24)), ("bias", [3], [0, 0, 0])]])
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { e in
            guard case let .weightShapeMismatch(f, l, _, _, expected, found, _)? = e as? KerasConversionError else { return XCTFail("\(e)") }
            XCTAssertEqual([f, l], ["tiny.h5", "d"])
            XCTAssertEqual(expected, [4, 3, 2])  // (k, filters, Cin)
            XCTAssertEqual(found, [4, 2, 3])
        }
    }
}
