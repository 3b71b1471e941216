/// Definition of `Op.embedding(outputChannels:)`: Keras Embedding, indices [N, L] → [N, L, D].
/// MIL `gather` on the table; ONNX `Gather`; Core ML `embedding` / `embeddingND`.
enum EmbeddingDefinition: OpDefinition {
    static let kind = OpKind.embedding
    static let summary = "table look-up of integer indices (Keras Embedding)"
    static let milOps: [String] = []
    static let onnxOps = ["Gather"]

    static func checkAttributes(of node: Node) throws {
        guard case let .embedding(d) = node.op else { return }
        try node.checkCount(d, "outputChannels")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .embedding(d) = op else { return [:] }
        return ["outputChannels": .int(d)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .embedding(outputChannels: try a.int("outputChannels")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .embedding(d) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 2, "[N, L] index input")
        guard ins[0].elementType == .float32 || ins[0].elementType.isInteger else {
            throw node.fail("indices must be int32, int64 or float32 holding integers, found \(ins[0].elementType)")
        }
        guard let w = node.weights["weight"], w.shape.count == 2, w.shape[0] == d else {
            throw node.fail("missing weight 'weight' of shape (\(d), vocabulary size)")
        }
        return [TensorType(ins[0].shape + [d], .float32)]
    }

    static var weightRoles: [WeightRole] { [WeightRole("weight")] }
}
