import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// NaN and ±inf pass through as in Keras/TensorFlow. Exception, documented in
/// docs/ARCHITECTURE.md: oneDNN's ReLU (standalone or fused) maps NaN to 0; the reference path
/// (`referenceOnly`, `mlconv predict --reference`) keeps NaN like TensorFlow.
final class NaNPropagationTests: XCTestCase {
    func testNaNThroughReluAndConv() throws {
        let x = nd([1, 2, 2, 1], [.nan, -1, 2, .infinity])
        for reference in [true, false] {
            let r = try runOp(.activation(.relu), [x], referenceOnly: reference)
            XCTAssertEqual(r.scalars[0].isNaN, reference, "relu(NaN), reference \(reference): \(r.scalars[0])")
            if !reference { XCTAssertEqual(r.scalars[0], 0) }
            XCTAssertEqual(Array(r.scalars[1...]), [0, 2, .infinity])
            // A 1×1 convolution without activation keeps NaN and inf on both paths.
            let c = try runOp(.conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 1)),
                              [x], weights: ["weight": const([1, 1, 1, 1], [2])], referenceOnly: reference)
            XCTAssertTrue(c.scalars[0].isNaN, "conv(NaN), reference \(reference)")
            XCTAssertEqual(Array(c.scalars[1...]), [-2, 4, .infinity])
            let s = try runOp(.activation(.sigmoid), [x], referenceOnly: reference)
            XCTAssertTrue(s.scalars[0].isNaN, "sigmoid(NaN), reference \(reference)")
        }
    }
}
