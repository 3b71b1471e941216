import MLGraph
import MLPasses
import TestSupport
import XCTest

/// The weight passes as `GraphPass` units: `fold_batchnorm_statistics`, `fp16`,
/// `quantize_linear`, `quantize_kmeans` — each applies where it should (exact encoding) and
/// reports no change, leaving the graph `==`, where it should not.
final class WeightPassTests: XCTestCase {
    /// x [1, 8] → dense 8→4 → d → BN (ε 0.001) → y.
    static func denseBN() throws -> Graph {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 8]))], outputs: ["y"], nodes: [
            Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 4)), inputs: ["x"], outputs: ["d"],
                 weights: ["weight": floatConstant([4, 8], (0..<32).map { Float($0 % 7) * 0.25 - 0.75 + Float($0 / 8) })]),
            Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: 1, epsilon: 0.001)), inputs: ["d"], outputs: ["y"],
                 weights: ["mean": floatConstant([4], [3, -1, 0, 2]), "variance": floatConstant([4], [4, 1, 0.25, 9]),
                           "gamma": floatConstant([4], [2, 0.5, 1, 1]), "beta": floatConstant([4], [1, 0, -1, 0.5])]),
        ])
        try g.inferShapes()
        return g
    }

    /// Every weight selected, even where compression does not save bytes (tiny tensors).
    static var everyWeight: QuantizationOptions {
        var o = QuantizationOptions()
        o.skipWhenNotSmaller = false
        return o
    }

    /// Nothing selected: every tensor is below `minWeights`.
    static var nothing: QuantizationOptions {
        var o = QuantizationOptions()
        o.minWeights = 1_000
        o.skipOpTypes = ["batchNorm"]
        return o
    }

    static var noWeights: Graph {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 8]))], outputs: ["y"],
                      nodes: [Node(name: "relu", op: .activation(.relu), inputs: ["x"], outputs: ["y"])])
        try? g.inferShapes()
        return g
    }

    // MARK: fold_batchnorm_statistics

    func testFoldBatchNormStatistics() throws {
        var g = try Self.denseBN()
        let pass = FoldBatchNormStatistics()
        XCTAssertEqual(pass.name, "fold_batchnorm_statistics")
        XCTAssertTrue(pass.apply(to: &g))
        XCTAssertEqual(pass.lastFoldedCount, 1)
        XCTAssertEqual(g.nodes.count, 2)
        let w = g.nodes[1].weights
        XCTAssertEqual(w["mean"]?.floats(), [0, 0, 0, 0])
        XCTAssertEqual(w["variance"]?.floats(), [Float](repeating: 1 - 0.001, count: 4))
        let gamma = try XCTUnwrap(w["gamma"]?.floats()), beta = try XCTUnwrap(w["beta"]?.floats())
        let expectedGamma: [Float] = [2 / Float(4.001).squareRoot(), 0.5 / Float(1.001).squareRoot(),
                                      1 / Float(0.251).squareRoot(), 1 / Float(9.001).squareRoot()]
        XCTAssertEqual(gamma, expectedGamma)
        XCTAssertEqual(beta, [1 - expectedGamma[0] * 3, 0 - expectedGamma[1] * -1, -1 - expectedGamma[2] * 0, 0.5 - expectedGamma[3] * 2])
        XCTAssertEqual(g.nodes[0], try Self.denseBN().nodes[0], "the dense layer is untouched")
        XCTAssertNoThrow(try g.verify())
    }

    func testFoldBatchNormStatisticsLeavesUnselectedBatchNorms() throws {
        let original = try Self.denseBN()
        var g = original
        var skipBN = QuantizationOptions()
        skipBN.skipOpTypes = ["batchNorm"]
        let pass = FoldBatchNormStatistics(options: skipBN)
        XCTAssertFalse(pass.apply(to: &g))
        XCTAssertEqual(pass.lastFoldedCount, 0)
        XCTAssertEqual(g, original)
    }

    /// The quantizer runs the fold through `PassPipeline`, with the same note as before.
    func testQuantizerFoldsThroughThePipelineWithTheSameNote() throws {
        let (q, r) = try WeightQuantizer(mode: .fp16, options: Self.everyWeight).quantize(try Self.denseBN())
        XCTAssertEqual(r.notes, ["1 batch norm(s): statistics folded into scale and shift (mean 0, variance 1 − ε) before compressing, as coremltools does"])
        XCTAssertEqual(q.nodes[1].weights["mean"]?.floats(), [0, 0, 0, 0])
        XCTAssertEqual(q.tensorTypes, try Self.denseBN().tensorTypes)
    }

    // MARK: fp16

    func testFloat16Pass() throws {
        let original = try Self.denseBN()
        var g = original
        let pass = try Float16Pass(options: Self.everyWeight)
        XCTAssertEqual(pass.name, "fp16")
        XCTAssertNil(pass.lastReport)
        XCTAssertTrue(try pass.apply(to: &g))
        XCTAssertEqual(g.nodes.count, 2)
        XCTAssertEqual(g.nodes[0].weights["weight"]?.encoding, .float16)
        XCTAssertEqual(g.nodes[0].weights["weight"]?.floats(), original.nodes[0].weights["weight"]?.floats().map { Float(Float16($0)) })
        for role in ["gamma", "beta", "mean", "variance"] { XCTAssertEqual(g.nodes[1].weights[role]?.encoding, .float16, role) }
        let report = try XCTUnwrap(pass.lastReport)
        XCTAssertEqual(report.entries.count, 5)
        XCTAssertEqual(report.mode, .fp16)
        // The same as the quantizer's public API.
        let (q, r) = try WeightQuantizer(mode: .fp16, options: Self.everyWeight).quantize(original)
        XCTAssertEqual(q, g)
        XCTAssertEqual(r.entries.map(\.weight), report.entries.map(\.weight))
    }

    func testFloat16PassWithNothingSelected() throws {
        for (original, options) in [(try Self.denseBN(), Self.nothing), (Self.noWeights, Self.everyWeight)] {
            var g = original
            let pass = try Float16Pass(options: options)
            XCTAssertFalse(try pass.apply(to: &g))
            XCTAssertEqual(g, original)
            XCTAssertEqual(pass.lastReport?.entries.count, 0)
        }
    }

    // MARK: quantize_linear

    func testQuantizeLinearPass() throws {
        var g = try Self.denseBN()
        var options = Self.everyWeight
        options.skipOpTypes = ["batchNorm"]
        let pass = try QuantizeLinearPass(bits: 4, options: options)
        XCTAssertEqual(pass.name, "quantize_linear")
        XCTAssertTrue(try pass.apply(to: &g))
        guard case let .linear(q)? = g.nodes[0].weights["weight"]?.encoding else {
            return XCTFail("weight is \(String(describing: g.nodes[0].weights["weight"]?.encoding))")
        }
        XCTAssertEqual(q.bits, 4)
        XCTAssertEqual(q.axis, 0)
        XCTAssertEqual(q.scale.count, 4, "per output channel")
        XCTAssertEqual(g.nodes[0].weights["weight"]?.storage.count, 16, "32 values × 4 bits")
        XCTAssertEqual(g.nodes[1], try Self.denseBN().nodes[1], "the skipped batch norm is untouched (not folded)")
        XCTAssertEqual(pass.lastReport?.entries.map(\.layer), ["fc"])
        // Symmetric is 8-bit only.
        XCTAssertThrowsError(try QuantizeLinearPass(bits: 4, symmetric: true))
        var s = try Self.denseBN()
        XCTAssertTrue(try QuantizeLinearPass(bits: 8, symmetric: true, options: options).apply(to: &s))
        guard case let .linear(sq)? = s.nodes[0].weights["weight"]?.encoding else { return XCTFail("not linear") }
        XCTAssertEqual(sq.bits, 8)
    }

    func testQuantizeLinearPassWithNothingSelected() throws {
        for (original, options) in [(try Self.denseBN(), Self.nothing), (Self.noWeights, Self.everyWeight)] {
            var g = original
            XCTAssertFalse(try QuantizeLinearPass(bits: 4, options: options).apply(to: &g))
            XCTAssertEqual(g, original)
        }
    }

    // MARK: quantize_kmeans

    func testQuantizeKMeansPass() throws {
        var g = try Self.denseBN()
        var options = Self.everyWeight
        options.skipOpTypes = ["batchNorm"]
        let pass = try QuantizeKMeansPass(bits: 2, options: options)
        XCTAssertEqual(pass.name, "quantize_kmeans")
        XCTAssertTrue(try pass.apply(to: &g))
        guard case let .lookupTable(q)? = g.nodes[0].weights["weight"]?.encoding else {
            return XCTFail("weight is \(String(describing: g.nodes[0].weights["weight"]?.encoding))")
        }
        XCTAssertEqual(q.bits, 2)
        XCTAssertEqual(q.table.count, 4)
        XCTAssertEqual(q.table, q.table.sorted())
        XCTAssertEqual(g.nodes[0].weights["weight"]?.storage.count, 8, "32 values × 2 bits")
        XCTAssertTrue(g.nodes[0].weights["weight"]?.floats().allSatisfy { q.table.contains($0) } ?? false)
        XCTAssertEqual(pass.lastReport?.entries.first?.bits, 2)
        XCTAssertThrowsError(try QuantizeKMeansPass(bits: 9)) { error in
            XCTAssertEqual(error as? QuantizationError, .invalidBits(mode: "k-means", bits: 9))
        }
    }

    func testQuantizeKMeansPassWithNothingSelected() throws {
        for (original, options) in [(try Self.denseBN(), Self.nothing), (Self.noWeights, Self.everyWeight)] {
            var g = original
            XCTAssertFalse(try QuantizeKMeansPass(bits: 2, options: options).apply(to: &g))
            XCTAssertEqual(g, original)
        }
    }

    /// Weight passes compose in a `PassPipeline` with the structural ones and can be disabled.
    func testWeightPassInAPipeline() throws {
        let pipeline = try PassPipeline([FusePadIntoConv(), try QuantizeKMeansPass(bits: 2, options: Self.everyWeight)])
        var g = try Self.denseBN()
        XCTAssertEqual(try pipeline.run(on: &g), ["quantize_kmeans"])
        var h = try Self.denseBN()
        XCTAssertEqual(try pipeline.run(on: &h, disabling: ["quantize_kmeans"]), [])
        XCTAssertEqual(h, try Self.denseBN())
    }
}
