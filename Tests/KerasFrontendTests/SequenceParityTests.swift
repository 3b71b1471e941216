import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime
import TestSupport

/// Numeric parity with real Keras on the sequence-model fixtures of issue 6 (Conv1D, 1-D pooling
/// and padding, SimpleRNN / LSTM / GRU, Bidirectional, TimeDistributed, Embedding, Masking):
/// convert, run with `MLRuntime.Model`, compare every output with Keras':
/// max|ours − Keras| ≤ 1e-4·max(1, max|Keras|). One test per fixture.
///
/// Outputs are compared by position: a layer returning several tensors (return_state) appears
/// several times under its name in the manifest, and the converter names the repeats
/// `<name>_1`, `<name>_2`, … (or keeps `<name>:<i>` when that name is taken).
final class SequenceParityTests: XCTestCase {
    /// The issue-6 fixtures covered here (kept in sync with the manifest by a test).
    static let fixtures: [String] = [
        "quickdraw_rnn_k2", "quickdraw_rnn_k3",
        "lstm_variants_k2", "lstm_variants_k3",
        "lstm_text_classifier_k2", "lstm_text_classifier_k3",
        "gru_variants_k2", "gru_variants_k3",
        "simple_rnn_k2", "simple_rnn_k3",
        "stacked_return_state_k2", "stacked_return_state_k3",
        "conv1d_causal_dilated_k2", "conv1d_causal_dilated_k3",
        "bidirectional_merge_k2", "bidirectional_merge_k3",
        "time_distributed_k2", "time_distributed_k3",
    ]

    func testEveryIssue6FixtureHasATest() throws {
        let names = try KerasFixture.load(KerasTestPaths.fixtures).filter { $0.issue == 6 }.map(\.name)
        XCTAssertEqual(Set(names).subtracting(Self.fixtures), [], "issue-6 fixtures without a test in SequenceParityTests")
        XCTAssertEqual(Set(Self.fixtures).subtracting(names), [], "SequenceParityTests lists fixtures the manifest lacks")
    }

    /// The manifest's output names made unique as the converter names them.
    static func uniqueNames(_ names: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return names.map { n in
            if let k = seen[n] { seen[n] = k + 1; return "\(n)_\(k)" }
            seen[n] = 1
            return n
        }
    }

