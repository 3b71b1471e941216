import Foundation
import HDF5
import XCTest

/// Opening files, and the errors for files that are missing, not HDF5, truncated or corrupted.
final class HDF5FileTests: XCTestCase {
    func testOpensFixtureAndExposesRoot() throws {
        let path = HDF5TestPaths.fixture("types.h5")
        let file = try HDF5File(path: path)
        XCTAssertEqual(file.path, path)
        XCTAssertEqual(file.root.path, "/")
        XCTAssertEqual(file.root.name, "/")
        XCTAssertEqual(file.root.filePath, path)
        XCTAssertTrue(HDF5File.isHDF5(path: path))
        XCTAssertTrue(HDF5File.libraryVersion.hasPrefix("1."), HDF5File.libraryVersion)
    }

    func testObjectsKeepTheFileOpenAfterTheFileObjectIsReleased() throws {
        var file: HDF5File? = try HDF5File(path: HDF5TestPaths.fixture("types.h5"))
        let dataset = try file!.dataset(at: "data/f32")
        let group = try file!.group(at: "nested")
        file = nil
        XCTAssertEqual(try dataset.readFloats().count, 24)
        XCTAssertEqual(try group.childNames(), ["level1"])
    }

    func testMissingFile() throws {
        let error = assertHDF5Error(.fileNotFound) {
            try HDF5File(path: "/nonexistent/dir/model.h5")
        }
        XCTAssertEqual(error?.file, "/nonexistent/dir/model.h5")
        XCTAssertTrue(error?.description.contains("/nonexistent/dir/model.h5") ?? false)
        XCTAssertNotNil(error?.hint)
        XCTAssertFalse(HDF5File.isHDF5(path: "/nonexistent/dir/model.h5"))
    }

    func testDirectoryIsNotHDF5() throws {
        let directory = try HDF5TestPaths.temporaryDirectory(for: self)
        let error = assertHDF5Error(.notHDF5) { try HDF5File(path: directory.path) }
        XCTAssertTrue(error?.summary.contains("directory") ?? false)
        XCTAssertFalse(HDF5File.isHDF5(path: directory.path))
    }

    func testTextFileIsNotHDF5() throws {
        let url = try HDF5TestPaths.temporaryDirectory(for: self).appendingPathComponent("notes.h5")
        try Data("just some text, not HDF5\n".utf8).write(to: url)
        let error = assertHDF5Error(.notHDF5) { try HDF5File(path: url.path) }
        XCTAssertEqual(error?.file, url.path)
        let text = error?.description ?? ""
        XCTAssertTrue(text.contains(url.path), text)
        XCTAssertTrue(text.contains("is this an HDF5 file?"), text)
        XCTAssertTrue(text.contains("model.save("), text)
        XCTAssertFalse(HDF5File.isHDF5(path: url.path))
    }

    func testEmptyZipAndJSONFilesGetSpecificHints() throws {
        let directory = try HDF5TestPaths.temporaryDirectory(for: self)
        let cases: [(String, Data, String)] = [
            ("empty.h5", Data(), "empty"),
            ("model.keras", Data([0x50, 0x4B, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00]), "ZIP"),
            ("model.json", Data(" {\"class_name\": \"Sequential\"}".utf8), "JSON"),
        ]
        for (name, data, word) in cases {
            let url = directory.appendingPathComponent(name)
            try data.write(to: url)
            let error = assertHDF5Error(.notHDF5) { try HDF5File(path: url.path) }
            XCTAssertTrue(error?.summary.contains(word) ?? false, "\(name): \(String(describing: error))")
        }
    }

    func testTruncatedFileThrowsCorruptFileWithLibraryStack() throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: HDF5TestPaths.fixture("types.h5")))
        let url = try HDF5TestPaths.temporaryDirectory(for: self).appendingPathComponent("cut.h5")
        try original.prefix(original.count / 2).write(to: url)
        XCTAssertTrue(HDF5File.isHDF5(path: url.path), "the signature is still there")
        let error = assertHDF5Error(.corruptFile) { try HDF5File(path: url.path) }
        XCTAssertTrue(error?.summary.contains("truncated") ?? false, String(describing: error))
        XCTAssertFalse(error?.libraryStack.isEmpty ?? true, "libhdf5's error stack is attached")
        XCTAssertTrue(error?.description.contains("libhdf5 error stack") ?? false)
        XCTAssertTrue(error?.description.contains(url.path) ?? false)
    }

    func testFileCutInsideTheSignatureIsNotHDF5() throws {
        let url = try HDF5TestPaths.temporaryDirectory(for: self).appendingPathComponent("tiny.h5")
        try Data([0x89, 0x48, 0x44, 0x46]).write(to: url)
        assertHDF5Error(.notHDF5) { try HDF5File(path: url.path) }
    }

    func testDamagedSuperblockThrowsCorruptFile() throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: HDF5TestPaths.fixture("keras2_weights.h5")))
        // Superblock version 0: the root group's object header address is at bytes 64..<72.
        // Point it far outside the file.
        for index in 64..<72 { bytes[index] = index == 68 ? 0x7F : 0 }
        let url = try HDF5TestPaths.temporaryDirectory(for: self).appendingPathComponent("bad.h5")
        try bytes.write(to: url)
        let error = assertHDF5Error(.corruptFile) { try HDF5File(path: url.path) }
        XCTAssertFalse(error?.libraryStack.isEmpty ?? true, String(describing: error))
    }

    func testDamagedChunkOpensButReadingThrowsReadFailed() throws {
        let file = try HDF5File(path: HDF5TestPaths.fixture("corrupt_chunk.h5"))
        XCTAssertEqual(try file.dataset(at: "plain_f32").readFloats(), [1, 2, 3])
        let dataset = try file.dataset(at: "gzip_f32")
        XCTAssertEqual(dataset.shape, [4, 5])
        let error = assertHDF5Error(.readFailed) { try dataset.readFloats() }
        XCTAssertEqual(error?.objectPath, "/gzip_f32")
        XCTAssertFalse(error?.libraryStack.isEmpty ?? true)
        XCTAssertTrue(error?.libraryStack.joined().contains("filter") ?? false,
                      String(describing: error))
        // The library is still usable afterwards.
        XCTAssertEqual(try file.dataset(at: "plain_f32").readFloats(), [1, 2, 3])
    }

    func testErrorDescriptionListsEveryPart() {
        let error = HDF5Error(kind: .shapeMismatch, file: "m.h5", objectPath: "/a/b",
                              attribute: "x", summary: "bad shape", expected: "[2]",
                              found: "[3]", libraryStack: ["H5Dread(): failed"], hint: "fix it")
        let text = error.description
        for part in ["shape mismatch", "bad shape", "file: m.h5", "object: /a/b", "attribute: x",
                     "expected: [2]", "found: [3]", "H5Dread(): failed", "hint: fix it"] {
            XCTAssertTrue(text.contains(part), "missing \(part) in\n\(text)")
        }
    }
}
