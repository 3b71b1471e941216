// Real pipelines and classical models of ../shared/corpus/mlmodel (see corpus/MANIFEST.md): they
// load through CoreMLModelLoader and predict values of the described types; Apple-proprietary
// models are refused naming the stage. Skips visibly when ../shared is absent.
import CoreMLFormat
import Foundation
import TestSupport
import XCTest
@testable import MLPrediction

final class CorpusPipelineTests: XCTestCase {
    private func spec(_ name: String) throws -> Spec.Model {
        let url = try TestPaths.sharedFile("corpus/mlmodel/\(name).mlmodel")
        return try Spec.Model.load(contentsOf: url.path)
    }

    private func load(_ name: String) throws -> any FeatureModel {
        try CoreMLModelLoader.load(try spec(name), context: ModelLoadContext(name: "\(name).mlmodel", threadCount: 1))
    }

    /// The full model, or XCTSkip when a stage kind is not registered on this branch (tree, GLM
    /// stages come from the `numeric` branch).
    private func loadFull(_ name: String) throws -> any FeatureModel {
        do { return try load(name) } catch let FeatureError.unsupportedModel(model, kind, _) {
            throw XCTSkip("skipped full prediction of \(name): \(model) needs the \(kind) loader (numeric branch)")
        }
    }

    /// The pipeline's stages before its last one (the feature-engineering part), as a pipeline
    /// whose outputs are the last stage's inputs.
    private func prefix(_ name: String) throws -> PipelineModel {
        let s = try spec(name)
        let models = s.pipelineModels
        guard models.count >= 2, let last = models.last else {
            throw XCTSkip("\(name) is not a pipeline of ≥ 2 stages")
        }
        let context = ModelLoadContext(name: "\(name).mlmodel", threadCount: 1)
        var stages: [PipelineModel.Stage] = []
        for (i, m) in models.dropLast().enumerated() {
            let kind = m.kind ?? Spec.ModelKind(rawValue: 0)
            stages.append(.init(name: "model\(i)", kind: kind, model: try CoreMLModelLoader.load(m, context: context.stage(i, kind: kind.name))))
        }
        var d = s.description ?? Spec.ModelDescription()
        d.output = last.description?.input ?? []
        return try PipelineModel(stages: stages, description: d, name: context.name)
    }

    private func vector(_ v: FeatureValue?, file: StaticString = #filePath, line: UInt = #line) throws -> [Double] {
        guard case let .multiArray(a)? = v else {
            XCTFail("expected a MultiArray, found \(String(describing: v))", file: file, line: line)
            return []
        }
        return a.values
    }

    // MARK: Fully supported by the feature-engineering models

    func testOnnxOneHotSimpleSeventeenStages() throws {
        let m = try load("onnxmltools_onehot_simple")
        // Eight int64 one-hot encoders with categories 0 ..< n (9, 16, 7, 15, 6, 5, 2, 42 as
        // `mlconv inspect` shows), concatenated in that order: block offsets 0, 9, 25, 32, 47, 53, 58, 60.
        let x: [Double] = [1, 2, 3, 4, 5, 4, 1, 41]
        let out = try m.prediction(from: ["input": .multiArray(MultiArray(vector: x))])
        let v = try vector(out["transformed_features"])
        XCTAssertEqual(v.count, 102)
        let ones = v.indices.filter { v[$0] == 1 }
        XCTAssertEqual(ones, [1, 11, 28, 36, 52, 57, 59, 101])
        XCTAssertEqual(v.reduce(0, +), 8)
        // Unknown values are rejected (ErrorOnUnknown), naming the stage.
        XCTAssertThrowsError(try m.prediction(from: ["input": .multiArray(MultiArray(vector: [9, 0, 0, 0, 0, 0, 0, 0]))])) {
            guard case let .invalidValue(model, _, _, _)? = $0 as? FeatureError else { return XCTFail("\($0)") }
            XCTAssertEqual(model, "onnxmltools_onehot_simple.mlmodel › stage 1 (oneHotEncoder)")
        }
    }

    // MARK: Feature-engineering prefixes of the tree / GLM pipelines

    func testTitanicFeatures() throws {
        // oneHotEncoder(Sex: male, female) → featureVectorizer(Pclass 1, Sex 2, Age 1).
        let p = try prefix("tiagopoleze_Titanic")
        let out = try p.prediction(from: ["Pclass": .double(1), "Sex": .string("female"), "Age": .double(22)])
        XCTAssertEqual(try vector(out["__vectorized_features__"]), [1, 0, 1, 22])
        let male = try p.prediction(from: ["Pclass": .double(3), "Sex": .string("male"), "Age": .double(22)])
        XCTAssertEqual(try vector(male["__vectorized_features__"]), [3, 1, 0, 22])
    }

