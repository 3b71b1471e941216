// IR → Core ML `.mlmodel` writer: model kind, description, preprocessing, spec version.
// Layer lowering is in CoreMLExporter+Layers.swift, weights in CoreMLExporter+Weights.swift,
// the layer/version table in CoreMLExporter+Table.swift.
import MLGraph

/// Writes an MLGraph `Graph` as a Core ML neural network (`Spec.Model`), the way coremltools'
/// Keras converter does (classic rank-5 layers, `RANK5_ARRAY_MAPPING`), choosing the lowest
/// `specificationVersion` the model's features need.
///
/// Layout: IR activations are channels-last with batch first; Core ML classic layers see rank-5
/// blobs [Seq, Batch, C, H, W]. The writer maps IR rank 4 [N, H, W, C] → [C, H, W], rank 2
/// [N, D] → [D, 1, 1], and rank 3 [N, S, D] → [D, S, 1] (the steps on the H axis, so dense,
/// padding, cropping, repeat and reshape work as on images; the Keras converter's sequence axis
/// is only needed by recurrent and embedding layers, which permute their sequence onto Seq and
/// back: see RecurrentExport.swift). Seq stays 1 elsewhere. The batch
/// dimension is Core ML's runtime batch and is not written. Multi-array features are declared
/// [C, H, W] (ranks 3 and 4) or [D] (rank 2); an input [1, C, H, W] that CoreMLImporter made
/// (read only through a transpose to NHWC) is declared [C, H, W] again, and so is an output made
/// by a transpose NHWC → NCHW.
///
/// Image inputs (`FeatureDescription.image`) become `imageType` inputs, and their
/// `<input>__preprocessing` batchNorm node (`Graph.markImageInput`) is folded into a
/// `NeuralNetworkImageScaler` (the identity scaler when there is none, as coremltools writes).
/// Graphs with `ModelDescription.classLabels` become
/// `neuralNetworkClassifier`s with `stringClassLabels`, a dictionary probabilities output and a
/// string `classLabel` output, as `NeuralNetworkBuilder.set_class_labels` writes them.
///
/// Every IR construct the writer cannot express is collected and reported at once in a
/// `CoreMLExportError`; see `layerTable` for what is supported and from which spec version.
public enum CoreMLExporter {
    /// Converts `graph` to a Core ML model. See `export(_:options:)`.
    /// - Throws: `CoreMLExportError` listing every node that cannot be written;
    ///   `GraphError` when the graph itself is inconsistent (shape inference fails).
    public static func model(from graph: Graph, options: CoreMLExportOptions = CoreMLExportOptions()) throws -> Spec.Model {
        try export(graph, options: options).model
    }

    /// Converts `graph` to a Core ML model and reports why its specification version was chosen.
    ///
    /// The version is the largest of 1 (base), 2 (fp16 weights, custom layers), 3 (quantized
    /// weights, `resizeBilinear`) and `options.minimumSpecificationVersion`; see
    /// `CoreMLExportResult.versionReasons`.
    /// - Throws: `CoreMLExportError` listing every node that cannot be written;
    ///   `GraphError` when the graph itself is inconsistent (shape inference fails).
    public static func export(_ graph: Graph, options: CoreMLExportOptions = CoreMLExportOptions()) throws -> CoreMLExportResult {
        var writer = try ExportWriter(graph: graph, options: options)
        return try writer.run()
    }
}

/// The mutable state of one export. Internal.
struct ExportWriter {
    let options: CoreMLExportOptions
    let graph: Graph
    /// Inferred type of every IR tensor.
    let types: [String: TensorType]
    var layers: [Spec.NeuralNetworkLayer] = []
    var problems: [CoreMLExportError.Problem] = []
    /// Features needing a spec above 1, in first-use order, with the nodes using them.
    var features: [(version: Int32, feature: String, nodes: [String])] = []
    var notes: [String] = []
    /// IR tensor name → Core ML blob name.
    var blobOf: [String: String] = [:]
    /// Every name in use as a blob (IR tensors, renamed features, writer-made intermediates).
    var usedBlobs: Set<String> = []
    var usedLayerNames: Set<String> = []
    var preprocessing: [Spec.NeuralNetworkPreprocessing] = []
    /// Nodes folded away (image preprocessing, layout transposes of features).
    var folded: Set<String> = []
    /// Core ML [C, H, W] of inputs / outputs whose NCHW ↔ NHWC transpose was folded.
    var nchwFeatures: [String: [Int64]] = [:]
    /// Recurrent-state features added by the recurrent layers (RecurrentExport.swift).
    var recurrentState = RecurrentStateFeatures()

