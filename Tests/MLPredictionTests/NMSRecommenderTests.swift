import CoreMLFormat
import XCTest
@testable import MLPrediction

final class NonMaximumSuppressionTests: XCTestCase {
    // Boxes (x, y, w, h), centre-based, and [class 0, class 1] confidences. IOUs by hand:
    // box0–box1: intersection 1.5·2 = 3, union 4 + 4 − 3 = 5 → 0.6;
    // box0–box3: intersection 1.8·2 = 3.6, union 8 − 3.6 = 4.4 → 0.818…; box2 overlaps nothing.
    let coords: [Double] = [0, 0, 2, 2,   0.5, 0, 2, 2,   10, 10, 2, 2,   0.2, 0, 2, 2,   5, 5, 1, 1]
    let conf: [Double] = [0.9, 0.05,   0.8, 0.1,   0.1, 0.7,   0.05, 0.85,   0.2, 0.1]

    func testIOUOfCentreBasedBoxes() {
        XCTAssertEqual(NonMaximumSuppressionModel.iou(coords[0..<4], coords[4..<8]), 0.6, accuracy: 1e-12)
        XCTAssertEqual(NonMaximumSuppressionModel.iou(coords[0..<4], coords[12..<16]), 3.6 / 4.4, accuracy: 1e-12)
        XCTAssertEqual(NonMaximumSuppressionModel.iou(coords[0..<4], coords[8..<12]), 0)
    }

    func testPickTopAcrossClassesAndPerClass() {
        // Scores: 0.9 (label 0), 0.8 (0), 0.7 (1), 0.85 (1), 0.2 (0; below the 0.3 threshold).
        XCTAssertEqual(NonMaximumSuppressionModel.keptBoxes(confidence: conf, classes: 2, coordinates: coords,
                                                            iouThreshold: 0.5, confidenceThreshold: 0.3, perClass: false), [0, 2])
        XCTAssertEqual(NonMaximumSuppressionModel.keptBoxes(confidence: conf, classes: 2, coordinates: coords,
                                                            iouThreshold: 0.5, confidenceThreshold: 0.3, perClass: true), [0, 3, 2])
        // IOU threshold 1: nothing is suppressed; threshold 0: no overlap at all is tolerated.
        XCTAssertEqual(NonMaximumSuppressionModel.keptBoxes(confidence: conf, classes: 2, coordinates: coords,
                                                            iouThreshold: 1, confidenceThreshold: 0, perClass: false), [0, 3, 1, 2, 4])
    }

    private func model(outputShape: [Int64] = []) throws -> NonMaximumSuppressionModel {
        let d = FD.desc([FD.array("confidence", []), FD.array("coordinates", []), FD.double("iouThreshold")],
                        [FD.array("confidenceOut", outputShape), FD.array("coordinatesOut", outputShape.isEmpty ? [] : [outputShape[0], 4])])
        return try NonMaximumSuppressionModel(parameters: .init(
            iouThreshold: 0.5, confidenceThreshold: 0.3, perClass: false,
            iouThresholdInputFeatureName: "iouThreshold",
            confidenceOutputFeatureName: "confidenceOut", coordinatesOutputFeatureName: "coordinatesOut"),
            description: d, name: "nms")
    }

    func testOutputsRowsThresholdOverrideAndPadding() throws {
        let inputs: FeatureProvider = ["confidence": .multiArray(try MultiArray(shape: [5, 2], values: conf)),
                                       "coordinates": .multiArray(try MultiArray(shape: [5, 4], values: coords))]
        let out = try model().prediction(from: inputs)
        XCTAssertEqual(out["confidenceOut"], .multiArray(try MultiArray(shape: [2, 2], values: [0.9, 0.05, 0.1, 0.7])))
        XCTAssertEqual(out["coordinatesOut"], .multiArray(try MultiArray(shape: [2, 4], values: [0, 0, 2, 2, 10, 10, 2, 2])))
        // The optional input overrides the IOU threshold: 0.7 keeps box1 (IOU 0.6) but not box3 (0.82).
        var with = inputs
        with["iouThreshold"] = .double(0.7)
        let o2 = try model().prediction(from: with)
        XCTAssertEqual(o2["coordinatesOut"], .multiArray(try MultiArray(shape: [3, 4], values: [0, 0, 2, 2, 0.5, 0, 2, 2, 10, 10, 2, 2])))
        // A fixed output shape pads with zero rows.
        let padded = try model(outputShape: [3, 2]).prediction(from: inputs)
        XCTAssertEqual(padded["confidenceOut"], .multiArray(try MultiArray(shape: [3, 2], values: [0.9, 0.05, 0.1, 0.7, 0, 0])))
        assertThrowsFeatureError(try NonMaximumSuppressionModel(parameters: .init(iouThreshold: 1.5, confidenceThreshold: 0),
                                                                description: FD.desc([FD.array("confidence", []), FD.array("coordinates", [])],
                                                                                     [FD.array("confidence", []), FD.array("coordinates", [])]), name: "nms")) {
            if case .invalidModel = $0 { return true }; return false
        }
    }
}

