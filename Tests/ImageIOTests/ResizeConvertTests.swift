// Resizing (Pillow BILINEAR parity, Vision-style crop modes), colour conversions, float views.
import Foundation
import ImageIO
import TestSupport
import XCTest

final class ResizeConvertTests: XCTestCase {
    /// Every resize case of manifest.json (downscale, strong downscale, upscale, mixed, 1×1,
    /// centre crop and fit to several aspect ratios, RGB and gray) against Pillow's output.
    /// The resampler reimplements Pillow 13's fixed-point algorithm including its choice of
    /// pass order, so against fixtures made with Pillow ≥ 13 the difference must be 0; fixtures
    /// from an older Pillow (rows always filtered first) may differ by 1 level.
    func testResizeMatchesPillowBilinear() throws {
        let manifest = try ImageFixtureManifest.load()
        XCTAssertGreaterThanOrEqual(manifest.resize.count, 20)
        let pillowMajor = Int(manifest.pillow.split(separator: ".").first ?? "") ?? 0
        let tolerance = pillowMajor >= 13 ? 0 : 1
        var worst = 0
        for fixture in manifest.resize {
            let source = try ImageCodec.read(contentsOf: imageFixtures.appendingPathComponent(fixture.source))
            let mode = try XCTUnwrap(ImageCropMode(rawValue: fixture.mode), fixture.mode)
            let resized = source.resized(to: fixture.width, height: fixture.height, mode: mode)
            XCTAssertEqual(resized.width, fixture.width)
            XCTAssertEqual(resized.height, fixture.height)
            XCTAssertEqual(resized.channels, fixture.channels)
            let expected = try fixtureBytes(fixture.expected)
            guard resized.pixels.count == expected.count else {
                XCTFail("\(fixture.expected): \(resized.pixels.count) samples vs \(expected.count)")
                continue
            }
            let diff = PixelDiff(resized.pixels, expected)
            worst = max(worst, diff.max)
            if diff.max > 0 { print("resize parity \(fixture.source) \(fixture.mode) \(fixture.width)x\(fixture.height): \(diff)") }
            XCTAssertLessThanOrEqual(diff.max, tolerance, "\(fixture.source) \(fixture.mode) \(fixture.width)x\(fixture.height): \(diff)")
        }
        print("Pillow \(manifest.pillow) BILINEAR parity over \(manifest.resize.count) resize cases: max |diff| \(worst)")
    }

    func testGrayscaleMatchesPillowConvertL() throws {
        let manifest = try ImageFixtureManifest.load()
        for fixture in manifest.grayscale {
            let source = try ImageCodec.read(contentsOf: imageFixtures.appendingPathComponent(fixture.source))
            let gray = source.converted(to: .grayscale)
            XCTAssertEqual(gray.channels, 1)
            XCTAssertEqual(PixelDiff(gray.pixels, try fixtureBytes(fixture.expected)).max, 0)
        }
        // The ITU-R 601 weights on pure colours: round(255 * 0.299), round(255 * 0.587), round(255 * 0.114).
        let primaries = Image(width: 3, height: 1, channels: 3, pixels: [255, 0, 0, 0, 255, 0, 0, 0, 255])
        XCTAssertEqual(primaries.converted(to: .grayscale).pixels, [76, 150, 29])
    }