    init(graph: Graph, options: CoreMLExportOptions) throws {
        var g = graph
        try g.inferShapes()
        self.graph = g
        self.types = g.tensorTypes
        self.options = options
        for (t, _) in types { usedBlobs.insert(t) }
        for n in g.nodes { usedLayerNames.insert(n.name) }
    }

    // MARK: - Bookkeeping

    /// Core ML blob name of IR tensor `t`.
    func blob(_ t: String) -> String { blobOf[t] ?? t }

    /// A fresh blob name based on `base`, distinct from every IR tensor and earlier blob.
    mutating func tempBlob(_ base: String) -> String {
        var name = base, i = 1
        while usedBlobs.contains(name) { name = "\(base)_\(i)"; i += 1 }
        usedBlobs.insert(name)
        return name
    }

    /// A fresh layer name based on `base` (IR node names are reserved for their own node).
    mutating func freshLayerName(_ base: String) -> String {
        var name = base, i = 1
        while usedLayerNames.contains(name) { name = "\(base)_\(i)"; i += 1 }
        usedLayerNames.insert(name)
        return name
    }

    mutating func emit(_ name: String, _ inputs: [String], _ outputs: [String], _ layer: Spec.NeuralNetworkLayer.Layer) {
        layers.append(Spec.NeuralNetworkLayer(name: name, input: inputs, output: outputs, layer: layer))
    }

    /// Records that node `node` needs spec `version` for `feature` (only versions above 1 are kept).
    mutating func need(_ version: Int32, _ feature: String, node: String) {
        guard version > 1 else { return }
        if let i = features.firstIndex(where: { $0.version == version && $0.feature == feature }) {
            if !features[i].nodes.contains(node) { features[i].nodes.append(node) }
        } else {
            features.append((version, feature, [node]))
        }
    }

    /// One reason per feature: "fp16 weights (node 'conv1')" or "fp16 weights (27 nodes: 'a', 'b', 'c', …)".
    var reasons: [CoreMLSpecVersionReason] {
        features.map { f in
            let names = f.nodes.prefix(3).map { "'\($0)'" }.joined(separator: ", ") + (f.nodes.count > 3 ? ", …" : "")
            let nodes = f.nodes.count == 1 ? "node \(names)" : "\(f.nodes.count) nodes: \(names)"
            return CoreMLSpecVersionReason(version: f.version, reason: "\(f.feature) (\(nodes))")
        }
    }

    mutating func fail(_ node: String, _ op: String, _ reason: String, _ suggestion: String) {
        problems.append(.init(node: node, op: op, reason: reason, suggestion: suggestion))
    }

    mutating func fail(_ node: Node, _ reason: String, _ suggestion: String) {
        fail(node.name, node.op.name, reason, suggestion)
    }

    // MARK: - Run

    mutating func run() throws -> CoreMLExportResult {
        assignFeatureNames()
        foldLayoutTransposes()
        foldImagePreprocessing()
        for node in graph.nodes where !folded.contains(node.name) {
            lower(node)
        }
        var (description, classLabels, probabilitiesBlob) = makeDescription()
        appendRecurrentStateFeatures(to: &description)
        var network = Spec.NeuralNetwork(layers: layers, preprocessing: preprocessing)
        network.arrayInputShapeMapping = .rank5
        network.imageInputShapeMapping = .rank5
        if layers.isEmpty, problems.isEmpty {
            fail("<graph>", "graph", "the graph has no nodes to write (Core ML neural networks need at least one layer)",
                 "Add an identity node between the input and the output.")
        }
        if !problems.isEmpty { throw CoreMLExportError(problems: problems) }

        var version: Int32 = features.map(\.version).max() ?? 1
        var versionReasons = reasons
        if let minimum = options.minimumSpecificationVersion, minimum > version {
            versionReasons.append(CoreMLSpecVersionReason(version: minimum, reason: "requested by CoreMLExportOptions.minimumSpecificationVersion"))
            version = minimum
        }
        let type: Spec.ModelType
        if let labels = classLabels {
            type = .neuralNetworkClassifier(Spec.NeuralNetworkClassifier(
                network: network, classLabels: .strings(labels), labelProbabilityLayerName: probabilitiesBlob ?? ""))
        } else {
            type = .neuralNetwork(network)
        }
        let model = Spec.Model(specificationVersion: version, description: description, type: type)
        return CoreMLExportResult(model: model, versionReasons: versionReasons, notes: notes)
    }

