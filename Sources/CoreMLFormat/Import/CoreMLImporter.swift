// Core ML neural network (.mlmodel) → graph IR.
import Diagnostics
import MLGraph

/// The result of importing a Core ML model: the graph and what the importer had to assume.
public struct CoreMLImportResult: Sendable {
    /// The verified graph (every tensor typed).
    public var graph: Graph
    /// Assumptions worth telling the user about, e.g. the output shape guessed for a custom layer
    /// class the importer does not know. Empty for most models.
    public var warnings: [String]
    /// The weights an on-device update may change: node name (= the Core ML layer's name) →
    /// weight roles ("weight", "bias") of layers marked `isUpdatable` whose `WeightParams` are
    /// marked `isUpdatable` too. Empty for models that are not updatable.
    public var updatableWeights: [String: [String]] = [:]
}

/// Imports Core ML neural networks (`neuralNetwork`, `neuralNetworkClassifier`,
/// `neuralNetworkRegressor`) into the graph IR.
///
/// **Shape mapping.** Networks with `arrayInputShapeMapping = EXACT_ARRAY_MAPPING` keep Core ML's
/// exact shapes (any rank, no batch axis added): see Layers/ExactMapping.swift, which also says how
/// classic layers run on rank-N tensors there. What follows describes RANK5_ARRAY_MAPPING networks.
/// The status of every layer type: `CoreMLLayerCatalog` (`mlconv ops --coreml`, docs/COREML_LAYERS.md).
///
/// **Layout.** Core ML's classic layers work on rank-5 blobs [Seq, Batch, C, H, W]; the IR is
/// channels-last with the batch first. Each blob becomes an NHWC tensor [1, H, W, C] (or [1, C]
/// for vector blobs [C, 1, 1]), so convolution, pooling, softmax, concat, … act on axis 3.
/// Features keep Core ML's shapes:
/// - a multi-array input [C, H, W] is the IR input [1, C, H, W] followed by a `transpose` to NHWC
///   (node `<input>__to_nhwc`); a [C] input is the IR input [1, C];
/// - a multi-array output [C, H, W] is produced by a `transpose` NHWC → [1, C, H, W] (node
///   `<output>__to_nchw`); a [C] output is [1, C];
/// - an image input is [1, H, W, C] (C = 3 in RGB or BGR order per its colour space, 1 for
///   grayscale) holding raw 0–255 values, followed, when the model has a non-identity scaler, by
///   the batchNorm node `<input>__preprocessing` (axis 3, mean 0, variance 1, epsilon 0, gamma =
///   channelScale, beta = the channel biases in the image's channel order), with
///   `FeatureDescription.image` recording width, height, colour space, scale and biases. A mean
///   image that is constant per channel becomes that batchNorm's beta; any other mean image is
///   subtracted by an `add` node of the same name;
/// - an image output is the NHWC tensor [1, H, W, C] with `FeatureDescription.image` set.
///
/// **Classifiers.** `ModelDescription.classLabels` gets the labels (int64 labels as decimal
/// strings) and `probabilitiesOutput` the name of the probabilities output, which in the IR is
/// the tensor [1, classes] (in Core ML a dictionary). The class-label output (a string or int64
/// feature) is not an IR tensor; its name is recorded in the metadata's userDefined entry
/// `mlconv.classLabelOutput`.
///
/// **Weights** stay in their Core ML encoding when the IR has it: float16 → `.float16`, n-bit
/// linear → `.linear` (per output channel: axis 0 for convolution and inner product, 1 for
/// deconvolution), n-bit look-up table → `.lookupTable`. int8 weights (int8DynamicQuantize) are
/// dequantized to float32.
///
/// **Layers.** convolution (groups, dilation, valid/same padding, deconvolution), pooling,
/// activation (every `ActivationParams` kind), innerProduct, batchnorm, add, multiply, average,
/// max, min, scale, bias, softmax, concat, flatten, reshape, permute, padding, crop, upsample,
/// resizeBilinear (integer factors), embedding (one index), unary (every function), split, slice, reduce (over C, H, W, H×W
/// or C×H×W; not LOGSUM), mvn, l2normalize, lrn, reorganizeData, dot, loadConstant (→ `Op.constant`),
/// custom (→ `Op.custom`) and the elementwise rank-N layers
/// copy, tanh, clip, clampedReLU and gelu, and the recurrent layers uniDirectionalLSTM,
/// biDirectionalLSTM, gru and simpleRecurrent with embeddings of index sequences and permutes
/// of the Seq axis (sequence tensors [1, S, C]; optional recurrent-state inputs are omitted, i.e.
/// zeros: see RecurrentImport.swift); in EXACT_ARRAY_MAPPING networks also the rank-N
/// elementwise, comparison, logical, where, reduce*, argMax/argMin, softmaxND,
/// layerNormalization and random layers (Layers/MathImport.swift, RandomImport.swift;
/// docs/ELEMENTWISE_MATH.md). Everything else — the other rank-N
/// (spec 4) layers, and configurations the IR cannot express (sqrt, log, l2normalize, LRN, …) —
/// is reported: the importer collects every problem of the network and throws one
/// `CoreMLImportError.unsupportedLayers` listing each layer.
public enum CoreMLImporter {
    /// Imports `model` into a verified graph.
    /// - Parameters:
    ///   - model: a decoded model (`Spec.Model.load(contentsOf:)`).
    ///   - fileName: the model's file name, used in error messages.
    /// - Throws: `CoreMLImportError` (the model type is not a neural network, layers cannot be
    ///   imported, or the model is inconsistent).
    public static func graph(from model: Spec.Model, fileName: String) throws -> Graph {
        try importModel(model, fileName: fileName).graph
    }

