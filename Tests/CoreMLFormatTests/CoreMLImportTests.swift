// CoreMLImporter: the structure of imported graphs (layouts, I/O shapes, preprocessing,
// compressed weights, classifier description) on small specs built here and on the real models
// in ../shared (skipped, visibly, when absent). Numerical parity with the runtime is tested in
// Tests/MLConvCLITests/CoreMLImportParityTests.swift.
@testable import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

/// Small Core ML specs for the importer tests.
enum ImportSpecs {
    static func array(_ name: String, _ shape: [Int64]) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: shape, dataType: .float32))))
    }

    static func image(_ name: String, width: Int64, height: Int64, _ cs: Spec.ImageFeatureType.ColorSpace = .rgb) -> Spec.FeatureDescription {
        Spec.FeatureDescription(name: name, type: Spec.FeatureType(.image(Spec.ImageFeatureType(width: width, height: height, colorSpace: cs))))
    }

    static func layer(_ name: String, _ ins: [String], _ outs: [String], _ l: Spec.NeuralNetworkLayer.Layer) -> Spec.NeuralNetworkLayer {
        Spec.NeuralNetworkLayer(name: name, input: ins, output: outs, layer: l)
    }

    static func model(_ inputs: [Spec.FeatureDescription], _ outputs: [Spec.FeatureDescription], _ layers: [Spec.NeuralNetworkLayer],
                      preprocessing: [Spec.NeuralNetworkPreprocessing] = [], version: Int32 = 1) -> Spec.Model {
        Spec.Model(specificationVersion: version, description: Spec.ModelDescription(input: inputs, output: outputs),
                   type: .neuralNetwork(Spec.NeuralNetwork(layers: layers, preprocessing: preprocessing)))
    }

    static func conv(cin: Int, cout: Int, k: Int, stride: Int = 1, padding: Spec.ConvolutionLayerParams.Padding? = .same(.init(asymmetryMode: .bottomRightHeavy)),
                     weights: Spec.WeightParams? = nil) -> Spec.NeuralNetworkLayer.Layer {
        .convolution(Spec.ConvolutionLayerParams(
            outputChannels: UInt64(cout), kernelChannels: UInt64(cin), nGroups: 1, kernelSize: [UInt64(k), UInt64(k)],
            stride: [UInt64(stride), UInt64(stride)], padding: padding, hasBias: true,
            weights: weights ?? Spec.WeightParams(randomFloats(count: cout * cin * k * k)),
            bias: Spec.WeightParams(randomFloats(count: cout, seed: 9))))
    }
}

final class CoreMLImportTests: XCTestCase {
    private func shape(_ g: Graph, _ t: String) -> [Int] { g.tensorTypes[t]?.shape ?? [] }

    // MARK: Layout at the boundaries

    func testMultiArrayInputsAndOutputsKeepCoreMLShapes() throws {
        let m = ImportSpecs.model(
            [ImportSpecs.array("x", [3, 4, 5]), ImportSpecs.array("v", [6])],
            [ImportSpecs.array("y", [8, 4, 5]), ImportSpecs.array("w", [2])],
            [ImportSpecs.layer("conv", ["x"], ["y"], ImportSpecs.conv(cin: 3, cout: 8, k: 3)),
             ImportSpecs.layer("fc", ["v"], ["w"], .innerProduct(Spec.InnerProductLayerParams(
                inputChannels: 6, outputChannels: 2, hasBias: false, weights: Spec.WeightParams(randomFloats(count: 12)))))])
        let g = try CoreMLImporter.graph(from: m, fileName: "boundary.mlmodel")
        XCTAssertEqual(g.inputs.map(\.name), ["x", "v"])
        XCTAssertEqual(g.inputs.map(\.type.shape), [[1, 3, 4, 5], [1, 6]])
        XCTAssertEqual(g.outputs, ["y", "w"])
        XCTAssertEqual(shape(g, "y"), [1, 8, 4, 5])
        XCTAssertEqual(shape(g, "w"), [1, 2])
        let toNHWC = try XCTUnwrap(g.nodes.first { $0.name == "x__to_nhwc" })
        XCTAssertEqual(toNHWC.op, .transpose(perm: [0, 2, 3, 1]))
        XCTAssertEqual(g.producer(of: "y")?.op, .transpose(perm: [0, 3, 1, 2]))
        let conv = try XCTUnwrap(g.nodes.first { $0.name == "conv" })
        XCTAssertEqual(conv.inputs, ["x__to_nhwc"])
        XCTAssertEqual(shape(g, conv.outputs[0]), [1, 4, 5, 8])
        guard case let .conv2d(a) = conv.op else { return XCTFail("conv is \(conv.op)") }
        XCTAssertEqual(a.padding, .same)
        XCTAssertEqual(conv.weights["weight"]?.shape, [8, 3, 3, 3])
        XCTAssertEqual(g.description.inputs.map(\.name), ["x", "v"])
        XCTAssertNil(g.description.inputs[0].image)
    }