    // MARK: - Names

    /// Applies `inputNames` / `outputNames` and checks the new names are free.
    mutating func assignFeatureNames() {
        var renamed: [(String, String, String)] = []  // (IR name, new name, "input"/"output")
        for i in graph.inputs { if let n = options.inputNames[i.name], n != i.name { renamed.append((i.name, n, "input")) } }
        for o in graph.outputs { if let n = options.outputNames[o], n != o { renamed.append((o, n, "output")) } }
        for key in options.inputNames.keys where !graph.inputs.contains(where: { $0.name == key }) {
            fail(key, "input", "CoreMLExportOptions.inputNames renames '\(key)', which is not a graph input",
                 "The graph inputs are: \(graph.inputs.map(\.name).joined(separator: ", ")).")
        }
        for key in options.outputNames.keys where !graph.outputs.contains(key) {
            fail(key, "output", "CoreMLExportOptions.outputNames renames '\(key)', which is not a graph output",
                 "The graph outputs are: \(graph.outputs.joined(separator: ", ")).")
        }
        var taken = Set(types.keys)
        for (old, _, _) in renamed { taken.remove(old) }
        for (old, new, what) in renamed {
            if new.isEmpty || taken.contains(new) {
                fail(old, what, "cannot rename \(what) '\(old)' to '\(new)': " + (new.isEmpty ? "the name is empty" : "another tensor already has that name"),
                     "Choose a name that no tensor of the graph uses.")
                continue
            }
            taken.insert(new)
            blobOf[old] = new
            usedBlobs.insert(new)
        }
        for o in graph.outputs where graph.inputs.contains(where: { $0.name == o }) {
            fail(o, "output", "graph output '\(o)' is a graph input; Core ML outputs must be produced by a layer",
                 "Insert an identity node that copies the input to a new output tensor.")
        }
    }

    // MARK: - Layout transposes of features

    /// Folds CoreMLImporter's layout convention back into the features: an input [1, C, H, W]
    /// read only by transposes (0, 2, 3, 1) to NHWC is declared [C, H, W]; an output made by a
    /// transpose (0, 3, 1, 2) of an NHWC tensor is declared [C, H, W] and takes that tensor's
    /// blob. Imported models thus export to the same classic layout they came from.
    mutating func foldLayoutTransposes() {
        var consumers: [String: [Node]] = [:]
        for n in graph.nodes { for i in n.inputs { consumers[i, default: []].append(n) } }
        let outputs = Set(graph.outputs)
        for input in graph.inputs where input.type.rank == 4 {
            let users = consumers[input.name] ?? []
            guard !users.isEmpty, !outputs.contains(input.name), graph.description.inputs.first(where: { $0.name == input.name })?.image == nil,
                  users.allSatisfy({ $0.op == .transpose(perm: [0, 2, 3, 1]) && $0.inputs.count == 1 && !outputs.contains($0.outputs[0]) })
            else { continue }
            for u in users {
                folded.insert(u.name)
                blobOf[u.outputs[0]] = blob(input.name)
            }
            nchwFeatures[input.name] = input.type.shape.dropFirst().map(Int64.init)
            notes.append("input '\(input.name)' \(formatShape(input.type.shape)) is NCHW: declared [C, H, W] and its transpose to NHWC folded")
        }
        let inputNames = Set(graph.inputs.map(\.name))
        var claimed = Set<String>()
        for o in graph.outputs {
            guard let n = graph.producer(of: o), n.op == .transpose(perm: [0, 3, 1, 2]), n.inputs.count == 1,
                  (consumers[o] ?? []).isEmpty, graph.description.outputs.first(where: { $0.name == o })?.image == nil,
                  let t = types[o], t.rank == 4 else { continue }
            let src = n.inputs[0]
            guard !inputNames.contains(src), !outputs.contains(src), !claimed.contains(src), blobOf[src] == nil,
                  graph.producer(of: src).map({ !folded.contains($0.name) }) ?? false else { continue }
            claimed.insert(src)
            folded.insert(n.name)
            blobOf[src] = blob(o)
            nchwFeatures[o] = t.shape.dropFirst().map(Int64.init)
            notes.append("output '\(o)' \(formatShape(t.shape)) is NCHW: declared [C, H, W] and its transpose from NHWC folded")
        }
    }

