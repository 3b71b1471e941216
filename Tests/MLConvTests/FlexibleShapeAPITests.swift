// Flexible image sizes through the public API (`import MLConv` only): a Core ML model with an
// image size range (Fixtures/flexible/image_range.mlmodel: default 8×8, 4...32 × 4...32; its
// NumPy references at 8×8, 12×10 and 5×30 by Scripts/make_flexible_shape_fixtures.py) keeps its
// range when compiled to a bundle, and a picture of an allowed size runs at its own size.
import Foundation
import MLConv
import XCTest

final class FlexibleShapeAPITests: XCTestCase {
    func testCompiledBundleKeepsTheImageSizeRangeAndRunsAtAnAllowedSize() throws {
        let config = MLModelConfiguration(cacheDirectory: try Paths.temporary(self))
        let source = Paths.fixture("flexible/image_range.mlmodel")
        let bundle = try MLModel.compileModel(at: source, configuration: config)
        let model = try MLModel(contentsOf: bundle, configuration: config)
        let image = try XCTUnwrap(model.modelDescription.inputs.first { $0.name == "image" }?.imageConstraint)
        XCTAssertEqual(image.pixelsWide, 8)
        XCTAssertEqual(image.pixelsHigh, 8)
        XCTAssertTrue(image.allows(width: 10, height: 12))
        XCTAssertTrue(image.allows(width: 30, height: 5))
        XCTAssertFalse(image.allows(width: 8, height: 40), "40 is above the range's 32")

        // 12 rows × 10 columns, RGB, as recorded.
        let px = try MultiArray(contentsOfNPY: Paths.fixture("flexible/image_x_12x10.npy"))
        let y = try MultiArray(contentsOfNPY: Paths.fixture("flexible/image_y_12x10.npy"))
        XCTAssertEqual(px.shape, [12, 10, 3])
        let feature = try model.imageFeature(pixels: px.values.map { UInt8($0) }, width: 10, height: 12,
                                             colorSpace: .rgb, for: "image")
        guard case let .multiArray(out)? = try model.prediction(from: ["image": feature])["y"] else {
            return XCTFail("no multi-array output 'y'")
        }
        XCTAssertEqual(out.values.count, y.values.count, "the output has the 12×10 input's size, not the default's")
        XCTAssertLessThanOrEqual(maxAbsDiff(out.values, y.values), 1e-4)
    }
}
