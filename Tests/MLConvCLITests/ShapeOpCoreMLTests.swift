// Core ML import of reorganizeData (SPACE_TO_DEPTH, DEPTH_TO_SPACE, PIXEL_SHUFFLE) and dot, run
// with MLRuntime against the formulas in Core ML's CHW layout; export of the issue-9 ops
// (reorganizeData, matmul by a constant, and explicit refusals).
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class ShapeOpCoreMLTests: XCTestCase {
    static func array(_ name: String, _ shape: [Int64]) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: shape, dataType: .float32))))
    }

    static func model(_ ins: [Spec.FeatureDescription], _ outs: [Spec.FeatureDescription], _ layers: [Spec.NeuralNetworkLayer]) -> Spec.Model {
        Spec.Model(specificationVersion: 5, description: Spec.ModelDescription(input: ins, output: outs),
                   type: .neuralNetwork(Spec.NeuralNetwork(layers: layers)))
    }

    /// Imports a one-layer reorganizeData model on x [C, H, W] and runs it.
    func reorganize(_ mode: Spec.ReorganizeDataLayerParams.ReorganizationType, b: Int, c: Int, h: Int, w: Int,
                    out: [Int]) throws -> (x: [Float], y: [Float]) {
        let m = Self.model([Self.array("x", [Int64(c), Int64(h), Int64(w)])], [Self.array("y", out.map(Int64.init))],
                           [Spec.NeuralNetworkLayer(name: "r", input: ["x"], output: ["y"],
                                                    layer: .reorganizeData(Spec.ReorganizeDataLayerParams(mode: mode, blockSize: UInt64(b))))])
        let g = try CoreMLImporter.graph(from: m, fileName: "reorganize.mlmodel")
        let model = try Model(graph: g, configuration: .init(referenceOnly: true))
        let x = (0..<(c * h * w)).map { Float($0) }
        let y = try model.prediction(from: ["x": try NDArray(shape: [1, c, h, w], scalars: x)])["y"]
        XCTAssertEqual(y?.shape, [1] + out)
        return (x, y?.scalars ?? [])
    }

    func testReorganizeDataImportsInDCRAndCRDOrder() throws {
        let (b, c, h, w) = (2, 3, 2, 3)
        // DEPTH_TO_SPACE (DCR): y[c, h·b+i, w·b+j] = x[(i·b + j)·C + c, h, w].
        let (x, y) = try reorganize(.depthToSpace, b: b, c: c * b * b, h: h, w: w, out: [c, h * b, w * b])
        // PIXEL_SHUFFLE (CRD): y[c, h·b+i, w·b+j] = x[c·b² + i·b + j, h, w].
        let (_, ps) = try reorganize(.pixelShuffle, b: b, c: c * b * b, h: h, w: w, out: [c, h * b, w * b])
        for cc in 0..<c { for hh in 0..<h { for ww in 0..<w { for i in 0..<b { for j in 0..<b {
            let o = (cc * h * b + hh * b + i) * (w * b) + ww * b + j
            XCTAssertEqual(y[o], x[(((i * b + j) * c + cc) * h + hh) * w + ww], "DEPTH_TO_SPACE at \(o)")
            XCTAssertEqual(ps[o], x[((cc * b * b + i * b + j) * h + hh) * w + ww], "PIXEL_SHUFFLE at \(o)")
        } } } } }
        // SPACE_TO_DEPTH is DEPTH_TO_SPACE's inverse: y[(i·b + j)·C + c, h, w] = x[c, h·b+i, w·b+j].
        let (x2, s) = try reorganize(.spaceToDepth, b: b, c: c, h: h * b, w: w * b, out: [c * b * b, h, w])
        for cc in 0..<c { for hh in 0..<h { for ww in 0..<w { for i in 0..<b { for j in 0..<b {
            XCTAssertEqual(s[(((i * b + j) * c + cc) * h + hh) * w + ww], x2[(cc * h * b + hh * b + i) * (w * b) + ww * b + j])
        } } } } }
    }

    func testDotImportsAsMatMulAndCosineSimilarity() throws {
        let layer = { (cos: Bool) in Spec.NeuralNetworkLayer(name: "d", input: ["a", "b"], output: ["y"], layer: .dot(cosineSimilarity: cos)) }
        let ins = [Self.array("a", [4]), Self.array("b", [4])]
        let g = try CoreMLImporter.graph(from: Self.model(ins, [Self.array("y", [1])], [layer(false)]), fileName: "dot.mlmodel")
        let model = try Model(graph: g, configuration: .init(referenceOnly: true))
        let out = try model.prediction(from: ["a": try NDArray(shape: [1, 4], scalars: [1, 2, 3, 4]),
                                              "b": try NDArray(shape: [1, 4], scalars: [2, -1, 0.5, 1])])
        XCTAssertEqual(out["y"]?.scalars, [5.5])
        // cosineSimilarity: (a·b)/(‖a‖‖b‖) = 5.5 / (√30 · √6.25).
        let gc = try CoreMLImporter.graph(from: Self.model(ins, [Self.array("y", [1])], [layer(true)]), fileName: "cos.mlmodel")
        let cos = try Model(graph: gc, configuration: .init(referenceOnly: true))
            .prediction(from: ["a": try NDArray(shape: [1, 4], scalars: [1, 2, 3, 4]), "b": try NDArray(shape: [1, 4], scalars: [2, -1, 0.5, 1])])
        XCTAssertEqual(Double(try XCTUnwrap(cos["y"]?.scalars.first)), 5.5 / (30.0.squareRoot() * 6.25.squareRoot()), accuracy: 1e-6)
    }

    func testExportLowersOrRefusesShapeOps() throws {
        let x = ValueInfo(name: "x", type: TensorType([1, 4, 6, 3]))
        var g = Graph(inputs: [x], outputs: ["y"], nodes: [
            Node(name: "s2d", op: .spaceToDepth(blockSize: 2), inputs: ["x"], outputs: ["s"]),
            Node(name: "d2s", op: .depthToSpace(blockSize: 2), inputs: ["s"], outputs: ["d"]),
            Node(name: "mm", op: .matmul(MatMulAttributes()), inputs: ["d"], outputs: ["y"], weights: ["y": randomConstant([3, 5])]),
        ])
        try g.inferShapes()
        let spec = try CoreMLExporter.model(from: g)
        guard case let .neuralNetwork(nn) = spec.type else { return XCTFail("not a neural network") }
        let types = nn.layers.map { $0.layer.typeName }
        XCTAssertEqual(types, ["reorganizeData", "reorganizeData", "convolution"], "\(types)")

        var bad = Graph(inputs: [ValueInfo(name: "a", type: TensorType([2, 3, 4])), ValueInfo(name: "b", type: TensorType([2, 4, 5]))],
                        outputs: ["c", "t"], nodes: [
                            Node(name: "mm", op: .matmul(MatMulAttributes()), inputs: ["a", "b"], outputs: ["c"]),
                            Node(name: "tile", op: .tile(reps: [1, 2, 1]), inputs: ["a"], outputs: ["t"]),
                        ])
        try bad.inferShapes()
        XCTAssertThrowsError(try CoreMLExporter.model(from: bad, options: .classicOnly)) { e in
            let m = "\(e)"
            XCTAssertTrue(m.contains("batchedMatmul"), m)
            XCTAssertTrue(m.contains("tile"), m)
        }
        // The rank-N writer has both layers.
        let nd = try XCTUnwrap(try CoreMLExporter.model(from: bad).neuralNetwork)
        XCTAssertEqual(nd.layers.map(\.layer.typeName), ["batchedMatmul", "tile"])
    }
}
