import CoreMLFormat
import ImageIO
import Foundation
import MLConvCLI
import TestSupport
import XCTest

/// `mlconv update --add-loss`: the explicit repair of updatable networks without a loss layer
/// (Fixtures/update/repair_*, the corpus' archdanny digit classifier), and its refusals.
final class UpdateRepairCommandTests: XCTestCase {
    let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update")

    /// archdanny: refused by default (as Core ML refuses it); with --add-loss cross-entropy it
    /// trains on a folder of 8×8 grayscale digit PNGs (ink 16 on 0, scikit-learn's digit scale), predicts, and the written model updates
    /// again with a plain `mlconv update`.
    func testCorpusDigitClassifierRepairUpdatePredictUpdate() throws {
        let model = try TestPaths.sharedFile("corpus/mlmodel/archdanny_newcoreml.mlmodel")
        guard FileManager.default.fileExists(atPath: model.path) else { throw XCTSkip("skipped: \(model.path) not found") }
        let dir = try TestPaths.temporaryDirectory(for: self)
        let data = dir.appendingPathComponent("digits")
        let glyphs: [String: [String]] = [
            "0": ["..####..", ".#....#.", ".#....#.", ".#....#.", ".#....#.", ".#....#.", "..####..", "........"],
            "1": ["...##...", "..###...", "...##...", "...##...", "...##...", "...##...", "..####..", "........"],
            "7": [".######.", "......#.", ".....#..", "....#...", "...#....", "...#....", "...#....", "........"],
        ]
        for (label, g) in glyphs {
            let sub = data.appendingPathComponent(label)
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            for shift in 0..<2 {
                var px = [UInt8](repeating: 0, count: 64)
                for (y, row) in g.enumerated() { for (x, ch) in row.enumerated() where ch == "#" { px[y * 8 + min(7, x + shift)] = 16 } }
                try ImageCodec.writePNG(Image(width: 8, height: 8, channels: 1, pixels: px), to: sub.appendingPathComponent("\(shift).png"))
            }
        }
        let personal = dir.appendingPathComponent("Personal.mlmodel").path
        let refused = CLIRun(["update", model.path, "--training-data", data.path, "-o", personal])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.err.contains("the update parameters have no loss layer; to add one as coremltools would have, give --add-loss"), refused.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: personal))

        let r = CLIRun(["update", model.path, "--training-data", data.path, "-o", personal, "--add-loss", "cross-entropy"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("added loss layer 'lossLayer' (categoricalCrossEntropy of 'output' vs 'output_true'); training inputs image, classLabel"), r.out)
        XCTAssertTrue(r.out.contains("6 examples, 1 epoch(s), mini-batch 16, Adam"), r.out)
        let written = try Spec.Model.load(contentsOf: personal)
        XCTAssertEqual(written.specificationVersion, 4)
        XCTAssertEqual(try written.neuralNetwork?.updateParameters()?.lossLayers.map(\.name), ["lossLayer"])

        let p = CLIRun(["predict", personal, "--input", "image=" + data.appendingPathComponent("7/0.png").path])
        XCTAssertEqual(p.status, 0, p.err)
        XCTAssertTrue(p.out.contains("1. 7 "), p.out)  // the taught label of this image ranks first

        let again = dir.appendingPathComponent("Again.mlmodel").path
        let r2 = CLIRun(["update", personal, "--training-data", data.path, "-o", again])
        XCTAssertEqual(r2.status, 0, r2.err)
        XCTAssertFalse(r2.out.contains("added loss layer"), r2.out)
        XCTAssertTrue(FileManager.default.fileExists(atPath: again))
    }

    /// The repaired fixture trains one epoch with the NumPy reference's loss, and its output
    /// updates again without flags.
    func testRepairedFixtureLossMatchesTheReference() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("a.mlmodel").path
        let data = root.appendingPathComponent("repair_dense_mse/examples.json").path
        let r = CLIRun(["update", root.appendingPathComponent("repair_dense_mse/model.mlmodel").path, "--training-data", data,
                        "-o", out, "--add-loss", "mse", "--loss-input", "y", "--target", "y_true"])
        XCTAssertEqual(r.status, 0, r.err)
        struct Case: Decodable { var epochLoss: [Double] }
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: root.appendingPathComponent("repair_dense_mse/case.json")))
        let printed = r.out.split(separator: "\n").filter { $0.hasPrefix("epoch ") }.compactMap { Double($0.split(separator: " ").last ?? "") }
        XCTAssertEqual(printed.count, 1, r.out)
        XCTAssertEqual(printed.first ?? .nan, c.epochLoss[0], accuracy: 2e-6, r.out)
        let r2 = CLIRun(["update", out, "--training-data", data, "-o", dir.appendingPathComponent("b.mlmodel").path])
        XCTAssertEqual(r2.status, 0, r2.err)
    }

    func testRefusals() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("never.mlmodel").path
        let ce = root.appendingPathComponent("repair_dense_ce").path
        // A model that has its loss layer: nothing to repair.
        let a = CLIRun(["update", ce + "/coremltools.mlmodel", "--training-data", ce + "/examples.json", "-o", out, "--add-loss", "cross-entropy"])
        XCTAssertEqual(a.status, 1)
        XCTAssertTrue(a.err.contains("already has a loss layer ('lossLayer'); there is nothing to repair"), a.err)
        // Cross-entropy on a blob that is not a softmax output.
        let b = CLIRun(["update", ce + "/model.mlmodel", "--training-data", ce + "/examples.json", "-o", out,
                        "--add-loss", "cross-entropy", "--loss-input", "logits"])
        XCTAssertEqual(b.status, 1)
        XCTAssertTrue(b.err.contains("input 'logits' is not generated from a softmax output"), b.err)
        // Usage.
        let c = CLIRun(["update", ce + "/model.mlmodel", "--training-data", ce + "/examples.json", "-o", out, "--add-loss", "hinge"])
        XCTAssertEqual(c.status, 2, c.err)
        XCTAssertTrue(c.err.contains("--add-loss takes cross-entropy or mse"), c.err)
        let d = CLIRun(["update", ce + "/model.mlmodel", "--training-data", ce + "/examples.json", "-o", out, "--loss-input", "probs"])
        XCTAssertTrue(d.err.contains("give --add-loss too"), d.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        let h = CLIRun(["update", "--help"])
        XCTAssertTrue(h.out.contains("--add-loss KIND"), h.out + h.err)
    }
}
