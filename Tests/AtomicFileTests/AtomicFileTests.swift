@testable import AtomicFile
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class AtomicFileTests: XCTestCase {
    private func makeDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("AtomicFileTests-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    private func entries(_ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
    }

    func testWritesAndReplaces() throws {
        let dir = try makeDirectory()
        let path = dir + "/out.bin"
        try AtomicFile.write([1, 2, 3], to: path)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([1, 2, 3]))
        // An open descriptor to the old file keeps seeing the old contents: the file was replaced
        // by rename, not rewritten in place.
        let old = open(path, O_RDONLY)
        defer { close(old) }
        try AtomicFile.write(Data([9, 8]), to: path)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([9, 8]))
        var buffer = [UInt8](repeating: 0, count: 8)
        XCTAssertEqual(read(old, &buffer, 8), 3)
        XCTAssertEqual(Array(buffer.prefix(3)), [1, 2, 3])
        XCTAssertEqual(try entries(dir), ["out.bin"])
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        let umaskValue = umask(0); umask(umaskValue)
        XCTAssertEqual(st.st_mode & 0o777, 0o644 & ~umaskValue)
    }

    func testStreamingBodyAndTemporaryNaming() throws {
        let dir = try makeDirectory()
        let path = dir + "/s.txt"
        try AtomicFile.write(to: path) { fd in
            let names = try self.entries(dir)
            XCTAssertEqual(names.count, 1)
            XCTAssertTrue(names[0].hasPrefix(".s.txt.mlconv-tmp-\(getpid())-"), names[0])
            XCTAssertTrue(AtomicFile.isRegistered(dir + "/" + names[0]))
            try Array("hello".utf8).withUnsafeBytes { try AtomicFile.writeAll(fd, $0, path: path) }
            try Array(" world".utf8).withUnsafeBytes { try AtomicFile.writeAll(fd, $0, path: path) }
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "hello world")
        XCTAssertEqual(try entries(dir), ["s.txt"])
    }

    func testFailingBodyKeepsThePreviousFileAndLeavesNoTemporary() throws {
        let dir = try makeDirectory()
        let path = dir + "/keep.bin"
        try AtomicFile.write([7, 7, 7], to: path)
        struct Boom: Error, Equatable {}
        var temporary = ""
        XCTAssertThrowsError(try AtomicFile.write(to: path) { fd in
            temporary = dir + "/" + (try self.entries(dir).first { $0.hasPrefix(".") } ?? "")
            try Array("partial".utf8).withUnsafeBytes { try AtomicFile.writeAll(fd, $0, path: path) }
            throw Boom()
        }) { error in
            XCTAssertEqual(error as? Boom, Boom(), "body errors are rethrown unchanged")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([7, 7, 7]))
        XCTAssertEqual(try entries(dir), ["keep.bin"])
        XCTAssertFalse(AtomicFile.isRegistered(temporary), "unregistered after the failure")
    }

    func testMissingDirectoryIsATypedErrorNamingIt() throws {
        let dir = try makeDirectory()
        let path = dir + "/no/such/dir/out.bin"
        XCTAssertThrowsError(try AtomicFile.write([1], to: path)) { error in
            guard let e = error as? AtomicFileError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.path, path)
            XCTAssertEqual(e.operation, .createTemporary)
            XCTAssertEqual(e.code, ENOENT)
            XCTAssertTrue(e.description.contains(path), e.description)
            XCTAssertTrue(e.reason.contains("'\(dir)/no/such/dir'"), e.reason)
            XCTAssertTrue(e.reason.contains("No such file or directory"), e.reason)
        }
        XCTAssertEqual(try entries(dir), [])
    }

    func testRenameOverADirectoryFailsAndRemovesTheTemporary() throws {
        let dir = try makeDirectory()
        let path = dir + "/taken"
        try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
        XCTAssertThrowsError(try AtomicFile.write([1], to: path)) { error in
            XCTAssertEqual((error as? AtomicFileError)?.operation, .rename, "\(error)")
        }
        XCTAssertEqual(try entries(dir), ["taken"])
    }

    func testStaleTemporaryOfADeadProcessIsRemovedByTheNextWrite() throws {
        let dir = try makeDirectory()
        let path = dir + "/model.mlmodel"
        // A process id that is not running: a reaped child's.
        let dead = try deadPid()
        let stale = ".model.mlmodel.mlconv-tmp-\(dead)-abc"
        let live = ".model.mlmodel.mlconv-tmp-\(getpid())-def"    // ours: still running
        let other = ".other.mlmodel.mlconv-tmp-\(dead)-ghi"       // another target: not swept
        for name in [stale, live, other] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data([0])))
        }
        try AtomicFile.write([1, 2], to: path)
        XCTAssertEqual(try entries(dir), [live, other, "model.mlmodel"].sorted())
    }

    func testSignalCleanupRemovesRegisteredTemporaries() throws {
        let dir = try makeDirectory()
        let path = dir + "/sig.bin"
        XCTAssertThrowsError(try AtomicFile.write(to: path) { _ in
            // What the SIGINT/SIGTERM handler does before re-raising the signal.
            let temporary = try self.entries(dir).filter { $0.hasPrefix(".sig.bin.mlconv-tmp-") }
            XCTAssertEqual(temporary.count, 1)
            AtomicFile.removeRegisteredTemporaries()
            XCTAssertEqual(try self.entries(dir), [])
            throw CancellationError()
        })
        XCTAssertEqual(try entries(dir), [])
    }

    func testSignalHandlersAreInstalled() throws {
        let dir = try makeDirectory()
        try AtomicFile.write([1], to: dir + "/x")
        for sig in [SIGINT, SIGTERM] {
            var current = sigaction()
            XCTAssertEqual(sigaction(sig, nil, &current), 0)
            XCTAssertNotEqual(unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self),
                              unsafeBitCast(SIG_DFL, to: Int.self), "signal \(sig)")
        }
    }

    /// SIGTERM delivered in a child process while it writes: the child dies of the signal and
    /// leaves neither the target nor a temporary file behind.
    func testSIGTERMDuringAWriteInAChildProcess() throws {
        let dir = try makeDirectory()
        let path = dir + "/child.bin"
        let pid = fork()
        XCTAssertGreaterThanOrEqual(pid, 0)
        if pid == 0 {
            try? AtomicFile.write(to: path) { _ in
                _ = raise(SIGTERM)
                _exit(3)   // not reached when the handler re-raises with the default action
            }
            _exit(4)
        }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(20)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL); _ = waitpid(pid, &status, 0)
                return XCTFail("the child process did not finish")
            }
            usleep(10_000)
        }
        XCTAssertEqual(status & 0x7f, SIGTERM, "killed by SIGTERM (status \(status))")
        XCTAssertEqual(try entries(dir), [])
    }

    private func deadPid() throws -> pid_t {
        let pid = fork()
        if pid == 0 { _exit(0) }
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        XCTAssertEqual(kill(pid, 0), -1)
        return pid
    }
}
