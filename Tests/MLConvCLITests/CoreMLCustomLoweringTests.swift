// `--lower` / `--hooks` on Core ML custom layers (CustomLayerParams): the Keras hooks' lowering
// vocabulary applied to the custom nodes the importer makes (KerasFrontend/Hooks/CustomNodeLowering.swift).
// References: swish(x) = x·sigmoid(x) written out here, and the same layer composed of sigmoid and
// multiply nodes for the corpus model.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class CoreMLCustomLoweringTests: XCTestCase {
    /// A v1 network x [4, 2, 2] → custom layer "act" of class Swish → y [4, 2, 2].
    static func swishSpec(outputShape: [Int] = [4, 2, 2]) -> Spec.Model {
        let custom = Spec.NeuralNetworkLayer.Layer.custom(Spec.CustomLayerParams(className: "Swish"))
        return Spec.Model(specificationVersion: 1,
                          description: Spec.ModelDescription(input: [ShapeLayerImportTests.array("x", [4, 2, 2])],
                                                             output: [ShapeLayerImportTests.array("y", outputShape)]),
                          type: .neuralNetwork(Spec.NeuralNetwork(layers: [Spec.NeuralNetworkLayer(name: "act", input: ["x"], output: ["y"], layer: custom)])))
    }

    static let x: [Float] = (0..<16).map { Float($0) * 0.7 - 5.3 }
    static func swish(_ v: Float) -> Float { v / (1 + expf(-v)) }

    func testLoweredToActivationMatchesFormula() throws {
        let g0 = try CoreMLImporter.graph(from: Self.swishSpec(), fileName: "swish.mlmodel")
        XCTAssertEqual(g0.opCounts["custom(Swish)"], 1)
        for flag in ["Swish=swish", "act=swish"] {
            let g = try [try KerasHookSpec(lowerFlag: flag)].lowerCustomNodes(in: g0, file: "swish.mlmodel", requiredMatches: 1)
            XCTAssertFalse(g.nodes.contains { if case .custom = $0.op { return true } else { return false } }, flag)
            let model = try Model(graph: g, configuration: .init(referenceOnly: true))
            let y = try XCTUnwrap(model.prediction(from: ["x": try NDArray(shape: [4, 2, 2], scalars: Self.x)])["y"])
            XCTAssertEqual(y.scalars.count, 16)
            for (i, v) in Self.x.enumerated() { XCTAssertEqual(y.scalars[i], Self.swish(v), accuracy: 1e-5, "\(flag) at \(i)") }
        }
    }

    func testCommandLineCompileAndPredict() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let mlmodel = dir.appendingPathComponent("swish.mlmodel")
        try Self.swishSpec().write(toFile: mlmodel.path)
        let xFile = dir.appendingPathComponent("x.npy")
        try NPY.write(try NDArray(shape: [4, 2, 2], scalars: Self.x), to: xFile)
        let bundle = dir.appendingPathComponent("swish.mlbundle").path
        let c = CLIRun(["compile", mlmodel.path, "--lower", "Swish=swish", "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        for (source, extra) in [(bundle, [String]()), (mlmodel.path, ["--lower", "Swish=swish"])] {
            let out = dir.appendingPathComponent("out\(extra.count)")
            let p = CLIRun(["predict", source, "--input", "x=" + xFile.path, "--output-dir", out.path] + extra)
            XCTAssertEqual(p.status, 0, p.err)
            guard p.status == 0 else { continue }
            let y = try NPY.read(contentsOf: out.appendingPathComponent("y.npy"))
            for (i, v) in Self.x.enumerated() { XCTAssertEqual(y.scalars[i], Self.swish(v), accuracy: 1e-5, "\(source) at \(i)") }
        }
        // A hooks file does the same.
        let hooks = dir.appendingPathComponent("hooks.json")
        try Data(#"{"hooks": [{"class": "Swish", "lower": "swish"}]}"#.utf8).write(to: hooks)
        let h = CLIRun(["compile", mlmodel.path, "--hooks", hooks.path, "-o", dir.appendingPathComponent("h.mlbundle").path])
        XCTAssertEqual(h.status, 0, h.err)
    }

    func testLoweringThatDoesNotFitNamesTheLayer() throws {
        // The model stores [4, 1, 1] for the output; swish keeps [4, 2, 2].
        let g0 = try CoreMLImporter.graph(from: Self.swishSpec(outputShape: [4, 1, 1]), fileName: "bad.mlmodel")
        XCTAssertThrowsError(try [try KerasHookSpec(lowerFlag: "Swish=swish")].lowerCustomNodes(in: g0, file: "bad.mlmodel")) { e in
            guard case let .doesNotFit(file, layer, cls, _, _)? = e as? CustomLayerLoweringError else { return XCTFail("\(e)") }
            XCTAssertEqual([file, layer, cls], ["bad.mlmodel", "act", "Swish"])
            XCTAssertTrue("\(e)".contains("it makes shape (1, 2, 2, 4) from input (1, 2, 2, 4); the model stores (1, 1, 1, 4)"), "\(e)")
        }
        let g1 = try CoreMLImporter.graph(from: Self.swishSpec(), fileName: "swish.mlmodel")
        // crop on a tensor whose stored output shape is the input's: no borders to take.
        XCTAssertThrowsError(try [try KerasHookSpec(lowerFlag: "act=crop:1,0,0,0")].lowerCustomNodes(in: g1, file: "swish.mlmodel")) { e in
            guard case .doesNotFit(_, "act", "Swish", "crop:1,0,0,0", _)? = e as? CustomLayerLoweringError else { return XCTFail("\(e)") }
        }
        // A MATCH that selects nothing, and an unknown operation.
        XCTAssertThrowsError(try [try KerasHookSpec(lowerFlag: "Swosh=swish")].lowerCustomNodes(in: g1, file: "swish.mlmodel", requiredMatches: 1)) { e in
            guard case let .unmatched(_, m, layers)? = e as? CustomLayerLoweringError else { return XCTFail("\(e)") }
            XCTAssertEqual(m, ["Swosh"]); XCTAssertEqual(layers, ["act"])
        }
        XCTAssertThrowsError(try KerasHookSpec(lowerFlag: "Swish=swoosh")) { e in
            XCTAssertTrue("\(e)".contains("unknown operation 'swoosh'"), "\(e)")
        }
        let dir = try TestPaths.temporaryDirectory(for: self)
        let mlmodel = dir.appendingPathComponent("bad.mlmodel")
        try Self.swishSpec(outputShape: [4, 1, 1]).write(toFile: mlmodel.path)
        let c = CLIRun(["compile", mlmodel.path, "--lower", "Swish=swish", "-o", dir.appendingPathComponent("b.mlbundle").path])
        XCTAssertNotEqual(c.status, 0)
        XCTAssertTrue(c.err.contains("custom layer 'act' (class Swish)"), c.err)
    }

    /// The corpus model's Swish custom layer, lowered, against the layer composed as x·sigmoid(x).
    func testCorpusSwishModel() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/hollance_NeuralMcNeuralNet_swish.mlmodel")
        let g0 = try CoreMLImporter.graph(from: try Spec.Model.load(contentsOf: url.path), fileName: url.lastPathComponent)
        let customs = g0.nodes.indices.filter { if case .custom = g0.nodes[$0].op { return true } else { return false } }
        XCTAssertFalse(customs.isEmpty)
        var composed = g0
        for i in customs.reversed() {
            let n = composed.nodes[i], s = n.name + "__sig"
            composed.tensorTypes[s] = composed.tensorTypes[n.inputs[0]]
            composed.nodes[i ... i] = [Node(name: s, op: .activation(.sigmoid), inputs: [n.inputs[0]], outputs: [s]),
                                       Node(name: n.name, op: .elementwise(.multiply), inputs: [n.inputs[0], s], outputs: n.outputs)]
        }
        let input = try XCTUnwrap(g0.inputs.first)
        let count = input.type.shape.reduce(1, *)
        let xs = (0..<count).map { Float(($0 * 37) % 101) / 25 - 2 }
        let dir = try TestPaths.temporaryDirectory(for: self)
        let xFile = dir.appendingPathComponent("x.npy")
        try NPY.write(try NDArray(shape: input.type.shape, scalars: xs), to: xFile)
        let bundle = dir.appendingPathComponent("swish.mlbundle").path
        let c = CLIRun(["compile", url.path, "--lower", "Swish=swish", "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        let out = dir.appendingPathComponent("out")
        let p = CLIRun(["predict", bundle, "--input", "\(input.name)=\(xFile.path)", "--output-dir", out.path])
        XCTAssertEqual(p.status, 0, p.err)
        guard p.status == 0 else { return }
        let ref = try Model(graph: composed, configuration: .init(referenceOnly: true))
            .prediction(from: [input.name: try NDArray(shape: input.type.shape, scalars: xs)])
        for o in g0.outputs {
            let got = try NPY.read(contentsOf: out.appendingPathComponent("\(o).npy"))
            let want = try XCTUnwrap(ref[o])
            XCTAssertEqual(got.scalars.count, want.scalars.count)
            for (a, b) in zip(got.scalars, want.scalars) { XCTAssertEqual(a, b, accuracy: 1e-4 * max(1, abs(b)), o) }
        }
    }
}
