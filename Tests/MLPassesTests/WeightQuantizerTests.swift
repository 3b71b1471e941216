import MLGraph
import MLPasses
import MLRuntime
import TestSupport
import XCTest

/// The graph pass: encodings, sizes, SQNR ordering, selection options, compressed inputs, the
/// report, and end-to-end accuracy with `MLRuntime.Model`.
final class WeightQuantizerTests: XCTestCase {
    /// x [1, 8, 8, 3] → conv 3×3 (16) → BN → relu → conv 3×3 (32, relu) → global avg pool → dense 10
    /// → "y" [1, 10]; optional deconv branch is not needed: deconv axes are covered separately.
    static func convNet(seed: UInt64 = 1) -> Graph {
        func r(_ shape: [Int], _ s: UInt64, _ range: ClosedRange<Float> = -0.5 ... 0.5) -> ConstantTensor {
            randomConstant(shape, seed: seed &* 100 &+ s, in: range)
        }
        var g = Graph(
            inputs: [ValueInfo(name: "x", type: TensorType([1, 8, 8, 3]))],
            outputs: ["y"],
            nodes: [
                Node(name: "conv1", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 16)),
                     inputs: ["x"], outputs: ["c1"], weights: ["weight": r([16, 3, 3, 3], 1), "bias": r([16], 2)]),
                Node(name: "bn1", op: .batchNorm(BatchNormAttributes(axis: 3, epsilon: 1e-3)), inputs: ["c1"], outputs: ["b1"],
                     weights: ["gamma": r([16], 3, 0.5 ... 1.5), "beta": r([16], 4), "mean": r([16], 5),
                               "variance": r([16], 6, 0.5 ... 1.5)]),
                Node(name: "relu1", op: .activation(.relu), inputs: ["b1"], outputs: ["a1"]),
                Node(name: "conv2", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 32,
                                                                 activation: .relu)),
                     inputs: ["a1"], outputs: ["c2"], weights: ["weight": r([32, 16, 3, 3], 7, -0.2 ... 0.2), "bias": r([32], 8)]),
                Node(name: "gap", op: .globalPool2d(kind: .average, keepDims: false), inputs: ["c2"], outputs: ["p"]),
                Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 10)), inputs: ["p"], outputs: ["y"],
                     weights: ["weight": r([10, 32], 9), "bias": r([10], 10)]),
            ])
        try! g.inferShapes()
        return g
    }

    /// Every selected tensor compressed, even where the compressed form is larger (small test net).
    static let everyWeight: QuantizationOptions = {
        var o = QuantizationOptions()
        o.skipWhenNotSmaller = false
        return o
    }()

    /// Default options leave tensors whose compressed form would not be smaller (a 16-value bias
    /// needs a 1 KB table under 8-bit k-means) — and still compress the large ones.
    func testTensorsThatWouldGrowAreSkipped() throws {
        let (q, r) = try WeightQuantizer(mode: .kmeans(bits: 8)).quantize(Self.convNet())
        XCTAssertEqual(r.entry(layer: "conv2", weight: "weight")?.bits, 8)
        XCTAssertTrue(r.skipped.contains { $0.layer == "conv1" && $0.weight == "bias" && $0.reason == .noSaving }, "\(r.skipped)")
        XCTAssertEqual(q.nodes.first { $0.name == "conv1" }?.weights["bias"]?.encoding, .float32)
        XCTAssertLessThan(r.totalBytesAfter, r.totalBytesBefore)
        // 1-bit linear on a 16-channel bias: 2 bytes of codes + 8 bytes of scale/bias < 64 bytes: compressed.
        let (_, lin) = try WeightQuantizer(mode: .linear(bits: 1)).quantize(Self.convNet())
        XCTAssertNotNil(lin.entry(layer: "conv1", weight: "bias"))
    }

    /// Batch-norm statistics are folded (gamma' = gamma/√(var+ε), beta' = beta − gamma'·mean, mean 0,
    /// variance 1 − ε) before compressing: the same outputs, and a variance beyond the fp16 range
    /// (the real style network has 1.4·10⁵) no longer fails fp16.
    func testBatchNormStatisticsAreFoldedFirst() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 1, 1, 2]))], outputs: ["y"], nodes: [
            Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: 3, epsilon: 0.001)), inputs: ["x"], outputs: ["y"],
                 weights: ["mean": floatConstant([2], [3, -1]), "variance": floatConstant([2], [141_755.75, 4]),
                           "gamma": floatConstant([2], [2, 0.5]), "beta": floatConstant([2], [1, 0])]),
        ])
        try g.inferShapes()
        let (q, r) = try WeightQuantizer(mode: .fp16, options: Self.everyWeight).quantize(g)
        XCTAssertTrue(r.notes.contains { $0.contains("folded") }, "\(r.notes)")
        let w = q.nodes[0].weights
        XCTAssertEqual(w["mean"]?.floats(), [0, 0])
        XCTAssertEqual(w["variance"]?.floats(), [Float(Float16(0.999)), Float(Float16(0.999))])  // stored as fp16
        let gamma = try XCTUnwrap(w["gamma"]?.floats()), beta = try XCTUnwrap(w["beta"]?.floats())
        XCTAssertEqual(gamma[0], 2 / Float(141_755.75 + 0.001).squareRoot(), accuracy: 1e-5)
        XCTAssertEqual(gamma[1], 0.5 / Float(4.001).squareRoot(), accuracy: 1e-3)
        XCTAssertEqual(beta[0], 1 - gamma[0] * 3, accuracy: 1e-3)  // fp16 spacing near 1 is 1/1024
        XCTAssertEqual(beta[1], 0 + gamma[1], accuracy: 1e-3)
        XCTAssertEqual(w["gamma"]?.encoding, .float16)
    }

    static let allModes: [QuantizationMode] = [.fp16, .linearSymmetric]
        + [8, 4, 2, 1].map { QuantizationMode.linear(bits: $0) } + [8, 4, 2, 1].map { QuantizationMode.kmeans(bits: $0) }

    func testEncodingsAndSizesInEveryMode() throws {
        let g = Self.convNet()
        for mode in Self.allModes {
            let (q, report) = try WeightQuantizer(mode: mode, options: Self.everyWeight).quantize(g)
            try q.verify()
            XCTAssertEqual(report.entries.count, 10, "\(mode)")  // conv1 2 + bn1 4 + conv2 2 + fc 2: every weight by default
            XCTAssertTrue(report.skipped.isEmpty, "\(mode)")
            for (node, orig) in zip(q.nodes, g.nodes) {
                for (role, t) in node.weights {
                    let o = orig.weights[role]!
                    XCTAssertEqual(t.shape, o.shape)
                    let n = t.elementCount
                    switch (mode, t.encoding) {
                    case (.fp16, .float16): XCTAssertEqual(t.encodedByteCount, 2 * n)
                    case let (.linear(b), .linear(p)):
                        XCTAssertEqual(p.bits, b)
                        XCTAssertEqual(p.scale.count, t.shape.count == 1 ? 1 : t.shape[0], "\(node.name).\(role)")
                        XCTAssertEqual(t.encodedByteCount, (n * b + 7) / 8)
                    case let (.linearSymmetric, .linear(p)): XCTAssertEqual(p.bits, 8)
                    case let (.kmeans(b), .lookupTable(p)):
                        XCTAssertEqual(p.bits, b); XCTAssertEqual(p.table.count, 1 << b)
                        XCTAssertEqual(p.table, p.table.sorted())
                        XCTAssertEqual(t.encodedByteCount, (n * b + 7) / 8)
                    default: XCTFail("\(mode): \(node.name).\(role) encoded as \(t.encoding)")
                    }
                }
            }
            // The large weight shrinks by 32/bits in its values; parameters add 4 bytes each.
            let e = report.entry(layer: "conv2", weight: "weight")!
            XCTAssertEqual(e.count, 4608)
            XCTAssertEqual(e.bytesBefore, 4608 * 4)
            let params: Int
            switch mode {
            case .fp16: params = 0
            case .linear, .linearSymmetric: params = 2 * 32 * 4
            case let .kmeans(b): params = (1 << b) * 4
            }
            XCTAssertEqual(e.bytesAfter, 4608 * mode.bits / 8 + params, "\(mode)")
            XCTAssertEqual(report.totalBytesBefore, g.parameterCount * 4)
            XCTAssertLessThan(report.totalBytesAfter, report.totalBytesBefore)
        }
    }

    /// Fewer bits, lower SQNR, per tensor and overall; 8-bit beats fp16? No: fp16 (11-bit mantissa)
    /// is best, 8-bit k-means beats 8-bit linear.
    func testSQNROrdering() throws {
        let g = Self.convNet()
        func report(_ m: QuantizationMode) throws -> QuantizationReport { try WeightQuantizer(mode: m, options: Self.everyWeight).quantize(g).1 }
        for family in [{ QuantizationMode.linear(bits: $0) }, { QuantizationMode.kmeans(bits: $0) }] as [(Int) -> QuantizationMode] {
            let r = try [8, 4, 2, 1].map { try report(family($0)) }
            for layer in ["conv1", "conv2", "fc"] {
                let s = r.map { $0.entry(layer: layer, weight: "weight")!.sqnr }
                XCTAssertGreaterThan(s[0], s[1], "\(layer) \(s)"); XCTAssertGreaterThan(s[1], s[2], "\(layer) \(s)")
                XCTAssertGreaterThan(s[2], s[3], "\(layer) \(s)")
            }
            XCTAssertGreaterThan(r[0].overallSQNR, 40)
        }
        let fp16 = try report(.fp16), k8 = try report(.kmeans(bits: 8)), l8 = try report(.linear(bits: 8))
        XCTAssertGreaterThan(fp16.overallSQNR, k8.overallSQNR)
        XCTAssertGreaterThan(k8.entry(layer: "conv2", weight: "weight")!.sqnr, l8.entry(layer: "conv2", weight: "weight")!.sqnr)
        // 1-D tensors with ≤ 16 values are exact with a 16-entry LUT.
        XCTAssertEqual(try report(.kmeans(bits: 4)).entry(layer: "bn1", weight: "gamma")!.sqnr, .infinity)
    }

    /// Runs float and quantized graphs on the CPU runtime and compares outputs with coremltools'
    /// SNR: 8-bit k-means > 40 dB; ordering 8 > 4 > 2 bits.
    func testRuntimeAccuracy() throws {
        let g = Self.convNet(seed: 3)
        let float = try Model(graph: g)
        var inputs: [[String: NDArray]] = []
        for s in 0..<4 {
            inputs.append(["x": try NDArray(shape: [1, 8, 8, 3], scalars: randomFloats(count: 192, seed: 900 + UInt64(s)))])
        }
        let reference = try inputs.map { try float.prediction(from: $0)["y"]!.scalars }
        func snr(_ mode: QuantizationMode) throws -> Double {
            let (q, _) = try WeightQuantizer(mode: mode, options: Self.everyWeight).quantize(g)
            let m = try Model(graph: q)
            var all: [Double] = []
            for (x, ref) in zip(inputs, reference) {
                all.append(try compareOutputs(reference: ref, quantized: m.prediction(from: x)["y"]!.scalars).snr)
            }
            return all.reduce(0, +) / Double(all.count)
        }
        let k8 = try snr(.kmeans(bits: 8)), k4 = try snr(.kmeans(bits: 4)), k2 = try snr(.kmeans(bits: 2))
        XCTAssertGreaterThan(k8, 40)
        XCTAssertGreaterThan(k8, k4); XCTAssertGreaterThan(k4, k2)
        XCTAssertGreaterThan(try snr(.fp16), 55)
        XCTAssertGreaterThan(try snr(.linear(bits: 8)), 35)
        XCTAssertGreaterThan(try snr(.linearSymmetric), 35)
    }

    func testSelectionOptions() throws {
        let g = Self.convNet()
        var o = QuantizationOptions(minWeights: 100, skipLayers: ["conv1"], skipOpTypes: ["batchNorm"])
        var (q, r) = try WeightQuantizer(mode: .linear(bits: 8), options: o).quantize(g)
        XCTAssertEqual(r.entries.map { "\($0.layer).\($0.weight)" }, ["conv2.weight", "fc.weight"])
        XCTAssertEqual(q.nodes[0].weights["weight"]!.encoding, .float32)
        XCTAssertEqual(Set(r.skipped.map(\.reason)), [.skippedLayer, .skippedOpType, .belowMinWeights])
        XCTAssertEqual(r.skipped.first { $0.layer == "fc" && $0.weight == "bias" }?.reason, .belowMinWeights)

        // Roles: only dense weights.
        o = QuantizationOptions(rolesByOp: [.dense: ["weight"]], otherOpRoles: [])
        (q, r) = try WeightQuantizer(mode: .kmeans(bits: 2), options: o).quantize(g)
        XCTAssertEqual(r.entries.map { "\($0.layer).\($0.weight)" }, ["fc.weight"])
        XCTAssertEqual(r.skipped.filter { $0.reason == .roleNotSelected }.count, 9)

        // fp16: a conv bias follows its weight even below minWeights (Core ML needs both fp16).
        (q, r) = try WeightQuantizer(mode: .fp16, options: QuantizationOptions(minWeights: 1000)).quantize(g)
        XCTAssertEqual(r.entries.map { "\($0.layer).\($0.weight)" }, ["conv2.bias", "conv2.weight"])
        XCTAssertEqual(q.nodes[3].weights["bias"]!.encoding, .float16)
        XCTAssertEqual(r.skipped.first { $0.layer == "conv1" && $0.weight == "bias" }?.reason, .belowMinWeights)
        XCTAssertEqual(q.nodes[0].weights["bias"]!.encoding, .float32)
        try q.verify()

        XCTAssertThrowsError(try WeightQuantizer(mode: .linear(bits: 0)))
        XCTAssertThrowsError(try WeightQuantizer(mode: .kmeans(bits: 9))) {
            XCTAssertEqual($0 as? QuantizationError, .invalidBits(mode: "k-means", bits: 9))
        }
    }

    /// Custom layers are skipped with a note; deconv weights are per output channel on axis 1;
    /// prelu alpha is per tensor.
    func testCustomDeconvAndPReLU() throws {
        let g = Graph(
            inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 4, 2]))],
            outputs: ["z"],
            nodes: [
                Node(name: "up", op: .deconv2d(Deconv2DAttributes(kernel: [2, 2], strides: [2, 2], padding: .valid, outputChannels: 6)),
                     inputs: ["x"], outputs: ["u"], weights: ["weight": randomConstant([2, 6, 2, 2], seed: 1)]),
                Node(name: "act", op: .prelu, inputs: ["u"], outputs: ["v"], weights: ["alpha": randomConstant([1, 1, 6], seed: 2, in: 0 ... 0.3)]),
                Node(name: "mine", op: .custom(CustomLayerAttributes(className: "MyLayer", outputShapes: [[1, 8, 8, 6]])),
                     inputs: ["v"], outputs: ["z"], weights: ["w0": randomConstant([6], seed: 3)]),
            ])
        let (q, r) = try WeightQuantizer(mode: .linear(bits: 4), options: Self.everyWeight).quantize(g)
        guard case let .linear(p) = q.nodes[0].weights["weight"]!.encoding else { return XCTFail() }
        XCTAssertEqual(p.axis, 1); XCTAssertEqual(p.scale.count, 6)
        guard case let .linear(a) = q.nodes[1].weights["alpha"]!.encoding else { return XCTFail() }
        XCTAssertEqual(a.scale.count, 1)
        XCTAssertEqual(q.nodes[2].weights["w0"]!.encoding, .float32)
        XCTAssertEqual(r.skipped.map(\.reason), [.customLayer])
        XCTAssertTrue(r.notes.first?.contains("custom layer 'mine' (MyLayer)") ?? false, "\(r.notes)")
        XCTAssertTrue(r.renderTable().contains("note: custom layer"))
    }

    /// Already-compressed inputs are dequantized first, never crash, and re-encode as asked.
    func testCompressedInputs() throws {
        let g = Self.convNet()
        let (fp16, _) = try WeightQuantizer(mode: .fp16, options: Self.everyWeight).quantize(g)
        let (lut, _) = try WeightQuantizer(mode: .kmeans(bits: 4), options: Self.everyWeight).quantize(g)
        let (lin, _) = try WeightQuantizer(mode: .linear(bits: 3), options: Self.everyWeight).quantize(g)
        for source in [fp16, lut, lin] {
            for mode in [QuantizationMode.fp16, .linear(bits: 8), .linearSymmetric, .kmeans(bits: 2)] {
                let (q, r) = try WeightQuantizer(mode: mode, options: Self.everyWeight).quantize(source)
                try q.verify()
                XCTAssertEqual(r.entries.count, 10)
                // (Batch-norm statistics are folded into fresh fp32 scale/shift before compressing.)
                XCTAssertFalse(r.entries.contains { $0.sourceEncoding == "fp32" && $0.layer != "bn1" }, "\(r.entries)")
            }
        }
        // k-means on a 4-bit LUT input with 16 clusters or more is exact.
        let (again, r) = try WeightQuantizer(mode: .kmeans(bits: 4), options: Self.everyWeight).quantize(lut)
        XCTAssertEqual(r.overallSQNR, .infinity)
        XCTAssertEqual(again.nodes[3].weights["weight"]!.floats(), lut.nodes[3].weights["weight"]!.floats())
    }

    func testReportTableAndProgress() throws {
        var calls: [(Int, Int)] = []
        let (_, r) = try WeightQuantizer(mode: .kmeans(bits: 2), options: Self.everyWeight).quantize(Self.convNet()) { calls.append(($0, $1)) }
        XCTAssertEqual(calls.map(\.0), Array(1...10)); XCTAssertTrue(calls.allSatisfy { $0.1 == 10 })
        let table = r.renderTable()
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertTrue(lines[0].hasPrefix("layer"), table)
        for col in ["weight", "count", "bits", "mode", "SQNR dB"] { XCTAssertTrue(lines[0].contains(col), table) }
        XCTAssertTrue(table.contains("conv2  weight"), table)
        XCTAssertTrue(table.contains("2-bit kmeans: 10 tensors, \(Self.convNet().parameterCount) values"), table)
        XCTAssertTrue(table.contains("weights: \(r.totalBytesBefore) bytes → \(r.totalBytesAfter) bytes"), table)
        // Exact tensors print "inf".
        let (_, exact) = try WeightQuantizer(mode: .kmeans(bits: 8), options: Self.everyWeight).quantize(Self.convNet())
        XCTAssertTrue(exact.renderTable().contains(" inf "), exact.renderTable())
    }

    func testMetrics() throws {
        XCTAssertEqual(sqnr([1, 2, 3], [1, 2, 3]), .infinity)
        XCTAssertEqual(sqnr([3, 4], [3, 3]), 10 * log10(25.0), accuracy: 1e-12)
        XCTAssertEqual(sqnr([0, 0], [0, 1]), -.infinity)
        // coremltools: SNR = 10 log10(mean(q²) / (mean((fp−q)²) + 1e-7)), PSNR with max(q²).
        let c = try compareOutputs(reference: [1, 2, 3, 4], quantized: [1, 2, 3, 5])
        XCTAssertEqual(c.snr, 10 * log10((1 + 4 + 9 + 25) / 4.0 / (0.25 + 1e-7)), accuracy: 1e-9)
        XCTAssertEqual(c.psnr, 10 * log10(25 / (0.25 + 1e-7)), accuracy: 1e-9)
        XCTAssertEqual(c.maxAbsError, 1); XCTAssertEqual(c.meanAbsError, 0.25)
        XCTAssertEqual(try compareOutputs(reference: [1, 2], quantized: [1, 2]).snr, 10 * log10(2.5 / 1e-7), accuracy: 1e-9)
        XCTAssertThrowsError(try compareOutputs(reference: [1], quantized: [1, 2]))
    }
}

