/// Definition of `Op.softmax(axis:)`: y = exp(x − max)/Σ exp(x − max) along `axis`
/// (non-negative). MIL `softmax`, ONNX `Softmax` (opset 13), Core ML `softmax` / `softmaxND`.
enum SoftmaxDefinition: OpDefinition {
    static let kind = OpKind.softmax
    static let summary = "softmax along one axis"
    static let milOps = ["softmax"]
    static let onnxOps = ["Softmax"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .softmax(axis) = op else { return [:] }
        return ["axis": .int(axis)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .softmax(axis: try a.int("axis")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .softmax(axis) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard axis >= 0, axis < ins[0].rank else { throw node.fail("axis \(axis) out of range for \(formatShape(ins[0].shape))") }
        return [ins[0]]
    }
}
