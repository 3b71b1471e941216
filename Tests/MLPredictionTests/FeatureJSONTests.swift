import CoreMLFormat
import Foundation
import XCTest
@testable import MLPrediction

final class FeatureJSONTests: XCTestCase {
    private let description = Spec.ModelDescription(
        input: [.init(name: "Age", type: .init(.double)),
                .init(name: "Pclass", type: .init(.int64)),
                .init(name: "Sex", type: .init(.string)),
                .init(name: "x", type: .init(.multiArray(.init(shape: [2, 2], dataType: .float32)))),
                .init(name: "d", type: .init(.dictionary(.init(keyType: .int64)))),
                .init(name: "s", type: .init(.sequence(.init(elementType: .string))))])

    func testRowsAreTypedByTheDescription() throws {
        let json = #"[{"Age": 22, "Pclass": "3", "Sex": "male", "x": [1, 2, 3, 4], "d": {"7": 0.5}, "s": ["a", "b"], "extra": 1},"#
            + #" {"Age": null, "Pclass": 1, "Sex": "female", "x": [[1.5, 2], [3, 4]]}]"#
        let rows = try FeatureJSON.rows(from: Data(json.utf8), description: description, model: "m")
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows[0]["Age"], .double(22))
        XCTAssertEqual(rows[0]["Pclass"], .int64(3))
        XCTAssertEqual(rows[0]["Sex"], .string("male"))
        XCTAssertEqual(rows[0]["x"], .multiArray(try MultiArray(shape: [2, 2], dataType: .float32, values: [1, 2, 3, 4])))
        XCTAssertEqual(rows[0]["d"], .dictionary(.int64Keys([7: 0.5])))
        XCTAssertEqual(rows[0]["s"], .sequence(.string(["a", "b"])))
        XCTAssertNil(rows[0]["extra"])
        guard case let .double(age)? = rows[1]["Age"] else { return XCTFail() }
        XCTAssertTrue(age.isNaN)
        XCTAssertEqual(rows[1]["x"], .multiArray(try MultiArray(shape: [2, 2], dataType: .float32, values: [1.5, 2, 3, 4])))
    }

    func testBadValuesNameRowFeatureAndExpectedType() {
        XCTAssertThrowsError(try FeatureJSON.rows(from: Data(#"[{"Pclass": 1.5}]"#.utf8), description: description, model: "m")) {
            guard case let .invalidValue(model, feature, reason, _)? = $0 as? FeatureError else { return XCTFail("\($0)") }
            XCTAssertEqual(model, "m row 1")
            XCTAssertEqual(feature, "Pclass")
            XCTAssertTrue(reason.contains("integer"), reason)
        }
        XCTAssertThrowsError(try FeatureJSON.rows(from: Data(#"[{"x": [[1, 2], [3]]}]"#.utf8), description: description, model: "m"))
        XCTAssertThrowsError(try FeatureJSON.rows(from: Data("{oops".utf8), description: description, model: "m"))
        XCTAssertThrowsError(try FeatureJSON.rows(from: Data("[1]".utf8), description: description, model: "m"))
    }

    func testOutputJSONNestsArraysAndWritesNaNAsNull() throws {
        let row: FeatureProvider = ["p": .multiArray(try MultiArray(shape: [2, 1], values: [1, .nan])),
                                    "label": .int64(3), "probs": .dictionary(.int64Keys([3: 0.75]))]
        let data = try FeatureJSON.encode([row])
        let back = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        XCTAssertEqual((back?[0]["p"] as? [[Any]])?.count, 2)
        XCTAssertTrue((back?[0]["p"] as? [[Any]])?[1][0] is NSNull)
        XCTAssertEqual(back?[0]["label"] as? Int, 3)
        XCTAssertEqual((back?[0]["probs"] as? [String: Double])?["3"], 0.75)
    }
}
