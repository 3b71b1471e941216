import Dispatch
import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// Differential tests of the oneDNN recurrent kernels (`DNNLRNNKernel`, `DNNLRecurrentBatchedKernel`)
// against `ReferenceRecurrent` on random configurations, which path takes which configuration,
// and concurrent runs.

final class RecurrentDifferentialTests: XCTestCase {
    private static let gateActivations: [Activation] = [.sigmoid, .hardSigmoid(alpha: 0.2, beta: 0.5),
                                                        .hardSigmoid(alpha: 1.0 / 6, beta: 0.5)]
    private static let activations: [Activation] = [.tanh, .relu, .sigmoid, .identity, .softsign]

    func testRandomConfigurationsMatchReference() throws {
        var g = SeededGenerator(seed: 0x5EC)
        var counts = (primitive: 0, batched: 0)
        for i in 0..<160 {
            let kind = [RecurrentKind.simpleRNN, .lstm, .gru][i % 3]
            // Half of the cases use the defaults oneDNN's RNN primitive covers.
            let defaults = Bool.random(using: &g)
            let activation = defaults ? (kind == .simpleRNN ? [.tanh, .relu][Int.random(in: 0...1, using: &g)] : .tanh)
                : Self.activations.randomElement(using: &g)!
            let gate = defaults ? Activation.sigmoid : Self.gateActivations.randomElement(using: &g)!
            let bidirectional: BidirectionalMerge? = Bool.random(using: &g)
                ? [BidirectionalMerge.concat, .sum, .mul, .ave].randomElement(using: &g)! : nil
            let a = RecurrentAttributes(
                kind: kind, units: [1, 2, 3, 5, 8, 16, 33].randomElement(using: &g)!, activation: activation,
                recurrentActivation: gate, returnSequences: Bool.random(using: &g), returnState: Bool.random(using: &g),
                goBackwards: Int.random(in: 0..<4, using: &g) == 0, resetAfter: kind == .gru && Bool.random(using: &g),
                bidirectional: bidirectional, initialStates: Int.random(in: 0..<3, using: &g) == 0,
                hasMask: !defaults && Int.random(in: 0..<3, using: &g) == 0)
            let (n, t, d) = (Int.random(in: 1...3, using: &g), Int.random(in: 1...9, using: &g), Int.random(in: 1...12, using: &g))
            let node = recurrentNode(a, inputSize: d, bias: Int.random(in: 0..<4, using: &g) != 0, seed: UInt64(i))
            let kernel = try compare(node, batch: n, steps: t, seed: UInt64(1000 + i), label: "case \(i): \(a) n\(n) t\(t) d\(d)")
            if kernel is DNNLRNNKernel { counts.primitive += 1 } else { counts.batched += 1 }
        }
        XCTAssertGreaterThan(counts.primitive, 20)
        XCTAssertGreaterThan(counts.batched, 40)
    }

    /// Sizes of real models (QuickDraw: BiLSTM 128 on T 75), both paths.
    func testRealisticSizesMatchReference() throws {
        for gate: Activation in [.sigmoid, .hardSigmoid(alpha: 0.2, beta: 0.5)] {
            var a = RecurrentAttributes(kind: .lstm, units: 128, recurrentActivation: gate, returnSequences: true, bidirectional: .concat)
            let node = recurrentNode(a, inputSize: 64, bias: true, seed: 3, scale: 0.3)
            let k = try compare(node, batch: 1, steps: 75, seed: 4, label: "bilstm128 \(gate)")
            XCTAssertEqual(k is DNNLRNNKernel, gate == .sigmoid)
            a.returnSequences = false
            a.bidirectional = nil
            a.kind = .gru
            a.resetAfter = true
            try compare(recurrentNode(a, inputSize: 32, bias: true, seed: 5, scale: 0.3), batch: 2, steps: 40, seed: 6,
                        label: "gru128 \(gate)")
        }
    }

