import Foundation
import MLGraph
@testable import MLBundle
import XCTest

// MARK: peak memory (issue 12)

/// `ByteStorage.releaseResidentPages()`: a weight repacked by a kernel leaves memory when it lies in
/// the bundle's read-only mapping (the process's resident set drops by its size, and its values
/// read the same afterwards, faulted in again from the file); allocated bytes are never touched.
final class ResidentPagesTests: XCTestCase {
    /// Resident pages of this process (/proc/self/statm, second field) in bytes.
    private func residentBytes() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return try XCTUnwrap(Int(fields[1])) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private func sum(_ c: ConstantTensor) -> Double {
        UnsafeBufferPointer(start: c.float32Pointer, count: c.elementCount).reduce(0) { $0 + Double($1) }
    }

    func testMappedWeightPagesAreReleasedAndReadTheSameAfter() throws {
        let n = 2048  // a 16 MiB float32 weight
        let values = (0..<(n * n)).map { Float($0 % 1021) * 0.001 - 0.5 }
        let weight = ConstantTensor(shape: [n, n], floats: values)
        var graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, n]))], outputs: ["y"],
                          nodes: [Node(name: "dense", op: .dense(DenseAttributes(outputChannels: n)), inputs: ["x"], outputs: ["y"],
                                       weights: ["weight": weight])])
        try graph.inferShapes()
        let url = try makeTemporaryDirectory(self).appendingPathComponent("big.mlbundle")
        try BundleWriter.write(graph, to: url, producer: "mlconv test")
        let bundle = try BundleFile(contentsOf: url)
        let mapped = try XCTUnwrap(bundle.graph.nodes[0].weights["weight"])
        XCTAssertTrue(mapped.storage.isReadOnlyFileMapping)
        let expected = sum(weight)
        XCTAssertEqual(sum(mapped), expected)  // every page of the mapping is resident now
        let before = try residentBytes()
        mapped.storage.releaseResidentPages()
        let after = try residentBytes()
        XCTAssertGreaterThan(before - after, 15 << 20, "resident \(before) → \(after) bytes")
        XCTAssertEqual(sum(mapped), expected, "the values fault in again from the file")

        // Allocated bytes: no effect (MADV_DONTNEED would zero anonymous memory).
        XCTAssertFalse(weight.storage.isReadOnlyFileMapping)
        weight.storage.releaseResidentPages()
        XCTAssertEqual(sum(weight), expected)
    }
}
