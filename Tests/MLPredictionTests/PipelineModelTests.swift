import CoreMLFormat
import Foundation
import XCTest
@testable import MLPrediction

enum NNSpecs {
    static func layer(_ name: String, _ ins: [String], _ outs: [String], _ l: Spec.NeuralNetworkLayer.Layer) -> Spec.NeuralNetworkLayer {
        Spec.NeuralNetworkLayer(name: name, input: ins, output: outs, layer: l)
    }
    static func arr(_ n: String, _ shape: [Int64]) -> Spec.FeatureDescription { FD.array(n, shape, .float32) }

    /// y = W x + b as a neuralNetwork, W row-major [out, in].
    static func dense(_ x: String, _ y: String, w: [Float], b: [Float]) -> Spec.Model {
        let n = b.count, m = w.count / b.count
        return Spec.Model(description: FD.desc([arr(x, [Int64(m)])], [arr(y, [Int64(n)])]), type: .neuralNetwork(Spec.NeuralNetwork(layers: [
            layer("fc", [x], [y], .innerProduct(Spec.InnerProductLayerParams(
                inputChannels: UInt64(m), outputChannels: UInt64(n), hasBias: true,
                weights: Spec.WeightParams(w), bias: Spec.WeightParams(b)))),
        ])))
    }
}

final class PipelineModelTests: XCTestCase {
    /// oneHotEncoder (output "Sex" replaces the input "Sex") → featureVectorizer → scaler.
    func testStagesReadTheRunningFeatureSet() throws {
        let ohe = try OneHotEncoderModel(parameters: .init(categories: .strings(["male", "female"]), outputSparse: true, ignoreUnknown: true),
                                         description: FD.desc([FD.string("Sex")], [FD.dict("Sex", .int64)]), name: "p › stage 0")
        let fv = try FeatureVectorizerModel(columns: [.init(name: "Pclass", dimension: 1), .init(name: "Sex", dimension: 2), .init(name: "Age", dimension: 1)],
                                            description: FD.desc([FD.double("Pclass"), FD.dict("Sex", .int64), FD.double("Age")], [FD.array("v", [4])]),
                                            name: "p › stage 1")
        let sc = try ScalerModel(shift: [0], scale: [1, 10, 100, 0.5], description: FD.desc([FD.array("v", [4])], [FD.array("out", [4])]), name: "p › stage 2")
        let p = try PipelineModel(stages: [.init(name: "ohe", kind: .oneHotEncoder, model: ohe),
                                           .init(name: "fv", kind: .featureVectorizer, model: fv),
                                           .init(name: "sc", kind: .scaler, model: sc)],
                                  description: FD.desc([FD.double("Pclass"), FD.string("Sex"), FD.double("Age")], [FD.array("out", [4])]), name: "p")
        let out = try p.prediction(from: ["Pclass": .double(3), "Sex": .string("female"), "Age": .double(22)])
        // [3, male 0, female 1, 22] · [1, 10, 100, 0.5]
        XCTAssertEqual(out, ["out": vec([3, 0, 100, 11])])
        // A stage's missing input names the stage.
        assertThrowsFeatureError(try p.prediction(from: ["Pclass": .double(3), "Sex": .string("female")])) {
            if case .missingInput("p › stage 1", "Age", _) = $0 { return true }; return false
        }
        // An input nothing produces is refused at load, naming the stage.
        assertThrowsFeatureError(try PipelineModel(stages: [.init(name: "sc", kind: .scaler, model: sc)],
                                                   description: FD.desc([FD.double("x")], [FD.array("out", [4])]), name: "p")) {
            if case let .invalidModel("p", reason) = $0 { return reason.contains("stage 0") && reason.contains("'v'") }; return false
        }
    }

    func testNeuralNetworkStagesAndNestedPipelinesThroughTheLoader() throws {
        // stage 0: h = [[1, 2], [3, 4]] x + [0.5, -1]; stage 1 (a nested pipeline): y = [1, -1] h.
        let s0 = NNSpecs.dense("x", "h", w: [1, 2, 3, 4], b: [0.5, -1])
        let inner = Spec.Model(description: FD.desc([NNSpecs.arr("h", [2])], [NNSpecs.arr("y", [1])]),
                               type: .pipeline(Spec.Pipeline(models: [NNSpecs.dense("h", "y", w: [1, -1], b: [0])])))
        let spec = Spec.Model(description: FD.desc([NNSpecs.arr("x", [2])], [NNSpecs.arr("y", [1]), NNSpecs.arr("h", [2])]),
                              type: .pipelineRegressor(Spec.PipelineRegressor(pipeline: Spec.Pipeline(models: [s0, inner]))))
        let m = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "nested.mlmodel", threadCount: 1))
        let out = try m.prediction(from: ["x": .multiArray(MultiArray(vector: [1, 2], dataType: .float32))])
        // h = [1 + 4 + 0.5, 3 + 8 − 1] = [5.5, 10]; y = 5.5 − 10 = −4.5.
        XCTAssertEqual(out["h"], .multiArray(MultiArray(vector: [5.5, 10], dataType: .float32)))
        XCTAssertEqual(out["y"], .multiArray(MultiArray(vector: [-4.5], dataType: .float32)))
    }

    func testAppleProprietaryStageIsRefusedNamingTheStage() {
        let stage = Spec.Model(description: FD.desc([FD.string("text")], [FD.string("label")]),
                               type: .other(kind: .textClassifier, content: []))
        let spec = Spec.Model(description: FD.desc([FD.string("text")], [FD.string("label")]),
                              type: .pipelineClassifier(Spec.PipelineClassifier(pipeline: Spec.Pipeline(models: [stage], names: ["tc"]))))
        assertThrowsFeatureError(try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "p.mlmodel"))) {
            if case let .appleProprietary(model, "textClassifier") = $0 { return model == "p.mlmodel › stage 0 (textClassifier 'tc')" }; return false
        }
        let empty = Spec.Model(description: FD.desc([], []), type: .pipeline(Spec.Pipeline(models: [])))
        assertThrowsFeatureError(try CoreMLModelLoader.load(empty, context: ModelLoadContext(name: "e.mlmodel"))) {
            if case .invalidModel("e.mlmodel", _) = $0 { return true }; return false
        }
    }
}

