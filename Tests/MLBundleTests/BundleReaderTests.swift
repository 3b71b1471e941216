import Foundation
import MLGraph
@testable import MLBundle
import XCTest

final class BundleReaderTests: XCTestCase {
    private var bytes: [UInt8] = []
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        bytes = try BundleWriter.serialize(try makeTestGraph(), producer: "mlconv test", source: "keras:model.h5")
    }

    // MARK: Not a bundle

    func testHDF5FileIsRecognised() {
        let h5 = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 200)
        expectBundleError(h5, in: dir) { e in
            guard case let .notABundle(file, looksLike, _) = e else { return false }
            return looksLike == .hdf5 && file.hasSuffix("fuzz.mlbundle") && "\(e)".contains("HDF5")
                && "\(e)".contains("`mlconv keras`") && "\(e)".contains(file)
        }
    }

    func testCoreMLProtobufIsRecognised() {
        // Model { specificationVersion: 4, description: { input { name: "x" } } , ... }
        let pb: [UInt8] = [0x08, 0x04, 0x12, 0x07, 0x0A, 0x05, 0x0A, 0x01, 0x78, 0x1A, 0x00, 0xC2, 0x03, 0x02, 0x08, 0x01]
        expectBundleError(pb, in: dir) { e in
            guard case .notABundle(_, .coreMLModel, _) = e else { return false }
            return "\(e)".contains("Core ML") && "\(e)".contains("`mlconv compile`")
        }
    }

    func testOtherFormatsAreNamed() throws {
        expectBundleError(Array("PK\u{03}\u{04}rest of a zip".utf8), in: dir) { if case .notABundle(_, .zip, _) = $0 { return true }; return false }
        expectBundleError(Array("  {\"class_name\": \"Sequential\"}".utf8), in: dir) { if case .notABundle(_, .json, _) = $0 { return true }; return false }
        expectBundleError(Array("hello world, not a model".utf8), in: dir) { e in
            guard case let .notABundle(_, .unknown, first) = e else { return false }
            return first == Array("hello world, not".utf8) && "\(e)".contains("68 65 6c 6c")
        }
        let pkg = dir.appendingPathComponent("model.mlpackage")
        try FileManager.default.createDirectory(at: pkg, withIntermediateDirectories: true)
        XCTAssertThrowsError(try BundleFile(contentsOf: pkg)) { e in
            guard case BundleError.notABundle(_, .directory, _) = e else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try BundleFile(contentsOf: dir.appendingPathComponent("missing.mlbundle"))) { e in
            guard case let BundleError.cannotOpen(file, reason) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(file.hasSuffix("missing.mlbundle") && reason.contains("No such file"), "\(e)")
        }
    }

    // MARK: Versions

    func testNewerMajorVersionIsRefusedWithUpgradeAdvice() {
        var b = bytes
        b[8] = 3  // major 3
        for verify in [true, false] {
            expectBundleError(b, in: dir, verifyChecksum: verify) { e in
                guard case let .newerVersion(_, found, supported) = e else { return false }
                return found == BundleFormatVersion(major: 3, minor: 0) && supported == BundleFormat.currentVersion
                    && "\(e)".contains("upgrade mlconv") && "\(e)".contains("re-create the bundle")
            }
        }
    }

    func testNewerMinorVersionIsRead() throws {
        var b = bytes
        b[10] = 7  // 2.7
        let bundle = try load(resealed(b), in: dir).get()
        XCTAssertEqual(bundle.formatVersion, BundleFormatVersion(major: 2, minor: 7))
        assertGraphsEqual(bundle.graph, try makeTestGraph())
    }

    func testUnknownOpInANewerMinorVersionSuggestsUpgrading() {
        let l = Layout(bytes)
        let model = String(decoding: bytes[l.model], as: UTF8.self)
            .replacingOccurrences(of: "\"op\":\"softmax\"", with: "\"op\":\"sparsemax\"")
        XCTAssertTrue(model.contains("sparsemax"))
        let b = assembleBundle(info: Array(bytes[l.info]), model: Array(model.utf8), weights: Array(bytes[l.weights]),
                               version: BundleFormatVersion(major: 2, minor: 4))
        expectBundleError(b, in: dir) { e in
            guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("model section") && reason.contains("format 2.4") && reason.contains("upgrade mlconv") && reason.contains("sparsemax")
        }
    }

    func testVersionZeroIsCorruption() {
        var b = bytes
        b[8] = 0
        expectBundleError(resealed(b), in: dir) { if case .corrupted = $0 { return true }; return false }
    }

    func testUnknownSectionsAndOptionalFlagsAreIgnored() throws {
        let l = Layout(bytes)
        var b = assembleBundle(info: Array(bytes[l.info]), model: Array(bytes[l.model]), weights: Array(bytes[l.weights]),
                               version: BundleFormatVersion(major: 2, minor: 3),
                               extraSections: [(kind: 99, bytes: Array("future stuff".utf8))])
        b[14] = 0x01  // flag bit 16: optional
        let bundle = try load(resealed(b), in: dir).get()
        assertGraphsEqual(bundle.graph, try makeTestGraph())
        b[12] = 0x01  // flag bit 0: required, unknown
        expectBundleError(resealed(b), in: dir) { e in
            guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("upgrade mlconv")
        }
    }

    // MARK: Truncation and corruption

    func testTruncationAtManyOffsetsIsReported() {
        // Every offset through the header and table, every section boundary ±2, every 5th byte.
        let l = Layout(bytes)
        var cuts = Set(0...(l.tableEnd + 8)).union(stride(from: 0, to: bytes.count, by: 5))
        for edge in [l.info.upperBound, l.model.upperBound, l.weights.lowerBound, l.weights.upperBound, bytes.count] {
            cuts.formUnion((edge - 2)...(edge + 2))
        }
        for cut in cuts.sorted() where cut < bytes.count {
            for verify in [true, false] where verify || cut % 3 == 0 {
                expectBundleError(Array(bytes[0..<cut]), in: dir, verifyChecksum: verify) { e in
                    guard case let .truncated(file, expected, found) = e else { return false }
                    return found == cut && expected > cut && "\(e)".contains(file) && "\(e)".contains("copy it again")
                }
            }
        }
    }

    func testTrailingBytesAreCorruption() {
        expectBundleError(bytes + [0], in: dir) { e in
            guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("records \(self.bytes.count) bytes")
        }
    }

    func testChecksumMismatchIsReported() {
        var b = bytes
        b[Layout(bytes).weights.lowerBound + 70] ^= 0x10
        expectBundleError(b, in: dir) { e in
            guard case let .corrupted(file, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
            return reason.contains("checksum mismatch") && "\(e)".contains(file) && "\(e)".contains("mlconv compile")
        }
    }

    func testRandomByteFlipsThrowOrLoadNeverCrash() throws {
        var rng = SplitMix64(seed: 0x5EED)
        let l = Layout(bytes)
        let original = try makeTestGraph()
        let regions: [(String, Range<Int>)] = [
            ("header", 0..<32), ("table", 32..<l.tableEnd), ("info", l.info), ("model", l.model),
            ("weights", l.weights), ("trailer", l.contentEnd..<bytes.count),
        ]
        var outcomes: [String: [String: Int]] = [:]
        // MLBUNDLE_FUZZ_ITERATIONS=100000 for a longer soak.
        let iterations = ProcessInfo.processInfo.environment["MLBUNDLE_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? 600
        for i in 0..<iterations {
            let (name, range) = regions[i % regions.count]
            var b = bytes
            let flips = Int.random(in: 1...3, using: &rng)
            for _ in 0..<flips { b[Int.random(in: range, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
            guard b != bytes else { continue }
            // With the checksum verified, every change is caught.
            switch load(b, in: dir) {
            case .success: XCTFail("\(name): a corrupted file loaded with checksum verification on")
            case .failure(let e): XCTAssert(e is BundleError, "\(e)")
            }
            // Without it: weight flips load (with the flipped bytes); anything else throws or loads.
            let result = load(b, in: dir, verifyChecksum: false)
            switch result {
            case let .success(bundle):
                outcomes[name, default: [:]]["loaded", default: 0] += 1
                XCTAssertNoThrow(try bundle.graph.verify())
                if name == "weights" {
                    XCTAssertEqual(bundle.graph.nodes.map(\.name), original.nodes.map(\.name))
                }
            case let .failure(e):
                outcomes[name, default: [:]]["threw", default: 0] += 1
                XCTAssert(e is BundleError, "\(e)")
                XCTAssertNotEqual(name, "weights", "weight bytes flipped, checksum off: should load, got \(e)")
            }
        }
        if ProcessInfo.processInfo.environment["MLBUNDLE_FUZZ_ITERATIONS"] != nil { print("fuzz outcomes (checksum off):", outcomes) }
        XCTAssertEqual(outcomes["weights"]?["threw"], nil)
        XCTAssertGreaterThan(outcomes["model"]?["threw"] ?? 0, 10)
    }

    func testWeightFlipsAreVisibleWithoutChecksum() throws {
        var b = bytes
        let l = Layout(bytes)
        b[l.weights.lowerBound] ^= 0xFF  // first byte of the conv bias (fp32 0.1)
        let bundle = try load(b, in: dir, verifyChecksum: false).get()
        XCTAssertFalse(bundle.checksumVerified)
        XCTAssertNotEqual(bundle.graph.nodes[0].weights["bias"]!.floats()[0], 0.1)
    }

    func testRandomGarbageNeverCrashes() {
        var rng = SplitMix64(seed: 42)
        for i in 0..<300 {
            let n = Int.random(in: 0...600, using: &rng)
            var b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 2 == 0 { b = Array(bytes.prefix(Int.random(in: 0...40, using: &rng))) + b }
            if i % 3 == 0, b.count >= 24 {  // plausible size field
                let size = UInt64(b.count)
                b.withUnsafeMutableBytes { $0.storeBytes(of: size.littleEndian, toByteOffset: 16, as: UInt64.self) }
            }
            for verify in [true, false] {
                if case let .failure(e) = load(b, in: dir, verifyChecksum: verify) { XCTAssert(e is BundleError, "\(e)") }
            }
        }
    }

    // MARK: Crafted contents (valid checksum, bad structure)

    private func craft(model transform: (String) -> String, weights: [UInt8]? = nil) -> [UInt8] {
        let l = Layout(bytes)
        let model = transform(String(decoding: bytes[l.model], as: UTF8.self))
        return assembleBundle(info: Array(bytes[l.info]), model: Array(model.utf8), weights: weights ?? Array(bytes[l.weights]))
    }

    /// Structure-aware fuzz: replaces numbers of the model JSON with edge values (valid JSON,
    /// valid checksum) or drop array elements, so every check behind the JSON parser runs. All
    /// must throw or load.
    func testMutatedModelNumbersNeverCrash() throws {
        var rng = SplitMix64(seed: 7)
        let l = Layout(bytes)
        let model = Array(bytes[l.model])
        // Spans of numbers (a '-' or digit run, with '.', 'e' parts) in the JSON text.
        var spans: [Range<Int>] = []
        var i = 0
        let numberChars = Set("-+.eE0123456789".utf8)
        while i < model.count {
            if model[i] == UInt8(ascii: "\"") {  // skip strings
                i += 1
                while i < model.count, model[i] != UInt8(ascii: "\"") { i += model[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
            } else if model[i] == UInt8(ascii: "-") || (48...57).contains(model[i]) {
                let start = i
                while i < model.count, numberChars.contains(model[i]) { i += 1 }
                spans.append(start..<i)
            } else { i += 1 }
        }
        XCTAssertGreaterThan(spans.count, 50)
        let edge = ["0", "-1", "1", "2", "3", "5", "64", "-64", "65", "255", "256", "2147483647", "2147483648", "16777217", "-16777217",
                    "1099511627776", "4611686018427387904", "9223372036854775807", "-9223372036854775808", "1e300", "0.5", "-0"]
        let iterations = ProcessInfo.processInfo.environment["MLBUNDLE_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? 400
        var loaded = 0
        for _ in 0..<iterations {
            var m = model
            for span in (0..<Int.random(in: 1...3, using: &rng)).map({ _ in spans.randomElement(using: &rng)! }).sorted(by: { $0.lowerBound > $1.lowerBound }) {
                guard span.upperBound <= m.count else { continue }
                if Int.random(in: 0..<4, using: &rng) == 0, span.upperBound < m.count, m[span.upperBound] == UInt8(ascii: ",") {
                    m.removeSubrange(span.lowerBound...span.upperBound)  // drop an array element
                } else {
                    m.replaceSubrange(span, with: Array(edge.randomElement(using: &rng)!.utf8))
                }
            }
            let b = assembleBundle(info: Array(bytes[l.info]), model: m, weights: Array(bytes[l.weights]))
            switch load(b, in: dir) {
            case let .success(bundle):
                loaded += 1
                XCTAssertNoThrow(try bundle.graph.verify())
                _ = bundle.weightByteCountsByEncoding
                for n in bundle.graph.nodes { for w in n.weights.values { _ = w.floats() } }
            case let .failure(e): XCTAssert(e is BundleError, "\(e)")
            }
        }
        XCTAssertGreaterThan(loaded, 0)
    }

    private func expectCorrupted(_ b: [UInt8], _ needle: String, file: StaticString = #filePath, line: UInt = #line) {
        for verify in [true, false] {
            expectBundleError(b, in: dir, verifyChecksum: verify, file: file, line: line) { e in
                guard case let .corrupted(_, own, cause) = e else { return false }; let reason = cause.map { own + ": " + $0.text } ?? own
                return reason.contains(needle)
            }
        }
    }

    func testCraftedModelsAreRejectedWithoutTrapping() {
        // Sanity: the unchanged model reassembles to a loadable file.
        XCTAssertNoThrow(try load(craft(model: { $0 }), in: dir).get())
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"kernel\":[3,3]", with: "\"kernel\":[333]") }), "kernel")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"offset\":64}", with: "\"offset\":65}") }), "aligned")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"offset\":64}", with: "\"offset\":6400000}") }), "outside")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"offset\":64}", with: "\"offset\":-64}") }), "outside")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"byteCount\":216", with: "\"byteCount\":200") }), "needs 216")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"shape\":[4,3,3,3]", with: "\"shape\":[40000,40000,3000,3]") }), "elements")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"shape\":[4,3,3,3]", with: "\"shape\":[-4,3,3,3]") }), "dimension")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"bits\":4", with: "\"bits\":4000000000000000000") }), "bits")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"shape\":[1,8,8,3]", with: "\"shape\":[1,8,8,3000000000000]") }), "dimension")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"nodes\":", with: "\"nodez\":") }), "nodes")
        expectCorrupted(craft(model: { String($0.dropLast(3)) }), "model section is not valid")
        expectCorrupted(craft(model: { m in
            var m = m
            m.replaceSubrange(m.range(of: "\"conv_out\"")!, with: "\"conv_0ut\"")  // the conv's output only
            return m
        }), "conv_0ut")
        expectCorrupted(craft(model: { $0.replacingOccurrences(of: "\"shape\":[1,10]", with: "\"shape\":[1,11]") }), "recorded as")
        expectCorrupted(craft(model: { _ in "" }), "model section")
        expectCorrupted(craft(model: { _ in "[]" }), "model section")
        expectCorrupted(craft(model: { _ in "{\"a\":" + String(repeating: "[", count: 100_000) }), "model section")
    }

    func testCraftedSectionTablesAreRejected() {
        let l = Layout(bytes)
        func patched(_ offset: Int, _ value: UInt64, _ offset2: Int? = nil, _ value2: UInt64 = 0) -> [UInt8] {
            var b = bytes
            b.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self) }
            if let offset2 { b.withUnsafeMutableBytes { $0.storeBytes(of: value2.littleEndian, toByteOffset: offset2, as: UInt64.self) } }
            return resealed(b)
        }
        let weightEntry = 32 + 24 * 2
        expectCorrupted(patched(weightEntry + 8, UInt64(l.weights.lowerBound + 8), weightEntry + 16, UInt64(l.weights.count - 8)), "64-byte aligned")
        expectCorrupted(patched(weightEntry + 16, UInt64.max), "outside")
        expectCorrupted(patched(32 + 8, 0), "outside")  // info section over the header
        expectCorrupted(patched(32 + 24 + 8, UInt64(l.info.lowerBound)), "overlap")  // model over info
        var twoInfos = bytes
        twoInfos[32 + 24] = 1  // model entry relabelled as info
        expectCorrupted(resealed(twoInfos), "two info sections")
        var noModel = bytes
        noModel[32 + 24] = 77  // model entry becomes an unknown kind
        expectCorrupted(resealed(noModel), "no model section")
        var manySections = bytes
        manySections.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(0xFFFF_FFF0).littleEndian, toByteOffset: 24, as: UInt32.self) }
        expectCorrupted(resealed(manySections), "section table")
        var badInfo = bytes
        badInfo[l.info.lowerBound] = UInt8(ascii: "[")
        expectCorrupted(resealed(badInfo), "info section")
    }
}
