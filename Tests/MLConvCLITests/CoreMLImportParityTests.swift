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
    /// encodings, the decoded weights are close to the fp16 ones, and the three agree on one
    /// random BGR image and on a real photo (a 227×227 crop of the Big Ben picture).
    func testFoodClassifiersKeepEncodingsAndAgree() throws {
        let files = ["kingreza_food_fp16", "kingreza_food_linear_8bit", "kingreza_food_kmeans_lut_4bit"]
        let noise = randomFloats(count: 227 * 227 * 3, seed: 7, in: 0...255).map { $0.rounded() }
        // Centre crop of the 320×320 RGB photo, channels reversed to BGR.
        let photo = try NPY.read(contentsOf: try TestPaths.sharedFile("models/reference/london_big-ben_320.npy")).scalars
        var bgr = [Float](repeating: 0, count: 227 * 227 * 3)
        for y in 0..<227 { for x in 0..<227 { for c in 0..<3 { bgr[(y * 227 + x) * 3 + c] = photo[((y + 46) * 320 + x + 46) * 3 + 2 - c] } } }

        var graphs: [Graph] = []
        var outputs: [[[Float]]] = []  // [model][input]
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
            var perInput: [[Float]] = []
            for image in [noise, bgr] {
                let out = try model.prediction(from: ["data": NDArray(shape: [1, 227, 227, 3], scalars: image)])["prob"]!
                XCTAssertEqual(out.shape, [1, 101])
                XCTAssertEqual(out.scalars.reduce(0, +), 1, accuracy: 1e-3, f)
                perInput.append(out.scalars)
            }
            graphs.append(graph)
            outputs.append(perInput)
        }
        // Decoded weights against fp16: 8-bit linear ≈ 40+ dB, 4-bit k-means ≈ 17–20 dB.
        for (gi, minSNR) in [(1, 35.0), (2, 15.0)] {
            for n in graphs[0].nodes {
                guard case .conv2d = n.op, let m = graphs[gi].nodes.first(where: { $0.name == n.name }) else { continue }
                let a = n.weights["weight"]!.floats(), b = m.weights["weight"]!.floats()
                var sig = 0.0, err = 0.0
                for (x, y) in zip(a, b) { sig += Double(x * x); err += Double((x - y) * (x - y)) }
                XCTAssertGreaterThan(10 * log10(sig / err), minSNR, "\(files[gi]) \(n.name)")
            }
        }
        for (i, what) in ["random image", "photo"].enumerated() {
            let top = outputs.map { argmax($0[i]) }
            let d8 = maxAbsDiff(outputs[0][i], outputs[1][i]), d4 = maxAbsDiff(outputs[0][i], outputs[2][i])
            print("CoreMLImportParityTests: food \(what): top-1 fp16/8-bit/4-bit = \(top), max prob diff 8-bit \(d8), 4-bit \(d4)")
            XCTAssertEqual(top[0], top[1], "\(what): fp16 and 8-bit linear disagree on the top class")
            XCTAssertLessThan(d8, 0.05, what)
            // 4-bit: the fp16 top class stays among the LUT model's top 5 (coremltools' compare_models criterion).
            let top5 = outputs[2][i].indices.sorted { outputs[2][i][$0] > outputs[2][i][$1] }.prefix(5)
            XCTAssertTrue(top5.contains(top[0]), "\(what): fp16 top-1 \(top[0]) not in the 4-bit model's top 5 \(Array(top5))")
        }
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
        CustomLayerRegistry.register(className: "Swish", ParityTestSwish.self)
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
        CustomLayerRegistry.register(className: "Swish", ParityTestSwish.self)
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