    func testHousePricerFeatures() throws {
        let p = try prefix("moonandeye_HousePricer")
        let out = try p.prediction(from: ["RM": .double(6.5), "LSTAT": .double(5), "PTRATIO": .double(15)])
        XCTAssertEqual(try vector(out["__vectorized_features__"]), [6.5, 5, 15])
    }

    func testMRTFeatures() throws {
        // Date (24 categories, '2018-07-01' first), Hour, Inbound (108, '松山機場' first),
        // Outbound (108, '龍山寺' first): ones at 0, 25 and 25 + 108; Hour at 24.
        let p = try prefix("appletone_MRT")
        let out = try p.prediction(from: ["Date": .string("2018-07-01"), "Hour": .double(8),
                                          "Inbound": .string("松山機場"), "Outbound": .string("龍山寺")])
        let v = try vector(out.values.first)
        XCTAssertEqual(v.count, 241)
        XCTAssertEqual(v.indices.filter { v[$0] != 0 }, [0, 24, 25, 133])
        XCTAssertEqual(v[24], 8)
        // Unknown categories are ignored (IgnoreUnknown): all-zero blocks.
        let unknown = try p.prediction(from: ["Date": .string("1999-01-01"), "Hour": .double(8),
                                              "Inbound": .string("?"), "Outbound": .string("?")])
        XCTAssertEqual(try vector(unknown.values.first).reduce(0, +), 8)
    }

    func testNamesDTNestedFeaturePipeline() throws {
        // Stage 0 is itself a pipeline: dictVectorizer (8601 string keys, sparse output) → featureVectorizer.
        let s = try spec("cocoaai_NamesDT")
        guard let inner = s.pipelineModels.first, let dv = inner.pipelineModels.first,
              case let .dictVectorizer(d)? = try dv.classicalParameters(), case let .stringToIndex(keys)? = d.map else {
            return XCTFail("unexpected NamesDT structure")
        }
        XCTAssertEqual(keys.vector.count, 8601)
        let p = try prefix("cocoaai_NamesDT")
        let out = try p.prediction(from: ["input": .dictionary(.stringKeys([keys.vector[5]: 1, keys.vector[100]: 2, "not a feature": 7]))])
        let v = try vector(out["__feature_vector__"])
        XCTAssertEqual(v.count, 8601)
        XCTAssertEqual(v.indices.filter { v[$0] != 0 }, [5, 100])
        XCTAssertEqual(v[100], 2)
    }

    // MARK: Full predictions (need the tree / GLM stages)

    func testTitanicPrediction() throws {
        let m = try loadFull("tiagopoleze_Titanic")
        func survival(_ pclass: Double, _ sex: String) throws -> Double {
            let out = try m.prediction(from: ["Pclass": .double(pclass), "Sex": .string(sex), "Age": .double(22)])
            guard case let .int64(label)? = out["Survived"], case let .dictionary(.int64Keys(p))? = out["SurvivedProbability"] else {
                XCTFail("outputs: \(out)"); return .nan
            }
            XCTAssertTrue(label == 0 || label == 1)
            XCTAssertEqual(Set(p.keys), [0, 1])
            XCTAssertEqual((p[0] ?? .nan) + (p[1] ?? .nan), 1, accuracy: 1e-9)
            XCTAssertEqual(label, (p[1] ?? 0) > (p[0] ?? 0) ? 1 : 0)
            return p[1] ?? .nan
        }
        let firstClassWoman = try survival(1, "female"), thirdClassMan = try survival(3, "male")
        XCTAssertTrue(firstClassWoman.isFinite && thirdClassMan.isFinite)
        XCTAssertGreaterThan(firstClassWoman, thirdClassMan)
    }

    func testHousePricerPrediction() throws {
        let m = try loadFull("moonandeye_HousePricer")
        func price(_ rm: Double, _ lstat: Double) throws -> Double {
            guard case let .double(v)? = try m.prediction(from: ["RM": .double(rm), "LSTAT": .double(lstat), "PTRATIO": .double(18)])["MEDV"] else {
                XCTFail("MEDV is not a Double"); return .nan
            }
            return v
        }
        let big = try price(8, 3), small = try price(4.5, 30)
        XCTAssertTrue(big.isFinite && small.isFinite)
        XCTAssertGreaterThan(big, small)  // more rooms, fewer low-status households: dearer (Boston data)
    }

