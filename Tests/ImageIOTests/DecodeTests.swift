// Decoding the committed PNG / JPEG fixtures against Pillow's pixels, and decode errors.
import Foundation
import ImageIO
import TestSupport
import XCTest

final class DecodeTests: XCTestCase {
    /// Every fixture in manifest.json decodes to exactly Pillow's pixels (gray, gray+alpha,
    /// RGB, RGBA, palette 8/4-bit with tRNS, gray palette, 1-bit, 16-bit gray/gray+alpha/RGB/RGBA,
    /// interlaced, JPEG 4:2:0 / 4:4:4 / progressive / gray / CMYK).
    func testFixturesDecodeToPillowPixels() throws {
        let manifest = try ImageFixtureManifest.load()
        XCTAssertGreaterThanOrEqual(manifest.decode.count, 18)
        for fixture in manifest.decode {
            let url = imageFixtures.appendingPathComponent(fixture.file)
            let image = try ImageCodec.read(contentsOf: url)
            let expected = try fixtureBytes(fixture.expected)
            XCTAssertEqual(image.width, fixture.width, fixture.file)
            XCTAssertEqual(image.height, fixture.height, fixture.file)
            XCTAssertEqual(image.channels, fixture.channels, "\(fixture.file): \(fixture.notes)")
            guard image.pixels.count == expected.count else {
                XCTFail("\(fixture.file): \(image.pixels.count) samples, expected \(expected.count)")
                continue
            }
            let diff = PixelDiff(image.pixels, expected)
            XCTAssertEqual(diff.max, 0, "\(fixture.file) (\(fixture.notes)): \(diff)")
        }
    }

    func testFormatDetectionUsesSignatureNotExtension() throws {
        let png = Data(try fixtureBytes("decode/rgb8.png"))
        let jpeg = Data(try fixtureBytes("decode/rgb420.jpg"))
        XCTAssertEqual(ImageCodec.format(of: png), .png)
        XCTAssertEqual(ImageCodec.format(of: jpeg), .jpeg)
        XCTAssertNil(ImageCodec.format(of: Data("GIF89a".utf8)))
        // A JPEG saved under a .png name still decodes.
        let dir = try TestPaths.temporaryDirectory(for: self)
        let misnamed = dir.appendingPathComponent("photo.png")
        try jpeg.write(to: misnamed)
        let image = try ImageCodec.read(contentsOf: misnamed)
        XCTAssertEqual(image, try ImageCodec.decode(jpeg))
    }

