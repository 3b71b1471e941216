// The rank-N elementwise, comparison, logical, reduction, normalisation and random layers
// (Sources/CoreMLFormat/Import/Layers/MathImport.swift, RandomImport.swift): the
// Fixtures/coreml_layers cases of their layer types (NumPy references of NeuralNetwork.proto's
// formulas), and hand-built EXACT_ARRAY_MAPPING specs for paths the fixtures do not reach, checked
// against the proto's formulas written out here, sampling statistics of the random layers, and
// typed refusals.
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

/// Small specs for these tests.
private enum Specs {
    static func array(_ name: String, _ shape: [Int64]) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: shape, dataType: .float32))))
    }
    static func layer(_ name: String, _ ins: [String], _ outs: [String], _ l: Spec.NeuralNetworkLayer.Layer) -> Spec.NeuralNetworkLayer {
        Spec.NeuralNetworkLayer(name: name, input: ins, output: outs, layer: l)
    }
    static func model(_ inputs: [Spec.FeatureDescription], _ outputs: [Spec.FeatureDescription], _ layers: [Spec.NeuralNetworkLayer],
                      version: Int32) -> Spec.Model {
        Spec.Model(specificationVersion: version, description: Spec.ModelDescription(input: inputs, output: outputs),
                   type: .neuralNetwork(Spec.NeuralNetwork(layers: layers)))
    }
}

final class MathLayerImportTests: XCTestCase {
    // The family's fixtures (Fixtures/coreml_layers) are all checked by CoreMLLayerFixtureTests.

    // MARK: Hand-built specs

    typealias L = Spec.NeuralNetworkLayer.Layer

    static func exactModel(_ inputs: [(String, [Int64])], _ outputs: [(String, [Int64])], _ layers: [Spec.NeuralNetworkLayer]) -> Spec.Model {
        Spec.Model(specificationVersion: 4,
                   description: Spec.ModelDescription(input: inputs.map { Specs.array($0.0, $0.1) },
                                                      output: outputs.map { Specs.array($0.0, $0.1) }),
                   type: .neuralNetwork(Spec.NeuralNetwork(layers: layers, arrayInputShapeMapping: .exact)))
    }

    static func run(_ m: Spec.Model, _ feeds: [String: NDArray]) throws -> [String: NDArray] {
        try Model(graph: CoreMLImporter.graph(from: m, fileName: "math.mlmodel")).prediction(from: feeds)
    }

    /// One input compared with alpha; outputs 1.0 / 0.0, NaN unequal to everything (IEEE).
    func testComparisonWithAlphaGivesFloatOnesAndZeros() throws {
        let x: [Float] = [0.5, 1, 2, .nan]
        let cases: [(L, (Float) -> Bool)] = [
            (.other(.equal(.init(alpha: 1))), { $0 == 1 }), (.other(.notEqual(.init(alpha: 1))), { $0 != 1 }),
            (.other(.lessThan(.init(alpha: 1))), { $0 < 1 }), (.other(.lessEqual(.init(alpha: 1))), { $0 <= 1 }),
            (.other(.greaterThan(.init(alpha: 1))), { $0 > 1 }), (.other(.greaterEqual(.init(alpha: 1))), { $0 >= 1 }),
        ]
        for (layer, f) in cases {
            let m = Self.exactModel([("x", [4])], [("y", [4])], [Specs.layer("c", ["x"], ["y"], layer)])
            let y = try Self.run(m, ["x": try NDArray(shape: [4], scalars: x)])["y"]
            XCTAssertEqual(y?.elementType, .float32)
            XCTAssertEqual(y?.scalars, x.map { f($0) ? 1 : 0 }, "\(layer)")
        }
    }

    /// Logical layers read "≠ 0" as true (NaN and −0.0 included per IEEE: NaN ≠ 0, −0 = 0).
    func testLogicalLayersReadNonZeroAsTrue() throws {
        let a: [Float] = [0, -0.0, 2, .nan], bv: [Float] = [1, 1, 0, 0]
        let m = Self.exactModel([("a", [4]), ("b", [4])], [("y", [4])], [Specs.layer("x", ["a", "b"], ["y"], .other(.logicalXor(.init())))])
        let y = try Self.run(m, ["a": try NDArray(shape: [4], scalars: a), "b": try NDArray(shape: [4], scalars: bv)])["y"]
        XCTAssertEqual(y?.scalars, [1, 1, 1, 1])
        let n = Self.exactModel([("a", [4])], [("y", [4])], [Specs.layer("n", ["a"], ["y"], .other(.logicalNot(.init())))])
        XCTAssertEqual(try Self.run(n, ["a": try NDArray(shape: [4], scalars: a)])["y"]?.scalars, [1, 1, 0, 0])
    }

    /// reduceAll without keepDims gives Core ML's shape [1] (no rank 0); reduceLogSum = log Σ x.
    func testReduceAllGivesShapeOneAndLogSumIsLogOfSum() throws {
        let x: [Float] = [1, 2, 3, 4, 5, 6]
        let p = Spec.ReduceNDLayerParams(axes: [], keepDims: false, reduceAll: true)
        let m = Self.exactModel([("x", [2, 3])], [("y", [1])], [Specs.layer("r", ["x"], ["y"], .reduceND(.logSum, p))])
        let y = try XCTUnwrap(Self.run(m, ["x": try NDArray(shape: [2, 3], scalars: x)])["y"])
        XCTAssertEqual(y.shape, [1])
        XCTAssertEqual(y.scalars[0], logf(21), accuracy: 1e-5)
        // Axes naming every axis without keepDims: also [1]; negative axes count from the end.
        let q = Spec.ReduceNDLayerParams(axes: [-1, 0], keepDims: false, reduceAll: false)
        let m2 = Self.exactModel([("x", [2, 3])], [("y", [1])], [Specs.layer("r", ["x"], ["y"], .reduceND(.max, q))])
        XCTAssertEqual(try Self.run(m2, ["x": try NDArray(shape: [2, 3], scalars: x)])["y"]?.scalars, [6])
        // An axis named twice is refused with the layer's name.
        let bad = Spec.ReduceNDLayerParams(axes: [1, -1], keepDims: true, reduceAll: false)
        let m3 = Self.exactModel([("x", [2, 3])], [("y", [2, 1])], [Specs.layer("twice", ["x"], ["y"], .reduceND(.sum, bad))])
        XCTAssertThrowsError(try CoreMLImporter.graph(from: m3, fileName: "m.mlmodel")) {
            XCTAssertTrue("\($0)".contains("layer 'twice' (reduceSum): names an axis twice"), "\($0)")
        }
    }

