// MARK: elementwise math ops — differential tests of the oneDNN unary, clip, binary kernels and
// the oneDNN mappings of the activations added with issue 9, against the reference kernels.
import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

final class DNNLElementwiseMathTests: XCTestCase {
    private var rng = SeededGenerator(seed: 0x9E11)

    private func uniform(_ lo: Float, _ hi: Float) -> Float { lo + (hi - lo) * Float(rng.next() >> 40) / Float(1 << 24) }
    private func int(_ lo: Int, _ hi: Int) -> Int { lo + Int(rng.next() % UInt64(hi - lo + 1)) }

    /// Runs the oneDNN kernel (which must accept the node unless `expectSupported` is false) and
    /// the reference on `inputs`; asserts max |Δ| ≤ tolerance·max(1, |reference|) elementwise.
    /// Returns whether the oneDNN kernel ran.
    @discardableResult
    private func check(_ node: Node, _ types: [TensorType], _ inputs: [[Float]], expectSupported: Bool = true,
                       tolerance: Float = 2e-6, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let outs = try node.inferOutputTypes(types)
        let ctx = KernelContext(node: node, inputTypes: types, outputTypes: outs, threadCount: 2)
        let factory = try XCTUnwrap(OptimizedKernels.table[node.op.kind], file: file, line: line)
        guard let fast = try factory(ctx) else {
            if expectSupported { XCTFail("\(label): oneDNN declined", file: file, line: line) }
            return false
        }
        if !expectSupported { XCTFail("\(label): expected a decline", file: file, line: line) }
        let ref = try XCTUnwrap(try KernelRegistry.makeKernel(ctx, referenceOnly: true), file: file, line: line)
        let counts = outs.map(\.elementCount)
        let want = runKernel(ref, inputs, outputCounts: counts), got = runKernel(fast, inputs, outputCounts: counts)
        for (w, g) in zip(want, got) {
            XCTAssertEqual(w.count, g.count, file: file, line: line)
            for i in 0..<w.count where !(w[i].isNaN && g[i].isNaN) && w[i] != g[i] {
                let d = abs(w[i] - g[i]) / max(1, abs(w[i]))
                if !(d <= tolerance) {
                    XCTFail("\(label): [\(i)] oneDNN \(g[i]) vs reference \(w[i]) (input \(inputs[0][min(i, inputs[0].count - 1)]))", file: file, line: line)
                    return true
                }
            }
        }
        return true
    }

    private func randomShape(maxRank: Int = 5) -> [Int] { (0..<int(1, maxRank)).map { _ in int(1, 6) } }