final class NeuralNetworkFeatureModelTests: XCTestCase {
    func testClassifierGivesLabelAndProbabilities() throws {
        // Identity weights then softmax: x = [0, ln 3] → probabilities [1/4, 3/4].
        let net = Spec.NeuralNetwork(layers: [
            NNSpecs.layer("fc", ["x"], ["z"], .innerProduct(Spec.InnerProductLayerParams(
                inputChannels: 2, outputChannels: 2, hasBias: false, weights: Spec.WeightParams([1, 0, 0, 1])))),
            NNSpecs.layer("sm", ["z"], ["probs"], .softmax),
        ])
        let d = Spec.ModelDescription(input: [NNSpecs.arr("x", [2])], output: [FD.dict("probs", .int64), FD.int64("label")],
                                      predictedFeatureName: "label", predictedProbabilitiesName: "probs")
        let spec = Spec.Model(description: d, type: .neuralNetworkClassifier(Spec.NeuralNetworkClassifier(network: net, classLabels: .int64s([7, 9]))))
        let m = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "c.mlmodel", threadCount: 1))
        let out = try m.prediction(from: ["x": vec([0, log(3)])])
        XCTAssertEqual(out["label"], .int64(9))
        guard case let .dictionary(.int64Keys(p))? = out["probs"] else { return XCTFail("\(out)") }
        XCTAssertEqual(p[7] ?? .nan, 0.25, accuracy: 1e-6)
        XCTAssertEqual(p[9] ?? .nan, 0.75, accuracy: 1e-6)
    }

    func testImageInputIsConvertedToTheModelsColourSpaceAndPreprocessed() throws {
        // A 2×1 BGR-model image; the scaler computes 2·pixel + bias (B −1, G −2, R −3); the
        // activation is the identity; the output is the CHW array.
        let img = Spec.FeatureDescription(name: "img", type: .init(.image(.init(width: 2, height: 1, colorSpace: .bgr))))
        let net = Spec.NeuralNetwork(
            layers: [NNSpecs.layer("id", ["img"], ["y"], .activation(Spec.ActivationParams(.linear(alpha: 1, beta: 0))))],
            preprocessing: [Spec.NeuralNetworkPreprocessing(featureName: "img", preprocessor: .scaler(Spec.ImageScaler(
                channelScale: 2, blueBias: -1, greenBias: -2, redBias: -3)))])
        let spec = Spec.Model(description: FD.desc([img], [NNSpecs.arr("y", [3, 1, 2])]), type: .neuralNetwork(net))
        let m = try NeuralNetworkFeatureModel(spec: spec, context: ModelLoadContext(name: "img.mlmodel", threadCount: 1))
        // Given as RGB: pixel 0 = (R 10, G 20, B 30), pixel 1 = (R 1, G 2, B 3).
        let rgb = try FeatureImage(width: 2, height: 1, colorSpace: .rgb, pixels: [10, 20, 30, 1, 2, 3])
        let out = try m.prediction(from: ["img": .image(rgb)])
        // Channel order B, G, R: B = [2·30 − 1, 2·3 − 1], G = [2·20 − 2, 2·2 − 2], R = [2·10 − 3, 2·1 − 3].
        XCTAssertEqual(out["y"], .multiArray(try MultiArray(shape: [3, 1, 2], dataType: .float32, values: [59, 5, 38, 2, 17, -1])))
        let bgr = try FeatureImage(width: 2, height: 1, colorSpace: .bgr, pixels: [30, 20, 10, 3, 2, 1])
        XCTAssertEqual(try m.prediction(from: ["img": .image(bgr)]), out)
        let wrongSize = try FeatureImage(width: 1, height: 1, colorSpace: .rgb, pixels: [1, 2, 3])
        assertThrowsFeatureError(try m.prediction(from: ["img": .image(wrongSize)])) {
            if case .invalidValue("img.mlmodel", "img", _, _) = $0 { return true }; return false
        }
    }
}