    func testUnrecognizedFormatsDescribeTheirFirstBytes() throws {
        let cases: [(bytes: [UInt8], mentions: String)] = [
            (Array("GIF89a\u{01}\u{00}\u{01}\u{00}".utf8), "GIF image"),
            (Array("<!DOCTYPE html><html>Not Found".utf8), "HTML"),
            ([0x42, 0x4D, 0x36, 0x00, 0x00, 0x00], "BMP"),
            ([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0] + Array("WEBPVP8 ".utf8), "WebP"),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8), "HEIF/HEIC"),
            ([0x93] + Array("NUMPY".utf8) + [1, 0], "NumPy"),
            ([0x89, 0x50, 0x4E, 0x47, 0x0A, 0x0A, 0x1A, 0x0A, 0, 0], "signature is damaged"),
            ([], "empty"),
        ]
        for (bytes, mentions) in cases {
            guard let error = assertImageIOError(try ImageCodec.decode(Data(bytes), path: "in.png")) else { continue }
            guard case let .unrecognizedFormat(path, first) = error else {
                XCTFail("\(mentions): expected .unrecognizedFormat, got \(error)")
                continue
            }
            XCTAssertEqual(path, "in.png")
            XCTAssertEqual(first, Array(bytes.prefix(16)))
            let text = error.description
            XCTAssertTrue(text.contains("in.png") && text.contains(mentions) && text.contains("PNG or JPEG"),
                          "description should name the file and say \(mentions): \(text)")
            if !bytes.isEmpty {
                let hex = String(format: "%02X", bytes[0])
                XCTAssertTrue(text.contains(hex), "description should show the first bytes: \(text)")
            }
        }
    }

    func testUnreadableFiles() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let missing = dir.appendingPathComponent("missing.png")
        let error = assertImageIOError(try ImageCodec.read(contentsOf: missing))
        XCTAssertEqual(error, .unreadable(path: missing.path, reason: "no such file"))
        XCTAssertTrue(error?.description.contains(missing.path) ?? false)

        let directory = assertImageIOError(try ImageCodec.read(contentsOf: dir))
        guard case .unreadable(_, let reason, _)? = directory else { return XCTFail("\(String(describing: directory))") }
        XCTAssertTrue(reason.contains("directory"), reason)
    }

    func testTruncatedFilesReportTheLibraryMessage() throws {
        let png = try fixtureBytes("decode/rgb8.png")
        // Cut inside IDAT: the image data is incomplete.
        let idat = try XCTUnwrap(findChunk("IDAT", in: png))
        let cutPNG = Data(png[0..<(idat + 12)])
        let pngError = assertImageIOError(try ImageCodec.decode(cutPNG, path: "cut.png"))
        guard case let .corrupt(path, format, message)? = pngError else { return XCTFail("\(String(describing: pngError))") }
        XCTAssertEqual(path, "cut.png")
        XCTAssertEqual(format, "PNG")
        XCTAssertFalse(message.isEmpty)
        XCTAssertTrue(pngError!.description.contains("libpng says"), pngError!.description)
        print("truncated PNG: \(pngError!)")

        let jpeg = try fixtureBytes("decode/rgb420.jpg")
        let cutJPEG = Data(jpeg[0..<(jpeg.count * 2 / 3)])
        let jpegError = assertImageIOError(try ImageCodec.decode(cutJPEG, path: "cut.jpg"))
        guard case let .corrupt(_, jformat, jmessage)? = jpegError else { return XCTFail("\(String(describing: jpegError))") }
        XCTAssertEqual(jformat, "JPEG")
        XCTAssertTrue(jmessage.contains("Premature end") && jmessage.contains("truncated"), jmessage)
        XCTAssertTrue(jpegError!.description.contains("libjpeg says"), jpegError!.description)
        print("truncated JPEG: \(jpegError!)")

        // Only the trailing IEND is missing: the pixels are complete, so it decodes (like Pillow).
        let iend = try XCTUnwrap(findChunk("IEND", in: png))
        let noIEND = try ImageCodec.decode(Data(png[0..<iend]))
        XCTAssertEqual(noIEND, try ImageCodec.decode(Data(png)))
    }

    func testCorruptPNGDataIsReported() throws {
        let original = try fixtureBytes("decode/rgb8.png")
        // A damaged IHDR checksum (bytes 29..<33).
        var png = original
        png[30] ^= 0x55
        let error = assertImageIOError(try ImageCodec.decode(Data(png), path: "bad.png"))
        guard case let .corrupt(_, _, message)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message.contains("CRC"), message)
        print("bad CRC: \(error!)")

        // Damaged compressed data inside IDAT: zlib's complaint comes through libpng.
        png = original
        let idat = try XCTUnwrap(findChunk("IDAT", in: png))
        png[idat + 10] ^= 0x55
        let zlibError = assertImageIOError(try ImageCodec.decode(Data(png), path: "bad.png"))
        guard case let .corrupt(_, _, zmessage)? = zlibError else { return XCTFail("\(String(describing: zlibError))") }
        XCTAssertTrue(zmessage.contains("IDAT"), zmessage)
        print("bad IDAT: \(zlibError!)")
    }

    func testLibraryVersionsAreReported() {
        let versions = ImageCodec.libraryVersions
        XCTAssertTrue(versions.contains("libpng 1.6"), versions)
        XCTAssertTrue(versions.contains("libjpeg"), versions)
    }

    /// Offset of the length field of the first chunk of `type`.
    private func findChunk(_ type: String, in png: [UInt8]) -> Int? {
        var offset = 8
        let wanted = Array(type.utf8)
        while offset + 8 <= png.count {
            let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            if Array(png[(offset + 4)..<(offset + 8)]) == wanted { return offset }
            offset += 12 + length
        }
        return nil
    }
}
