// Typed decoding of the classical model kinds (Spec.Model.classicalParameters()) on the real
// models of ../shared/corpus/mlmodel. Expected values were read from the same files with
// coremltools 7.2's own protobuf classes (Model_pb2) and MANIFEST.md.
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

final class ClassicalModelDecodeTests: XCTestCase {
    private func corpusModel(_ name: String) throws -> Spec.Model {
        let url = try TestPaths.sharedFile("corpus/mlmodel/" + name)
        return try Spec.Model.load(contentsOf: url.path)
    }

    /// The model and its pipeline stages, pre-order, with a path such as `name[1][0]`.
    private func walk(_ m: Spec.Model, _ path: String) -> [(String, Spec.Model)] {
        [(path, m)] + m.pipelineModels.enumerated().flatMap { walk($0.element, "\(path)[\($0.offset)]") }
    }

    private func params(_ name: String, stage: [Int] = []) throws -> Spec.ClassicalParameters {
        var m = try corpusModel(name)
        for i in stage { m = m.pipelineModels[i] }
        return try XCTUnwrap(try m.classicalParameters(file: name), "\(name) \(stage): not classical")
    }

    func testEveryClassicalModelAndStageInTheCorpusDecodes() throws {
        let dir = try TestPaths.sharedFile("corpus/mlmodel")
        var decoded: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() {
            guard let model = try? Spec.Model.load(contentsOf: dir.appendingPathComponent(name).path) else { continue }
            for (path, m) in walk(model, name) {
                let p = try m.classicalParameters(file: path)
                if let kind = m.kind, Spec.ClassicalParameters.kinds.contains(kind) {
                    let p = try XCTUnwrap(p, path)
                    XCTAssertEqual(p.kind, kind, path)
                    decoded[kind.name, default: 0] += 1
                } else {
                    XCTAssertNil(p, "\(path): \(m.kind?.name ?? "none") is not a classical kind")
                }
            }
        }
        // Counts of classical models/stages in the corpus (coremltools' reading of the same files).
        XCTAssertEqual(decoded, ["oneHotEncoder": 12, "featureVectorizer": 5, "glmRegressor": 1, "glmClassifier": 3,
                                 "kNearestNeighborsClassifier": 1, "dictVectorizer": 1, "treeEnsembleClassifier": 2,
                                 "supportVectorClassifier": 1, "treeEnsembleRegressor": 1,
                                 "nonMaximumSuppression": 1, "arrayFeatureExtractor": 8])
    }

    func testTitanicTreeEnsembleClassifier() throws {
        guard case let .treeEnsembleClassifier(t) = try params("tiagopoleze_Titanic.mlmodel", stage: [2]) else {
            return XCTFail("expected treeEnsembleClassifier")
        }
        let e = try XCTUnwrap(t.treeEnsemble)
        XCTAssertEqual(e.nodes.count, 640)
        XCTAssertEqual(Set(e.nodes.map(\.treeId)).count, 10)
        XCTAssertEqual(e.nodes.filter { $0.nodeBehavior == .leafNode }.count, 325)
        XCTAssertEqual(e.numPredictionDimensions, 1)
        XCTAssertEqual(e.basePredictionValue, [0])
        XCTAssertEqual(t.postEvaluationTransform, .regressionLogistic)
        XCTAssertEqual(t.classLabels, .int64ClassLabels(Spec.Int64Vector(vector: [0, 1])))
        let n0 = e.nodes[0]
        XCTAssertEqual([n0.treeId, n0.nodeId, n0.branchFeatureIndex, n0.trueChildNodeId, n0.falseChildNodeId], [0, 0, 1, 2, 1])
        XCTAssertEqual(n0.nodeBehavior, .branchOnValueEqual)
        XCTAssertEqual(n0.branchFeatureValue, 1.0)
        XCTAssertFalse(n0.missingValueTracksTrueChild)
        let leaf = try XCTUnwrap(e.nodes.first { $0.nodeBehavior == .leafNode })
        XCTAssertEqual(leaf.nodeId, 15)
        XCTAssertEqual(leaf.evaluationInfo, [.init(evaluationIndex: 0, evaluationValue: -0.12000000476837158)])
        // The stages before the trees.
        guard case let .oneHotEncoder(o) = try params("tiagopoleze_Titanic.mlmodel", stage: [0]) else { return XCTFail() }
        XCTAssertEqual(o.categoryType, .stringCategories(Spec.StringVector(vector: ["male", "female"])))
        XCTAssertTrue(o.outputSparse)
        XCTAssertEqual(o.handleUnknown, .ignoreUnknown)
        guard case let .featureVectorizer(v) = try params("tiagopoleze_Titanic.mlmodel", stage: [1]) else { return XCTFail() }
        XCTAssertEqual(v.inputList.map(\.inputColumn), ["Pclass", "Sex", "Age"])
        XCTAssertEqual(v.inputList.map(\.inputDimensions), [1, 2, 1])
    }

