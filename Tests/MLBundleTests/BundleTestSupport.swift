import Foundation
import MLGraph
@testable import MLBundle
import XCTest

/// A small classifier using constants in every encoding: fp16 conv weight, fp32 biases and
/// statistics, a 3-bit LUT batch-norm gamma, a 4-bit linear dense weight, and one constant
/// object shared by two roles.
func makeTestGraph() throws -> Graph {
    func fp16(_ values: [Float]) -> ByteStorage {
        var bytes: [UInt8] = []
        for v in values { bytes.appendLE(Float16(v).bitPattern) }
        return .copying(bytes)
    }
    let convW = try ConstantTensor(shape: [4, 3, 3, 3], encoding: .float16,
                                   storage: fp16((0..<108).map { Float($0 % 13) * 0.125 - 0.75 }))
    let convB = ConstantTensor(shape: [4], floats: [0.1, -0.2, 0.3, -0.4])
    let mean = ConstantTensor(shape: [4], floats: [0.5, 0.25, -0.5, 1])
    let variance = ConstantTensor(shape: [4], floats: [1, 2, 0.5, 4])
    let lut = LookupTableQuantization(bits: 3, table: [-1, -0.5, -0.25, 0, 0.25, 0.5, 1, 2])
    let gamma = try ConstantTensor(shape: [4], encoding: .lookupTable(lut), storage: .copying(packMSBFirst([7, 0, 3, 5], bits: 3)))
    let q = LinearQuantization(bits: 4, axis: 0, scale: (0..<10).map { 0.01 * Float($0 + 1) },
                               bias: (0..<10).map { -0.05 * Float($0) })
    let denseW = try ConstantTensor(shape: [10, 4], encoding: .linear(q),
                                    storage: .copying(packMSBFirst((0..<40).map { UInt8($0 % 16) }, bits: 4)))
    let denseB = ConstantTensor(shape: [10], floats: (0..<10).map { Float($0) / 7 })

    var description = ModelDescription()
    description.inputs = [FeatureDescription(name: "image", shortDescription: "an 8×8 RGB picture",
                                             image: ImageFeature(width: 8, height: 8, colorSpace: .rgb, scale: 1 / 255, bias: [0, 0, 0]))]
    description.outputs = [FeatureDescription(name: "probs", shortDescription: "class probabilities")]
    description.metadata.author = "mlconv tests"
    description.metadata.userDefined = ["mlconv.source": "Keras 2.15.0 (tensorflow)", "quote": "\"é/ü\""]
    description.classLabels = (0..<10).map { "class \($0)" }
    description.probabilitiesOutput = "probs"

    var g = Graph(
        inputs: [ValueInfo(name: "image", type: TensorType([1, 8, 8, 3]))],
        outputs: ["probs"],
        nodes: [
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 4, activation: .relu)),
                 inputs: ["image"], outputs: ["conv_out"], weights: ["weight": convW, "bias": convB]),
            Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: 3, epsilon: 1e-3)), inputs: ["conv_out"], outputs: ["bn_out"],
                 weights: ["mean": mean, "variance": variance, "gamma": gamma, "beta": mean]),
            Node(name: "clip", op: .activation(.clippedReLU(maxValue: .infinity, negativeSlope: 0.1, threshold: -1)),
                 inputs: ["bn_out"], outputs: ["clip_out"]),
            Node(name: "gap", op: .globalPool2d(kind: .average, keepDims: false), inputs: ["clip_out"], outputs: ["pooled"]),
            Node(name: "dense", op: .dense(DenseAttributes(outputChannels: 10)), inputs: ["pooled"], outputs: ["logits"],
                 weights: ["weight": denseW, "bias": denseB]),
            Node(name: "softmax", op: .softmax(axis: 1), inputs: ["logits"], outputs: ["probs"]),
        ],
        description: description)
    try g.inferShapes()
    return g
}

