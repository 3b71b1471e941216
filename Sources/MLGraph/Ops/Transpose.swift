/// Definition of `Op.transpose(perm:)`: output axis i = input axis perm[i].
/// MIL `transpose`, ONNX `Transpose`, Core ML `permute` / `transpose`.
enum TransposeDefinition: OpDefinition {
    static let kind = OpKind.transpose
    static let summary = "permutes the axes"
    static let milOps = ["transpose"]
    static let onnxOps = ["Transpose"]

    static func checkAttributes(of node: Node) throws {
        guard case let .transpose(perm) = node.op else { return }
        guard perm.count <= Node.maxRank else { throw node.fail("perm has \(perm.count) entries") }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .transpose(perm) = op else { return [:] }
        return ["perm": .ints(perm)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .transpose(perm: try a.ints("perm")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .transpose(perm) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard perm.sorted() == Array(0..<ins[0].rank) else {
            throw node.fail("perm \(perm) is not a permutation of the \(ins[0].rank) axes")
        }
        return [TensorType(perm.map { ins[0].shape[$0] }, ins[0].elementType)]
    }
}
