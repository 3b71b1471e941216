import CoreMLFormat
import ImageIO
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
        XCTAssertEqual(r.status, 4)  // unsupported model (issue 13 exit codes)
        XCTAssertTrue(r.err.contains("not marked updatable"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testEpochsOutsideTheAllowedSetAreRefused() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["update", root.appendingPathComponent("dense_ce_sgd/model.mlmodel").path,
                        "--training-data", root.appendingPathComponent("dense_ce_sgd/examples.json").path,
                        "-o", dir.appendingPathComponent("x.mlmodel").path, "--epochs", "7"])
        XCTAssertEqual(r.status, 2)  // usage (issue 13 exit codes)
        XCTAssertTrue(r.err.contains("epochs") && r.err.contains("allowed values [1, 3]"), r.err)
    }
}

/// `mlconv update --training-data DIR` (one sub-folder of PNG images per label, as Create ML lays
/// out image data) against the NumPy update of Fixtures/update/image_folder_dense_ce_sgd.
final class UpdateImageFolderTests: XCTestCase {
    func testImageFolderTrainingDataMatchesTheReference() throws {
        let fixture = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update/image_folder_dense_ce_sgd")
        let images = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: fixture.appendingPathComponent("images.json"))) as? [String: [[Int]]])
        let dir = try TestPaths.temporaryDirectory(for: self)
        let data = dir.appendingPathComponent("examples")
        for (label, list) in images {
            let sub = data.appendingPathComponent(label)
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            for (i, px) in list.enumerated() {
                let img = Image(width: 4, height: 4, channels: 1, pixels: px.map { UInt8($0) })
                try ImageCodec.writePNG(img, to: sub.appendingPathComponent(String(format: "%02d.png", i)))
            }
        }
        // A stray non-image file is ignored, as Create ML ignores it.
        try "notes".write(to: data.appendingPathComponent("circle/readme.txt"), atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("Personal.mlmodel").path
        let r = CLIRun(["update", fixture.appendingPathComponent("model.mlmodel").path, "--training-data", data.path, "-o", out])
        XCTAssertEqual(r.status, 0, r.err)

        struct Case: Decodable {
            struct W: Decodable { var weight: [Double]; var bias: [Double]? }
            var epochLoss: [Double]
            var afterLastEpoch: [String: W]
        }
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: fixture.appendingPathComponent("case.json")))
        let printed = r.out.split(separator: "\n").filter { $0.hasPrefix("epoch ") }.compactMap { Double($0.split(separator: " ").last ?? "") }
        XCTAssertEqual(printed.count, c.epochLoss.count, r.out)
        for (a, b) in zip(printed, c.epochLoss) { XCTAssertEqual(a, b, accuracy: 2e-6, r.out) }
        let m = try Spec.Model.load(contentsOf: out)
        let fc = try XCTUnwrap(m.neuralNetwork?.layers.first { $0.name == "fc" })
        guard case let .innerProduct(p) = fc.layer else { return XCTFail("fc is not innerProduct") }
        let want = try XCTUnwrap(c.afterLastEpoch["fc"])
        let got = p.weights?.floatValue ?? []
        XCTAssertEqual(got.count, want.weight.count)
        let scale = want.weight.map(abs).max() ?? 1
        for (g, w) in zip(got, want.weight) { XCTAssertEqual(Double(g), w, accuracy: 1e-5 * scale) }
        for (g, w) in zip(p.bias?.floatValue ?? [], want.bias ?? []) { XCTAssertEqual(Double(g), w, accuracy: 1e-5 * scale) }
    }
}

final class UpdateInspectTests: XCTestCase {
    /// `inspect` decodes the update parameters (loss, optimizer and its hyper-parameters, epochs).
    func testInspectShowsTheUpdateParameters() throws {
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update/conv_ce_adam/model.mlmodel").path
        let r = CLIRun(["inspect", model])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("loss categoricalCrossEntropy(y vs y_true), Adam lr 0.01, batch 3, beta1 0.9, beta2 0.999, eps 1e-08, epochs 3, shuffle off"), r.out)
        let j = CLIRun(["inspect", model, "--json"])
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        let nn = try XCTUnwrap(obj["neuralNetwork"] as? [String: Any])
        let u = try XCTUnwrap(nn["updateParameters"] as? [String: Any], "\(nn.keys.sorted())")
        XCTAssertEqual((u["optimizer"] as? [String: Any])?["kind"] as? String, "adam")
    }
}

final class UpdateNearestNeighborsCLITests: XCTestCase {
    /// Regressions: a kNN update printed SGD settings and ignored --epochs; inspect listed one
    /// class label per stored sample.
    func testKNNUpdateSaysWhatItDoesAndRefusesTrainingOptions() throws {
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/knn_linear_k3_uniform_int64/model.mlmodel").path
        let dir = try TestPaths.temporaryDirectory(for: self)
        let inspect = CLIRun(["inspect", model, "--json"])
        let before = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(inspect.out.utf8)) as? [String: Any])
        let labels = try XCTUnwrap((before["classLabels"] as? [String: Any])?["first"] as? [Any], "\(before.keys.sorted())")
        XCTAssertEqual(Set(labels.map { "\($0)" }).count, labels.count, "class labels are listed once each: \(labels)")
        let examples = dir.appendingPathComponent("e.json")
        let spec = try Spec.Model.load(contentsOf: model)
        let inName = try XCTUnwrap(spec.description?.trainingInput.first?.name ?? spec.description?.input.first?.name)
        let label = try XCTUnwrap(spec.description?.predictedFeatureName)
        try "[{\"\(inName)\": [0.5, 0.5], \"\(label)\": 7}]".write(to: examples, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("k.mlmodel").path
        let r = CLIRun(["update", model, "--training-data", examples.path, "-o", out])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("1 example added to the k-nearest-neighbours index"), r.out)
        XCTAssertFalse(r.out.contains("SGD"), r.out)
        let e = CLIRun(["update", model, "--training-data", examples.path, "-o", out, "--epochs", "5"])
        XCTAssertEqual(e.status, 2)
        XCTAssertTrue(e.err.contains("--epochs does not apply to a k-nearest-neighbours classifier"), e.err)
    }
}
