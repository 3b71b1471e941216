import Foundation
import MLGraph
@testable import MLBundle
import XCTest

final class BundleRoundTripTests: XCTestCase {
    func testRoundTripKeepsGraphAndMapsConstantsWithoutCopy() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("model.mlbundle")
        let graph = try makeTestGraph()
        try BundleWriter.write(graph, to: url, producer: "mlconv 0.1.0-test", source: "keras:model.h5")
        XCTAssertEqual(try directoryEntries(dir), ["model.mlbundle"], "no temporary file left")

        let bundle = try BundleFile(contentsOf: url)
        assertGraphsEqual(graph, bundle.graph)
        XCTAssertEqual(bundle.formatVersion, BundleFormat.currentVersion)
        XCTAssertEqual(bundle.producer, "mlconv 0.1.0-test")
        XCTAssertEqual(bundle.source, "keras:model.h5")
        XCTAssertTrue(bundle.checksumVerified)
        XCTAssertEqual(bundle.fileSize, try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        XCTAssertEqual(bundle.weightByteCountsByEncoding,
                       ["fp32": 16 + 16 + 16 + 40, "fp16": 108 * 2, "4-bit linear": 20, "3-bit LUT": 2])

        let mapped = bundle.mappedBytes
        let lo = UInt(bitPattern: mapped.baseAddress!), hi = lo + UInt(mapped.count)
        let weights = bundle.weightSection
        XCTAssertEqual(UInt(bitPattern: weights.baseAddress!) % 64, 0, "weight section aligned")
        var count = 0
        for node in bundle.graph.nodes {
            for (key, w) in node.weights {
                let p = UInt(bitPattern: w.storage.baseAddress)
                XCTAssertEqual(p % 64, 0, "\(node.name).\(key) is 64-byte aligned")
                XCTAssertTrue(p >= lo && p + UInt(w.encodedByteCount) <= hi, "\(node.name).\(key) points into the mapping (no copy)")
                XCTAssertTrue(p >= UInt(bitPattern: weights.baseAddress!) && p + UInt(w.encodedByteCount) <= UInt(bitPattern: weights.baseAddress!) + UInt(weights.count))
                count += 1
            }
        }
        XCTAssertEqual(count, 8)
        // The shared constant (batch-norm mean and beta) is stored once.
        let bn = bundle.graph.nodes[1]
        XCTAssertEqual(bn.weights["mean"]!.storage.baseAddress, bn.weights["beta"]!.storage.baseAddress)
        // Dequantized values survive.
        XCTAssertEqual(bn.weights["gamma"]!.floats(), [2, -1, 0, 0.5])
        XCTAssertEqual(bundle.graph.nodes[4].weights["weight"]!.floats(), graph.nodes[4].weights["weight"]!.floats())
    }

