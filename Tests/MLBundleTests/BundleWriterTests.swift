import Foundation
import MLGraph
@testable import MLBundle
import XCTest

final class BundleWriterTests: XCTestCase {
    private func invalidGraph() throws -> Graph {
        var g = try makeTestGraph()
        // Dense weight of the wrong shape: verify() fails.
        g.nodes[4].weights["weight"] = ConstantTensor(shape: [10, 5], floats: [Float](repeating: 0, count: 50))
        return g
    }

    func testGraphThatFailsVerificationLeavesNoFileAndNoTemporaryFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("bad.mlbundle")
        XCTAssertThrowsError(try BundleWriter.write(try invalidGraph(), to: url, producer: "mlconv test")) { error in
            guard case let BundleError.invalidGraph(file, underlying) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(file, url.path)
            XCTAssertTrue("\(underlying)".contains("dense"), "\(underlying)")
            XCTAssertTrue("\(error)".contains(url.path) && "\(error)".contains("nothing was written"), "\(error)")
        }
        XCTAssertEqual(try directoryEntries(dir), [])
    }

    func testInvalidGraphKeepsAnExistingFileUnchanged() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("m.mlbundle")
        try BundleWriter.write(try makeTestGraph(), to: url, producer: "mlconv test")
        let before = try Data(contentsOf: url)
        XCTAssertThrowsError(try BundleWriter.write(try invalidGraph(), to: url, producer: "mlconv test"))
        XCTAssertEqual(try Data(contentsOf: url), before)
        XCTAssertEqual(try directoryEntries(dir), ["m.mlbundle"])
    }

    func testGraphWithoutRecordedTypesIsRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        var g = try makeTestGraph()
        g.tensorTypes["bn_out"] = nil
        XCTAssertThrowsError(try BundleWriter.write(g, to: dir.appendingPathComponent("m.mlbundle"), producer: "t")) { error in
            XCTAssertTrue("\(error)".contains("inferShapes"), "\(error)")
        }
        XCTAssertEqual(try directoryEntries(dir), [])
    }

    func testIOFailureHalfwayLeavesNothingAndKeepsTheOldFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("m.mlbundle")
        struct DiskFull: Error, CustomStringConvertible { var description: String { "No space left on device (simulated)" } }
        XCTAssertThrowsError(try BundleWriter.write(try makeTestGraph(), to: url, producer: "t", source: "",
                                                    faultInjection: { _ in throw DiskFull() })) { error in
            guard case BundleError.writeFailed = error else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".contains("No space left"), "\(error)")
        }
        XCTAssertEqual(try directoryEntries(dir), [])

        try BundleWriter.write(try makeTestGraph(), to: url, producer: "old")
        let before = try Data(contentsOf: url)
        var g = try makeTestGraph()
        g.description.metadata.author = "someone else"
        XCTAssertThrowsError(try BundleWriter.write(g, to: url, producer: "new", source: "", faultInjection: { _ in throw DiskFull() }))
        XCTAssertEqual(try Data(contentsOf: url), before)
        XCTAssertEqual(try directoryEntries(dir), ["m.mlbundle"])
        XCTAssertEqual(try BundleFile(contentsOf: url).producer, "old")
    }

    func testOverwriteReplacesTheFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("m.mlbundle")
        try BundleWriter.write(try makeTestGraph(), to: url, producer: "first")
        let old = try BundleFile(contentsOf: url)  // stays mapped: rename never changes the old inode
        try BundleWriter.write(try makeTestGraph(), to: url, producer: "second")
        XCTAssertEqual(try BundleFile(contentsOf: url).producer, "second")
        XCTAssertEqual(old.producer, "first")
        XCTAssertEqual(old.graph.nodes[0].weights["bias"]!.floats(), [0.1, -0.2, 0.3, -0.4])
        XCTAssertEqual(try directoryEntries(dir), ["m.mlbundle"])
    }

    func testMissingDirectoryIsAWriteFailure() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("no/such/dir/m.mlbundle")
        XCTAssertThrowsError(try BundleWriter.write(try makeTestGraph(), to: url, producer: "t")) { error in
            guard case BundleError.writeFailed = error else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".contains(url.path), "\(error)")
        }
    }

    func testWritingOverADirectoryFailsCleanly() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("m.mlbundle")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("inside"), withIntermediateDirectories: true)
        XCTAssertThrowsError(try BundleWriter.write(try makeTestGraph(), to: url, producer: "t"))
        XCTAssertEqual(try directoryEntries(dir), ["m.mlbundle"])
    }

    func testWriterRefusesConstantsItCouldNotReadBack() throws {
        let dir = try makeTemporaryDirectory(self)
        var g = try makeTestGraph()
        // A 3-bit LUT with 4 entries: codes 4…7 would index past the table.
        let bad = LookupTableQuantization(bits: 3, table: [0, 1, 2, 3])
        g.nodes[1].weights["gamma"] = try ConstantTensor(shape: [4], encoding: .lookupTable(bad),
                                                         storage: .copying(packMSBFirst([0, 1, 2, 3], bits: 3)))
        XCTAssertThrowsError(try BundleWriter.write(g, to: dir.appendingPathComponent("m.mlbundle"), producer: "t")) { error in
            XCTAssertTrue("\(error)".contains("gamma") && "\(error)".contains("entries"), "\(error)")
        }
        XCTAssertEqual(try directoryEntries(dir), [])
    }
}