    func testMRTPrediction() throws {
        let m = try loadFull("appletone_MRT")
        let out = try m.prediction(from: ["Date": .string("2018-07-02"), "Hour": .double(8),
                                          "Inbound": .string("大安"), "Outbound": .string("市政府")])
        guard case let .double(v)? = out["Passenger"] else { return XCTFail("\(out)") }
        XCTAssertTrue(v.isFinite)
    }

    func testNamesDTPrediction() throws {
        let m = try loadFull("cocoaai_NamesDT")
        let s = try spec("cocoaai_NamesDT")
        guard case let .dictVectorizer(d)? = try s.pipelineModels.first?.pipelineModels.first?.classicalParameters(),
              case let .stringToIndex(keys)? = d.map else { return XCTFail("unexpected NamesDT structure") }
        let out = try m.prediction(from: ["input": .dictionary(.stringKeys([keys.vector[0]: 1, keys.vector[1]: 1]))])
        guard case let .string(label)? = out["classLabel"], case let .dictionary(.stringKeys(p))? = out["classProbability"] else {
            return XCTFail("\(out)")
        }
        XCTAssertTrue(["F", "M"].contains(label))
        XCTAssertEqual(Set(p.keys), ["F", "M"])
        XCTAssertTrue(p.values.allSatisfy(\.isFinite))
    }

    // MARK: Refused models

    func testAppleProprietaryModelsNameTheStage() throws {
        let cases: [(String, String, String)] = [
            ("grootwo_BottleClassifier_createml5", "grootwo_BottleClassifier_createml5.mlmodel › stage 0 (visionFeaturePrint)", "visionFeaturePrint"),
            ("noahgift_cats_dogs", "noahgift_cats_dogs.mlmodel › stage 0 (visionFeaturePrint)", "visionFeaturePrint"),
            ("edolj_SoundClassifier", "edolj_SoundClassifier.mlmodel › stage 0 (audioFeaturePrint)", "audioFeaturePrint"),
            ("jacopo_carwatson_textclassifier", "jacopo_carwatson_textclassifier.mlmodel", "textClassifier"),
            ("aidev_ProductTagger_wordtagger", "aidev_ProductTagger_wordtagger.mlmodel", "wordTagger"),
        ]
        for (file, model, kind) in cases {
            XCTAssertThrowsError(try load(file), file) {
                XCTAssertEqual($0 as? FeatureError, .appleProprietary(model: model, kind: kind), file)
            }
        }
    }

    /// The corpus keeps this pipeline's spec without its weight file (weight.bin is not in
    /// ../shared): its ML program stage is refused with a typed import error naming the stage and
    /// the missing weight file.
    func testMLProgramStageWithoutItsWeightFileIsRefusedNamingTheStage() throws {
        XCTAssertThrowsError(try load("mzietera_yolov8n_nms_pipeline_specOnly")) {
            XCTAssertTrue($0 is CoreMLImportError, "\(type(of: $0)): \($0)")
            let message = "\($0)"
            XCTAssertTrue(message.contains("mzietera_yolov8n_nms_pipeline_specOnly.mlmodel › stage 0 (mlProgram)"), message)
            XCTAssertTrue(message.contains("weights/weight.bin"), message)
        }
        // Its NMS stage alone loads, with the optional threshold inputs.
        let nms = try XCTUnwrap(try spec("mzietera_yolov8n_nms_pipeline_specOnly").pipelineModels.last)
        let m = try CoreMLModelLoader.load(nms, context: ModelLoadContext(name: "nms"))
        // Two overlapping boxes of class 0 (IOU 0.6 > 0.45) and one far away: two are kept.
        var conf = [Double](repeating: 0, count: 3 * 80)
        conf[0] = 0.9; conf[80] = 0.8; conf[160 + 5] = 0.7
        let coords: [Double] = [100, 100, 40, 40,   110, 100, 40, 40,   400, 300, 20, 20]
        guard case let .nonMaximumSuppression(p)? = try nms.classicalParameters() else { return XCTFail("not an NMS stage") }
        XCTAssertEqual(p.iouThreshold, 0.45, accuracy: 1e-9)
        let feed: FeatureProvider = [
            p.confidenceInputFeatureName: .multiArray(try MultiArray(shape: [3, 80], dataType: .float32, values: conf)),
            p.coordinatesInputFeatureName: .multiArray(try MultiArray(shape: [3, 4], dataType: .float32, values: coords)),
        ]
        let out = try m.prediction(from: feed)
        XCTAssertEqual(out.count, 2)
        for v in out.values {
            guard case let .multiArray(a) = v else { return XCTFail("\(v)") }
            XCTAssertEqual(a.shape.first, 2)
        }
    }
}
