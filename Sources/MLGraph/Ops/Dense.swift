/// `Op.dense`. Input x [..., Cin] (any rank ≥ 2, applied to the last axis as Keras Dense).
/// Weights: "weight" [Cout, Cin] (Core ML InnerProductLayerParams; Keras kernel transposed),
/// optional "bias" [Cout]. Output [..., Cout].
public struct DenseAttributes: Codable, Hashable, Sendable {
    public var outputChannels: Int
    public var activation: Activation?
    public init(outputChannels: Int, activation: Activation? = nil) {
        self.outputChannels = outputChannels; self.activation = activation
    }
}

/// Definition of `Op.dense`: y = x·Wᵀ + b on the last axis. MIL `linear`, ONNX `Gemm`,
/// Core ML `innerProduct`.
enum DenseDefinition: OpDefinition {
    static let kind = OpKind.dense
    static let summary = "fully connected layer on the last axis (fused activation)"
    static let milOps = ["linear"]
    static let onnxOps = ["Gemm"]

    static func checkAttributes(of node: Node) throws {
        guard case let .dense(a) = node.op else { return }
        try node.checkCount(a.outputChannels, "outputChannels")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .dense(a) = op else { return [:] }
        return ["outputChannels": .int(a.outputChannels), "activation": a.activation.attributeValue]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .dense(DenseAttributes(outputChannels: try a.int("outputChannels"), activation: try Activation(optionalAttribute: "activation", of: a)))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .dense(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard let cin = ins[0].shape.last, ins[0].rank >= 2 else {
            throw node.fail("expects rank ≥ 2 input, found \(formatShape(ins[0].shape))")
        }
        try node.expectWeight("weight", shape: [a.outputChannels, cin])
        try node.expectWeight("bias", shape: [a.outputChannels], optional: true)
        return [TensorType(Array(ins[0].shape.dropLast()) + [a.outputChannels], ins[0].elementType)]
    }

    static var weightRoles: [WeightRole] { [WeightRole("weight"), WeightRole("bias")] }
}