final class RecurrentQuantizationTests: XCTestCase {
    /// Peer-check finding: coremltools quantizes each gate separately. Per-row linear scales on
    /// the stacked matrices match it; biases stay fp32 and k-means leaves multi-gate matrices alone.
    func testRecurrentWeightsFollowCoreMLsPerGateStorage() throws {
        let a = RecurrentAttributes(kind: .lstm, units: 2)
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 4]))], outputs: ["y"], nodes: [
            Node(name: "lstm", op: .recurrent(a), inputs: ["x"], outputs: ["y"],
                 weights: ["kernel": randomConstant([8, 4], seed: 1), "recurrentKernel": randomConstant([8, 2], seed: 2),
                           "bias": randomConstant([8], seed: 3)]),
        ])
        try g.inferShapes()
        var o = QuantizationOptions(); o.skipWhenNotSmaller = false
        let (lin, r) = try WeightQuantizer(mode: .linear(bits: 8), options: o).quantize(g)
        guard case let .linear(q)? = lin.nodes[0].weights["kernel"]?.encoding else { return XCTFail("kernel not linear") }
        XCTAssertEqual(q.scale.count, 8, "one scale per row = per gate and unit")
        XCTAssertEqual(lin.nodes[0].weights["bias"]?.encoding, .float32)
        XCTAssertEqual(r.skipped.first { $0.weight == "bias" }?.reason, .roleNotSelected)
        let (km, rk) = try WeightQuantizer(mode: .kmeans(bits: 4), options: o).quantize(g)
        XCTAssertEqual(km.nodes[0].weights["kernel"]?.encoding, .float32)
        XCTAssertEqual(rk.skipped.first { $0.weight == "kernel" }?.reason, .perGateTables)
    }
}
