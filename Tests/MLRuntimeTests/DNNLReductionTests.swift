import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Differential tests of the oneDNN reduction, log-softmax and layer-norm kernels against the
/// reference kernels: random shapes (ranks 1–5, size-1 axes), random axis sets with negative
/// entries, keep_dims both ways. Each test also checks that oneDNN accepted the configurations it
/// claims to cover (a factory that always declined would otherwise pass).
final class DNNLReductionTests: XCTestCase {
    /// Compares the optimized kernel (if it accepts the node) with the reference kernel;
    /// returns whether the optimized kernel ran.
    @discardableResult
    func compare(_ node: Node, _ input: TensorType, seed: UInt64, tolerance: Float, label: String) throws -> Bool {
        let outs = try node.inferOutputTypes([input])
        let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: outs, threadCount: 2)
        guard let f = KernelRegistry.optimized[node.op.kind], let fast = try f(ctx) else { return false }
        let reference = try KernelRegistry.makeKernel(ctx, referenceOnly: true)
        let x = randomFloats(count: input.elementCount, seed: seed, in: -3 ... 3)
        let want = runKernel(reference, [x], outputCounts: [outs[0].elementCount])[0]
        let got = runKernel(fast, [x], outputCounts: [outs[0].elementCount])[0]
        var worst: Float = 0
        for (a, b) in zip(got, want) { worst = max(worst, abs(a - b) / max(1, abs(b))) }
        XCTAssertLessThanOrEqual(worst, tolerance, "\(label): worst relative error \(worst)")
        return true
    }

    func randomShape(_ g: inout SeededGenerator) -> [Int] {
        let rank = Int.random(in: 1...5, using: &g)
        return (0..<rank).map { _ in Bool.random(using: &g) && Bool.random(using: &g) ? 1 : Int.random(in: 1...9, using: &g) }
    }

    func randomAxes(_ rank: Int, _ g: inout SeededGenerator) -> [Int] {
        let picked = (0..<rank).filter { _ in Bool.random(using: &g) }
        return picked.map { Bool.random(using: &g) ? $0 - rank : $0 }.shuffled(using: &g)
    }

    func testReductionMatchesReference() throws {
        var g = SeededGenerator(seed: 42)
        var ran: [ReduceFunction: Int] = [:]
        for i in 0..<240 {
            let f = ReduceFunction.allCases[i % ReduceFunction.allCases.count]
            let shape = randomShape(&g)
            let axes = randomAxes(shape.count, &g)
            let keep = Bool.random(using: &g)
            let node = Node(name: "r\(i)", op: .reduce(ReduceAttributes(function: f, axes: axes, keepDims: keep)),
                            inputs: ["x"], outputs: ["y"])
            let tol: Float = f == .prod ? 1e-4 : 1e-5
            if try compare(node, TensorType(shape), seed: UInt64(i), tolerance: tol, label: "\(f) \(shape) axes \(axes) keep \(keep)") {
                ran[f, default: 0] += 1
            }
        }
        for f in [ReduceFunction.sum, .mean, .prod, .l1Norm, .l2Norm, .sumSquare] {
            XCTAssertGreaterThan(ran[f] ?? 0, 5, "oneDNN reduction \(f) ran on too few configurations")
        }
        XCTAssertNil(ran[.logSumExp], "log_sum_exp has no oneDNN kernel; the factory must decline")
    }

    func testLogSoftmaxMatchesReference() throws {
        var g = SeededGenerator(seed: 7)
        var ran = 0
        for i in 0..<60 {
            let shape = randomShape(&g)
            let axis = Int.random(in: -shape.count..<shape.count, using: &g)
            let node = Node(name: "ls\(i)", op: .logSoftmax(axis: axis), inputs: ["x"], outputs: ["y"])
            if try compare(node, TensorType(shape), seed: UInt64(i), tolerance: 1e-5, label: "logSoftmax \(shape) axis \(axis)") { ran += 1 }
        }
        XCTAssertGreaterThan(ran, 50)
    }

    func testLayerNormMatchesReference() throws {
        var g = SeededGenerator(seed: 11)
        var ran = 0
        for i in 0..<80 {
            var shape = randomShape(&g)
            if shape.count == 1 { shape = [2] + shape }
            let first = Int.random(in: 0..<shape.count, using: &g)
            let trailing = Array(first..<shape.count)
            let axes = Bool.random(using: &g) ? trailing.map { $0 - shape.count } : trailing
            let wshape = trailing.map { shape[$0] }
            var weights: [String: ConstantTensor] = [:]
            if Bool.random(using: &g) { weights["gamma"] = randomConstant(wshape, seed: UInt64(i), in: 0.5 ... 1.5) }
            if Bool.random(using: &g) { weights["beta"] = randomConstant(wshape, seed: UInt64(i + 1000)) }
            let node = Node(name: "ln\(i)", op: .layerNorm(LayerNormAttributes(axes: axes, epsilon: 1e-5)), inputs: ["x"], outputs: ["y"],
                            weights: weights)
            if try compare(node, TensorType(shape), seed: UInt64(i), tolerance: 1e-4,
                           label: "layerNorm \(shape) axes \(axes) \(weights.keys.sorted())") { ran += 1 }
        }
        XCTAssertGreaterThan(ran, 60)
        // Non-trailing axes are declined (the reference runs).
        let node = Node(name: "ln", op: .layerNorm(LayerNormAttributes(axes: [1])), inputs: ["x"], outputs: ["y"])
        XCTAssertFalse(try compare(node, TensorType([2, 3, 4]), seed: 1, tolerance: 0, label: "declined"))
    }
}