    /// Imports `model` and also returns the importer's warnings (see `CoreMLImportResult`).
    /// - Throws: `CoreMLImportError`, as `graph(from:fileName:)`.
    public static func importModel(_ model: Spec.Model, fileName: String) throws -> CoreMLImportResult {
        let network: Spec.NeuralNetwork
        var classifier: Spec.NeuralNetworkClassifier?
        switch model.type {
        case let .neuralNetwork(n): network = n
        case let .neuralNetworkRegressor(r): network = r.network
        case let .neuralNetworkClassifier(c): network = c.network; classifier = c
        case .pipeline, .pipelineClassifier, .pipelineRegressor:
            let stages = model.pipelineModels.map { $0.kind?.name ?? "none" }
            throw CoreMLImportError.unsupportedModelType(
                file: fileName, kind: model.kind?.name ?? "pipeline",
                message: "pipelines (stages: \(stages.joined(separator: " → "))) are not imported; mlconv imports "
                    + "neuralNetwork, neuralNetworkClassifier and neuralNetworkRegressor models. Use `mlconv inspect` to see the stages.")
        default:
            let kind = model.kind?.name ?? "empty"
            let extra = model.kind == .mlProgram
                ? "ML programs (mlProgram) are not supported; mlconv cannot run them"
                : "only neuralNetwork, neuralNetworkClassifier and neuralNetworkRegressor models are imported"
            throw CoreMLImportError.unsupportedModelType(file: fileName, kind: kind, message: extra)
        }
        guard let desc = model.description else {
            throw CoreMLImportError.invalidModel(file: fileName, message: "the model has no description (inputs and outputs)")
        }
        let b = ImportBuilder(fileName: fileName)
        b.exact = network.arrayInputShapeMapping == .exact
        var irDesc = ModelDescription()
        irDesc.metadata = metadata(desc.metadata, model: model)

        // Inputs (optional recurrent-state inputs are omitted: RecurrentImport.swift).
        let omittedStates = RecurrentImport.omittedStateInputs(desc, layers: network.layers)
        b.flexibleShapes = desc.input.contains { f in  // MARK: flexible shapes
            switch f.type?.kind {
            case let .multiArray(a)?: return a.shapeFlexibility != nil
            case let .image(i)?: return i.sizeFlexibility != nil
            default: return false
            }
        }
        for f in desc.input {
            if omittedStates.contains(f.name) {
                RecurrentImport.omit(f, builder: b, description: &irDesc)
                continue
            }
            do {
                try importInput(f, network: network, builder: b, description: &irDesc)
                // MARK: flexible shapes (FlexibleShapeImport.swift)
                try recordFlexibility(f, network: network, exact: b.exact, builder: b, description: &irDesc)
            } catch let e as LayerImportFailure {
                throw CoreMLImportError.invalidModel(file: fileName, message: "input '\(f.name)': \(e.reason)")
            }
        }

        // Layers.
        let layers = network.layers
        var consumers: [String: [Int]] = [:]
        for (i, l) in layers.enumerated() { for inp in l.input { consumers[inp, default: []].append(i) } }
        let ctx = LayerImporter(builder: b, layers: layers, consumers: consumers, description: desc)
        for (i, layer) in layers.enumerated() { ctx.importLayer(layer, index: i) }
        if !b.problems.isEmpty { throw CoreMLImportError.unsupportedLayers(file: fileName, problems: b.problems) }

        // Outputs.
        var outputs: [String] = []
        let probabilitiesName: String? = classifier.map { _ in
            desc.predictedProbabilitiesName.isEmpty
                ? (desc.output.first { if case .dictionary? = $0.type?.kind { return true } else { return false } }?.name ?? "")
                : desc.predictedProbabilitiesName
        }
        for f in desc.output {
            do {
                if let name = try importOutput(f, classifier: classifier, probabilitiesName: probabilitiesName, desc: desc,
                                               layers: layers, builder: b, description: &irDesc) {
                    outputs.append(name)
                }
            } catch let e as LayerImportFailure {
                throw CoreMLImportError.invalidModel(file: fileName, message: "output '\(f.name)': \(e.reason)")
            }
        }
        guard !outputs.isEmpty else {
            throw CoreMLImportError.invalidModel(file: fileName, message: "the model has no multi-array, image or probability output")
        }

        if let c = classifier {
            switch c.classLabels {
            case let .strings(s)?: irDesc.classLabels = s
            case let .int64s(v)?: irDesc.classLabels = v.map(String.init)
            case nil: break
            }
            if let p = probabilitiesName, outputs.contains(p) { irDesc.probabilitiesOutput = p }
        }

        var graph = Graph(inputs: b.inputs, outputs: outputs, nodes: b.nodes, tensorTypes: b.types, description: irDesc)
        // Drop reservations and tensors of nodes that were never emitted.
        graph.tensorTypes = b.types.filter { !$0.value.shape.isEmpty }
        do {
            try graph.inferShapesAndVerify()  // MARK: graph verifier: a layered error when inference fails
        } catch {
            if let m = (error as? GraphError)?.memoryLimitExceeded(file: fileName) { throw m }  // MARK: graph verifier: keeps .resourceLimit
            throw CoreMLImportError.invalidModel(file: fileName, message: "the imported graph does not verify", cause: DiagnosticCause(error))
        }
        var result = CoreMLImportResult(graph: graph, warnings: b.warnings)
        result.updatableWeights = updatableWeights(network, graph: graph)
        return result
    }