/// Small Core ML specs run through the importer and the runtime, against references written in
/// Core ML's own [C, H, W] terms: they pin down the layout mapping layer by layer.
final class CoreMLImportLayerSemanticsTests: XCTestCase {
    private func array(_ name: String, _ shape: [Int]) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: shape.map(Int64.init), dataType: .float32))))
    }

    private func layer(_ name: String, _ ins: [String], _ outs: [String], _ l: Spec.NeuralNetworkLayer.Layer) -> Spec.NeuralNetworkLayer {
        Spec.NeuralNetworkLayer(name: name, input: ins, output: outs, layer: l)
    }

    /// Runs a network whose inputs and outputs are multi-arrays; arrays are given and returned
    /// in Core ML's row-major [C, H, W] (or [C]) order.
    private func run(_ inputs: [(String, [Int], [Float])], _ outputs: [(String, [Int])], _ layers: [Spec.NeuralNetworkLayer],
                     preprocessing: [Spec.NeuralNetworkPreprocessing] = [], image: Spec.FeatureDescription? = nil) throws -> [String: [Float]] {
        var ins = inputs.map { array($0.0, $0.1) }
        if let image { ins = [image] }
        let m = Spec.Model(specificationVersion: 4, description: Spec.ModelDescription(input: ins, output: outputs.map { array($0.0, $0.1) }),
                           type: .neuralNetwork(Spec.NeuralNetwork(layers: layers, preprocessing: preprocessing)))
        let g = try CoreMLImporter.graph(from: m, fileName: "semantics.mlmodel")
        let model = try Model(graph: g, configuration: .init(referenceOnly: true))
        var feeds: [String: NDArray] = [:]
        for (i, input) in g.inputs.enumerated() { feeds[input.name] = try NDArray(shape: input.type.shape, scalars: inputs[i].2) }
        let out = try model.prediction(from: feeds)
        var result: [String: [Float]] = [:]
        for (name, shape) in outputs {
            let a = try XCTUnwrap(out[name], name)
            XCTAssertEqual(a.shape, [1] + shape, name)
            result[name] = a.scalars
        }
        return result
    }

    private func chw(_ x: [Float], _ c: Int, _ h: Int, _ w: Int, _ ci: Int, _ y: Int, _ xi: Int) -> Float { x[(ci * h + y) * w + xi] }
    private func act(_ a: Spec.ActivationParams.Nonlinearity) -> Spec.NeuralNetworkLayer.Layer { .activation(Spec.ActivationParams(a)) }

    func testFlattenReshapePermute() throws {
        let (c, h, w) = (2, 3, 4)
        let x = (0..<24).map(Float.init)
        let r = try run([("x", [c, h, w], x)],
                        [("f1", [24]), ("f2", [24]), ("p", [h, w, c]), ("r1", [4, 3, 2]), ("r2", [4, 3, 2])],
                        [layer("f1", ["x"], ["f1"], .flatten(mode: .channelFirst)),
                         layer("f2", ["x"], ["f2"], .flatten(mode: .channelLast)),
                         layer("p", ["x"], ["p"], .permute(axis: [0, 2, 3, 1])),
                         layer("r1", ["x"], ["r1"], .reshape(Spec.ReshapeLayerParams(targetShape: [4, 3, 2], mode: .channelFirst))),
                         layer("r2", ["x"], ["r2"], .reshape(Spec.ReshapeLayerParams(targetShape: [4, 3, 2], mode: .channelLast)))])
        var hwc: [Float] = []
        for y in 0..<h { for xi in 0..<w { for ci in 0..<c { hwc.append(chw(x, c, h, w, ci, y, xi)) } } }
        XCTAssertEqual(r["f1"], x, "CHANNEL_FIRST flatten keeps C, H, W order")
        XCTAssertEqual(r["f2"], hwc, "CHANNEL_LAST flatten is H, W, C order")
        XCTAssertEqual(r["p"], hwc, "permute [0,2,3,1] gives [H, W, C]")
        XCTAssertEqual(r["r1"], x, "CHANNEL_FIRST reshape keeps the data order")
        // CHANNEL_LAST: HWC data read as [H'=3, W'=2, C'=4], returned as [C', H', W'].
        var r2: [Float] = []
        for c2 in 0..<4 { for y in 0..<3 { for xi in 0..<2 { r2.append(hwc[(y * 2 + xi) * 4 + c2]) } } }
        XCTAssertEqual(r["r2"], r2)
    }

    func testInnerProductOnSpatialBlobUsesCHWOrder() throws {
        let x = randomFloats(count: 24, seed: 4)
        let wts = randomFloats(count: 3 * 24, seed: 5)
        let r = try run([("x", [2, 3, 4], x)], [("y", [3])],
                        [layer("fc", ["x"], ["y"], .innerProduct(Spec.InnerProductLayerParams(
                            inputChannels: 24, outputChannels: 3, hasBias: true, weights: Spec.WeightParams(wts), bias: Spec.WeightParams([1, 2, 3]))))])
        var ref = [Float](repeating: 0, count: 3)
        for o in 0..<3 {
            var acc = Float(o + 1)
            for i in 0..<24 { acc += wts[o * 24 + i] * x[i] }
            ref[o] = acc
        }
        assertClose(r["y"]!, ref, tolerance: 1e-4)
    }

    func testCropPaddingAndConcat() throws {
        let (c, h, w) = (2, 6, 7)
        let x = randomFloats(count: c * h * w, seed: 6)
        let ref = randomFloats(count: 3 * 4, seed: 7)
        let border = Spec.BorderAmounts([Spec.EdgeSizes(startEdgeSize: 1, endEdgeSize: 2), Spec.EdgeSizes(startEdgeSize: 3, endEdgeSize: 0)])
        let r = try run([("x", [c, h, w], x), ("ref", [1, 3, 4], ref)], [("cr", [c, 3, 4]), ("pd", [c, 9, 10]), ("cc", [3, 3, 4])],
                        [layer("cr", ["x", "ref"], ["cr"], .crop(Spec.CropLayerParams(cropAmounts: nil, offset: [1, 2]))),
                         layer("pd", ["x"], ["pd"], .padding(Spec.PaddingLayerParams(paddingAmounts: border, paddingType: .reflection(.init())))),
                         layer("cc", ["cr", "ref"], ["cc"], .concat(sequenceConcat: false))])
        var cr: [Float] = []
        for ci in 0..<c { for y in 0..<3 { for xi in 0..<4 { cr.append(chw(x, c, h, w, ci, y + 1, xi + 2)) } } }
        XCTAssertEqual(r["cr"], cr)
        XCTAssertEqual(r["cc"], cr + ref)
        func reflect(_ i: Int, _ n: Int) -> Int { i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i }
        var pd: [Float] = []
        for ci in 0..<c { for y in -1..<(h + 2) { for xi in -3..<w { pd.append(chw(x, c, h, w, ci, reflect(y, h), reflect(xi, w))) } } }
        XCTAssertEqual(r["pd"], pd)
    }

    func testScaleBiasAndConstants() throws {
        let (c, h, w) = (3, 2, 4)
        let x = randomFloats(count: c * h * w, seed: 8)
        let s = randomFloats(count: c * h * w, seed: 9), b = [Float](arrayLiteral: 1, 2, 3)
        let k = randomFloats(count: c * h * w, seed: 10)
        let r = try run([("x", [c, h, w], x)], [("sb", [c, h, w]), ("bf", [c, h, w]), ("k", [c, h, w])],
                        [layer("sb", ["x"], ["sb"], .scale(Spec.ScaleLayerParams(shapeScale: [3, 2, 4], scale: Spec.WeightParams(s),
                                                                                  hasBias: true, shapeBias: [3], bias: Spec.WeightParams(b)))),
                         layer("bf", ["x"], ["bf"], .bias(Spec.BiasLayerParams(shape: [3, 2, 4], bias: Spec.WeightParams(k)))),
                         layer("k", [], ["k"], .loadConstant(Spec.LoadConstantLayerParams(shape: [3, 2, 4], data: Spec.WeightParams(k))))])
        assertClose(r["sb"]!, (0..<x.count).map { x[$0] * s[$0] + b[$0 / (h * w)] }, tolerance: 1e-5)
        assertClose(r["bf"]!, (0..<x.count).map { x[$0] + k[$0] }, tolerance: 1e-5)
        assertClose(r["k"]!, k, tolerance: 1e-6)
    }

    func testUnaryAndActivations() throws {
        let x = randomFloats(count: 2 * 2 * 3, seed: 11, in: -2...2)
        func unary(_ t: Spec.UnaryFunctionLayerParams.Operation, alpha: Float = 0, scale: Float = 1, shift: Float = 0) -> Spec.NeuralNetworkLayer.Layer {
            .unary(Spec.UnaryFunctionLayerParams(type: t, alpha: alpha, shift: shift, scale: scale))
        }
        let r = try run([("x", [2, 2, 3], x)], ["abs", "thr", "exp", "sq", "st", "tr", "clip", "psp"].map { ($0, [2, 2, 3]) },
                        [layer("abs", ["x"], ["abs"], unary(.abs, scale: 2, shift: 0.5)),
                         layer("thr", ["x"], ["thr"], unary(.threshold, alpha: 0.3)),
                         layer("exp", ["x"], ["exp"], unary(.exp, scale: 0.5)),
                         layer("sq", ["x"], ["sq"], unary(.power, alpha: 2, shift: 1)),
                         layer("st", ["x"], ["st"], act(.scaledTanh(alpha: 2, beta: 0.5))),
                         layer("tr", ["x"], ["tr"], act(.thresholdedReLU(alpha: 0.5))),
                         layer("clip", ["x"], ["clip"], .clip(minVal: -0.5, maxVal: 1)),
                         layer("psp", ["x"], ["psp"], act(.parametricSoftplus(alpha: Spec.WeightParams([1, 2]), beta: Spec.WeightParams([3, 4]))))])
        assertClose(r["abs"]!, x.map { abs(2 * $0 + 0.5) }, tolerance: 1e-6)
        assertClose(r["thr"]!, x.map { max($0, 0.3) }, tolerance: 1e-6)
        assertClose(r["exp"]!, x.map { Foundation.exp(0.5 * $0) }, tolerance: 1e-5)
        assertClose(r["sq"]!, x.map { ($0 + 1) * ($0 + 1) }, tolerance: 1e-5)
        assertClose(r["st"]!, x.map { 2 * Foundation.tanh(0.5 * $0) }, tolerance: 1e-6)
        assertClose(r["tr"]!, x.map { $0 >= 0.5 ? $0 : 0 }, tolerance: 0)
        assertClose(r["clip"]!, x.map { min(1, max(-0.5, $0)) }, tolerance: 1e-6)
        let psp = x.indices.map { i -> Float in
            let c = i / 6, a: Float = c == 0 ? 1 : 2, b: Float = c == 0 ? 3 : 4
            return a * Foundation.log(1 + Foundation.exp(b * x[i]))
        }
        assertClose(r["psp"]!, psp, tolerance: 1e-5)
    }

    func testSplitSliceReduceMVN() throws {
        let (c, h, w) = (4, 6, 2)
        let x = randomFloats(count: c * h * w, seed: 12)
        let r = try run([("x", [c, h, w], x)], [("a", [2, h, w]), ("b", [2, h, w]), ("sl", [c, 3, w]), ("hw", [c, 1, 1]),
                                                ("cs", [1, h, w]), ("mvn", [c, h, w])],
                        [layer("split", ["x"], ["a", "b"], .split(nOutputs: 2)),
                         layer("sl", ["x"], ["sl"], .slice(Spec.SliceLayerParams(startIndex: 1, endIndex: 6, stride: 2, axis: .heightAxis))),
                         layer("hw", ["x"], ["hw"], .reduce(Spec.ReduceLayerParams(mode: .sum, axis: .hw))),
                         layer("cs", ["x"], ["cs"], .reduce(Spec.ReduceLayerParams(mode: .avg, axis: .c))),
                         layer("mvn", ["x"], ["mvn"], .mvn(Spec.MeanVarianceNormalizeLayerParams(acrossChannels: false, normalizeVariance: false, epsilon: 1e-9)))])
        let plane = h * w
        XCTAssertEqual(r["a"], Array(x[0..<(2 * plane)]))
        XCTAssertEqual(r["b"], Array(x[(2 * plane)...]))
        var sl: [Float] = []
        for ci in 0..<c { for y in [1, 3, 5] { for xi in 0..<w { sl.append(chw(x, c, h, w, ci, y, xi)) } } }
        XCTAssertEqual(r["sl"], sl)
        let sums = (0..<c).map { ci in x[(ci * plane)..<((ci + 1) * plane)].reduce(0, +) }
        assertClose(r["hw"]!, sums, tolerance: 1e-5)
        var cs = [Float](repeating: 0, count: plane)
        for p in 0..<plane { for ci in 0..<c { cs[p] += x[ci * plane + p] / Float(c) } }
        assertClose(r["cs"]!, cs, tolerance: 1e-6)
        assertClose(r["mvn"]!, x.indices.map { x[$0] - sums[$0 / plane] / Float(plane) }, tolerance: 1e-5)
    }

    func testPoolingPaddingModes() throws {
        let x = randomFloats(count: 8 * 8, seed: 13)
        let y = randomFloats(count: 3 * 3, seed: 14)
        let r = try run([("x", [1, 8, 8], x), ("y", [1, 3, 3], y)], [("mp", [1, 4, 4]), ("ap", [1, 3, 3])],
                        [layer("mp", ["x"], ["mp"], .pooling(Spec.PoolingLayerParams(type: .max, kernelSize: [3, 3], stride: [2, 2],
                                                                                       padding: .includeLastPixel(.init(paddingAmounts: [0, 0]))))),
                         layer("ap", ["y"], ["ap"], .pooling(Spec.PoolingLayerParams(type: .average, kernelSize: [3, 3], stride: [1, 1],
                                                                                       padding: .same(.init(asymmetryMode: .bottomRightHeavy)), avgPoolExcludePadding: false)))])
        // Caffe "ceil" pooling: windows start at 0, 2, 4, 6; the last one is clipped to the image.
        var mp: [Float] = []
        for oy in 0..<4 { for ox in 0..<4 {
            var m = -Float.infinity
            for yy in (2 * oy)..<min(8, 2 * oy + 3) { for xx in (2 * ox)..<min(8, 2 * ox + 3) { m = max(m, x[yy * 8 + xx]) } }
            mp.append(m)
        } }
        XCTAssertEqual(r["mp"], mp)
        // Padded zeros count in the average: every window divides by 9.
        var ap: [Float] = []
        for oy in 0..<3 { for ox in 0..<3 {
            var s: Float = 0
            for yy in (oy - 1)...(oy + 1) where (0..<3).contains(yy) { for xx in (ox - 1)...(ox + 1) where (0..<3).contains(xx) { s += y[yy * 3 + xx] } }
            ap.append(s / 9)
        } }
        assertClose(r["ap"]!, ap, tolerance: 1e-6)
    }

    func testTopLeftHeavyConvolutionAndDeconvolution() throws {
        let x = randomFloats(count: 25, seed: 15)
        let k: [Float] = [1, 2, 3, 4]
        let xd = randomFloats(count: 2 * 2 * 2, seed: 16)
        let wd = randomFloats(count: 2 * 3 * 2 * 2, seed: 17)  // [Cin 2, Cout 3, 2, 2]
        let r = try run([("x", [1, 5, 5], x), ("xd", [2, 2, 2], xd)], [("c", [1, 3, 3]), ("d", [3, 4, 4])],
                        [layer("c", ["x"], ["c"], .convolution(Spec.ConvolutionLayerParams(
                            outputChannels: 1, kernelChannels: 1, nGroups: 1, kernelSize: [2, 2], stride: [2, 2],
                            padding: .same(.init(asymmetryMode: .topLeftHeavy)), hasBias: false, weights: Spec.WeightParams(k)))),
                         layer("d", ["xd"], ["d"], .convolution(Spec.ConvolutionLayerParams(
                            outputChannels: 3, kernelChannels: 2, nGroups: 1, kernelSize: [2, 2], stride: [2, 2],
                            padding: .valid(Spec.ValidPadding()), isDeconvolution: true, hasBias: true,
                            weights: Spec.WeightParams(wd), bias: Spec.WeightParams([0.5, 1, 1.5]))))])
        // 5×5, kernel 2, stride 2, "same": 3×3 output, the one padded row/column at the top/left.
        var c: [Float] = []
        for oy in 0..<3 { for ox in 0..<3 {
            var s: Float = 0
            for a in 0..<2 { for b in 0..<2 {
                let yy = 2 * oy + a - 1, xx = 2 * ox + b - 1
                if (0..<5).contains(yy) && (0..<5).contains(xx) { s += k[a * 2 + b] * x[yy * 5 + xx] }
            } }
            c.append(s)
        } }
        assertClose(r["c"]!, c, tolerance: 1e-6)
        // Stride-2 2×2 deconvolution: each input pixel paints one 2×2 block.
        var d = [Float](repeating: 0, count: 3 * 16)
        for o in 0..<3 { for i in 0..<2 { for j in 0..<2 { for a in 0..<2 { for b in 0..<2 {
            var s: Float = [0.5, 1, 1.5][o]
            for ci in 0..<2 { s += xd[(ci * 2 + i) * 2 + j] * wd[((ci * 3 + o) * 2 + a) * 2 + b] }
            d[(o * 4 + 2 * i + a) * 4 + 2 * j + b] = s
        } } } } }
        assertClose(r["d"]!, d, tolerance: 1e-5)
    }

    func testEmbeddingLooksUpOneIndex() throws {
        let table = randomFloats(count: 3 * 5, seed: 19)  // [outputChannels 3, inputDim 5]
        let r = try run([("i", [1], [3])], [("e", [3])],
                        [layer("e", ["i"], ["e"], .embedding(Spec.EmbeddingLayerParams(
                            inputDim: 5, outputChannels: 3, hasBias: true, weights: Spec.WeightParams(table), bias: Spec.WeightParams([1, 2, 3]))))])
        assertClose(r["e"]!, (0..<3).map { table[$0 * 5 + 3] + Float($0 + 1) }, tolerance: 1e-6)
    }

    func testMeanImageIsSubtracted() throws {
        let (h, w) = (2, 3)
        let mean = (0..<(3 * h * w)).map { Float($0) * 1.5 }
        let img = Spec.FeatureDescription(name: "img", type: Spec.FeatureType(.image(Spec.ImageFeatureType(width: Int64(w), height: Int64(h), colorSpace: .bgr))))
        let pixels = randomFloats(count: h * w * 3, seed: 18, in: 0...255)  // NHWC, B, G, R
        let r = try run([("img", [h, w, 3], pixels)], [("y", [3, h, w])],
                        [layer("id", ["img"], ["y"], act(.linear(alpha: 1, beta: 0)))],
                        preprocessing: [Spec.NeuralNetworkPreprocessing(featureName: "img", preprocessor: .meanImage(mean))], image: img)
        var ref: [Float] = []
        for c in 0..<3 { for y in 0..<h { for xi in 0..<w { ref.append(pixels[(y * w + xi) * 3 + c] - mean[(c * h + y) * w + xi]) } } }
        assertClose(r["y"]!, ref, tolerance: 1e-4)
    }
}

/// y = x·sigmoid(x), the Swish of hollance's custom-layer blog post.
private final class ParityTestSwish: CustomLayer {
    init(parameters: [String: CustomParameterValue]) throws {}
    func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]] { inputShapes }
    func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws {
        for i in 0..<inputs[0].count {
            let x = inputs[0][i]
            outputs[0][i] = x / (1 + Foundation.exp(-x))
        }
    }
}
