// `mlconv inspect` on sequence models: the sequence input, the optional recurrent-state inputs
// and the state outputs are marked in the feature list, and a "Recurrent layers" section lists
// each layer's state wiring (RecurrentInspection.swift).
import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

final class CoreMLRecurrentInspectTests: XCTestCase {
    func testExportedLSTMShowsSequenceAndOptionalStateFeatures() throws {
        let g = RecurrentGraphs.single(RecurrentAttributes(kind: .lstm, units: 2, returnSequences: true, bidirectional: .concat))
        let dir = try TestPaths.temporaryDirectory(for: self)
        let url = dir.appendingPathComponent("bilstm.mlmodel")
        try CoreMLExporter.model(from: g).write(toFile: url.path)
        let r = try CoreMLInspector.report(for: url)
        XCTAssertTrue(r.text.contains("sequence input of biDirectionalLSTM 'rnn' (steps moved onto the Seq axis by permute"), r.text)
        XCTAssertTrue(r.text.contains("rnn_h_in_rev"), r.text)
        XCTAssertTrue(r.text.contains("optional [recurrent state: initial cell state c (backward) of 'rnn', zeros when absent]"), r.text)
        XCTAssertTrue(r.text.contains("[recurrent state: final hidden state h of 'rnn']"), r.text)
        XCTAssertTrue(r.text.contains("  Recurrent layers:\n    rnn: biDirectionalLSTM 3→2"), r.text)
        XCTAssertTrue(r.text.contains("state in:    h ← model input 'rnn_h_in', optional: zeros when absent"), r.text)
        let inputs = try XCTUnwrap(r.jsonObject["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.filter { $0["isOptional"] as? Bool == true }.count, 4)
        XCTAssertEqual(inputs.compactMap { $0["recurrentRole"] as? String }.count, 5)
        let nn = try XCTUnwrap(r.jsonObject["neuralNetwork"] as? [String: Any])
        let layers = try XCTUnwrap(nn["recurrentLayers"] as? [[String: Any]])
        XCTAssertEqual(layers.count, 1)
        XCTAssertEqual((layers[0]["stateInputs"] as? [[String: Any]])?.map { $0["blob"] as? String ?? "" },
                       ["rnn_h_in", "rnn_c_in", "rnn_h_in_rev", "rnn_c_in_rev"])
        XCTAssertEqual((layers[0]["stateOutputs"] as? [[String: Any]])?.compactMap { $0["modelOutput"] as? Bool }, [true, true, true, true])
    }

    func testMotionClassifierShowsItsPackedState() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/miyakooti_motionClassifier.mlmodel")
        let r = try CoreMLInspector.report(for: url)
        XCTAssertTrue(r.text.contains("stateIn         MultiArray (Double 400) [packed recurrent state: initial hidden state h of 'lstm' (slice 'hiddenIn')"), r.text)
        XCTAssertTrue(r.text.contains("[packed recurrent state (concat 'stateOut'): final hidden state h of 'lstm', final cell state c of 'lstm']"), r.text)
        XCTAssertTrue(r.text.contains("state in:    h ← 'hiddenIn' from layer 'hiddenIn'; c ← 'cellIn' from layer 'cellIn'"), r.text)
        XCTAssertEqual((r.jsonObject["mlconv"] as? [String: Any])?["canImport"] as? Bool, true)
    }
}