    func testImageInputGetsPreprocessingNodeAndFeature() throws {
        let pre = Spec.NeuralNetworkPreprocessing(featureName: "img", preprocessor: .scaler(Spec.ImageScaler(
            channelScale: 0.5, blueBias: -3, greenBias: -2, redBias: -1)))
        let m = ImportSpecs.model([ImportSpecs.image("img", width: 6, height: 4, .bgr)], [ImportSpecs.array("y", [2, 4, 6])],
                                  [ImportSpecs.layer("conv", ["img"], ["y"], ImportSpecs.conv(cin: 3, cout: 2, k: 1))],
                                  preprocessing: [pre])
        let g = try CoreMLImporter.graph(from: m, fileName: "image.mlmodel")
        XCTAssertEqual(g.inputs[0].type.shape, [1, 4, 6, 3])
        let p = try XCTUnwrap(g.nodes.first { $0.name == "img__preprocessing" })
        XCTAssertEqual(p.op, .batchNorm(BatchNormAttributes(axis: 3, epsilon: 0)))
        XCTAssertEqual(p.inputs, ["img"])
        XCTAssertEqual(p.weights["gamma"]?.floats(), [0.5, 0.5, 0.5])
        XCTAssertEqual(p.weights["beta"]?.floats(), [-3, -2, -1], "BGR order")
        XCTAssertEqual(p.weights["mean"]?.floats(), [0, 0, 0])
        XCTAssertEqual(p.weights["variance"]?.floats(), [1, 1, 1])
        XCTAssertEqual(g.nodes.first { $0.name == "conv" }?.inputs, ["img__preprocessing"])
        XCTAssertEqual(g.description.inputs[0].image, ImageFeature(width: 6, height: 4, colorSpace: .bgr, scale: 0.5, bias: [-3, -2, -1]))
    }

    func testIdentityScalerAddsNoNodeAndImageOutputStaysNHWC() throws {
        let pre = Spec.NeuralNetworkPreprocessing(featureName: "img", preprocessor: .scaler(Spec.ImageScaler(channelScale: 1)))
        let m = ImportSpecs.model([ImportSpecs.image("img", width: 5, height: 7, .grayscale)],
                                  [ImportSpecs.image("out", width: 5, height: 7, .grayscale)],
                                  [ImportSpecs.layer("act", ["img"], ["out"], .activation(Spec.ActivationParams(.linear(alpha: 2, beta: 1))))],
                                  preprocessing: [pre])
        let g = try CoreMLImporter.graph(from: m, fileName: "gray.mlmodel")
        XCTAssertEqual(g.nodes.count, 1)
        XCTAssertEqual(g.inputs[0].type.shape, [1, 7, 5, 1])
        XCTAssertEqual(shape(g, "out"), [1, 7, 5, 1])
        XCTAssertEqual(g.description.outputs[0].image?.colorSpace, .grayscale)
        XCTAssertEqual(g.description.inputs[0].image?.scale, 1)
    }

