// NetworkUpdateRepair: adding the missing loss layer to an updatable network, against
// coremltools' own builder (Fixtures/update/repair_*/coremltools.mlmodel), the NumPy update of
// one epoch (Scripts/make_update_fixtures.py), and the corpus' archdanny digit classifier.
import CoreMLFormat
import Foundation
import MLPrediction
@testable import MLTraining
import TestSupport
import XCTest

final class UpdateRepairTests: XCTestCase {
    static let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update")

    func fixture(_ name: String, _ file: String = "model.mlmodel") throws -> Spec.Model {
        try Spec.Model.load(contentsOf: Self.root.appendingPathComponent(name).appendingPathComponent(file).path)
    }

    // MARK: against coremltools' builder

    /// The repair writes what coremltools' set_categorical_cross_entropy_loss /
    /// set_mean_squared_error_loss write: the same loss layer, update parameters, training inputs
    /// (a classifier's label feature typed as its label output; `y_true` as a DOUBLE multi-array
    /// shaped as the output) and specification version; everything else is the original's.
    func testRepairEqualsCoremltoolsBuilder() throws {
        for (name, loss) in [("repair_dense_ce", LossFunction.categoricalCrossEntropy), ("repair_dense_mse", .meanSquaredError)] {
            let original = try fixture(name)
            let reference = try fixture(name, "coremltools.mlmodel")
            XCTAssertEqual(original.specificationVersion, 1)
            let repaired = try NetworkUpdateRepair(loss: loss).repaired(original, name: name)
            XCTAssertEqual(repaired.specificationVersion, reference.specificationVersion, name)
            XCTAssertEqual(repaired.specificationVersion, 4, name)
            XCTAssertEqual(repaired.description?.trainingInput, reference.description?.trainingInput, name)
            XCTAssertEqual(try repaired.neuralNetwork?.updateParameters(), try reference.neuralNetwork?.updateParameters(), name)
            XCTAssertEqual(repaired.neuralNetwork?.layers, original.neuralNetwork?.layers, name)
            XCTAssertEqual(repaired.description?.input, original.description?.input, name)
            XCTAssertEqual(repaired.description?.output, original.description?.output, name)
            // Both serialise fields in number order: the whole file is coremltools' byte for byte.
            XCTAssertEqual(try repaired.encode(), [UInt8](try Data(contentsOf: Self.root.appendingPathComponent("\(name)/coremltools.mlmodel"))), name)
            // The written file reads back with the loss layer.
            let again = try Spec.Model.decode(try repaired.encode())
            XCTAssertEqual(try again.neuralNetwork?.updateParameters()?.lossLayers.count, 1)
        }
    }

    // MARK: one epoch against NumPy

    struct Case: Decodable {
        struct Weights: Decodable { var weight: [Double]; var bias: [Double]? }
        var epochLoss: [Double]
        var afterEpoch1: [String: Weights]
    }

