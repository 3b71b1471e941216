import Foundation
@testable import MLBundle
import MLGraph
import MLRuntime
import TestSupport
import XCTest

/// The bundle encoding is a file format: these tests fail when the bytes mlconv writes change.
/// A deliberate change bumps the format version (docs/BUNDLE_FORMAT.md §Versioning), keeps the
/// old version readable, and regenerates the golden files with `MLCONV_UPDATE_GOLDEN=1 swift test
/// --filter GoldenEncodingTests`. A new op kind gets its golden file the same way.
final class GoldenEncodingTests: XCTestCase {
    static let golden = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/bundles/golden")
    static var updating: Bool { ProcessInfo.processInfo.environment["MLCONV_UPDATE_GOLDEN"] == "1" }

    func compare(_ bytes: [UInt8], golden name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let url = Self.golden.appendingPathComponent(name)
        if Self.updating {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            return
        }
        guard let stored = try? Data(contentsOf: url) else {
            return XCTFail("no golden file \(name): run MLCONV_UPDATE_GOLDEN=1 swift test --filter GoldenEncodingTests and commit it",
                           file: file, line: line)
        }
        guard Array(stored) != bytes else { return }
        let s = Array(stored)
        let at = s.indices.first { $0 >= bytes.count || s[$0] != bytes[$0] } ?? s.count
        XCTFail("""
            the encoding of \(name) changed (first difference at byte \(at); \(stored.count) bytes stored, \(bytes.count) written): \
            a format change needs a version bump and a reader for the old version; see docs/BUNDLE_FORMAT.md
            """, file: file, line: line)
    }

    /// The whole file (header, sections, weights, checksum) of the reference test graph.
    func testContainerBytesAreGolden() throws {
        let bytes = try BundleWriter.serialize(try makeTestGraph(), producer: "mlconv golden", source: "test")
        try compare(bytes, golden: "test_graph_format2.0.mlbundle")
    }

    /// Each op kind's samples as one graph; the model section (JSON) is compared, so the golden
    /// files read as documentation of each op's attributes.
    func testEveryOpKindsEncodingIsGolden() throws {
        for kind in OpKind.allCases {
            let graph = try OpSamples.graph(for: kind)
            let bytes = try BundleWriter.serialize(graph, producer: "mlconv golden", source: "test")
            let model = Array(bytes[Layout(bytes).model])
            try compare(model + Array("\n".utf8), golden: "ops/\(kind.rawValue).json")
            // And it loads back to the same graph.
            let dir = try makeTemporaryDirectory(self)
            let url = dir.appendingPathComponent("\(kind.rawValue).mlbundle")
            try Data(bytes).write(to: url)
            let loaded = try BundleFile(contentsOf: url).graph
            XCTAssertEqual(loaded.nodes.map(\.op), graph.nodes.map(\.op), "\(kind)")
        }
    }
}

/// Bundles written by format 1.0 (Fixtures/bundles/*_format1.0.mlbundle) still load and predict.
final class LegacyBundleTests: XCTestCase {
    static let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures")

    func testDigitsBundleOfFormat1Predicts7() throws {
        let bundle = try BundleFile(contentsOf: Self.root.appendingPathComponent("bundles/digits_cnn_format1.0.mlbundle"))
        XCTAssertEqual(bundle.formatVersion, BundleFormatVersion(major: 1, minor: 0))
        let model = try Model(graph: bundle.graph)
        let x = try NPY.read(contentsOf: Self.root.appendingPathComponent("demo/digit_7.npy"))
        let input = try x.reshaped(bundle.graph.inputs[0].type.shape)
        let out = try model.prediction(from: [bundle.graph.inputs[0].name: input])
        let probs = try XCTUnwrap(out[bundle.graph.outputs[0]]).scalars
        XCTAssertEqual(probs.indices.max { probs[$0] < probs[$1] }, 7)
        XCTAssertGreaterThan(probs[7], 0.99)
    }

    func testKerasFixtureBundlesOfFormat1MatchKeras() throws {
        for name in ["advanced_activations_k2", "lstm_variants_k2", "pad_crop_upsample_k2"] {
            let bundle = try BundleFile(contentsOf: Self.root.appendingPathComponent("bundles/\(name)_format1.0.mlbundle"))
            XCTAssertEqual(bundle.formatVersion.major, 1)
            let model = try Model(graph: bundle.graph)
            let dir = Self.root.appendingPathComponent("keras/\(name)")
            var feeds: [String: NDArray] = [:]
            for (i, input) in bundle.graph.inputs.enumerated() {
                feeds[input.name] = try NPY.read(contentsOf: dir.appendingPathComponent("input_\(i).npy")).reshaped(input.type.shape)
            }
            let out = try model.prediction(from: feeds)
            for (i, name) in bundle.graph.outputs.enumerated() {
                let expected = try NPY.read(contentsOf: dir.appendingPathComponent("output_\(i).npy"))
                let got = try XCTUnwrap(out[name])
                XCTAssertEqual(got.count, expected.count, name)
                assertClose(got.scalars, expected.scalars, tolerance: 1e-4)
            }
            // Rewritten, a legacy bundle becomes a current one with the same graph.
            let dirOut = try makeTemporaryDirectory(self)
            let url = dirOut.appendingPathComponent("re.mlbundle")
            try BundleWriter.write(bundle.graph, to: url, producer: "mlconv test", source: "legacy")
            let again = try BundleFile(contentsOf: url)
            XCTAssertEqual(again.formatVersion, BundleFormat.currentVersion)
            XCTAssertEqual(again.graph.nodes.map(\.op), bundle.graph.nodes.map(\.op))
        }
    }
}
