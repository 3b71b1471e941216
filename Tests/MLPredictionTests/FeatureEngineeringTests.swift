import CoreMLFormat
import TestSupport
import XCTest
@testable import MLPrediction

/// Feature descriptions for hand-built models.
enum FD {
    static func double(_ n: String) -> Spec.FeatureDescription { .init(name: n, type: .init(.double)) }
    static func int64(_ n: String) -> Spec.FeatureDescription { .init(name: n, type: .init(.int64)) }
    static func string(_ n: String) -> Spec.FeatureDescription { .init(name: n, type: .init(.string)) }
    static func array(_ n: String, _ shape: [Int64], _ dt: Spec.ArrayFeatureType.DataType = .double) -> Spec.FeatureDescription {
        .init(name: n, type: .init(.multiArray(.init(shape: shape, dataType: dt))))
    }
    static func dict(_ n: String, _ k: Spec.DictionaryFeatureType.KeyType) -> Spec.FeatureDescription {
        .init(name: n, type: .init(.dictionary(.init(keyType: k))))
    }
    static func seq(_ n: String, _ e: Spec.SequenceFeatureType.ElementType) -> Spec.FeatureDescription {
        .init(name: n, type: .init(.sequence(.init(elementType: e))))
    }
    static func desc(_ i: [Spec.FeatureDescription], _ o: [Spec.FeatureDescription]) -> Spec.ModelDescription {
        .init(input: i, output: o)
    }
}

func vec(_ v: [Double]) -> FeatureValue { .multiArray(MultiArray(vector: v)) }

func assertThrowsFeatureError(_ e: @autoclosure () throws -> Any, _ check: (FeatureError) -> Bool,
                              file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try e(), file: file, line: line) { err in
        guard let f = err as? FeatureError else { return XCTFail("not a FeatureError: \(err)", file: file, line: line) }
        XCTAssertTrue(check(f), "unexpected error: \(f)", file: file, line: line)
    }
}

final class FeatureEngineeringTests: XCTestCase {
    // MARK: OneHotEncoder

    func testOneHotEncoderDenseSparseAndUnknown() throws {
        let dense = try OneHotEncoderModel(parameters: .init(categories: .strings(["a", "b", "c"])),
                                           description: FD.desc([FD.string("x")], [FD.array("y", [3])]), name: "ohe")
        XCTAssertEqual(try dense.prediction(from: ["x": .string("b")])["y"], vec([0, 1, 0]))
        assertThrowsFeatureError(try dense.prediction(from: ["x": .string("z")])) {
            if case .invalidValue(_, "x", _, _) = $0 { return true }; return false
        }
        assertThrowsFeatureError(try dense.prediction(from: ["x": .int64(1)])) {
            if case .typeMismatch(_, "x", _, "Int64") = $0 { return true }; return false
        }
        let sparse = try OneHotEncoderModel(parameters: .init(categories: .int64s([5, 7, 9]), outputSparse: true, ignoreUnknown: true),
                                            description: FD.desc([FD.int64("x")], [FD.dict("x", .int64)]), name: "ohe")
        XCTAssertEqual(try sparse.prediction(from: ["x": .int64(9)])["x"], .dictionary(.int64Keys([2: 1])))
        XCTAssertEqual(try sparse.prediction(from: ["x": .double(7)])["x"], .dictionary(.int64Keys([1: 1])))
        XCTAssertEqual(try sparse.prediction(from: ["x": .int64(8)])["x"], .dictionary(.int64Keys([:])))
        let ignoreDense = try OneHotEncoderModel(parameters: .init(categories: .int64s([5, 7]), ignoreUnknown: true),
                                                 description: FD.desc([FD.int64("x")], [FD.array("y", [2])]), name: "ohe")
        XCTAssertEqual(try ignoreDense.prediction(from: ["x": .int64(6)])["y"], vec([0, 0]))
    }

    // MARK: FeatureVectorizer

