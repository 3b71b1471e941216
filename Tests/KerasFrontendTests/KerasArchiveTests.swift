import CZip
import Diagnostics
import Foundation
import HDF5
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Keras 3 `.keras` archives: the fixture archives read and inspected; damaged and hostile
/// archives (not ZIP, members missing, ZIP bombs, path traversal names, weights that are not
/// HDF5) refused with `KerasConversionError.invalidArchive`; weights-only files without an
/// architecture refused with `weightsOnlyWithoutArchitecture`.
final class KerasArchiveTests: XCTestCase {
    var tmp: URL!

    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-archive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    /// A ZIP file written with libzip (members stored uncompressed unless `deflate`).
    func makeZip(_ name: String, _ members: [(String, [UInt8])], deflate: Bool = false) throws -> URL {
        let url = tmp.appendingPathComponent(name)
        var code: Int32 = 0
        guard let za = zip_open(url.path, ZIP_CREATE | ZIP_TRUNCATE, &code) else { throw XCTSkip("libzip cannot create \(url.path)") }
        for (n, bytes) in members {
            let buf = malloc(max(bytes.count, 1))!
            bytes.withUnsafeBytes { if let b = $0.baseAddress { memcpy(buf, b, bytes.count) } }
            guard let src = zip_source_buffer(za, buf, zip_uint64_t(bytes.count), 1) else { free(buf); XCTFail("zip_source_buffer"); continue }
            let i = zip_file_add(za, n, src, 0)
            XCTAssertGreaterThanOrEqual(i, 0, "zip_file_add \(n)")
            if i >= 0 { zip_set_file_compression(za, zip_uint64_t(i), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) }
        }
        XCTAssertEqual(zip_close(za), 0)
        return url
    }

