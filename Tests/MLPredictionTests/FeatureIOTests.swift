import CoreMLFormat
import TestSupport
import XCTest
@testable import MLPrediction

final class FeatureIOTests: XCTestCase {
    private func signature() -> FeatureSignature {
        let d = Spec.ModelDescription(
            input: [.init(name: "a", type: .init(.double)),
                    .init(name: "v", type: .init(.multiArray(.init(shape: [2], dataType: .double)))),
                    .init(name: "n", type: .init(.int64))],
            output: [.init(name: "label", type: .init(.string)),
                     .init(name: "probs", type: .init(.dictionary(.init(keyType: .string))))],
            predictedFeatureName: "label", predictedProbabilitiesName: "probs")
        return FeatureSignature(modelName: "m", description: d)
    }

    func testNumericVectorConcatenatesInputsInDescriptionOrder() throws {
        let s = signature()
        let v = try s.numericVector(from: ["n": .int64(7), "a": .double(1.5), "v": .multiArray(MultiArray(vector: [2, 3]))])
        XCTAssertEqual(v, [1.5, 2, 3, 7])
        XCTAssertThrowsError(try s.numericVector(from: ["a": .double(1), "v": .multiArray(MultiArray(vector: [2, 3]))])) {
            XCTAssertEqual($0 as? FeatureError, .missingInput(model: "m", feature: "n", expected: "Int64"))
        }
        XCTAssertThrowsError(try s.numericVector(from: ["a": .string("x"), "v": .double(1), "n": .int64(1)])) {
            guard case .typeMismatch(_, "a", _, "String")? = $0 as? FeatureError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try s.numericVector(from: ["a": .double(1), "v": .double(1), "n": .int64(1)], count: 4))
    }

    func testClassifierOutputsPickTheFirstLargestScore() throws {
        let out = try signature().classifierOutputs(labels: .strings(["x", "y", "z"]), scores: [0.2, 0.4, 0.4])
        XCTAssertEqual(out["label"], .string("y"))
        XCTAssertEqual(out["probs"], .dictionary(.stringKeys(["x": 0.2, "y": 0.4, "z": 0.4])))
        XCTAssertThrowsError(try signature().classifierOutputs(labels: .int64s([1, 2]), scores: [1]))
    }
}

final class InputDefaultsTests: XCTestCase {
    /// An optional multiArray input with `defaultOptionalValue` that is not given is filled with
    /// the default in the declared shape (Core ML 5+), here through the identity fixture.
    func testOptionalMultiArrayInputGetsItsDefault() throws {
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/identity/model.mlmodel")
        var spec = try Spec.Model.load(contentsOf: url.path)
        var d = try XCTUnwrap(spec.description)
        let i = try XCTUnwrap(d.input.firstIndex { if case .multiArray? = $0.type?.kind { return true }; return false })
        guard case var .multiArray(a)? = d.input[i].type?.kind else { return XCTFail() }
        a.defaultValue = .double(2.5)
        d.input[i].type = Spec.FeatureType(.multiArray(a), isOptional: true)
        spec.description = d
        let model = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "identity"))
        var given: FeatureProvider = [:]
        for f in d.input where f.name != d.input[i].name { given[f.name] = .string("s") }
        let out = try model.prediction(from: given)
        let shape = a.shape.map { Int($0) }
        XCTAssertEqual(out[d.input[i].name], .multiArray(try MultiArray(shape: shape, dataType: MultiArray.DataType(a.dataType) ?? .float64,
                                                                        values: [Double](repeating: 2.5, count: shape.reduce(1, *)))))
        // A given value wins over the default.
        given[d.input[i].name] = .multiArray(try MultiArray(shape: shape, values: [Double](repeating: 1, count: shape.reduce(1, *))))
        guard case let .multiArray(back)? = try model.prediction(from: given)[d.input[i].name] else { return XCTFail() }
        XCTAssertEqual(Set(back.values), [1])
    }
}
