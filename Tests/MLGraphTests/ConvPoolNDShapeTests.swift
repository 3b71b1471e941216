import MLGraph
import TestSupport
import XCTest

/// Shape rules, attribute checks and codec edge cases of conv1d / conv3d / pool1d / pool3d
/// (Ops/ConvPoolND.swift).
final class ConvPoolNDShapeTests: XCTestCase {
    func conv(_ op: Op, weight: [Int], bias: [Int]? = nil) -> Node {
        var w = ["weight": randomConstant(weight)]
        if let bias { w["bias"] = randomConstant(bias) }
        return Node(name: "c", op: op, inputs: ["x"], outputs: ["y"], weights: w)
    }

    func testOutputShapes() throws {
        // conv1d: W 10, k 3, d 2 (effective 5): valid (10−5)/1+1 = 6; same stride 3 → ceil(10/3) = 4; explicit 2+1 stride 2 → (13−5)/2+1 = 5.
        for (padding, strides, w) in [(SpatialPadding.valid, [1], 6), (.same, [3], 4), (.explicit(before: [2], after: [1]), [2], 5)] {
            let n = conv(.conv1d(ConvNDAttributes(kernel: [3], strides: strides, dilations: [2], padding: padding, outputChannels: 7)),
                         weight: [7, 4, 3], bias: [7])
            XCTAssertEqual(try n.inferOutputTypes([TensorType([2, 10, 4])])[0].shape, [2, w, 7], "\(padding)")
        }
        let c3 = conv(.conv3d(ConvNDAttributes(kernel: [3, 1, 2], strides: [2, 1, 1], padding: .same, groups: 2, outputChannels: 4)),
                      weight: [4, 3, 3, 1, 2])
        XCTAssertEqual(try c3.inferOutputTypes([TensorType([1, 5, 4, 3, 6])])[0].shape, [1, 3, 4, 3, 4])
        let p3 = Node(name: "p", op: .pool3d(PoolNDAttributes(kind: .max, kernel: [2, 2, 3], strides: [2, 2, 1], padding: .valid)),
                      inputs: ["x"], outputs: ["y"])
        XCTAssertEqual(try p3.inferOutputTypes([TensorType([2, 5, 4, 3, 6])])[0].shape, [2, 2, 2, 1, 6])
        let p1 = Node(name: "p", op: .pool1d(PoolNDAttributes(kind: .average, kernel: [3], strides: [2], padding: .same)),
                      inputs: ["x"], outputs: ["y"])
        XCTAssertEqual(try p1.inferOutputTypes([TensorType([1, 7, 2])])[0].shape, [1, 4, 2])
    }

    func testRejectsBadAttributesAndShapes() {
        let x1 = TensorType([1, 8, 4])
        let bad: [(Op, [Int], TensorType, String)] = [
            (.conv1d(ConvNDAttributes(kernel: [3, 3], padding: .valid, outputChannels: 2)), [2, 4, 3, 3], x1, "kernel must be 1"),
            (.conv1d(ConvNDAttributes(kernel: [0], padding: .valid, outputChannels: 2)), [2, 4, 0], x1, "kernel must be 1"),
            (.conv1d(ConvNDAttributes(kernel: [3], padding: .explicit(before: [1, 1], after: [1]), outputChannels: 2)), [2, 4, 3], x1, "padding before"),
            (.conv1d(ConvNDAttributes(kernel: [3], padding: .explicit(before: [-1], after: [0]), outputChannels: 2)), [2, 4, 3], x1, "padding before"),
            (.conv1d(ConvNDAttributes(kernel: [3], padding: .valid, groups: 3, outputChannels: 3)), [3, 1, 3], x1, "groups 3"),
            (.conv1d(ConvNDAttributes(kernel: [3], padding: .valid, outputChannels: 2)), [2, 4, 2], x1, "should have shape"),
            (.conv1d(ConvNDAttributes(kernel: [9], padding: .valid, outputChannels: 2)), [2, 4, 9], x1, "empty output"),
            (.conv1d(ConvNDAttributes(kernel: [3], padding: .valid, outputChannels: 2)), [2, 4, 3], TensorType([1, 8, 8, 4]), "rank-3"),
            (.conv3d(ConvNDAttributes(kernel: [1, 1, 1], strides: [1, 1], padding: .valid, outputChannels: 2)), [2, 4, 1, 1, 1],
             TensorType([1, 2, 2, 2, 4]), "strides must be 3"),
            (.conv3d(ConvNDAttributes(kernel: [1, 1, 1], padding: .valid, outputChannels: 2)), [2, 4, 1, 1, 1], x1, "rank-5"),
        ]
        for (op, w, x, message) in bad {
            XCTAssertThrowsError(try conv(op, weight: w).inferOutputTypes([x]), "\(op)") { XCTAssertTrue("\($0)".contains(message), "\($0)") }
        }
        let pool = Node(name: "p", op: .pool3d(PoolNDAttributes(kind: .max, kernel: [2, 2], strides: [1, 1, 1], padding: .valid)),
                        inputs: ["x"], outputs: ["y"])
        XCTAssertThrowsError(try pool.inferOutputTypes([TensorType([1, 3, 3, 3, 1])]))
    }

    func testPaddingCodec() throws {
        let attrs: [String: AttributeValue] = ["kind": .string("max"), "kernel": .ints([2, 2, 2]), "strides": .ints([1, 1, 1])]
        var a = attrs; a["padding"] = .ints([1, 0, 1, 0, 1, 0])
        XCTAssertEqual(try OpKind.pool3d.decodeOp(a),
                       .pool3d(PoolNDAttributes(kind: .max, kernel: [2, 2, 2], strides: [1, 1, 1], padding: .explicit(before: [1, 0, 1], after: [0, 1, 0]))),
                       "explicit padding is ONNX pads order: befores, then afters")
        for wrong: AttributeValue in [.ints([1, 1]), .string("causal"), .int(1)] {
            var b = attrs; b["padding"] = wrong
            XCTAssertThrowsError(try OpKind.pool3d.decodeOp(b), "\(wrong)")
        }
    }
}
