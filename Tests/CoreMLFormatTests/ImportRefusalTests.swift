// MARK: refused configurations (issue 10)
// Layer configurations the importer used to read partly (dropping a field without a word) are
// refused with a typed error naming the layer.
@testable import CoreMLFormat
import MLGraph
import TestSupport
import XCTest

final class ImportRefusalTests: XCTestCase {
    /// Regression: a two-input crop whose offset is not [H, W] was cropped at [0, 0].
    func testCropOffsetThatIsNotHeightWidthIsRefused() throws {
        func model(offset: [UInt64]) -> Spec.Model {
            ImportSpecs.model([ImportSpecs.array("x", [2, 6, 6]), ImportSpecs.array("ref", [2, 4, 4])], [ImportSpecs.array("y", [2, 4, 4])],
                              [ImportSpecs.layer("cr", ["x", "ref"], ["y"], .crop(Spec.CropLayerParams(offset: offset)))])
        }
        XCTAssertThrowsError(try CoreMLImporter.graph(from: model(offset: [1]), fileName: "crop.mlmodel")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("cr") && text.contains("offset [1]"), text)
        }
        // [H, W] and no offset still import.
        XCTAssertNoThrow(try CoreMLImporter.graph(from: model(offset: [1, 2]), fileName: "crop.mlmodel"))
        XCTAssertNoThrow(try CoreMLImporter.graph(from: model(offset: []), fileName: "crop.mlmodel"))
    }

    /// Regression: padding amounts with a third entry were read as [height, width] and the rest dropped.
    func testBorderAmountsBeyondHeightAndWidthAreRefused() throws {
        let edge = Spec.EdgeSizes(startEdgeSize: 1, endEdgeSize: 1)
        func model(_ n: Int) -> Spec.Model {
            ImportSpecs.model([ImportSpecs.array("x", [2, 4, 4])], [ImportSpecs.array("y", [2, 6, 6])],
                              [ImportSpecs.layer("pad", ["x"], ["y"], .padding(Spec.PaddingLayerParams(
                                  paddingAmounts: Spec.BorderAmounts(Array(repeating: edge, count: n)), paddingType: .constant(.init(value: 0)))))])
        }
        XCTAssertThrowsError(try CoreMLImporter.graph(from: model(3), fileName: "pad.mlmodel")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("pad") && text.contains("3 border amounts"), text)
        }
        XCTAssertNoThrow(try CoreMLImporter.graph(from: model(2), fileName: "pad.mlmodel"))
    }
}
