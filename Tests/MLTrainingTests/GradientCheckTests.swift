// Finite-difference checks of every backward rule (LayerRules.table): the analytic dL/dx and
// dL/dw against central differences of L = Σ r ⊙ f(x; w) for a random r, in float64-accumulated
// sums of float32 forwards.
import MLGraph
@testable import MLTraining
import TestSupport
import XCTest

final class GradientCheckTests: XCTestCase {
    /// Checks `node` at input shape `shape` (batch first) with `weights`.
    func check(_ node: Node, shape: [Int], weights: [String: [Float]] = [:], seed: UInt64 = 3, spaced: Bool = false,
               file: StaticString = #filePath, line: UInt = #line) throws {
        let rule = try XCTUnwrap(LayerRules.table[node.op.kind], "no rule for \(node.op.kind)", file: file, line: line)
        let count = shape.reduce(1, *)
        // `spaced`: distinct values 0.05 apart in a seeded order, so no perturbation (±eps)
        // changes which element of a window is the maximum.
        var g0 = SeededGenerator(seed: seed)
        let xv = spaced ? (0..<count).map { Float($0) * 0.05 - 1 }.shuffled(using: &g0) : randomFloats(count: count, seed: seed)
        let x = TrainTensor(shape: shape, values: xv)
        let y = try rule.forward(node, inputs: [x], weights: weights)
        let r = TrainTensor(shape: y.shape, values: randomFloats(count: y.count, seed: seed + 1))
        func loss(_ x: TrainTensor, _ w: [String: [Float]]) throws -> Double {
            let y = try rule.forward(node, inputs: [x], weights: w)
            return zip(y.values, r.values).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
        }
        let g = try rule.backward(node, inputs: [x], output: y, gradOutput: r, weights: weights,
                                  needInputs: [true], needWeights: !weights.isEmpty)
        let eps: Float = 1e-2
        func compare(_ analytic: [Float], _ numeric: [Double], _ what: String) {
            let scale = max(numeric.map(abs).max() ?? 0, 1e-3)
            let err = zip(analytic, numeric).map { abs(Double($0) - $1) }.max() ?? 0
            XCTAssertLessThan(err / scale, 2e-3, "\(node.op.name) \(what): analytic vs finite difference differ by \(err) (scale \(scale))",
                              file: file, line: line)
        }
        let gx = try XCTUnwrap(g.inputs.first ?? nil, file: file, line: line)
        var numeric: [Double] = []
        for i in 0..<count {
            var p = x, m = x
            p.values[i] += eps; m.values[i] -= eps
            numeric.append((try loss(p, weights) - loss(m, weights)) / Double(2 * eps))
        }
        compare(gx.values, numeric, "dL/dx")
        for (role, w) in weights where node.op.kind == .dense || node.op.kind == .conv2d {
            let gw = try XCTUnwrap(g.weights[role], "no gradient for \(role)", file: file, line: line)
            var num: [Double] = []
            for i in w.indices {
                var p = weights, m = weights
                p[role]![i] += eps; m[role]![i] -= eps
                num.append((try loss(x, p) - loss(x, m)) / Double(2 * eps))
            }
            compare(gw, num, "dL/d\(role)")
        }
    }

    func node(_ op: Op) -> Node { Node(name: "n", op: op, inputs: ["x"], outputs: ["y"]) }

    func testDense() throws {
        try check(node(.dense(DenseAttributes(outputChannels: 3))), shape: [2, 4],
                  weights: ["weight": randomFloats(count: 12, seed: 9), "bias": randomFloats(count: 3, seed: 10)])
    }

