// Spec-level tests of the IR → Core ML writer (CoreMLExporter): spec version choice, the Core
// ML validator's weight rules, description, preprocessing, classifier, layer lowering, errors.
// With MLCONV_EXPORT_DIR set, every model built here is also written there as <test>.mlmodel
// for Scripts/check_mlmodel_export.py (coremltools' load_spec).
import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

/// Small IR graphs for the writer's tests.
enum ExportGraphs {
    /// input [1, 8, 8, 3] → conv 3×3 same (4 ch, bias, relu) → output "y".
    static func conv(weight: ConstantTensor? = nil, bias: ConstantTensor? = nil, activation: Activation? = .relu,
                     padding: PaddingMode = .same) -> Graph {
        let w = weight ?? randomConstant([4, 3, 3, 3], seed: 1)
        let b = bias ?? randomConstant([4], seed: 2)
        let node = Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: padding, outputChannels: 4, activation: activation)),
                        inputs: ["x"], outputs: ["y"], weights: ["weight": w, "bias": b])
        return Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 8, 8, 3]))], outputs: ["y"], nodes: [node])
    }

    /// input [1, 6] → dense 4 (+bias) → softmax → "probs".
    static func classifier(labels: [String]? = ["a", "b", "c", "d"]) -> Graph {
        let dense = Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 4)), inputs: ["x"], outputs: ["logits"],
                         weights: ["weight": randomConstant([4, 6], seed: 3), "bias": randomConstant([4], seed: 4)])
        let sm = Node(name: "softmax", op: .softmax(axis: 1), inputs: ["logits"], outputs: ["probs"])
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 6]))], outputs: ["probs"], nodes: [dense, sm])
        g.description.classLabels = labels
        g.description.probabilitiesOutput = labels == nil ? nil : "probs"
        return g
    }

    /// A one-node graph on input "x" of `shape`.
    static func single(_ op: Op, shape: [Int], weights: [String: ConstantTensor] = [:]) -> Graph {
        Graph(inputs: [ValueInfo(name: "x", type: TensorType(shape))], outputs: ["y"],
              nodes: [Node(name: "n", op: op, inputs: ["x"], outputs: ["y"], weights: weights)])
    }

    /// `values` linearly quantized to `bits` per output channel (axis 0), as coremltools does.
    static func linearQuantized(_ shape: [Int], _ values: [Float], bits: Int) -> ConstantTensor {
        let c = shape[0], per = values.count / c
        var codes: [UInt8] = [], scale: [Float] = [], bias: [Float] = []
        for ch in 0..<c {
            let v = values[(ch * per)..<((ch + 1) * per)]
            let lo = v.min()!, hi = v.max()!
            let s = (hi - lo) / Float((1 << bits) - 1)
            scale.append(s); bias.append(lo)
            for x in v { codes.append(UInt8(s > 1e-6 ? ((x - lo) / s).rounded(.toNearestOrEven) : 0)) }
        }
        return try! ConstantTensor(shape: shape, encoding: .linear(LinearQuantization(bits: bits, axis: 0, scale: scale, bias: bias)),
                                   storage: .copying(packMSBFirst(codes, bits: bits)))
    }

    /// `values` as fp16.
    static func float16(_ shape: [Int], _ values: [Float]) -> ConstantTensor {
        try! ConstantTensor(shape: shape, encoding: .float16, storage: .copying(Spec.encodeFloat16(values)))
    }

    /// A `bits`-bit lookup table constant with codes i % 2^bits.
    static func lut(_ shape: [Int], bits: Int) -> ConstantTensor {
        let n = shape.reduce(1, *)
        let table = (0..<(1 << bits)).map { Float($0) * 0.1 - 0.3 }
        let codes = (0..<n).map { UInt8($0 % (1 << bits)) }
        return try! ConstantTensor(shape: shape, encoding: .lookupTable(LookupTableQuantization(bits: bits, table: table)),
                                   storage: .copying(packMSBFirst(codes, bits: bits)))
    }
}

/// Every WeightParams of a model with the layer name and role.
func exportedWeights(_ model: Spec.Model) -> [(layer: String, role: String, weight: Spec.WeightParams)] {
    var out: [(String, String, Spec.WeightParams)] = []
    for l in model.neuralNetwork?.layers ?? [] {
        switch l.layer {
        case let .convolution(p):
            if let w = p.weights { out.append((l.name, "weights", w)) }
            if let b = p.bias { out.append((l.name, "bias", b)) }
        case let .innerProduct(p):
            if let w = p.weights { out.append((l.name, "weights", w)) }
            if let b = p.bias { out.append((l.name, "bias", b)) }
        case let .batchnorm(p):
            for (r, w) in [("gamma", p.gamma), ("beta", p.beta), ("mean", p.mean), ("variance", p.variance)] {
                if let w { out.append((l.name, r, w)) }
            }
        case let .activation(a):
            if case let .preLU(alpha?) = a.nonlinearity { out.append((l.name, "alpha", alpha)) }
        case let .custom(c):
            for (i, w) in c.weights.enumerated() { out.append((l.name, "w\(i)", w)) }
        default: break
        }
    }
    return out
}