    func testFeatureVectorizerConcatenatesScalarsArraysAndSparseDictionaries() throws {
        let m = try FeatureVectorizerModel(
            columns: [.init(name: "a", dimension: 1), .init(name: "d", dimension: 3), .init(name: "v", dimension: 2), .init(name: "n", dimension: 1)],
            description: FD.desc([FD.double("a"), FD.dict("d", .int64), FD.array("v", [2]), FD.int64("n")], [FD.array("out", [7])]), name: "fv")
        let out = try m.prediction(from: ["a": .double(1.5), "d": .dictionary(.int64Keys([2: 4, 0: -1])),
                                          "v": vec([8, 9]), "n": .int64(3)])
        XCTAssertEqual(out["out"], vec([1.5, -1, 0, 4, 8, 9, 3]))
        assertThrowsFeatureError(try m.prediction(from: ["a": .double(1), "d": .dictionary(.int64Keys([3: 1])), "v": vec([1, 2]), "n": .int64(0)])) {
            if case .invalidValue(_, "d", _, _) = $0 { return true }; return false
        }
        assertThrowsFeatureError(try m.prediction(from: ["a": .double(1), "d": .dictionary(.int64Keys([:])), "v": vec([1]), "n": .int64(0)])) {
            if case .shapeMismatch("v", [2], 1) = $0 { return true }; return false
        }
        assertThrowsFeatureError(try FeatureVectorizerModel(columns: [.init(name: "a", dimension: 0)],
                                                            description: FD.desc([FD.double("a")], [FD.array("o", [0])]), name: "fv")) {
            if case .invalidModel = $0 { return true }; return false
        }
    }

    // MARK: DictVectorizer

    func testDictVectorizerPlacesValuesByKeyPosition() throws {
        // DictVectorizer.proto's example: ["a", "c", "b", "z"], {"a": 4, "c": 8} → [4, 8, 0, 0].
        let m = try DictVectorizerModel(keys: .strings(["a", "c", "b", "z"]),
                                        description: FD.desc([FD.dict("in", .string)], [FD.array("out", [4])]), name: "dv")
        XCTAssertEqual(try m.prediction(from: ["in": .dictionary(.stringKeys(["a": 4, "c": 8]))])["out"], vec([4, 8, 0, 0]))
        XCTAssertEqual(try m.prediction(from: ["in": .dictionary(.stringKeys(["q": 4, "z": 1]))])["out"], vec([0, 0, 0, 1]))
        assertThrowsFeatureError(try m.prediction(from: ["in": .dictionary(.int64Keys([1: 1]))])) {
            if case .typeMismatch(_, "in", _, _) = $0 { return true }; return false
        }
        let sparse = try DictVectorizerModel(keys: .int64s([10, 20]),
                                             description: FD.desc([FD.dict("in", .int64)], [FD.dict("out", .int64)]), name: "dv")
        XCTAssertEqual(try sparse.prediction(from: ["in": .dictionary(.int64Keys([20: 2.5]))])["out"], .dictionary(.int64Keys([1: 2.5])))
    }

    // MARK: ArrayFeatureExtractor

    func testArrayFeatureExtractorScalarIntegerAndArrayOutputs() throws {
        let input = vec([10, 11.5, 12, -3])
        let d = try ArrayFeatureExtractorModel(indices: [1], description: FD.desc([FD.array("x", [4])], [FD.double("y")]), name: "afe")
        XCTAssertEqual(try d.prediction(from: ["x": input])["y"], .double(11.5))
        let i = try ArrayFeatureExtractorModel(indices: [3], description: FD.desc([FD.array("x", [4])], [FD.int64("y")]), name: "afe")
        XCTAssertEqual(try i.prediction(from: ["x": input])["y"], .int64(-3))
        let frac = try ArrayFeatureExtractorModel(indices: [1], description: FD.desc([FD.array("x", [4])], [FD.int64("y")]), name: "afe")
        assertThrowsFeatureError(try frac.prediction(from: ["x": input])) { if case .invalidValue = $0 { return true }; return false }
        let a = try ArrayFeatureExtractorModel(indices: [3, 0, 3], description: FD.desc([FD.array("x", [4])], [FD.array("y", [3])]), name: "afe")
        XCTAssertEqual(try a.prediction(from: ["x": input])["y"], vec([-3, 10, -3]))
        let out = try ArrayFeatureExtractorModel(indices: [4], description: FD.desc([FD.array("x", [4])], [FD.double("y")]), name: "afe")
        assertThrowsFeatureError(try out.prediction(from: ["x": input])) { if case .invalidValue = $0 { return true }; return false }
        assertThrowsFeatureError(try ArrayFeatureExtractorModel(indices: [0, 1], description: FD.desc([FD.array("x", [4])], [FD.double("y")]), name: "afe")) {
            if case .invalidModel = $0 { return true }; return false
        }
    }