    /// Converts and runs fixture `name`; returns the max error per output (also printed).
    @discardableResult
    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Float] {
        let dir = KerasTestPaths.fixtures
        guard let fx = try KerasFixture.load(dir).first(where: { $0.name == name }) else {
            throw XCTSkip("fixture \(name) is not in the manifest")
        }
        let graph = try KerasConverter().convert(modelAt: dir.appendingPathComponent(fx.model),
                                                 architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
        XCTAssertEqual(graph.inputs.map(\.name), fx.inputs.map(\.name), "\(name): input names", file: file, line: line)
        // A state output whose unique name is taken by another tensor keeps its `<layer>:<i>` name.
        let expectedNames = Self.uniqueNames(fx.outputs.map(\.name))
        XCTAssertEqual(graph.outputs.count, expectedNames.count, "\(name): output count", file: file, line: line)
        for (got, want) in zip(graph.outputs, expectedNames) where got != want && !got.hasPrefix(fx.outputs[expectedNames.firstIndex(of: want)!].name + ":") {
            XCTFail("\(name): output \(got) should be named \(want)", file: file, line: line)
        }
        let model = try Model(graph: graph)
        var feeds: [String: NDArray] = [:]
        for i in fx.inputs { feeds[i.name] = try NPY.read(contentsOf: dir.appendingPathComponent(i.file)) }
        let results = try model.prediction(from: feeds)
        var errors: [Float] = []
        for (o, irName) in zip(fx.outputs, graph.outputs) {
            let expected = try NPY.read(contentsOf: dir.appendingPathComponent(o.file))
            guard let got = results[irName] else {
                XCTFail("\(name): output \(irName) missing (have \(results.keys.sorted()))", file: file, line: line)
                errors.append(.infinity)
                continue
            }
            XCTAssertEqual(got.shape.filter { $0 != 1 }, expected.shape.filter { $0 != 1 },
                           "\(name): output \(irName) has shape \(got.shape), Keras \(expected.shape)", file: file, line: line)
            guard got.count == expected.count else { errors.append(.infinity); continue }
            let scale = max(1, expected.scalars.map(abs).max() ?? 0)
            var maxErr: Float = 0
            for (a, b) in zip(got.scalars, expected.scalars) {
                if a.isNaN != b.isNaN { maxErr = .infinity } else if !a.isNaN { maxErr = max(maxErr, abs(a - b)) }
            }
            errors.append(maxErr)
            print("parity \(name) \(irName): max|err| = \(maxErr) (tolerance \(1e-4 * scale))")
            XCTAssertLessThanOrEqual(maxErr, 1e-4 * scale,
                                     "\(name): output \(irName) differs from Keras: max|err| \(maxErr) > \(1e-4 * scale)",
                                     file: file, line: line)
        }
        return errors
    }

    func test_quickdraw_rnn_k2() throws { try check("quickdraw_rnn_k2") }
    func test_quickdraw_rnn_k3() throws { try check("quickdraw_rnn_k3") }
    func test_lstm_variants_k2() throws { try check("lstm_variants_k2") }
    func test_lstm_variants_k3() throws { try check("lstm_variants_k3") }
    func test_lstm_text_classifier_k2() throws { try check("lstm_text_classifier_k2") }
    func test_lstm_text_classifier_k3() throws { try check("lstm_text_classifier_k3") }
    func test_gru_variants_k2() throws { try check("gru_variants_k2") }
    func test_gru_variants_k3() throws { try check("gru_variants_k3") }
    func test_simple_rnn_k2() throws { try check("simple_rnn_k2") }
    func test_simple_rnn_k3() throws { try check("simple_rnn_k3") }
    func test_stacked_return_state_k2() throws { try check("stacked_return_state_k2") }
    func test_stacked_return_state_k3() throws { try check("stacked_return_state_k3") }
    func test_conv1d_causal_dilated_k2() throws { try check("conv1d_causal_dilated_k2") }
    func test_conv1d_causal_dilated_k3() throws { try check("conv1d_causal_dilated_k3") }
    func test_bidirectional_merge_k2() throws { try check("bidirectional_merge_k2") }
    func test_bidirectional_merge_k3() throws { try check("bidirectional_merge_k3") }
    func test_time_distributed_k2() throws { try check("time_distributed_k2") }
    func test_time_distributed_k3() throws { try check("time_distributed_k3") }

    /// The text classifier's masks: the Keras 3 file passes them explicitly (NotEqual / Any op
    /// layers), the tf.keras one by propagation; both must feed every recurrent layer a mask.
    func testTextClassifierRecurrentLayersAreMasked() throws {
        let dir = KerasTestPaths.fixtures
        for name in ["lstm_text_classifier_k2", "lstm_text_classifier_k3"] {
            guard let fx = try KerasFixture.load(dir).first(where: { $0.name == name }) else { throw XCTSkip("no \(name)") }
            let g = try KerasConverter().convert(modelAt: dir.appendingPathComponent(fx.model))
            for layer in ["lstm_seq", "lstm_last", "bi_seq", "gru_last"] {
                let n = try XCTUnwrap(g.nodes.first { $0.name == layer }, "\(name): no node \(layer)")
                guard case let .recurrent(a) = n.op else { XCTFail("\(name): \(layer) is \(n.op.name)"); continue }
                XCTAssertTrue(a.hasMask, "\(name): \(layer) has no mask")
            }
        }
    }
}

final class EmbeddingIndexTests: XCTestCase {
    /// Embedding indices are integers in the IR: a float index input is cast to int32 (truncating,
    /// as Keras' Embedding casts) before the embedding node.
    func testEmbeddingIndicesAreCastToInt32() throws {
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/lstm_text_classifier_k2/model.h5")
        var g = try KerasConverter().convert(modelAt: url)
        try g.inferShapes()
        let embedding = try XCTUnwrap(g.nodes.first { if case .embedding = $0.op { return true }; return false })
        XCTAssertEqual(g.tensorTypes[embedding.inputs[0]]?.elementType, .int32)
        let cast = try XCTUnwrap(g.producer(of: embedding.inputs[0]))
        XCTAssertEqual(cast.op, .cast(to: .int32))
        XCTAssertEqual(g.tensorTypes[cast.inputs[0]]?.elementType, .float32)
        // Truncation toward zero, as tf.cast: 2.9 → 2, −0.5 → 0.
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        let tokens = try XCTUnwrap(g.inputs.first { $0.name == cast.inputs[0] })
        var feeds: [String: NDArray] = [:]
        for i in g.inputs { feeds[i.name] = NDArray(shape: i.type.shape, repeating: 0.5) }
        var a = [Float](repeating: 2, count: tokens.type.elementCount), b = a, c = a
        a[0] = 2.9; b[0] = 2; c[0] = 3
        func run(_ v: [Float]) throws -> [Float] {
            feeds[tokens.name] = try NDArray(shape: tokens.type.shape, scalars: v)
            return try XCTUnwrap(m.prediction(from: feeds)[g.outputs[0]]).scalars
        }
        XCTAssertEqual(try run(a), try run(b))
        XCTAssertNotEqual(try run(a), try run(c))
    }
}
