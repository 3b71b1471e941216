// PNG writing: round trips and atomicity.
import AtomicFile
import Diagnostics
import Foundation
import ImageIO
import TestSupport
import XCTest

final class WriteTests: XCTestCase {
    func testPNGRoundTripGrayAndRGB() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        var generator = SeededGenerator(seed: 7)
        for (channels, width, height) in [(1, 13, 7), (3, 13, 7), (3, 1, 1), (1, 300, 2)] {
            let pixels = (0..<(width * height * channels)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let image = Image(width: width, height: height, channels: channels, pixels: pixels)
            let url = dir.appendingPathComponent("out_\(channels)_\(width)x\(height).png")
            try ImageCodec.writePNG(image, to: url)
            XCTAssertEqual(try ImageCodec.read(contentsOf: url), image)
            XCTAssertEqual(ImageCodec.format(of: try Data(contentsOf: url)), .png)
            XCTAssertEqual(try ImageCodec.decode(try ImageCodec.encodePNG(image)), image)
        }
        // A decoded fixture written and read again is unchanged.
        let photo = try ImageCodec.read(contentsOf: imageFixtures.appendingPathComponent("decode/rgb420.jpg"))
        let url = dir.appendingPathComponent("photo.png")
        try ImageCodec.writePNG(photo, to: url)
        XCTAssertEqual(try ImageCodec.read(contentsOf: url), photo)
        XCTAssertEqual(try leftovers(in: dir).sorted(), [], "no temporary files remain after success")
    }

    func testOverwriteReplacesTheFile() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let url = dir.appendingPathComponent("same.png")
        let first = Image(width: 4, height: 4, channels: 3, filledWith: 10)
        let second = Image(width: 2, height: 3, channels: 1, filledWith: 200)
        try ImageCodec.writePNG(first, to: url)
        try ImageCodec.writePNG(second, to: url)
        XCTAssertEqual(try ImageCodec.read(contentsOf: url), second)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["same.png"])
    }

    func testWriteIntoMissingDirectoryThrowsAndLeavesNothing() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let url = dir.appendingPathComponent("no/such/dir/out.png")
        let image = Image(width: 2, height: 2, channels: 3, filledWith: 1)
        let error = assertImageIOError(try ImageCodec.writePNG(image, to: url))
        guard case let .unwritable(path, own, cause)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(cause?.error is AtomicFileError, "the AtomicFileError is kept as a value: \(String(describing: cause))")
        let reason = cause.appended(to: own)
        XCTAssertEqual(path, url.path)
        XCTAssertTrue(reason.contains("No such file or directory"), reason)
        XCTAssertTrue(error!.description.contains(url.path), error!.description)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "nothing left behind")
    }

    func testFailedRenameRemovesTheTemporaryFile() throws {
        // The target is an existing non-empty directory: the temporary file is written, then the
        // rename fails; the temporary file must be gone and the directory untouched.
        let dir = try TestPaths.temporaryDirectory(for: self)
        let target = dir.appendingPathComponent("taken.png")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try Data([1, 2, 3]).write(to: target.appendingPathComponent("keep"))
        let error = assertImageIOError(try ImageCodec.writePNG(Image(width: 1, height: 1, channels: 1), to: target))
        guard case let .unwritable(_, own, cause)? = error else { return XCTFail("\(String(describing: error))") }
        let reason = cause.appended(to: own)
        XCTAssertTrue(reason.contains("renam"), reason)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["taken.png"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: target.path), ["keep"])
    }

    func testReadOnlyDirectoryThrows() throws {
        guard getuid() != 0 else { throw XCTSkip("skipped: running as root, directory permissions are not enforced") }
        let dir = try TestPaths.temporaryDirectory(for: self)
        let locked = dir.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        chmod(locked.path, 0o555)
        defer { chmod(locked.path, 0o755) }
        let error = assertImageIOError(try ImageCodec.writePNG(Image(width: 1, height: 1, channels: 1),
                                                               to: locked.appendingPathComponent("x.png")))
        guard case .unwritable? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: locked.path), [])
    }

    private func leftovers(in dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".mlconv-tmp-") }
    }
}