    func testHousePricerTreeEnsembleRegressor() throws {
        guard case let .treeEnsembleRegressor(t) = try params("moonandeye_HousePricer.mlmodel", stage: [1]) else {
            return XCTFail("expected treeEnsembleRegressor")
        }
        let e = try XCTUnwrap(t.treeEnsemble)
        XCTAssertEqual(e.nodes.count, 488)
        XCTAssertEqual(Set(e.nodes.map(\.treeId)).count, 10)
        XCTAssertEqual(e.nodes.filter { $0.nodeBehavior == .leafNode }.count, 249)
        XCTAssertEqual(e.basePredictionValue, [0.5])
        XCTAssertEqual(t.postEvaluationTransform, .noTransform)
        XCTAssertEqual(e.nodes[0].nodeBehavior, .branchOnValueLessThanEqual)
        XCTAssertEqual(e.nodes[0].branchFeatureValue, Double(Float(9.725)))
        let leaf = try XCTUnwrap(e.nodes.first { $0.nodeBehavior == .leafNode })
        XCTAssertEqual(leaf.evaluationInfo.first?.evaluationValue, 149772.9375)
    }

    func testUpdatableKNNClassifier() throws {
        guard case let .kNearestNeighborsClassifier(k) = try params("cfinker_UpdatableKNN.mlmodel") else {
            return XCTFail("expected kNearestNeighborsClassifier")
        }
        XCTAssertEqual(k.numberOfNeighbors?.defaultValue, 3)
        XCTAssertEqual(k.numberOfNeighbors?.allowedValues, .range(Spec.Int64Range(minValue: 1, maxValue: 10)))
        let index = try XCTUnwrap(k.nearestNeighborsIndex)
        XCTAssertEqual(index.numberOfDimensions, 21)
        XCTAssertEqual(index.floatSamples, [])
        XCTAssertEqual(index.indexType, .singleKdTreeIndex(Spec.SingleKdTreeIndex(leafSize: 30)))
        XCTAssertEqual(index.distanceFunction, .squaredEuclideanDistance(Spec.SquaredEuclideanDistance()))
        XCTAssertEqual(k.defaultClassLabel, .defaultStringLabel("defaultLabel"))
        XCTAssertEqual(k.weightingScheme, .inverseDistanceWeighting(Spec.InverseDistanceWeighting()))
        XCTAssertEqual(k.classLabels, .stringClassLabels(Spec.StringVector()))
    }

    func testIrisSupportVectorClassifier() throws {
        guard case let .supportVectorClassifier(s) = try params("gavi_iris.mlmodel") else {
            return XCTFail("expected supportVectorClassifier")
        }
        XCTAssertEqual(s.kernel?.kernel, .rbfKernel(Spec.RBFKernel(gamma: 0.25)))
        XCTAssertEqual(s.numberOfSupportVectorsPerClass, [7, 19, 19])
        guard case let .denseSupportVectors(d) = s.supportVectors else { return XCTFail("expected dense support vectors") }
        XCTAssertEqual(d.vectors.count, 45)
        XCTAssertTrue(d.vectors.allSatisfy { $0.values.count == 4 })
        XCTAssertEqual(s.coefficients.map(\.alpha.count), [45, 45])
        XCTAssertEqual(s.rho, [0.03985691051205832, 0.1677745320943027, 0.143704687543137])
        XCTAssertEqual(s.probA, [])
        XCTAssertEqual(s.probB, [])
        XCTAssertEqual(s.classLabels, .stringClassLabels(Spec.StringVector(vector: ["setosa", "versicolor", "virginica"])))
    }

