/// Image preprocessing in the graph: Core ML applies y = scale·pixel + bias[channel] to an image
/// input before the network (`NeuralNetworkImageScaler`). The IR keeps that math in the graph as
/// one node right after the input, named `<input>__preprocessing`: a batchNorm on axis 3 with
/// mean 0, variance 1, epsilon 0, gamma = scale per channel and beta = bias per channel, and records
/// the same numbers in the input's `FeatureDescription.image`. Frontends insert it; the `.mlmodel`
/// writer folds it back into the scaler.
extension Graph {
    /// Name of the preprocessing node (and its output tensor) for image input `input`.
    public static func preprocessingNodeName(for input: String) -> String { input + "__preprocessing" }

    /// Marks input `name` as an image and inserts its preprocessing node.
    ///
    /// The input must be rank 4 NHWC with 3 channels (RGB/BGR) or 1 (grayscale), and `feature`'s
    /// width/height must match. `feature.bias` is empty (zeros) or has one value per channel.
    /// - Throws: `GraphError.invalidTopology` when the input does not exist or does not fit.
    public mutating func markImageInput(_ name: String, feature: ImageFeature) throws {
        guard let idx = inputs.firstIndex(where: { $0.name == name }) else {
            throw GraphError.invalidTopology("no input named '\(name)'; the inputs are: \(inputs.map(\.name).joined(separator: ", "))")
        }
        let shape = inputs[idx].type.shape
        let channels = feature.colorSpace == .grayscale ? 1 : 3
        guard shape.count == 4, shape[3] == channels, shape[1] == feature.height, shape[2] == feature.width else {
            throw GraphError.invalidTopology(
                "input '\(name)' has shape \(formatShape(shape)); an \(feature.colorSpace.rawValue) image input needs (1, \(feature.height), \(feature.width), \(channels))")
        }
        guard feature.bias.isEmpty || feature.bias.count == channels else {
            throw GraphError.invalidTopology("image input '\(name)' has \(channels) channel(s) but \(feature.bias.count) biases")
        }
        let node = Graph.preprocessingNodeName(for: name)
        if producer(of: node) == nil, !(feature.scale == 1 && feature.bias.allSatisfy { $0 == 0 }) {
            let bias = feature.bias.isEmpty ? [Float](repeating: 0, count: channels) : feature.bias
            for i in nodes.indices {
                nodes[i].inputs = nodes[i].inputs.map { $0 == name ? node : $0 }
            }
            nodes.insert(Node(name: node, op: .batchNorm(BatchNormAttributes(axis: 3, epsilon: 0)), inputs: [name], outputs: [node],
                              weights: ["mean": ConstantTensor(shape: [channels], floats: [Float](repeating: 0, count: channels)),
                                        "variance": ConstantTensor(shape: [channels], floats: [Float](repeating: 1, count: channels)),
                                        "gamma": ConstantTensor(shape: [channels], floats: [Float](repeating: feature.scale, count: channels)),
                                        "beta": ConstantTensor(shape: [channels], floats: bias)]),
                         at: 0)
            tensorTypes[node] = inputs[idx].type
        }
        if let d = description.inputs.firstIndex(where: { $0.name == name }) {
            description.inputs[d].image = feature
        } else {
            description.inputs.append(FeatureDescription(name: name, image: feature))
        }
    }

    /// Marks output `name` as an image (Core ML imageType output; `predict` writes it as a PNG).
    /// - Throws: `GraphError.invalidTopology` when the output is not [1, H, W, 1 or 3].
    public mutating func markImageOutput(_ name: String, colorSpace: ImageColorSpace? = nil) throws {
        guard outputs.contains(name), let t = tensorTypes[name] else {
            throw GraphError.invalidTopology("no output named '\(name)'; the outputs are: \(outputs.joined(separator: ", "))")
        }
        guard t.rank == 4, t.shape[0] == 1, t.shape[3] == 1 || t.shape[3] == 3 else {
            throw GraphError.invalidTopology("output '\(name)' has shape \(formatShape(t.shape)); an image output needs (1, H, W, 1 or 3)")
        }
        let cs = colorSpace ?? (t.shape[3] == 1 ? .grayscale : .rgb)
        guard (cs == .grayscale) == (t.shape[3] == 1) else {
            throw GraphError.invalidTopology("output '\(name)' has \(t.shape[3]) channel(s), which does not fit colour space \(cs.rawValue)")
        }
        let feature = ImageFeature(width: t.shape[2], height: t.shape[1], colorSpace: cs)
        if let d = description.outputs.firstIndex(where: { $0.name == name }) {
            description.outputs[d].image = feature
        } else {
            description.outputs.append(FeatureDescription(name: name, image: feature))
        }
    }
}
