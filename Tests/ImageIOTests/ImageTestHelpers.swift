// Helpers for the ImageIO tests: the Fixtures/images manifest, raw expected pixels, a minimal
// .npy reader and pixel-difference statistics.
import Foundation
import ImageIO
import TestSupport
import XCTest

/// `Fixtures/images` (made by `Scripts/make_image_fixtures.py`).
let imageFixtures = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/images")

/// `Fixtures/images/manifest.json`.
struct ImageFixtureManifest: Decodable {
    struct DecodeCase: Decodable {
        let file: String
        let expected: String
        let width: Int
        let height: Int
        let channels: Int
        let notes: String
    }
    struct ResizeCase: Decodable {
        let source: String
        let mode: String
        let width: Int
        let height: Int
        let channels: Int
        let expected: String
    }
    struct GrayscaleCase: Decodable {
        let source: String
        let expected: String
    }
    let pillow: String
    let decode: [DecodeCase]
    let resize: [ResizeCase]
    let grayscale: [GrayscaleCase]

    static func load() throws -> ImageFixtureManifest {
        let data = try Data(contentsOf: imageFixtures.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(ImageFixtureManifest.self, from: data)
    }
}

/// `Fixtures/images/shared_photos.json`: what Pillow decodes from `../shared/images`.
struct SharedPhotoExpectations: Decodable {
    struct Photo: Decodable {
        let width: Int
        let height: Int
        let mode: String
        let mean_rgb: [Double]
    }
    let photos: [String: Photo]

    static func load() throws -> SharedPhotoExpectations {
        let data = try Data(contentsOf: imageFixtures.appendingPathComponent("shared_photos.json"))
        return try JSONDecoder().decode(SharedPhotoExpectations.self, from: data)
    }
}

/// The bytes of `Fixtures/images/<relative>`.
func fixtureBytes(_ relative: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: imageFixtures.appendingPathComponent(relative)))
}

/// Max and mean absolute difference between two equally long byte arrays, and how many differ.
struct PixelDiff: CustomStringConvertible {
    let max: Int
    let mean: Double
    let differing: Int
    let count: Int

    init(_ a: [UInt8], _ b: [UInt8]) {
        precondition(a.count == b.count, "PixelDiff: \(a.count) vs \(b.count) samples")
        var m = 0, total = 0, n = 0
        for (x, y) in zip(a, b) {
            let d = abs(Int(x) - Int(y))
            m = Swift.max(m, d)
            total += d
            if d != 0 { n += 1 }
        }
        max = m
        mean = a.isEmpty ? 0 : Double(total) / Double(a.count)
        differing = n
        count = a.count
    }

    var description: String {
        "max |diff| \(max), mean |diff| \(String(format: "%.4f", mean)), \(differing)/\(count) samples differ"
    }
}

/// A minimal reader for little-endian float32 C-order `.npy` files (versions 1–3), enough for
/// the reference arrays in `../shared/models/reference` (ImageIOTests does not depend on
/// MLRuntime's `NPY`).
func readFloat32NPY(_ url: URL) throws -> (shape: [Int], values: [Float]) {
    let bytes = [UInt8](try Data(contentsOf: url))
    let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
    guard bytes.count >= 10, Array(bytes[0..<6]) == magic else {
        throw NPYTestError("\(url.path): not a .npy file")
    }
    let major = bytes[6]
    let headerLength: Int, headerStart: Int
    if major == 1 {
        headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
        headerStart = 10
    } else {
        guard bytes.count >= 12 else { throw NPYTestError("\(url.path): truncated header") }
        headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        headerStart = 12
    }
    guard bytes.count >= headerStart + headerLength,
          let header = String(bytes: bytes[headerStart..<(headerStart + headerLength)], encoding: .utf8) else {
        throw NPYTestError("\(url.path): bad header")
    }
    guard header.contains("'descr': '<f4'"), header.contains("'fortran_order': False"),
          let open = header.range(of: "'shape': ("), let close = header[open.upperBound...].firstIndex(of: ")") else {
        throw NPYTestError("\(url.path): expected little-endian float32 C order, header \(header)")
    }
    let shape = header[open.upperBound..<close].split(separator: ",")
        .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.compactMap { Int($0) }
    let count = shape.reduce(1, *)
    let dataStart = headerStart + headerLength
    guard bytes.count == dataStart + 4 * count else {
        throw NPYTestError("\(url.path): \(bytes.count - dataStart) data bytes for shape \(shape)")
    }
    var values = [Float](repeating: 0, count: count)
    values.withUnsafeMutableBytes { dst in
        bytes.withUnsafeBytes { src in
            dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[dataStart...]))
        }
    }
    return (shape, values)
}

struct NPYTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Asserts that `body` throws an `ImageIOError` and returns it.
@discardableResult
func assertImageIOError<T>(_ body: @autoclosure () throws -> T, _ message: String = "",
                           file: StaticString = #filePath, line: UInt = #line) -> ImageIOError? {
    do {
        let value = try body()
        XCTFail("expected an ImageIOError, got \(value). \(message)", file: file, line: line)
    } catch let error as ImageIOError {
        return error
    } catch {
        XCTFail("expected an ImageIOError, got \(type(of: error)): \(error). \(message)", file: file, line: line)
    }
    return nil
}