final class ItemSimilarityRecommenderTests: XCTestCase {
    /// Items a, b, c, d = 0…3. sim(1, 0) = 0.5, sim(2, 0) = 0.2 (listed under item 0),
    /// sim(0, 1) = 0.5, sim(3, 1) = 0.4 (under item 1), sim(0, 2) = 0.2; shift_2 = 1.
    private func model() throws -> ItemSimilarityRecommenderModel {
        let p = ItemSimilarityRecommenderModel.Parameters(
            similarities: [.init(itemId: 0, similarItems: [(1, 0.5), (2, 0.2)]),
                           .init(itemId: 1, similarItems: [(0, 0.5), (3, 0.4)]),
                           .init(itemId: 2, similarItems: [(0, 0.2)], itemScoreAdjustment: 1)],
            itemIds: .strings(["a", "b", "c", "d"]), itemInputFeatureName: "items",
            numRecommendationsInputFeatureName: "k", itemRestrictionInputFeatureName: "only",
            itemExclusionInputFeatureName: "exclude",
            recommendedItemListOutputFeatureName: "recommendations", recommendedItemScoreOutputFeatureName: "scores")
        let d = FD.desc([FD.dict("items", .string), FD.int64("k"), FD.seq("only", .string), FD.seq("exclude", .string)],
                        [FD.seq("recommendations", .string), FD.dict("scores", .string)])
        return try ItemSimilarityRecommenderModel(parameters: p, description: d, name: "rec")
    }

    func testScoresFollowTheProtoFormula() throws {
        // Observed a = 3, b = 1. score_k = Σ_i sim(k, i)(score_i − shift_k):
        // a: 0.5·(1 − 0) = 0.5; b: 0.5·(3 − 0) = 1.5; c: 0.2·(3 − 1) = 0.4; d: 0.4·(1 − 0) = 0.4.
        let m = try model()
        let observed: FeatureValue = .dictionary(.stringKeys(["a": 3, "b": 1]))
        let out = try m.prediction(from: ["items": observed])
        // The observed items are excluded by default; c and d tie (c has the lower item number).
        XCTAssertEqual(out["recommendations"], .sequence(.string(["c", "d"])))
        guard case let .dictionary(.stringKeys(s))? = out["scores"] else { return XCTFail("\(out)") }
        XCTAssertEqual(s.count, 2)
        XCTAssertEqual(s["c"] ?? .nan, 0.4, accuracy: 1e-15)
        XCTAssertEqual(s["d"] ?? .nan, 0.4, accuracy: 1e-15)
        let ex = try m.prediction(from: ["items": observed, "exclude": .sequence(.string(["d"])), "k": .int64(2)])
        XCTAssertEqual(ex["recommendations"], .sequence(.string(["b", "a"])))
        let only = try m.prediction(from: ["items": observed, "only": .sequence(.string(["a", "d"]))])
        XCTAssertEqual(only["recommendations"], .sequence(.string(["d"])))
    }

    func testInvalidParametersAreRefused() {
        let d = FD.desc([FD.dict("items", .int64)], [FD.seq("r", .int64)])
        assertThrowsFeatureError(try ItemSimilarityRecommenderModel(parameters: .init(
            similarities: [.init(itemId: 3, similarItems: [])], itemIds: .int64s([10, 11]), itemInputFeatureName: "items",
            recommendedItemListOutputFeatureName: "r"), description: d, name: "rec")) {
            if case .invalidModel = $0 { return true }; return false
        }
        assertThrowsFeatureError(try ItemSimilarityRecommenderModel(parameters: .init(
            similarities: [], itemInputFeatureName: "items"), description: d, name: "rec")) {
            if case .invalidModel = $0 { return true }; return false
        }
    }
}
