import CHDF5
import Foundation
import Diagnostics
@testable import HDF5
import XCTest

/// Issue 13, "out of the process where a C library can't be trusted": libhdf5 reads a file in a
/// child process first (CHDF5/probe.h); a file that crashes or hangs libhdf5 costs a typed error,
/// not mlconv's process.
final class HDF5IsolationTests: XCTestCase {
    override func tearDown() {
        HDF5Isolation.configure(enabled: true, timeLimit: 60)
        super.tearDown()
    }

    func crashFixture(_ name: String) -> String {
        HDF5TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/\(name)").path
    }

    func assertChildCrashed(_ error: Error, file name: String, line: UInt = #line) {
        guard let e = error as? HDF5Error else { return XCTFail("\(error)", line: line) }
        XCTAssertEqual(e.kind, .corruptFile, line: line)
        XCTAssertTrue(e.summary.contains("libhdf5 crashed (SIGSEGV"), e.description, line: line)
        XCTAssertTrue(e.summary.contains("separate process"), e.description, line: line)
        XCTAssertEqual(e.file.hasSuffix(name), true, e.file, line: line)
        // The in-process heap check explains what the child died of.
        XCTAssertTrue(e.found?.contains("only 4064 bytes remain") == true, e.description, line: line)
    }

    /// Without the in-process heap check, these files kill the process that reads
    /// `keras_version` (SIGSEGV in H5HG_read); the child dies instead and the open is refused.
    func testFileThatCrashesLibhdf5IsRefusedBeforeOpening() throws {
        XCTAssertTrue(HDF5Isolation.isEnabled)
        for name in ["global_heap_object_size_2p62.h5", "global_heap_object_size_2p31.h5"] {
            XCTAssertThrowsError(try HDF5File(path: crashFixture(name)), name) { assertChildCrashed($0, file: name) }
            // The verdict is kept for the unchanged file: the same error again, at once.
            XCTAssertThrowsError(try HDF5File(path: crashFixture(name)), name) { assertChildCrashed($0, file: name) }
        }
    }

    /// Regression (keras-h5 fuzz target): a vlen reference whose object index lies past its
    /// global heap collection's table makes libhdf5 1.10 copy from a wild pointer. The file-wide
    /// probe refuses this file (its child dies at once), but the fuzz input with an index just
    /// past the table passed in that child and killed mlconv's own process at the later read:
    /// what memory lies past the table depends on the process. With the file-wide probe off,
    /// the read itself must happen in a child (variable-length strings are only ever read there).
    func testVariableLengthStringsAreReadInAChildProcess() throws {
        let name = "vlen_heap_index_2p31.h5"
        XCTAssertThrowsError(try HDF5File(path: crashFixture(name)), name) { error in
            XCTAssertTrue((error as? HDF5Error)?.summary.contains("libhdf5 crashed (SIGSEGV") == true, "\(error)")
        }
        HDF5Isolation.setProbesWholeFiles(false)
        let file = try HDF5File(path: crashFixture(name))
        // The fixed-length and numeric data of the file still read.
        XCTAssertEqual(try file.group(at: "model_weights").stringArrayAttribute("layer_names"), ["d"])
        XCTAssertEqual(try file.stringAttribute("backend"), "tensorflow")
        XCTAssertThrowsError(try file.stringAttribute("keras_version")) { error in
            guard let e = error as? HDF5Error else { return XCTFail("\(error)") }
            XCTAssertEqual(e.kind, .corruptFile)
            XCTAssertTrue(e.summary.contains("libhdf5 crashed (SIGSEGV"), e.description)
            XCTAssertTrue(e.summary.contains("variable-length strings of attribute 'keras_version'"), e.description)
            XCTAssertEqual(e.attribute, "keras_version")
            XCTAssertTrue(e.file.hasSuffix(name), e.file)
        }
    }