    func testChannelConversions() {
        let rgb = Image(width: 2, height: 1, channels: 3, pixels: [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(rgb.converted(to: .rgb), rgb)
        let bgr = rgb.converted(to: .bgr)
        XCTAssertEqual(bgr.pixels, [3, 2, 1, 6, 5, 4])
        XCTAssertEqual(bgr.converted(to: .bgr), rgb, "BGR is a swap: twice restores")
        let gray = Image(width: 2, height: 1, channels: 1, pixels: [7, 200])
        XCTAssertEqual(gray.converted(to: .grayscale), gray)
        XCTAssertEqual(gray.converted(to: .rgb).pixels, [7, 7, 7, 200, 200, 200])
        XCTAssertEqual(gray.converted(to: .bgr).pixels, [7, 7, 7, 200, 200, 200])
        XCTAssertEqual(rgb[1, 0, 2], 6)
        XCTAssertEqual(rgb.description, "Image(2x1, 3 channels)")
    }

    func testCropModesGeometry() {
        // 8×4 image: left half 100, right half 200, with a 2-pixel-wide band of 50 in the middle.
        var pixels = [UInt8](repeating: 0, count: 8 * 4)
        for y in 0..<4 {
            for x in 0..<8 { pixels[y * 8 + x] = x < 4 ? 100 : 200 }
            pixels[y * 8 + 3] = 50
            pixels[y * 8 + 4] = 50
        }
        let image = Image(width: 8, height: 4, channels: 1, pixels: pixels)

        // center: crop the centred 4×4 square (columns 2...5), then resize (identity here).
        let center = image.resized(to: 4, height: 4, mode: .center)
        XCTAssertEqual(center, image.cropped(x: 2, y: 0, width: 4, height: 4))
        XCTAssertEqual(Array(center.pixels[0..<4]), [100, 50, 50, 200])

        // fit: scale to 4×2 and pad with one black row above and below.
        let fit = image.resized(to: 4, height: 4, mode: .fit)
        XCTAssertEqual(fit.width, 4)
        XCTAssertEqual(fit.height, 4)
        XCTAssertEqual(Array(fit.pixels[0..<4]), [0, 0, 0, 0])
        XCTAssertEqual(Array(fit.pixels[12..<16]), [0, 0, 0, 0])
        XCTAssertEqual(Array(fit.pixels[4..<12]), image.resized(to: 4, height: 2).pixels)

        // fill: stretch; no padding, no crop (the band is still there, blurred).
        let fill = image.resized(to: 4, height: 4, mode: .fill)
        XCTAssertEqual(fill, image.resized(to: 4, height: 4))
        XCTAssertTrue(fill.pixels[0] == 100 && fill.pixels[3] == 200, "\(fill.pixels)")

        // Portrait into landscape: fit scales 2×6 to 1×3 and pads 2 columns left, 3 right;
        // center crops the middle row band (2×1 at y 2) and stretches it.
        let tall = Image(width: 2, height: 6, channels: 3, filledWith: 9)
        let letterboxed = tall.resized(to: 6, height: 3, mode: .fit)
        for x in 0..<6 {
            XCTAssertEqual(letterboxed[x, 1, 1], x == 2 ? 9 : 0, "column \(x)")
        }
        XCTAssertEqual(tall.resized(to: 6, height: 3, mode: .center), Image(width: 6, height: 3, channels: 3, filledWith: 9))

        // Same size: every mode is the identity.
        for mode in ImageCropMode.allCases {
            XCTAssertEqual(image.resized(to: 8, height: 4, mode: mode), image, "\(mode)")
        }
    }

    func testFloatHWC() {
        let image = Image(width: 1, height: 2, channels: 3, pixels: [0, 128, 255, 10, 20, 30])
        XCTAssertEqual(image.floatHWC(), [0, 128, 255, 10, 20, 30])
        XCTAssertEqual(image.floatHWC(scale: 2, bias: [-1]), [-1, 255, 509, 19, 39, 59])
        XCTAssertEqual(image.floatHWC(scale: 1, bias: [1, 2, 3]), [1, 130, 258, 11, 22, 33])
        assertClose(image.floatHWC(scale: 1 / 255), [0, 128 / 255, 1, 10 / 255, 20 / 255, 30 / 255], tolerance: 1e-7)
    }

    func testInitFromFloatsClampsAndRoundsHalfToEven() {
        let values: [Float] = [-3, 0.5, 1.5, 2.5, 254.5, 300, .nan, 127.49, 127.51, .infinity, -.infinity, 3.5]
        let image = Image(floatHWC: values, width: 4, height: 1, channels: 3)
        XCTAssertEqual(image.pixels, [0, 0, 2, 2, 254, 255, 0, 127, 128, 255, 0, 4])
        // Round trip of exact integers.
        let original = Image(width: 3, height: 2, channels: 1, pixels: [0, 1, 2, 128, 254, 255])
        XCTAssertEqual(Image(floatHWC: original.floatHWC(), width: 3, height: 2, channels: 1), original)
    }
}
