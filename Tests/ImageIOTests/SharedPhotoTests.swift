// The real photos in ../shared/images (read in place, never copied): decoding against the
// reference .npy and Pillow's sizes, and the centre-crop resize that made london_big-ben_320.png.
import Foundation
import ImageIO
import TestSupport
import XCTest

final class SharedPhotoTests: XCTestCase {
    /// london_big-ben_320.png decodes to exactly the float32 NHWC 0–255 reference array.
    func testBigBen320PNGMatchesReferenceNPY() throws {
        let png = try TestPaths.sharedFile("images/london_big-ben_320.png")
        let npy = try TestPaths.sharedFile("models/reference/london_big-ben_320.npy")
        let image = try ImageCodec.read(contentsOf: png)
        let (shape, values) = try readFloat32NPY(npy)
        XCTAssertEqual(shape, [1, 320, 320, 3])
        XCTAssertEqual([1, image.height, image.width, image.channels], shape)
        XCTAssertEqual(maxAbsDiff(image.floatHWC(), values), 0)
    }

    /// The JPEG photos decode to Pillow's size, and (since libjpeg-turbo decodes identically)
    /// to Pillow's per-channel means within 0.01.
    func testPhotosDecodeLikePillow() throws {
        let expectations = try SharedPhotoExpectations.load()
        for name in ["london_big-ben.jpg", "dog.jpg", "giraffe.jpg", "london_big-ben_320.png"] {
            let url = try TestPaths.sharedFile("images/" + name)
            let expected = try XCTUnwrap(expectations.photos[name], name)
            let image = try ImageCodec.read(contentsOf: url)
            XCTAssertEqual(image.width, expected.width, name)
            XCTAssertEqual(image.height, expected.height, name)
            XCTAssertEqual(image.channels, 3, name)
            var sums = [Double](repeating: 0, count: 3)
            for (i, v) in image.pixels.enumerated() { sums[i % 3] += Double(v) }
            let means = sums.map { $0 / Double(image.width * image.height) }
            for c in 0..<3 {
                XCTAssertEqual(means[c], expected.mean_rgb[c], accuracy: 0.01, "\(name) channel \(c)")
            }
        }
    }

    /// Centre crop + bilinear resize of london_big-ben.jpg to 320×320 against
    /// london_big-ben_320.png, which was made with Pillow by `crop(((w-h)//2, 0, (w-h)//2+h, h))`
    /// then `resize((320, 320), BILINEAR)`. `.center` is defined to do exactly that and the
    /// resampler and the JPEG decoder are bit-exact with Pillow, so the measured difference is
    /// 0; the assertion allows 1 level (max) and 0.01 (mean) so that a different libjpeg-turbo
    /// build rounding a few IDCT outputs differently would not fail the test, while a wrong
    /// crop offset (1 column: max 71, mean 3.9) or an unfiltered resize would.
    func testCenterCropResizeMatchesBigBen320() throws {
        let jpg = try TestPaths.sharedFile("images/london_big-ben.jpg")
        let png = try TestPaths.sharedFile("images/london_big-ben_320.png")
        let photo = try ImageCodec.read(contentsOf: jpg)
        let reference = try ImageCodec.read(contentsOf: png)
        let start = Date()
        let resized = photo.resized(to: 320, height: 320, mode: .center)
        let seconds = Date().timeIntervalSince(start)
        XCTAssertEqual(resized.width, 320)
        XCTAssertEqual(resized.height, 320)
        let diff = PixelDiff(resized.pixels, reference.pixels)
        print("centre-crop resize of london_big-ben.jpg (1280x853) to 320x320 vs london_big-ben_320.png: \(diff) "
              + "(resize took \(String(format: "%.3f", seconds)) s)")
        XCTAssertLessThanOrEqual(diff.max, 1, "\(diff)")
        XCTAssertLessThanOrEqual(diff.mean, 0.01, "\(diff)")

        // The other modes give the right size and differ from the centre crop as expected.
        let fit = photo.resized(to: 320, height: 320, mode: .fit)
        XCTAssertEqual([fit.width, fit.height], [320, 320])
        XCTAssertEqual(fit[160, 0, 0], 0, "letterbox rows are black")
        XCTAssertEqual(fit[160, 319, 2], 0, "letterbox rows are black")
        let fill = photo.resized(to: 320, height: 320, mode: .fill)
        XCTAssertGreaterThan(PixelDiff(fill.pixels, reference.pixels).mean, 5, "fill stretches instead of cropping")
    }
}