    /// The repaired models train as the NumPy reference trains with coremltools' loss (≤ 1e-5
    /// relative), and the result is still updatable with its loss layer.
    func testRepairedModelsUpdateAsNumPy() throws {
        for (name, loss) in [("repair_dense_ce", LossFunction.categoricalCrossEntropy), ("repair_dense_mse", .meanSquaredError)] {
            let dir = Self.root.appendingPathComponent(name)
            let repaired = try NetworkUpdateRepair(loss: loss).repaired(try fixture(name), name: name)
            let rows = try FeatureJSON.rows(from: Data(contentsOf: dir.appendingPathComponent("examples.json")),
                                            description: UpdateTask.trainingDescription(of: repaired), model: name)
            let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: dir.appendingPathComponent("case.json")))
            var losses: [Double] = []
            let ctx = try UpdateTask(model: repaired, name: name, trainingData: rows) { ctx in
                if ctx.event == .epochEnd { losses.append(ctx.metrics.lossValue) }
            }.run()
            XCTAssertEqual(losses.count, 1)
            XCTAssertLessThan(abs(losses[0] - c.epochLoss[0]) / c.epochLoss[0], 1e-5, "\(name): loss \(losses[0]) vs NumPy \(c.epochLoss[0])")
            let updated = try ctx.model()
            for (layerName, w) in c.afterEpoch1 {
                guard case let .innerProduct(p)? = updated.neuralNetwork?.layers.first(where: { $0.name == layerName })?.layer else {
                    XCTFail("\(name): no innerProduct \(layerName)"); continue
                }
                for (got, want) in [(p.weights?.floatValue ?? [], w.weight), (p.bias?.floatValue ?? [], w.bias ?? [])] {
                    XCTAssertEqual(got.count, want.count, "\(name) \(layerName)")
                    let scale = max(want.map(abs).max() ?? 0, 1e-12)
                    let err = zip(got, want).map { abs(Double($0) - $1) }.max().map { $0 / scale } ?? 0
                    XCTAssertLessThan(err, 1e-5, "\(name) \(layerName): relative error \(err)")
                }
            }
            XCTAssertEqual(updated.description?.trainingInput, repaired.description?.trainingInput)
            XCTAssertNoThrow(try NetworkUpdateDescription(model: updated, name: name), name)
        }
    }

    // MARK: refusals

    func testDefaultStillRefusesAModelWithoutLoss() throws {
        let model = try fixture("repair_dense_ce")
        XCTAssertThrowsError(try NetworkUpdateDescription(model: model, name: "m")) {
            XCTAssertEqual($0 as? TrainingError, .invalidUpdateDescription(model: "m", layer: "", rule: "the update parameters have no loss layer"))
        }
    }

    func testRefusals() throws {
        let ce = try fixture("repair_dense_ce"), mse = try fixture("repair_dense_mse")
        func rule(_ repair: NetworkUpdateRepair, _ model: Spec.Model, contains text: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try repair.repaired(model, name: "m"), file: file, line: line) { e in
                XCTAssertTrue("\(e)".contains(text), "\(e)", file: file, line: line)
            }
        }
        // Nothing to repair: coremltools already wrote the loss layer.
        rule(.init(loss: .categoricalCrossEntropy), try fixture("repair_dense_ce", "coremltools.mlmodel"),
             contains: "already has a loss layer ('lossLayer'); there is nothing to repair")
        // Cross-entropy needs a softmax: the regressor has none; a named non-softmax blob is refused.
        rule(.init(loss: .categoricalCrossEntropy), mse, contains: "the network has no softmax layer")
        rule(.init(loss: .categoricalCrossEntropy, lossInput: "logits"), ce,
             contains: "the categorical cross-entropy loss's input 'logits' is not generated from a softmax output (it is the output of the innerProduct layer 'fc2')")
        rule(.init(loss: .categoricalCrossEntropy, lossInput: "nowhere"), ce, contains: "'nowhere' is not an output of any layer")
        // MSE needs a model output to shape its target.
        rule(.init(loss: .meanSquaredError, lossInput: "h1"), mse, contains: "the mean squared error loss's input 'h1' must be a multi-array output")
        // Names: the target may not be an input, output or blob; the loss layer may not reuse a layer name.
        rule(.init(loss: .meanSquaredError, target: "x"), mse, contains: "the loss target 'x' must not be a model input")
        rule(.init(loss: .meanSquaredError, target: "a1"), mse, contains: "the loss target 'a1' is generated within the network")
        rule(.init(loss: .meanSquaredError, lossLayerName: "fc1"), mse, contains: "a layer of the network already has this name")
        // Not updatable at all: adding a loss does not make it so.
        var frozen = mse
        frozen.isUpdatable = false
        XCTAssertThrowsError(try NetworkUpdateRepair(loss: .meanSquaredError).repaired(frozen, name: "m")) {
            guard case .notUpdatable? = $0 as? TrainingError else { return XCTFail("\($0)") }
        }
        // Updatable without update parameters: the repair does not invent an optimizer.
        var bare = mse
        if case var .neuralNetworkRegressor(r) = bare.type { r.network.updateParams = nil; bare.type = .neuralNetworkRegressor(r) }
        rule(.init(loss: .meanSquaredError), bare, contains: "no update parameters")
    }

    // MARK: the corpus' archdanny digit classifier

    /// 8×8 digit strokes, 3 examples per class with a one-pixel shift. Ink is 16 on 0: the scale of
    /// scikit-learn's 8×8 digits, which the model reads unscaled (its image preprocessing scale is 1).
    static func digitRows(labels: [String] = ["0", "1", "7"]) throws -> [(label: String, image: FeatureImage)] {
        let glyphs: [String: [String]] = [
            "0": ["..####..", ".#....#.", ".#....#.", ".#....#.", ".#....#.", ".#....#.", "..####..", "........"],
            "1": ["...##...", "..###...", "...##...", "...##...", "...##...", "...##...", "..####..", "........"],
            "7": [".######.", "......#.", ".....#..", "....#...", "...#....", "...#....", "...#....", "........"],
        ]
        var out: [(String, FeatureImage)] = []
        for label in labels {
            guard let g = glyphs[label] else { continue }
            for shift in 0..<3 {
                var px = [UInt8](repeating: 0, count: 64)
                for (y, row) in g.enumerated() {
                    for (x, ch) in row.enumerated() where ch == "#" {
                        let xx = min(7, x + (shift == 1 ? 1 : 0)), yy = min(7, y + (shift == 2 ? 1 : 0))
                        px[yy * 8 + xx] = 16
                    }
                }
                out.append((label, try FeatureImage(width: 8, height: 8, colorSpace: .grayscale, pixels: px)))
            }
        }
        return out
    }

    /// The issue's acceptance: archdanny (updatable, Adam, epochs, no loss layer, no training
    /// inputs, specification version 1) is repaired with a cross-entropy loss on its softmax
    /// output "output" against its label "classLabel", updates on digit images, predicts, and
    /// updates again unrepaired; the probability of the taught labels rises.
    func testCorpusDigitClassifierRepairedUpdatesAndPredicts() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/archdanny_newcoreml.mlmodel")
        guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("skipped: \(url.path) not found") }
        let model = try Spec.Model.load(contentsOf: url.path)
        let repaired = try NetworkUpdateRepair(loss: .categoricalCrossEntropy).repaired(model, name: "archdanny")
        XCTAssertEqual(repaired.specificationVersion, 4)
        let d = try NetworkUpdateDescription(model: repaired, name: "archdanny")
        XCTAssertEqual(d.lossInput, "output")
        XCTAssertEqual(d.lossTarget, "output_true")
        XCTAssertEqual(d.targetFeature, "classLabel")
        XCTAssertEqual(d.updatableLayers, ["conv2d_1", "dense_1", "dense_2"])
        XCTAssertEqual(repaired.description?.trainingInput.map(\.name), ["image", "classLabel"])
        XCTAssertEqual(repaired.description?.trainingInput.last?.type?.kind, .string)
        XCTAssertEqual(repaired.neuralNetwork?.layers, model.neuralNetwork?.layers)
        XCTAssertEqual(repaired.neuralNetwork?.preprocessing, model.neuralNetwork?.preprocessing)

        let digits = try Self.digitRows()
        let rows: [FeatureProvider] = digits.map { ["image": .image($0.image), "classLabel": .string($0.label)] }
        func meanTrueProbability(_ m: any FeatureModel) throws -> Double {
            var total = 0.0
            for (label, image) in digits {
                guard case let .dictionary(.stringKeys(p))? = try m.prediction(from: ["image": .image(image)])["output"] else {
                    XCTFail("no probability dictionary"); return .nan
                }
                total += p[label] ?? .nan
            }
            return total / Double(digits.count)
        }
        let before = try meanTrueProbability(CoreMLModelLoader.load(model, context: ModelLoadContext(name: "archdanny")))
        // Mini-batch 1 (allowed: 1, 16, 32) so one epoch takes 9 Adam steps.
        var firstLoss = Double.nan
        let first = try UpdateTask(model: repaired, name: "archdanny", trainingData: rows, parameters: .init(miniBatchSize: 1)) { ctx in
            if ctx.event == .epochEnd { firstLoss = ctx.metrics.lossValue }
        }.run()
        let after = try meanTrueProbability(first.predictionModel())
        XCTAssertGreaterThan(after, before, "the taught labels' mean probability should rise (\(before) → \(after))")
        // The written model updates again without any repair.
        let written = try Spec.Model.decode(try first.model().encode())
        var losses: [Double] = []
        let second = try UpdateTask(model: written, name: "archdanny-personal", trainingData: rows, parameters: .init(miniBatchSize: 1)) { ctx in
            if ctx.event == .epochEnd { losses.append(ctx.metrics.lossValue) }
        }.run()
        XCTAssertEqual(losses.count, 1)
        XCTAssertLessThan(losses[0], firstLoss, "the second update starts from the trained weights")
        XCTAssertGreaterThanOrEqual(try meanTrueProbability(second.predictionModel()), after - 1e-6)
    }
}