    func testMeanImagePreprocessing() throws {
        // Constant per channel: folded into the batchNorm's beta.
        let flat = [Float](repeating: 10, count: 4) + [Float](repeating: 20, count: 4) + [Float](repeating: 30, count: 4)
        let m1 = ImportSpecs.model([ImportSpecs.image("img", width: 2, height: 2)], [ImportSpecs.array("y", [3, 2, 2])],
                                   [ImportSpecs.layer("id", ["img"], ["y"], .activation(Spec.ActivationParams(.linear(alpha: 1, beta: 0))))],
                                   preprocessing: [Spec.NeuralNetworkPreprocessing(featureName: "img", preprocessor: .meanImage(flat))])
        let g1 = try CoreMLImporter.graph(from: m1, fileName: "mean1.mlmodel")
        XCTAssertEqual(g1.nodes.first { $0.name == "img__preprocessing" }?.weights["beta"]?.floats(), [-10, -20, -30])
        XCTAssertEqual(g1.description.inputs[0].image?.bias, [-10, -20, -30])
        // Varying: subtracted by an add node named after the input.
        let m2 = ImportSpecs.model([ImportSpecs.image("img", width: 2, height: 2)], [ImportSpecs.array("y", [3, 2, 2])],
                                   [ImportSpecs.layer("id", ["img"], ["y"], .activation(Spec.ActivationParams(.linear(alpha: 1, beta: 0))))],
                                   preprocessing: [Spec.NeuralNetworkPreprocessing(featureName: "img", preprocessor: .meanImage((0..<12).map(Float.init)))])
        let g2 = try CoreMLImporter.graph(from: m2, fileName: "mean2.mlmodel")
        XCTAssertEqual(g2.nodes.first { $0.name == "img__preprocessing" }?.op, .elementwise(.add))
        XCTAssertNotNil(g2.description.metadata.userDefined["mlconv.meanImage.img"])
    }

    // MARK: Weights

    func testCompressedWeightsStayCompressed() throws {
        let n = 4 * 2 * 3 * 3
        let fp16 = Spec.WeightParams(float16Value: Spec.encodeFloat16(randomFloats(count: n)))
        let lin = Spec.WeightParams(rawValue: [UInt8](repeating: 0x5a, count: n),
                                    quantization: Spec.QuantizationParams(numberOfBits: 8, scheme: .linear(scale: [0.1, 0.2, 0.3, 0.4], bias: [1, 2, 3, 4])))
        let lut = Spec.WeightParams(rawValue: [UInt8](repeating: 0x12, count: n / 2),
                                    quantization: Spec.QuantizationParams(numberOfBits: 4, scheme: .lookupTable((0..<16).map(Float.init))))
        // Deconvolution [Cin=2, Cout=4, 3, 3], per-output-channel scales on axis 1.
        let deconvLin = Spec.WeightParams(rawValue: [UInt8](repeating: 7, count: n),
                                          quantization: Spec.QuantizationParams(numberOfBits: 8, scheme: .linear(scale: [1, 2, 3, 4], bias: [])))
        let deconv = Spec.NeuralNetworkLayer.Layer.convolution(Spec.ConvolutionLayerParams(
            outputChannels: 4, kernelChannels: 2, nGroups: 1, kernelSize: [3, 3], stride: [2, 2], padding: .same(.init(asymmetryMode: .bottomRightHeavy)),
            isDeconvolution: true, hasBias: false, weights: deconvLin))
        let int8 = Spec.NeuralNetworkLayer.Layer.innerProduct(Spec.InnerProductLayerParams(
            inputChannels: 4, outputChannels: 2, hasBias: false,
            weights: Spec.WeightParams(int8RawValue: [1, 2, 3, 4, 0xff, 0xfe, 0xfd, 0xfc],
                                       quantization: Spec.QuantizationParams(numberOfBits: 8, scheme: .linear(scale: [0.5], bias: []))),
            int8DynamicQuantize: true))
        let m = ImportSpecs.model(
            [ImportSpecs.array("x", [2, 5, 5])], [ImportSpecs.array("a", [4, 5, 5]), ImportSpecs.array("b", [4, 5, 5]),
                                                  ImportSpecs.array("c", [4, 5, 5]), ImportSpecs.array("d", [4, 10, 10]), ImportSpecs.array("e", [2])],
            [ImportSpecs.layer("a16", ["x"], ["a"], ImportSpecs.conv(cin: 2, cout: 4, k: 3, weights: fp16)),
             ImportSpecs.layer("b8", ["x"], ["b"], ImportSpecs.conv(cin: 2, cout: 4, k: 3, weights: lin)),
             ImportSpecs.layer("c4", ["x"], ["c"], ImportSpecs.conv(cin: 2, cout: 4, k: 3, weights: lut)),
             ImportSpecs.layer("d", ["x"], ["d"], deconv),
             ImportSpecs.layer("pool", ["x"], ["gp"], .pooling(Spec.PoolingLayerParams(type: .average, globalPooling: true))),
             ImportSpecs.layer("dup", ["gp", "gp"], ["gp2"], .concat(sequenceConcat: false)),
             ImportSpecs.layer("e", ["gp2"], ["e"], int8)],
            version: 5)
        let g = try CoreMLImporter.graph(from: m, fileName: "weights.mlmodel")
        func w(_ node: String) -> ConstantTensor { g.nodes.first { $0.name == node }!.weights["weight"]! }
        XCTAssertEqual(w("a16").encoding, .float16)
        XCTAssertEqual(w("a16").encodedByteCount, n * 2)
        XCTAssertEqual(w("b8").encoding, .linear(LinearQuantization(bits: 8, axis: 0, scale: [0.1, 0.2, 0.3, 0.4], bias: [1, 2, 3, 4])))
        XCTAssertEqual(w("b8").floats()[0], 0x5a * 0.1 + 1, accuracy: 1e-5)
        XCTAssertEqual(w("b8").floats()[n - 1], 0x5a * 0.4 + 4, accuracy: 1e-5)
        XCTAssertEqual(w("c4").encoding, .lookupTable(LookupTableQuantization(bits: 4, table: (0..<16).map(Float.init))))
        XCTAssertEqual(Array(w("c4").floats().prefix(2)), [1, 2])
        let d = w("d")
        XCTAssertEqual(d.shape, [2, 4, 3, 3])
        XCTAssertEqual(d.encoding, .linear(LinearQuantization(bits: 8, axis: 1, scale: [1, 2, 3, 4], bias: [])))
        XCTAssertEqual(Array(d.floats().prefix(19)).map(Int.init), [Int](repeating: 7, count: 9) + [Int](repeating: 14, count: 9) + [21])
        XCTAssertEqual(shape(g, "d"), [1, 4, 10, 10])
        XCTAssertEqual(w("e").encoding, .float32)
        XCTAssertEqual(w("e").floats(), [0.5, 1, 1.5, 2, -0.5, -1, -1.5, -2])
    }

