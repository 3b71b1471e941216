/// `Op.conv2d`. Input x [N, H, W, Cin] (NHWC).
/// Weights: "weight" [Cout, Cin/groups, kH, kW] (per Core ML NeuralNetwork.proto,
/// ConvolutionLayerParams.weights; Keras HWIO kernels are transposed (3,2,0,1) by the frontend),
/// optional "bias" [Cout]. Output [N, Ho, Wo, Cout].
///
/// With `residual` set (only the `fuse_residual_add` inference pass sets it) the node has a second
/// input r of the output's type and computes y = residual.activation(activation(conv(x) + bias) + r).
public struct Conv2DAttributes: Codable, Hashable, Sendable {
    public var kernel: [Int]        // [kH, kW]
    public var strides: [Int]       // [sH, sW]
    public var dilations: [Int]     // [dH, dW]
    public var padding: PaddingMode
    public var groups: Int
    public var outputChannels: Int
    public var activation: Activation?
    // MARK: residual add fusion (issue 12)
    /// A fused residual addition (input 1), applied after `activation`; nil for a plain convolution.
    public var residual: ResidualAdd?

    public init(kernel: [Int], strides: [Int] = [1, 1], dilations: [Int] = [1, 1], padding: PaddingMode,
                groups: Int = 1, outputChannels: Int, activation: Activation? = nil, residual: ResidualAdd? = nil) {
        self.kernel = kernel; self.strides = strides; self.dilations = dilations; self.padding = padding
        self.groups = groups; self.outputChannels = outputChannels; self.activation = activation
        self.residual = residual
    }
}

// MARK: residual add fusion (issue 12)

/// The residual addition fused into a `conv2d` by the `fuse_residual_add` pass: the convolution's
/// input 1, a tensor of the output's shape and type, is added element by element after the
/// convolution's own `activation`, then `activation` here is applied:
/// y = residual.activation(conv.activation(conv(x) + bias) + r). This is the unfused graph's
/// conv → add(conv, r) → activation, in the same order and precision (float32 sums); oneDNN runs
/// it as the `sum` post-op between two eltwise chains.
public struct ResidualAdd: Codable, Hashable, Sendable {
    /// The activation after the addition (nil or identity: none).
    public var activation: Activation?

    public init(activation: Activation? = nil) { self.activation = activation }
}

/// Definition of `Op.conv2d`: 2-D convolution, NHWC. MIL `conv`, ONNX `Conv`, Core ML `convolution`.
enum Conv2DDefinition: OpDefinition {
    static let kind = OpKind.conv2d
    static let summary = "2-D convolution (groups, dilation, fused activation), NHWC"
    static let milOps = ["conv"]
    static let onnxOps = ["Conv"]

    static func checkAttributes(of node: Node) throws {
        guard case let .conv2d(a) = node.op else { return }
        try node.checkPair(a.kernel, "kernel"); try node.checkPair(a.strides, "strides"); try node.checkPair(a.dilations, "dilations")
        try node.checkPadding(a.padding)
        try node.checkCount(a.outputChannels, "outputChannels"); try node.checkCount(a.groups, "groups")
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .conv2d(a) = node.op else { return [] }
        try node.expectInputs(ins, a.residual == nil ? 1 : 2); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape, cin = s[3]
        guard cin % a.groups == 0, a.outputChannels % a.groups == 0 else {
            throw node.fail("groups \(a.groups) must divide input channels \(cin) and output channels \(a.outputChannels)")
        }
        try node.expectWeight("weight", shape: [a.outputChannels, cin / a.groups, a.kernel[0], a.kernel[1]])
        try node.expectWeight("bias", shape: [a.outputChannels], optional: true)
        let (h, w) = try node.windowOutput(s[1], s[2], a.kernel, a.strides, a.dilations, a.padding)
        let out = TensorType([s[0], h, w, a.outputChannels], ins[0].elementType)
        if a.residual != nil, ins[1] != out {
            throw node.fail("the fused residual input (input 1) must have the output's type \(out), found \(ins[1])")
        }
        return [out]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .conv2d(a) = op else { return [:] }
        var v: [String: AttributeValue] = [
            "kernel": .ints(a.kernel), "strides": .ints(a.strides), "dilations": .ints(a.dilations),
            "padding": a.padding.attributeValue, "groups": .int(a.groups), "outputChannels": .int(a.outputChannels),
            "activation": a.activation.attributeValue]
        // Only fused graphs carry the key, so unfused graphs encode as before.
        if let r = a.residual { v["residual"] = .object(["activation": r.activation.attributeValue]) }
        return v
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        let residual: ResidualAdd? = a.has("residual")
            ? ResidualAdd(activation: try Activation(optionalAttribute: "activation", of: try a.object("residual"))) : nil
        return .conv2d(Conv2DAttributes(kernel: try a.ints("kernel"), strides: try a.ints("strides"), dilations: try a.ints("dilations"),
                                        padding: try PaddingMode(attribute: "padding", of: a), groups: try a.int("groups"),
                                        outputChannels: try a.int("outputChannels"), activation: try Activation(optionalAttribute: "activation", of: a),
                                        residual: residual))
    }

    static var weightRoles: [WeightRole] { [WeightRole("weight"), WeightRole("bias")] }
}
