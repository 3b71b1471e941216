import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Reference activation, batchNorm, softmax, prelu and elementwise kernels.
final class PointwiseOpTests: XCTestCase {
    func act(_ a: Activation, _ xs: [Float]) throws -> [Float] {
        try runOp(.activation(a), [nd([1, xs.count], xs)]).scalars
    }

    func testActivationsMatchTheirFormulas() throws {
        XCTAssertEqual(try act(.relu, [-1, 0, 2]), [0, 0, 2])
        XCTAssertEqual(try act(.leakyReLU(alpha: 0.5), [-2, 3]), [-1, 3])
        XCTAssertEqual(try act(.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0), [-1, 3, 7]), [0, 3, 6])
        XCTAssertEqual(try act(.clippedReLU(maxValue: nil, negativeSlope: 0.5, threshold: 1), [0, 2]), [-0.5, 2])
        XCTAssertEqual(try act(.linear(alpha: 2, beta: 1), [3, -1]), [7, -1])
        XCTAssertEqual(try act(.hardSigmoid(alpha: 0.2, beta: 0.5), [-5, 0, 1, 5]), [0, 0.5, 0.7, 1])
        XCTAssertEqual(try act(.thresholdedReLU(theta: 1), [0.5, 1, 2]), [0, 0, 2])
        XCTAssertEqual(try act(.softsign, [1, -3]), [0.5, -0.75])
        XCTAssertEqual(try act(.sigmoid, [0]), [0.5])
        XCTAssertEqual(try act(.tanh, [0]), [0])
        XCTAssertEqual(try act(.swish, [0]), [0])
        XCTAssertEqual(try act(.elu(alpha: 2), [1, 0]), [1, 0])
        assertClose(try act(.elu(alpha: 2), [-1]), [Float(2 * (exp(-1.0) - 1))], tolerance: 1e-6)
        assertClose(try act(.selu, [1, -1]), [1.0507009873554805, Float(1.0507009873554805 * 1.6732632423543772 * (exp(-1.0) - 1))], tolerance: 1e-6)
        assertClose(try act(.softplus, [0, 30]), [Float(log(2.0)), 30], tolerance: 1e-6)
        assertClose(try act(.exponential, [1]), [Float(M_E)], tolerance: 1e-6)
        assertClose(try act(.gelu(approximate: false), [1]), [Float(0.5 * (1 + erf(1 / 2.0.squareRoot())))], tolerance: 1e-6)
        assertClose(try act(.gelu(approximate: true), [1]),
                    [Float(0.5 * (1 + tanh((2 / Double.pi).squareRoot() * (1 + 0.044715))))], tolerance: 1e-6)
    }

    func testBatchNormLastAxis() throws {
        // channels c0 = [1, 3], c1 = [2, 4]; mean [1, 2], var + eps = [4, 16]; gamma [2, 1]; beta [0, 10].
        let y = try runOp(.batchNorm(BatchNormAttributes(axis: 3, epsilon: 1)), [nd([1, 1, 2, 2], [1, 2, 3, 4])],
                          weights: ["mean": const([2], [1, 2]), "variance": const([2], [3, 15]),
                                    "gamma": const([2], [2, 1]), "beta": const([2], [0, 10])])
        XCTAssertEqual(y.scalars, [0, 10, 2, 10.5])
    }

    func testBatchNormMiddleAxisWithoutGammaBeta() throws {
        // axis 1 of [1, 2, 2]: c0 = [1, 2], c1 = [3, 4]; mean [1, 3]; var + eps = [4, 1].
        let y = try runOp(.batchNorm(BatchNormAttributes(axis: 1, epsilon: 1)), [nd([1, 2, 2], [1, 2, 3, 4])],
                          weights: ["mean": const([2], [1, 3]), "variance": const([2], [3, 0])])
        XCTAssertEqual(y.scalars, [0, 0.5, 0, 1])
    }

    func testSoftmaxLastAxis() throws {
        let y = try runOp(.softmax(axis: 1), [nd([1, 3], [1, 2, 3])])
        let e = [1.0, 2, 3].map { exp($0) }, s = e.reduce(0, +)
        assertClose(y.scalars, e.map { Float($0 / s) }, tolerance: 1e-7)
    }

    func testSoftmaxLargeValuesDoNotOverflow() throws {
        let y = try runOp(.softmax(axis: 1), [nd([1, 2], [1000, 1001])])
        assertClose(y.scalars, [Float(1 / (1 + M_E)), Float(M_E / (1 + M_E))], tolerance: 1e-7)
    }

    func testSoftmaxInnerAxis() throws {
        // [[1, 2], [3, 5]] along axis 1 (the rows): columns (1, 3) and (2, 5).
        let y = try runOp(.softmax(axis: 1), [nd([1, 2, 2], [1, 2, 3, 5])])
        let e2 = exp(2.0), e3 = exp(3.0)
        assertClose(y.scalars, [Float(1 / (1 + e2)), Float(1 / (1 + e3)), Float(e2 / (1 + e2)), Float(e3 / (1 + e3))], tolerance: 1e-7)
    }

    func testPReLUBroadcastAlpha() throws {
        // alpha [1, 1, 2] shared over H and W: channel 0 → 0.1, channel 1 → 0.5.
        let y = try runOp(.prelu, [nd([1, 2, 2, 2], [-1, -2, 3, -4, -5, 6, -7, 8])], weights: ["alpha": const([1, 1, 2], [0.1, 0.5])])
        assertClose(y.scalars, [-0.1, -1, 3, -2, -0.5, 6, -0.7, 8], tolerance: 1e-7)
        // Full alpha, no sharing.
        let z = try runOp(.prelu, [nd([1, 3], [-1, -1, 2])], weights: ["alpha": const([3], [1, 2, 3])])
        XCTAssertEqual(z.scalars, [-1, -2, 2])
    }

    func testElementwiseAddNAryBroadcast() throws {
        let y = try runOp(.elementwise(.add), [nd([1, 2, 3], [1, 2, 3, 4, 5, 6]), nd([3], [10, 20, 30]), nd([1, 2, 1], [100, 200])])
        XCTAssertEqual(y.shape, [1, 2, 3])
        XCTAssertEqual(y.scalars, [111, 122, 133, 214, 225, 236])
    }

    func testElementwiseSubtractBroadcastEitherSide() throws {
        XCTAssertEqual(try runOp(.elementwise(.subtract), [nd([1, 2, 2], [5, 6, 7, 8]), nd([1, 1, 2], [1, 2])]).scalars, [4, 4, 6, 6])
        let y = try runOp(.elementwise(.subtract), [nd([1, 1, 2], [1, 2]), nd([1, 2, 2], [5, 6, 7, 8])])
        XCTAssertEqual(y.shape, [1, 2, 2])
        XCTAssertEqual(y.scalars, [-4, -4, -6, -6])
    }

    func testElementwiseMultiplyAverageMaxMin() throws {
        XCTAssertEqual(try runOp(.elementwise(.multiply), [nd([1, 2], [2, 3]), nd([1, 2], [4, 5])]).scalars, [8, 15])
        XCTAssertEqual(try runOp(.elementwise(.average), [nd([1, 2], [1, 2]), nd([1, 2], [3, 4]), nd([1, 2], [5, 9])]).scalars, [3, 5])
        XCTAssertEqual(try runOp(.elementwise(.maximum), [nd([1, 3], [1, 5, -3]), nd([1, 3], [2, 0, -4])]).scalars, [2, 5, -3])
        XCTAssertEqual(try runOp(.elementwise(.minimum), [nd([1, 3], [1, 5, -3]), nd([1, 3], [2, 0, -4])]).scalars, [1, 0, -4])
    }

    func testElementwiseMaxMinPropagateNaN() throws {
        let a = nd([1, 3], [1, .nan, 3]), b = nd([1, 3], [2, 0, .nan])
        let mx = try runOp(.elementwise(.maximum), [a, b]).scalars, mn = try runOp(.elementwise(.minimum), [a, b]).scalars
        XCTAssertEqual(mx[0], 2); XCTAssertTrue(mx[1].isNaN); XCTAssertTrue(mx[2].isNaN)
        XCTAssertEqual(mn[0], 1); XCTAssertTrue(mn[1].isNaN); XCTAssertTrue(mn[2].isNaN)
    }
}