    func fixtureArchive(_ name: String = "multi_head_attention_k3") throws -> URL {
        let url = KerasTestPaths.fixtures.appendingPathComponent("\(name)/model.keras")
        guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("fixture \(url.path) missing (Scripts/make_fixtures.py)") }
        return url
    }

    /// The archive's members, read back with `KerasArchive`.
    func members(of url: URL) throws -> KerasArchive { try KerasArchive.read(url) }

    func expectInvalidArchive(_ url: URL, member: String?, mentioning words: [String], limits: KerasArchive.Limits? = nil,
                              file: StaticString = #filePath, line: UInt = #line) {
        do {
            if let limits { _ = try KerasArchive.read(url, limits: limits) } else { _ = try KerasConverter().convert(modelAt: url) }
            XCTFail("\(url.lastPathComponent) was accepted", file: file, line: line)
        } catch let KerasConversionError.invalidArchive(f, m, own, hint, cause) {
            let problem = cause.appended(to: own)
            XCTAssertEqual(f, url.path, file: file, line: line)
            XCTAssertEqual(m, member, "member: \(problem)", file: file, line: line)
            for w in words { XCTAssertTrue(problem.contains(w), "'\(problem)' should mention '\(w)'", file: file, line: line) }
            XCTAssertFalse(hint.isEmpty, file: file, line: line)
        } catch {
            XCTFail("expected invalidArchive, got \(error)", file: file, line: line)
        }
    }

    func testFixtureArchiveHasConfigWeightsAndVersion() throws {
        let a = try members(of: try fixtureArchive())
        XCTAssertEqual(Array(a.weights.prefix(4)), [0x89, 0x48, 0x44, 0x46])
        XCTAssertTrue(a.config.contains("\"MultiHeadAttention\""))
        XCTAssertEqual(a.kerasVersion, "3.15.1")
    }

    func testDeflatedArchiveReadsLikeTheStoredOne() throws {
        let a = try members(of: try fixtureArchive("norm_layers_k3"))
        let url = try makeZip("deflated.keras", [("metadata.json", Array((a.metadata ?? "{}").utf8)),
                                                 ("config.json", Array(a.config.utf8)), ("model.weights.h5", a.weights)], deflate: true)
        let stored = try KerasConverter().convert(modelAt: try fixtureArchive("norm_layers_k3"))
        let deflated = try KerasConverter().convert(modelAt: url)
        XCTAssertEqual(deflated.outputs, stored.outputs)
        XCTAssertEqual(deflated.nodes.count, stored.nodes.count)
        XCTAssertEqual(deflated.description.metadata.userDefined["keras.version"], "3.15.1")
    }

    func testInspectReadsArchives() throws {
        let s = try KerasInspector.inspect(try fixtureArchive())
        XCTAssertTrue(s.isKerasArchive)
        XCTAssertFalse(s.isWeightsOnly)
        XCTAssertEqual(s.kerasVersion, "3.15.1")
        XCTAssertEqual(s.inputs.map(\.name), ["query", "value", "key", "grid"])
        XCTAssertTrue(s.unsupportedLayers.isEmpty)
        XCTAssertNil(s.conversionError)
        XCTAssertEqual(s.jsonObject["format"] as? String, "keras-archive")
        XCTAssertGreaterThan(s.parameterCount, 0)
    }

    func testZipSignatureWithGarbageIsRefused() throws {
        let url = tmp.appendingPathComponent("garbage.keras")
        try Data([0x50, 0x4B, 0x03, 0x04] + Array(repeating: 0x41, count: 200)).write(to: url)
        expectInvalidArchive(url, member: nil, mentioning: ["ZIP"])
    }

    func testMissingWeightsMember() throws {
        let url = try makeZip("noweights.keras", [("config.json", Array("{}".utf8)), ("metadata.json", Array("{}".utf8))])
        expectInvalidArchive(url, member: "model.weights.h5", mentioning: ["no member 'model.weights.h5'", "config.json"])
    }

    func testMissingConfigMember() throws {
        let url = try makeZip("noconfig.keras", [("model.weights.h5", [1, 2, 3])])
        expectInvalidArchive(url, member: "config.json", mentioning: ["no member 'config.json'"])
    }

    func testPathTraversalNamesAreRefused() throws {
        for bad in ["../evil.txt", "assets/../../evil", "/etc/passwd"] {
            let url = try makeZip("traversal.keras", [("config.json", Array("{}".utf8)), (bad, [0])])
            expectInvalidArchive(url, member: bad, mentioning: ["path traversal"])
        }
    }

    func testMembersOverTheLimitAreRefused() throws {
        let url = try fixtureArchive()
        var limits = KerasArchive.Limits()
        limits.maxWeightsBytes = 1000
        expectInvalidArchive(url, member: "model.weights.h5", mentioning: ["over the limit of 1000 bytes"], limits: limits)
        limits = .init()
        limits.maxJSONBytes = 10
        expectInvalidArchive(url, member: "config.json", mentioning: ["over the limit of 10 bytes"], limits: limits)
    }

    /// A ZIP bomb whose headers understate the member's size: reading stops at the declared size.
    func testMemberLargerThanDeclaredIsRefused() throws {
        let payload = [UInt8](repeating: 0x58, count: 4096)
        let url = try makeZip("bomb.keras", [("config.json", Array("{}".utf8)), ("model.weights.h5", payload)], deflate: true)
        var bytes = [UInt8](try Data(contentsOf: url))
        // Rewrite the uncompressed size of model.weights.h5 in its local and central headers to 16.
        func patch(signature: [UInt8], sizeOffset: Int, nameOffset: Int) {
            var i = 0
            while i + nameOffset + 16 < bytes.count {
                if Array(bytes[i..<(i + 4)]) == signature,
                   String(bytes: bytes[(i + nameOffset)..<(i + nameOffset + 16)], encoding: .utf8) == "model.weights.h5" {
                    bytes.replaceSubrange((i + sizeOffset)..<(i + sizeOffset + 4), with: [16, 0, 0, 0])
                }
                i += 1
            }
        }
        patch(signature: [0x50, 0x4B, 0x03, 0x04], sizeOffset: 22, nameOffset: 30)
        patch(signature: [0x50, 0x4B, 0x01, 0x02], sizeOffset: 24, nameOffset: 46)
        try Data(bytes).write(to: url)
        do {
            _ = try KerasArchive.read(url)
            XCTFail("an archive whose member inflates past its declared size was accepted")
        } catch let KerasConversionError.invalidArchive(_, _, problem, _, _) {
            print("bomb refused: \(problem)")
            XCTAssertTrue(problem.contains("declared size") || problem.contains("CRC") || problem.contains("nconsistent"), problem)
        }
    }

    func testWeightsThatAreNotHDF5() throws {
        let url = try makeZip("nothdf5.keras", [("config.json", Array("{}".utf8)), ("model.weights.h5", Array("hello".utf8))])
        expectInvalidArchive(url, member: "model.weights.h5", mentioning: ["not an HDF5 file"])
        // MARK: errors (issue 13): the HDF5Error is kept as a value, not pasted into `problem`.
        do {
            _ = try KerasConverter().convert(modelAt: url)
            XCTFail("accepted")
        } catch let e as KerasConversionError {
            guard case let .invalidArchive(_, _, problem, _, cause) = e, let h = cause?.error as? HDF5Error else {
                return XCTFail("expected invalidArchive caused by an HDF5Error, got \(e)")
            }
            XCTAssertEqual(h.kind, .notHDF5)
            XCTAssertFalse(problem.contains("HDF5 error"), problem)
            XCTAssertTrue(e.diagnosticCauses.first is HDF5Error, "\(e.diagnosticCauses)")
            let text = DiagnosticRenderer.render(e)
            XCTAssertTrue(text.contains("\n  caused by: HDF5 error (not an HDF5 file)"), text)
        }
    }

    /// The corpus' Keras 3 `.weights.h5` (a user's save_weights, architecture in code only):
    /// refused with the typed error saying no architecture is stored.
    func testKeras3WeightsOnlyCorpusFileWithoutArchitecture() throws {
        let url = try KerasTestPaths.sharedFile("corpus/keras/jenish_keras3_weights_only.weights.h5")
        do {
            _ = try KerasConverter().convert(modelAt: url)
            XCTFail("converted without an architecture")
        } catch let KerasConversionError.weightsOnlyWithoutArchitecture(file, names) {
            XCTAssertEqual(file, url.path)
            XCTAssertEqual(names, ["dense", "dense_1", "dense_2"])
            let message = "\(KerasConversionError.weightsOnlyWithoutArchitecture(file: file, layerNames: names))"
            XCTAssertTrue(message.contains("holds no architecture"))
            XCTAssertTrue(message.contains("--config"))
        }
    }
}