    // MARK: Layers

    func testLayerMappings() throws {
        func act(_ a: Spec.ActivationParams.Nonlinearity) -> Spec.NeuralNetworkLayer.Layer { .activation(Spec.ActivationParams(a)) }
        let border = Spec.BorderAmounts([Spec.EdgeSizes(startEdgeSize: 1, endEdgeSize: 2), Spec.EdgeSizes(startEdgeSize: 3, endEdgeSize: 0)])
        let m = ImportSpecs.model(
            [ImportSpecs.array("x", [4, 6, 8])], [ImportSpecs.array("out", [4, 9, 11]), ImportSpecs.array("flat", [192]),
                                                  ImportSpecs.array("perm", [8, 4, 6]), ImportSpecs.array("rs", [2, 8, 12])],
            [ImportSpecs.layer("prelu", ["x"], ["p"], act(.preLU(alpha: Spec.WeightParams([0.1, 0.2, 0.3, 0.4])))),
             ImportSpecs.layer("thr", ["p"], ["t"], act(.thresholdedReLU(alpha: 0.5))),
             ImportSpecs.layer("pad", ["t"], ["pd"], .padding(Spec.PaddingLayerParams(paddingAmounts: border, paddingType: .reflection(.init())))),
             ImportSpecs.layer("sm", ["pd"], ["out"], .softmax),
             ImportSpecs.layer("flat", ["x"], ["flat"], .flatten(mode: .channelFirst)),
             ImportSpecs.layer("perm", ["x"], ["perm"], .permute(axis: [0, 3, 1, 2])),
             ImportSpecs.layer("rs", ["x"], ["rs"], .reshape(Spec.ReshapeLayerParams(targetShape: [2, 8, 12], mode: .channelFirst)))])
        let g = try CoreMLImporter.graph(from: m, fileName: "layers.mlmodel")
        func node(_ n: String) throws -> Node { try XCTUnwrap(g.nodes.first { $0.name == n }, n) }
        XCTAssertEqual(try node("prelu").op, .prelu)
        XCTAssertEqual(try node("prelu").weights["alpha"]?.shape, [1, 1, 4])
        XCTAssertEqual(try node("thr").op, .activation(.clippedReLU(maxValue: nil, negativeSlope: 0, threshold: 0.5)))
        XCTAssertEqual(try node("pad").op, .pad(PadAttributes(mode: .reflect, pads: [[0, 0], [1, 2], [3, 0], [0, 0]])))
        XCTAssertEqual(try node("sm").op, .softmax(axis: 3))
        XCTAssertEqual(shape(g, "out"), [1, 4, 9, 11])
        // CHANNEL_FIRST flatten reads C, H, W order: NHWC → NCHW → reshape.
        XCTAssertEqual(try node("flat__to_nchw").op, .transpose(perm: [0, 3, 1, 2]))
        XCTAssertEqual(shape(g, "flat"), [1, 192])
        // permute [Seq, W, C, H]: C' = W, H' = C, W' = H.
        XCTAssertEqual(try node("perm").op, .transpose(perm: [0, 3, 1, 2]))
        XCTAssertEqual(shape(g, "perm"), [1, 8, 4, 6])
        XCTAssertEqual(shape(g, "rs"), [1, 2, 8, 12])
    }