final class CoreMLExportTests: XCTestCase {
    /// Writes `model` to $MLCONV_EXPORT_DIR/<name>.mlmodel when that variable is set.
    func keep(_ model: Spec.Model, _ name: String) throws {
        guard let dir = ProcessInfo.processInfo.environment["MLCONV_EXPORT_DIR"], !dir.isEmpty else { return }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try model.write(toFile: dir + "/" + name + ".mlmodel")
    }

    /// Writes $MLCONV_EXPORT_DIR/<name>.expected.json: the IR's values of quantized weights, by
    /// "layer.role", for `Scripts/check_mlmodel_export.py quant`.
    func keepExpected(_ name: String, _ values: [String: [Float]]) throws {
        guard let dir = ProcessInfo.processInfo.environment["MLCONV_EXPORT_DIR"], !dir.isEmpty else { return }
        try JSONSerialization.data(withJSONObject: values.mapValues { $0.map(Double.init) })
            .write(to: URL(fileURLWithPath: dir + "/" + name + ".expected.json"))
    }

    /// Exports, checks the validator rules and that encode → decode gives the same spec.
    @discardableResult
    func export(_ g: Graph, _ name: String, options: CoreMLExportOptions = CoreMLExportOptions(),
                file: StaticString = #filePath, line: UInt = #line) throws -> CoreMLExportResult {
        let r = try CoreMLExporter.export(g, options: options)
        assertValidatorRules(r.model, file: file, line: line)
        let decoded = try Spec.Model.decode(r.model.encode())
        XCTAssertEqual(decoded, r.model, "\(name): encode → decode changed the spec", file: file, line: line)
        try keep(r.model, name)
        return r
    }

    /// The Core ML validator's weight rules (coreml-format-facts §2.2).
    func assertValidatorRules(_ model: Spec.Model, file: StaticString = #filePath, line: UInt = #line) {
        for (layer, role, w) in exportedWeights(model) {
            XCTAssertNotEqual(w.storage, .mixed, "\(layer).\(role): more than one weight field set", file: file, line: line)
            XCTAssertNotEqual(w.storage, .empty, "\(layer).\(role): no weight field set", file: file, line: line)
            if let q = w.quantization {
                XCTAssertTrue((1...8).contains(q.numberOfBits), "\(layer).\(role): \(q.numberOfBits) bits", file: file, line: line)
                if case let .lookupTable(t)? = q.scheme {
                    XCTAssertEqual(t.count, 1 << Int(q.numberOfBits), "\(layer).\(role): LUT size", file: file, line: line)
                }
                if case let .linear(scale, bias)? = q.scheme {
                    XCTAssertTrue(bias.isEmpty || bias.count == scale.count, "\(layer).\(role): bias/scale lengths", file: file, line: line)
                }
            }
        }
        for l in model.neuralNetwork?.layers ?? [] {
            var pair: (Spec.WeightParams?, Spec.WeightParams?, UInt64, Int)? = nil
            if case let .convolution(p) = l.layer {
                let count = Int(p.outputChannels * p.kernelChannels * (p.kernelSize.first ?? 3) * (p.kernelSize.last ?? 3)) / (p.isDeconvolution ? Int(p.nGroups) : 1)
                pair = (p.weights, p.bias, p.outputChannels, count)
            }
            if case let .innerProduct(p) = l.layer { pair = (p.weights, p.bias, p.outputChannels, Int(p.inputChannels * p.outputChannels)) }
            guard let (wOpt, b, cout, count) = pair, let w = wOpt else { continue }
            if let b {
                XCTAssertEqual(w.storage == .float16, b.storage == .float16,
                               "\(l.name): fp16 weights need an fp16 bias and fp32 weights an fp32 bias", file: file, line: line)
                XCTAssertEqual(b.floatCount ?? b.dequantized(count: Int(cout))?.count, Int(cout), "\(l.name): bias length", file: file, line: line)
            }
            if let q = w.quantization {
                XCTAssertGreaterThanOrEqual(w.rawValue.count, (count * Int(q.numberOfBits) + 7) / 8,
                                            "\(l.name): rawValue shorter than ceil(n·N/8)", file: file, line: line)
                if case let .linear(scale, _)? = q.scheme {
                    XCTAssertTrue(scale.count == 1 || scale.count == Int(cout), "\(l.name): scale length", file: file, line: line)
                }
            } else {
                XCTAssertEqual(w.floatCount, count, "\(l.name): weight count", file: file, line: line)
            }
        }
    }

