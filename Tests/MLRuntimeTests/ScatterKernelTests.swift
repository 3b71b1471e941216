// Scatter / reverseSequence / argsort / NMS kernels through `Model` (typed inputs and outputs,
// the memory plan, reference and optimized configurations): hostile index values never trap, and
// hand-computed results.
import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

final class ScatterKernelTests: XCTestCase {
    func model(_ nodes: [Node], inputs: [ValueInfo], outputs: [String], referenceOnly: Bool) throws -> Model {
        try Model(graph: Graph(inputs: inputs, outputs: outputs, nodes: nodes), configuration: .init(referenceOnly: referenceOnly))
    }

    /// Extreme int64 indices (Int64.min, Int64.max, ±n, n) are skipped or wrapped, never trap;
    /// each mode applied in index order.
    func testExtremeIndicesAreSkippedAndModesAccumulateInOrder() throws {
        let data: [Float] = [1, 2, 3, 4]
        let idx: [Int64] = [.min, .max, 4, -5, -1, 3, 0]
        let upd: [Float] = [100, 100, 100, 100, 2, 3, 5]
        // Valid after wrapping: −1 → 3 (2), 3 (3), 0 (5).
        let expected: [ScatterMode: [Float]] = [.update: [5, 2, 3, 3], .add: [6, 2, 3, 9], .sub: [-4, 2, 3, -1], .mul: [5, 2, 3, 24],
                                                .div: [0.2, 2, 3, 4.0 / 6], .max: [5, 2, 3, 4], .min: [1, 2, 3, 2]]
        for referenceOnly in [true, false] {
            for (mode, want) in expected {
                let m = try model([Node(name: "s", op: .scatter(ScatterAttributes(axis: 0, mode: mode)), inputs: ["d", "i", "u"], outputs: ["y"])],
                                  inputs: [ValueInfo(name: "d", type: TensorType([4])), ValueInfo(name: "i", type: TensorType([7], .int64)),
                                           ValueInfo(name: "u", type: TensorType([7]))], outputs: ["y"], referenceOnly: referenceOnly)
                let y = try m.prediction(from: ["d": nd([4], data), "i": try NDArray(shape: [7], int64s: idx), "u": nd([7], upd)])["y"]
                let got = try XCTUnwrap(y?.scalars)
                for (a, b) in zip(got, want) { XCTAssertEqual(a, b, accuracy: 1e-6, "\(mode)") }
            }
        }
    }

    func testIntegerScatterWrapsAndNeverTrapsOnDivision() throws {
        let m = try model([Node(name: "s", op: .scatterND(mode: .div), inputs: ["d", "i", "u"], outputs: ["y"])],
                          inputs: [ValueInfo(name: "d", type: TensorType([3], .int32)), ValueInfo(name: "i", type: TensorType([3, 1], .int32)),
                                   ValueInfo(name: "u", type: TensorType([3], .int32))], outputs: ["y"], referenceOnly: true)
        let out = try m.prediction(from: ["d": try NDArray(shape: [3], int32s: [.min, 7, -7]),
                                          "i": try NDArray(shape: [3, 1], int32s: [0, 1, 2]),
                                          "u": try NDArray(shape: [3], int32s: [-1, 0, 2])])["y"]
        XCTAssertEqual(out?.int32s, [.min, 0, -3], "Int32.min / −1 wraps, x / 0 = 0, −7 / 2 truncates to −3")
        let add = try model([Node(name: "s", op: .scatterAlongAxis(ScatterAttributes(axis: 0, mode: .add)), inputs: ["d", "i", "u"], outputs: ["y"])],
                            inputs: [ValueInfo(name: "d", type: TensorType([2], .int32)), ValueInfo(name: "i", type: TensorType([2], .int32)),
                                     ValueInfo(name: "u", type: TensorType([2], .int32))], outputs: ["y"], referenceOnly: false)
        let w = try add.prediction(from: ["d": try NDArray(shape: [2], int32s: [.max, 0]), "i": try NDArray(shape: [2], int32s: [0, .min]),
                                          "u": try NDArray(shape: [2], int32s: [1, 9])])["y"]
        XCTAssertEqual(w?.int32s, [.min, 0], "Int32.max + 1 wraps; index Int32.min is skipped")
    }

    /// reverseSequence with lengths as a graph input, then argsort of the result: int32 lengths in,
    /// int32 positions out.
    func testReverseSequenceThenArgsort() throws {
        for referenceOnly in [true, false] {
            let m = try model([Node(name: "rs", op: .reverseSequence(seqAxis: 1, batchAxis: 0), inputs: ["x", "len"], outputs: ["r"]),
                               Node(name: "as", op: .argsort(axis: -1, ascending: true), inputs: ["r"], outputs: ["order"])],
                              inputs: [ValueInfo(name: "x", type: TensorType([2, 4])), ValueInfo(name: "len", type: TensorType([2], .int32))],
                              outputs: ["r", "order"], referenceOnly: referenceOnly)
            let out = try m.prediction(from: ["x": nd([2, 4], [1, 2, 3, 4, 10, 20, 20, 40]),
                                              "len": try NDArray(shape: [2], int32s: [3, 99])])
            XCTAssertEqual(out["r"]?.scalars, [3, 2, 1, 4, 40, 20, 20, 10])
            XCTAssertEqual(out["order"]?.elementType, .int32)
            XCTAssertEqual(out["order"]?.int32s, [2, 1, 0, 3, 3, 1, 2, 0], "stable: equal 20s keep their order")
        }
    }

    /// Four outputs of three element types; MIL's documented example (per-class suppression).
    func testNonMaximumSuppressionOutputsAndPadding() throws {
        let a = NonMaximumSuppressionAttributes(iouThreshold: 0.2, scoreThreshold: 0.4, maxBoxes: 3, perClassSuppression: true)
        let m = try model([Node(name: "nms", op: .nonMaximumSuppression(a), inputs: ["b", "s"], outputs: ["boxes", "scores", "idx", "n"])],
                          inputs: [ValueInfo(name: "b", type: TensorType([1, 4, 4])), ValueInfo(name: "s", type: TensorType([1, 4, 1]))],
                          outputs: ["boxes", "scores", "idx", "n"], referenceOnly: false)
        let out = try m.prediction(from: ["b": nd([1, 4, 4], [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]),
                                          "s": nd([1, 4, 1], [-3.5, 9.4, 2.3, 0.7])])
        XCTAssertEqual(out["boxes"]?.scalars, [1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0])
        XCTAssertEqual(out["scores"]?.scalars, [9.4, 2.3, 0])
        XCTAssertEqual(out["idx"]?.int32s, [1, 2, -1])
        XCTAssertEqual(out["n"]?.int32s, [2])
    }
}