    func testUnaryMatchesReferenceOrDeclines() throws {
        var ran = 0
        for f in UnaryFunction.allCases {
            let positive: Set<UnaryFunction> = [.sqrt, .rsqrt, .inverse, .log, .power]
            let variants = [UnaryAttributes(f, alpha: f == .power ? 2.5 : 0.3),
                            UnaryAttributes(f, alpha: f == .power ? -1.5 : -0.2, epsilon: f.milDefaultEpsilon),
                            UnaryAttributes(f, alpha: 3, scale: 0.5, shift: 5)]
            for a in variants {
                let shape = [2] + randomShape(maxRank: 3)
                let n = shape.reduce(1, *)
                var x = (0..<n).map { _ in positive.contains(f) ? uniform(0.05, 4) : uniform(-4, 4) }
                if f == .round { for i in 0..<min(n, 6) { x[i] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5][i] } }
                if f == .exp { x[0] = 80 }  // overflow to inf in both
                let node = Node(name: "u", op: .unary(a), inputs: ["x"], outputs: ["y"])
                let supported = DNNLUnary.eltwise(a) != nil
                if try check(node, [TensorType(shape)], [x], expectSupported: supported, tolerance: 4e-6, "\(a)") { ran += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(ran, 14, "oneDNN should cover abs, sqrt, exp, square, round, log, power, inverse, rsqrt, threshold, neg")
        // Zeros: inverse and rsqrt without epsilon give +inf on both paths.
        for f: UnaryFunction in [.inverse, .rsqrt, .log] {
            try check(Node(name: "z", op: .unary(UnaryAttributes(f)), inputs: ["x"], outputs: ["y"]), [TensorType([4])], [[0, 1, 4, 0.25]], "\(f) at 0")
        }
    }

    func testClipMatchesReferenceIncludingInfiniteBounds() throws {
        for (lo, hi) in [(Float(-1), Float(1)), (0, 6), (-3, -1), (-0.5, .infinity), (-.infinity, 0.25), (2, 2)] {
            let shape = randomShape()
            var x = (0..<shape.reduce(1, *)).map { _ in uniform(-5, 5) }
            x[0] = 1e30
            try check(Node(name: "c", op: .clip(alpha: lo, beta: hi), inputs: ["x"], outputs: ["y"]), [TensorType(shape)], [x], "clip [\(lo), \(hi)]")
        }
        try check(Node(name: "c", op: .clip(alpha: 1, beta: -1), inputs: ["x"], outputs: ["y"]), [TensorType([3])], [[0, 2, -2]],
                  expectSupported: false, "empty range declines")
    }

    func testBinaryRandomBroadcastingMatchesReference() throws {
        var ran = 0
        for trial in 0..<160 {
            let f = BinaryFunction.allCases[trial % BinaryFunction.allCases.count]
            let out = randomShape()
            // Operand shapes: the full shape, or a broadcast one (size-1 axes, dropped leading axes).
            func broadcastShape() -> [Int] {
                let keep = int(0, out.count)
                return Array(out.suffix(max(keep, 1))).map { int(0, 2) == 0 ? 1 : $0 }
            }
            let pattern = int(0, 3)
            let sa = pattern == 1 ? broadcastShape() : out
            let sb = pattern == 0 ? broadcastShape() : (pattern == 1 ? out : (pattern == 2 ? out : broadcastShape()))
            let asConstant = int(0, 2) == 0
            let b = (0..<sb.reduce(1, *)).map { _ in uniform(0.25, 3) * (int(0, 1) == 0 ? -1 : 1) }
            let a = (0..<sa.reduce(1, *)).map { _ in f == .pow ? uniform(0.1, 3) : uniform(-6, 6) }
            let node = asConstant
                ? Node(name: "b", op: .binary(f), inputs: ["a"], outputs: ["y"], weights: ["y": floatConstant(sb, f == .pow ? b.map(abs) : b)])
                : Node(name: "b", op: .binary(f), inputs: ["a", "b"], outputs: ["y"])
            let types = asConstant ? [TensorType(sa)] : [TensorType(sa), TensorType(sb)]
            let inputs = asConstant ? [a] : [a, f == .pow ? b.map(abs) : b]
            guard let outShape = try? node.inferOutputTypes(types)[0].shape else { continue }
            func padded(_ s: [Int]) -> [Int] { Array(repeating: 1, count: outShape.count - s.count) + s }
            let aFull = padded(sa) == outShape, bFull = padded(sb) == outShape
            let algorithm: Set<BinaryFunction> = [.add, .sub, .mul, .realDiv]
            let expect = algorithm.contains(f) && (aFull || (f.isCommutative && bFull))
            if try check(node, types, inputs, expectSupported: expect, tolerance: 2e-6, "\(f) \(sa) ⊙ \(sb)\(asConstant ? " (constant)" : "")") {
                ran += 1
            }
        }
        XCTAssertGreaterThan(ran, 40)
    }

    /// A constant per-channel operand with C not a multiple of 16 runs on rows of C·k floats (the
    /// operand repeated; `dnnlRepeatedChannelRow`) where that row divides the tensor; the values
    /// are the reference kernel's exactly (the same one operation per element), on both paths.
    func testBinaryPerChannelConstantOnRepeatedRows() throws {
        XCTAssertEqual(dnnlRepeatedChannelRow(output: [1, 224, 224, 3], operand: [1, 1, 1, 3]), 48)
        XCTAssertEqual(dnnlRepeatedChannelRow(output: [2, 4, 4, 6], operand: [1, 1, 1, 6]), 48)
        XCTAssertEqual(dnnlRepeatedChannelRow(output: [1, 4, 5, 20], operand: [1, 1, 1, 20]), 80)
        XCTAssertEqual(dnnlRepeatedChannelRow(output: [32, 5], operand: [1, 5]), 80)
        XCTAssertNil(dnnlRepeatedChannelRow(output: [16, 5], operand: [1, 5]), "one row only: nothing to broadcast over")
        XCTAssertNil(dnnlRepeatedChannelRow(output: [1, 5, 5, 3], operand: [1, 1, 1, 3]), "75 values: no whole row of 48")
        XCTAssertNil(dnnlRepeatedChannelRow(output: [1, 8, 8, 32], operand: [1, 1, 1, 32]), "C a multiple of 16 already")
        XCTAssertNil(dnnlRepeatedChannelRow(output: [1, 8, 8, 3], operand: [1, 1, 8, 3]), "not per channel")
        XCTAssertNil(dnnlRepeatedChannelRow(output: [1, 8, 8, 3], operand: [1, 1, 1, 1]), "a scalar")
        let shapes: [[Int]] = [[1, 8, 6, 3], [1, 5, 5, 3], [2, 4, 4, 6], [1, 4, 5, 20], [32, 5], [16, 5], [3, 5]]
        for shape in shapes {
            let c = shape.last!, n = shape.reduce(1, *)
            let x = (0..<n).map { _ in uniform(-6, 6) }
            let y = (0..<c).map { _ in uniform(0.25, 3) * (int(0, 1) == 0 ? -1 : 1) }
            for f: BinaryFunction in [.add, .sub, .mul, .realDiv] {
                let yShape = Array(repeating: 1, count: shape.count - 1) + [c]
                let node = Node(name: "b", op: .binary(f), inputs: ["x"], outputs: ["z"], weights: ["y": floatConstant(yShape, y)])
                try check(node, [TensorType(shape)], [x], tolerance: 0, "\(f) \(shape) ⊙ constant \(yShape)")
            }
        }
    }

    func testBinaryRankOneAgainstRankFourAndSwappedOperands() throws {
        let x = (0..<120).map { _ in uniform(-3, 3) }, v = (0..<5).map { _ in uniform(0.5, 2) }
        for f: BinaryFunction in [.add, .sub, .mul, .realDiv] {
            try check(Node(name: "b", op: .binary(f), inputs: ["x", "v"], outputs: ["y"]), [TensorType([2, 3, 4, 5]), TensorType([5])], [x, v], "\(f) rank 4 ⊙ rank 1")
            try check(Node(name: "b", op: .binary(f), inputs: ["v", "x"], outputs: ["y"]), [TensorType([5]), TensorType([2, 3, 4, 5])], [v, x],
                      expectSupported: f.isCommutative, "\(f) rank 1 ⊙ rank 4")
            try check(Node(name: "b", op: .binary(f), inputs: ["v"], outputs: ["y"], weights: ["y": floatConstant([2, 3, 4, 5], x.map { $0 + 4 })]),
                      [TensorType([5])], [v], expectSupported: f.isCommutative, "\(f) rank 1 ⊙ constant rank 4")
        }
    }

    func testNewActivationsOnEltwiseAndFusedIntoConvolution() throws {
        let acts: [Activation] = [.mish, .hardSwish, .geluSigmoid, .logSigmoid, .parametricSoftplus(alpha: 1, beta: 1),
                                  .parametricSoftplus(alpha: 1.5, beta: 0.75), .scaledTanh(alpha: 1.7159, beta: 0.6667), .scaledTanh(alpha: 1, beta: 1)]
        for act in acts {
            let x = (0..<210).map { _ in uniform(-8, 8) }
            let single = (dnnlEltwiseChain(act)?.count ?? 2) == 1 && (dnnlEltwiseChain(act)?.first?.scale ?? 0) == 1
            try check(Node(name: "a", op: .activation(act), inputs: ["x"], outputs: ["y"]), [TensorType([2, 105])], [x],
                      expectSupported: single, tolerance: 1e-5, "activation \(act)")
            let conv = Node(name: "c", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 8, activation: act)),
                            inputs: ["x"], outputs: ["y"],
                            weights: ["weight": randomConstant([8, 4, 3, 3], in: -1 ... 1), "bias": randomConstant([8], seed: 4)])
            let cx = (0..<(1 * 5 * 6 * 4)).map { _ in uniform(-2, 2) }
            try check(conv, [TensorType([1, 5, 6, 4])], [cx], tolerance: 1e-5, "conv fused \(act)")
        }
    }
}