    // MARK: - Spec version

    func testFloat32ConvIsSpec1WithSplitActivation() throws {
        let r = try export(ExportGraphs.conv(), "conv_fp32")
        XCTAssertEqual(r.model.specificationVersion, 1)
        XCTAssertTrue(r.versionReasons.isEmpty)
        let layers = try XCTUnwrap(r.model.neuralNetwork?.layers)
        XCTAssertEqual(layers.map(\.name), ["conv", "conv__activation__"])
        XCTAssertEqual(layers[1].layer, .activation(Spec.ActivationParams(.relu)))
        XCTAssertEqual(layers[0].output, layers[1].input)
        XCTAssertEqual(layers[1].output, ["y"])
        guard case let .convolution(p) = layers[0].layer else { return XCTFail("not a convolution") }
        XCTAssertEqual(p.padding, .same(.init(asymmetryMode: .bottomRightHeavy)))
        XCTAssertEqual(p.kernelChannels, 3)
        XCTAssertEqual(p.outputChannels, 4)
        XCTAssertEqual(p.dilationFactor, [1, 1])
        XCTAssertTrue(p.hasBias)
        XCTAssertEqual(p.weights?.floatValue.count, 4 * 3 * 3 * 3)
    }

    func testFloat16WeightsAreSpec2AndPairTheBias() throws {
        let w = ExportGraphs.float16([4, 3, 3, 3], randomFloats(count: 108, seed: 5))
        let r = try export(ExportGraphs.conv(weight: w, activation: nil), "conv_fp16")
        XCTAssertEqual(r.model.specificationVersion, 2)
        XCTAssertEqual(r.versionReasons, [CoreMLSpecVersionReason(version: 2, reason: "fp16 weights (node 'conv')")])
        guard case let .convolution(p)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertEqual(p.weights?.storage, .float16)
        XCTAssertEqual(p.bias?.storage, .float16, "the fp32 bias must be converted to fp16")
        XCTAssertEqual(p.weights?.float16Value.count, 108 * 2)
        let b = try XCTUnwrap(p.bias?.floats)
        XCTAssertLessThan(maxAbsDiff(b, randomFloats(count: 4, seed: 2)), 1e-3)
    }

    func testFloat32WeightsGetAFloat32BiasFromAnFP16One() throws {
        let b = ExportGraphs.float16([4], [0.5, -0.25, 1, 2])
        let r = try export(ExportGraphs.conv(bias: b, activation: nil), "conv_fp16_bias")
        guard case let .convolution(p)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertEqual(p.weights?.storage, .float32)
        XCTAssertEqual(p.bias?.floatValue, [0.5, -0.25, 1, 2])
        XCTAssertEqual(r.model.specificationVersion, 1, "an fp16 bias converted to fp32 does not need spec 2")
    }

    func testLinearQuantizedWeightsAreSpec3() throws {
        for bits in [1, 2, 3, 4, 5, 6, 7, 8] {
            let values = randomFloats(count: 108, seed: UInt64(bits))
            let w = ExportGraphs.linearQuantized([4, 3, 3, 3], values, bits: bits)
            let r = try export(ExportGraphs.conv(weight: w, activation: nil), "conv_linear\(bits)")
            try keepExpected("conv_linear\(bits)", ["conv.weights": w.floats()])
            XCTAssertEqual(r.model.specificationVersion, 3)
            guard case let .convolution(p)? = r.model.neuralNetwork?.layers.first?.layer, let wp = p.weights else { return XCTFail() }
            XCTAssertEqual(wp.storage, .quantized)
            XCTAssertEqual(wp.rawValue.count, (108 * bits + 7) / 8, "exactly ceil(n·N/8) bytes")
            XCTAssertEqual(wp.quantization?.numberOfBits, UInt64(bits))
            XCTAssertEqual(p.bias?.storage, .float32, "quantized weights keep a float bias")
            // Core ML's dequantization (our Spec reader) gives the IR's values.
            let ours = try XCTUnwrap(wp.dequantized(count: 108))
            XCTAssertEqual(maxAbsDiff(ours, w.floats()), 0, "\(bits)-bit")
        }
    }

    func testLookupTableWeightsAreSpec3() throws {
        for bits in [1, 2, 4, 8] {
            let w = ExportGraphs.lut([4, 3, 3, 3], bits: bits)
            let r = try export(ExportGraphs.conv(weight: w, activation: nil), "conv_lut\(bits)")
            try keepExpected("conv_lut\(bits)", ["conv.weights": w.floats()])
            XCTAssertEqual(r.model.specificationVersion, 3)
            guard case let .convolution(p)? = r.model.neuralNetwork?.layers.first?.layer, let wp = p.weights else { return XCTFail() }
            guard case let .lookupTable(t)? = wp.quantization?.scheme else { return XCTFail("no LUT") }
            XCTAssertEqual(t.count, 1 << bits)
            XCTAssertEqual(wp.dequantized(count: 108), w.floats())
        }
    }

