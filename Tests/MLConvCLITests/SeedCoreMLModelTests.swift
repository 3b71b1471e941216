// The seed's two image classifiers as small look-alikes (Fixtures/seed_coreml, made by
// Scripts/make_seed_coreml_models.py with coremltools 7.2's NeuralNetworkBuilder and seeded
// weights): a Places205-GoogLeNet-style network (BGR image, per-pixel mean image, LRN, inception
// modules with channel concat, 205 labels) and a ResNet50-style network (BGR image with channel
// biases, bottleneck blocks with batchnorm and residual adds, 1000 labels). The expected
// probabilities are NumPy float64 evaluations of NeuralNetwork.proto's layer formulas on a stored
// raw pixel array; the CLI part classifies a real photo from ../shared/images with a centre crop.
import CoreMLFormat
import Foundation
import MLConvCLI
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class SeedCoreMLModelTests: XCTestCase {
    static let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/seed_coreml")

    /// (fixture directory, number of labels, photo in ../shared/images)
    static let models = [("googlenet_places205_lookalike", 205, "images/london_big-ben.jpg"),
                         ("resnet50_lookalike", 1000, "images/giraffe.jpg")]

    func file(_ model: String, _ name: String) -> URL {
        Self.dir.appendingPathComponent(model).appendingPathComponent(name)
    }

    func testEachModelMatchesItsNumPyReferenceOnTheStoredPixels() throws {
        for (name, classes, _) in Self.models {
            let spec = try Spec.Model.load(contentsOf: file(name, "model.mlmodel").path)
            let graph = try CoreMLImporter.graph(from: spec, fileName: name + ".mlmodel")
            XCTAssertEqual(graph.description.classLabels?.count, classes, name)
            let probsName = try XCTUnwrap(graph.description.probabilitiesOutput, name)
            let pixels = try NPY.read(contentsOf: file(name, "input_image.npy"))
            XCTAssertEqual(pixels.shape, [1, 224, 224, 3], name)
            XCTAssertEqual(graph.inputs.map(\.name), ["image"], name)
            let got = try Model(graph: graph).prediction(from: ["image": pixels])
            let probs = try XCTUnwrap(got[probsName], "\(name): no output \(probsName); have \(got.keys.sorted())")
            let ref = try NPY.read(contentsOf: file(name, "expected_probabilities.npy"))
            XCTAssertEqual(probs.count, classes, name)
            XCTAssertEqual(ref.count, classes, name)
            var worst = 0.0
            for (g, r) in zip(probs.scalars, ref.scalars) { worst = max(worst, abs(Double(g) - Double(r))) }
            XCTAssertLessThanOrEqual(worst, 1e-4, "\(name): largest |probability − NumPy reference| = \(worst)")
            // The reference is not degenerate: its top class is well below 1, so the check sees the whole network.
            XCTAssertLessThan(ref.scalars.map { Double($0) }.max() ?? 1, 0.5, name)
        }
    }

    func testPredictOnARealPhotoWithCenterCropPrintsFiveRankedLabels() throws {
        for (name, classes, photoPath) in Self.models {
            let photo = try TestPaths.sharedFile(photoPath)  // XCTSkip naming the file when ../shared is absent
            let labels = try String(contentsOf: file(name, "labels.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
            XCTAssertEqual(labels.count, classes)
            let r = CLIRun(["predict", file(name, "model.mlmodel").path, "--input", "image=" + photo.path, "--crop", "center"])
            XCTAssertEqual(r.status, 0, "\(name): \(r.err)")
            // Ranked lines "  k. <label>  <probability>", k = 1…5, probabilities not increasing.
            let ranked = r.out.split(separator: "\n").compactMap { line -> (Int, String, Double)? in
                let parts = line.split(separator: " ")
                guard parts.count == 3, parts[0].hasSuffix("."), let k = Int(parts[0].dropLast()),
                      let p = Double(parts[2]) else { return nil }
                return (k, String(parts[1]), p)
            }
            XCTAssertEqual(ranked.map(\.0), [1, 2, 3, 4, 5], "\(name): \(r.out)")
            XCTAssertTrue(ranked.allSatisfy { labels.contains($0.1) }, "\(name): \(r.out)")
            XCTAssertEqual(Set(ranked.map(\.1)).count, 5, "\(name): \(r.out)")
            XCTAssertTrue(zip(ranked, ranked.dropFirst()).allSatisfy { $0.2 >= $1.2 }, "\(name): \(r.out)")
            XCTAssertTrue(ranked.allSatisfy { $0.2 > 0 && $0.2 < 1 }, "\(name): \(r.out)")
        }
    }
}
