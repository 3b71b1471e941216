/// Definition of `Op.identity`: output = input. MIL `identity`, ONNX `Identity`,
/// Core ML `activation` LINEAR(1, 0) / `copy`.
enum IdentityDefinition: OpDefinition {
    static let kind = OpKind.identity
    static let summary = "output = input (Dropout and noise layers at inference)"
    static let milOps = ["identity"]
    static let onnxOps = ["Identity", "Dropout"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from a: AttributeReader) throws -> Op { .identity }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        return [ins[0]]
    }
}