    /// Node → roles of the updatable weights that made it into `graph` (convolution and
    /// innerProduct layers; the importer names their node after the layer).
    static func updatableWeights(_ network: Spec.NeuralNetwork, graph: Graph) -> [String: [String]] {
        var out: [String: [String]] = [:]
        for layer in network.layers where layer.isUpdatable {
            let parts: [(String, Spec.WeightParams?)]
            switch layer.layer {
            case let .innerProduct(p): parts = [("weight", p.weights), ("bias", p.hasBias ? p.bias : nil)]
            case let .convolution(p): parts = [("weight", p.weights), ("bias", p.hasBias ? p.bias : nil)]
            default: continue
            }
            guard let node = graph.nodes.first(where: { $0.name == layer.name }) else { continue }
            let roles = parts.filter { $0.1?.isUpdatable == true && node.weights[$0.0] != nil }.map(\.0)
            if !roles.isEmpty { out[layer.name] = roles }
        }
        return out
    }

    // MARK: - Description

    static func metadata(_ m: Spec.Metadata?, model: Spec.Model) -> ModelMetadata {
        var md = ModelMetadata()
        if let m {
            md.author = m.author
            md.license = m.license
            md.shortDescription = m.shortDescription
            md.versionString = m.versionString
            md.userDefined = m.userDefinedDictionary
        }
        if md.userDefined["mlconv.source"] == nil {
            md.userDefined["mlconv.source"] = "Core ML \(model.kind?.name ?? "model") (specificationVersion \(model.specificationVersion))"
        }
        return md
    }