    // MARK: CategoricalMapping

    func testCategoricalMappingBothDirectionsDefaultsAndSequences() throws {
        let s2i = try CategoricalMappingModel(mapping: .stringToInt64(["cat": 3, "dog": 5]), defaultValue: .int64(-1),
                                              description: FD.desc([FD.string("x")], [FD.int64("y")]), name: "cm")
        XCTAssertEqual(try s2i.prediction(from: ["x": .string("dog")])["y"], .int64(5))
        XCTAssertEqual(try s2i.prediction(from: ["x": .string("cow")])["y"], .int64(-1))
        XCTAssertEqual(try s2i.prediction(from: ["x": .sequence(.string(["cat", "cow"]))])["y"], .sequence(.int64([3, -1])))
        let i2s = try CategoricalMappingModel(mapping: .int64ToString([1: "one"]), defaultValue: nil,
                                              description: FD.desc([FD.int64("x")], [FD.string("y")]), name: "cm")
        XCTAssertEqual(try i2s.prediction(from: ["x": .int64(1)])["y"], .string("one"))
        assertThrowsFeatureError(try i2s.prediction(from: ["x": .int64(2)])) { if case .invalidValue(_, "x", _, _) = $0 { return true }; return false }
        assertThrowsFeatureError(try CategoricalMappingModel(mapping: .int64ToString([:]), defaultValue: .int64(0),
                                                             description: FD.desc([FD.int64("x")], [FD.string("y")]), name: "cm")) {
            if case .invalidModel = $0 { return true }; return false
        }
    }

    // MARK: Normalizer

    func testNormalizerNormsAsTheProtoDefinesThem() throws {
        let x: [Double] = [3, -4, 0]
        let l2 = NormalizerModel.normalize(x, norm: .l2)   // ‖x‖₂ = 5
        XCTAssertEqual(l2, [0.6, -0.8, 0])
        let l1 = NormalizerModel.normalize(x, norm: .l1)   // ‖x‖₁ = 7
        XCTAssertEqual(l1[0], 3.0 / 7, accuracy: 1e-15)
        XCTAssertEqual(l1[1], -4.0 / 7, accuracy: 1e-15)
        let lmax = NormalizerModel.normalize(x, norm: .lMax) // max(x_i) = 3 (not max |x_i|)
        XCTAssertEqual(lmax[0], 1)
        XCTAssertEqual(lmax[1], -4.0 / 3, accuracy: 1e-15)
        XCTAssertEqual(NormalizerModel.normalize([0, 0], norm: .l2), [0, 0])
        let m = try NormalizerModel(norm: .l2, description: FD.desc([FD.array("x", [2, 1])], [FD.array("y", [2, 1], .float32)]), name: "n")
        let a = try MultiArray(shape: [2, 1], values: [6, 8])
        XCTAssertEqual(try m.prediction(from: ["x": .multiArray(a)])["y"],
                       .multiArray(try MultiArray(shape: [2, 1], dataType: .float32, values: [0.6, 0.8])))
    }

    // MARK: Scaler

    func testScalerAddsShiftThenScales() throws {
        // f(x) = scale · (x + shift): (3 + 1)·2 = 8, (4 − 2)·0.5 = 1.
        let m = try ScalerModel(shift: [1, -2], scale: [2, 0.5], description: FD.desc([FD.array("x", [2])], [FD.array("y", [2])]), name: "s")
        XCTAssertEqual(try m.prediction(from: ["x": vec([3, 4])])["y"], vec([8, 1]))
        let broadcast = try ScalerModel(shift: [10], scale: [], description: FD.desc([FD.array("x", [3])], [FD.array("y", [3])]), name: "s")
        XCTAssertEqual(try broadcast.prediction(from: ["x": vec([1, 2, 3])])["y"], vec([11, 12, 13]))
        assertThrowsFeatureError(try m.prediction(from: ["x": vec([1, 2, 3])])) { if case .invalidValue = $0 { return true }; return false }
        let toInt = try ScalerModel(shift: [0.5], scale: [2], description: FD.desc([FD.int64("x")], [FD.int64("y")]), name: "s")
        XCTAssertEqual(try toInt.prediction(from: ["x": .int64(3)])["y"], .int64(7))
        let lossy = try ScalerModel(shift: [0.25], scale: [1], description: FD.desc([FD.int64("x")], [FD.int64("y")]), name: "s")
        assertThrowsFeatureError(try lossy.prediction(from: ["x": .int64(3)])) { if case .invalidValue = $0 { return true }; return false }
        let scalar = try ScalerModel(shift: [], scale: [3], description: FD.desc([FD.double("x")], [FD.double("y")]), name: "s")
        XCTAssertEqual(try scalar.prediction(from: ["x": .double(-1.5)])["y"], .double(-4.5))
    }

