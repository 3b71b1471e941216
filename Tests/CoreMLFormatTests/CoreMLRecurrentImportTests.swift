// Spec-level tests of the reader's sequence layers (RecurrentImport.swift): Core ML recurrent
// layers → `.recurrent` nodes with the Keras gate order, optional state inputs omitted (zeros),
// state outputs kept, sequence tensors through Seq-axis permutes and embeddings, the rules that
// refuse what the IR cannot hold, and the real Create ML activity classifier's state I/O.
import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

final class CoreMLRecurrentImportTests: XCTestCase {
    typealias G = RecurrentGraphs

    func recurrentNode(_ g: Graph, _ name: String = "rnn") throws -> (Node, RecurrentAttributes) {
        let n = try XCTUnwrap(g.nodes.first { $0.name == name }, "no node \(name) in \(g.nodes.map(\.name))")
        guard case let .recurrent(a) = n.op else { throw XCTSkip("\(name) is \(n.op.name)") }
        return (n, a)
    }

    /// IR → .mlmodel → IR: the node comes back with its attributes and its weights in Keras'
    /// gate order; Core ML's optional state inputs are omitted, its state outputs kept.
    func testExportedLSTMImportsBackToTheSameNode() throws {
        let a = RecurrentAttributes(kind: .lstm, units: 2, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5), returnSequences: true,
                                    goBackwards: true)
        let g = G.single(a)
        let model = try Spec.Model.decode(try CoreMLExporter.model(from: g).encode())
        let r = try CoreMLImporter.importModel(model, fileName: "lstm.mlmodel")
        let (n, b) = try recurrentNode(r.graph)
        XCTAssertEqual(b.kind, .lstm)
        XCTAssertEqual(b.units, 2)
        XCTAssertEqual(b.recurrentActivation, .hardSigmoid(alpha: 0.2, beta: 0.5))
        XCTAssertEqual(b.activation, .tanh)
        XCTAssertTrue(b.returnSequences)
        XCTAssertTrue(b.goBackwards)
        XCTAssertFalse(b.initialStates, "the optional state inputs are omitted: zeros")
        XCTAssertTrue(b.returnState, "the state outputs rnn_h_out / rnn_c_out are model outputs")
        for key in ["kernel", "recurrentKernel", "bias"] {
            XCTAssertEqual(n.weights[key]?.floats(), g.nodes[0].weights[key]?.floats(), key)
        }
        XCTAssertEqual(r.graph.inputs.map(\.name), ["x"])
        XCTAssertEqual(r.graph.description.metadata.userDefined["mlconv.omittedOptionalInputs"], "rnn_h_in,rnn_c_in")
        XCTAssertEqual(r.warnings.filter { $0.contains("optional recurrent-state input") }.count, 2, "\(r.warnings)")
        XCTAssertEqual(Set(r.graph.outputs), ["y", "rnn_h_out", "rnn_c_out"])
        XCTAssertEqual(r.graph.tensorTypes["rnn_h_out"]?.shape, [1, 2])
        // The sequence reaches the node as [1, S, D] and leaves as [1, S, U] (then NCHW [1, U, S, 1]).
        XCTAssertEqual(r.graph.tensorTypes[n.inputs[0]]?.shape, [1, 5, 3])
        XCTAssertEqual(r.graph.tensorTypes[n.outputs[0]]?.shape, [1, 5, 2])
        XCTAssertEqual(r.graph.tensorTypes["y"]?.shape, [1, 2, 5, 1])
    }

    func testBidirectionalLSTMGRUAndSimpleRNNImport() throws {
        for a in [RecurrentAttributes(kind: .lstm, units: 3, bidirectional: .concat),
                  RecurrentAttributes(kind: .gru, units: 2, activation: .relu, returnSequences: true),
                  RecurrentAttributes(kind: .simpleRNN, units: 4, activation: .sigmoid)] {
            let g = G.single(a, steps: 4)
            let model = try CoreMLExporter.model(from: g)
            let imported = try CoreMLImporter.graph(from: model, fileName: "\(a.kind).mlmodel")
            let (n, b) = try recurrentNode(imported)
            XCTAssertEqual(b.kind, a.kind)
            XCTAssertEqual(b.bidirectional, a.bidirectional)
            XCTAssertEqual(b.activation, a.activation)
            if a.kind != .simpleRNN { XCTAssertEqual(b.recurrentActivation, a.recurrentActivation) }
            XCTAssertFalse(b.resetAfter)
            for (key, w) in g.nodes[0].weights {
                XCTAssertEqual(n.weights[key]?.floats(), w.floats(), "\(a.kind): \(key)")
            }
        }
    }

    /// A Core ML model that feeds some states and leaves others to Core ML's zeros: the omitted
    /// one becomes a zero tensor, the required one an ordinary input.
    func testPartlyGivenStatesUseZerosForTheOmittedOne() throws {
        let g = G.single(RecurrentAttributes(kind: .lstm, units: 2), steps: 1)
        var model = try CoreMLExporter.model(from: g)
        // Make rnn_h_in required (a caller-provided state), keep rnn_c_in optional.
        model.description?.input[1].type?.isOptional = false
        let r = try CoreMLImporter.importModel(model, fileName: "partial.mlmodel")
        XCTAssertEqual(r.graph.inputs.map(\.name), ["x", "rnn_h_in"])
        let (n, b) = try recurrentNode(r.graph)
        XCTAssertTrue(b.initialStates)
        XCTAssertEqual(n.inputs.count, 3)
        XCTAssertTrue(r.graph.nodes.contains { $0.name.hasPrefix("rnn__zero_state1") }, "\(r.graph.nodes.map(\.name))")
    }

    func testEmbeddingOfAnIndexSequence() throws {
        let g = ExportGraphs.single(.embedding(outputChannels: 5), shape: [1, 4], weights: ["weight": G.rows(5, 7)])
        let imported = try CoreMLImporter.graph(from: try CoreMLExporter.model(from: g), fileName: "emb.mlmodel")
        let e = try XCTUnwrap(imported.nodes.first { if case .embedding = $0.op { return true } else { return false } })
        XCTAssertEqual(imported.tensorTypes[e.inputs[0]]?.shape, [1, 4])
        XCTAssertEqual(imported.tensorTypes[e.outputs[0]]?.shape, [1, 4, 5])
        XCTAssertEqual(e.weights["weight"]?.floats(), G.rows(5, 7).floats())
        XCTAssertEqual(imported.tensorTypes["y"]?.shape, [1, 5, 4, 1])
    }

    /// coremltools' 1-D permute (3, 1, 2, 0) moves W onto Seq: a reshape, no data movement.
    func testPermutesOfTheSeqAxis() throws {
        let m = ImportSpecs.model(
            [ImportSpecs.array("x", [3, 1, 6])], [ImportSpecs.array("y", [3, 1, 6])],
            [ImportSpecs.layer("to_seq", ["x"], ["s"], .permute(axis: [3, 1, 2, 0])),
             ImportSpecs.layer("act", ["s"], ["t"], .activation(Spec.ActivationParams(.tanh))),
             ImportSpecs.layer("back", ["t"], ["y"], .permute(axis: [3, 1, 2, 0]))])
        let g = try CoreMLImporter.graph(from: m, fileName: "perm.mlmodel")
        XCTAssertEqual(g.tensorTypes["s"]?.shape, [1, 6, 3], "six steps of 3-vectors")
        XCTAssertFalse(g.nodes.contains { if case .transpose = $0.op { return $0.name.hasPrefix("to_seq") } else { return false } },
                       "W → Seq keeps the (Seq, H, W, C) memory order")
        // C → Seq on a sequence moves data: [S, C, 1, 1] → [C, S, 1, 1].
        let m2 = ImportSpecs.model(
            [ImportSpecs.array("x", [3, 1, 6])], [ImportSpecs.array("y", [6, 3, 1])],
            [ImportSpecs.layer("to_seq", ["x"], ["s"], .permute(axis: [3, 1, 2, 0])),
             ImportSpecs.layer("swap", ["s"], ["t"], .permute(axis: [1, 0, 2, 3])),
             ImportSpecs.layer("back", ["t"], ["y"], .permute(axis: [2, 1, 0, 3]))])
        let g2 = try CoreMLImporter.graph(from: m2, fileName: "perm2.mlmodel")
        XCTAssertEqual(g2.tensorTypes["t"]?.shape, [1, 3, 6])
        XCTAssertTrue(g2.nodes.contains { $0.op == .transpose(perm: [0, 2, 1]) }, "\(g2.nodes.map(\.op.name))")
        // A sequence of images is not representable.
        let m3 = ImportSpecs.model([ImportSpecs.array("x", [3, 4, 6])], [ImportSpecs.array("y", [3, 4, 1])],
                                   [ImportSpecs.layer("bad", ["x"], ["y"], .permute(axis: [3, 1, 2, 0]))])
        XCTAssertThrowsError(try CoreMLImporter.graph(from: m3, fileName: "perm3.mlmodel")) { error in
            XCTAssertTrue("\(error)".contains("sequences are of vectors"), "\(error)")
        }
    }

    func testWhatTheIRCannotHoldIsRefused() throws {
        var peep = Spec.UniDirectionalLSTMLayerParams(inputVectorSize: 2, outputVectorSize: 2, params: Spec.LSTMParams(hasPeepholeVectors: true))
        peep.weightParams = Spec.LSTMWeightParams()
        var coupled = peep
        coupled.params = Spec.LSTMParams(coupledInputAndForgetGate: true)
        let act = { (n: Spec.ActivationParams.Nonlinearity) in Spec.ActivationParams(n) }
        let mixed = Spec.UniDirectionalLSTMLayerParams(inputVectorSize: 2, outputVectorSize: 2, activations: [act(.sigmoid), act(.tanh), act(.relu)])
        let bi = Spec.BiDirectionalLSTMLayerParams(inputVectorSize: 2, outputVectorSize: 2, activationsForwardLSTM: [act(.sigmoid), act(.tanh), act(.tanh)],
                                                   activationsBackwardLSTM: [act(.sigmoid), act(.relu), act(.relu)],
                                                   weightParams: [Spec.LSTMWeightParams(), Spec.LSTMWeightParams()])
        let expected: [(Spec.NeuralNetworkLayer.Layer, String)] = [
            (.uniDirectionalLSTM(peep), "peephole"), (.uniDirectionalLSTM(coupled), "coupled input and forget gate"),
            (.uniDirectionalLSTM(mixed), "different cell-input"), (.biDirectionalLSTM(bi), "different activations"),
            (.simpleRecurrent(Spec.SimpleRecurrentLayerParams(inputVectorSize: 2, outputVectorSize: 2, activation: act(.parametricSoftplus(alpha: nil, beta: nil)))),
             "not expressible"),
        ]
        for (layer, text) in expected {
            let m = ImportSpecs.model([ImportSpecs.array("x", [2])], [ImportSpecs.array("y", [2])], [ImportSpecs.layer("rnn", ["x"], ["y"], layer)])
            XCTAssertThrowsError(try CoreMLImporter.graph(from: m, fileName: "bad.mlmodel")) { error in
                let p = (error as? CoreMLImportError)?.problems ?? []
                XCTAssertEqual(p.map(\.layer), ["rnn"], "\(error)")
                XCTAssertTrue(p.first?.reason.contains(text) ?? false, "\(text): \(error)")
            }
        }
    }

    /// forgetBias = true (coremltools' Keras converter writes Keras' unit_forget_bias): the
    /// stored bias is used as is, with a warning.
    func testForgetBiasIsUsedAsStoredWithAWarning() throws {
        let g = G.single(RecurrentAttributes(kind: .lstm, units: 2), steps: 2)
        var model = try CoreMLExporter.model(from: g)
        var layers = try XCTUnwrap(model.neuralNetwork?.layers)
        let i = try XCTUnwrap(layers.firstIndex { $0.name == "rnn" })
        guard case var .uniDirectionalLSTM(p) = layers[i].layer else { return XCTFail() }
        p.params?.forgetBias = true
        layers[i].layer = .uniDirectionalLSTM(p)
        model.type = .neuralNetwork(Spec.NeuralNetwork(layers: layers, preprocessing: []))
        let r = try CoreMLImporter.importModel(model, fileName: "fb.mlmodel")
        XCTAssertTrue(r.warnings.contains { $0.contains("forgetBias") }, "\(r.warnings)")
        let (n, _) = try recurrentNode(r.graph)
        XCTAssertEqual(n.weights["bias"]?.floats(), g.nodes[0].weights["bias"]?.floats())
    }

    /// The Create ML activity classifier: h and c sliced from the required `stateIn`, the final
    /// states concatenated into `stateOut`; one step per prediction.
    func testMotionClassifierStateIO() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/miyakooti_motionClassifier.mlmodel")
        let r = try CoreMLImporter.importModel(try Spec.Model.load(contentsOf: url.path), fileName: url.lastPathComponent)
        let (n, a) = try recurrentNode(r.graph, "lstm")
        XCTAssertEqual(a.kind, .lstm)
        XCTAssertEqual(a.units, 200)
        XCTAssertTrue(a.initialStates)
        XCTAssertTrue(a.returnState)
        XCTAssertEqual(r.graph.tensorTypes[n.inputs[0]]?.shape, [1, 1, 64], "one step of 64 features")
        XCTAssertEqual(n.inputs.dropFirst().map { r.graph.tensorTypes[$0]?.shape ?? [] }, [[1, 200], [1, 200]])
        XCTAssertTrue(r.graph.inputs.contains { $0.name == "stateIn" && $0.type.shape == [1, 400] })
        XCTAssertEqual(r.graph.tensorTypes["stateOut"]?.shape, [1, 400])
        XCTAssertEqual(r.graph.description.classLabels, ["circle", "stay"])
    }
}
