import Foundation
@testable import HDF5
import XCTest

/// Issue 13, libhdf5 guard: a global heap object whose size runs past its collection made
/// libhdf5 memcpy wild memory (SIGSEGV) when reading the vlen string attribute; now a typed
/// `.corruptFile` error naming the attribute and the damaged object.
final class GlobalHeapGuardTests: XCTestCase {
    func crashFixture(_ name: String) -> String {
        HDF5TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/\(name)").path
    }

    func testDamagedHeapObjectIsACorruptFileError() throws {
        // The in-process guard behind the child-process probe (HDF5IsolationTests): with the
        // probe off, the file opens and the vlen read is refused.
        HDF5Isolation.configure(enabled: false)
        defer { HDF5Isolation.configure(enabled: true) }
        for name in ["global_heap_object_size_2p62.h5", "global_heap_object_size_2p31.h5"] {
            let file = try HDF5File(path: crashFixture(name))
            XCTAssertThrowsError(try file.stringAttribute("keras_version"), name) { e in
                guard let e = e as? HDF5Error else { return XCTFail("\(e)") }
                XCTAssertEqual(e.kind, .corruptFile)
                XCTAssertEqual(e.attribute, "keras_version")
                XCTAssertTrue(e.found?.contains("global heap collection at byte") == true, e.description)
                XCTAssertTrue(e.found?.contains("only 4064 bytes remain") == true, e.description)
            }
            // Fixed-length string attributes do not go through the heap: still readable.
            XCTAssertNotNil(try file.group(at: "/model_weights").attributeNames())
        }
    }

    func testConsistentHeapsPass() throws {
        // The same layout undamaged: every h5py file with vlen strings in Fixtures/hdf5.
        for name in try FileManager.default.contentsOfDirectory(atPath: HDF5TestPaths.fixture("")) where name.hasSuffix(".h5") {
            XCTAssertNil(GlobalHeapCheck.problem(inFileAt: HDF5TestPaths.fixture(name)), name)
        }
        // An object that fits exactly, then one that claims one byte more than remains.
        var bytes = [UInt8](repeating: 0, count: 8192)
        let superblock: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0, 0, 8, 8]
        bytes.replaceSubrange(0..<superblock.count, with: superblock)
        func put64(_ v: UInt64, at: Int) { for i in 0..<8 { bytes[at + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) } }
        let at = 1024
        bytes.replaceSubrange(at..<(at + 8), with: Array("GCOL".utf8) + [1, 0, 0, 0])
        put64(4096, at: at + 8)
        bytes[at + 16] = 1
        put64(4096 - 32, at: at + 24)
        XCTAssertNil(bytes.withUnsafeBytes { GlobalHeapCheck.problem(in: $0) })
        put64(4096 - 32 + 1, at: at + 24)
        XCTAssertNotNil(bytes.withUnsafeBytes { GlobalHeapCheck.problem(in: $0) })
    }
}
