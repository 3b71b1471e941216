/// Definition of `Op.softmax(axis:)`: y = exp(x − max)/Σ exp(x − max) along `axis`
/// (negative counts from the end, −1 = last axis as MIL's default; kernels and exporters use
/// `resolvedAxis(_:rank:)`). MIL `softmax`, ONNX `Softmax` (opset 13), Core ML `softmax` / `softmaxND`.
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

    static func checkAttributes(of node: Node) throws {
        guard case let .softmax(axis) = node.op else { return }
        try node.checkAxisList([axis], "axis")
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .softmax(axis) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        _ = try node.resolveAxis(axis, rank: ins[0].rank)
        return [ins[0]]
    }
}

/// The non-negative index of `axis` in a rank-`rank` tensor (−1 is the last axis; NumPy / MIL
/// convention), or nil when it is out of range. The single-axis ops (softmax, concat, …) accept
/// negative axes; their kernels and exporters work on the resolved axis.
public func resolvedAxis(_ axis: Int, rank: Int) -> Int? {
    guard axis >= -rank, axis < rank else { return nil }
    return axis < 0 ? axis + rank : axis
}