/// Structural equality of two graphs, constants compared by shape, encoding and raw bytes.
func assertGraphsEqual(_ a: Graph, _ b: Graph, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.inputs, b.inputs, file: file, line: line)
    XCTAssertEqual(a.outputs, b.outputs, file: file, line: line)
    XCTAssertEqual(a.tensorTypes, b.tensorTypes, file: file, line: line)
    XCTAssertEqual(a.description, b.description, file: file, line: line)
    XCTAssertEqual(a.nodes, b.nodes, file: file, line: line)
    XCTAssertEqual(a.nodes.count, b.nodes.count, file: file, line: line)
    for (x, y) in zip(a.nodes, b.nodes) {
        XCTAssertEqual(x.weights.keys.sorted(), y.weights.keys.sorted(), file: file, line: line)
        for (k, w) in x.weights {
            guard let v = y.weights[k] else { continue }
            XCTAssertEqual(w.shape, v.shape, "\(x.name).\(k)", file: file, line: line)
            XCTAssertEqual(w.encoding, v.encoding, "\(x.name).\(k)", file: file, line: line)
            XCTAssertEqual(Array(UnsafeRawBufferPointer(start: w.storage.baseAddress, count: w.encodedByteCount)),
                           Array(UnsafeRawBufferPointer(start: v.storage.baseAddress, count: v.encodedByteCount)),
                           "\(x.name).\(k) bytes", file: file, line: line)
        }
    }
}

/// A fresh, empty directory, removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("mlbundle-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

func directoryEntries(_ url: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
}

/// Deterministic pseudo-random numbers (SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The section layout of a serialized bundle (parsed with the module's own header reader).
struct Layout {
    var info: Range<Int>
    var model: Range<Int>
    var weights: Range<Int>
    var tableEnd: Int
    var contentEnd: Int

    init(_ bytes: [UInt8]) {
        func u64(_ o: Int) -> Int { bytes.withUnsafeBytes { Int($0.readLE(o, as: UInt64.self)) } }
        func u32(_ o: Int) -> Int { bytes.withUnsafeBytes { Int($0.readLE(o, as: UInt32.self)) } }
        let n = u32(24)
        tableEnd = 32 + 24 * n
        contentEnd = bytes.count - 8
        var r: [Int: Range<Int>] = [:]
        for i in 0..<n {
            let e = 32 + 24 * i
            r[u32(e)] = u64(e + 8)..<(u64(e + 8) + u64(e + 16))
        }
        info = r[1]!; model = r[2]!; weights = r[3]!
    }
}

/// Assembles a bundle from raw sections (header, table, sections, checksum), as the writer lays
/// them out, so tests can plant specific contents.
func assembleBundle(info: [UInt8], model: [UInt8], weights: [UInt8], version: BundleFormatVersion = BundleFormat.currentVersion,
                    extraSections: [(kind: UInt32, bytes: [UInt8])] = []) -> [UInt8] {
    let count = 3 + extraSections.count
    var offset = 32 + 24 * count
    var entries: [SectionEntry] = []
    var body: [UInt8] = []
    for (kind, bytes) in [(UInt32(1), info), (2, model)] + extraSections {
        entries.append(SectionEntry(kind: kind, offset: UInt64(offset), length: UInt64(bytes.count)))
        body += bytes; offset += bytes.count
    }
    let weightOffset = alignUp(offset, 64)
    body += [UInt8](repeating: 0, count: weightOffset - offset)
    entries.append(SectionEntry(kind: 3, offset: UInt64(weightOffset), length: UInt64(weights.count)))
    body += weights
    let header = BundleHeader(version: version, flags: 0, fileSize: UInt64(weightOffset + weights.count + 8), sections: entries)
    var out = header.serialized() + body
    out.appendLE(XXH64.hash(out))
    return out
}

/// Rewrites the checksum trailer of `bytes` to match its contents.
func resealed(_ bytes: [UInt8]) -> [UInt8] {
    var out = Array(bytes.dropLast(8))
    out.appendLE(XXH64.hash(out))
    return out
}

extension XCTestCase {
    /// Loads `bytes` from a file in `dir`; returns the result.
    func load(_ bytes: [UInt8], in dir: URL, name: String = "fuzz.mlbundle", verifyChecksum: Bool = true) -> Result<BundleFile, Error> {
        let url = dir.appendingPathComponent(name)
        do { try Data(bytes).write(to: url) } catch { XCTFail("cannot write \(url.path): \(error)"); return .failure(error) }
        return Result { try BundleFile(contentsOf: url, verifyChecksum: verifyChecksum) }
    }

    func expectBundleError(_ bytes: [UInt8], in dir: URL, verifyChecksum: Bool = true, file: StaticString = #filePath, line: UInt = #line,
                           _ check: (BundleError) -> Bool) {
        switch load(bytes, in: dir, verifyChecksum: verifyChecksum) {
        case .success: XCTFail("loaded, but an error was expected", file: file, line: line)
        case let .failure(e as BundleError): XCTAssert(check(e), "unexpected error: \(e)", file: file, line: line)
        case let .failure(e): XCTFail("not a BundleError: \(e)", file: file, line: line)
        }
    }
}