    /// argMax of a rank-1 input gives [1] whatever removeDim says (the proto's example);
    /// indices are float32; ties give the first index.
    func testArgMaxOfRankOneKeepsOneElementAndTiesTakeTheFirst() throws {
        for removeDim in [false, true] {
            let m = Self.exactModel([("x", [5])], [("y", [1])], [Specs.layer("a", ["x"], ["y"], .argMax(axis: -1, removeDim: removeDim))])
            let y = try XCTUnwrap(Self.run(m, ["x": try NDArray(shape: [5], scalars: [1, 7, 3, 7, 0])])["y"])
            XCTAssertEqual(y.shape, [1])
            XCTAssertEqual(y.scalars, [1])
        }
    }

    /// Axis-based v2 layers in a RANK5_ARRAY_MAPPING network are refused by name.
    func testAxisLayerInRank5NetworkIsRefused() {
        let m = Specs.model([Specs.array("x", [4])], [Specs.array("y", [4])],
                                  [Specs.layer("sm", ["x"], ["y"], .softmaxND(axis: -1))], version: 4)
        XCTAssertThrowsError(try CoreMLImporter.graph(from: m, fileName: "m.mlmodel")) {
            XCTAssertTrue("\($0)".contains("layer 'sm' (softmaxND): is an axis-based rank-N layer"), "\($0)")
        }
    }

    // MARK: Random layers

    /// Normal and uniform samples have the distribution's moments (n = 8192: the standard error
    /// of the mean is σ/90, so the bounds below fail only for a broken generator); seeds matter.
    func testRandomLayersSampleTheirDistributions() throws {
        let normal = Self.exactModel([("shape", [2])], [("y", [64, 128])],
                                     [Specs.layer("n", ["shape"], ["y"], .other(.randomNormalDynamic(.init(seed: 3, mean: 2, stdDev: 0.5))))])
        let y = try XCTUnwrap(Self.run(normal, ["shape": try NDArray(shape: [2], scalars: [64, 128])])["y"])
        XCTAssertEqual(y.shape, [64, 128])
        let mean = y.scalars.reduce(0, +) / Float(y.count)
        let variance = y.scalars.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Float(y.count)
        XCTAssertEqual(mean, 2, accuracy: 0.03)
        XCTAssertEqual(variance.squareRoot(), 0.5, accuracy: 0.02)

        func uniform(seed: Int64) throws -> [Float] {
            let m = Self.exactModel([("x", [1])], [("y", [8192])],
                                    [Specs.layer("u", [], ["r"], .other(.randomUniformStatic(.init(seed: seed, minVal: -1, maxVal: 3, outputShape: [8192])))),
                                     Specs.layer("add", ["r", "x"], ["y"], .simple(.addBroadcastable))])
            return try XCTUnwrap(Self.run(m, ["x": try NDArray(shape: [1], scalars: [0])])["y"]).scalars
        }
        let u = try uniform(seed: 11)
        XCTAssertTrue(u.allSatisfy { $0 > -1 && $0 < 3 })
        XCTAssertEqual(u.reduce(0, +) / 8192, 1, accuracy: 0.05)
        XCTAssertEqual(Float(u.filter { $0 < 0 }.count), 2048, accuracy: 150)  // P(u < 0) = 1/4
        XCTAssertNotEqual(u, try uniform(seed: 12))
        XCTAssertEqual(u, try uniform(seed: 11), "a seeded layer draws the same numbers on every prediction")
    }

    /// categoricalDistribution from probabilities [0.2, 0.8] (not logits) picks class 1 about 80 %
    /// of the time; with temperature T the class probabilities are softmax(log p / T).
    func testCategoricalDistributionFrequenciesFollowTheProbabilities() throws {
        func frequencyOfClassOne(temperature: Float) throws -> Float {
            let p = Spec.CategoricalDistributionLayerParams(seed: 5, numSamples: 4000, isLogits: false, eps: 0, temperature: temperature)
            let m = Self.exactModel([("p", [1, 2])], [("y", [1, 4000])], [Specs.layer("c", ["p"], ["y"], .other(.categoricalDistribution(p)))])
            let y = try XCTUnwrap(Self.run(m, ["p": try NDArray(shape: [1, 2], scalars: [0.2, 0.8])])["y"])
            XCTAssertEqual(y.shape, [1, 4000])
            XCTAssertTrue(y.scalars.allSatisfy { $0 == 0 || $0 == 1 })
            return y.scalars.reduce(0, +) / 4000
        }
        XCTAssertEqual(try frequencyOfClassOne(temperature: 0), 0.8, accuracy: 0.025)  // 0 = the default 1
        // T = 2: softmax(log p / 2) ∝ √p → √0.8 / (√0.2 + √0.8) = 2/3.
        XCTAssertEqual(try frequencyOfClassOne(temperature: 2), 2.0 / 3.0, accuracy: 0.03)
    }
}