    // MARK: - Inputs

    static func importInput(_ f: Spec.FeatureDescription, network: Spec.NeuralNetwork, builder b: ImportBuilder,
                            description: inout ModelDescription) throws {
        guard let kind = f.type?.kind else { throw LayerImportFailure("has no type") }
        if b.exact {  // Layers/ExactMapping.swift
            if case let .multiArray(a) = kind {
                try importExactInput(f, a, builder: b, description: &description)
                return
            }
            if case let .image(img) = kind {
                b.exact = false
                defer { b.exact = true }
                try importInput(f, network: network, builder: b, description: &description)
                b.exact = true
                try exactImageBlob(f.name, rank5: network.imageInputShapeMapping != .rank4, flexibleSize: img.sizeFlexibility != nil, builder: b)
                return
            }
        }
        switch kind {
        case let .multiArray(a):
            let s = a.shape.map(Int.init)
            guard s.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("has shape \(s); every dimension must be positive") }
            var chw: [Int]
            switch s.count {
            case 1: chw = [s[0], 1, 1]
            case 3: chw = s
            case 4 where s[0] == 1: chw = Array(s.dropFirst())
            case 5 where s[0] == 1 && s[1] == 1: chw = Array(s.dropFirst(2))
            default:
                throw LayerImportFailure("has shape \(s); the classic (rank-5) layers take [C], [C, H, W] or [1, 1, C, H, W] arrays")
            }
            if s.count == 1 {
                b.addInput(f.name, [1, chw[0]])
                b.blobs[f.name] = f.name
            } else {
                b.addInput(f.name, [1] + chw)
                b.blobs[f.name] = try b.emit(f.name + "__to_nhwc", .transpose(perm: [0, 2, 3, 1]), [f.name])
            }
            description.inputs.append(FeatureDescription(name: f.name, shortDescription: f.shortDescription))
        case let .image(img):
            let cs: ImageColorSpace
            switch img.colorSpace {
            case .rgb: cs = .rgb
            case .bgr: cs = .bgr
            case .grayscale: cs = .grayscale
            case .grayscaleFloat16:
                cs = .grayscale
                b.warnings.append("input '\(f.name)' is a GRAYSCALE_FLOAT16 image; it is imported as a grayscale image")
            default: throw LayerImportFailure("is an image with colour space \(img.colorSpace)")
            }
            let c = cs == .grayscale ? 1 : 3
            guard img.height > 0, img.width > 0 else { throw LayerImportFailure("is an image of \(img.width)×\(img.height) pixels") }
            let h = try Checked.int(img.height, "image height", in: 1...Node.maxCountAttribute)
            let w = try Checked.int(img.width, "image width", in: 1...Node.maxCountAttribute)
            b.addInput(f.name, [1, h, w, c])
            b.blobs[f.name] = f.name
            var feature = ImageFeature(width: w, height: h, colorSpace: cs)
            let pre = network.preprocessing.first { $0.featureName == f.name || ($0.featureName.isEmpty && network.preprocessing.count == 1) }
            switch pre?.preprocessor {
            case let .scaler(s)?:
                let bias: [Float]
                switch cs {
                case .rgb: bias = [s.redBias, s.greenBias, s.blueBias]
                case .bgr: bias = [s.blueBias, s.greenBias, s.redBias]
                case .grayscale: bias = [s.grayBias]
                }
                feature.scale = s.channelScale
                feature.bias = bias
                if s.channelScale == 0 {
                    b.warnings.append("input '\(f.name)': the image scaler has channelScale 0, which makes every pixel "
                        + "\(bias.map { "\($0)" }.joined(separator: "/")); imported as written")
                }
                if !(s.channelScale == 1 && bias.allSatisfy { $0 == 0 }) {
                    b.blobs[f.name] = try preprocessingNode(f.name, scale: s.channelScale, bias: bias, builder: b)
                }
            case let .meanImage(mean)?:
                guard mean.count == c * h * w else {
                    throw LayerImportFailure("has a mean image of \(mean.count) values; a \(w)×\(h) \(cs.rawValue) image needs \(c * h * w)")
                }
                let plane = h * w
                let perChannel = (0..<c).map { ci in mean[(ci * plane)..<((ci + 1) * plane)] }
                if perChannel.allSatisfy({ p in p.allSatisfy { $0 == p.first! } }) {
                    let bias = perChannel.map { -$0.first! }
                    feature.bias = bias
                    b.blobs[f.name] = try preprocessingNode(f.name, scale: 1, bias: bias, builder: b)
                } else {
                    let neg = mean.map { -$0 }
                    let k = try b.constantTensor(neg, c: c, h: h, w: w, anchor: f.name, base: Graph.preprocessingNodeName(for: f.name))
                    b.blobs[f.name] = try b.emit(Graph.preprocessingNodeName(for: f.name), .elementwise(.add), [f.name, k])
                    description.metadata.userDefined["mlconv.meanImage.\(f.name)"] =
                        "the mean image (\(c)×\(h)×\(w)) is subtracted in the graph by node \(Graph.preprocessingNodeName(for: f.name))"
                }
            case nil: break
            }
            description.inputs.append(FeatureDescription(name: f.name, shortDescription: f.shortDescription, image: feature))
        default:
            throw LayerImportFailure("is of type \(typeName(kind)); neural network inputs must be multi-arrays or images")
        }
    }

    /// Emits `<input>__preprocessing`: y = scale·x + bias[c] as a batchNorm on axis 3.
    static func preprocessingNode(_ input: String, scale: Float, bias: [Float], builder b: ImportBuilder) throws -> String {
        let c = bias.count
        let name = Graph.preprocessingNodeName(for: input)
        return try b.emit(name, .batchNorm(BatchNormAttributes(axis: 3, epsilon: 0)), [input], output: name, weights: [
            "mean": ConstantTensor(shape: [c], floats: [Float](repeating: 0, count: c)),
            "variance": ConstantTensor(shape: [c], floats: [Float](repeating: 1, count: c)),
            "gamma": ConstantTensor(shape: [c], floats: [Float](repeating: scale, count: c)),
            "beta": ConstantTensor(shape: [c], floats: bias),
        ])
    }

    // MARK: - Outputs

    /// Wires output `f` to its blob; returns the IR output tensor name, or nil for outputs that
    /// are not tensors (the class label).
    static func importOutput(_ f: Spec.FeatureDescription, classifier: Spec.NeuralNetworkClassifier?, probabilitiesName: String?,
                             desc: Spec.ModelDescription, layers: [Spec.NeuralNetworkLayer], builder b: ImportBuilder,
                             description: inout ModelDescription) throws -> String? {
        guard let kind = f.type?.kind else { throw LayerImportFailure("has no type") }
        if classifier != nil, f.name == desc.predictedFeatureName || (desc.predictedFeatureName.isEmpty && isLabelType(kind)) {
            if isLabelType(kind) {
                description.metadata.userDefined["mlconv.classLabelOutput"] = f.name
                return nil
            }
        }
        if b.exact {  // Layers/ExactMapping.swift
            switch kind {
            case let .multiArray(a):
                return try exactOutput(f, a, builder: b, description: &description)
            case .image:
                b.blobs[f.name] = try b.legacyView(try b.blob(f.name), base: f.name + "__image").tensor
            case .dictionary:
                if let c = classifier, f.name == probabilitiesName {
                    try exactProbabilities(f.name, classifier: c, layers: layers, builder: b)
                }
            default: break
            }
        }
        switch kind {
        case let .multiArray(a):
            let t = try b.blob(f.name)
            let s = a.shape.map(Int.init)
            let d = b.chw(t)
            let wantVector: Bool
            switch s.count {
            case 1: wantVector = true
            case 0: wantVector = d.h == 1 && d.w == 1
            default: wantVector = false
            }
            let expected = s.count == 1 ? [s[0], 1, 1] : s.count >= 3 ? Array(s.suffix(3)) : []
            if !expected.isEmpty, expected != [d.c, d.h, d.w] {
                throw LayerImportFailure("is declared with shape \(s) but its blob has [C, H, W] = [\(d.c), \(d.h), \(d.w)]")
            }
            let out: String
            if wantVector {
                out = try finalTensor(f.name, builder: b) { src in try b.toVector(src, base: f.name + "__out") }
            } else {
                out = try finalTensor(f.name, builder: b) { src in
                    let nhwc = try b.toNHWC(src, base: f.name + "__out")
                    return try b.emit(f.name + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [nhwc], output: f.name)
                }
            }
            description.outputs.append(FeatureDescription(name: out, shortDescription: f.shortDescription))
            return out
        case let .image(img):
            let t = try b.blob(f.name)
            let d = b.chw(t)
            let cs: ImageColorSpace = img.colorSpace == .bgr ? .bgr : img.colorSpace == .rgb ? .rgb : .grayscale
            let c = cs == .grayscale ? 1 : 3
            guard d.c == c, d.h == Int(img.height), d.w == Int(img.width) else {
                throw LayerImportFailure("is a \(img.width)×\(img.height) \(cs.rawValue) image but its blob has [C, H, W] = [\(d.c), \(d.h), \(d.w)]")
            }
            let out = try finalTensor(f.name, builder: b) { src in try b.toNHWC(src, base: f.name + "__out") }
            description.outputs.append(FeatureDescription(name: out, shortDescription: f.shortDescription,
                                                          image: ImageFeature(width: d.w, height: d.h, colorSpace: cs)))
            return out
        case .dictionary:
            guard let c = classifier, f.name == probabilitiesName else {
                throw LayerImportFailure("is a dictionary but not the probabilities output of a classifier")
            }
            var source = b.blobs[f.name]
            if source == nil, !c.labelProbabilityLayerName.isEmpty,
               let l = layers.first(where: { $0.name == c.labelProbabilityLayerName }), let o = l.output.first {
                source = b.blobs[o]
            }
            if source == nil, let o = layers.last?.output.first { source = b.blobs[o] }
            guard let src = source else { throw LayerImportFailure("no layer produces the class probabilities") }
            let n: Int? = {
                switch c.classLabels {
                case let .strings(s)?: return s.count
                case let .int64s(v)?: return v.count
                case nil: return nil
                }
            }()
            let d = b.chw(src)
            if let n, d.c * d.h * d.w != n {
                throw LayerImportFailure("the probabilities blob has [C, H, W] = [\(d.c), \(d.h), \(d.w)] but there are \(n) class labels")
            }
            b.blobs[f.name] = src
            let out = try finalTensor(f.name, builder: b) { s in try b.toVector(s, base: f.name + "__out") }
            description.outputs.append(FeatureDescription(name: out, shortDescription: f.shortDescription))
            return out
        default:
            throw LayerImportFailure("is of type \(typeName(kind)); neural network outputs must be multi-arrays or images "
                + "(or, for classifiers, the label and the probability dictionary)")
        }
    }

    /// Makes the graph output tensor be named `name`: `convert` maps the blob's tensor to the
    /// output layout (emitting nodes, or returning its argument when nothing is needed); the
    /// final tensor is then renamed to `name` (a tensor already holding that name is renamed to
    /// `<name>__ir` first). A graph input passed straight through gets an identity node.
    static func finalTensor(_ name: String, builder b: ImportBuilder, _ convert: (String) throws -> String) throws -> String {
        if b.types[name] != nil, !b.inputs.contains(where: { $0.name == name }) {
            b.renameTensor(name, to: b.freshTensorName(name + "__ir"))
        }
        let src = try b.blob(name)
        let converted = try convert(src)
        if converted == name { return name }
        if b.inputs.contains(where: { $0.name == converted }) {
            return try b.emit(name + "__output", .identity, [converted], output: name)
        }
        b.renameTensor(converted, to: name)
        return name
    }

    static func isLabelType(_ k: Spec.FeatureType.Kind) -> Bool {
        switch k {
        case .string, .int64: return true
        default: return false
        }
    }

    static func typeName(_ k: Spec.FeatureType.Kind) -> String {
        switch k {
        case .none: return "none"
        case .int64: return "int64"
        case .double: return "double"
        case .string: return "string"
        case .image: return "image"
        case .multiArray: return "multiArray"
        case .dictionary: return "dictionary"
        case .sequence: return "sequence"
        case .state: return "state"
        }
    }
}
