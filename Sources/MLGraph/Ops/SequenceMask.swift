/// Definition of `Op.sequenceMask(value:)`: Keras masking, x [N, T, …] → mask [N, T], 1 where any
/// element of step t differs from `value`. ONNX: `Not(ReduceMin(Equal(x, value)))`; no MIL op.
enum SequenceMaskDefinition: OpDefinition {
    static let kind = OpKind.sequenceMask
    static let summary = "Keras mask of a sequence: 1 where a step differs from the mask value"
    static let milOps: [String] = []

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .sequenceMask(value) = op else { return [:] }
        return ["value": .number(value)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .sequenceMask(value: try a.float("value")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        guard ins[0].rank >= 2 else { throw node.fail("expects rank ≥ 2 input, found \(formatShape(ins[0].shape))") }
        return [TensorType(Array(ins[0].shape.prefix(2)), ins[0].elementType)]
    }
}

/// Definition of `Op.applyMask`: multiplies each step of x [N, T, …] by mask [N, T].
enum ApplyMaskDefinition: OpDefinition {
    static let kind = OpKind.applyMask
    static let summary = "zeroes the masked steps of a sequence (Keras Masking's output)"
    static let milOps: [String] = []

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from a: AttributeReader) throws -> Op { .applyMask }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 2)
        guard ins[0].rank >= 2, ins[1].shape == Array(ins[0].shape.prefix(2)) else {
            throw node.fail("mask shape \(formatShape(ins[1].shape)) must equal the first two axes of \(formatShape(ins[0].shape))")
        }
        return [ins[0]]
    }
}