extension DNNLElementwiseMathTests {
    /// NaN through clip and threshold: the reference keeps NaN (as `np.clip` / `np.maximum`);
    /// oneDNN's clip_v2 maps NaN to the lower bound — the documented divergence, as for ReLU
    /// (docs/ELEMENTWISE_MATH.md); every other value agrees.
    func testNaNThroughClipAndThreshold() throws {
        let x: [Float] = [.nan, -5, 0.5, 5, .infinity, -.infinity]
        for op: Op in [.clip(alpha: -1, beta: 1), .unary(UnaryAttributes(.threshold, alpha: 0.25))] {
            let node = Node(name: "n", op: op, inputs: ["x"], outputs: ["y"])
            let types = [TensorType([6])]
            let ctx = KernelContext(node: node, inputTypes: types, outputTypes: types, threadCount: 1)
            let ref = try XCTUnwrap(try KernelRegistry.makeKernel(ctx, referenceOnly: true))
            let fast = try XCTUnwrap(try OptimizedKernels.table[op.kind]?(ctx), "oneDNN should take \(op)")
            let r = runKernel(ref, [x], outputCounts: [6])[0], f = runKernel(fast, [x], outputCounts: [6])[0]
            XCTAssertTrue(r[0].isNaN, "reference \(op): \(r)")
            XCTAssertEqual(f[0], op.kind == .clip ? -1 : 0.25, "oneDNN \(op) maps NaN to the lower bound: \(f)")
            XCTAssertEqual(Array(r.dropFirst()), Array(f.dropFirst()), "\(op)")
        }
    }
}
