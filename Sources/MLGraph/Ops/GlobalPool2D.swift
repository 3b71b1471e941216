/// Definition of `Op.globalPool2d`: max or mean over H and W of an NHWC tensor.
/// MIL `reduce_max` / `reduce_mean` over axes (1, 2); ONNX `GlobalMaxPool` / `GlobalAveragePool`;
/// Core ML `pooling` with `globalPooling`.
enum GlobalPool2DDefinition: OpDefinition {
    static let kind = OpKind.globalPool2d
    static let summary = "global max or average pooling over H and W, NHWC"
    static let milOps: [String] = []
    static let onnxOps = ["GlobalMaxPool", "GlobalAveragePool"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .globalPool2d(kind, keepDims) = op else { return [:] }
        return ["kind": .string(kind.rawValue), "keepDims": .bool(keepDims)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .globalPool2d(kind: try a.enumeration("kind", PoolKind.self), keepDims: try a.bool("keepDims"))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .globalPool2d(_, keepDims) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape
        return [TensorType(keepDims ? [s[0], 1, 1, s[3]] : [s[0], s[3]], ins[0].elementType)]
    }
}
