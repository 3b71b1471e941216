// The rank-N shape and data-movement layer mappers (Sources/CoreMLFormat/Import/Layers/ShapeImport.swift)
// run on the Fixtures/coreml_layers cases of their layer types: each case's layers go through
// LayerImporter on a builder whose inputs keep Core ML's exact shapes (EXACT_ARRAY_MAPPING), and
// the graph's outputs must match the case's NumPy reference (computed from NeuralNetwork.proto's
// comments) within its tolerance. Hand-built specs cover configurations the fixtures do not.
@testable import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class ShapeLayerImportTests: XCTestCase {
    /// The layer types of this family.
    static let family: Set<String> = [
        "reshapeStatic", "reshapeDynamic", "reshapeLike", "rankPreservingReshape", "expandDims", "squeeze", "flattenTo2D",
        "transpose", "concatND", "splitND", "sliceStatic", "sliceDynamic", "sliceBySize", "stack", "tile", "gather", "gatherND",
        "gatherAlongAxis", "scatter", "scatterND", "scatterAlongAxis", "getShape", "broadcastToStatic", "broadcastToDynamic",
        "broadcastToLike", "fillStatic", "fillDynamic", "fillLike", "rangeStatic", "rangeDynamic", "reverse", "reverseSeq",
        "slidingWindows", "oneHot", "whereNonZero", "upperTriangular", "lowerTriangular", "matrixBandPart", "argSort", "topK",
        "cumSum", "embeddingND", "loadConstantND", "copy", "batchedMatmul", "constantPad",
    ]

    /// Builds the graph of `layers` with inputs of exact shapes `inputs` (name, shape), outputs `outputs`.
    static func importExact(layers: [Spec.NeuralNetworkLayer], inputs: [(String, [Int])], outputs: [String],
                            description: Spec.ModelDescription? = nil) throws -> (Graph?, [CoreMLImportError.LayerProblem]) {
        let b = ImportBuilder(fileName: "test.mlmodel")
        for (n, s) in inputs {
            b.addInput(n, s)
            b.blobs[n] = n
        }
        let desc = description ?? Spec.ModelDescription()
        let ctx = LayerImporter(builder: b, layers: layers, consumers: [:], description: desc)
        for (i, l) in layers.enumerated() { ctx.importLayer(l, index: i) }
        if !b.problems.isEmpty { return (nil, b.problems) }
        var outs: [String] = []
        for o in outputs {
            let t = try b.blob(o)
            if t != o { b.renameTensor(t, to: o) }
            outs.append(o)
        }
        var g = Graph(inputs: b.inputs, outputs: outs, nodes: b.nodes, tensorTypes: b.types)
        try g.inferShapes()
        try g.verify()
        return (g, [])
    }

    func testFamilyFixturesMatchTheirReferences() throws {
        let all = try CoreMLLayerFixtureTests.cases().filter { Self.family.contains($0.layer_type) }
        XCTAssertGreaterThan(all.count, 60)
        var passed: [String] = [], refused: [String] = []
        for c in all {
            let spec = try Spec.Model.load(contentsOf: CoreMLLayerFixtureTests.dir.appendingPathComponent(c.name)
                .appendingPathComponent("model.mlmodel").path)
            guard case let .neuralNetwork(nn) = spec.type, let desc = spec.description else {
                XCTFail("\(c.name): not a neural network"); continue
            }
            let (graph, problems) = try Self.importExact(layers: nn.layers, inputs: c.inputs.map { ($0.name, $0.shape) },
                                                         outputs: c.outputs.map(\.name), description: desc)
            guard let graph else {
                refused.append("\(c.name): " + problems.map { "\($0.layer) (\($0.type)): \($0.reason)" }.joined(separator: "; "))
                continue
            }
            do {
                let (ratio, detail) = try CoreMLLayerFixtureTests.run(c, graph: graph)
                XCTAssertLessThanOrEqual(ratio, 1, "\(c.name): \(detail)")
                if ratio <= 1 { passed.append(c.name) }
            } catch {
                XCTFail("\(c.name): imports but does not run: \(error)")
            }
        }
        print("ShapeLayerImportTests: \(passed.count) of \(all.count) family cases match; refused (\(refused.count)):")
        for r in refused { print("  " + r) }
        XCTAssertGreaterThanOrEqual(passed.count, 60)
    }
}
