// MARK: transpose sinking (issue 12)
//
// A real MobileNetV2 as an ML program: the Teachable Machine export of ../shared/corpus/keras
// (tf.keras 2.4, a nested Functional MobileNetV2 with 10 residual adds) → KerasFrontend →
// MLProgramExporter (fp32; convolutions NCHW, as coremltools writes them) → MILImporter →
// MLRuntime. The imported graph has a transpose on each side of every convolution; after
// PassPipeline.inference at most two may be left (`sink_transposes` removes the 31 that
// `cancel_transpose_pairs` leaves at the residual adds; one stays before the global mean), and the outputs must equal those of the
// pipeline without `sink_transposes` and of the Keras route.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class SinkTransposesMLProgramTests: XCTestCase {
    func testMobileNetV2ProgramLosesItsTransposesAtParity() throws {
        let h5 = try TestPaths.sharedFile("corpus/keras/teachablemachine_0N1cky1_keras_model.h5")
        let keras = try KerasConverter().convert(modelAt: h5)
        let package = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("mobilenetv2.mlpackage").path
        try MLProgramExporter.write(keras, to: package, options: MLProgramExportOptions(precision: .float32))
        let spec = try Spec.Model.load(contentsOf: package)
        let root = try MLPackage.read(at: package).rootModelPath
        let program = try MILImporter.importModel(spec, fileName: package, modelPath: (root as NSString).deletingLastPathComponent).graph
        func transposes(_ g: Graph) -> Int { g.nodes.filter { $0.op.name == "transpose" }.count }
        XCTAssertGreaterThanOrEqual(transposes(program), 100, "a transpose on each side of the 52 convolutions")

        let sunk = try Model(graph: program)
        let unsunk = try Model(graph: program, configuration: .init(disabledPasses: ["sink_transposes"]))
        XCTAssertLessThanOrEqual(transposes(sunk.graph), 2, "at most at the graph input / output: \(sunk.graph.opCounts)")
        XCTAssertEqual(sunk.graph.nodes.filter { $0.op.name == "batchNorm" }.count, 0, "every batch norm folded into a convolution")
        XCTAssertGreaterThanOrEqual(transposes(unsunk.graph), 30, "without the pass the residual transposes stay")
        XCTAssertLessThan(sunk.graph.nodes.count, unsunk.graph.nodes.count)
        // The pipeline (as `Model` runs it) is idempotent on the real graph too.
        var twice = program
        XCTAssertTrue(try PassPipeline.inference.run(on: &twice).contains("sink_transposes"))
        XCTAssertLessThanOrEqual(transposes(twice), 2)
        XCTAssertEqual(try PassPipeline.inference.run(on: &twice), [])

        let input = try XCTUnwrap(program.inputs.first)
        let x = try NDArray(shape: input.type.shape, scalars: randomFloats(count: input.type.elementCount, seed: 3, in: -1 ... 1))
        let output = try XCTUnwrap(program.outputs.first)
        let a = try XCTUnwrap(try sunk.prediction(from: [input.name: x])[output])
        let b = try XCTUnwrap(try unsunk.prediction(from: [input.name: x])[output])
        let k = try XCTUnwrap(try Model(graph: keras).prediction(from: [keras.inputs[0].name: x])[keras.outputs[0]])
        XCTAssertEqual(a.shape, b.shape)
        XCTAssertEqual(a.scalars.count, k.scalars.count)
        XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, b.scalars), 1e-5, "with and without sink_transposes")
        XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, k.scalars), 1e-5, "ML program vs Keras route")
        XCTAssertGreaterThan(a.scalars.max() ?? 0, 0.1, "softmax over 3 classes: a non-trivial output")
    }
}
