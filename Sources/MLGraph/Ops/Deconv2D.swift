/// `Op.deconv2d` (transposed convolution, Keras `Conv2DTranspose`). Input x [N, H, W, Cin].
/// Weights: "weight" [Cin, Cout/groups, kH, kW] (per Core ML NeuralNetwork.proto, deconvolution
/// weights; Keras kernels (kH, kW, Cout, Cin) are transposed (3,2,0,1)), optional "bias" [Cout].
/// Output size per spatial axis: full = (in−1)·stride + (k−1)·dilation + 1 + outputPadding;
/// `.valid` keeps `full`; `.same` gives in·stride + outputPadding, cropping total = full − that,
/// top/left = total/2 (TF conv2d_transpose); `.explicit` crops the given pixels from `full`.
public struct Deconv2DAttributes: Codable, Hashable, Sendable {
    public var kernel: [Int]
    public var strides: [Int]
    public var dilations: [Int]
    public var padding: PaddingMode
    public var outputPadding: [Int]  // [h, w], 0 unless Keras output_padding is set
    public var groups: Int
    public var outputChannels: Int
    public var activation: Activation?

    public init(kernel: [Int], strides: [Int], dilations: [Int] = [1, 1], padding: PaddingMode,
                outputPadding: [Int] = [0, 0], groups: Int = 1, outputChannels: Int, activation: Activation? = nil) {
        self.kernel = kernel; self.strides = strides; self.dilations = dilations; self.padding = padding
        self.outputPadding = outputPadding; self.groups = groups; self.outputChannels = outputChannels
        self.activation = activation
    }
}

/// Full (uncropped) and final output size of a transposed convolution along spatial `axis` (0 = H).
public func deconvOutputSize(_ input: Int, axis: Int, _ a: Deconv2DAttributes) -> Int {
    let full = (input - 1) * a.strides[axis] + (a.kernel[axis] - 1) * a.dilations[axis] + 1 + a.outputPadding[axis]
    switch a.padding {
    case .valid: return full
    case .same: return input * a.strides[axis] + a.outputPadding[axis]
    case let .explicit(t, b, l, r): return full - (axis == 0 ? t + b : l + r)
    }
}

/// Definition of `Op.deconv2d`: transposed 2-D convolution, NHWC. MIL `conv_transpose`,
/// ONNX `ConvTranspose`, Core ML `convolution` with `isDeconvolution`.
enum Deconv2DDefinition: OpDefinition {
    static let kind = OpKind.deconv2d
    static let summary = "transposed 2-D convolution (output padding, groups, fused activation), NHWC"
    static let milOps = ["conv_transpose"]
    static let onnxOps = ["ConvTranspose"]

    static func checkAttributes(of node: Node) throws {
        guard case let .deconv2d(a) = node.op else { return }
        try node.checkPair(a.kernel, "kernel"); try node.checkPair(a.strides, "strides"); try node.checkPair(a.dilations, "dilations")
        try node.checkPair(a.outputPadding, "outputPadding", min: 0); try node.checkPadding(a.padding)
        try node.checkCount(a.outputChannels, "outputChannels"); try node.checkCount(a.groups, "groups")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .deconv2d(a) = op else { return [:] }
        return ["kernel": .ints(a.kernel), "strides": .ints(a.strides), "dilations": .ints(a.dilations),
                "padding": a.padding.attributeValue, "outputPadding": .ints(a.outputPadding), "groups": .int(a.groups),
                "outputChannels": .int(a.outputChannels), "activation": a.activation.attributeValue]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .deconv2d(Deconv2DAttributes(kernel: try a.ints("kernel"), strides: try a.ints("strides"), dilations: try a.ints("dilations"),
                                     padding: try PaddingMode(attribute: "padding", of: a), outputPadding: try a.ints("outputPadding"),
                                     groups: try a.int("groups"), outputChannels: try a.int("outputChannels"),
                                     activation: try Activation(optionalAttribute: "activation", of: a)))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .deconv2d(a) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape, cin = s[3]
        guard cin % a.groups == 0, a.outputChannels % a.groups == 0 else {
            throw node.fail("groups \(a.groups) must divide input channels \(cin) and output channels \(a.outputChannels)")
        }
        try node.expectWeight("weight", shape: [cin, a.outputChannels / a.groups, a.kernel[0], a.kernel[1]])
        try node.expectWeight("bias", shape: [a.outputChannels], optional: true)
        let hw = (0..<2).map { i -> Int in deconvOutputSize(s[1 + i], axis: i, a) }
        guard hw.allSatisfy({ $0 > 0 }) else { throw node.fail("output size \(hw) is not positive") }
        return [TensorType([s[0], hw[0], hw[1], a.outputChannels], ins[0].elementType)]
    }

    /// Core ML deconvolution weights are [Cin, Cout/groups, kH, kW]: output channels on axis 1.
    static var weightRoles: [WeightRole] {
        [WeightRole("weight", quantizationAxis: 1), WeightRole("bias")]
    }
}