    func testBadLookupTableSizeIsAnError() throws {
        let codes = packMSBFirst([UInt8](repeating: 1, count: 108), bits: 2)
        let w = try ConstantTensor(shape: [4, 3, 3, 3], encoding: .lookupTable(LookupTableQuantization(bits: 2, table: [0, 1, 2])),
                                   storage: .copying(codes))
        XCTAssertThrowsError(try CoreMLExporter.model(from: ExportGraphs.conv(weight: w))) { e in
            let err = e as? CoreMLExportError
            XCTAssertEqual(err?.problems.first?.node, "conv")
            XCTAssertTrue("\(e)".contains("2^bits"), "\(e)")
        }
    }

    func testCustomLayerIsSpec2AndMinimumVersionOption() throws {
        let custom = CustomLayerAttributes(className: "MyLayer", description: "demo", parameters: ["k": .double(2), "a": .string("x")],
                                           outputShapes: [[1, 8, 8, 3]])
        let g = ExportGraphs.single(.custom(custom), shape: [1, 8, 8, 3], weights: ["w1": randomConstant([2]), "w0": randomConstant([3])])
        let r = try export(g, "custom")
        XCTAssertEqual(r.model.specificationVersion, 2)
        guard case let .custom(p)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertEqual(p.className, "MyLayer")
        XCTAssertEqual(p.weights.map(\.floatValue.count), [3, 2], "weights in w0, w1 order")
        XCTAssertEqual(p.parameters.map(\.key), ["a", "k"])
        let r4 = try export(g, "custom_spec4", options: CoreMLExportOptions(minimumSpecificationVersion: 4))
        XCTAssertEqual(r4.model.specificationVersion, 4)
        XCTAssertEqual(r4.versionReasons.map(\.description), ["spec 2: custom layer 'MyLayer' (node 'n')",
                                                               "spec 4: requested by CoreMLExportOptions.minimumSpecificationVersion"])
        let r1 = try CoreMLExporter.export(g, options: CoreMLExportOptions(minimumSpecificationVersion: 1))
        XCTAssertEqual(r1.model.specificationVersion, 2, "the option never lowers below what the features need")
    }

    // MARK: - Description

