// kNN and pipeline updates, Core ML's validation rules, the corpus's updatable models, and
// `UpdateContext.predictionModel()`.
import CoreMLFormat
import Foundation
import MLPrediction
@testable import MLTraining
import TestSupport
import XCTest

final class UpdateModelsTests: XCTestCase {
    static let fixtures = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/update")

    func rows(_ file: URL, _ model: Spec.Model) throws -> [FeatureProvider] {
        try FeatureJSON.rows(from: Data(contentsOf: file), description: UpdateTask.trainingDescription(of: model), model: file.lastPathComponent)
    }

    /// The tutorial pipeline (embedding network → empty updatable kNN) learns three labels from
    /// four examples each, predicts held-out points, and the written model updates again.
    func testPipelineKNNLearnsNewLabels() throws {
        let dir = Self.fixtures.appendingPathComponent("pipeline_knn")
        let model = try Spec.Model.load(contentsOf: dir.appendingPathComponent("model.mlmodel").path)
        let examples = try rows(dir.appendingPathComponent("examples.json"), model)
        let queries = try rows(dir.appendingPathComponent("queries.json"), model)
        let before = try CoreMLModelLoader.load(model, context: ModelLoadContext(name: "before"))
        XCTAssertEqual(try before.prediction(from: queries[0])["label"], .string("unknown"))

        let result = try UpdateTask(model: model, name: "pipeline_knn", trainingData: examples).run()
        let predictor = try result.predictionModel()
        for q in queries {
            XCTAssertEqual(try predictor.prediction(from: q)["label"], q["label"])
        }
        // Written and read back: still updatable, 12 samples; a second update adds more.
        let bytes = try result.model().encode()
        let reread = try Spec.Model.decode(bytes)
        XCTAssertTrue(reread.isUpdatable)
        guard case let .kNearestNeighborsClassifier(knn)? = try reread.pipelineModels.last?.classicalParameters() else {
            return XCTFail("the last stage is not a kNN")
        }
        XCTAssertEqual(knn.nearestNeighborsIndex?.floatSamples.count, 12)
        let again = try UpdateTask(model: reread, name: "again", trainingData: Array(examples.prefix(2))).run().model()
        guard case let .kNearestNeighborsClassifier(knn2)? = try again.pipelineModels.last?.classicalParameters() else {
            return XCTFail("the last stage is not a kNN")
        }
        XCTAssertEqual(knn2.nearestNeighborsIndex?.floatSamples.count, 14)
        // The appended samples are the embeddings of the examples (fixture W maps x → [x0, x1, x2 + x3]).
        if case let .multiArray(a)? = examples[0]["features"] {
            let v = a.values.map(Float.init)
            XCTAssertEqual(knn.nearestNeighborsIndex?.floatSamples[0].vector, [v[0], v[1], v[2] + v[3]])
        }
        if case let .stringClassLabels(l)? = knn2.classLabels { XCTAssertEqual(l.vector.count, 14) } else { XCTFail("labels") }
    }

    /// A neural network updated in memory predicts with the new weights.
    func testUpdatedNetworkPredictsWithoutWriting() throws {
        let dir = Self.fixtures.appendingPathComponent("dense_mse_adam")
        let model = try Spec.Model.load(contentsOf: dir.appendingPathComponent("model.mlmodel").path)
        let examples = try rows(dir.appendingPathComponent("examples.json"), model)
        let result = try UpdateTask(model: model, name: "m", trainingData: examples).run()
        let before = try CoreMLModelLoader.load(model, context: ModelLoadContext(name: "before"))
        let after = try result.predictionModel()
        let fromSpec = try CoreMLModelLoader.load(try result.model(), context: ModelLoadContext(name: "spec"))
        let x = examples[0]
        XCTAssertNotEqual(try before.prediction(from: x)["y"], try after.prediction(from: x)["y"])
        XCTAssertEqual(try after.prediction(from: x)["y"], try fromSpec.prediction(from: x)["y"])
    }

    // MARK: Validation (Core ML's rules → typed errors naming the layer and rule)

    func updateDescriptionError(_ mutate: (inout Spec.Model) -> Void) throws -> TrainingError? {
        var model = try Spec.Model.load(contentsOf: Self.fixtures.appendingPathComponent("dense_ce_sgd_momentum/model.mlmodel").path)
        mutate(&model)
        do { _ = try NetworkUpdateDescription(model: model, name: "m") } catch let e as TrainingError { return e }
        return nil
    }

