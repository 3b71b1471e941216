/// Definition of `Op.concat(axis:)`: concatenation along one axis (negative counts from the end,
/// as MIL `concat`; kernels and exporters use `resolvedAxis(_:rank:)`).
/// MIL `concat`, ONNX `Concat`, Core ML `concat` / `concatND`.
enum ConcatDefinition: OpDefinition {
    static let kind = OpKind.concat
    static let summary = "concatenation along one axis"
    static let milOps = ["concat"]
    static let onnxOps = ["Concat"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .concat(axis) = op else { return [:] }
        return ["axis": .int(axis)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .concat(axis: try a.int("axis")) }

    static func checkAttributes(of node: Node) throws {
        guard case let .concat(axis) = node.op else { return }
        try node.checkAxisList([axis], "axis")
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .concat(rawAxis) = node.op else { return [] }
        try node.expectInputs(ins, atLeast: 1)
        let r = ins[0].rank
        let axis = try node.resolveAxis(rawAxis, rank: r)
        var out = ins[0].shape
        for t in ins.dropFirst() {
            guard t.rank == r, (0..<r).allSatisfy({ $0 == axis || t.shape[$0] == out[$0] }) else {
                throw node.fail("input shapes \(ins.map { formatShape($0.shape) }.joined(separator: ", ")) differ off axis \(axis)")
            }
            let (sum, overflow) = out[axis].addingReportingOverflow(t.shape[axis])
            guard !overflow else { throw node.fail("concatenated axis overflows") }
            out[axis] = sum
        }
        return [TensorType(out, ins[0].elementType)]
    }
}