    /// A read libhdf5 refuses cleanly in the child (a heap reference to an address holding no
    /// collection) is `.readFailed` with the child's libhdf5 error stack, as it was in process.
    func testCleanReadFailureInTheChildKeepsLibhdf5sErrorStack() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: crashFixture("vlen_heap_index_2p31.h5"))))
        // keras_version's reference: length 6, collection address (8 bytes), index 2^31 - 1.
        let tail: [UInt8] = [0xFF, 0xFF, 0xFF, 0x7F]
        let starts = (0...(bytes.count - 16)).filter { at in
            bytes[at..<(at + 4)].elementsEqual([6, 0, 0, 0]) && bytes[(at + 12)..<(at + 16)].elementsEqual(tail)
        }
        XCTAssertEqual(starts.count, 1)
        let at = try XCTUnwrap(starts.first)
        // Index 1 (the object that holds "2.15.0"), in a "collection" at byte 8: the superblock.
        bytes.replaceSubrange((at + 4)..<(at + 16), with: [8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vlen_heap_address_8_\(getpid()).h5").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try HDF5File(path: path)
        XCTAssertEqual(try file.stringAttribute("backend"), "tensorflow")
        XCTAssertThrowsError(try file.stringAttribute("keras_version")) { error in
            guard let e = error as? HDF5Error else { return XCTFail("\(error)") }
            XCTAssertEqual(e.kind, .readFailed, e.description)
            XCTAssertEqual(e.attribute, "keras_version")
            XCTAssertTrue(e.libraryStack.contains { $0.hasPrefix("H5") && $0.contains("()") }, e.description)
            // Formatted as in process: "function(): detail (major: minor)".
            XCTAssertTrue(e.libraryStack.contains { $0.range(of: #"^H5\w*\(\): .+ \([^():]+: [^()]+\)$"#, options: .regularExpression) != nil },
                          e.description)
        }
    }

    /// A child sends four raw fields per error record; they read as `HDF5Library.takeErrorStack`
    /// lines, empty parts left out, a cut-off record dropped.
    func testChildErrorStackIsFormattedAsInProcess() {
        let entries: [String?] = ["H5Aread", "unable to read attribute", "Attribute", "Read failed",
                                  "H5HG_read", "", "", "Bad value",
                                  "H5F_block_read", nil, "", "",
                                  "H5cut", "off"]
        XCTAssertEqual(HDF5Isolation.errorStack(fromEntries: entries), [
            "H5Aread(): unable to read attribute (Attribute: Read failed)",
            "H5HG_read() (Bad value)",
            "H5F_block_read()",
        ])
        XCTAssertEqual(HDF5Library.formatErrorRecord(function: "f", detail: "d", major: "M", minor: ""), "f(): d (M)")
    }

    /// What a probe child writes to stderr (a dying libhdf5's glibc or sanitizer text) goes to
    /// /dev/null, unless MLCONV_PROBE_STDERR=1 keeps it (Scripts/fuzz).
    func testProbeChildrensStderrIsSilencedUnlessAskedFor() throws {
        func childOutput(keep: Bool) throws -> String {
            if keep { setenv("MLCONV_PROBE_STDERR", "1", 1) } else { unsetenv("MLCONV_PROBE_STDERR") }
            defer { unsetenv("MLCONV_PROBE_STDERR") }
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("probe_stderr_\(getpid()).txt").path
            defer { unlink(path) }
            let capture = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            XCTAssertGreaterThanOrEqual(capture, 0)
            fflush(stderr)
            let saved = dup(STDERR_FILENO)
            dup2(capture, STDERR_FILENO)
            close(capture)
            let child = mlconv_probe_fork(0)
            if child == 0 {
                let text = "free(): invalid pointer\n"
                _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
                _exit(0)
            }
            dup2(saved, STDERR_FILENO)
            close(saved)
            XCTAssertGreaterThan(child, 0)
            var status: Int32 = 0
            waitpid(child, &status, 0)
            return try String(contentsOfFile: path, encoding: .utf8)
        }
        XCTAssertEqual(try childOutput(keep: false), "")
        XCTAssertEqual(try childOutput(keep: true), "free(): invalid pointer\n")
    }

    func testChildRepliesAreDecodedStrictly() {
        func reply(_ parts: [[UInt8]]) -> [UInt8] { parts.flatMap { $0 } }
        func length(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n) { Array($0) } }
        let good = reply([length(2), Array("ab".utf8), length(.max), length(0), length(1), [0xFF]])
        XCTAssertEqual(good.withUnsafeBytes { HDF5Isolation.decodeEntries($0) }, ["ab", nil, "", "\u{FFFD}"])
        let cut = reply([length(5), Array("ab".utf8)])
        XCTAssertNil(cut.withUnsafeBytes { HDF5Isolation.decodeEntries($0) })
        XCTAssertNil([UInt8](length(1).prefix(5)).withUnsafeBytes { HDF5Isolation.decodeEntries($0) })
    }

    func testInMemoryImageIsProbedToo() throws {
        let name = "global_heap_object_size_2p31.h5"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: crashFixture(name))))
        XCTAssertThrowsError(try HDF5File(image: bytes, name: "archive.keras:\(name)")) { assertChildCrashed($0, file: name) }
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: HDF5TestPaths.fixture("keras_model.h5"))))
        XCTAssertNoThrow(try HDF5File(image: good, name: "good.h5"))
    }

    /// A child still reading at the limit is killed and the file refused; here the limit is 0 s,
    /// so any file is "too slow" and the kill path runs.
    func testChildOverTheTimeLimitIsKilledAndTheFileRefused() throws {
        let path = HDF5TestPaths.fixture("keras_model.h5")
        HDF5Isolation.configure(timeLimit: 0)
        XCTAssertThrowsError(try HDF5File(path: path)) { error in
            guard let e = error as? HDF5Error else { return XCTFail("\(error)") }
            XCTAssertEqual(e.kind, .corruptFile)
            XCTAssertTrue(e.summary.contains("did not finish reading"), e.description)
            XCTAssertTrue(e.summary.contains("within 0 s"), e.description)
            XCTAssertTrue(e.hint?.contains("MLCONV_HDF5_PROBE_TIMEOUT") == true, e.description)
        }
        HDF5Isolation.configure(timeLimit: 60)
        let file = try HDF5File(path: path)
        XCTAssertFalse(try file.root.childNames().isEmpty)
    }

    func testProbedFileReadsTheSame() throws {
        let path = HDF5TestPaths.fixture("keras_model.h5")
        HDF5Isolation.configure(enabled: false)
        let inProcess = try HDF5File(path: path).stringAttribute("model_config")
        HDF5Isolation.configure(enabled: true)
        let probed = try HDF5File(path: path).stringAttribute("model_config")
        XCTAssertEqual(inProcess, probed)
        XCTAssertTrue(probed?.contains("\"class_name\"") == true)
    }

    func testWithTheProbeOffTheInProcessGuardStillRefusesTheHeap() throws {
        HDF5Isolation.configure(enabled: false)
        XCTAssertFalse(HDF5Isolation.isEnabled)
        let file = try HDF5File(path: crashFixture("global_heap_object_size_2p31.h5"))
        XCTAssertThrowsError(try file.stringAttribute("keras_version")) { error in
            XCTAssertTrue((error as? HDF5Error)?.summary.contains("cannot be read safely") == true, "\(error)")
        }
    }
}

