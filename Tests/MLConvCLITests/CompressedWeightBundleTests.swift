// Compressed ML program weights kept compressed in the bundle (issue 11): every compressed
// fixture of Scripts/make_mlprogram_fixtures.py (coremltools.optimize.coreml: linear, blockwise,
// palettized, grouped palettes, pruned, pruned + palettized / quantized) compiles to a format-2.1
// bundle whose weight section is the compressed size, and predicts bit for bit as the graph whose
// constexpr results are expanded to float32 (what the importer built before) and within 1e-4 of
// the NumPy reference of coremltools' own decompression.
import CoreMLFormat
import Foundation
import MLBundle
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class CompressedWeightBundleTests: XCTestCase {
    private func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-compressed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }

    private func importPackage(_ package: URL) throws -> Graph {
        let spec = try Spec.Model.load(contentsOf: package.path)
        let root = try MLPackage.read(at: package.path).rootModelPath
        return try MILImporter.importModel(spec, fileName: package.lastPathComponent,
                                           modelPath: (root as NSString).deletingLastPathComponent).graph
    }

    /// The graph with every constant expanded to float32.
    private func expanded(_ g: Graph) -> Graph {
        var out = g
        for i in out.nodes.indices {
            for (k, w) in out.nodes[i].weights { out.nodes[i].weights[k] = ConstantTensor(shape: w.shape, floats: w.floats()) }
        }
        return out
    }

    private func fixtures() throws -> [URL] {
        let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("compressed_") }.sorted()
            .map { dir.appendingPathComponent($0) }
    }

    func testCompressedFixturesStayCompressedAndPredictExactly() throws {
        let cases = try fixtures()
        XCTAssertEqual(cases.count, 10, "the compressed fixtures of make_mlprogram_fixtures.py")
        let dir = try tempDir()
        for d in cases {
            let name = d.lastPathComponent
            let pkg = d.appendingPathComponent("model.mlpackage")
            let graph = try importPackage(pkg)
            let weights = graph.nodes.flatMap { $0.weights.values }
            let compressed = weights.filter { $0.encoding.isFormat21Encoding }
            // coremltools leaves the 5-channel linear weight alone with groups of 4 channels.
            XCTAssertEqual(compressed.count, name.hasSuffix("grouped") ? 1 : 2,
                           "\(name): the conv and linear weights stay compressed (\(weights.map(\.encoding)))")
            let fp32Bytes = compressed.reduce(0) { $0 + 4 * $1.elementCount }

            let url = dir.appendingPathComponent(name + ".mlbundle")
            try BundleWriter.write(graph, to: url, producer: "mlconv test", source: name)
            let bundle = try BundleFile(contentsOf: url)
            XCTAssertEqual(bundle.formatVersion, BundleFormat.compressedWeightsVersion, name)
            // The weight section is about the package's own compressed weight file (both align
            // each blob to 64 bytes).
            let blob = try XCTUnwrap(FileManager.default.attributesOfItem(
                atPath: pkg.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin").path)[.size] as? Int)
            let section = bundle.weightSection.count
            print("CompressedWeightBundleTests \(name): weight section \(section) B (compressed constants \(compressed.reduce(0) { $0 + $1.encodedByteCount }) B), package weight.bin \(blob) B, fp32 \(fp32Bytes) B, "
                  + "bundle \(bundle.fileSize) B, encodings \(compressed.map(\.encoding.description))")
            XCTAssertLessThanOrEqual(section, blob + 64 * weights.count, "\(name): weight section vs the package's weight.bin")
            let compressedBytes = compressed.reduce(0) { $0 + $1.encodedByteCount }
            if !name.hasSuffix("_prune") {  // pruning alone keeps 62 % of the values in float32
                XCTAssertLessThan(Double(compressedBytes), 0.4 * Double(fp32Bytes), "\(name): compressed bytes vs the fp32 expansion")
            } else {
                XCTAssertLessThan(Double(compressedBytes), 0.8 * Double(fp32Bytes), "\(name): compressed bytes vs the fp32 expansion")
            }

            let x = try NPY.read(contentsOf: d.appendingPathComponent("input_x_in.npy"))
            let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_y.npy"))
            let fromBundle = try XCTUnwrap(Model(graph: bundle.graph).prediction(from: ["x_in": x])["y"], name)
            let fromPackage = try XCTUnwrap(Model(graph: graph).prediction(from: ["x_in": x])["y"], name)
            let fromFP32 = try XCTUnwrap(Model(graph: expanded(graph)).prediction(from: ["x_in": x])["y"], name)
            XCTAssertEqual(fromBundle.scalars, fromFP32.scalars, "\(name): bundle vs float32-expanded weights")
            XCTAssertEqual(fromBundle.scalars, fromPackage.scalars, "\(name): bundle vs package")
            let scale = max(expected.scalars.map { abs($0) }.max() ?? 0, 1e-6)
            let err = zip(fromBundle.scalars, expected.scalars).map { abs($0 - $1) }.max() ?? .infinity
            XCTAssertLessThanOrEqual(err / scale, 1e-4, "\(name): vs the NumPy reference")
            // The expanded values are those of the float32 graph, element for element.
            for (w, e) in zip(compressed, compressed.map { ConstantTensor(shape: $0.shape, floats: $0.floats()) }) {
                XCTAssertEqual(w.floats(), e.floats(), name)
            }
        }
    }

    /// `mlconv compile` writes the compressed bundle; `predict` on it equals `predict` on the package.
    func testCompileCLIWritesACompressedBundle() throws {
        let dir = try tempDir()
        let d = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram/compressed_ios18_linear4_block")
        let pkg = d.appendingPathComponent("model.mlpackage").path
        let bundle = dir.appendingPathComponent("m.mlbundle").path
        let c = CLIRun(["compile", pkg, "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: bundle)[.size] as? Int)
        // conv 8×4×3×3 + linear 5×128 in float32 alone would be 3 712 bytes of weights.
        XCTAssertLessThan(size, 3712, "the bundle (JSON included) is smaller than the fp32 weights alone")
        let input = "x_in=" + d.appendingPathComponent("input_x_in.npy").path
        let p1 = CLIRun(["predict", pkg, "--input", input, "--output-dir", dir.appendingPathComponent("pkg").path])
        XCTAssertEqual(p1.status, 0, p1.err)
        let p2 = CLIRun(["predict", bundle, "--input", input, "--output-dir", dir.appendingPathComponent("bundle").path])
        XCTAssertEqual(p2.status, 0, p2.err)
        let a = try NPY.read(contentsOf: dir.appendingPathComponent("pkg/y.npy")).scalars
        let b = try NPY.read(contentsOf: dir.appendingPathComponent("bundle/y.npy")).scalars
        XCTAssertEqual(a, b)
        let i = CLIRun(["inspect", bundle])
        XCTAssertTrue(i.out.contains("formatVersion: 2.1"), i.out)
        XCTAssertTrue(i.out.contains("4-bit signed blockwise"), i.out)
    }
}