    func testTopLeftHeavySamePaddingIsExplicit() throws {
        let m = ImportSpecs.model([ImportSpecs.array("x", [1, 4, 4])], [ImportSpecs.array("y", [1, 2, 2])],
                                  [ImportSpecs.layer("c", ["x"], ["y"], ImportSpecs.conv(cin: 1, cout: 1, k: 2, stride: 2, padding: .same(.init(asymmetryMode: .topLeftHeavy))))])
        let g = try CoreMLImporter.graph(from: m, fileName: "tl.mlmodel")
        guard case let .conv2d(a) = g.nodes.first(where: { $0.name == "c" })!.op else { return XCTFail() }
        XCTAssertEqual(a.padding, .explicit(top: 0, bottom: 0, left: 0, right: 0))
        let m2 = ImportSpecs.model([ImportSpecs.array("x", [1, 5, 5])], [ImportSpecs.array("y", [1, 3, 3])],
                                   [ImportSpecs.layer("c", ["x"], ["y"], ImportSpecs.conv(cin: 1, cout: 1, k: 2, stride: 2, padding: .same(.init(asymmetryMode: .topLeftHeavy))))])
        let g2 = try CoreMLImporter.graph(from: m2, fileName: "tl.mlmodel")
        guard case let .conv2d(a2) = g2.nodes.first(where: { $0.name == "c" })!.op else { return XCTFail() }
        XCTAssertEqual(a2.padding, .explicit(top: 1, bottom: 0, left: 1, right: 0))
    }

    // MARK: Errors

