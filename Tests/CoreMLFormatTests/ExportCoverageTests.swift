@testable import CoreMLFormat
import MLGraph
import TestSupport
import XCTest

/// Every op kind either exports to Core ML NeuralNetwork layers (with a row in the exporter's
/// layer table) or is refused with a reason and a suggestion naming the node — never a crash or
/// an unexplained failure.
final class ExportCoverageTests: XCTestCase {
    func testEveryOpKindIsExportedOrRefusedWithAReason() throws {
        var exported: [OpKind] = [], refused: [OpKind] = []
        for kind in OpKind.allCases {
            for (i, (sample, types)) in OpSamples.samples(for: kind).enumerated() {
                var node = sample
                node.name = "\(kind.rawValue)_\(i)"
                node.inputs = types.indices.map { "in\($0)" }
                node.outputs = sample.outputs.indices.map { "out\($0)" }
                var g = Graph(inputs: zip(node.inputs, types).map { ValueInfo(name: $0, type: $1) }, outputs: node.outputs, nodes: [node])
                try g.inferShapes()
                do {
                    _ = try CoreMLExporter.export(g)
                    exported.append(kind)
                    XCTAssertTrue(CoreMLExporter.layerTable.contains { row in
                        row.irOp.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).contains { $0 == kind.rawValue }
                    },
                                  "\(kind) exports but has no row in CoreMLExporter.layerTable")
                } catch let e as CoreMLExportError {
                    refused.append(kind)
                    XCTAssertFalse(e.problems.isEmpty, "\(kind): \(e)")
                    for p in e.problems {
                        XCTAssertFalse(p.reason.isEmpty, "\(kind): no reason in \(p)")
                        XCTAssertFalse(p.reason.contains(CoreMLExporter.missingRefusal),
                                       "\(kind): neither lowered by CoreMLExporter nor refused by its definition's neuralNetworkExportRefusal")
                        XCTAssertFalse(p.suggestion.isEmpty, "\(kind): no suggestion in \(p)")
                    }
                }
            }
        }
        // The classic layer set covers the original Keras-shaped ops.
        for kind in [OpKind.conv2d, .dense, .batchNorm, .pool2d, .concat, .softmax] {
            XCTAssertTrue(exported.contains(kind), "\(kind) no longer exports")
        }
        XCTAssertFalse(refused.isEmpty)
    }
}