    func testMultiArrayShapesTypesAndRenames() throws {
        let r = try export(ExportGraphs.conv(), "conv_renamed",
                           options: CoreMLExportOptions(inputNames: ["x": "image"], outputNames: ["y": "features"]))
        let d = try XCTUnwrap(r.model.description)
        XCTAssertEqual(d.input.map(\.name), ["image"])
        XCTAssertEqual(d.input.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [3, 8, 8], dataType: .double)))
        XCTAssertEqual(d.output.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [4, 8, 8], dataType: .double)))
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.input, ["image"])
        XCTAssertEqual(r.model.neuralNetwork?.layers.last?.output, ["features"])
        XCTAssertEqual(d.metadata?.userDefinedDictionary["mlconv.converter"], "mlconv")
        let f = try CoreMLExporter.model(from: ExportGraphs.conv(), options: CoreMLExportOptions(arrayDataType: .float32))
        XCTAssertEqual(f.description?.input.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [3, 8, 8], dataType: .float32)))
        XCTAssertEqual(f.neuralNetwork?.arrayInputShapeMapping, .rank5)
    }

    func testClassifier() throws {
        var g = ExportGraphs.classifier()
        g.description.metadata.author = "me"
        g.description.metadata.userDefined = ["mlconv.source": "test"]
        g.description.outputs = [FeatureDescription(name: "probs", shortDescription: "class probabilities")]
        let r = try export(g, "classifier")
        guard case let .neuralNetworkClassifier(c) = r.model.type else { return XCTFail("not a classifier") }
        XCTAssertEqual(c.classLabels, .strings(["a", "b", "c", "d"]))
        XCTAssertEqual(c.labelProbabilityLayerName, "probs")
        let d = try XCTUnwrap(r.model.description)
        XCTAssertEqual(d.output.map(\.name), ["probs", "classLabel"])
        XCTAssertEqual(d.output[0].type?.kind, .dictionary(Spec.DictionaryFeatureType(keyType: .string)))
        XCTAssertEqual(d.output[0].shortDescription, "class probabilities")
        XCTAssertEqual(d.output[1].type?.kind, .string)
        XCTAssertEqual(d.predictedFeatureName, "classLabel")
        XCTAssertEqual(d.predictedProbabilitiesName, "probs")
        XCTAssertEqual(d.input.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [6], dataType: .double)))
        XCTAssertEqual(d.metadata?.author, "me")
        XCTAssertEqual(d.metadata?.userDefinedDictionary["mlconv.source"], "test")
        let named = try CoreMLExporter.model(from: g, options: CoreMLExportOptions(predictedFeatureName: "label"))
        XCTAssertEqual(named.description?.output.last?.name, "label")
        XCTAssertThrowsError(try CoreMLExporter.model(from: ExportGraphs.classifier(labels: ["a", "b"]))) { e in
            XCTAssertTrue("\(e)".contains("2 class labels"), "\(e)")
        }
    }

    func testImageInputFoldsPreprocessingIntoTheScaler() throws {
        var g = ExportGraphs.conv()
        try g.markImageInput("x", feature: ImageFeature(width: 8, height: 8, colorSpace: .bgr, scale: 1 / 127.5, bias: [-1, -0.5, -0.25]))
        XCTAssertEqual(g.nodes.first?.name, "x__preprocessing")
        let r = try export(g, "image_bgr")
        let nn = try XCTUnwrap(r.model.neuralNetwork)
        XCTAssertEqual(nn.layers.first?.name, "conv", "the preprocessing node is folded")
        XCTAssertEqual(nn.layers.first?.input, ["x"])
        XCTAssertEqual(nn.preprocessing, [Spec.NeuralNetworkPreprocessing(featureName: "x", preprocessor: .scaler(
            Spec.ImageScaler(channelScale: 1 / 127.5, blueBias: -1, greenBias: -0.5, redBias: -0.25)))])
        XCTAssertEqual(r.model.description?.input.first?.type?.kind,
                       .image(Spec.ImageFeatureType(width: 8, height: 8, colorSpace: .bgr)))
        XCTAssertEqual(r.model.specificationVersion, 1)
        // Without a preprocessing node: the identity scaler, as NeuralNetworkBuilder writes it.
        var plain = ExportGraphs.conv()
        try plain.markImageInput("x", feature: ImageFeature(width: 8, height: 8, colorSpace: .rgb))
        let p = try export(plain, "image_rgb_identity")
        XCTAssertEqual(p.model.neuralNetwork?.preprocessing, [Spec.NeuralNetworkPreprocessing(featureName: "x", preprocessor: .scaler(Spec.ImageScaler(channelScale: 1)))])
    }

    func testImageOutput() throws {
        let g0 = ExportGraphs.single(.activation(.sigmoid), shape: [1, 5, 7, 3])
        var g = g0
        try g.inferShapes()
        try g.markImageOutput("y", colorSpace: .rgb)
        let r = try export(g, "image_output")
        XCTAssertEqual(r.model.description?.output.first?.type?.kind,
                       .image(Spec.ImageFeatureType(width: 7, height: 5, colorSpace: .rgb)))
    }

    // MARK: - Layers

    func testActivationsLowerToSpec1Layers() throws {
        let cases: [(Activation, [String])] = [
            (.relu, ["ReLU"]), (.leakyReLU(alpha: 0.1), ["leakyReLU"]), (.elu(alpha: 1), ["ELU"]), (.sigmoid, ["sigmoid"]),
            (.tanh, ["tanh"]), (.softplus, ["softplus"]), (.softsign, ["softsign"]),
            (.hardSigmoid(alpha: 0.2, beta: 0.5), ["sigmoidHard"]), (.thresholdedReLU(theta: 1), ["thresholdedReLU"]),
            (.linear(alpha: 2, beta: 1), ["linear"]), (.selu, ["ELU", "linear"]),
            (.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0), ["ReLU", "linear", "unary", "linear"]),
            (.clippedReLU(maxValue: nil, negativeSlope: 0.2, threshold: 0), ["leakyReLU"]),
            (.swish, ["sigmoid", "multiply"]), (.exponential, ["unary"]),
            (.gelu(approximate: true), ["multiply", "multiply", "linear", "add", "linear", "sigmoid", "multiply"]),
            (.gelu(approximate: false), ["unary", "unary", "linear", "multiply", "linear", "multiply", "linear", "multiply", "linear",
                                         "multiply", "multiply", "unary", "multiply", "linear", "multiply", "add", "linear"]),
        ]
        for (a, expected) in cases {
            let r = try export(ExportGraphs.single(.activation(a), shape: [1, 4, 4, 2]), "act_\(expected.joined(separator: "_"))")
            XCTAssertEqual(r.model.specificationVersion, 1, "\(a)")
            let names = r.model.neuralNetwork!.layers.map { l -> String in
                if case let .activation(p) = l.layer { return p.nonlinearity.name }
                return l.layer.typeName
            }
            XCTAssertEqual(names, expected, "\(a)")
            XCTAssertEqual(r.model.neuralNetwork?.layers.last?.output, ["y"])
        }
        // relu6: coremltools' threshold(−6) lowering.
        let r6 = try CoreMLExporter.model(from: ExportGraphs.single(.activation(.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)), shape: [1, 3]))
        guard case let .unary(u) = r6.neuralNetwork!.layers[2].layer else { return XCTFail() }
        XCTAssertEqual(u.type, .threshold)
        XCTAssertEqual(u.alpha, -6)
        XCTAssertEqual(u.scale, 1)
    }

    func testLayoutOps() throws {
        // Flatten over NHWC → CHANNEL_LAST flatten.
        var r = try export(ExportGraphs.single(.reshape(targetShape: [-1]), shape: [1, 2, 3, 4]), "flatten")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .flatten(mode: .channelLast))
        XCTAssertEqual(r.model.description?.output.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [24], dataType: .double)))
        // Reshape to (H, W, C) → [C, H, W] CHANNEL_LAST.
        r = try export(ExportGraphs.single(.reshape(targetShape: [4, 3, 2]), shape: [1, 24]), "reshape")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .reshape(Spec.ReshapeLayerParams(targetShape: [2, 4, 3], mode: .channelLast)))
        // NHWC permutes map onto [Seq, C, H, W] axes: (0, 2, 1, 3) swaps H and W.
        r = try export(ExportGraphs.single(.transpose(perm: [0, 2, 1, 3]), shape: [1, 2, 3, 4]), "permute")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .permute(axis: [0, 1, 3, 2]))
        r = try export(ExportGraphs.single(.transpose(perm: [0, 3, 1, 2]), shape: [1, 2, 3, 4]), "permute_chw")
        // IR (N, C, H, W) read as NHWC has H' = C, W' = H, C' = W: Core ML [C', H', W'] = [W, C, H].
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .permute(axis: [0, 3, 1, 2]))
        // Global pooling without keepDims needs no flatten.
        r = try export(ExportGraphs.single(.globalPool2d(kind: .average, keepDims: false), shape: [1, 4, 4, 3]), "global_pool")
        guard case let .pooling(p)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertTrue(p.globalPooling)
        XCTAssertEqual(r.model.neuralNetwork?.layers.count, 1)
        XCTAssertEqual(r.model.description?.output.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [3], dataType: .double)))
        // Pooling excludes padding from averages.
        r = try export(ExportGraphs.single(.pool2d(Pool2DAttributes(kind: .average, kernel: [3, 3], strides: [2, 2], padding: .same)),
                                           shape: [1, 5, 5, 2]), "avg_pool_same")
        guard case let .pooling(ap)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertTrue(ap.avgPoolExcludePadding)
        XCTAssertEqual(ap.padding, .same(.init(asymmetryMode: .bottomRightHeavy)))
        // Repeat vector → upsample ×(n, 1); rank-3 (N, S, D) features are [D, S, 1].
        r = try export(ExportGraphs.single(.repeatVector(n: 3), shape: [1, 5]), "repeat_vector")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .upsample(Spec.UpsampleLayerParams(scalingFactor: [3, 1], mode: .nn)))
        XCTAssertEqual(r.model.description?.output.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [5, 3, 1], dataType: .double)))
        // Rank-3 inputs: dense is a 1×1 convolution, the steps transpose onto channels.
        r = try export(ExportGraphs.single(.transpose(perm: [0, 2, 1]), shape: [1, 4, 6]), "transpose_rank3")
        XCTAssertEqual(r.model.description?.input.first?.type?.kind, .multiArray(Spec.ArrayFeatureType(shape: [6, 4, 1], dataType: .double)))
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .permute(axis: [0, 2, 1, 3]))
        // Padding and crop on H, W.
        r = try export(ExportGraphs.single(.pad(PadAttributes(mode: .reflect, pads: [[0, 0], [1, 2], [2, 1], [0, 0]])), shape: [1, 4, 4, 2]), "pad_reflect")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .padding(Spec.PaddingLayerParams(
            paddingAmounts: Spec.BorderAmounts([.init(startEdgeSize: 1, endEdgeSize: 2), .init(startEdgeSize: 2, endEdgeSize: 1)]), paddingType: .reflection(.init()))))
        r = try export(ExportGraphs.single(.crop(crops: [[0, 0], [1, 0], [0, 2], [0, 0]]), shape: [1, 4, 4, 2]), "crop")
        guard case let .crop(cp)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertEqual(cp.offset, [0, 0])
    }

    func testDenseOnRank4IsA1x1Convolution() throws {
        let g = ExportGraphs.single(.dense(DenseAttributes(outputChannels: 5, activation: .tanh)), shape: [1, 3, 3, 4],
                                    weights: ["weight": randomConstant([5, 4])])
        let r = try export(g, "dense_rank4")
        guard case let .convolution(p)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertEqual(p.kernelSize, [1, 1])
        XCTAssertEqual(p.kernelChannels, 4)
        XCTAssertFalse(p.hasBias)
    }

    func testSubtractAndBroadcastingAdd() throws {
        let a = ValueInfo(name: "a", type: TensorType([1, 4, 4, 3])), b = ValueInfo(name: "b", type: TensorType([1, 4, 4, 3]))
        var g = Graph(inputs: [a, b], outputs: ["y"], nodes: [Node(name: "sub", op: .elementwise(.subtract), inputs: ["a", "b"], outputs: ["y"])])
        var r = try export(g, "subtract")
        XCTAssertEqual(r.model.neuralNetwork?.layers.map(\.name), ["sub__neg__", "sub"])
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .activation(Spec.ActivationParams(.linear(alpha: -1, beta: 0))))
        // (N, C) + (N, H, W, C): the full shape goes first.
        g = Graph(inputs: [ValueInfo(name: "v", type: TensorType([1, 3])), a], outputs: ["y"],
                  nodes: [Node(name: "add", op: .elementwise(.add), inputs: ["v", "a"], outputs: ["y"])])
        r = try export(g, "broadcast_add")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.input, ["a", "v"])
    }

    func testUpsampleModes() throws {
        var r = try export(ExportGraphs.single(.upsample2d(Upsample2DAttributes(scale: [2, 2], mode: .nearest)), shape: [1, 3, 3, 2]), "upsample_nn")
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .upsample(Spec.UpsampleLayerParams(scalingFactor: [2, 2], mode: .nn)))
        r = try export(ExportGraphs.single(.upsample2d(Upsample2DAttributes(scale: [2, 3], mode: .bilinearAlignCorners)), shape: [1, 3, 3, 2]), "upsample_align")
        XCTAssertEqual(r.model.specificationVersion, 3)
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .resizeBilinear(Spec.ResizeBilinearLayerParams(targetSize: [6, 9], mode: .init(samplingMethod: .strictAlignEndpointsMode))))
        r = try export(ExportGraphs.single(.upsample2d(Upsample2DAttributes(scale: [2, 2], mode: .bilinearHalfPixel)), shape: [1, 3, 3, 2]), "upsample_half_pixel")
        XCTAssertEqual(r.model.specificationVersion, 1)
        XCTAssertEqual(r.model.neuralNetwork?.layers.map(\.layer.typeName), ["padding", "convolution", "crop"])
        guard case let .convolution(p)? = r.model.neuralNetwork?.layers[1].layer else { return XCTFail() }
        XCTAssertTrue(p.isDeconvolution)
        XCTAssertEqual(p.nGroups, 2)
        XCTAssertEqual(p.kernelSize, [4, 4])
        XCTAssertEqual(Array(p.weights!.floatValue.prefix(4)), [0.0625, 0.1875, 0.1875, 0.0625])
        guard case let .crop(c)? = r.model.neuralNetwork?.layers[2].layer else { return XCTFail() }
        XCTAssertEqual(c.cropAmounts, Spec.BorderAmounts([.init(startEdgeSize: 3, endEdgeSize: 3), .init(startEdgeSize: 3, endEdgeSize: 3)]))
    }

    func testDeconvolutionWritesOutputShape() throws {
        let a = Deconv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .same, outputChannels: 4)
        let g = ExportGraphs.single(.deconv2d(a), shape: [1, 5, 5, 2], weights: ["weight": randomConstant([2, 4, 3, 3]), "bias": randomConstant([4])])
        let r = try export(g, "deconv_same")
        guard case let .convolution(p)? = r.model.neuralNetwork?.layers.first?.layer else { return XCTFail() }
        XCTAssertTrue(p.isDeconvolution)
        XCTAssertEqual(p.outputShape, [10, 10])
        XCTAssertEqual(p.kernelChannels, 2)
        XCTAssertEqual(p.padding, .same(.init(asymmetryMode: .bottomRightHeavy)))
    }

    // MARK: - Errors

    func testEveryUnsupportedNodeIsListed() throws {
        let x = ValueInfo(name: "x", type: TensorType([1, 4, 4, 3]))
        let nodes = [
            Node(name: "relu", op: .activation(.relu), inputs: ["x"], outputs: ["a"]),
            Node(name: "pad", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [0, 0], [0, 0], [1, 1]])), inputs: ["a"], outputs: ["b"]),
            Node(name: "up", op: .deconv2d(Deconv2DAttributes(kernel: [3, 3], strides: [2, 2], dilations: [2, 2], padding: .valid, outputChannels: 2)),
                 inputs: ["b"], outputs: ["c"], weights: ["weight": randomConstant([5, 2, 3, 3])]),
            Node(name: "t", op: .transpose(perm: [1, 0, 2, 3]), inputs: ["c"], outputs: ["d"]),
        ]
        let g = Graph(inputs: [x], outputs: ["d"], nodes: nodes)
        XCTAssertThrowsError(try CoreMLExporter.model(from: g, options: .classicOnly)) { e in
            guard let err = e as? CoreMLExportError else { return XCTFail("\(e)") }
            XCTAssertEqual(err.problems.map(\.node), ["pad", "up", "t"])
            XCTAssertTrue(err.description.contains("dilation [2, 2]"), err.description)
            XCTAssertTrue(err.problems.allSatisfy { !$0.suggestion.isEmpty })
        }
    }

    func testNonChannelAxesAreWrappedInPermutes() throws {
        let bn = Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: 1, epsilon: 1e-3)), inputs: ["x"], outputs: ["y"],
                      weights: ["mean": randomConstant([4]), "variance": randomConstant([4], in: 0.5...1)])
        let r = try export(Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 5, 3]))], outputs: ["y"], nodes: [bn]), "bn_axis1")
        XCTAssertEqual(r.model.neuralNetwork?.layers.map(\.layer.typeName), ["permute", "batchnorm", "permute"])
        XCTAssertEqual(r.model.neuralNetwork?.layers.first?.layer, .permute(axis: [0, 2, 1, 3]))
        XCTAssertEqual(r.model.neuralNetwork?.layers.last?.output, ["y"])
        let sm = try export(ExportGraphs.single(.softmax(axis: 2), shape: [1, 4, 5, 3]), "softmax_axis2")
        XCTAssertEqual(sm.model.neuralNetwork?.layers.first?.layer, .permute(axis: [0, 3, 2, 1]))
    }

    func testReLUWithSlopeAndThresholdAndFullPReLU() throws {
        let relu = try export(ExportGraphs.single(.activation(.clippedReLU(maxValue: 4, negativeSlope: 0.2, threshold: 0.5)), shape: [1, 6]),
                              "relu_slope_threshold")
        XCTAssertEqual(relu.model.neuralNetwork?.layers.map(\.layer.typeName),
                       ["activation", "activation", "activation", "activation", "add", "activation", "unary", "activation"])
        XCTAssertEqual(relu.model.specificationVersion, 1)
        let prelu = try export(ExportGraphs.single(.prelu, shape: [1, 2, 3, 4], weights: ["alpha": randomConstant([2, 3, 4])]), "prelu_full")
        let layers = try XCTUnwrap(prelu.model.neuralNetwork?.layers)
        XCTAssertEqual(layers.map(\.layer.typeName), ["activation", "activation", "activation", "activation", "loadConstant", "multiply", "add"])
        guard case let .loadConstant(k) = layers[4].layer else { return XCTFail() }
        XCTAssertEqual(k.shape, [4, 2, 3])
        XCTAssertEqual(k.data?.floatValue[1], randomFloats(count: 24)[4], "alpha [H, W, C] is written [C, H, W]")
    }

    func testLayerTableCoversEveryOp() {
        let ops = ["conv2d", "deconv2d", "dense", "batchNorm", "activation", "softmax", "prelu", "pool2d", "globalPool2d", "pad",
                   "crop", "upsample2d", "reshape", "transpose", "elementwise", "concat", "repeatVector", "identity", "custom"]
        for op in ops {
            XCTAssertTrue(CoreMLExporter.layerTable.contains { $0.irOp.hasPrefix(op) }, "layerTable has no row for \(op)")
        }
        XCTAssertEqual(CoreMLExporter.layerTable.first { $0.irOp == "custom" }?.minimumSpecificationVersion, 2)
    }
}

final class CoreMLExportQuantizedBiasTests: XCTestCase {
    /// Peer-check finding: a quantized bias of quantized weights was written back as float32 (no
    /// size saving); it now stays quantized like coremltools writes it.
    func testQuantizedBiasStaysQuantized() throws {
        let values = randomFloats(count: 108, seed: 5)
        let w = ExportGraphs.linearQuantized([4, 3, 3, 3], values, bits: 8)
        let codes: [UInt8] = [0, 85, 170, 255]
        let b = try ConstantTensor(shape: [4], encoding: .linear(LinearQuantization(bits: 8, axis: 0, scale: [0.01], bias: [-1])),
                                   storage: .copying(codes))
        let g = ExportGraphs.conv(weight: w, bias: b, activation: nil)
        let m = try CoreMLExporter.model(from: g)
        guard case let .convolution(p)? = m.neuralNetwork?.layers.first?.layer else { return XCTFail("no convolution") }
        XCTAssertEqual(p.bias?.rawValue, codes)
        XCTAssertNotNil(p.bias?.quantization)
        XCTAssertEqual(m.specificationVersion, 3)
    }
}