    // MARK: Imputer

    func testImputerReplacesNaNReplaceValuesAndAbsentInputs() throws {
        let d = try ImputerModel(imputed: .double(7), replace: nil, description: FD.desc([FD.double("x")], [FD.double("y")]), name: "imp")
        XCTAssertEqual(try d.prediction(from: ["x": .double(.nan)])["y"], .double(7))
        XCTAssertEqual(try d.prediction(from: ["x": .double(2)])["y"], .double(2))
        XCTAssertEqual(try d.prediction(from: [:])["y"], .double(7))
        let arr = try ImputerModel(imputed: .doubleArray([1, 2, 3]), replace: .double(-1),
                                   description: FD.desc([FD.array("x", [3])], [FD.array("y", [3])]), name: "imp")
        XCTAssertEqual(try arr.prediction(from: ["x": vec([-1, 5, -1])])["y"], vec([1, 5, 3]))
        let nanArr = try ImputerModel(imputed: .double(0), replace: nil, description: FD.desc([FD.array("x", [2])], [FD.array("y", [2])]), name: "imp")
        XCTAssertEqual(try nanArr.prediction(from: ["x": vec([.nan, 4])])["y"], vec([0, 4]))
        let i = try ImputerModel(imputed: .int64(0), replace: .int64(-999), description: FD.desc([FD.int64("x")], [FD.int64("y")]), name: "imp")
        XCTAssertEqual(try i.prediction(from: ["x": .int64(-999)])["y"], .int64(0))
        XCTAssertEqual(try i.prediction(from: ["x": .int64(4)])["y"], .int64(4))
        let s = try ImputerModel(imputed: .string("unknown"), replace: .string(""), description: FD.desc([FD.string("x")], [FD.string("y")]), name: "imp")
        XCTAssertEqual(try s.prediction(from: ["x": .string("")])["y"], .string("unknown"))
        let dict = try ImputerModel(imputed: .stringDictionary(["a": 1]), replace: nil, description: FD.desc([FD.dict("x", .string)], [FD.dict("y", .string)]), name: "imp")
        XCTAssertEqual(try dict.prediction(from: [:])["y"], .dictionary(.stringKeys(["a": 1])))
        XCTAssertEqual(try dict.prediction(from: ["x": .dictionary(.stringKeys(["b": 2]))])["y"], .dictionary(.stringKeys(["b": 2])))
        assertThrowsFeatureError(try ImputerModel(imputed: .int64(0), replace: .string("x"), description: FD.desc([FD.int64("x")], [FD.int64("y")]), name: "imp")) {
            if case .invalidModel = $0 { return true }; return false
        }
    }

    // MARK: Identity

    func testIdentityReturnsInputs() throws {
        let m = try IdentityModel(description: FD.desc([FD.double("a"), FD.string("b")], [FD.string("b"), FD.double("c")]), name: "id")
        let out = try m.prediction(from: ["a": .double(2), "b": .string("s")])
        XCTAssertEqual(out, ["b": .string("s"), "c": .string("s")])
    }
}

final class OneHotFixtureSemanticsTests: XCTestCase {
    /// Fixtures/classical/one_hot_encoder holds int64Categories (0, 1, 2) and (0, 1, 2, 3) as
    /// coremltools 7.2 writes them; OneHotEncoder.proto puts the 1 at the value's position in that
    /// list, so [2, 7] gives position 2 in the first block and (7 unknown, IgnoreUnknown) zeros in the second.
    func testConvertedOneHotPipelineFollowsItsOwnCategoryLists() throws {
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/one_hot_encoder/model.mlmodel")
        let spec = try Spec.Model.load(contentsOf: url.path)
        let m = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "one_hot_encoder"))
        XCTAssertEqual(try m.prediction(from: ["input": vec([2, 7])])["output"], vec([0, 0, 1, 0, 0, 0, 0]))
        XCTAssertEqual(try m.prediction(from: ["input": vec([0, 3])])["output"], vec([1, 0, 0, 0, 0, 0, 1]))
    }
}
