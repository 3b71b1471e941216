// Real Core ML models imported with CoreMLImporter and run with MLRuntime.Model: the style
// transfer model against the Keras reference output, the MNIST classifier against its Keras
// source converted by KerasFrontend, the three compressed Food-101 SqueezeNets against each
// other, the custom-layer model (Swish), and every other corpus network that imports.
// Skipped, visibly, when ../shared is absent.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class CoreMLImportParityTests: XCTestCase {
    // MARK: Helpers

    private func load(_ relative: String) throws -> (Spec.Model, URL) {
        let url = try TestPaths.sharedFile(relative)
        return (try Spec.Model.load(contentsOf: url.path), url)
    }

    private func importGraph(_ relative: String) throws -> Graph {
        let (spec, url) = try load(relative)
        return try CoreMLImporter.graph(from: spec, fileName: url.lastPathComponent)
    }

    /// PSNR in dB of `a` against `b` after clamping both to 0…255 and rounding (what a PNG keeps).
    private func psnr8bit(_ a: [Float], _ b: [Float]) -> Double {
        precondition(a.count == b.count)
        func q(_ x: Float) -> Double { Double(Swift.min(255, Swift.max(0, x)).rounded()) }
        var se = 0.0
        for (x, y) in zip(a, b) { let d = q(x) - q(y); se += d * d }
        let mse = se / Double(a.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    private func argmax(_ v: [Float]) -> Int { v.indices.max { v[$0] < v[$1] }! }

    // MARK: Style transfer

    /// The real Van Gogh style transfer model (image → image, custom layers ResCropBlockLambda and
    /// RescaleOutputLambda) on the London Big Ben picture, against the Keras output.
    func testStyleTransferMatchesKerasReference() throws {
        let graph = try importGraph("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        let input = try NPY.read(contentsOf: try TestPaths.sharedFile("models/reference/london_big-ben_320.npy"))
        let expected = try NPY.read(contentsOf: try TestPaths.sharedFile("models/reference/style_transfer_vangogh__london_big-ben.npy"))

        XCTAssertEqual(graph.inputs.map(\.name), ["image"])
        XCTAssertEqual(graph.inputs[0].type.shape, [1, 320, 320, 3])
        XCTAssertEqual(graph.outputs, ["output"])
        XCTAssertEqual(graph.description.inputs.first?.image, ImageFeature(width: 320, height: 320, colorSpace: .rgb, scale: 1, bias: [0, 0, 0]))
        XCTAssertEqual(graph.description.outputs.first?.image?.colorSpace, .rgb)

        let model = try Model(graph: graph)
        XCTAssertEqual(model.modelDescription.outputs.first?.shape, [1, 320, 320, 3])
        let x = try input.reshaped([1, 320, 320, 3])
        let out = try model.prediction(from: ["image": x])["output"]!
        XCTAssertEqual(out.shape, [1, 320, 320, 3])
        let p = psnr8bit(out.scalars, expected.scalars)
        print("CoreMLImportParityTests: style transfer PSNR vs Keras reference = \(String(format: "%.2f", p)) dB "
            + "(max |diff| before rounding \(maxAbsDiff(out.scalars, expected.scalars)))")
        XCTAssertGreaterThanOrEqual(p, 45, "PSNR \(p) dB")

        // The reference kernels agree with the optimized ones.
        let ref = try Model(graph: graph, configuration: .init(referenceOnly: true))
        let outRef = try ref.prediction(from: ["image": x])["output"]!
        XCTAssertGreaterThanOrEqual(psnr8bit(outRef.scalars, expected.scalars), 45)
    }

    // MARK: MNIST (Core ML vs Keras source)

    /// r4ghu's MNIST classifier: the Core ML model and the Keras .h5 it was converted from, on the
    /// same random digit. Core ML scales the image by 1/255 in its preprocessing; the Keras model
    /// takes the scaled values.
    func testMNISTClassifierMatchesKerasSource() throws {
        let graph = try importGraph("corpus/mlmodel/r4ghu_mnistCNN.mlmodel")
        XCTAssertEqual(graph.description.classLabels, (0..<10).map(String.init))
        XCTAssertEqual(graph.description.probabilitiesOutput, "output")
        XCTAssertEqual(graph.description.metadata.userDefined["mlconv.classLabelOutput"], "classLabel")
        XCTAssertEqual(graph.inputs[0].type.shape, [1, 28, 28, 1])
        let scale = try XCTUnwrap(graph.description.inputs.first?.image?.scale)
        XCTAssertEqual(scale, 1 / 255, accuracy: 1e-6)
        let coreml = try Model(graph: graph)

        let kerasGraph = try KerasConverter().convert(modelAt: try TestPaths.sharedFile("corpus/keras/r4ghu_mnistCNN.h5"))
        let keras = try Model(graph: kerasGraph)
        let kin = kerasGraph.inputs[0]
        XCTAssertEqual(kin.type.shape, [1, 28, 28, 1])

        for seed: UInt64 in [1, 2, 3] {
            let pixels = randomFloats(count: 28 * 28, seed: seed, in: 0...255).map { $0.rounded() }
            let a = try coreml.prediction(from: ["image": NDArray(shape: [1, 28, 28, 1], scalars: pixels)])["output"]!
            let kOut = try keras.prediction(from: [kin.name: NDArray(shape: [1, 28, 28, 1], scalars: pixels.map { $0 * scale })])
            let b = kOut[kerasGraph.outputs[0]]!
            XCTAssertEqual(a.shape, [1, 10])
            XCTAssertEqual(b.count, 10)
            assertClose(a.scalars, b.scalars, tolerance: 1e-5, "seed \(seed)")
            XCTAssertEqual(argmax(a.scalars), argmax(b.scalars))
        }
    }

    /// atveit's tiny Keras → Core ML network ([2] → [1]) against its Keras file.
    func testKeras2iOSMatchesKerasSource() throws {
        let graph = try importGraph("corpus/mlmodel/atveit_keras2ios_build.mlmodel")
        XCTAssertEqual(graph.inputs[0].type.shape, [1, 2])
        let coreml = try Model(graph: graph)
        let kerasGraph = try KerasConverter().convert(modelAt: try TestPaths.sharedFile("corpus/keras/atveit_keras2ios_weights.h5"))
        let keras = try Model(graph: kerasGraph)
        for seed: UInt64 in [1, 2, 3, 4] {
            let v = randomFloats(count: 2, seed: seed)
            let a = try coreml.prediction(from: [graph.inputs[0].name: NDArray(shape: [1, 2], scalars: v)])[graph.outputs[0]]!
            let b = try keras.prediction(from: [kerasGraph.inputs[0].name: NDArray(shape: [1, 2], scalars: v)])[kerasGraph.outputs[0]]!
            XCTAssertEqual(a.shape, [1, 1])
            assertClose(a.scalars, b.scalars, tolerance: 1e-5)
        }
    }

    // MARK: Compressed weights

    /// The same SqueezeNet stored with fp16, 8-bit linear and 4-bit LUT weights: the IR keeps the
    /// encodings, and the three agree on one random BGR image.
    func testFoodClassifiersKeepEncodingsAndAgree() throws {
        let files = ["kingreza_food_fp16", "kingreza_food_linear_8bit", "kingreza_food_kmeans_lut_4bit"]
        let image = randomFloats(count: 227 * 227 * 3, seed: 7, in: 0...255).map { $0.rounded() }
        var outputs: [[Float]] = []
        for f in files {
            let graph = try importGraph("corpus/mlmodel/\(f).mlmodel")
            XCTAssertEqual(graph.description.classLabels?.count, 101, f)
            XCTAssertEqual(graph.description.probabilitiesOutput, "prob", f)
            XCTAssertEqual(graph.description.inputs.first?.image?.colorSpace, .bgr, f)
            let conv = graph.nodes.filter { if case .conv2d = $0.op { return true } else { return false } }
            XCTAssertEqual(conv.count, 26, f)
            for n in conv {
                let enc = n.weights["weight"]!.encoding
                switch (f, enc) {
                case ("kingreza_food_fp16", .float16): break
                case ("kingreza_food_linear_8bit", .linear(let q)) where q.bits == 8 && q.axis == 0: break
                case ("kingreza_food_kmeans_lut_4bit", .lookupTable(let q)) where q.bits == 4 && q.table.count == 16: break
                default: XCTFail("\(f): node \(n.name) has weight encoding \(enc)")
                }
            }
            let model = try Model(graph: graph)
            let out = try model.prediction(from: ["data": NDArray(shape: [1, 227, 227, 3], scalars: image)])["prob"]!
            XCTAssertEqual(out.shape, [1, 101])
            XCTAssertEqual(out.scalars.reduce(0, +), 1, accuracy: 1e-3, f)
            outputs.append(out.scalars)
        }
        let top = outputs.map(argmax)
        print("CoreMLImportParityTests: food top-1 fp16/8-bit/4-bit = \(top), max prob diff 8-bit \(maxAbsDiff(outputs[0], outputs[1])), 4-bit \(maxAbsDiff(outputs[0], outputs[2]))")
        XCTAssertEqual(top[0], top[1], "fp16 and 8-bit linear disagree on the top class")
        XCTAssertLessThan(maxAbsDiff(outputs[0], outputs[1]), 0.05)
        XCTAssertLessThan(maxAbsDiff(outputs[0], outputs[2]), 0.25)
        // 4-bit: the fp16 top class stays among the LUT model's top 5 (coremltools' compare_models criterion).
        let top5 = outputs[2].indices.sorted { outputs[2][$0] > outputs[2][$1] }.prefix(5)
        XCTAssertTrue(top5.contains(top[0]), "fp16 top-1 \(top[0]) not in the 4-bit model's top 5 \(Array(top5))")
    }

    // MARK: Custom layers

    /// A custom Swish layer: the import succeeds (shape-preserving, with a warning); loading fails
    /// naming the class until an implementation is registered.
    func testSwishCustomLayerNeedsRegistration() throws {
        let (spec, url) = try load("corpus/mlmodel/hollance_NeuralMcNeuralNet_swish.mlmodel")
        let result = try CoreMLImporter.importModel(spec, fileName: url.lastPathComponent)
        XCTAssertTrue(result.warnings.contains { $0.contains("Swish") }, "\(result.warnings)")
        CustomLayerRegistry.unregister(className: "Swish")
        XCTAssertThrowsError(try Model(graph: result.graph)) { error in
            guard case let RuntimeError.missingCustomLayer(className, layers) = error else {
                return XCTFail("expected missingCustomLayer, got \(error)")
            }
            XCTAssertEqual(className, "Swish")
            XCTAssertEqual(layers, ["swish_1"])
        }
        CustomLayerRegistry.register(className: "Swish", TestSwish.self)
        defer { CustomLayerRegistry.unregister(className: "Swish") }
        let model = try Model(graph: result.graph)
        let x = randomFloats(count: 256 * 256 * 3, seed: 3, in: 0...255)
        let out = try model.prediction(from: ["image": NDArray(shape: [1, 256, 256, 3], scalars: x)])["output"]!
        XCTAssertEqual(out.shape, [1, 10])
        XCTAssertEqual(out.scalars.reduce(0, +), 1, accuracy: 1e-4)
    }

    // MARK: Every importable corpus network runs

    func testEveryImportableCorpusNetworkRuns() throws {
        let dir = try TestPaths.sharedFile("corpus/mlmodel")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".mlmodel") }.sorted()
        var ran: [String] = []
        CustomLayerRegistry.register(className: "Swish", TestSwish.self)
        defer { CustomLayerRegistry.unregister(className: "Swish") }
        for name in names {
            guard let spec = try? Spec.Model.load(contentsOf: dir.appendingPathComponent(name).path),
                  let graph = try? CoreMLImporter.graph(from: spec, fileName: name) else { continue }
            let model = try Model(graph: graph)
            var feeds: [String: NDArray] = [:]
            for (i, input) in graph.inputs.enumerated() {
                let n = input.type.elementCount
                let isImage = graph.description.inputs.first { $0.name == input.name }?.image != nil
                feeds[input.name] = try NDArray(shape: input.type.shape,
                                                scalars: randomFloats(count: n, seed: UInt64(i + 1), in: isImage ? 0...255 : -1...1))
            }
            let out = try model.prediction(from: feeds)
            for (k, v) in out {
                XCTAssertTrue(v.scalars.allSatisfy(\.isFinite), "\(name): output \(k) is not finite")
            }
            ran.append(name)
        }
        print("CoreMLImportParityTests: corpus networks that import and run: \(ran.joined(separator: ", "))")
        XCTAssertTrue(ran.contains("r4ghu_mnistCNN.mlmodel"))
        XCTAssertTrue(ran.contains("packt_FastStyleTransferVanGogh.mlmodel"))
        XCTAssertGreaterThanOrEqual(ran.count, 9)
    }
}

/// y = x·sigmoid(x), the Swish of hollance's custom-layer blog post.
final class TestSwish: CustomLayer {
    init(parameters: [String: CustomParameterValue]) throws {}
    func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]] { inputShapes }
    func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws {
        for i in 0..<inputs[0].count {
            let x = inputs[0][i]
            outputs[0][i] = x / (1 + Foundation.exp(-x))
        }
    }
}
