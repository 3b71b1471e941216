// Core ML reduce / lrn / l2normalize / mvn / instance-norm batchnorm layers: imported from
// spec-built models and run (numbers against formulas computed here in Core ML's [C, H, W]
// order, from the NeuralNetwork.proto definitions), and IR reduction / normalisation nodes
// exported to classic layers, re-imported and run against the IR graph.
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class CoreMLNormalizationTests: XCTestCase {
    private func array(_ name: String, _ shape: [Int]) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: shape.map(Int64.init), dataType: .float32))))
    }

    private func layer(_ name: String, _ ins: [String], _ outs: [String], _ l: Spec.NeuralNetworkLayer.Layer) -> Spec.NeuralNetworkLayer {
        Spec.NeuralNetworkLayer(name: name, input: ins, output: outs, layer: l)
    }

    /// Imports and runs a network of one multi-array input [C, H, W]; outputs in Core ML order.
    private func run(_ x: [Float], _ shape: [Int], _ outputs: [(String, [Int])], _ layers: [Spec.NeuralNetworkLayer],
                     referenceOnly: Bool = true) throws -> (Graph, [String: [Float]]) {
        let m = Spec.Model(specificationVersion: 1, description: Spec.ModelDescription(input: [array("x", shape)], output: outputs.map { array($0.0, $0.1) }),
                           type: .neuralNetwork(Spec.NeuralNetwork(layers: layers)))
        let g = try CoreMLImporter.graph(from: m, fileName: "norm.mlmodel")
        let model = try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
        let out = try model.prediction(from: ["x": try NDArray(shape: g.inputs[0].type.shape, scalars: x)])
        var result: [String: [Float]] = [:]
        for (name, shape) in outputs {
            let a = try XCTUnwrap(out[name], name)
            XCTAssertEqual(a.shape, [1] + shape, name)
            result[name] = a.scalars
        }
        return (g, result)
    }

    // MARK: Import

    /// Every supported reduce mode over every axis, against Core ML's formulas.
    func testReduceModesAndAxes() throws {
        let (c, h, w) = (3, 4, 5)
        let x = randomFloats(count: c * h * w, seed: 31, in: 0.6 ... 1.4).enumerated().map { $0.offset % 3 == 0 ? -$0.element : $0.element }
        let modes: [(Spec.ReduceLayerParams.ReduceOperation, String, ([Double]) -> Double)] = [
            (.sum, "sum", { $0.reduce(0, +) }),
            (.avg, "avg", { $0.reduce(0, +) / Double($0.count) }),
            (.prod, "prod", { $0.reduce(1, *) }),
            (.sumsquare, "sumsquare", { $0.reduce(0) { $0 + $1 * $1 } }),
            (.l1, "l1", { $0.reduce(0) { $0 + abs($1) } }),
            (.l2, "l2", { $0.reduce(0) { $0 + $1 * $1 }.squareRoot() }),
            (.max, "max", { $0.max()! }),
            (.min, "min", { $0.min()! }),
        ]
        let axes: [(Spec.ReduceLayerParams.ReduceAxis, String, [Bool])] = [  // reduced (C, H, W)
            (.c, "c", [true, false, false]), (.h, "h", [false, true, false]), (.w, "w", [false, false, true]),
            (.hw, "hw", [false, true, true]), (.chw, "chw", [true, true, true]),
        ]
        var layers: [Spec.NeuralNetworkLayer] = [], outputs: [(String, [Int])] = [], expected: [String: [Float]] = [:]
        for (mode, mname, f) in modes {
            for (axis, aname, red) in axes {
                let name = "\(mname)_\(aname)"
                let os = [red[0] ? 1 : c, red[1] ? 1 : h, red[2] ? 1 : w]
                layers.append(layer(name, ["x"], [name], .reduce(Spec.ReduceLayerParams(mode: mode, epsilon: 1e-6, axis: axis))))
                outputs.append((name, os))
                var e: [Float] = []
                for oc in 0..<os[0] { for oy in 0..<os[1] { for ox in 0..<os[2] {
                    var vals: [Double] = []
                    for ci in 0..<c where red[0] || ci == oc { for y in 0..<h where red[1] || y == oy { for xi in 0..<w where red[2] || xi == ox {
                        vals.append(Double(x[(ci * h + y) * w + xi]))
                    } } }
                    e.append(Float(f(vals)))
                } } }
                expected[name] = e
            }
        }
        for referenceOnly in [true, false] {
            let (g, r) = try run(x, [c, h, w], outputs, layers, referenceOnly: referenceOnly)
            XCTAssertEqual(g.nodes.filter { if case .reduce = $0.op { return true }; return false }.count, modes.count * axes.count)
            for (name, _) in outputs { assertClose(r[name]!, expected[name]!, tolerance: 1e-5, name) }
        }
    }

    /// reduce LOGSUM Σ log(x + ε) and ARGMAX (the index along the one reduced axis, as a float):
    /// ClassicVariants.swift, against the formulas computed here.
    func testLogSumAndArgMax() throws {
        let (c, h, w) = (3, 2, 2)
        let x = randomFloats(count: c * h * w, seed: 41, in: 0.5 ... 2)
        let layers = [
            layer("ls", ["x"], ["logsum"], .reduce(Spec.ReduceLayerParams(mode: .logsum, epsilon: 1e-6, axis: .c))),
            layer("am", ["x"], ["argmax"], .reduce(Spec.ReduceLayerParams(mode: .argmax, epsilon: 1e-6, axis: .c))),
            layer("aw", ["x"], ["argmax_w"], .reduce(Spec.ReduceLayerParams(mode: .argmax, epsilon: 1e-6, axis: .w))),
        ]
        let (_, r) = try run(x, [c, h, w], [("logsum", [1, h, w]), ("argmax", [1, h, w]), ("argmax_w", [c, h, 1])], layers)
        for y in 0..<h { for xi in 0..<w {
            let column = (0..<c).map { Double(x[($0 * h + y) * w + xi]) }
            XCTAssertEqual(Double(r["logsum"]![y * w + xi]), column.map { log($0 + 1e-6) }.reduce(0, +), accuracy: 1e-5)
            XCTAssertEqual(r["argmax"]![y * w + xi], Float(column.indices.max { column[$0] < column[$1] }!))
        } }
        for ci in 0..<c { for y in 0..<h {
            let row = (0..<w).map { x[(ci * h + y) * w + $0] }
            XCTAssertEqual(r["argmax_w"]![ci * h + y], Float(row.indices.max { row[$0] < row[$1] }!))
        } }
        // ARGMAX over several axes has no single index: a typed refusal.
        let bad = Spec.Model(specificationVersion: 1, description: Spec.ModelDescription(input: [array("x", [2, 2, 2])], output: [array("y", [1, 1, 1])]),
                             type: .neuralNetwork(Spec.NeuralNetwork(layers: [
                                 layer("am", ["x"], ["y"], .reduce(Spec.ReduceLayerParams(mode: .argmax, epsilon: 1e-6, axis: .chw)))])))
        XCTAssertThrowsError(try CoreMLImporter.graph(from: bad, fileName: "argmax.mlmodel")) { e in
            XCTAssertTrue("\(e)".contains("single axis"), "\(e)")
        }
    }

    /// lrn across channels with odd and even local sizes:
    /// y = x / (k + alpha/n · Σ_{window} x²)^beta, window [c − ⌊(n−1)/2⌋, c + ⌈(n−1)/2⌉].
    func testLRN() throws {
        let (c, h, w) = (7, 2, 3)
        let x = randomFloats(count: c * h * w, seed: 32, in: -2 ... 2)
        var layers: [Spec.NeuralNetworkLayer] = [], outputs: [(String, [Int])] = []
        let params: [(UInt64, Float, Float, Float)] = [(5, 1e-2, 0.75, 2), (4, 0.5, 0.75, 1), (1, 2, 3, 8), (9, 1, 0.5, 1)]
        for (i, p) in params.enumerated() {
            layers.append(layer("lrn\(i)", ["x"], ["y\(i)"], .lrn(Spec.LRNLayerParams(alpha: p.1, beta: p.2, localSize: p.0, k: p.3))))
            outputs.append(("y\(i)", [c, h, w]))
        }
        let (g, r) = try run(x, [c, h, w], outputs, layers)
        XCTAssertEqual(g.nodes.filter { $0.op.kind == .localResponseNorm }.count, params.count)
        for (i, p) in params.enumerated() {
            let n = Int(p.0), before = (n - 1) / 2, after = n / 2
            var e = [Float](repeating: 0, count: x.count)
            for ci in 0..<c { for y in 0..<h { for xi in 0..<w {
                var sq = 0.0
                for j in max(0, ci - before)...min(c - 1, ci + after) { let v = Double(x[(j * h + y) * w + xi]); sq += v * v }
                let v = Double(x[(ci * h + y) * w + xi])
                e[(ci * h + y) * w + xi] = Float(v / pow(Double(p.3) + Double(p.1) / Double(n) * sq, Double(p.2)))
            } } }
            assertClose(r["y\(i)"]!, e, tolerance: 1e-5, "lrn size \(n)")
        }
        // The coremltools test: ones, alpha 2, beta 3, size 1, k 8 → 1/(8+2)^3.
        let (_, ones) = try run([Float](repeating: 1, count: 9), [1, 3, 3], [("o", [1, 3, 3])],
                                [layer("lrn", ["x"], ["o"], .lrn(Spec.LRNLayerParams(alpha: 2, beta: 3, localSize: 1, k: 8)))])
        assertClose(ones["o"]!, [Float](repeating: 1e-3, count: 9), tolerance: 1e-7)
    }

    /// l2normalize: x / sqrt(Σ_{C,H,W} x² + ε); mvn with variance: (x − mean)/sqrt(var + ε) over
    /// C, H, W or H, W per channel; batchnorm instanceNormalization: per channel over H, W, then
    /// gamma, beta.
    func testL2NormalizeMVNAndInstanceNorm() throws {
        let (c, h, w) = (3, 2, 4)
        let x = randomFloats(count: c * h * w, seed: 33, in: -1 ... 3)
        let gamma = randomFloats(count: c, seed: 34, in: 0.5 ... 1.5), beta = randomFloats(count: c, seed: 35)
        let (g, r) = try run(x, [c, h, w], [("l2", [c, h, w]), ("mvnc", [c, h, w]), ("mvnp", [c, h, w]), ("inorm", [c, h, w])], [
            layer("l2", ["x"], ["l2"], .l2normalize(epsilon: 1e-6)),
            layer("mvnc", ["x"], ["mvnc"], .mvn(Spec.MeanVarianceNormalizeLayerParams(acrossChannels: true, normalizeVariance: true, epsilon: 1e-5))),
            layer("mvnp", ["x"], ["mvnp"], .mvn(Spec.MeanVarianceNormalizeLayerParams(acrossChannels: false, normalizeVariance: true, epsilon: 1e-3))),
            layer("inorm", ["x"], ["inorm"], .batchnorm(Spec.BatchnormLayerParams(
                channels: UInt64(c), computeMeanVar: true, instanceNormalization: true, epsilon: 1e-4,
                gamma: Spec.WeightParams(gamma), beta: Spec.WeightParams(beta),
                mean: Spec.WeightParams([Float](repeating: 0, count: c)), variance: Spec.WeightParams([Float](repeating: 1, count: c))))),
        ])
        XCTAssertEqual(Set(g.nodes.map(\.op.kind)).intersection([.l2Norm, .layerNorm, .instanceNorm]), [.l2Norm, .layerNorm, .instanceNorm])
        let xd = x.map(Double.init)
        let l2 = (xd.reduce(0) { $0 + $1 * $1 } + 1e-6).squareRoot()
        assertClose(r["l2"]!, xd.map { Float($0 / l2) }, tolerance: 1e-6, "l2normalize")
        func normalise(_ v: [Double], _ eps: Double) -> [Double] {
            let m = v.reduce(0, +) / Double(v.count)
            let s = (v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count) + eps).squareRoot()
            return v.map { ($0 - m) / s }
        }
        assertClose(r["mvnc"]!, normalise(xd, 1e-5).map(Float.init), tolerance: 1e-5, "mvn across channels")
        let plane = h * w
        var perChannel: [Float] = [], inorm: [Float] = []
        for ci in 0..<c {
            let v = Array(xd[(ci * plane)..<((ci + 1) * plane)])
            perChannel += normalise(v, 1e-3).map(Float.init)
            inorm += normalise(v, 1e-4).map { Float($0 * Double(gamma[ci]) + Double(beta[ci])) }
        }
        assertClose(r["mvnp"]!, perChannel, tolerance: 1e-5, "mvn per channel")
        assertClose(r["inorm"]!, inorm, tolerance: 1e-5, "instance normalisation")
        // The coremltools test: arange(4) in [1, 2, 2] → x / sqrt(14).
        let (_, t) = try run([0, 1, 2, 3], [1, 2, 2], [("o", [1, 2, 2])], [layer("l2", ["x"], ["o"], .l2normalize(epsilon: 0))])
        assertClose(t["o"]!, [0, 1, 2, 3].map { Float($0) / Float(14).squareRoot() }, tolerance: 1e-6)
    }

    // MARK: Export

    /// IR nodes → classic layers → imported again: same numbers as the IR graph.
    func testExportedNormalisationsRoundTrip() throws {
        let x = ValueInfo(name: "x", type: TensorType([1, 3, 4, 5]))
        let ln = Node(name: "ln", op: .layerNorm(LayerNormAttributes(axes: [1, 2, 3], epsilon: 1e-5)), inputs: ["x"], outputs: ["ln"],
                      weights: ["gamma": randomConstant([3, 4, 5], seed: 40, in: 0.5 ... 1.5), "beta": randomConstant([3, 4, 5], seed: 41)])
        let lnhw = Node(name: "lnhw", op: .layerNorm(LayerNormAttributes(axes: [-3, -2], epsilon: 1e-3)), inputs: ["x"], outputs: ["lnhw"],
                        weights: ["gamma": randomConstant([3, 4], seed: 42, in: 0.5 ... 1.5)])
        let inorm = Node(name: "inorm", op: .instanceNorm(epsilon: 1e-4), inputs: ["x"], outputs: ["inorm"],
                         weights: ["gamma": randomConstant([5], seed: 43, in: 0.5 ... 1.5), "beta": randomConstant([5], seed: 44)])
        let l2 = Node(name: "l2", op: .l2Norm(L2NormAttributes(axes: [-3, -2, -1])), inputs: ["x"], outputs: ["l2"])
        let lrn = Node(name: "lrn", op: .localResponseNorm(LocalResponseNormAttributes(size: 4, alpha: 0.3, beta: 0.75, k: 1.5)),
                       inputs: ["x"], outputs: ["lrn"])
        let rc = Node(name: "rc", op: .reduce(ReduceAttributes(function: .l2Norm, axes: [-1], keepDims: true)), inputs: ["x"], outputs: ["rc"])
        let rhw = Node(name: "rhw", op: .reduce(ReduceAttributes(function: .mean, axes: [1, 2], keepDims: false)), inputs: ["x"], outputs: ["rhw"])
        let rall = Node(name: "rall", op: .reduce(ReduceAttributes(function: .max, axes: [1, 2, 3], keepDims: true)), inputs: ["x"], outputs: ["rall"])
        let rh = Node(name: "rh", op: .reduce(ReduceAttributes(function: .sumSquare, axes: [1], keepDims: true)), inputs: ["x"], outputs: ["rh"])
        var graph = Graph(inputs: [x], outputs: ["ln", "lnhw", "inorm", "l2", "lrn", "rc", "rhw", "rall", "rh"],
                          nodes: [ln, lnhw, inorm, l2, lrn, rc, rhw, rall, rh])
        try graph.inferShapes()
        let spec = try CoreMLExporter.model(from: graph)
        let types = spec.neuralNetwork?.layers.map(\.layer.typeName) ?? []
        for t in ["mvn", "scale", "batchnorm", "l2normalize", "lrn", "reduce"] { XCTAssertTrue(types.contains(t), "no \(t) layer in \(types)") }
        let back = try CoreMLImporter.graph(from: try Spec.Model.decode(spec.encode()), fileName: "roundtrip.mlmodel")
        let xs = randomFloats(count: 60, seed: 45, in: -2 ... 2)
        let want = try Model(graph: graph, configuration: .init(referenceOnly: true)).prediction(from: ["x": try NDArray(shape: [1, 3, 4, 5], scalars: xs)])
        // The re-imported model takes and returns Core ML's [C, H, W] order.
        var chw = [Float](repeating: 0, count: 60)
        for y in 0..<3 { for xi in 0..<4 { for ci in 0..<5 { chw[(ci * 3 + y) * 4 + xi] = xs[(y * 4 + xi) * 5 + ci] } } }
        let got = try Model(graph: back, configuration: .init(referenceOnly: true)).prediction(from: ["x": try NDArray(shape: back.inputs[0].type.shape, scalars: chw)])
        for name in graph.outputs {
            let w = try XCTUnwrap(want[name]), gt = try XCTUnwrap(got[name], name)
            let s = ExportShape.nhwc(w.shape)
            var expected = [Float](repeating: 0, count: w.scalars.count)
            for y in 0..<s[1] { for xi in 0..<s[2] { for ci in 0..<s[3] {
                expected[(ci * s[1] + y) * s[2] + xi] = w.scalars[(y * s[2] + xi) * s[3] + ci]
            } } }
            assertClose(gt.scalars, expected, tolerance: 1e-5, "\(name) \(w.shape) → \(gt.shape)")
        }
    }

    func testLogSoftmaxAndLogSumExpExportAreRefused() throws {
        for op in [Op.logSoftmax(axis: -1), .reduce(ReduceAttributes(function: .logSumExp, axes: [-1], keepDims: true))] {
            var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 2, 2, 3]))], outputs: ["y"],
                          nodes: [Node(name: "n", op: op, inputs: ["x"], outputs: ["y"])])
            try g.inferShapes()
            XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly), "\(op.name)") { e in
                XCTAssertTrue("\(e)".contains("log"), "\(e)")
            }
            // The rank-N writer has reduceLogSumExp (spec 4).
            XCTAssertEqual(try CoreMLExporter.model(from: g).specificationVersion, 4, "\(op.name)")
        }
    }
}

/// NHWC view of an IR shape (rank 2 [N, C] → [N, 1, 1, C]).
enum ExportShape {
    static func nhwc(_ s: [Int]) -> [Int] {
        switch s.count {
        case 4: return s
        case 3: return [s[0], s[1], 1, s[2]]
        case 2: return [s[0], 1, 1, s[1]]
        default: return [1, 1, 1, s.reduce(1, *)]
        }
    }
}
