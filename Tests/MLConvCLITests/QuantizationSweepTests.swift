import Foundation
import KerasFrontend
import MLGraph
import MLPasses
import MLRuntime
import TestSupport
import XCTest

/// Issue 5 acceptance: every fixture and the real style-transfer models quantized in each mode
/// (fp16; linear and k-means at 8, 4, 2, 1 bits; linear symmetric 8-bit), run by the runtime.
/// Every mode must give outputs of the float model's shapes with the same non-finite positions;
/// 8-bit and fp16 must also stay close to the float model (SNR thresholds below).
final class QuantizationSweepTests: XCTestCase {
    static let allModes: [QuantizationMode] = [.fp16, .linearSymmetric]
        + [8, 4, 2, 1].flatMap { [QuantizationMode.linear(bits: $0), .kmeans(bits: $0)] }
    static let seeds = ["fer_cnn", "tiny_yolo", "style_transfer", "sketch_cnn", "small_unet", "quickdraw_rnn"]

    struct Fixture: Decodable {
        struct IO: Decodable { let name: String; let file: String }
        let name: String; let model: String; let config: String?; let inputs: [IO]; let issue: Int?
    }

    static func fixtures() throws -> [Fixture] {
        struct Manifest: Decodable { let fixtures: [Fixture] }
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/manifest.json")
        return try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url)).fixtures
    }

    static func hooks() throws -> [LayerHook] {
        try ["res_crop=crop:2,2,2,2", "rescale_output=affine:127.5,127.5", "ReflectionPadding2D=pad:reflect"]
            .map { try KerasHookSpec(lowerFlag: $0) }.layerHooks()
    }

    /// Quantizes `graph` in `modes`, runs each on `inputs`, checks against the float outputs.
    func sweep(_ name: String, _ graph: Graph, _ inputs: [String: NDArray], modes: [QuantizationMode]) throws {
        let reference = try Model(graph: graph).prediction(from: inputs)
        for mode in modes {
            var options = QuantizationOptions()
            options.skipWhenNotSmaller = false  // compress every tensor: the harder case
            let (q, report) = try WeightQuantizer(mode: mode, options: options).quantize(graph)
            // Every weight is either compressed or listed with its reason (k-means leaves
            // multi-gate recurrent matrices alone, so an LSTM-only model may compress nothing).
            XCTAssertEqual(report.entries.count + report.skipped.count, q.nodes.reduce(0) { $0 + $1.weights.count },
                           "\(name) \(mode): every weight accounted for")
            XCTAssertFalse(report.entries.isEmpty && !report.skipped.contains { $0.reason == .perGateTables },
                           "\(name) \(mode): nothing quantized")
            let out = try Model(graph: q).prediction(from: inputs)
            for (o, ref) in reference {
                let got = try XCTUnwrap(out[o])
                XCTAssertEqual(got.shape, ref.shape, "\(name) \(mode) \(o)")
                XCTAssertEqual(got.scalars.map(\.isFinite), ref.scalars.map(\.isFinite), "\(name) \(mode) \(o): non-finite values differ")
                let minSNR: Double? = mode == .fp16 ? 25 : mode.bits == 8 ? 10 : nil  // sanity: quality is tested elsewhere
                if let minSNR, ref.scalars.contains(where: { $0 != 0 }) {
                    let c = try compareOutputs(reference: ref.scalars, quantized: got.scalars)
                    XCTAssertGreaterThan(c.snr, minSNR, "\(name) \(mode) \(o): SNR \(c.snr) dB")
                }
            }
        }
    }

    func testSeedLookAlikesInEveryMode() throws {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras")
        var count = 0
        for fx in try Self.fixtures() where Self.seeds.contains(where: { fx.name.hasPrefix($0 + "_k") }) {
            let graph = try KerasConverter().convert(modelAt: root.appendingPathComponent(fx.model),
                                                     architectureJSON: fx.config.map { root.appendingPathComponent($0) })
            var inputs: [String: NDArray] = [:]
            for i in fx.inputs { inputs[i.name] = try NPY.read(contentsOf: root.appendingPathComponent(i.file)) }
            try sweep(fx.name, graph, inputs, modes: Self.allModes)
            count += 1
        }
        XCTAssertEqual(count, 12, "5 CNN look-alikes + QuickDraw, Keras 2 and 3")
    }

    func testEveryOtherFixtureAt8BitAndFP16() throws {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras")
        let hooks = try Self.hooks()
        for fx in try Self.fixtures() where !Self.seeds.contains(where: { fx.name.hasPrefix($0 + "_k") }) {
            var options = KerasConversionOptions()
            if fx.issue == 3 { options.hooks = hooks }
            let graph = try KerasConverter(options: options).convert(modelAt: root.appendingPathComponent(fx.model),
                                                                     architectureJSON: fx.config.map { root.appendingPathComponent($0) })
            guard graph.nodes.contains(where: { !$0.weights.isEmpty }) else { continue }  // nothing to quantize
            var inputs: [String: NDArray] = [:]
            for i in fx.inputs { inputs[i.name] = try NPY.read(contentsOf: root.appendingPathComponent(i.file)) }
            try sweep(fx.name, graph, inputs, modes: [.fp16, .kmeans(bits: 8), .linear(bits: 8)])
        }
    }

    /// The three real style-transfer models (full, reflect-padding, weights-only + JSON), every mode.
    func testRealStyleTransferModelsInEveryMode() throws {
        let full = try TestPaths.sharedFile("models/style_transfer_vangogh.h5")
        let reflect = try TestPaths.sharedFile("models/style_transfer_vangogh_reflect.h5")
        let weights = try TestPaths.sharedFile("models/van-gogh-starry-night_style.h5")
        let json = try TestPaths.sharedFile("models/style_transfer_vangogh.json")
        let photo = try NPY.read(contentsOf: try TestPaths.sharedFile("models/reference/london_big-ben_320.npy"))
        var options = KerasConversionOptions()
        options.hooks = try Self.hooks()
        for (name, model, config) in [("full", full, nil), ("reflect", reflect, nil), ("weights-only", weights, json)] as [(String, URL, URL?)] {
            let graph = try KerasConverter(options: options).convert(modelAt: model, architectureJSON: config)
            try sweep("style_transfer_vangogh (\(name))", graph, [graph.inputs[0].name: photo], modes: Self.allModes)
        }
    }
}
