import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// `Model.init` runs `PassPipeline.inference` minus `Configuration.disabledPasses`, and none
/// with `referenceOnly`; every variant computes the same values.
final class ModelPassTests: XCTestCase {
    /// x [1, 5, 5, 1] → zero pad (H 1/2, W 3/0) → conv 3×3 valid (2 channels) → y [1, 6, 6, 2].
    static func padConv() throws -> Graph {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 5, 1]))], outputs: ["y"], nodes: [
            Node(name: "pad", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 2], [3, 0], [0, 0]])),
                 inputs: ["x"], outputs: ["p"]),
            Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .valid, outputChannels: 2)),
                 inputs: ["p"], outputs: ["y"], weights: ["weight": const([2, 1, 3, 3], (0..<18).map { Float($0) - 9 })]),
        ])
        try g.inferShapes()
        return g
    }

    func testInferencePassesRunAtLoadUnlessDisabled() throws {
        let g = try Self.padConv()
        let fused = try Model(graph: g)
        XCTAssertEqual(fused.graph.nodes.map(\.name), ["conv"])
        let disabled = try Model(graph: g, configuration: .init(disabledPasses: ["fuse_pad_into_conv"]))
        XCTAssertEqual(disabled.graph.nodes.map(\.name), ["pad", "conv"])
        let reference = try Model(graph: g, configuration: .init(referenceOnly: true))
        XCTAssertEqual(reference.graph.nodes.map(\.name), ["pad", "conv"])
        let x = iota([1, 5, 5, 1])
        let expected = try XCTUnwrap(try reference.prediction(from: ["x": x])["y"])
        XCTAssertEqual(expected.shape, [1, 6, 6, 2])
        for model in [fused, disabled] {
            let y = try XCTUnwrap(try model.prediction(from: ["x": x])["y"])
            XCTAssertEqual(y.shape, expected.shape)
            XCTAssertLessThanOrEqual(maxAbsDiff(y.scalars, expected.scalars), 1e-4)
        }
    }

    func testUnknownDisabledPassIsAnError() throws {
        XCTAssertThrowsError(try Model(graph: try Self.padConv(), configuration: .init(disabledPasses: ["no_such_pass"]))) { error in
            XCTAssertEqual(error as? GraphError, .unknownPass(name: "no_such_pass", known: PassPipeline.inference.names))
        }
    }
}