    func editLayers(_ m: inout Spec.Model, _ body: (inout [Spec.NeuralNetworkLayer]) -> Void) {
        guard case var .neuralNetworkClassifier(c) = m.type else { return }
        body(&c.network.layers)
        m.type = .neuralNetworkClassifier(c)
    }

    func testNotUpdatableModel() throws {
        let e = try updateDescriptionError { $0.isUpdatable = false }
        guard case .notUpdatable? = e else { return XCTFail("\(String(describing: e))") }
        XCTAssertTrue("\(e!)".contains("not marked updatable"))
    }

    func testUpdatableLayerMustBeConvolutionOrInnerProduct() throws {
        let e = try updateDescriptionError { m in editLayers(&m) { l in l[1].isUpdatable = true } }  // act1
        XCTAssertEqual(e, .invalidUpdateDescription(model: "m", layer: "act1",
            rule: "the layer is marked updatable but is a activation; only convolution and innerProduct layers can be updatable"))
    }

    func testWeightsMustBeMarkedAndFloat32() throws {
        let e1 = try updateDescriptionError { m in editLayers(&m) { l in
            if case var .innerProduct(p) = l[0].layer { p.bias?.isUpdatable = false; l[0].layer = .innerProduct(p) } } }
        guard case let .invalidUpdateDescription(_, layer, rule, _)? = e1 else { return XCTFail("\(String(describing: e1))") }
        XCTAssertEqual(layer, "fc1")
        XCTAssertTrue(rule.contains("not marked updatable"), rule)
        let e2 = try updateDescriptionError { m in editLayers(&m) { l in
            if case var .innerProduct(p) = l[0].layer {
                let floats = p.weights?.floatValue ?? []
                p.weights?.float16Value = Spec.encodeFloat16(floats)
                p.weights?.floatValue = []
                l[0].layer = .innerProduct(p)
            } } }
        guard case let .invalidUpdateDescription(_, layer2, rule2, _)? = e2 else { return XCTFail("\(String(describing: e2))") }
        XCTAssertEqual(layer2, "fc1")
        XCTAssertTrue(rule2.contains("float32"), rule2)
    }

    func testLayerBetweenUpdatableAndLossMustBackPropagate() throws {
        // A sigmoidHard activation between fc1 (updatable) and the loss blocks back-propagation.
        let e = try updateDescriptionError { m in editLayers(&m) { l in
            l[1].layer = .activation(Spec.ActivationParams(.sigmoidHard(alpha: 0.2, beta: 0.5))) } }
        guard case let .invalidUpdateDescription(_, layer, rule, _)? = e else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(layer, "act1")
        XCTAssertTrue(rule.contains("does not support back-propagation") && rule.contains("fc1"), rule)
    }

    func testCrossEntropyNeedsSoftmax() throws {
        let e = try updateDescriptionError { m in editLayers(&m) { l in
            l[3].layer = .activation(Spec.ActivationParams(.sigmoid)) } }
        guard case let .invalidUpdateDescription(_, layer, rule, _)? = e else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(layer, "loss")
        XCTAssertTrue(rule.contains("softmax"), rule)
    }

    func testTrainingInputsMustNameTheTarget() throws {
        let e = try updateDescriptionError { m in m.description?.trainingInput.removeLast() }
        guard case .invalidUpdateDescription? = e else { return XCTFail("\(String(describing: e))") }
    }

    func testUnknownLabelIsAnExampleError() throws {
        let dir = Self.fixtures.appendingPathComponent("dense_ce_sgd")
        let model = try Spec.Model.load(contentsOf: dir.appendingPathComponent("model.mlmodel").path)
        var examples = try rows(dir.appendingPathComponent("examples.json"), model)
        examples[2]["label"] = .string("zebra")
        XCTAssertThrowsError(try UpdateTask(model: model, name: "m", trainingData: examples)) {
            guard case let .invalidExample(_, i, f, reason)? = $0 as? TrainingError else { return XCTFail("\($0)") }
            XCTAssertEqual(i, 2); XCTAssertEqual(f, "label")
            XCTAssertTrue(reason.contains("\"zebra\""), reason)
        }
    }

    // MARK: Corpus