    func testGLMsEncodersAndNMS() throws {
        guard case let .glmRegressor(g) = try params("appletone_MRT.mlmodel", stage: [4]) else { return XCTFail() }
        XCTAssertEqual(g.weights.map(\.value.count), [241])
        XCTAssertEqual(g.offset, [0.12016438775009447])
        XCTAssertEqual(g.postEvaluationTransform, .noTransform)
        guard case let .oneHotEncoder(o) = try params("appletone_MRT.mlmodel", stage: [1]) else { return XCTFail() }
        guard case let .stringCategories(c) = o.categoryType else { return XCTFail() }
        XCTAssertEqual(c.vector.count, 108)
        XCTAssertEqual(c.vector.first, "松山機場")

        guard case let .glmClassifier(gc) = try params("edolj_SoundClassifier.mlmodel", stage: [1]) else { return XCTFail() }
        XCTAssertEqual(gc.weights.count, 9)
        XCTAssertTrue(gc.weights.allSatisfy { $0.value.count == 512 })
        XCTAssertEqual(gc.weights[0].value[0], 2.380650030233572)
        XCTAssertEqual(gc.postEvaluationTransform, .logit)
        XCTAssertEqual(gc.classEncoding, .referenceClass)
        XCTAssertEqual(gc.classLabels, .stringClassLabels(Spec.StringVector(
            vector: ["cel", "cla", "flu", "gac", "gel", "org", "pia", "sax", "tru", "vio"])))

        let onehot = try corpusModel("onnxmltools_onehot_simple.mlmodel")
        var indices: [UInt64] = [], categoryCounts: [Int] = []
        for stage in onehot.pipelineModels {
            switch try stage.classicalParameters() {
            case let .arrayFeatureExtractor(a)?: indices += a.extractIndex
            case let .oneHotEncoder(o)?:
                guard case let .int64Categories(v) = o.categoryType else { return XCTFail("int64 categories expected") }
                categoryCounts.append(v.vector.count)
                XCTAssertEqual(o.handleUnknown, .errorOnUnknown)
            case let .featureVectorizer(f)?: XCTAssertEqual(f.inputList.map(\.inputDimensions), [9, 16, 7, 15, 6, 5, 2, 42])
            default: XCTFail("unexpected stage \(stage.kind?.name ?? "none")")
            }
        }
        XCTAssertEqual(indices, [0, 1, 2, 3, 4, 5, 6, 7])
        XCTAssertEqual(categoryCounts, [9, 16, 7, 15, 6, 5, 2, 42])

        guard case let .dictVectorizer(dv) = try params("cocoaai_NamesDT.mlmodel", stage: [0, 0]) else { return XCTFail() }
        guard case let .stringToIndex(keys) = dv.map else { return XCTFail() }
        XCTAssertEqual(keys.vector.count, 8601)
        XCTAssertEqual(keys.vector.prefix(2), ["first-letter=a", "first-letter=b"])
        guard case let .treeEnsembleClassifier(tree) = try params("cocoaai_NamesDT.mlmodel", stage: [1]) else { return XCTFail() }
        XCTAssertEqual(tree.treeEnsemble?.nodes.count, 19023)

        guard case let .nonMaximumSuppression(n) = try params("mzietera_yolov8n_nms_pipeline_specOnly.mlmodel", stage: [1]) else {
            return XCTFail()
        }
        XCTAssertEqual(n.suppressionMethod, .pickTop(.init(perClass: true)))
        XCTAssertEqual(n.iouThreshold, 0.45)
        XCTAssertEqual(n.confidenceThreshold, 0.25)
        guard case let .stringClassLabels(labels) = n.classLabels else { return XCTFail() }
        XCTAssertEqual(labels.vector.count, 80)
        XCTAssertEqual([n.confidenceInputFeatureName, n.coordinatesInputFeatureName, n.iouThresholdInputFeatureName,
                        n.confidenceThresholdInputFeatureName, n.confidenceOutputFeatureName, n.coordinatesOutputFeatureName],
                       ["var_841_1", "var_845", "iouThreshold", "confidenceThreshold", "confidence", "coordinates"])
    }

