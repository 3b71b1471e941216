import Diagnostics
import XCTest
@testable import MLGraph

/// x [1, 5, 5, 1] → pad (H 1/2, W 3/0, value `padValue`) → p → conv 3×3 (2 channels, `padding`) → y.
func padConvGraph(padValue: Float = 0, padding: PaddingMode = .explicit(top: 1, bottom: 0, left: 0, right: 1),
                  padIsOutput: Bool = false) throws -> Graph {
    let w = ConstantTensor(shape: [2, 1, 3, 3], floats: (0..<18).map { Float($0) - 9 })
    var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 5, 1]))], outputs: padIsOutput ? ["y", "p"] : ["y"], nodes: [
        Node(name: "pad", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 2], [3, 0], [0, 0]], value: padValue)),
             inputs: ["x"], outputs: ["p"]),
        Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: padding, outputChannels: 2)),
             inputs: ["p"], outputs: ["y"], weights: ["weight": w]),
    ])
    try g.inferShapes()
    return g
}

/// A pass that sets the convolution's padding to `.valid` without updating any type: the
/// convolution's output shrinks, so the graph no longer verifies against its recorded types.
struct BreakConvShapes: GraphPass {
    var name: String { "break_conv_shapes" }
    func apply(to graph: inout Graph) -> Bool {
        for i in graph.nodes.indices {
            if case var .conv2d(a) = graph.nodes[i].op { a.padding = .valid; graph.nodes[i].op = .conv2d(a); return true }
        }
        return false
    }
}

/// Reports a change without making one (counts its calls).
final class CountingPass: GraphPass, @unchecked Sendable {
    let name: String
    var calls = 0
    init(_ name: String) { self.name = name }
    func apply(to graph: inout Graph) -> Bool { calls += 1; return false }
}

final class FusePadIntoConvTests: XCTestCase {
    func testFusesZeroPadIntoExplicitlyPaddedConvolution() throws {
        let original = try padConvGraph()
        var g = original
        XCTAssertTrue(FusePadIntoConv().apply(to: &g))
        XCTAssertEqual(g.nodes.count, 1)
        XCTAssertEqual(g.nodes[0].name, "conv")
        XCTAssertEqual(g.nodes[0].inputs, ["x"])
        guard case let .conv2d(a) = g.nodes[0].op else { return XCTFail("not a conv: \(g.nodes[0].op)") }
        XCTAssertEqual(a.padding, .explicit(top: 2, bottom: 2, left: 3, right: 1))
        XCTAssertNil(g.tensorTypes["p"])
        XCTAssertEqual(g.tensorTypes["y"], original.tensorTypes["y"])
        XCTAssertEqual(g.tensorTypes["y"], TensorType([1, 7, 7, 2]))
        XCTAssertNoThrow(try g.verify())
        // The Graph API wrapper is the same rewrite.
        XCTAssertEqual(original.fusingZeroPaddingIntoConvolutions(), g)
    }

    func testFusesIntoValidConvolution() throws {
        var g = try padConvGraph(padding: .valid)
        XCTAssertTrue(FusePadIntoConv().apply(to: &g))
        guard case let .conv2d(a) = g.nodes.first?.op else { return XCTFail("not a conv") }
        XCTAssertEqual(a.padding, .explicit(top: 1, bottom: 2, left: 3, right: 0))
    }

    func testLeavesNonZeroPadSamePaddingAndOutputPadAlone() throws {
        for original in [try padConvGraph(padValue: 1), try padConvGraph(padding: .same), try padConvGraph(padIsOutput: true)] {
            var g = original
            XCTAssertFalse(FusePadIntoConv().apply(to: &g))
            XCTAssertEqual(g, original)
            XCTAssertEqual(g.nodes.count, 2)
        }
    }
}

final class PassPipelineTests: XCTestCase {
    func testInferencePipelineIsNamedAndIdempotent() throws {
        XCTAssertEqual(Set(PassPipeline.inference.names).count, PassPipeline.inference.names.count, "unique names")
        XCTAssertEqual(PassPipeline.inference.names, ["fold_constants", "remove_no_op_nodes", "merge_reshapes_transposes", "cancel_transpose_pairs", "sink_transposes",
                                                      "fuse_pad_into_conv", "fold_batchnorm_into_conv", "fuse_activation",
                                                      "fuse_residual_add"])
        var g = try padConvGraph()
        XCTAssertEqual(try PassPipeline.inference.run(on: &g), ["fuse_pad_into_conv"])
        XCTAssertEqual(g.nodes.count, 1)
        let once = g
        XCTAssertEqual(try PassPipeline.inference.run(on: &g), [])
        XCTAssertEqual(g, once)
    }

    func testVerifiesAfterAChangeAndNamesTheBrokenPass() throws {
        var g = try padConvGraph()
        let pipeline = try PassPipeline([FusePadIntoConv(), BreakConvShapes()])
        XCTAssertThrowsError(try pipeline.run(on: &g)) { error in
            guard case let GraphError.passProducedInvalidGraph(pass, own, cause) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(cause?.error is GraphError, "the verifier's error is kept as a value: \(String(describing: cause))")
            let message = cause.appended(to: own)
            XCTAssertEqual(pass, "break_conv_shapes")
            XCTAssertTrue(message.contains("'y'"), message)
            let text = "\(error)"
            XCTAssertTrue(text.contains("graph pass 'break_conv_shapes' produced an invalid graph"), text)
            XCTAssertTrue(text.contains("--disable-pass break_conv_shapes"), text)
        }
        // Disabled, the broken pass does not run.
        var h = try padConvGraph()
        XCTAssertEqual(try pipeline.run(on: &h, disabling: ["break_conv_shapes"]), ["fuse_pad_into_conv"])
    }

    func testDisablingSkipsThePass() throws {
        let original = try padConvGraph()
        var g = original
        let counting = CountingPass("count")
        let pipeline = try PassPipeline([FusePadIntoConv(), counting])
        XCTAssertEqual(try pipeline.run(on: &g, disabling: ["fuse_pad_into_conv", "count"]), [])
        XCTAssertEqual(g, original)
        XCTAssertEqual(counting.calls, 0)
        XCTAssertEqual(try pipeline.run(on: &g, disabling: ["fuse_pad_into_conv"]), [])
        XCTAssertEqual(counting.calls, 1)
    }

    func testUnknownDisabledNameIsAnErrorListingKnownPasses() throws {
        let original = try padConvGraph()
        var g = original
        XCTAssertThrowsError(try PassPipeline.inference.run(on: &g, disabling: ["fuse_pad", "fuse_pad_into_conv"])) { error in
            XCTAssertEqual(error as? GraphError, .unknownPass(name: "fuse_pad", known: PassPipeline.inference.names))
            XCTAssertEqual("\(error)", "unknown graph pass 'fuse_pad'; the known passes are: \(PassPipeline.inference.names.joined(separator: ", "))")
        }
        XCTAssertEqual(g, original, "no pass runs when a name is unknown")
    }

    func testDuplicatePassNamesAreRejected() {
        XCTAssertThrowsError(try PassPipeline([FusePadIntoConv(), FusePadIntoConv()])) { error in
            XCTAssertEqual(error as? GraphError, .duplicatePassName("fuse_pad_into_conv"))
        }
    }
}
