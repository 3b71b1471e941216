// Core ML export of conv1d / pool1d (k×1 windows on the steps axis of the rank-3 layout), the
// reasoned refusal of conv3d / pool3d, and softmax / concat with negative axes.
import CoreMLFormat
import MLGraph
import TestSupport
import XCTest

final class ConvPoolNDExportTests: XCTestCase {
    func exportLayers(_ g: Graph, file: StaticString = #filePath, line: UInt = #line) throws -> [Spec.NeuralNetworkLayer] {
        let r = try CoreMLExporter.export(g)
        XCTAssertEqual(try Spec.Model.decode(r.model.encode()), r.model, "encode → decode changed the spec", file: file, line: line)
        return try XCTUnwrap(r.model.neuralNetwork?.layers, file: file, line: line)
    }

    func testConv1DIsAKx1Convolution() throws {
        let w = randomConstant([6, 2, 3], seed: 4), b = randomConstant([6], seed: 5)
        for (padding, expected) in [(SpatialPadding.same, Spec.ConvolutionLayerParams.Padding.same(.init(asymmetryMode: .bottomRightHeavy))),
                                    (.valid, CoreMLExporterTestAmounts.valid(0, 0)),
                                    (.explicit(before: [2], after: [1]), CoreMLExporterTestAmounts.valid(2, 1))] {
            let op = Op.conv1d(ConvNDAttributes(kernel: [3], strides: [2], dilations: [2], padding: padding, groups: 2,
                                                outputChannels: 6, activation: .relu))
            let layers = try exportLayers(ExportGraphs.single(op, shape: [1, 11, 4], weights: ["weight": w, "bias": b]))
            XCTAssertEqual(layers.map(\.layer.typeName), ["convolution", "activation"])
            guard case let .convolution(p) = layers[0].layer else { return XCTFail("not a convolution") }
            XCTAssertEqual(p.kernelSize, [3, 1], "the steps are Core ML's H axis")
            XCTAssertEqual(p.stride, [2, 1])
            XCTAssertEqual(p.dilationFactor, [2, 1])
            XCTAssertEqual(p.nGroups, 2)
            XCTAssertEqual(p.kernelChannels, 2)
            XCTAssertEqual(p.outputChannels, 6)
            XCTAssertEqual(p.padding, expected, "\(padding)")
            XCTAssertEqual(p.weights?.floatValue, w.floats(), "[Cout, Cin/g, k] has the bytes of [Cout, Cin/g, k, 1]")
            XCTAssertEqual(p.bias?.floatValue, b.floats())
        }
    }

    func testPool1DIsAKx1Pooling() throws {
        for kind in PoolKind.allCases {
            let op = Op.pool1d(PoolNDAttributes(kind: kind, kernel: [3], strides: [2], padding: .explicit(before: [1], after: [0])))
            let layers = try exportLayers(ExportGraphs.single(op, shape: [1, 9, 5]))
            guard case let .pooling(p) = layers.first?.layer else { return XCTFail("not a pooling") }
            XCTAssertEqual(p.type, kind == .max ? .max : .average)
            XCTAssertEqual(p.kernelSize, [3, 1])
            XCTAssertEqual(p.stride, [2, 1])
            XCTAssertTrue(p.avgPoolExcludePadding)
            XCTAssertEqual(p.padding, .valid(Spec.ValidPadding(paddingAmounts: Spec.BorderAmounts([
                Spec.EdgeSizes(startEdgeSize: 1, endEdgeSize: 0), Spec.EdgeSizes(startEdgeSize: 0, endEdgeSize: 0)]))))
        }
    }

    func testConv3DAndPool3DAreRefusedWithAReason() throws {
        let conv = Op.conv3d(ConvNDAttributes(kernel: [2, 2, 2], padding: .same, outputChannels: 2))
        let pool = Op.pool3d(PoolNDAttributes(kind: .max, kernel: [2, 2, 2], strides: [2, 2, 2], padding: .valid))
        let deconv = Op.deconv3d(DeconvNDAttributes(kernel: [2, 2, 2], strides: [2, 2, 2], padding: .same, outputChannels: 2))
        for (op, weights) in [(conv, ["weight": randomConstant([2, 3, 2, 2, 2])]), (pool, [:]),
                              (deconv, ["weight": randomConstant([3, 2, 2, 2, 2])])] {
            XCTAssertThrowsError(try CoreMLExporter.model(from: ExportGraphs.single(op, shape: [1, 4, 4, 4, 3], weights: weights))) { e in
                guard let err = e as? CoreMLExportError else { return XCTFail("\(e)") }
                // The node's own refusal (the rank-5 graph output is a second, separate problem).
                let own = err.problems.filter { $0.node == "n" }
                XCTAssertEqual(own.count, 1, err.description)
                XCTAssertTrue(own.allSatisfy { "\($0)".contains("convolution3d / pooling3d") && !$0.suggestion.isEmpty }, err.description)
            }
        }
    }

    func testNegativeAxesExportAsTheirResolvedAxis() throws {
        for (shape, axis) in [([1, 4, 5, 3], -1), ([1, 4, 5, 3], -2), ([1, 4, 5, 3], -3), ([1, 6, 3], -2), ([1, 7], -1)] {
            let neg = try exportLayers(ExportGraphs.single(.softmax(axis: axis), shape: shape))
            let pos = try exportLayers(ExportGraphs.single(.softmax(axis: axis + shape.count), shape: shape))
            XCTAssertEqual(neg, pos, "softmax \(shape) axis \(axis)")
        }
        func concat(_ axis: Int) -> Graph {
            Graph(inputs: [ValueInfo(name: "a", type: TensorType([1, 4, 5, 3])), ValueInfo(name: "b", type: TensorType([1, 4, 5, 3]))],
                  outputs: ["y"], nodes: [Node(name: "n", op: .concat(axis: axis), inputs: ["a", "b"], outputs: ["y"])])
        }
        for axis in [-1, -2, -3] {
            XCTAssertEqual(try exportLayers(concat(axis)), try exportLayers(concat(axis + 4)), "concat axis \(axis)")
        }
        // The batch axis, however written, is refused by the classic writer.
        XCTAssertThrowsError(try CoreMLExporter.model(from: ExportGraphs.single(.softmax(axis: -4), shape: [1, 4, 5, 3]), options: .classicOnly))
    }
}

/// Core ML valid padding with `top`/`bottom` on H and none on W.
enum CoreMLExporterTestAmounts {
    static func valid(_ top: UInt64, _ bottom: UInt64) -> Spec.ConvolutionLayerParams.Padding {
        .valid(Spec.ValidPadding(paddingAmounts: Spec.BorderAmounts([
            Spec.EdgeSizes(startEdgeSize: top, endEdgeSize: bottom), Spec.EdgeSizes(startEdgeSize: 0, endEdgeSize: 0)])))
    }
}
