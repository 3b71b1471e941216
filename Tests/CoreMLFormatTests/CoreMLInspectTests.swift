// CoreMLInspector on every file of ../shared/corpus/mlmodel (checked against MANIFEST.md) and on
// the style-transfer model. Skipped, visibly, when ../shared is absent.
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

final class CoreMLInspectTests: XCTestCase {
    private func corpus() throws -> (URL, [String: CorpusExpectation]) {
        let dir = try TestPaths.sharedFile("corpus/mlmodel")
        let manifest = (try? String(contentsOf: dir.deletingLastPathComponent().appendingPathComponent("MANIFEST.md"), encoding: .utf8)) ?? ""
        return (dir, CorpusExpectation.parse(manifest))
    }

    private func report(_ relative: String) throws -> CoreMLReport {
        try CoreMLInspector.report(for: try TestPaths.sharedFile(relative))
    }

    /// Pre-order (kind, spec version) of the pipeline stages in a report's JSON.
    private func stages(_ j: [String: Any]) -> [(String, Int32)] {
        guard let p = j["pipeline"] as? [String: Any], let st = p["stages"] as? [[String: Any]] else { return [] }
        return st.flatMap { s in [(s["modelType"] as? String ?? "", Int32(s["specificationVersion"] as? Int ?? -1))] + stages(s) }
    }

    func testEveryCorpusFileIsInspectedOrFailsWithTheCodecError() throws {
        let (dir, expectations) = try corpus()
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertGreaterThanOrEqual(names.count, 30)
        var checked = 0
        for name in names {
            let url = dir.appendingPathComponent(name)
            let e = expectations[name]
            do {
                let r = try CoreMLInspector.report(for: url)
                XCTAssertFalse(e?.notAModel ?? false, "\(name) should not be readable")
                XCTAssertTrue(r.text.hasPrefix(name), name)
                XCTAssertTrue(r.text.contains("Spec version:"), name)
                XCTAssertNoThrow(try r.jsonData(), "\(name): report is not JSON-serializable")
                XCTAssertEqual(r.jsonObject["format"] as? String, name.hasSuffix(".mlpackage") ? "mlpackage" : "mlmodel")
                XCTAssertNotNil(r.jsonObject["inputs"], name)
                XCTAssertNotNil((r.jsonObject["mlconv"] as? [String: Any])?["canRun"], name)
                guard let e else { continue }
                checked += 1
                if let v = e.specVersion { XCTAssertEqual(r.specificationVersion, Int(v), name) }
                if let k = e.kind { XCTAssertEqual(r.modelType, k, name) }
                XCTAssertEqual(r.jsonObject["isUpdatable"] as? Bool, e.isUpdatable, name)
                if let layers = e.layers {
                    let nn = try XCTUnwrap(r.jsonObject["neuralNetwork"] as? [String: Any], name)
                    XCTAssertEqual(nn["layerTypes"] as? [String: Int], layers, name)
                    XCTAssertEqual(nn["layerCount"] as? Int, e.layerCount, name)
                }
                if !e.stages.isEmpty {
                    let got = stages(r.jsonObject)
                    XCTAssertEqual(got.map(\.0), e.stages.map(\.kind), "\(name) stages")
                    XCTAssertEqual(got.map(\.1), e.stages.map(\.spec), "\(name) stage versions")
                }
            } catch let error as CoreMLFormatError {
                XCTAssertTrue(e?.notAModel ?? false, "\(name): unexpected \(error)")
                guard case let .notAModel(file, _, found) = error else { XCTFail("\(name): \(error)"); continue }
                XCTAssertEqual(file, url.path)
                XCTAssertTrue(found.contains("alias"), found)
            }
        }
        if !expectations.isEmpty { XCTAssertGreaterThanOrEqual(checked, 29) }
    }