    func testConv2D() throws {
        for (padding, strides, dil, groups) in [(PaddingMode.same, [1, 1], [1, 1], 1), (.valid, [2, 1], [1, 1], 1),
                                                 (.explicit(top: 1, bottom: 0, left: 0, right: 2), [1, 2], [2, 1], 2)] {
            let a = Conv2DAttributes(kernel: [3, 2], strides: strides, dilations: dil, padding: padding, groups: groups, outputChannels: 4)
            try check(node(.conv2d(a)), shape: [2, 6, 5, 4],
                      weights: ["weight": randomFloats(count: 4 * (4 / groups) * 6, seed: 11), "bias": randomFloats(count: 4, seed: 12)])
        }
    }

    func testPooling() throws {
        for kind in PoolKind.allCases {
            for padding in [PaddingMode.valid, .same] {
                try check(node(.pool2d(Pool2DAttributes(kind: kind, kernel: [2, 3], strides: [2, 2], padding: padding))),
                          shape: [2, 5, 6, 3], spaced: true)
            }
            try check(node(.globalPool2d(kind: kind, keepDims: false)), shape: [2, 3, 4, 2], spaced: true)
        }
    }

    func testBatchNorm() throws {
        try check(node(.batchNorm(BatchNormAttributes(axis: 3, epsilon: 1e-3))), shape: [2, 3, 2, 3], weights: [
            "mean": [0.1, -0.2, 0.3], "variance": [0.5, 1.5, 2], "gamma": [1.2, 0.7, -0.4], "beta": [0.1, 0.2, 0.3],
        ])
    }

    func testActivations() throws {
        // ReLU away from its kink: inputs in [0.05, 1] ∪ [−1, −0.05] would be needed; use the
        // same random inputs, whose distance from 0 exceeds eps with this seed (checked below).
        let xs = randomFloats(count: 2 * 7, seed: 3)
        XCTAssertTrue(xs.allSatisfy { abs($0) > 0.02 })
        for a in [Activation.relu, .sigmoid, .tanh, .linear(alpha: 0.5, beta: 1)] {
            try check(node(.activation(a)), shape: [2, 7])
        }
    }

    func testSoftmax() throws {
        try check(node(.softmax(axis: -1)), shape: [3, 5])
        try check(node(.softmax(axis: 1)), shape: [2, 4, 3])
    }

    func testDataMovement() throws {
        try check(node(.reshape(targetShape: [6])), shape: [2, 2, 3])
        try check(node(.transpose(perm: [0, 3, 1, 2])), shape: [2, 2, 3, 4])
        try check(node(.identity), shape: [2, 3])
        try check(node(.pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 2], [0, 1], [0, 0]]))), shape: [1, 2, 3, 2])
    }

    /// The combined cross-entropy gradient equals the chained softmax backward of −1/p.
    func testFusedCrossEntropyMatchesChain() throws {
        let logits = TrainTensor(shape: [2, 4], values: randomFloats(count: 8, seed: 5))
        let sm = node(.softmax(axis: -1))
        let p = try SoftmaxRule.forward(sm, inputs: [logits], weights: [:])
        let targets: [LossTarget] = [.classIndex(1), .classIndex(3)]
        let fused = try LossEvaluation.evaluate(.categoricalCrossEntropy, input: p, targets: targets, fusedWithSoftmax: true)
        let plain = try LossEvaluation.evaluate(.categoricalCrossEntropy, input: p, targets: targets, fusedWithSoftmax: false)
        let chained = try SoftmaxRule.backward(sm, inputs: [logits], output: p, gradOutput: plain.gradient, weights: [:],
                                               needInputs: [true], needWeights: false)
        assertClose(chained.inputs[0]!.values, fused.gradient.values, tolerance: 1e-6)
        XCTAssertEqual(fused.sum, plain.sum)
    }

    /// Every op kind the engine runs has a gradient check above.
    func testEveryRuleIsChecked() {
        let checked: Set<OpKind> = [.dense, .conv2d, .pool2d, .globalPool2d, .batchNorm, .activation, .softmax,
                                    .reshape, .transpose, .identity, .pad]
        XCTAssertEqual(Set(LayerRules.table.keys), checked)
    }
}
