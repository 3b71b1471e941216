@testable import AtomicFile
import Foundation
import XCTest

/// Issue 13 (kill -9 loop): a process killed between AtomicDirectory's two renames leaves the
/// previous directory set aside and nothing at the target; the next write puts it back first.
final class AtomicDirectoryRecoveryTests: XCTestCase {
    private struct Boom: Error {}

    func testSetAsideDirectoryOfADeadProcessIsRestored() throws {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("AtomicDirectoryRecoveryTests-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        // pid 2^22+1 is above Linux's pid_max range: no live process has it.
        let aside = dir + "/.P.mlpackage\(AtomicDirectory.setAsideMarker)4194305-y"
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        try Data("previous".utf8).write(to: URL(fileURLWithPath: aside + "/Manifest.json"))
        let target = dir + "/P.mlpackage"
        // A write that fails after the sweep: the previous package is back, intact.
        XCTAssertThrowsError(try AtomicDirectory.write(to: target) { _ in throw Boom() })
        XCTAssertEqual(try String(contentsOfFile: target + "/Manifest.json", encoding: .utf8), "previous")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["P.mlpackage"])
        // A set-aside directory is not restored over an existing target (nor one of a live process).
        let live = dir + "/.P.mlpackage\(AtomicDirectory.setAsideMarker)\(getpid())-z"
        try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: true)
        XCTAssertNil(AtomicDirectory.restoreSetAside(for: target))
        try FileManager.default.removeItem(atPath: target)
        XCTAssertNil(AtomicDirectory.restoreSetAside(for: target))
    }
}
