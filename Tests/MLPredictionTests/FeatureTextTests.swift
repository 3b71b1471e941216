import CoreMLFormat
import Foundation
import XCTest
@testable import MLPrediction

final class FeatureTextTests: XCTestCase {
    private let description = Spec.ModelDescription(
        input: [.init(name: "Age", type: .init(.double)),
                .init(name: "Pclass", type: .init(.int64)),
                .init(name: "Sex", type: .init(.string)),
                .init(name: "v", type: .init(.multiArray(.init(shape: [3], dataType: .double))))])

    func testTextValuesAreTypedByTheDescription() throws {
        XCTAssertEqual(try FeatureText.value("22", type: .init(.double), feature: "Age", model: "m"), .double(22))
        XCTAssertEqual(try FeatureText.value("3", type: .init(.int64), feature: "Pclass", model: "m"), .int64(3))
        XCTAssertEqual(try FeatureText.value("3.0", type: .init(.int64), feature: "Pclass", model: "m"), .int64(3))
        XCTAssertEqual(try FeatureText.value(" male", type: .init(.string), feature: "Sex", model: "m"), .string(" male"))
        XCTAssertEqual(try FeatureText.value("1, 2 ,3", type: description.input[3].type, feature: "v", model: "m"),
                       .multiArray(MultiArray(vector: [1, 2, 3])))
        XCTAssertEqual(try FeatureText.value("[1,2,3]", type: description.input[3].type, feature: "v", model: "m"),
                       .multiArray(MultiArray(vector: [1, 2, 3])))
        XCTAssertEqual(try FeatureText.value(#"{"a": 2}"#, type: .init(.dictionary(.init(keyType: .string))), feature: "d", model: "m"),
                       .dictionary(.stringKeys(["a": 2])))
        XCTAssertThrowsError(try FeatureText.value("3.5", type: .init(.int64), feature: "Pclass", model: "m")) {
            XCTAssertEqual($0 as? FeatureError, .invalidValue(model: "m", feature: "Pclass", reason: "expected an integer (Int64), found '3.5'"))
        }
        XCTAssertThrowsError(try FeatureText.value("old", type: .init(.double), feature: "Age", model: "m"))
    }

    func testCSVQuotingEmptyCellsAndRowErrors() throws {
        let csv = "Pclass,Sex,Age,v,ignored\r\n1,\"fe\"\"male, x\",22,\"[1,2,3]\",zzz\n3,male,,4 5 6,\n"
        let rows = try FeatureCSV.rows(from: csv, description: description, model: "m")
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows[0]["Sex"], .string("fe\"male, x"))
        XCTAssertEqual(rows[0]["Pclass"], .int64(1))
        XCTAssertEqual(rows[0]["v"], .multiArray(MultiArray(vector: [1, 2, 3])))
        XCTAssertNil(rows[0]["ignored"])
        guard case let .double(age)? = rows[1]["Age"] else { return XCTFail("empty Double cell must be NaN") }
        XCTAssertTrue(age.isNaN)
        XCTAssertThrowsError(try FeatureCSV.rows(from: "Pclass,Age\n1\n", description: description, model: "m")) {
            guard case .invalidValue("m row 1", _, _, _)? = $0 as? FeatureError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try FeatureCSV.rows(from: "Sex\n\"open", description: description, model: "m"))
        XCTAssertThrowsError(try FeatureCSV.rows(from: "Sex\n\"a\"b\n", description: description, model: "m"))
    }

    func testCSVOutputExpandsDictionariesAndArrays() throws {
        let rows: [FeatureProvider] = [
            ["label": .string("a,b"), "p": .dictionary(.stringKeys(["x": 0.25, "y": 0.75])), "v": .multiArray(MultiArray(vector: [1, 2.5]))],
            ["label": .string("c"), "p": .dictionary(.stringKeys(["x": 1, "y": 0])), "v": .multiArray(MultiArray(vector: [3, .nan]))],
        ]
        let csv = FeatureCSV.encode(rows, outputs: ["label", "p", "v"])
        XCTAssertEqual(csv, "label,p[x],p[y],v[0],v[1]\n\"a,b\",0.25,0.75,1,2.5\nc,1,0,3,nan\n")
        // What we write, we read back (header row of output names).
        let back = try FeatureCSV.parse(csv, model: "m")
        XCTAssertEqual(back[1], ["a,b", "0.25", "0.75", "1", "2.5"])
    }
}