/// A variable-length string whose reference claims 2^30 bytes (Fixtures/crashes, made by
/// Scripts/crash_fixtures/hdf5_global_heap.py): libhdf5 allocates and clears that much per read.
/// The child runs under an address-space limit of the process's size plus `MemoryLimit.current`,
/// so the allocation fails there at once and the file is refused as over the memory limit.
final class HDF5IsolationMemoryTests: XCTestCase {
    func testClaimedGigabyteStringIsRefusedInTheChild() throws {
        let path = HDF5TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/vlen_string_length_2p30.h5").path
        let started = Date()
        try MemoryLimit.with(256 << 20) {
            XCTAssertThrowsError(try HDF5File(path: path)) { error in
                guard let e = error as? HDF5Error else { return XCTFail("\(error)") }
                XCTAssertEqual(e.kind, .memoryLimitExceeded, e.description)
                XCTAssertTrue(e.summary.contains("separate process"), e.description)
                XCTAssertEqual(e.expected, "at most 256.0 MiB (--max-memory)")
            }
        }
        // Refused by the failed allocation, not after clearing a gigabyte twice.
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        // The same limit does not refuse an ordinary file with variable-length strings.
        let good = HDF5TestPaths.fixture("keras_model.h5")
        try MemoryLimit.with(256 << 20) { XCTAssertNoThrow(try HDF5File(path: good)) }
    }

    /// Regression (keras-h5 fuzz target): an object header continuation claiming 2 GiB. libhdf5's
    /// metadata cache reports the failed allocation as H5E_CACHE / H5E_CANTALLOC, not under
    /// H5E_RESOURCE, and the child's first walk (`H5Ovisit`) stopped at the object: the child
    /// exited 0 and the allocation happened in mlconv's process.
    func testObjectHeaderClaimingGigabytesIsRefusedInTheChild() throws {
        let path = HDF5TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/object_header_continuation_2p31.h5").path
        try MemoryLimit.with(256 << 20) {
            XCTAssertThrowsError(try HDF5File(path: path)) { error in
                guard let e = error as? HDF5Error else { return XCTFail("\(error)") }
                XCTAssertEqual(e.kind, .memoryLimitExceeded, e.description)
                XCTAssertTrue(e.found?.contains("failed under the limit") == true, e.description)
            }
        }
        // Regression: the verdict "over the limit" is kept for that limit only; under a larger one
        // the file opens (libhdf5 then fails on the damaged object itself, cleanly).
        try MemoryLimit.with(4 << 30) { XCTAssertNoThrow(try HDF5File(path: path)) }
    }
}