    func testEveryUnsupportedLayerIsListedOnce() throws {
        // Peepholes are the LSTM variant the IR cannot express (plain LSTMs import since issue 6).
        let lstm = Spec.NeuralNetworkLayer.Layer.uniDirectionalLSTM(
            Spec.UniDirectionalLSTMLayerParams(inputVectorSize: 4, outputVectorSize: 4, params: Spec.LSTMParams(hasPeepholeVectors: true)))
        let m = ImportSpecs.model(
            [ImportSpecs.array("x", [4])], [ImportSpecs.array("y", [4])],
            [ImportSpecs.layer("l2", ["x"], ["a"], .reduce(Spec.ReduceLayerParams(mode: .argmax, axis: .chw))),
             ImportSpecs.layer("rnn", ["a"], ["b"], lstm),
             ImportSpecs.layer("ok", ["b"], ["c"], .activation(Spec.ActivationParams(.relu))),
             ImportSpecs.layer("sq", ["c"], ["d"], .unsupported(fieldNumber: 9999)),
             ImportSpecs.layer("log", ["d"], ["e"], .unary(Spec.UnaryFunctionLayerParams(type: .init(rawValue: 42)))),
             ImportSpecs.layer("bn", ["e"], ["y"], .batchnorm(Spec.BatchnormLayerParams(channels: 4, computeMeanVar: true)))])
        XCTAssertThrowsError(try CoreMLImporter.graph(from: m, fileName: "bad.mlmodel")) { error in
            guard let e = error as? CoreMLImportError, case let .unsupportedLayers(file, problems) = e else {
                return XCTFail("expected unsupportedLayers, got \(error)")
            }
            XCTAssertEqual(file, "bad.mlmodel")
            XCTAssertEqual(problems.map(\.layer), ["l2", "rnn", "sq", "log", "bn"])
            XCTAssertEqual(problems.map(\.type), ["reduce", "uniDirectionalLSTM", "field 9999", "unary", "batchnorm"])
            let text = "\(e)"
            XCTAssertTrue(text.hasPrefix("bad.mlmodel: 5 layers cannot be imported"), text)
            XCTAssertTrue(text.contains("peephole"), text)
        }
    }

    func testUnknownCustomLayerWithSeveralOutputsIsAnError() throws {
        let custom = Spec.NeuralNetworkLayer.Layer.custom(Spec.CustomLayerParams(className: "Splitter"))
        let m = ImportSpecs.model([ImportSpecs.array("x", [4, 2, 2])], [ImportSpecs.array("y", [4, 2, 2])],
                                  [ImportSpecs.layer("split", ["x"], ["a", "b"], custom),
                                   ImportSpecs.layer("add", ["a", "b"], ["y"], .add(alpha: 0))])
        XCTAssertThrowsError(try CoreMLImporter.graph(from: m, fileName: "custom.mlmodel")) { error in
            let p = (error as? CoreMLImportError)?.problems ?? []
            XCTAssertEqual(p.map(\.layer), ["split"], "\(error)")
            XCTAssertEqual(p.first?.type, "custom(Splitter)")
            XCTAssertTrue(p.first?.reason.contains("class Splitter") ?? false, "\(error)")
        }
    }

    func testCustomLayerShapeFromModelOutput() throws {
        let custom = Spec.NeuralNetworkLayer.Layer.custom(Spec.CustomLayerParams(
            className: "Shrink", weights: [Spec.WeightParams([1, 2, 3])],
            parameters: [.init(key: "k", paramValue: .int(3)), .init(key: "s", paramValue: .string("x"))], description: "halves H and W"))
        let m = ImportSpecs.model([ImportSpecs.array("x", [4, 8, 8])], [ImportSpecs.array("y", [4, 4, 4])],
                                  [ImportSpecs.layer("shrink", ["x"], ["y"], custom)], version: 2)
        let r = try CoreMLImporter.importModel(m, fileName: "shrink.mlmodel")
        let n = try XCTUnwrap(r.graph.nodes.first { $0.name == "shrink" })
        guard case let .custom(a) = n.op else { return XCTFail("\(n.op)") }
        XCTAssertEqual(a.className, "Shrink")
        XCTAssertEqual(a.description, "halves H and W")
        XCTAssertEqual(a.parameters, ["k": .int(3), "s": .string("x")])
        XCTAssertEqual(a.outputShapes, [[1, 4, 4, 4]])
        XCTAssertEqual(n.weights["w0"]?.floats(), [1, 2, 3])
        XCTAssertEqual(r.graph.tensorTypes["y"]?.shape, [1, 4, 4, 4])
    }

