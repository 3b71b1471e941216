import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Paths and helpers shared by the KerasFrontend tests.
enum KerasTestPaths {
    /// The repository root: three levels above this file (Tests/KerasFrontendTests/…).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Fixtures/keras`.
    static let fixtures = repositoryRoot.appendingPathComponent("Fixtures/keras")

    /// `<repo>/../shared` (real third-party models; read-only, never copied into the repository).
    static let shared = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")

    /// A file under `shared/`, or an `XCTSkip` with a visible message when it is absent.
    static func sharedFile(_ relative: String) throws -> URL {
        let url = shared.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("real-model test skipped: \(url.path) not found (the shared/ folder next to the repository holds the real models)")
        }
        return url
    }
}

/// Builds small Keras files in memory for unit tests.
struct TinyKeras {
    let file = InMemoryKerasFile(path: "tiny.h5")

    /// A full model: `model_config` JSON, keras_version, and weights per layer (name → [(var, shape, values)]).
    init(config: String, version: String = "2.15.0", weights: [String: [(String, [Int], [Float])]] = [:], layerOrder: [String]? = nil) {
        file.setAttribute("model_config", of: "/", config)
        file.setAttribute("keras_version", of: "/", version)
        file.setAttribute("backend", of: "/", "tensorflow")
        file.addGroup("/model_weights")
        let names = layerOrder ?? weights.keys.sorted()
        file.setAttribute("layer_names", of: "/model_weights", names)
        for n in names {
            file.addGroup("/model_weights/\(n)")
            var wnames: [String] = []
            for (v, shape, values) in weights[n] ?? [] {
                let wn = "\(n)/\(v):0"
                wnames.append(wn)
                file.addDataset("/model_weights/\(n)/\(wn)", shape: shape, values: values)
            }
            file.setAttribute("weight_names", of: "/model_weights/\(n)", wnames)
        }
    }
}

/// Sequential values 0, 1, 2, … scaled, for recognizable weights.
func ramp(_ n: Int, scale: Float = 1) -> [Float] { (0..<n).map { Float($0) * scale } }

/// One fixture of a `manifest.json` (Scripts/make_fixtures.py format).
struct KerasFixture: Decodable {
    struct IO: Decodable { var name: String; var file: String; var shape: [Int]? }
    var name: String
    var flavor: String?
    var kind: String?
    var model: String
    var config: String?
    var inputs: [IO]
    var outputs: [IO]
    var layers: [String]?
    var issue: Int?
    /// Keras 3 fixtures of issue 14: the same model as a native `.keras` archive, and as
    /// `model.weights.h5` + `model.json` (save_weights + to_json).
    var archive: String?
    var weights_h5: String?
    var weights_config: String?
    /// Why Keras itself cannot reload this Keras 3 fixture from `.keras` / weights forms (then absent).
    var no_keras3_forms: String?

    /// The fixtures listed in `dir/manifest.json`, or an XCTSkip when it is missing.
    static func load(_ dir: URL) throws -> [KerasFixture] {
        struct Manifest: Decodable { var fixtures: [KerasFixture] }
        let url = dir.appendingPathComponent("manifest.json")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("Keras fixtures not generated yet: \(url.path) is missing (run Scripts/make_fixtures.py)")
        }
        return try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url)).fixtures
    }
}

/// Runs `graph` on the fixture's inputs and compares every output with Keras':
/// max|ours − Keras| ≤ 1e-4·max(1, max|Keras|). Returns the max error per output.
@discardableResult
func assertParity(_ graph: Graph, _ fx: KerasFixture, dir: URL, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Float] {
    XCTAssertEqual(graph.inputs.map(\.name), fx.inputs.map(\.name), "\(fx.name): input names", file: file, line: line)
    XCTAssertEqual(graph.outputs, fx.outputs.map(\.name), "\(fx.name): output names", file: file, line: line)
    let model = try Model(graph: graph)
    var feeds: [String: NDArray] = [:]
    for i in fx.inputs { feeds[i.name] = try NPY.read(contentsOf: dir.appendingPathComponent(i.file)) }
    let results = try model.prediction(from: feeds)
    var errors: [String: Float] = [:]
    for o in fx.outputs {
        let expected = try NPY.read(contentsOf: dir.appendingPathComponent(o.file))
        guard let got = results[o.name] else {
            XCTFail("\(fx.name): output \(o.name) missing (have \(results.keys.sorted()))", file: file, line: line); continue
        }
        XCTAssertEqual(got.count, expected.count, "\(fx.name): output \(o.name) has shape \(got.shape), Keras \(expected.shape)", file: file, line: line)
        guard got.count == expected.count else { continue }
        let scale = max(1, expected.scalars.map(abs).max() ?? 0)
        var maxErr: Float = 0
        for (a, b) in zip(got.scalars, expected.scalars) {
            if a.isNaN != b.isNaN { maxErr = .infinity } else if !a.isNaN { maxErr = max(maxErr, abs(a - b)) }
        }
        errors[o.name] = maxErr
        print("parity \(fx.name) \(o.name): max|err| = \(maxErr) (tolerance \(1e-4 * scale))")
        XCTAssertLessThanOrEqual(maxErr, 1e-4 * scale,
                                 "\(fx.name): output \(o.name) differs from Keras: max|err| \(maxErr) > tolerance \(1e-4 * scale)",
                                 file: file, line: line)
    }
    return errors
}
