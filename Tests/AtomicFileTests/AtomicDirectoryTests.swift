@testable import AtomicFile
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class AtomicDirectoryTests: XCTestCase {
    private struct Boom: Error {}

    private func makeDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("AtomicDirectoryTests-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    private func entries(_ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
    }

    func testCreatesAndReplacesWholeDirectory() throws {
        let dir = try makeDirectory()
        let path = dir + "/P.mlpackage"
        try AtomicDirectory.write(to: path) { tmp in
            XCTAssertNotEqual(tmp, path)
            XCTAssertTrue(tmp.contains(AtomicFile.temporaryMarker))
            try Data([1]).write(to: URL(fileURLWithPath: tmp + "/a"))
            try FileManager.default.createDirectory(atPath: tmp + "/sub", withIntermediateDirectories: false)
            try Data([2]).write(to: URL(fileURLWithPath: tmp + "/sub/b"))
        }
        XCTAssertEqual(try entries(path), ["a", "sub"])
        try AtomicDirectory.write(to: path) { tmp in
            try Data([3]).write(to: URL(fileURLWithPath: tmp + "/c"))
        }
        XCTAssertEqual(try entries(path), ["c"], "the old tree is replaced, not merged")
        XCTAssertEqual(try entries(dir), ["P.mlpackage"])
    }

    func testFailureLeavesOldDirectoryAndNoTemporaries() throws {
        let dir = try makeDirectory()
        let path = dir + "/P.mlpackage"
        try AtomicDirectory.write(to: path) { tmp in try Data([1]).write(to: URL(fileURLWithPath: tmp + "/old")) }
        XCTAssertThrowsError(try AtomicDirectory.write(to: path) { tmp in
            try Data([1]).write(to: URL(fileURLWithPath: tmp + "/half"))
            throw Boom()
        }) { XCTAssertTrue($0 is Boom) }
        XCTAssertEqual(try entries(path), ["old"])
        XCTAssertEqual(try entries(dir), ["P.mlpackage"])
        // A first write that fails leaves nothing at all.
        XCTAssertThrowsError(try AtomicDirectory.write(to: dir + "/Q.mlpackage") { _ in throw Boom() })
        XCTAssertEqual(try entries(dir), ["P.mlpackage"])
    }

    func testRefusesToReplaceAFile() throws {
        let dir = try makeDirectory()
        let path = dir + "/F"
        try Data([7]).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try AtomicDirectory.write(to: path) { _ in }) { error in
            XCTAssertEqual((error as? AtomicFileError)?.code, ENOTDIR)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([7]))
        XCTAssertEqual(try entries(dir), ["F"])
    }

    func testSweepsTemporariesOfDeadProcesses() throws {
        let dir = try makeDirectory()
        // pid 2^22+1 is above Linux's pid_max default range and so names no live process.
        let dead = ".P.mlpackage\(AtomicFile.temporaryMarker)4194305-x"
        let aside = ".P.mlpackage\(AtomicDirectory.setAsideMarker)4194305-y"
        let live = ".P.mlpackage\(AtomicFile.temporaryMarker)\(getpid())-z"
        for name in [dead, aside, live] {
            try FileManager.default.createDirectory(atPath: dir + "/" + name + "/inner", withIntermediateDirectories: true)
        }
        try AtomicDirectory.write(to: dir + "/P.mlpackage") { _ in }
        XCTAssertEqual(try entries(dir), [live, "P.mlpackage"].sorted())
    }
}