    // MARK: - Image preprocessing

    /// Folds each image input's `<input>__preprocessing` batchNorm into a
    /// `NeuralNetworkImageScaler`. Image inputs without one get the identity scaler
    /// (channelScale 1), as `NeuralNetworkBuilder.set_pre_processing_parameters` writes it.
    mutating func foldImagePreprocessing() {
        for feature in graph.description.inputs {
            guard let image = feature.image, graph.inputs.contains(where: { $0.name == feature.name }) else { continue }
            let nodeName = Graph.preprocessingNodeName(for: feature.name)
            let identity = Spec.NeuralNetworkPreprocessing(featureName: blob(feature.name), preprocessor: .scaler(Spec.ImageScaler(channelScale: 1)))
            guard let node = graph.nodes.first(where: { $0.name == nodeName }),
                  case let .batchNorm(attr) = node.op, node.inputs == [feature.name], node.outputs.count == 1,
                  !graph.outputs.contains(node.outputs[0]),
                  let mean = node.weights["mean"]?.floats(), let variance = node.weights["variance"]?.floats()
            else {
                preprocessing.append(identity)
                continue
            }
            let c = mean.count
            let gamma = node.weights["gamma"]?.floats() ?? [Float](repeating: 1, count: c)
            let beta = node.weights["beta"]?.floats() ?? [Float](repeating: 0, count: c)
            var scale = [Float](repeating: 1, count: c), bias = [Float](repeating: 0, count: c)
            for i in 0..<c {
                scale[i] = gamma[i] / (variance[i] + attr.epsilon).squareRoot()
                bias[i] = beta[i] - mean[i] * scale[i]
            }
            guard let s0 = scale.first, scale.allSatisfy({ abs($0 - s0) <= 1e-6 * max(1, abs(s0)) }) else {
                notes.append("image input '\(feature.name)': preprocessing node '\(nodeName)' has per-channel scales \(scale); "
                    + "kept as a batchnorm layer (NeuralNetworkImageScaler has one scale)")
                preprocessing.append(identity)
                continue
            }
            var scaler = Spec.ImageScaler(channelScale: s0)
            switch image.colorSpace {
            case .rgb: scaler.redBias = bias[0]; scaler.greenBias = bias[1]; scaler.blueBias = bias[2]
            case .bgr: scaler.blueBias = bias[0]; scaler.greenBias = bias[1]; scaler.redBias = bias[2]
            case .grayscale: scaler.grayBias = bias[0]
            }
            preprocessing.append(Spec.NeuralNetworkPreprocessing(featureName: blob(feature.name), preprocessor: .scaler(scaler)))
            folded.insert(node.name)
            blobOf[node.outputs[0]] = blob(feature.name)
            notes.append("image input '\(feature.name)': preprocessing node '\(nodeName)' folded into NeuralNetworkImageScaler "
                + "(scale \(s0), bias \(bias))")
        }
    }

    // MARK: - Description

    /// The Core ML shape of a multi-array feature for IR type `t`, or nil.
    func featureShape(_ t: TensorType, isInput: Bool) -> [Int64]? {
        if t.rank == 2 { return [Int64(t.shape[1])] }
        return ExportWriter.chw(t.shape).map { $0.map(Int64.init) }
    }