    func testConstantsOutliveTheBundleObject() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("m.mlbundle")
        let graph = try makeTestGraph()
        try BundleWriter.write(graph, to: url, producer: "mlconv test")
        var loaded: Graph? = try BundleFile(contentsOf: url).graph  // BundleFile released here
        try FileManager.default.removeItem(at: url)  // the mapping keeps the inode alive
        XCTAssertEqual(loaded!.nodes[0].weights["bias"]!.floats(), [0.1, -0.2, 0.3, -0.4])
        XCTAssertEqual(loaded!.nodes[4].weights["bias"]!.floats(), graph.nodes[4].weights["bias"]!.floats())
        loaded = nil
    }

    func testOutputIsDeterministicAndRewritingALoadedBundleGivesTheSameBytes() throws {
        let dir = try makeTemporaryDirectory(self)
        let graph = try makeTestGraph()
        let a = dir.appendingPathComponent("a.mlbundle"), b = dir.appendingPathComponent("b.mlbundle")
        let c = dir.appendingPathComponent("c.mlbundle")
        try BundleWriter.write(graph, to: a, producer: "mlconv test", source: "keras:x.h5")
        try BundleWriter.write(graph, to: b, producer: "mlconv test", source: "keras:x.h5")
        try BundleWriter.write(try BundleFile(contentsOf: a).graph, to: c, producer: "mlconv test", source: "keras:x.h5")
        let bytes = try Data(contentsOf: a)
        XCTAssertEqual(bytes, try Data(contentsOf: b))
        XCTAssertEqual(bytes, try Data(contentsOf: c))
        XCTAssertEqual(Array(bytes), try BundleWriter.serialize(graph, producer: "mlconv test", source: "keras:x.h5"))
    }

    func testLayoutMatchesTheSpecification() throws {
        let graph = try makeTestGraph()
        let bytes = try BundleWriter.serialize(graph, producer: "mlconv test", source: "keras:model.h5")
        XCTAssertEqual(Array(bytes[0..<8]), Array("MLBUNDLE".utf8))
        bytes.withUnsafeBytes { b in
            XCTAssertEqual(b.readLE(8, as: UInt16.self), 2)
            XCTAssertEqual(b.readLE(10, as: UInt16.self), 0)
            XCTAssertEqual(b.readLE(12, as: UInt32.self), 0)
            XCTAssertEqual(b.readLE(16, as: UInt64.self), UInt64(bytes.count))
            XCTAssertEqual(b.readLE(24, as: UInt32.self), 3)
            XCTAssertEqual(b.readLE(28, as: UInt32.self), 0)
            XCTAssertEqual(b.readLE(bytes.count - 8, as: UInt64.self), XXH64.hash(UnsafeRawBufferPointer(rebasing: b[0..<(bytes.count - 8)])))
        }
        let layout = Layout(bytes)
        XCTAssertEqual(layout.info.lowerBound, 104)
        XCTAssertEqual(layout.model.lowerBound, layout.info.upperBound)
        XCTAssertEqual(layout.weights.lowerBound % 64, 0)
        XCTAssertEqual(layout.weights.upperBound, bytes.count - 8)
        XCTAssertTrue(bytes[layout.model.upperBound..<layout.weights.lowerBound].allSatisfy { $0 == 0 })
        let info = try JSONSerialization.jsonObject(with: Data(bytes[layout.info])) as! [String: String]
        XCTAssertEqual(info, ["producer": "mlconv test", "source": "keras:model.h5"])
        let model = try JSONSerialization.jsonObject(with: Data(bytes[layout.model])) as! [String: Any]
        XCTAssertEqual(Set(model.keys), ["inputs", "outputs", "nodes", "tensorTypes", "description"])
        let nodes = model["nodes"] as! [[String: Any]]
        let weights = nodes[0]["weights"] as! [String: [String: Any]]
        // Archived in node order, each node's weights in key order: conv "bias", then conv "weight".
        XCTAssertEqual(weights["bias"]!["location"] as! [String: Int], ["offset": 0, "byteCount": 16])
        XCTAssertEqual(weights["weight"]!["location"] as! [String: Int], ["offset": 64, "byteCount": 216])
        XCTAssertNil(weights["weight"]!["bytes"])
        if let dump = ProcessInfo.processInfo.environment["MLBUNDLE_DUMP_DIR"] {  // for docs/BUNDLE_FORMAT.md examples
            try Data(bytes).write(to: URL(fileURLWithPath: dump).appendingPathComponent("example.mlbundle"))
        }
        // Non-finite floats are spelled as strings.
        XCTAssertTrue(String(decoding: bytes[layout.model], as: UTF8.self).contains("\"inf\""))
    }

    func testLargeConstantsAreWrittenStraightFromStorage() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("big.mlbundle")
        let n = 1024 * 600  // 2.4 MB of fp32, larger than the writer's buffer
        let w = ConstantTensor(shape: [1024, 600], floats: (0..<n).map { Float($0 % 1000) * 0.001 })
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 600]))], outputs: ["y"],
                      nodes: [Node(name: "d", op: .dense(DenseAttributes(outputChannels: 1024)), inputs: ["x"], outputs: ["y"],
                                   weights: ["weight": w])])
        try g.inferShapes()
        try BundleWriter.write(g, to: url, producer: "mlconv test")
        let b = try BundleFile(contentsOf: url)
        XCTAssertEqual(b.weightByteCountsByEncoding, ["fp32": n * 4])
        let p = b.graph.nodes[0].weights["weight"]!.float32Pointer!
        XCTAssertEqual(p[0], 0); XCTAssertEqual(p[n - 1], Float((n - 1) % 1000) * 0.001)
        XCTAssertEqual(memcmp(p, w.storage.baseAddress, n * 4), 0)
    }

    func testXXH64MatchesReferenceVectors() {
        XCTAssertEqual(XXH64.hash([]), 0xEF46_DB37_51D8_E999)
        XCTAssertEqual(XXH64.hash(Array("a".utf8)), 0xD24E_C4F1_A98C_6E5B)
        XCTAssertEqual(XXH64.hash(Array("abc".utf8)), 0x44BC_2CF5_AD77_0999)
        XCTAssertEqual(XXH64.hash(Array("abcdefghijklmnopqrstuvwxyz".utf8)), 0xCFE1_F278_FA89_835C)
        let long = (0..<3).flatMap { _ in (0..<256).map { UInt8($0) } } + Array("xyz".utf8)
        XCTAssertEqual(XXH64.hash(long), 0xE921_A1B4_5BD7_79F8)
        // Streaming in uneven pieces gives the one-shot result.
        for split in [1, 3, 7, 31, 32, 33, 100] {
            var h = XXH64()
            var i = 0
            while i < long.count {
                let j = Swift.min(long.count, i + split)
                h.update(Array(long[i..<j])); i = j
            }
            XCTAssertEqual(h.finalize(), 0xE921_A1B4_5BD7_79F8, "pieces of \(split)")
        }
        // A value type: a copy goes on independently of the original.
        var ab = XXH64()
        ab.update(Array("ab".utf8))
        var abc = ab
        abc.update(Array("c".utf8))
        XCTAssertEqual(ab.finalize(), XXH64.hash(Array("ab".utf8)))
        XCTAssertEqual(abc.finalize(), 0x44BC_2CF5_AD77_0999)
        XCTAssertEqual(XXH64.hash(Array("abc".utf8), seed: 1), { var h = XXH64(seed: 1); h.update(Array("abc".utf8)); return h.finalize() }())
    }
}
