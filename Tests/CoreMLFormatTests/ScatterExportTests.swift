// Core ML export of scatter, scatterND, scatterAlongAxis, reverse, reverseSequence, argsort,
// einsum, slidingWindows and nonMaximumSuppression: an explicit refusal naming the node, the
// Core ML 3 rank-N layer and why the classic NeuralNetwork writer (`writesRankNLayers` false) cannot
// emit it. The rank-N writer exports them: RankNExportTests, RankNExportRoundTripTests.
import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

final class ScatterExportTests: XCTestCase {
    static let kinds: [OpKind] = [.scatter, .scatterND, .scatterAlongAxis, .reverse, .reverseSequence, .argsort, .einsum,
                                  .slidingWindows, .nonMaximumSuppression]

    func testEverySampleIsRefusedWithTheReason() throws {
        for kind in Self.kinds {
            for (i, (node, inputs)) in OpSamples.samples(for: kind).enumerated() {
                let g = Graph(inputs: zip(node.inputs, inputs).map { ValueInfo(name: $0, type: $1) }, outputs: node.outputs, nodes: [node])
                XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly), "\(kind) sample \(i)") { error in
                    guard let e = error as? CoreMLExportError else { return XCTFail("\(kind): \(error)") }
                    guard let p = e.problems.first(where: { $0.node == node.name }) else {
                        return XCTFail("\(kind) sample \(i): node not listed in \(e.problems.map(\.node))")
                    }
                    XCTAssertEqual(p.op, node.op.name)
                    XCTAssertTrue(p.reason.contains("specification 4"), p.reason)
                    XCTAssertTrue(p.reason.contains("specification 1–3"), p.reason)
                    XCTAssertFalse(p.suggestion.isEmpty)
                }
            }
        }
    }

    func testTheReasonNamesTheCoreMLLayer() throws {
        let layers: [OpKind: String] = [.scatter: "ScatterLayerParams", .scatterND: "ScatterNDLayerParams",
                                        .scatterAlongAxis: "ScatterAlongAxisLayerParams", .reverse: "ReverseLayerParams",
                                        .reverseSequence: "ReverseSeqLayerParams", .argsort: "ArgSortLayerParams",
                                        .einsum: "EinsumLayerParams", .slidingWindows: "SlidingWindowsLayerParams",
                                        .nonMaximumSuppression: "NonMaximumSuppressionLayerParams"]
        XCTAssertEqual(Set(layers.keys), Set(Self.kinds))
        for (kind, layer) in layers {
            let (node, inputs) = try XCTUnwrap(OpSamples.samples(for: kind).first)
            let g = Graph(inputs: zip(node.inputs, inputs).map { ValueInfo(name: $0, type: $1) }, outputs: node.outputs, nodes: [node])
            XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly)) { error in
                let reason = (error as? CoreMLExportError)?.problems.first { $0.node == node.name }?.reason ?? ""
                XCTAssertTrue(reason.contains(layer), "\(kind): \(reason)")
            }
        }
    }

    /// A float32 reverse in the middle of an otherwise exportable graph is still refused (the
    /// writer does not silently drop or reorder it).
    func testRefusalInsideAnExportableGraph() throws {
        let x = ValueInfo(name: "x", type: TensorType([1, 4, 4, 3]))
        let nodes = [Node(name: "relu", op: .activation(.relu), inputs: ["x"], outputs: ["a"]),
                     Node(name: "flip", op: .reverse(axes: [2]), inputs: ["a"], outputs: ["y"])]
        XCTAssertThrowsError(try CoreMLExporter.model(from: Graph(inputs: [x], outputs: ["y"], nodes: nodes), options: .classicOnly)) { error in
            XCTAssertEqual((error as? CoreMLExportError)?.problems.map(\.node), ["flip"])
        }
    }
}
