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
}
