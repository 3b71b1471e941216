import CoreMLFormat
import Foundation
import Diagnostics
import MLBundle
import MLGraph
import MLPrediction
import TestSupport
import XCTest
@testable import MLConvCLI

/// The graph verifier (issue 13) accepts every model of Fixtures/ that imports: each reader
/// (Keras .h5 / .keras / weights + JSON, Core ML NeuralNetwork, ML program) runs `Graph.verify()`
/// on the graph it builds, so a verifier check that rejected a valid graph would show here as a
/// refusal naming a verifier layer. Files refused for other reasons (classical model kinds,
/// deliberately unsupported or damaged fixtures) are counted, not failed.
final class GraphVerifierFixtureTests: XCTestCase {
    /// The model files under Fixtures/ (not Fixtures/crashes/, the crash reproducers): `.mlmodel`
    /// files outside packages, `.mlpackage` directories, `.h5` and `.keras` files.
    private func modelFiles() throws -> [URL] {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures")
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var out: [URL] = []
        for case let url as URL in walker {
            let rel = url.path.dropFirst(root.path.count + 1)
            if rel.hasPrefix("crashes/") { walker.skipDescendants(); continue }
            switch url.pathExtension {
            case "mlpackage": out.append(url); walker.skipDescendants()
            case "mlmodel", "h5", "keras": out.append(url)
            default: break
            }
        }
        return out.sorted { $0.path < $1.path }
    }

    func testEveryFixtureThatImportsVerifies() throws {
        var imported: [String: Int] = [:]
        var refusedOtherwise = 0
        var loadedByPrediction: [String] = []
        for url in try modelFiles() {
            let arch = url.deletingLastPathComponent().appendingPathComponent("arch.json")
            let json = url.lastPathComponent == "weights.h5" && FileManager.default.fileExists(atPath: arch.path) ? arch : nil
            do {
                let g = try loadGraph(url, architectureJSON: json)
                try g.verify()  // the reader ran it already; again on the returned value
                for layer in GraphVerifier.Layer.allCases { try GraphVerifier.verify(g, through: layer) }
                imported[url.pathExtension, default: 0] += 1
            } catch {
                let text = "\(error)"
                XCTAssertFalse(text.contains(" check): "), "\(url.path): the verifier refused a fixture: \(text)")
                refusedOtherwise += 1
                // Classical models and pipelines: their neural-network stages are imported (and
                // verified) by MLPrediction's loader.
                if url.pathExtension == "mlmodel" {
                    do {
                        let spec = try Spec.Model.load(contentsOf: url.path)
                        _ = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: url.lastPathComponent, threadCount: 1,
                                                                                       modelPath: url.deletingLastPathComponent().path))
                        loadedByPrediction.append(url.deletingLastPathComponent().lastPathComponent)
                    } catch {
                        XCTAssertFalse("\(error)".contains(" check): "), "\(url.path): the verifier refused a stage: \(error)")
                    }
                }
            }
        }
        print("GraphVerifierFixtureTests: verified \(imported) (by extension); \(refusedOtherwise) files refused by their reader for other reasons; \(loadedByPrediction.count) of them loaded by MLPrediction")
        // Floors well under today's counts, so the sweep cannot pass by importing nothing.
        XCTAssertGreaterThan(imported["mlmodel"] ?? 0, 300, "\(imported)")
        XCTAssertGreaterThan(imported["mlpackage"] ?? 0, 80, "\(imported)")
        XCTAssertGreaterThan((imported["h5"] ?? 0) + (imported["keras"] ?? 0), 80, "\(imported)")
        // Pipelines with a neural-network stage (imported through CoreMLImporter, hence verified).
        XCTAssertTrue(loadedByPrediction.contains("pipeline_neural_network_knn"), "\(loadedByPrediction)")
        XCTAssertGreaterThan(loadedByPrediction.count, 40, "\(loadedByPrediction)")
    }

    /// The bundle reader runs the verifier: a tensor over the memory limit is refused with the
    /// `MemoryLimitExceeded` naming the file (category resource-limit), not as a damaged file.
    func testBundleReaderRefusesATensorOverTheMemoryLimit() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 1 << 16]))], outputs: ["r"],
                      nodes: [Node(name: "r", op: .activation(.relu), inputs: ["x"], outputs: ["r"])])
        try g.inferShapes()
        let url = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("big.mlbundle")
        try BundleWriter.write(g, to: url, producer: "mlconv test")
        XCTAssertEqual(try BundleFile(contentsOf: url).graph.outputs, ["r"])
        try MemoryLimit.with(128 << 10) {
            XCTAssertThrowsError(try BundleFile(contentsOf: url)) { error in
                guard let m = error as? MemoryLimitExceeded else { return XCTFail("\(error)") }
                XCTAssertEqual(m.file, url.path)
                XCTAssertEqual(m.requestedBytes, 256 << 10)
                XCTAssertTrue(m.what.contains("tensor 'x'"), m.what)
                XCTAssertEqual(Diagnostic(error).category, .resourceLimit)
            }
        }
    }
}
