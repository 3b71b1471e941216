import CoreMLFormat
import Foundation
import MLConvCLI
import TestSupport
import XCTest

/// `mlconv update`: loss per epoch, the written model (updatable, weights as the NumPy update
/// of Fixtures/update), training data as JSON, CSV and image folders, typed refusals.
final class UpdateCommandTests: XCTestCase {
    let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update")

    func testUpdateWritesTheTrainedModel() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("Personal.mlmodel").path
        let r = CLIRun(["update", root.appendingPathComponent("dense_mse_adam/model.mlmodel").path,
                        "--training-data", root.appendingPathComponent("dense_mse_adam/examples.json").path, "-o", out])
        XCTAssertEqual(r.status, 0, r.err)
        // Loss lines match the NumPy reference's epoch losses (6 decimals printed).
        struct Case: Decodable { var epochLoss: [Double] }
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: root.appendingPathComponent("dense_mse_adam/case.json")))
        let printed = r.out.split(separator: "\n").filter { $0.hasPrefix("epoch ") }.compactMap { Double($0.split(separator: " ").last ?? "") }
        XCTAssertEqual(printed.count, c.epochLoss.count, r.out)
        for (a, b) in zip(printed, c.epochLoss) { XCTAssertEqual(a, b, accuracy: 2e-6, r.out) }
        let m = try Spec.Model.load(contentsOf: out)
        XCTAssertTrue(m.isUpdatable)
        XCTAssertNotNil(try m.neuralNetwork?.updateParameters()?.optimizer)
    }

    func testCSVTrainingData() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        // dense_ce_sgd's examples as CSV: x is a 4-vector, so it is given as JSON text in one cell.
        let rows = try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("dense_ce_sgd/examples.json"))) as! [[String: Any]]
        var csv = "x,label\n"
        for row in rows {
            let x = (row["x"] as! [Double]).map { "\($0)" }.joined(separator: ",")
            csv += "\"[\(x)]\",\(row["label"] as! String)\n"
        }
        let csvPath = dir.appendingPathComponent("examples.csv").path
        try csv.write(toFile: csvPath, atomically: true, encoding: .utf8)
        let outCSV = dir.appendingPathComponent("a.mlmodel").path, outJSON = dir.appendingPathComponent("b.mlmodel").path
        let model = root.appendingPathComponent("dense_ce_sgd/model.mlmodel").path
        let a = CLIRun(["update", model, "--training-data", csvPath, "-o", outCSV, "--epochs", "1"])
        XCTAssertEqual(a.status, 0, a.err)
        let b = CLIRun(["update", model, "--training-data", root.appendingPathComponent("dense_ce_sgd/examples.json").path,
                        "-o", outJSON, "--epochs", "1"])
        XCTAssertEqual(b.status, 0, b.err)
        XCTAssertEqual(try Spec.Model.load(contentsOf: outCSV), try Spec.Model.load(contentsOf: outJSON))
    }

    func testNonUpdatableModelIsRefused() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        var m = try Spec.Model.load(contentsOf: root.appendingPathComponent("dense_ce_sgd/model.mlmodel").path)
        m.isUpdatable = false
        let path = dir.appendingPathComponent("frozen.mlmodel").path
        try m.write(toFile: path)
        let out = dir.appendingPathComponent("never.mlmodel").path
        let r = CLIRun(["update", path, "--training-data", root.appendingPathComponent("dense_ce_sgd/examples.json").path, "-o", out])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("not marked updatable"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testEpochsOutsideTheAllowedSetAreRefused() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["update", root.appendingPathComponent("dense_ce_sgd/model.mlmodel").path,
                        "--training-data", root.appendingPathComponent("dense_ce_sgd/examples.json").path,
                        "-o", dir.appendingPathComponent("x.mlmodel").path, "--epochs", "7"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("epochs") && r.err.contains("allowed values [1, 3]"), r.err)
    }
}
