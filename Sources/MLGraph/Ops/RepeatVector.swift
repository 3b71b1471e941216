/// Definition of `Op.repeatVector(n:)`: Keras RepeatVector, [N, D] → [N, n, D].
/// MIL `tile` after `expand_dims`; ONNX `Tile`; Core ML `sequenceRepeat` / `upsample`.
enum RepeatVectorDefinition: OpDefinition {
    static let kind = OpKind.repeatVector
    static let summary = "repeats a [N, D] vector n times: [N, n, D] (Keras RepeatVector)"
    static let milOps: [String] = []

    static func checkAttributes(of node: Node) throws {
        guard case let .repeatVector(n) = node.op else { return }
        try node.checkCount(n, "n")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .repeatVector(n) = op else { return [:] }
        return ["n": .int(n)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .repeatVector(n: try a.int("n")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .repeatVector(n) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 2)
        return [TensorType([ins[0].shape[0], n, ins[0].shape[1]], ins[0].elementType)]
    }
}
