// Neural-network updates against the NumPy implementation of the same updates
// (Scripts/make_update_fixtures.py → Fixtures/update/<case>/).
import CoreMLFormat
import Foundation
import MLPrediction
@testable import MLTraining
import TestSupport
import XCTest

final class UpdateParityTests: XCTestCase {
    struct Case: Decodable {
        struct Weights: Decodable { var weight: [Double]; var bias: [Double]? }
        var name: String
        var loss: String
        var miniBatchSize: Int
        var epochs: Int
        var samples: Int
        var epochLoss: [Double]
        var afterEpoch1: [String: Weights]
        var afterLastEpoch: [String: Weights]
    }

    static let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update")

    static func load(_ name: String) throws -> (Spec.Model, [FeatureProvider], Case) {
        let dir = root.appendingPathComponent(name)
        let model = try Spec.Model.load(contentsOf: dir.appendingPathComponent("model.mlmodel").path)
        let rows = try FeatureJSON.rows(from: Data(contentsOf: dir.appendingPathComponent("examples.json")),
                                        description: UpdateTask.trainingDescription(of: model), model: name)
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: dir.appendingPathComponent("case.json")))
        return (model, rows, c)
    }

    /// max |a − b| / max |b| (the tensor's scale), so near-zero weights do not dominate.
    func relativeError(_ a: [Float], _ b: [Double]) -> Double {
        XCTAssertEqual(a.count, b.count)
        let scale = max(b.map(abs).max() ?? 0, 1e-12)
        return zip(a, b).map { abs(Double($0) - $1) }.max().map { $0 / scale } ?? 0
    }

    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (model, rows, c) = try Self.load(name)
        XCTAssertEqual(rows.count, c.samples)
        // After one epoch.
        let one = try UpdateTask(model: model, name: name, trainingData: rows, parameters: .init(epochs: 1))
        let ctx1 = try one.run()
        try compare(ctx1.model(), c.afterEpoch1, what: "\(name) after epoch 1", file: file, line: line)
        // After every epoch, with the losses reported per epoch.
        var losses: [Double] = []
        var miniBatches = 0
        let all = try UpdateTask(model: model, name: name, trainingData: rows) { ctx in
            if ctx.event == .epochEnd { losses.append(ctx.metrics.lossValue) }
            if ctx.event == .miniBatchEnd { miniBatches += 1 }
        }
        let ctx = try all.run()
        try compare(ctx.model(), c.afterLastEpoch, what: "\(name) after epoch \(c.epochs)", file: file, line: line)
        XCTAssertEqual(losses.count, c.epochs, file: file, line: line)
        for (a, b) in zip(losses, c.epochLoss) {
            XCTAssertLessThan(abs(a - b) / max(abs(b), 1e-12), 1e-5, "\(name): epoch loss \(a) vs NumPy \(b)", file: file, line: line)
        }
        XCTAssertEqual(miniBatches, c.epochs * ((c.samples + c.miniBatchSize - 1) / c.miniBatchSize), file: file, line: line)
    }

    func compare(_ updated: Spec.Model, _ expected: [String: Case.Weights], what: String,
                 file: StaticString, line: UInt) throws {
        guard let nn = updated.neuralNetwork else { return XCTFail("\(what): not a neural network", file: file, line: line) }
        XCTAssertTrue(updated.isUpdatable, file: file, line: line)
        for (layerName, w) in expected {
            guard let layer = nn.layers.first(where: { $0.name == layerName }) else {
                XCTFail("\(what): no layer \(layerName)", file: file, line: line); continue
            }
            let weights: Spec.WeightParams?, bias: Spec.WeightParams?
            switch layer.layer {
            case let .innerProduct(p): (weights, bias) = (p.weights, p.bias)
            case let .convolution(p): (weights, bias) = (p.weights, p.bias)
            default: XCTFail("\(what): \(layerName) is a \(layer.layer.typeName)", file: file, line: line); continue
            }
            XCTAssertEqual(weights?.isUpdatable, true, file: file, line: line)
            let ew = relativeError(weights?.floatValue ?? [], w.weight)
            XCTAssertLessThan(ew, 1e-5, "\(what): \(layerName) weights differ from NumPy by \(ew) (relative)", file: file, line: line)
            if let b = w.bias {
                let eb = relativeError(bias?.floatValue ?? [], b)
                XCTAssertLessThan(eb, 1e-5, "\(what): \(layerName) bias differs from NumPy by \(eb) (relative)", file: file, line: line)
            }
        }
    }

    func testDenseCrossEntropySGD() throws { try check("dense_ce_sgd") }
    func testDenseCrossEntropySGDMomentum() throws { try check("dense_ce_sgd_momentum") }
    func testDenseCrossEntropyAdam() throws { try check("dense_ce_adam") }
    func testDenseMSESGDMomentum() throws { try check("dense_mse_sgd_momentum") }
    func testDenseMSEAdam() throws { try check("dense_mse_adam") }
    func testConvolutionCrossEntropyAdam() throws { try check("conv_ce_adam") }
    func testConvolutionCrossEntropySGD() throws { try check("conv_ce_sgd") }
    func testConvolutionMSESGDMomentum() throws { try check("conv_mse_sgd_momentum") }

    /// Every fixture folder has a test above.
    func testEveryFixtureIsCovered() throws {
        struct Index: Decodable { var cases: [String] }
        let index = try JSONDecoder().decode(Index.self, from: Data(contentsOf: Self.root.appendingPathComponent("index.json")))
        let tested: Set = ["dense_ce_sgd", "dense_ce_sgd_momentum", "dense_ce_adam", "dense_mse_sgd_momentum", "dense_mse_adam",
                           "conv_ce_adam", "conv_ce_sgd", "conv_mse_sgd_momentum"]
        XCTAssertEqual(Set(index.cases), tested)
    }

    /// Only the weights marked updatable change: dense_ce_sgd trains fc2 only.
    func testFrozenLayersStay() throws {
        let (model, rows, _) = try Self.load("dense_ce_sgd")
        let updated = try UpdateTask(model: model, name: "dense_ce_sgd", trainingData: rows).run().model()
        let before = model.neuralNetwork!.layers, after = updated.neuralNetwork!.layers
        XCTAssertEqual(before.first { $0.name == "fc1" }, after.first { $0.name == "fc1" })
        XCTAssertNotEqual(before.first { $0.name == "fc2" }, after.first { $0.name == "fc2" })
        // Everything but the weight values is unchanged, and the file re-decodes identically.
        var restored = updated
        restored.type = model.type
        XCTAssertEqual(restored, model)
        let reread = try Spec.Model.decode(try updated.encode())
        XCTAssertEqual(reread.neuralNetwork?.layers, updated.neuralNetwork?.layers)
        XCTAssertEqual(try reread.neuralNetwork?.updateParameters(), try model.neuralNetwork?.updateParameters())
    }

    /// Shuffling is deterministic given the seed, and the seed matters.
    func testShuffleIsDeterministic() throws {
        let (model, rows, _) = try Self.load("dense_ce_adam")
        func run(_ seed: Int64) throws -> [Float] {
            let m = try UpdateTask(model: model, name: "m", trainingData: rows, parameters: .init(shuffle: true, seed: seed)).run().model()
            guard case let .innerProduct(p)? = m.neuralNetwork?.layers.first(where: { $0.name == "fc2" })?.layer else { return [] }
            return p.weights?.floatValue ?? []
        }
        let a = try run(7), b = try run(7), c = try run(8)
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, c)
        // The generator itself: SplitMix64's published first outputs for seed 0.
        var g = SplitMix64(seed: 0)
        XCTAssertEqual(g.next(), 0xE220_A839_7B1D_CDAF)
        XCTAssertEqual(g.next(), 0x6E78_9E6A_A1B9_65F4)
    }

    /// Cancellation stops before the next mini-batch; progress handlers see the current model.
    func testCancelAndProgressModel() throws {
        let (model, rows, _) = try Self.load("dense_ce_sgd")
        var seen = 0
        var task: UpdateTask!
        task = try UpdateTask(model: model, name: "m", trainingData: rows, events: [.miniBatchEnd]) { ctx in
            seen += 1
            XCTAssertNotEqual(try ctx.model().neuralNetwork?.layers, model.neuralNetwork?.layers)
            if seen == 2 { task.cancel() }
        }
        XCTAssertThrowsError(try task.run()) { XCTAssertEqual($0 as? TrainingError, .cancelled(model: "m")) }
        XCTAssertEqual(seen, 2)
    }

    /// Learning-rate and epoch overrides are checked against the allowed values.
    func testOverridesAreChecked() throws {
        let (model, rows, _) = try Self.load("dense_ce_sgd")
        XCTAssertThrowsError(try UpdateTask(model: model, name: "m", trainingData: rows, parameters: .init(learningRate: 5))) {
            guard case let .invalidParameter(_, p, reason)? = $0 as? TrainingError else { return XCTFail("\($0)") }
            XCTAssertEqual(p, "learningRate")
            XCTAssertTrue(reason.contains("outside the allowed range"), reason)
        }
        XCTAssertThrowsError(try UpdateTask(model: model, name: "m", trainingData: rows, parameters: .init(epochs: 0)))
    }
}
