// MARK: rank-N export (issue 10)
// The writer's choice between the classic (RANK5) network and the rank-N (EXACT_ARRAY_MAPPING)
// one, and the specification version each gets. Numeric round trips of every op are in
// MLConvCLITests/RankNExportRoundTripTests.swift.
@testable import CoreMLFormat
import MLGraph
import TestSupport
import XCTest

extension CoreMLExportOptions {
    /// The writer restricted to classic (spec 1–3) networks.
    static var classicOnly: CoreMLExportOptions {
        var o = CoreMLExportOptions()
        o.writesRankNLayers = false
        return o
    }
}

final class RankNExportTests: XCTestCase {
    func testClassicGraphsStayRank5AndSpec1() throws {
        let r = try CoreMLExporter.export(ExportGraphs.conv())
        XCTAssertEqual(r.model.specificationVersion, 1)
        XCTAssertEqual(r.model.neuralNetwork?.arrayInputShapeMapping, .rank5)
    }

    func testAnOpWithoutClassicLayerMakesAnExactSpec4Network() throws {
        let g = ExportGraphs.single(.squeeze(axes: [1]), shape: [2, 1, 5])
        let r = try CoreMLExporter.export(g)
        XCTAssertEqual(r.model.specificationVersion, 4)
        let nn = try XCTUnwrap(r.model.neuralNetwork)
        XCTAssertEqual(nn.arrayInputShapeMapping, .exact)
        XCTAssertEqual(nn.layers.map(\.layer.typeName), ["squeeze"])
        guard case let .multiArray(t)? = r.model.description?.input.first?.type?.kind else { return XCTFail("no multi-array input") }
        XCTAssertEqual(t.shape, [2, 1, 5], "rank-N inputs keep their exact shape, batch included")
        XCTAssertTrue(r.versionReasons.contains { $0.version == 4 && $0.reason.contains("'n'") }, "\(r.versionReasons)")
        XCTAssertThrowsError(try CoreMLExporter.export(g, options: .classicOnly))
    }

    func testIOS14LayersNeedSpec5() throws {
        let r = try CoreMLExporter.export(ExportGraphs.single(.cumsum(CumsumAttributes(axis: 1, exclusive: false, reverse: false)), shape: [1, 6]))
        XCTAssertEqual(r.model.specificationVersion, 5)
        XCTAssertTrue(r.versionReasons.contains { $0.version == 5 && $0.reason.contains("cumSum") }, "\(r.versionReasons)")
    }

    func testLayoutOpsAreClassicLayersBetweenTransposes() throws {
        // conv (classic) then a squeeze-free sliceByIndex on W (rank-N only).
        var g = ExportGraphs.conv()
        g.nodes.append(Node(name: "cut", op: .sliceByIndex(SliceByIndexAttributes(
            begin: [0, 0, 1, 0], end: [0, 0, 0, 0], stride: [1, 1, 1, 1], beginMask: [true, true, false, true],
            endMask: [true, true, true, true], squeezeMask: [false, false, false, false])), inputs: ["y"], outputs: ["z"]))
        g.outputs = ["z"]
        let r = try CoreMLExporter.export(g)
        let types = try XCTUnwrap(r.model.neuralNetwork).layers.map(\.layer.typeName)
        XCTAssertEqual(Array(types.prefix(3)), ["transpose", "convolution", "activation"])
        XCTAssertEqual(types.suffix(2), ["transpose", "sliceStatic"])
    }

    func testIntegerInputsAreInt32Arrays() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 3])), ValueInfo(name: "i", type: TensorType([2], .int32))],
                      outputs: ["y"], nodes: [Node(name: "g", op: .gather(axis: 1), inputs: ["x", "i"], outputs: ["y"])])
        let r = try CoreMLExporter.export(g)
        let inputs = try XCTUnwrap(r.model.description?.input)
        guard case let .multiArray(t)? = inputs.first(where: { $0.name == "i" })?.type?.kind else { return XCTFail("no index input") }
        XCTAssertEqual(t.dataType, .int32)
    }

    func testRankNRefusalsNameTheNodeAndSayWhyTheRankNWriterWasNeeded() throws {
        // squeeze needs the rank-N writer; the masked recurrent-only op then cannot be written.
        let nodes = [
            Node(name: "sq", op: .squeeze(axes: [2]), inputs: ["x"], outputs: ["a"]),
            Node(name: "mask", op: .sequenceMask(value: 0), inputs: ["a"], outputs: ["m"]),
        ]
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 1, 3]))], outputs: ["m"], nodes: nodes)
        XCTAssertThrowsError(try CoreMLExporter.export(g)) { error in
            guard let e = error as? CoreMLExportError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.problems.map(\.node), ["mask"])
            XCTAssertTrue(e.problems[0].reason.contains("'sq' need the rank-N writer"), "\(e)")
        }
    }

    func testImageInputsAreTransposedToNHWC() throws {
        var g = ExportGraphs.single(.cumsum(CumsumAttributes(axis: 3, exclusive: false, reverse: false)), shape: [1, 4, 4, 3])
        g.description.inputs = [FeatureDescription(name: "x", image: ImageFeature(width: 4, height: 4, colorSpace: .rgb))]
        let r = try CoreMLExporter.export(g)
        let nn = try XCTUnwrap(r.model.neuralNetwork)
        XCTAssertEqual(nn.imageInputShapeMapping, .rank4)
        XCTAssertEqual(nn.layers.first?.layer, .transpose(axes: [0, 2, 3, 1]))
        XCTAssertEqual(nn.layers.first?.input, ["x"])
        XCTAssertEqual(r.model.description?.input.first?.name, "x")
    }

    /// Regression: run-time dimensions (−1) reaching a rank-N lowering are a typed refusal, not a
    /// trap converting −1 to an unsigned layer parameter.
    func testRunTimeDimensionsAreRefusedNotTrapped() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, TensorType.unknown, 4]))], outputs: ["a", "b"],
                      nodes: [Node(name: "halves", op: .split(SplitAttributes(axis: 2, numSplits: 2)), inputs: ["x"], outputs: ["a", "b"])])
        XCTAssertThrowsError(try CoreMLExporter.export(g)) { error in
            guard let e = error as? CoreMLExportError else { return XCTFail("\(error)") }
            XCTAssertTrue(e.problems.contains { $0.node == "halves" && $0.reason.contains("run time") }, "\(e)")
        }
    }
}
