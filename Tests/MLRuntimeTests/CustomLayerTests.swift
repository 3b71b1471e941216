import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import Diagnostics
import XCTest

/// y = x·factor + w0[channel] + w1[0]; refuses to evaluate when factor is 0.
final class AffineTestLayer: CustomLayer {
    let factor: Float
    var offsets: [Float] = []
    var shift: Float = 0

    init(parameters: [String: CustomParameterValue]) throws {
        guard case let .double(f)? = parameters["factor"] else { throw CustomLayerError("parameter 'factor' (double) missing") }
        factor = Float(f)
    }

    func setWeightData(_ weights: [ConstantTensor]) throws {
        guard weights.count == 2 else { throw CustomLayerError("expects 2 weights, found \(weights.count)") }
        offsets = weights[0].floats(); shift = weights[1].floats()[0]
    }

    func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]] { inputShapes }

    func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws {
        if factor == 0 { throw CustomLayerError("factor 0 refused") }
        let c = inputs[0].shape.last!
        for i in 0..<inputs[0].count { outputs[0][i] = inputs[0][i] * factor + offsets[i % c] + shift }
    }
}

/// Two outputs: 2x and x + 1. Checks that weights arrive ordered w0, w1, …, w10 (numerically).
final class SplitTestLayer: CustomLayer {
    init(parameters: [String: CustomParameterValue]) throws {}

    func setWeightData(_ weights: [ConstantTensor]) throws {
        let order = weights.map { $0.floats()[0] }
        guard order == (0..<weights.count).map(Float.init) else { throw CustomLayerError("weights out of order: \(order)") }
    }

    func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]] { [inputShapes[0], inputShapes[0]] }

    func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws {
        for i in 0..<inputs[0].count { outputs[0][i] = 2 * inputs[0][i]; outputs[1][i] = inputs[0][i] + 1 }
    }
}

final class CustomLayerTests: XCTestCase {
    override func setUp() {
        CustomLayerRegistry.register(className: "AffineTestLayer", AffineTestLayer.self)
        CustomLayerRegistry.register(className: "SplitTestLayer", SplitTestLayer.self)
    }

    func custom(_ className: String, _ params: [String: CustomParameterValue] = [:], outputShapes: [[Int]]) -> Op {
        .custom(CustomLayerAttributes(className: className, parameters: params, outputShapes: outputShapes))
    }

    func testBuiltInsAreRegistered() {
        XCTAssertTrue(CustomLayerRegistry.implementation(for: "ResCropBlockLambda") == ResCropBlockLambda.self)
        XCTAssertTrue(CustomLayerRegistry.implementation(for: "RescaleOutputLambda") == RescaleOutputLambda.self)
        XCTAssertNil(CustomLayerRegistry.implementation(for: "NoSuchLayer"))
    }

    func testResCropBlockLambda() throws {
        let x = iota([1, 6, 7, 2])
        let y = try runOp(custom("ResCropBlockLambda", outputShapes: [[1, 2, 3, 2]]), [x])
        XCTAssertEqual(y.shape, [1, 2, 3, 2])
        var expected: [Float] = []
        for h in 2..<4 { for w in 2..<5 { for c in 0..<2 { expected.append(x[0, h, w, c]) } } }
        XCTAssertEqual(y.scalars, expected)
    }

    func testRescaleOutputLambda() throws {
        let xs: [Float] = [-1, 1, 0, 0.5, -0.5, 0.25, 2, -2, 1, -1, 0]  // 11: a SIMD block plus a tail
        let y = try runOp(custom("RescaleOutputLambda", outputShapes: [[1, 11]]), [nd([1, 11], xs)])
        XCTAssertEqual(y.scalars, [0, 255, 127.5, 191.25, 63.75, 159.375, 382.5, -127.5, 255, 0, 127.5])
    }

    func testUserLayerGetsParametersWeightsAndViews() throws {
        let y = try runOp(custom("AffineTestLayer", ["factor": .double(3)], outputShapes: [[1, 2, 2]]), [nd([1, 2, 2], [1, 2, 3, 4])],
                          weights: ["w0": const([2], [10, 20]), "w1": const([1], [100])])
        XCTAssertEqual(y.scalars, [113, 126, 119, 132])
    }