    /// Batches large enough that the primitives run on two OpenMP threads (layer, projection
    /// and per-step products above their single-thread thresholds).
    func testLargeBatchMultithreadedMatchesReference() throws {
        let configs: [RecurrentAttributes] = [
            .init(kind: .lstm, units: 128, returnSequences: true, returnState: true),
            .init(kind: .lstm, units: 128, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5), returnSequences: true,
                  returnState: true, hasMask: true),
            .init(kind: .gru, units: 128, resetAfter: false),
        ]
        for (i, a) in configs.enumerated() {
            let k = try compare(recurrentNode(a, inputSize: 96, bias: true, seed: UInt64(40 + i), scale: 0.2), batch: 24, steps: 24,
                                seed: UInt64(50 + i), label: "large \(a.kind) \(a.recurrentActivation)")
            if let k = k as? DNNLRNNKernel {
                XCTAssertEqual(k.executable.threads, 2)
            } else if let k = k as? DNNLRecurrentBatchedKernel {
                XCTAssertEqual([k.projectionThreads, k.stepThreads], [2, 2], "\(a.kind)")
            }
        }
    }

    /// Which kernel takes which configuration.
    func testPathSelection() throws {
        func kernel(_ a: RecurrentAttributes) throws -> Kernel? {
            let node = recurrentNode(a, inputSize: 3, bias: true, seed: 1)
            return try makeOptimized(node, batch: 1, steps: 4)
        }
        let primitive: [RecurrentAttributes] = [
            .init(kind: .lstm, units: 4),
            .init(kind: .lstm, units: 4, returnSequences: true, goBackwards: true),
            .init(kind: .gru, units: 4, resetAfter: true, bidirectional: .sum),
            .init(kind: .gru, units: 4, returnSequences: true, bidirectional: .mul),
            .init(kind: .simpleRNN, units: 4, activation: .relu, bidirectional: .ave),
            .init(kind: .lstm, units: 4, returnState: true, initialStates: true),
        ]
        for a in primitive { XCTAssertTrue(try kernel(a) is DNNLRNNKernel, "\(a)") }
        let batched: [RecurrentAttributes] = [
            .init(kind: .lstm, units: 4, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5)),
            .init(kind: .lstm, units: 4, hasMask: true),
            .init(kind: .gru, units: 4, activation: .relu),
            .init(kind: .simpleRNN, units: 4, activation: .identity),
            .init(kind: .lstm, units: 4, goBackwards: true, bidirectional: .concat),
        ]
        for a in batched { XCTAssertTrue(try kernel(a) is DNNLRecurrentBatchedKernel, "\(a)") }
    }

    /// 8 threads running one kernel of each path concurrently produce the single-threaded result.
    func testConcurrentRunsAreIdentical() throws {
        let configs: [RecurrentAttributes] = [
            .init(kind: .lstm, units: 16, returnSequences: true, returnState: true, bidirectional: .concat),
            .init(kind: .lstm, units: 16, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5), returnSequences: true,
                  returnState: true, bidirectional: .ave, hasMask: true),
            .init(kind: .gru, units: 8, returnSequences: true, goBackwards: true, resetAfter: false),
            // Large enough for two OpenMP threads per run.
            .init(kind: .lstm, units: 128, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5), returnState: true),
        ]
        for (c, a) in configs.enumerated() {
            let (n, t, d) = a.units > 100 ? (24, 20, 96) : (2, 9, 5)
            let node = recurrentNode(a, inputSize: d, bias: true, seed: UInt64(c))
            let kernel = try XCTUnwrap(try makeOptimized(node, batch: n, steps: t))
            let inputs = try inputValues(node, batch: n, steps: t, seed: 77)
            let outputCounts = try outputTypes(node, batch: n, steps: t).map(\.elementCount)
            let expected = runKernel(kernel, inputs, outputCounts: outputCounts)
            let results = Results(count: 8 * 4)
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for r in 0..<4 { results.set(thread * 4 + r, runKernel(kernel, inputs, outputCounts: outputCounts)) }
            }
            for i in 0..<(8 * 4) { XCTAssertEqual(results.get(i), expected, "config \(c) run \(i)") }
        }
    }

    // MARK: Helpers

    private func recurrentNode(_ a: RecurrentAttributes, inputSize d: Int, bias: Bool, seed: UInt64, scale: Float = 0.8) -> Node {
        let g = a.kind.gateCount * a.units
        var w: [String: ConstantTensor] = [:]
        let suffixes: [String] = a.bidirectional == nil ? [""] : ["", "_backward"]
        for (i, suffix) in suffixes.enumerated() {
            let s = seed &* 16 &+ UInt64(i) &* 4
            w["kernel" + suffix] = randomConstant([g, d], seed: s, in: -scale ... scale)
            w["recurrentKernel" + suffix] = randomConstant([g, a.units], seed: s + 1, in: -scale ... scale)
            if bias {
                w["bias" + suffix] = randomConstant([g], seed: s + 2, in: -0.5 ... 0.5)
                if a.kind == .gru && a.resetAfter { w["recurrentBias" + suffix] = randomConstant([g], seed: s + 3, in: -0.5 ... 0.5) }
            }
        }
        let stateInputs = a.initialStates ? a.kind.stateCount * a.directions : 0
        let inputs = ["x"] + (0..<stateInputs).map { "s\($0)" } + (a.hasMask ? ["mask"] : [])
        let outputs = ["y"] + (a.returnState ? (0..<(a.kind.stateCount * a.directions)).map { "o\($0)" } : [])
        return Node(name: "rnn", op: .recurrent(a), inputs: inputs, outputs: outputs, weights: w)
    }

    private func inputTypes(_ node: Node, batch n: Int, steps t: Int) -> [TensorType] {
        guard case let .recurrent(a) = node.op, let d = node.weights["kernel"]?.shape[1] else { return [] }
        let states = a.initialStates ? a.kind.stateCount * a.directions : 0
        return [TensorType([n, t, d])] + Array(repeating: TensorType([n, a.units]), count: states)
            + (a.hasMask ? [TensorType([n, t])] : [])
    }

    private func outputTypes(_ node: Node, batch n: Int, steps t: Int) throws -> [TensorType] {
        try node.inferOutputTypes(inputTypes(node, batch: n, steps: t))
    }

    private func context(_ node: Node, batch n: Int, steps t: Int, threads: Int = 2) throws -> KernelContext {
        KernelContext(node: node, inputTypes: inputTypes(node, batch: n, steps: t),
                      outputTypes: try outputTypes(node, batch: n, steps: t), threadCount: threads)
    }

    private func makeOptimized(_ node: Node, batch n: Int, steps t: Int) throws -> Kernel? {
        let factory = try XCTUnwrap(OptimizedKernels.table[node.op.kind])
        return try factory(context(node, batch: n, steps: t))
    }

    /// Random inputs: x in [−1, 1], states in [−1, 1], a 0/1 mask with about a third masked.
    private func inputValues(_ node: Node, batch n: Int, steps t: Int, seed: UInt64) throws -> [[Float]] {
        guard case let .recurrent(a) = node.op else { return [] }
        var g = SeededGenerator(seed: seed)
        return inputTypes(node, batch: n, steps: t).enumerated().map { i, type in
            if a.hasMask && i == inputTypes(node, batch: n, steps: t).count - 1 {
                return (0..<type.elementCount).map { _ in Int.random(in: 0..<3, using: &g) == 0 ? 0 : 1 }
            }
            return (0..<type.elementCount).map { _ in Float.random(in: -1 ... 1, using: &g) }
        }
    }

    /// Runs the optimized kernel (threads 1 and 2) and the reference on the same inputs;
    /// fails when an output differs by more than 1e-4·max(1, max |reference|). Returns the kernel.
    @discardableResult
    private func compare(_ node: Node, batch n: Int, steps t: Int, seed: UInt64, label: String,
                         file: StaticString = #filePath, line: UInt = #line) throws -> Kernel {
        let inputs = try inputValues(node, batch: n, steps: t, seed: seed)
        let refCtx = try context(node, batch: n, steps: t)
        let reference = try XCTUnwrap(try KernelRegistry.reference[node.op.kind]!(refCtx))
        let counts = refCtx.outputTypes.map(\.elementCount)
        let want = runKernel(reference, inputs, outputCounts: counts)
        var kernel: Kernel?
        for threads in [1, 2] {
            let factory = try XCTUnwrap(OptimizedKernels.table[node.op.kind])
            let k = try XCTUnwrap(try factory(context(node, batch: n, steps: t, threads: threads)), "\(label): declined",
                                  file: file, line: line)
            let got = runKernel(k, inputs, outputCounts: counts)
            for (o, (gv, wv)) in zip(got, want).enumerated() {
                let scale = max(1, wv.reduce(0) { max($0, abs($1)) })
                let d = maxAbsDiff(gv, wv)
                if !(d <= 1e-4 * scale) {
                    XCTFail("\(label) [\(type(of: k)), \(threads) threads]: output \(o) max |diff| \(d)", file: file, line: line)
                }
            }
            kernel = k
        }
        return kernel!
    }
}

// MARK: - Kernel plumbing

private final class Results: @unchecked Sendable {
    private var values: [[[Float]]]
    private let lock = NSLock()
    init(count: Int) { values = Array(repeating: [], count: count) }
    func set(_ i: Int, _ v: [[Float]]) { lock.lock(); values[i] = v; lock.unlock() }
    func get(_ i: Int) -> [[Float]] { lock.lock(); defer { lock.unlock() }; return values[i] }
}

