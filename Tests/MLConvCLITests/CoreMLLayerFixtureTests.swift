// The reference fixtures for every NeuralNetworkLayer type (Fixtures/coreml_layers, made by
// Scripts/make_nn_layer_fixtures.py: one NeuralNetworkBuilder model per layer type and variant
// with NumPy outputs from NeuralNetwork.proto's formulas, plus Keras models converted by
// coremltools 8.3 to NeuralNetwork v2). Every case that imports must match its reference within
// the case's tolerance; cases whose layers the importer does not take yet are counted and listed,
// and the number that import may only grow (`minimumImported`).
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class CoreMLLayerFixtureTests: XCTestCase {
    struct Case: Decodable {
        struct IO: Decodable { var name: String; var file: String; var shape: [Int] }
        struct Tolerance: Decodable { var atol: Double; var rtol: Double }
        var name: String
        var layer_type: String
        var layers: [String]
        var version: String
        var tolerance: Tolerance
        var inputs: [IO]
        var outputs: [IO]
    }

    static let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/coreml_layers")

    /// Raise this as layer types land; a lower count means an import regressed.
    static let minimumImported = 294

    static func cases() throws -> [Case] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else {
            throw XCTSkip("\(dir.path) is missing (run Scripts/make_nn_layer_fixtures.py)")
        }
        return try names.sorted().compactMap { n in
            let url = dir.appendingPathComponent(n).appendingPathComponent("case.json")
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return try JSONDecoder().decode(Case.self, from: Data(contentsOf: url))
        }
    }

    /// Runs one case; returns the worst violation of |got − ref| ≤ atol + rtol·|ref| as a ratio
    /// (≤ 1 passes), or throws the import / run error.
    static func run(_ c: Case, graph: Graph) throws -> (ratio: Double, detail: String) {
        var feeds: [String: NDArray] = [:]
        for i in c.inputs {
            let a = try NPY.read(contentsOf: dir.appendingPathComponent(c.name).appendingPathComponent(i.file))
            guard let t = graph.inputs.first(where: { $0.name == i.name })?.type else { continue }
            feeds[i.name] = t.shape.allSatisfy({ $0 >= 0 }) && t.shape.reduce(1, *) == a.count ? try a.reshaped(t.shape) : a
        }
        let got = try Model(graph: graph).prediction(from: feeds)
        var worst = 0.0
        var detail = ""
        for o in c.outputs {
            let ref = try NPY.read(contentsOf: dir.appendingPathComponent(c.name).appendingPathComponent(o.file))
            guard let g = got[o.name] else { return (.infinity, "output \(o.name) missing; have \(got.keys.sorted())") }
            guard g.count == ref.count else { return (.infinity, "output \(o.name): \(g.count) values (shape \(g.shape)), reference \(ref.count) (shape \(ref.shape))") }
            for (x, r) in zip(g.scalars, ref.scalars) {
                let bound = c.tolerance.atol + c.tolerance.rtol * abs(Double(r))
                let diff = x.isNaN && r.isNaN ? 0 : abs(Double(x) - Double(r))
                if diff.isNaN || diff / bound > worst {
                    worst = diff.isNaN ? .infinity : diff / bound
                    detail = "output \(o.name): got \(x), reference \(r)"
                }
            }
        }
        return (worst, detail)
    }

    func testEveryImportedLayerFixtureMatchesItsReference() throws {
        let all = try Self.cases()
        XCTAssertGreaterThan(all.count, 250, "Fixtures/coreml_layers holds \(all.count) cases")
        var imported = 0
        var gaps: [String: [String]] = [:]  // layer type → cases
        for c in all {
            let spec = try Spec.Model.load(contentsOf: Self.dir.appendingPathComponent(c.name).appendingPathComponent("model.mlmodel").path)
            let graph: Graph
            do {
                graph = try CoreMLImporter.graph(from: spec, fileName: c.name + ".mlmodel")
            } catch {
                gaps[c.layer_type, default: []].append(c.name)
                if ProcessInfo.processInfo.environment["MLCONV_FIXTURE_VERBOSE"] != nil { print("not imported: \(c.name): \(error)") }
                continue
            }
            imported += 1
            if c.layer_type == "custom" {
                // A custom layer without an implementation: a typed error naming the class, at load.
                XCTAssertThrowsError(try Self.run(c, graph: graph), c.name) {
                    XCTAssertTrue("\($0)".contains("no registered implementation"), "\(c.name): \($0)")
                }
                continue
            }
            do {
                let (ratio, detail) = try Self.run(c, graph: graph)
                XCTAssertLessThanOrEqual(ratio, 1, "\(c.name) [\(c.layer_type), \(c.version)]: \(detail) (tolerance atol \(c.tolerance.atol), rtol \(c.tolerance.rtol))")
            } catch {
                XCTFail("\(c.name) [\(c.layer_type)]: imports but does not run: \(error)")
            }
        }
        print("CoreMLLayerFixtureTests: \(imported) of \(all.count) cases import; not imported yet (\(all.count - imported)):")
        print("  layer types (\(gaps.count)): " + gaps.keys.sorted().map { "\($0) (\(gaps[$0]!.count))" }.joined(separator: ", "))
        XCTAssertGreaterThanOrEqual(imported, Self.minimumImported, "fewer layer fixtures import than before")
    }
}