    func arrayType(_ shape: [Int64]) -> Spec.FeatureType {
        Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(
            shape: shape, dataType: options.arrayDataType == .double ? .double : .float32)))
    }

    static func colorSpace(_ c: ImageColorSpace) -> Spec.ImageFeatureType.ColorSpace {
        switch c {
        case .rgb: return .rgb
        case .bgr: return .bgr
        case .grayscale: return .grayscale
        }
    }

    /// Builds the model description; returns it, the class labels (classifier) and the
    /// probabilities blob.
    mutating func makeDescription() -> (Spec.ModelDescription, [String]?, String?) {
        let d = graph.description
        var inputs: [Spec.FeatureDescription] = []
        for i in graph.inputs {
            let fd = d.inputs.first { $0.name == i.name }
            let type: Spec.FeatureType
            if let image = fd?.image {
                type = Spec.FeatureType(.image(Spec.ImageFeatureType(
                    width: Int64(image.width), height: Int64(image.height), colorSpace: Self.colorSpace(image.colorSpace))))
            } else if i.type.elementType != .float32 && i.type.elementType != .float16 {
                fail(i.name, "input", "input '\(i.name)' has element type \(i.type.elementType); the writer supports float inputs only",
                     "Feed the model float values.")
                continue
            } else if let shape = nchwFeatures[i.name] ?? featureShape(i.type, isInput: true) {
                type = arrayType(shape)
            } else {
                fail(i.name, "input", "input '\(i.name)' has shape \(formatShape(i.type.shape)); classic Core ML neural networks "
                    + "take multi-array inputs of rank 1 ([D], from IR [N, D]) or rank 3 ([C, H, W], from IR [N, H, W, C] or [N, S, D] as [D, S, 1])",
                     "Reshape the input to (N, D), (N, S, D) or (N, H, W, C).")
                continue
            }
            // MARK: flexible shapes (FlexibleShapeExport.swift)
            var flexible = type
            if let flex = fd?.shapeFlexibility { applyFlexibility(flex, input: i, to: &flexible) }
            inputs.append(Spec.FeatureDescription(name: blob(i.name), shortDescription: fd?.shortDescription ?? "", type: flexible))
        }

        var labels: [String]? = nil
        var probabilities: String? = nil
        if let l = d.classLabels, !l.isEmpty {
            let p = d.probabilitiesOutput ?? graph.outputs.first ?? ""
            if !graph.outputs.contains(p) {
                fail(p, "output", "the class probabilities output '\(p)' (ModelDescription.probabilitiesOutput) is not a graph output",
                     "Set probabilitiesOutput to one of: \(graph.outputs.joined(separator: ", ")).")
            } else if let t = types[p], t.elementCount / max(1, t.shape[0]) != l.count || !(t.rank == 2 || (t.rank == 4 && t.shape[1] == 1 && t.shape[2] == 1)) {
                fail(p, "output", "the class probabilities output '\(p)' has shape \(formatShape(t.shape)) but there are \(l.count) class labels",
                     "The probabilities output must be (1, \(l.count)) (or (1, 1, 1, \(l.count))), one value per label.")
            } else {
                labels = l
                probabilities = blob(p)
            }
            if graph.outputs.contains(where: { blob($0) == options.predictedFeatureName }) || graph.inputs.contains(where: { blob($0.name) == options.predictedFeatureName }) {
                fail(options.predictedFeatureName, "output", "the predicted-label output name '\(options.predictedFeatureName)' is already a feature of the graph",
                     "Set CoreMLExportOptions.predictedFeatureName to another name.")
            }
        }

        var outputs: [Spec.FeatureDescription] = []
        for o in graph.outputs {
            guard let t = types[o] else { continue }
            let fd = d.outputs.first { $0.name == o }
            let type: Spec.FeatureType
            if labels != nil, blob(o) == probabilities {
                type = Spec.FeatureType(.dictionary(Spec.DictionaryFeatureType(keyType: .string)))
            } else if let image = fd?.image {
                type = Spec.FeatureType(.image(Spec.ImageFeatureType(
                    width: Int64(image.width), height: Int64(image.height), colorSpace: Self.colorSpace(image.colorSpace))))
            } else if let shape = nchwFeatures[o] ?? featureShape(t, isInput: false) {
                type = arrayType(shape)
            } else {
                fail(o, "output", "output '\(o)' has shape \(formatShape(t.shape)); the writer maps ranks 2, 3 and 4 only",
                     "Reshape the output to (N, D) or (N, H, W, C).")
                continue
            }
            outputs.append(Spec.FeatureDescription(name: blob(o), shortDescription: fd?.shortDescription ?? "", type: type))
        }
        if labels != nil {
            outputs.append(Spec.FeatureDescription(name: options.predictedFeatureName, shortDescription: "Most likely class label",
                                                   type: Spec.FeatureType(.string)))
        }

        var metadata = Spec.Metadata(shortDescription: d.metadata.shortDescription, versionString: d.metadata.versionString,
                                     author: d.metadata.author, license: d.metadata.license)
        var user = d.metadata.userDefined
        if let tag = options.converterTag { user["mlconv.converter"] = tag }
        metadata.userDefined = user.keys.sorted().map { Spec.StringPair(key: $0, value: user[$0]!) }

        let description = Spec.ModelDescription(
            input: inputs, output: outputs,
            predictedFeatureName: labels == nil ? "" : options.predictedFeatureName,
            predictedProbabilitiesName: labels == nil ? "" : (probabilities ?? ""),
            metadata: metadata)
        return (description, labels, probabilities)
    }
}
