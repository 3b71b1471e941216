import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// The memcpy-based crop / constant-pad / nearest-upsample kernels against the reference kernels,
/// bit for bit (they only move values).
final class FastCopyKernelTests: XCTestCase {
    private func both(_ op: Op, _ shape: [Int], seed: UInt64) throws -> (NDArray, NDArray) {
        let x = nd(shape, randomFloats(count: shape.reduce(1, *), seed: seed))
        return (try runOp(op, [x], referenceOnly: true), try runOp(op, [x], referenceOnly: false))
    }

    func testCropPadUpsampleMatchReference() throws {
        var g = SeededGenerator(seed: 7)
        for i in 0..<60 {
            let shape = [Int.random(in: 1...2, using: &g), Int.random(in: 1...7, using: &g), Int.random(in: 1...7, using: &g), Int.random(in: 1...5, using: &g)]
            let pads = shape.map { _ in [Int.random(in: 0...2, using: &g), Int.random(in: 0...2, using: &g)] }
            let (r1, f1) = try both(.pad(PadAttributes(mode: .constant, pads: pads, value: Float(i % 3) - 1)), shape, seed: UInt64(i))
            XCTAssertEqual(r1.scalars, f1.scalars, "pad \(shape) \(pads)")
            XCTAssertEqual(r1.shape, f1.shape)
            let crops = shape.map { d -> [Int] in
                let b = Int.random(in: 0...max(0, (d - 1) / 2), using: &g)
                return [b, Int.random(in: 0...max(0, d - 1 - b), using: &g)]
            }
            let (r2, f2) = try both(.crop(crops: crops), shape, seed: UInt64(i) + 100)
            XCTAssertEqual(r2.scalars, f2.scalars, "crop \(shape) \(crops)")
            let scale = [Int.random(in: 1...3, using: &g), Int.random(in: 1...3, using: &g)]
            let (r3, f3) = try both(.upsample2d(Upsample2DAttributes(scale: scale, mode: .nearest)), shape, seed: UInt64(i) + 200)
            XCTAssertEqual(r3.scalars, f3.scalars, "upsample \(shape) \(scale)")
        }
    }

    func testKnownCropValues() throws {
        // 1×3×3×1 = 1…9, crop 1 off top and left → [[5, 6], [8, 9]].
        let y = try runOp(.crop(crops: [[0, 0], [1, 0], [1, 0], [0, 0]]), [iota([1, 3, 3, 1])], referenceOnly: false)
        XCTAssertEqual(y.shape, [1, 2, 2, 1])
        XCTAssertEqual(y.scalars, [5, 6, 8, 9])
    }

    /// The pad→conv fusion that `Model` applies gives the same numbers as the unfused graph.
    func testPadFusionKeepsValues() throws {
        let x = nd([1, 5, 6, 2], randomFloats(count: 60, seed: 3))
        let graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 6, 2]))], outputs: ["c"], nodes: [
            Node(name: "p", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [2, 1], [0, 3], [0, 0]])), inputs: ["x"], outputs: ["p"]),
            Node(name: "c", op: .conv2d(Conv2DAttributes(kernel: [3, 3], strides: [2, 1], padding: .valid, outputChannels: 3)),
                 inputs: ["p"], outputs: ["c"], weights: ["weight": randomConstant([3, 2, 3, 3], seed: 4)]),
        ])
        let fused = try Model(graph: graph)
        XCTAssertEqual(fused.graph.nodes.count, 1, "the pad was folded into the convolution")
        let ref = try Model(graph: graph, configuration: .init(referenceOnly: true))
        let a = try fused.prediction(from: ["x": x])["c"]!, b = try ref.prediction(from: ["x": x])["c"]!
        XCTAssertEqual(a.shape, b.shape)
        XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, b.scalars), 1e-5)
    }
}
