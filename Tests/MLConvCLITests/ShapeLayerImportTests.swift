// The rank-N shape and data-movement layers (Sources/CoreMLFormat/Import/Layers/ShapeImport.swift,
// ShapeDynamicImport.swift): the Fixtures/coreml_layers cases of their layer types (NumPy
// references computed from NeuralNetwork.proto's comments) through the importer, and hand-built
// EXACT_ARRAY_MAPPING specs for the paths the fixtures do not reach, checked against the proto's
// formulas written out here (numpy.tril / triu, batchedMatmul's column-major weights, Python
// slicing) and typed refusals.
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class ShapeLayerImportTests: XCTestCase {
    // The family's fixtures (Fixtures/coreml_layers) are all checked by CoreMLLayerFixtureTests.

    // MARK: hand-built specs

    static func array(_ name: String, _ shape: [Int]) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: shape.map(Int64.init), dataType: .float32))))
    }

    /// A spec-4 EXACT_ARRAY_MAPPING network.
    static func model(_ ins: [(String, [Int])], _ outs: [(String, [Int])], _ layers: [Spec.NeuralNetworkLayer]) -> Spec.Model {
        Spec.Model(specificationVersion: 4,
                   description: Spec.ModelDescription(input: ins.map { array($0.0, $0.1) }, output: outs.map { array($0.0, $0.1) }),
                   type: .neuralNetwork(Spec.NeuralNetwork(layers: layers, arrayInputShapeMapping: .exact)))
    }

    static func layer(_ l: Spec.NeuralNetworkLayer.Layer, _ ins: [String] = ["x"], _ outs: [String] = ["y"]) -> Spec.NeuralNetworkLayer {
        Spec.NeuralNetworkLayer(name: "l", input: ins, output: outs, layer: l)
    }

    /// Imports and runs `m` on `feeds` (name → (shape, values)); returns output "y".
    static func run(_ m: Spec.Model, _ feeds: [String: ([Int], [Float])]) throws -> NDArray {
        let g = try CoreMLImporter.graph(from: m, fileName: "test.mlmodel")
        let model = try Model(graph: g, configuration: .init(referenceOnly: true))
        let out = try model.prediction(from: try feeds.mapValues { try NDArray(shape: $0.0, scalars: $0.1) })
        return try XCTUnwrap(out["y"])
    }

    /// tril with k < 0 and triu with k > 0 are not bands around the diagonal (the select path).
    func testTriangularLayersOffTheDiagonalFollowNumPy() throws {
        let shape = [2, 3, 4]
        let x = (0..<24).map { Float($0) - 7.5 }
        for (k, lower) in [(-1, true), (2, true), (2, false), (-2, false)] {
            let l: Spec.NeuralNetworkLayer.Layer = lower ? .other(.lowerTriangular(.init(k: Int64(k)))) : .other(.upperTriangular(.init(k: Int64(k))))
            let y = try Self.run(Self.model([("x", shape)], [("y", shape)], [Self.layer(l)]), ["x": (shape, x)])
            XCTAssertEqual(y.shape, shape)
            for i in 0..<24 {
                let (m, n) = ((i / 4) % 3, i % 4)
                // numpy.tril keeps n − m ≤ k; numpy.triu keeps n − m ≥ k.
                let keep = lower ? n - m <= k : n - m >= k
                XCTAssertEqual(y.scalars[i], keep ? x[i] : 0, "\(lower ? "tril" : "triu")(k=\(k)) at \(i)")
            }
        }
    }

    /// One input: y = x · W + bias with W [X1, X2] stored column-major; a rank-1 x gives [X2].
    func testBatchedMatmulWithStoredColumnMajorWeights() throws {
        let (x1, x2) = (3, 2)
        let w: [[Float]] = [[1, -2], [0.5, 3], [-1, 4]]  // W[i][j], i < X1, j < X2
        let columnMajor = (0..<x2).flatMap { j in (0..<x1).map { i in w[i][j] } }
        let bias: [Float] = [0.25, -0.5]
        let p = Spec.BatchedMatMulLayerParams(weightMatrixFirstDimension: UInt64(x1), weightMatrixSecondDimension: UInt64(x2),
                                              hasBias: true, weights: Spec.WeightParams(columnMajor), bias: Spec.WeightParams(bias))
        let x: [Float] = [2, -1, 0.5]
        let y = try Self.run(Self.model([("x", [3])], [("y", [2])], [Self.layer(.batchedMatmul(p))]), ["x": ([3], x)])
        XCTAssertEqual(y.shape, [2])
        for j in 0..<x2 {
            let want = (0..<x1).reduce(bias[j]) { $0 + x[$1] * w[$1][j] }
            XCTAssertEqual(y.scalars[j], want, accuracy: 1e-6)
        }
    }

    /// Squeezing every axis, or slicing out one element with every squeeze mask, leaves [1]
    /// (Core ML blobs have rank ≥ 1; the proto's squeeze example (1,) → (1,)).
    func testFullSqueezesKeepRankOne() throws {
        let sq = try Self.run(Self.model([("x", [1, 1])], [("y", [1])], [Self.layer(.squeeze(axes: [], squeezeAll: true))]),
                              ["x": ([1, 1], [4.5])])
        XCTAssertEqual(sq.shape, [1])
        XCTAssertEqual(sq.scalars, [4.5])
        let p = Spec.SliceStaticLayerParams(beginIds: [1, -1], beginMasks: [false, false], endIds: [2, 0], endMasks: [false, true],
                                            strides: [1, 1], squeezeMasks: [true, true])
        let x = (0..<6).map(Float.init)
        let sl = try Self.run(Self.model([("x", [2, 3])], [("y", [1])], [Self.layer(.sliceStatic(p))]), ["x": ([2, 3], x)])
        XCTAssertEqual(sl.shape, [1])
        XCTAssertEqual(sl.scalars, [x[1 * 3 + 2]])  // x[1, -1]
    }

    /// sliceDynamic with a squeeze mask and a negative begin read at prediction time:
    /// x[begin0, begin1:5:2] with begin = [-1, 1] is x[3, [1, 3]].
    func testSliceDynamicSqueezeAndNegativeBegin() throws {
        let p = Spec.SliceDynamicLayerParams(beginMasks: [false, false], endIds: [0, 5], endMasks: [false, false], strides: [1, 2],
                                             squeezeMasks: [true, false])
        let x = (0..<20).map { Float($0) * 0.5 }
        let y = try Self.run(Self.model([("x", [4, 5]), ("begin", [2])], [("y", [2])], [Self.layer(.other(.sliceDynamic(p)), ["x", "begin"])]),
                             ["x": ([4, 5], x), "begin": ([2], [-1, 1])])
        XCTAssertEqual(y.shape, [2])
        XCTAssertEqual(y.scalars, [x[3 * 5 + 1], x[3 * 5 + 3]])
    }

    /// topK with K read from a second input: the K largest along axis 1 in descending order and
    /// their indices (ties: lower index first), as the proto's TopKLayerParams comment says.
    func testTopKWithKFromAnInput() throws {
        let x: [Float] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]  // [2, 6]
        let l = Spec.NeuralNetworkLayer(name: "tk", input: ["x", "k"], output: ["y", "i"],
                                        layer: .other(.topK(.init(axis: -1, k: 1))))
        let m = Self.model([("x", [2, 6]), ("k", [1])], [("y", [2, 3]), ("i", [2, 3])], [l])
        let model = try Model(graph: try CoreMLImporter.graph(from: m, fileName: "topk.mlmodel"), configuration: .init(referenceOnly: true))
        let out = try model.prediction(from: ["x": try NDArray(shape: [2, 6], scalars: x), "k": try NDArray(shape: [1], scalars: [3])])
        var values: [Float] = [], indices: [Float] = []
        for r in 0..<2 {
            let row = Array(x[(r * 6)..<(r * 6 + 6)])
            let order = row.indices.sorted { row[$0] > row[$1] || (row[$0] == row[$1] && $0 < $1) }.prefix(3)
            values += order.map { row[$0] }
            indices += order.map(Float.init)
        }
        XCTAssertEqual(out["y"]?.shape, [2, 3])
        XCTAssertEqual(out["y"]?.scalars, values)
        XCTAssertEqual(out["i"]?.scalars, indices)
    }

    /// Invalid parameters are typed import errors naming the layer and the problem, never traps.
    func testInvalidParametersAreTypedErrors() throws {
        let cases: [(Spec.NeuralNetworkLayer, [(String, [Int])], String)] = [
            (Self.layer(.transpose(axes: [0, 0])), [("x", [2, 3])], "permutation"),
            (Self.layer(.transpose(axes: [UInt64.max, 0])), [("x", [2, 3])], "axes"),
            (Self.layer(.splitND(.init(axis: 0, splitSizes: [1, 1, 1])), ["x"], ["a", "b"]), [("x", [3, 2])], "splitSizes"),
            (Self.layer(.gather(axis: 5), ["x", "i"]), [("x", [3, 2]), ("i", [2])], "axis"),
            (Self.layer(.reshapeStatic(targetShape: [-1, -1])), [("x", [2, 3])], "targetShape"),
            (Self.layer(.constantPad(.init(value: 0, padAmounts: [1, 2]))), [("x", [2, 3])], "padAmounts"),
            (Self.layer(.other(.sliceDynamic(.init())), ["x", "b", "e", "s", "bm"]),
             [("x", [2, 3]), ("b", [2]), ("e", [2]), ("s", [2]), ("bm", [2])], "masks"),
        ]
        for (layer, ins, word) in cases {
            let m = Self.model(ins, [(layer.output[0], [1])], [layer])
            XCTAssertThrowsError(try CoreMLImporter.graph(from: m, fileName: "bad.mlmodel"), "\(layer.layer.typeName)") { error in
                guard case let CoreMLImportError.unsupportedLayers(_, problems) = error else {
                    return XCTFail("\(layer.layer.typeName): \(error)")
                }
                XCTAssertEqual(problems.first?.type, layer.layer.typeName)
                XCTAssertTrue(problems.first?.reason.contains(word) == true, "\(layer.layer.typeName): \(problems)")
            }
        }
    }
}