    /// A map with a default value written explicitly (as protobuf's C++ encoder writes map
    /// entries) decodes, and the model re-encodes with those bytes unchanged.
    func testCategoricalMappingMapAndVerbatimBytes() throws {
        let entry: [UInt8] = [0x0a, 0x01, 0x61, 0x10, 0x00]            // key "a", value 0 (explicit)
        let map: [UInt8] = [0x0a, UInt8(entry.count)] + entry          // StringToInt64Map.map
        let content = [
            Spec.UnknownField(fieldNumber: 1, wireType: .lengthDelimited, data: [UInt8(map.count)] + map),
            Spec.UnknownField(fieldNumber: 102, wireType: .varint, data: [UInt8](repeating: 0xff, count: 9) + [0x01]),  // -1
        ]
        let model = Spec.Model(specificationVersion: 1, type: .other(kind: .categoricalMapping, content: content))
        let bytes = try model.encode()
        let decoded = try Spec.Model.decode(bytes)
        XCTAssertEqual(decoded.type, model.type, "content must be kept byte-for-byte")
        XCTAssertEqual(try decoded.encode(), bytes)
        XCTAssertEqual(try decoded.classicalParameters(),
                       .categoricalMapping(Spec.CategoricalMapping(
                           mappingType: .stringToInt64Map(Spec.StringToInt64Map(map: ["a": 0])),
                           valueOnUnknown: .int64Value(-1))))
    }

    func testMalformedPayloadThrowsTypedErrorNamingTheKind() throws {
        // TreeEnsembleClassifier.treeEnsemble (field 1) is a message, here sent as a varint.
        let wrongType = Spec.Model(type: .other(kind: .treeEnsembleClassifier,
                                                content: [.init(fieldNumber: 1, wireType: .varint, data: [5])]))
        XCTAssertThrowsError(try wrongType.classicalParameters(file: "crafted.mlmodel")) { error in
            guard case let .invalidValue(file, what, message) = error as? CoreMLFormatError else {
                return XCTFail("expected CoreMLFormatError.invalidValue, got \(error)")
            }
            XCTAssertEqual(file, "crafted.mlmodel")
            XCTAssertTrue(what.contains("treeEnsembleClassifier"), what)
            XCTAssertTrue(message.contains("TreeEnsembleClassifier") && message.contains("wire type"), message)
        }
        // A length that runs past the end of the content.
        let truncated = Spec.Model(type: .other(kind: .glmRegressor,
                                                content: [.init(fieldNumber: 1, wireType: .lengthDelimited, data: [10, 1, 2])]))
        XCTAssertThrowsError(try truncated.classicalParameters()) { error in
            guard case let .invalidValue(_, what, message) = error as? CoreMLFormatError else {
                return XCTFail("expected CoreMLFormatError.invalidValue, got \(error)")
            }
            XCTAssertTrue(what.contains("glmRegressor"), what)
            XCTAssertTrue(message.contains("declares 10 bytes"), message)
        }
        // A packed double array whose length is not a multiple of 8 passes the wire scan; protobuf-c refuses it.
        let badPacked = Spec.Model(type: .other(kind: .scaler,
                                                content: [.init(fieldNumber: 1, wireType: .lengthDelimited, data: [3, 1, 2, 3])]))
        XCTAssertThrowsError(try badPacked.classicalParameters()) { error in
            guard case let .invalidValue(_, what, _) = error as? CoreMLFormatError else {
                return XCTFail("expected CoreMLFormatError.invalidValue, got \(error)")
            }
            XCTAssertTrue(what.contains("scaler"), what)
        }
        // In a file, the same content is rejected when the model is decoded.
        XCTAssertThrowsError(try Spec.Model.decode(try wrongType.encode(), fileName: "crafted.mlmodel")) { error in
            guard case let .notAModel(_, _, found) = error as? CoreMLFormatError else {
                return XCTFail("expected notAModel, got \(error)")
            }
            XCTAssertTrue(found.contains("treeEnsembleClassifier.treeEnsemble"), found)
        }
        // Not a classical kind.
        XCTAssertThrowsError(try Spec.ClassicalParameters.decode(kind: .neuralNetwork, bytes: []))
        XCTAssertNil(try Spec.Model(type: .other(kind: .wordTagger, content: [])).classicalParameters())
    }
}