    func corpus(_ name: String) throws -> Spec.Model {
        let url = try TestPaths.sharedFile("corpus/mlmodel/" + name)
        guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("skipped: \(url.path) not found") }
        return try Spec.Model.load(contentsOf: url.path)
    }

    /// jacopo: one updatable innerProduct (1 → 1), MSE, SGD: learning y = 2x moves the weight toward 2.
    func testCorpusKerasPersonalization() throws {
        let model = try corpus("jacopo_keras_model_personalization.mlmodel")
        let d = try NetworkUpdateDescription(model: model, name: "jacopo")
        XCTAssertEqual(d.loss, .meanSquaredError)
        let target = d.targetFeature
        let inputName = model.description!.input[0].name
        let data: [FeatureProvider] = (0..<8).map { i in
            let x = Double(i) / 4
            return [inputName: .multiArray(MultiArray(vector: [x])), target: .multiArray(MultiArray(vector: [2 * x]))]
        }
        let predictor0 = try CoreMLModelLoader.load(model, context: ModelLoadContext(name: "jacopo"))
        let out = model.description!.output[0].name
        func err(_ m: any FeatureModel) throws -> Double {
            guard case let .multiArray(a)? = try m.prediction(from: [inputName: .multiArray(MultiArray(vector: [1]))])[out] else { return .nan }
            return abs(a.values[0] - 2)
        }
        let result = try UpdateTask(model: model, name: "jacopo", trainingData: data, parameters: .init(epochs: nil)).run()
        XCTAssertLessThan(try err(result.predictionModel()), try err(predictor0))
        let again = try Spec.Model.decode(try result.model().encode())
        XCTAssertTrue(again.isUpdatable)
        XCTAssertNotNil(try again.neuralNetwork?.updateParameters())
    }

    /// cfinker: an empty updatable kNN (21 dimensions, kd-tree) learns samples and predicts them.
    func testCorpusUpdatableKNN() throws {
        let model = try corpus("cfinker_UpdatableKNN.mlmodel")
        let input = model.description!.input[0].name
        let label = model.description!.predictedFeatureName
        let samples: [FeatureProvider] = (0..<6).map { i in
            var v = [Double](repeating: 0, count: 21)
            v[i % 3] = 10 + Double(i)
            return [input: .multiArray(MultiArray(vector: v)), label: .string(["alice", "bob", "carol"][i % 3])]
        }
        let result = try UpdateTask(model: model, name: "cfinker", trainingData: samples).run()
        let p = try result.predictionModel()
        var q = [Double](repeating: 0, count: 21); q[1] = 12
        XCTAssertEqual(try p.prediction(from: [input: .multiArray(MultiArray(vector: q))])[label], .string("bob"))
    }

    /// archdanny: marked updatable (three updatable layers, Adam parameters) but its update
    /// parameters have no loss layer and it describes no training inputs, so Core ML's validator
    /// refuses to update it; so do we, naming the rule. It still predicts.
    func testCorpusDigitClassifierIsRefusedAsCoreMLDoes() throws {
        let model = try corpus("archdanny_newcoreml.mlmodel")
        XCTAssertTrue(model.isUpdatable)
        let params = try XCTUnwrap(try model.neuralNetwork?.updateParameters())
        XCTAssertTrue(params.lossLayers.isEmpty)
        if case let .adamOptimizer(a)? = params.optimizer?.optimizerType {
            XCTAssertEqual(a.beta2?.defaultValue ?? 0, 0.999, accuracy: 1e-6)
        } else { XCTFail("the file's optimizer is Adam") }
        let pixels = [UInt8](repeating: 128, count: 64)
        let row: FeatureProvider = ["image": .image(try FeatureImage(width: 8, height: 8, colorSpace: .grayscale, pixels: pixels)),
                                    "classLabel": .string("3")]
        XCTAssertThrowsError(try UpdateTask(model: model, name: "archdanny", trainingData: [row])) {
            XCTAssertEqual($0 as? TrainingError, .invalidUpdateDescription(model: "archdanny", layer: "",
                                                                          rule: "the update parameters have no loss layer"))
        }
        let predictor = try CoreMLModelLoader.load(model, context: ModelLoadContext(name: "archdanny"))
        XCTAssertNotNil(try predictor.prediction(from: row)["classLabel"])
    }
}