    func testStyleTransferReport() throws {
        let r = try report("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        XCTAssertEqual(r.modelType, "neuralNetwork")
        XCTAssertEqual(r.specificationVersion, 2)
        XCTAssertEqual(r.jsonObject["minimumDeploymentTarget"] as? [String: String],
                       ["iOS": "11.2", "macOS": "10.13.2", "tvOS": "11.2", "watchOS": "4.2"])
        let nn = try XCTUnwrap(r.jsonObject["neuralNetwork"] as? [String: Any])
        XCTAssertEqual(nn["layerTypes"] as? [String: Int], ["convolution": 16, "batchnorm": 15, "activation": 11, "custom": 6,
                                                            "add": 5, "upsample": 2, "padding": 1])
        XCTAssertEqual(nn["layerTypeOrder"] as? [String], ["convolution", "batchnorm", "activation", "custom", "add", "upsample", "padding"])
        XCTAssertEqual(nn["customLayerClassNames"] as? [String: Int], ["ResCropBlockLambda": 5, "RescaleOutputLambda": 1])
        XCTAssertEqual(nn["parameterCount"] as? Int, 552_003)
        XCTAssertEqual(nn["weightPrecision"] as? [String: Int], ["fp32": 92])
        let layers = try XCTUnwrap(nn["layers"] as? [[String: Any]])
        XCTAssertEqual(layers.count, 56)
        XCTAssertEqual(layers[1]["name"] as? String, "conv2d_1")
        XCTAssertEqual(layers[1]["parameterCount"] as? Int, 15_616)
        XCTAssertEqual(layers[1]["precision"] as? String, "fp32")
        XCTAssertEqual(layers.last?["className"] as? String, "RescaleOutputLambda")
        let pre = try XCTUnwrap(nn["preprocessing"] as? [[String: Any]])
        XCTAssertEqual(pre.first?["type"] as? String, "scaler")
        XCTAssertEqual(pre.first?["channelScale"] as? Double, 1)

        for key in ["inputs", "outputs"] {
            let f = try XCTUnwrap((r.jsonObject[key] as? [[String: Any]])?.first, key)
            XCTAssertEqual(f["type"] as? String, "image", key)
            XCTAssertEqual(f["colorSpace"] as? String, "RGB", key)
            XCTAssertEqual(f["width"] as? Int, 320, key)
            XCTAssertEqual(f["height"] as? Int, 320, key)
        }
        let md = try XCTUnwrap(r.jsonObject["metadata"] as? [String: Any])
        XCTAssertEqual(md["author"] as? String, "Joshua Newnham")
        XCTAssertEqual(md["license"] as? String, "BSD")
        let mlconv = try XCTUnwrap(r.jsonObject["mlconv"] as? [String: Any])
        XCTAssertEqual(mlconv["canImport"] as? Bool, true)
        XCTAssertEqual(mlconv["canRun"] as? Bool, true)

        for needle in ["Type:          neuralNetwork", "Spec version:  2 (iOS 11.2+, macOS 10.13.2+",
                       "image  Image (RGB 320 × 320) — Preprocessed content image",
                       "output  Image (RGB 320 × 320) — Stylized content image",
                       "56 layers, 552,003 parameters, weights fp32 ×92",
                       "convolution ×16, batchnorm ×15, activation ×11, custom ×6, add ×5, upsample ×2, padding ×1",
                       "ResCropBlockLambda ×5, RescaleOutputLambda ×1", "class ResCropBlockLambda"] {
            XCTAssertTrue(r.text.contains(needle), "missing '\(needle)' in:\n\(r.text)")
        }
    }

    func testNeuralNetworkDetails() throws {
        let food = try report("corpus/mlmodel/kingreza_food_kmeans_lut_4bit.mlmodel")
        let nn = try XCTUnwrap(food.jsonObject["neuralNetwork"] as? [String: Any])
        XCTAssertEqual(nn["weightPrecision"] as? [String: Int], ["4-bit LUT": 52])
        XCTAssertEqual(nn["parameterCount"] as? Int, 774_309)
        XCTAssertEqual((food.jsonObject["classLabels"] as? [String: Any])?["count"] as? Int, 101)
        XCTAssertEqual((nn["preprocessing"] as? [[String: Any]])?.first?["type"] as? String, "meanImage")
        let lin = try XCTUnwrap(try report("corpus/mlmodel/kingreza_food_linear_8bit.mlmodel").jsonObject["neuralNetwork"] as? [String: Any])
        XCTAssertEqual(lin["weightPrecision"] as? [String: Int], ["8-bit linear": 52])
        let fp16 = try XCTUnwrap(try report("corpus/mlmodel/kingreza_food_fp16.mlmodel").jsonObject["neuralNetwork"] as? [String: Any])
        XCTAssertEqual(fp16["weightPrecision"] as? [String: Int], ["fp16": 52])

        let swish = try report("corpus/mlmodel/hollance_NeuralMcNeuralNet_swish.mlmodel")
        XCTAssertEqual((swish.jsonObject["neuralNetwork"] as? [String: Any])?["customLayerClassNames"] as? [String: Int], ["Swish": 1])
        XCTAssertEqual((swish.jsonObject["mlconv"] as? [String: Any])?["canRun"] as? Bool, false)
        XCTAssertTrue(swish.text.contains("Swish are registered"), swish.text)

        let lstm = try report("corpus/mlmodel/miyakooti_motionClassifier.mlmodel")
        XCTAssertEqual((lstm.jsonObject["mlconv"] as? [String: Any])?["canImport"] as? Bool, true, "\(lstm.jsonObject["mlconv"] ?? "")")
        XCTAssertEqual((lstm.jsonObject["neuralNetwork"] as? [String: Any])?["parameterCount"] as? Int, 257_760)

        let upd = try report("corpus/mlmodel/archdanny_newcoreml.mlmodel")
        XCTAssertEqual((upd.jsonObject["neuralNetwork"] as? [String: Any])?["weightPrecision"] as? [String: Int], ["fp32": 6, "updatable": 6])
        XCTAssertTrue((upd.jsonObject["notes"] as? [String])?.contains { $0.contains("updatable") } ?? false)
        let mnist = try report("corpus/mlmodel/r4ghu_mnistCNN.mlmodel")
        XCTAssertEqual((mnist.jsonObject["inputs"] as? [[String: Any]])?.first?["colorSpace"] as? String, "GRAYSCALE")
        XCTAssertEqual(mnist.jsonObject["predictedProbabilitiesName"] as? String, "output")
    }

    func testOtherModelKinds() throws {
        let prog = try report("corpus/mlmodel/autonerf_superpoint.mlpackage")
        XCTAssertEqual(prog.modelType, "mlProgram")
        XCTAssertTrue(prog.text.contains("mlProgram: runs with `mlconv predict`"), prog.text)
        let fn = try XCTUnwrap(((prog.jsonObject["details"] as? [String: Any])?["functions"] as? [[String: Any]])?.first)
        XCTAssertEqual(fn["name"] as? String, "main")
        XCTAssertEqual(fn["operationCount"] as? Int, 141)
        XCTAssertEqual((fn["operations"] as? [String: Int])?["conv"], 12)
        XCTAssertEqual(fn["constsInWeightFile"] as? Int, 24)
        XCTAssertNotNil((prog.jsonObject["package"] as? [String: Any])?["weightsBytes"])

        let tree = try report("corpus/mlmodel/cocoaai_NamesDT.mlmodel")
        let treeStage = try XCTUnwrap(((tree.jsonObject["pipeline"] as? [String: Any])?["stages"] as? [[String: Any]])?.last)
        XCTAssertEqual((treeStage["details"] as? [String: Any])?["trees"] as? Int, 1)
        XCTAssertEqual((treeStage["details"] as? [String: Any])?["nodes"] as? Int, 19_023)
        XCTAssertEqual((treeStage["classLabels"] as? [String: Any])?["count"] as? Int, 2)

        let svm = try report("corpus/mlmodel/gavi_iris.mlmodel")
        XCTAssertEqual((svm.jsonObject["details"] as? [String: Any])?["kernel"] as? String, "rbfKernel")
        XCTAssertEqual((svm.jsonObject["classLabels"] as? [String: Any])?["count"] as? Int, 3)
        XCTAssertEqual((svm.jsonObject["inputs"] as? [[String: Any]])?.first?["dataType"] as? String, "INVALID_ARRAY_DATA_TYPE")

        let knn = try report("corpus/mlmodel/cfinker_UpdatableKNN.mlmodel")
        let kd = try XCTUnwrap(knn.jsonObject["details"] as? [String: Any])
        XCTAssertEqual(kd["k"] as? Int, 3)
        XCTAssertEqual(kd["dimensions"] as? Int, 21)
        XCTAssertEqual(kd["samples"] as? Int, 0)
        XCTAssertEqual(kd["index"] as? String, "kd-tree")
        XCTAssertNotNil(knn.jsonObject["trainingInputs"])

        let text = try report("corpus/mlmodel/jacopo_carwatson_textclassifier.mlmodel")
        XCTAssertEqual((text.jsonObject["classLabels"] as? [String: Any])?["count"] as? Int, 25)
        let tagger = try report("corpus/mlmodel/aidev_ProductTagger_wordtagger.mlmodel")
        XCTAssertEqual(((tagger.jsonObject["details"] as? [String: Any])?["tags"] as? [String])?.count, 2)
        XCTAssertEqual((tagger.jsonObject["outputs"] as? [[String: Any]])?.first?["type"] as? String, "sequence")

        let sound = try report("corpus/mlmodel/edolj_SoundClassifier.mlmodel")
        let input = try XCTUnwrap((sound.jsonObject["inputs"] as? [[String: Any]])?.first)
        XCTAssertNotNil((input["shapeFlexibility"] as? [String: Any])?["shapeRange"])
        let glm = try XCTUnwrap(((sound.jsonObject["pipeline"] as? [String: Any])?["stages"] as? [[String: Any]])?.last)
        XCTAssertEqual((glm["details"] as? [String: Any])?["weightRows"] as? Int, 9)
        XCTAssertEqual((glm["details"] as? [String: Any])?["weightColumns"] as? Int, 512)

        let cats = try report("corpus/mlmodel/noahgift_cats_dogs.mlmodel")
        let img = try XCTUnwrap((cats.jsonObject["inputs"] as? [[String: Any]])?.first)
        XCTAssertNotNil((img["sizeFlexibility"] as? [String: Any])?["widthRange"])

        let yolo = try report("corpus/mlmodel/mzietera_yolov8n_nms_pipeline_specOnly.mlmodel")
        XCTAssertTrue((yolo.jsonObject["notes"] as? [String])?.contains { $0.contains("above the pipeline's 5") } ?? false)
        let nms = try XCTUnwrap(((yolo.jsonObject["pipeline"] as? [String: Any])?["stages"] as? [[String: Any]])?.last)
        XCTAssertEqual((nms["details"] as? [String: Any])?["iouThreshold"] as? Double, 0.45)
        XCTAssertEqual((nms["classLabels"] as? [String: Any])?["count"] as? Int, 80)

        let titanic = try report("corpus/mlmodel/tiagopoleze_Titanic.mlmodel")
        let trees = try XCTUnwrap(((titanic.jsonObject["pipeline"] as? [String: Any])?["stages"] as? [[String: Any]])?.last)
        XCTAssertEqual((trees["classLabels"] as? [String: Any])?["type"] as? String, "int64")
        XCTAssertEqual((trees["details"] as? [String: Any])?["trees"] as? Int, 10)
    }

    func testBrokenFilesThrowTheCodecErrors() throws {
        let tmp = try TestPaths.temporaryDirectory(for: self)
        let junk = tmp.appendingPathComponent("junk.mlmodel")
        try Data("not a model at all".utf8).write(to: junk)
        XCTAssertThrowsError(try CoreMLInspector.report(for: junk)) { error in
            guard case .notAModel? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try CoreMLInspector.report(for: tmp.appendingPathComponent("missing.mlmodel"))) { error in
            guard case .unreadable? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
        }
        let pkg = tmp.appendingPathComponent("empty.mlpackage")
        try FileManager.default.createDirectory(at: pkg, withIntermediateDirectories: true)
        XCTAssertThrowsError(try CoreMLInspector.report(for: pkg)) { error in
            guard case .invalidPackage? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
        }
    }

    func testSyntheticSpecsAreDescribed() throws {
        // A classifier with int64 labels and flexible inputs, written and inspected.
        var m = ImportSpecs.model([Spec.FeatureDescription(name: "x", shortDescription: "features", type: Spec.FeatureType(
            .multiArray(Spec.ArrayFeatureType(shape: [3], dataType: .double, shapeFlexibility: .enumeratedShapes([[3], [5]])))))],
            [Spec.FeatureDescription(name: "probs", type: Spec.FeatureType(.dictionary(Spec.DictionaryFeatureType(keyType: .int64)))),
             Spec.FeatureDescription(name: "label", type: Spec.FeatureType(.int64))],
            [ImportSpecs.layer("sm", ["x"], ["probs"], .softmax)], version: 3)
        m.type = .neuralNetworkClassifier(Spec.NeuralNetworkClassifier(network: m.neuralNetwork!, classLabels: .int64s([7, 8, 9])))
        m.description?.predictedFeatureName = "label"
        m.description?.predictedProbabilitiesName = "probs"
        m.description?.metadata = Spec.Metadata(shortDescription: "tiny", versionString: "1.2", author: "me", license: "MIT",
                                                userDefined: [.init(key: "k", value: "v")])
        let tmp = try TestPaths.temporaryDirectory(for: self)
        let url = tmp.appendingPathComponent("tiny.mlmodel")
        try m.write(toFile: url.path)
        let r = try CoreMLInspector.report(for: url)
        XCTAssertEqual(r.modelType, "neuralNetworkClassifier")
        XCTAssertEqual(r.jsonObject["classLabels"] as? NSDictionary, ["count": 3, "type": "int64", "first": [7, 8, 9]] as NSDictionary)
        let x = try XCTUnwrap((r.jsonObject["inputs"] as? [[String: Any]])?.first)
        XCTAssertEqual(x["typeDescription"] as? String, "MultiArray (Double 3), shapes [3], [5]")
        XCTAssertEqual((r.jsonObject["metadata"] as? [String: Any])?["userDefined"] as? [String: String], ["k": "v"])
        for needle in ["Description:   tiny", "Version:       1.2", "User-defined:  k = v", "probs  Dictionary (Int64 → Double)",
                       "label  Int64", "Class labels:  3 integers: 7, 8, 9", "mlconv: imports"] {
            XCTAssertTrue(r.text.contains(needle), "missing '\(needle)' in:\n\(r.text)")
        }
    }
}