    func testMultipleOutputsAndNumericWeightOrder() throws {
        var weights: [String: ConstantTensor] = [:]
        for i in 0...10 { weights["w\(i)"] = const([1], [Float(i)]) }  // "w10" sorts before "w2" as text
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3]))], outputs: ["b", "c"],
                      nodes: [Node(name: "split", op: custom("SplitTestLayer", outputShapes: [[1, 3], [1, 3]]), inputs: ["x"],
                                   outputs: ["a", "b"], weights: weights),
                              Node(name: "add", op: .elementwise(.add), inputs: ["a", "b"], outputs: ["c"])])
        let out = try Model(graph: g, configuration: .init(referenceOnly: true)).prediction(from: ["x": nd([1, 3], [1, 2, 3])])
        XCTAssertEqual(out["b"]?.scalars, [2, 3, 4])
        XCTAssertEqual(out["c"]?.scalars, [4, 7, 10])
    }

    func testMissingCustomLayerNamesClassAndEveryLayer() {
        let x = ValueInfo(name: "x", type: TensorType([1, 8, 8, 1]))
        let g = Graph(inputs: [x], outputs: ["d"], nodes: [
            Node(name: "c1", op: custom("NotRegisteredA", outputShapes: [[1, 8, 8, 1]]), inputs: ["x"], outputs: ["a"]),
            Node(name: "c2", op: custom("ResCropBlockLambda", outputShapes: [[1, 4, 4, 1]]), inputs: ["a"], outputs: ["b"]),
            Node(name: "c3", op: custom("NotRegisteredA", outputShapes: [[1, 4, 4, 1]]), inputs: ["b"], outputs: ["c"]),
            Node(name: "c4", op: custom("NotRegisteredB", outputShapes: [[1, 4, 4, 1]]), inputs: ["c"], outputs: ["d"]),
        ])
        assertRuntimeError(.missingCustomLayer(className: "NotRegisteredA", layers: ["c1", "c3"])) { try Model(graph: g) }
        let message = "\(RuntimeError.missingCustomLayer(className: "NotRegisteredA", layers: ["c1", "c3"]))"
        XCTAssertTrue(message.contains("'NotRegisteredA'") && message.contains("c1, c3"), message)
    }

    func testLoadFailuresNameTheNode() {
        let x = [nd([1, 2], [1, 2])]
        // init throws (no parameter).
        XCTAssertThrowsError(try runOp(custom("AffineTestLayer", outputShapes: [[1, 2]]), x)) { e in
            guard case let .customLayerFailure(node, className, own, cause)? = e as? RuntimeError else { return XCTFail("\(e)") }
            // MARK: errors (issue 13): the implementation's error is kept as a value
            XCTAssertEqual(own, "init(parameters:) failed")
            XCTAssertNotNil(cause, "\(e)")
            XCTAssertEqual((e as? RuntimeError)?.diagnosticCauses.count, 1)
            let message = cause.appended(to: own)
            XCTAssertEqual(node, "op"); XCTAssertEqual(className, "AffineTestLayer")
            XCTAssertTrue(message.contains("factor"), message)
        }
        // Output shapes disagree with the graph.
        XCTAssertThrowsError(try runOp(custom("RescaleOutputLambda", outputShapes: [[1, 3]]), x)) { e in
            guard case let .customLayerFailure(node, _, own, cause)? = e as? RuntimeError else { return XCTFail("\(e)") }
            let message = cause.appended(to: own)
            XCTAssertEqual(node, "op")
            XCTAssertTrue(message.contains("(1, 2)") && message.contains("(1, 3)"), message)
        }
    }

    func testEvaluateErrorFailsThePredictionNamingTheNode() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 2]))], outputs: ["y"],
                      nodes: [Node(name: "affine0", op: custom("AffineTestLayer", ["factor": .double(0)], outputShapes: [[1, 2]]),
                                   inputs: ["x"], outputs: ["y"], weights: ["w0": const([2], [0, 0]), "w1": const([1], [0])])])
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        XCTAssertThrowsError(try m.prediction(from: ["x": nd([1, 2], [1, 2])])) { e in
            guard case let .kernelFailure(node, own, cause)? = e as? RuntimeError else { return XCTFail("\(e)") }
            let message = cause.appended(to: own)
            XCTAssertEqual(node, "affine0")
            XCTAssertTrue(message.contains("factor 0 refused"), message)
        }
    }

    func testRegistryIsThreadSafe() {
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for j in 0..<50 {
                CustomLayerRegistry.register(className: "Stress\(i)_\(j)", RescaleOutputLambda.self)
                XCTAssertNotNil(CustomLayerRegistry.implementation(for: "ResCropBlockLambda"))
            }
        }
        for i in 0..<8 { for j in 0..<50 {
            XCTAssertNotNil(CustomLayerRegistry.implementation(for: "Stress\(i)_\(j)"))
            CustomLayerRegistry.unregister(className: "Stress\(i)_\(j)")
        } }
        XCTAssertNil(CustomLayerRegistry.implementation(for: "Stress0_0"))
    }
}
