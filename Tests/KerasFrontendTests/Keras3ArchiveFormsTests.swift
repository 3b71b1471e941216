import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph

/// Every Keras 3 fixture of issue 14 also exists as a native `.keras` archive and as
/// `model.weights.h5` + `model.json` (Scripts/make_fixtures.py `save_keras3_forms`, each reloaded
/// by Keras when written); both forms convert and match Keras' outputs like the `.h5`.
final class Keras3ArchiveFormsTests: XCTestCase {
    func testEveryIssue14Keras3FixtureConvertsFromItsArchiveAndWeightsForms() throws {
        let dir = KerasTestPaths.fixtures
        let all = try KerasFixture.load(dir).filter { $0.issue == 14 && $0.flavor == "keras3" }
        XCTAssertGreaterThanOrEqual(all.count, 11, "issue-14 Keras 3 fixtures in the manifest")
        for var fx in all {
            if let why = fx.no_keras3_forms {
                print("Keras3ArchiveFormsTests: \(fx.name) has no .keras / weights forms: \(why)")
                XCTAssertNil(fx.archive, fx.name)
                continue
            }
            // Several outputs of one layer share its name in Keras; the converter names the k-th "<name>_<k>".
            var seen: [String: Int] = [:]
            for i in fx.outputs.indices {
                let n = fx.outputs[i].name
                if let k = seen[n] { seen[n] = k + 1; fx.outputs[i].name = "\(n)_\(k)" } else { seen[n] = 1 }
            }
            guard let archive = fx.archive, let weights = fx.weights_h5, let config = fx.weights_config else {
                XCTFail("\(fx.name): a Keras 3 fixture of issue 14 must list archive, weights_h5 and weights_config")
                continue
            }
            for (label, model, cfg) in [(".keras", archive, nil), (".weights.h5 + model.json", weights, config as String?)] {
                do {
                    let graph = try KerasConverter().convert(modelAt: dir.appendingPathComponent(model),
                                                             architectureJSON: cfg.map { dir.appendingPathComponent($0) })
                    _ = try assertParity(graph, fx, dir: dir)
                } catch {
                    XCTFail("\(fx.name) (\(label)): \(error)")
                }
            }
        }
    }
}