    func testNonNetworkModelsAreRefusedByType() throws {
        let pipeline = Spec.Model(specificationVersion: 1, description: nil, type: .pipeline(Spec.Pipeline(models: [
            ImportSpecs.model([ImportSpecs.array("x", [1])], [ImportSpecs.array("y", [1])], [])])))
        XCTAssertThrowsError(try CoreMLImporter.graph(from: pipeline, fileName: "p.mlmodel")) { error in
            guard case let .unsupportedModelType(file, kind, message)? = error as? CoreMLImportError else { return XCTFail("\(error)") }
            XCTAssertEqual(file, "p.mlmodel")
            XCTAssertEqual(kind, "pipeline")
            XCTAssertTrue(message.contains("neuralNetwork"), message)
        }
        let program = Spec.Model(specificationVersion: 6, type: .other(kind: .mlProgram, content: []))
        XCTAssertThrowsError(try CoreMLImporter.graph(from: program, fileName: "prog.mlpackage")) { error in
            XCTAssertTrue("\(error)".contains("mlconv cannot run them"), "\(error)")
        }
    }

    // MARK: Real models

    func testStyleTransferModelStructure() throws {
        let url = try TestPaths.sharedFile("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        let g = try CoreMLImporter.graph(from: try Spec.Model.load(contentsOf: url.path), fileName: url.lastPathComponent)
        XCTAssertEqual(g.opCounts["conv2d"], 16)
        XCTAssertEqual(g.opCounts["batchNorm"], 15)
        XCTAssertEqual(g.opCounts["activation"], 11)
        XCTAssertEqual(g.opCounts["custom(ResCropBlockLambda)"], 5)
        XCTAssertEqual(g.opCounts["custom(RescaleOutputLambda)"], 1)
        XCTAssertEqual(g.opCounts["elementwise"], 5)
        XCTAssertEqual(g.opCounts["upsample2d"], 2)
        XCTAssertEqual(g.opCounts["pad"], 1)
        XCTAssertEqual(g.nodes.count, 56, "an identity scaler adds no preprocessing node")
        XCTAssertEqual(g.parameterCount, 552_003)
        XCTAssertEqual(g.inputs.map(\.type.shape), [[1, 320, 320, 3]])
        XCTAssertEqual(g.outputs, ["output"])
        XCTAssertEqual(g.tensorTypes["output"]?.shape, [1, 320, 320, 3])
        XCTAssertEqual(g.description.inputs.first?.image?.colorSpace, .rgb)
        XCTAssertEqual(g.description.outputs.first?.image, ImageFeature(width: 320, height: 320, colorSpace: .rgb))
        XCTAssertEqual(g.description.inputs.first?.shortDescription, "Preprocessed content image")
        XCTAssertEqual(g.description.metadata.author, "Joshua Newnham")
        XCTAssertEqual(g.description.metadata.license, "BSD")
        let crops = g.nodes.filter { if case let .custom(a) = $0.op { return a.className == "ResCropBlockLambda" } else { return false } }
        XCTAssertEqual(crops.compactMap { n -> [[Int]]? in if case let .custom(a) = n.op { return a.outputShapes } else { return nil } },
                       [[[1, 96, 96, 64]], [[1, 92, 92, 64]], [[1, 88, 88, 64]], [[1, 84, 84, 64]], [[1, 80, 80, 64]]])
        XCTAssertTrue(g.nodes.allSatisfy { $0.weights.values.allSatisfy { $0.encoding == .float32 } })
    }

    /// Every neural network of the corpus imports, or fails with a clear error listing its
    /// unsupported layers.
    func testCorpusNetworksImportOrListUnsupportedLayers() throws {
        let dir = try TestPaths.sharedFile("corpus/mlmodel")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let importable: Set<String> = [
            "archdanny_newcoreml.mlmodel", "atveit_keras2ios_build.mlmodel", "hollance_Image2Image.mlmodel",
            "hollance_NeuralMcNeuralNet_swish.mlmodel", "jacopo_keras_model_personalization.mlmodel",
            "kingreza_food_fp16.mlmodel", "kingreza_food_kmeans_lut_4bit.mlmodel", "kingreza_food_linear_8bit.mlmodel",
            "packt_FastStyleTransferVanGogh.mlmodel", "r4ghu_mnistCNN.mlmodel", "miyakooti_motionClassifier.mlmodel",
            // EXACT_ARRAY_MAPPING networks with rank-N layers (issue 10).
            "ekgapp_ECGClassifier_onnx_nn.mlmodel", "thartigan_Situps.mlmodel", "vincecloutier_HandPoseClassifier.mlmodel",
        ]
        let unsupported: [String: Set<String>] = [:]
        var seen: [String] = []
        for name in names {
            guard let model = try? Spec.Model.load(contentsOf: dir.appendingPathComponent(name).path), model.neuralNetwork != nil else { continue }
            seen.append(name)
            do {
                let g = try CoreMLImporter.graph(from: model, fileName: name)
                XCTAssertTrue(importable.contains(name), "\(name) imported unexpectedly")
                XCTAssertNoThrow(try g.verify(), name)
                if case .neuralNetworkClassifier = model.type {
                    XCTAssertNotNil(g.description.classLabels, name)
                    let p = try XCTUnwrap(g.description.probabilitiesOutput, name)
                    XCTAssertEqual(g.tensorTypes[p]?.shape, [1, g.description.classLabels!.count], name)
                }
            } catch let e as CoreMLImportError {
                guard case let .unsupportedLayers(file, problems) = e else { XCTFail("\(name): \(e)"); continue }
                XCTAssertEqual(file, name)
                XCTAssertEqual(Set(problems.map(\.type)), unsupported[name], "\(name): \(e)")
                XCTAssertTrue(problems.allSatisfy { !$0.layer.isEmpty && !$0.reason.isEmpty }, "\(e)")
            }
        }
        XCTAssertEqual(Set(seen), importable.union(unsupported.keys))
    }

    func testCompressedCorpusModelsKeepTheirEncodings() throws {
        let dir = try TestPaths.sharedFile("corpus/mlmodel")
        for (file, check) in [("kingreza_food_fp16", { (e: WeightEncoding) in e == .float16 }),
                              ("kingreza_food_linear_8bit", { if case let .linear(q) = $0 { return q.bits == 8 && q.axis == 0 && q.scale.count > 1 } else { return false } }),
                              ("kingreza_food_kmeans_lut_4bit", { if case let .lookupTable(q) = $0 { return q.bits == 4 } else { return false } })] {
            let name = file + ".mlmodel"
            let spec = try Spec.Model.load(contentsOf: dir.appendingPathComponent(name).path)
            let g = try CoreMLImporter.graph(from: spec, fileName: name)
            let convs = g.nodes.filter { if case .conv2d = $0.op { return true } else { return false } }
            XCTAssertEqual(convs.count, 26, name)
            for n in convs {
                XCTAssertTrue(check(n.weights["weight"]!.encoding), "\(name) \(n.name): \(n.weights["weight"]!.encoding)")
                XCTAssertNotEqual(n.weights["bias"]!.encoding, .float32, "\(name) \(n.name): the bias was expanded")
            }
            let stored = convs.reduce(0) { $0 + $1.weights.values.reduce(0) { $0 + $1.encodedByteCount } }
            let values = convs.reduce(0) { $0 + $1.weights.values.reduce(0) { $0 + $1.elementCount } }
            XCTAssertLessThan(stored, values * 4 / (name.contains("fp16") ? 1 : 3), "\(name): weights were expanded")
            XCTAssertEqual(g.description.classLabels?.count, 101)
            XCTAssertEqual(g.description.metadata.userDefined["mlconv.classLabelOutput"], "classLabel")
        }
    }
}

extension CoreMLImportTests {
    /// Regression: a crop of zero amounts imports as an identity, which the importer's layer
    /// table (checked in test builds) did not list for crop.
    func testZeroCropImportsAsIdentity() throws {
        let m = ImportSpecs.model(
            [ImportSpecs.array("x", [3, 4, 5])], [ImportSpecs.array("y", [3, 4, 5])],
            [ImportSpecs.layer("crop", ["x"], ["y"], .crop(.init(cropAmounts: .init([.init(startEdgeSize: 0, endEdgeSize: 0),
                                                                                      .init(startEdgeSize: 0, endEdgeSize: 0)]),
                                                                 offset: [])))])
        let g = try CoreMLImporter.graph(from: m, fileName: "zero_crop.mlmodel")
        XCTAssertTrue(g.nodes.contains { $0.op == .identity }, "\(g.nodes.map(\.op))")
        XCTAssertEqual(shape(g, "y"), [1, 3, 4, 5])
    }
}