/// Masks passed to attention calls would change Keras' result: they are refused, never ignored.
final class AttentionMaskRefusalTests: XCTestCase {
    static func tensor(_ layer: String, _ shape: [Int]) -> String {
        "{\"class_name\": \"__keras_tensor__\", \"config\": {\"shape\": [null, \(shape.map(String.init).joined(separator: ", "))], \"dtype\": \"float32\", \"keras_history\": [\"\(layer)\", 0, 0]}}"
    }

    func model(kwargs: String) -> String {
        """
        {"class_name": "Functional", "config": {"name": "m", "layers": [
          {"class_name": "InputLayer", "name": "q", "config": {"name": "q", "batch_shape": [null, 3, 4]}, "inbound_nodes": []},
          {"class_name": "InputLayer", "name": "v", "config": {"name": "v", "batch_shape": [null, 5, 4]}, "inbound_nodes": []},
          {"class_name": "Attention", "name": "att", "config": {"name": "att", "use_scale": false, "score_mode": "dot"},
           "inbound_nodes": [{"args": [[\(Self.tensor("q", [3, 4])), \(Self.tensor("v", [5, 4]))]], "kwargs": \(kwargs)}]}],
          "input_layers": [["q", 0, 0], ["v", 0, 0]], "output_layers": [["att", 0, 0]]}}
        """
    }

    func testMaskTensorIsRefused() throws {
        let json = model(kwargs: "{\"mask\": [null, \(Self.tensor("v", [5, 4]))]}")
        let file = TinyKeras(config: json, version: "3.15.1").file
        do {
            _ = try KerasConverter().convert(file: file)
            XCTFail("an Attention call with a mask was converted")
        } catch let KerasConversionError.unsupportedConfiguration(_, layer, cls, message, _) {
            XCTAssertEqual(layer, "att"); XCTAssertEqual(cls, "Attention")
            XCTAssertTrue(message.contains("'mask'"), message)
        }
    }

    func testCausalFlagIsRead() throws {
        let plain = try KerasConverter().convert(file: TinyKeras(config: model(kwargs: "{}"), version: "3.15.1").file)
        let causal = try KerasConverter().convert(file: TinyKeras(config: model(kwargs: "{\"use_causal_mask\": true}"), version: "3.15.1").file)
        XCTAssertFalse(plain.nodes.contains { $0.name.hasSuffix("__causal_mask") })
        XCTAssertNotNil(causal.nodes.first { $0.name == "att__causal_mask" })
        // The bias the mask adds: −1e9 strictly above the diagonal, 0 elsewhere.
        var g = causal
        g.outputs = ["att__causal_bias"]
        g.description.outputs = [FeatureDescription(name: "att__causal_bias")]
        let bias = try Model(graph: g).prediction(from: ["q": try NDArray(shape: [1, 3, 4], scalars: Array(repeating: 0, count: 12)),
                                                         "v": try NDArray(shape: [1, 5, 4], scalars: Array(repeating: 0, count: 20))])["att__causal_bias"]
        let b = try XCTUnwrap(bias)
        XCTAssertEqual(b.shape, [3, 5])
        for r in 0..<3 { for c in 0..<5 { XCTAssertEqual(b.scalars[r * 5 + c], c > r ? -1e9 : 0, "row \(r) column \(c)") } }
    }
}
