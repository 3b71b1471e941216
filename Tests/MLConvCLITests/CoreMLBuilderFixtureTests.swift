// The small models coremltools' NeuralNetworkBuilder wrote for each layer type the Core ML
// writer emits (Fixtures/coreml, made by `Scripts/check_mlmodel_export.py fixtures` with NumPy
// reference outputs): each is imported (CoreMLImporter) and run (MLRuntime) against the NumPy
// reference, then written back with CoreMLExporter, re-imported and run again.
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class CoreMLBuilderFixtureTests: XCTestCase {
    struct Manifest: Decodable {
        struct IO: Decodable { var name: String; var file: String; var shape: [Int]; var image: Bool? }
        struct Entry: Decodable {
            var name: String
            var notes: String
            var specificationVersion: Int32
            var layers: [String]
            var tolerance: Float
            var inputs: [IO]
            var outputs: [IO]
        }
        var fixtures: [Entry]
    }

    static let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/coreml")

    static func manifest() throws -> Manifest {
        let url = dir.appendingPathComponent("manifest.json")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("\(url.path) is missing (run Scripts/check_mlmodel_export.py fixtures)")
        }
        return try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
    }

    /// The fixture's inputs in the imported graph's layout: [C, H, W] arrays → [1, C, H, W],
    /// [D] → [1, D], images [C, H, W] → NHWC [1, H, W, C].
    static func feeds(_ e: Manifest.Entry, for graph: Graph) throws -> [String: NDArray] {
        var out: [String: NDArray] = [:]
        for i in e.inputs {
            let a = try NPY.read(contentsOf: dir.appendingPathComponent(i.file))
            guard let t = graph.inputs.first(where: { $0.name == i.name })?.type else { continue }
            if i.image == true, a.rank == 3 {
                let (c, h, w) = (a.shape[0], a.shape[1], a.shape[2])
                var s = [Float](repeating: 0, count: a.count)
                for k in 0..<c { for y in 0..<h { for x in 0..<w { s[(y * w + x) * c + k] = a.scalars[(k * h + y) * w + x] } } }
                out[i.name] = try NDArray(shape: [1, h, w, c], scalars: s)
            } else {
                out[i.name] = try a.reshaped(t.shape)
            }
        }
        return out
    }

    /// Runs `graph` on the fixture and returns the worst error relative to max(1, max|ref|).
    static func run(_ graph: Graph, _ e: Manifest.Entry) throws -> Float {
        let got = try Model(graph: graph).prediction(from: try feeds(e, for: graph))
        var worst: Float = 0
        for o in e.outputs {
            let ref = try NPY.read(contentsOf: dir.appendingPathComponent(o.file))
            guard let g = got[o.name] else { throw XCTSkip("output \(o.name) missing; have \(got.keys.sorted())") }
            guard g.count == ref.count else { return .infinity }
            let scale = max(1, ref.scalars.map(abs).max() ?? 0)
            worst = max(worst, maxAbsDiff(g.scalars, ref.scalars) / scale)
        }
        return worst
    }

    /// Fixtures whose layer CoreMLImporter does not import yet (reported, not failed; they run
    /// as soon as the importer takes them).
    static let importerGaps: [String: String] = [
        "resize_bilinear_align_corners": "CoreMLImporter rejects resizeBilinear (the writer emits it for align-corners upsampling)",
    ]

    func testBuilderFixturesImportRunAndRoundTripThroughTheWriter() throws {
        let m = try Self.manifest()
        var lines: [String] = []
        for e in m.fixtures {
            let spec = try Spec.Model.load(contentsOf: Self.dir.appendingPathComponent("\(e.name)/model.mlmodel").path)
            let graph: Graph
            do {
                graph = try CoreMLImporter.graph(from: spec, fileName: e.name + ".mlmodel")
            } catch {
                if let gap = Self.importerGaps[e.name] {
                    lines.append("\(e.name): SKIPPED, \(gap)")
                } else {
                    XCTFail("\(e.name): import failed: \(error)")
                }
                continue
            }
            let err = try Self.run(graph, e)
            XCTAssertLessThanOrEqual(err, e.tolerance, "\(e.name) (\(e.notes)): imported model differs from the NumPy reference by \(err)")
            // Through the writer and back.
            do {
                let r = try CoreMLExporter.export(graph)
                let back = try CoreMLImporter.graph(from: try Spec.Model.decode(r.model.encode()), fileName: e.name + ".export.mlmodel")
                let err2 = try Self.run(back, e)
                XCTAssertLessThanOrEqual(err2, e.tolerance, "\(e.name): after CoreMLExporter the model differs from the NumPy reference by \(err2)")
                let ours = r.model.neuralNetwork?.layers.map(\.layer.typeName) ?? []
                lines.append("\(e.name): builder spec \(e.specificationVersion) [\(e.layers.joined(separator: ", "))] → "
                    + "mlconv spec \(r.model.specificationVersion) [\(ours.joined(separator: ", "))], err \(err) / \(err2)")
            } catch let x as CoreMLExportError {
                XCTFail("\(e.name): the writer rejects the imported graph: \(x)")
            }
        }
        print("CoreMLBuilderFixtureTests:\n  " + lines.joined(separator: "\n  "))
    }
}
