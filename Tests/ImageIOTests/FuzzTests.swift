// Fuzzing the decoders with truncated and bit-flipped PNG / JPEG files: every case must throw an
// ImageIOError or decode to a consistent image, never crash or hang.
import Foundation
import ImageIO
import TestSupport
import XCTest

final class FuzzTests: XCTestCase {
    private struct Tally: CustomStringConvertible {
        var decoded = 0, threw = 0
        var description: String { "\(decoded) decoded, \(threw) threw" }
    }

    /// Decodes `bytes` and checks the outcome is a valid image or an ImageIOError.
    private func check(_ bytes: [UInt8], _ label: String, _ tally: inout Tally) {
        do {
            let image = try ImageCodec.decode(Data(bytes), path: label)
            XCTAssertTrue(image.width > 0 && image.height > 0 && (image.channels == 1 || image.channels == 3), label)
            XCTAssertEqual(image.pixels.count, image.width * image.height * image.channels, label)
            tally.decoded += 1
        } catch let error as ImageIOError {
            XCTAssertFalse(error.description.isEmpty)
            tally.threw += 1
        } catch {
            XCTFail("\(label): unexpected error type \(type(of: error)): \(error)")
        }
    }

    private let sources = ["decode/rgb8.png", "decode/palette4_trns.png", "decode/rgb8_interlaced.png",
                           "decode/rgba16.png", "decode/rgb420.jpg", "decode/progressive.jpg",
                           "decode/cmyk.jpg", "decode/gray.jpg"]

    /// Every prefix of every source file.
    func testTruncationAtEveryLength() throws {
        for source in sources {
            let bytes = try fixtureBytes(source)
            var tally = Tally()
            for length in 0..<bytes.count {
                check(Array(bytes[0..<length]), "\(source)[0..<\(length)]", &tally)
            }
            // Cuts before the end of the image data must not decode.
            XCTAssertGreaterThan(tally.threw, bytes.count / 2, "\(source): \(tally)")
            print("fuzz truncate \(source) (\(bytes.count) bytes): \(tally)")
        }
    }

    /// Random single and multiple byte changes (seeded), as stored and — for PNG — with the chunk
    /// CRCs recomputed so the damage reaches zlib and the row filters instead of the CRC check.
    func testRandomByteFlips() throws {
        var generator = SeededGenerator(seed: 42)
        for source in sources {
            let original = try fixtureBytes(source)
            let isPNG = source.hasSuffix(".png")
            var tally = Tally()
            for round in 0..<400 {
                var bytes = original
                let flips = 1 + Int.random(in: 0..<4, using: &generator)
                for _ in 0..<flips {
                    let at = Int.random(in: 0..<bytes.count, using: &generator)
                    if Bool.random(using: &generator) {
                        bytes[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                    } else {
                        bytes[at] = UInt8.random(in: 0...255, using: &generator)
                    }
                }
                if isPNG && round % 2 == 1 { fixPNGCRCs(&bytes) }
                check(bytes, "\(source) round \(round)", &tally)
            }
            print("fuzz flips \(source): \(tally)")
        }
    }

    /// Headers claiming huge sizes are refused before allocating.
    func testHugeDimensionsAreRefused() throws {
        var png = try fixtureBytes("decode/rgb8.png")
        // IHDR width/height at bytes 16..<24: claim 1,000,000 × 1,000,000.
        for (i, b) in [UInt8(0x00), 0x0F, 0x42, 0x40, 0x00, 0x0F, 0x42, 0x40].enumerated() { png[16 + i] = b }
        fixPNGCRCs(&png)
        let error = assertImageIOError(try ImageCodec.decode(Data(png), path: "huge.png"))
        guard case .tooLarge? = error else { return XCTFail("expected .tooLarge, got \(String(describing: error))") }

        var jpeg = try fixtureBytes("decode/rgb420.jpg")
        // SOF0 (FF C0): length(2) precision(1) height(2) width(2).
        let sof = try XCTUnwrap((0..<(jpeg.count - 1)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        for (i, b) in [UInt8(0xF0), 0x00, 0xF0, 0x00].enumerated() { jpeg[sof + 5 + i] = b }
        let jerror = assertImageIOError(try ImageCodec.decode(Data(jpeg), path: "huge.jpg"))
        guard case .tooLarge? = jerror else { return XCTFail("expected .tooLarge, got \(String(describing: jerror))") }
    }

    /// Recomputes the CRC of every complete chunk.
    private func fixPNGCRCs(_ png: inout [UInt8]) {
        var offset = 8
        while offset + 12 <= png.count {
            let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            guard length <= png.count - offset - 12 else { return }
            let crc = crc32(png[(offset + 4)..<(offset + 8 + length)])
            let at = offset + 8 + length
            png[at] = UInt8(crc >> 24)
            png[at + 1] = UInt8((crc >> 16) & 0xFF)
            png[at + 2] = UInt8((crc >> 8) & 0xFF)
            png[at + 3] = UInt8(crc & 0xFF)
            offset = at + 4
        }
    }

    private func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
