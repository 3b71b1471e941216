import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph

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
