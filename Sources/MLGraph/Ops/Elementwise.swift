public enum ElementwiseKind: String, Codable, Hashable, Sendable, CaseIterable {
    case add, subtract, multiply, average, maximum, minimum
}

/// Definition of `Op.elementwise`: n-ary add / multiply / average / maximum / minimum, binary
/// subtract, with NumPy broadcasting. MIL `add`, `sub`, `mul`, `maximum`, `minimum`; ONNX `Sum`,
/// `Sub`, `Mul`, `Mean`, `Max`, `Min`; Core ML `add`, `multiply`, `average`, `max`, `min`.
enum ElementwiseDefinition: OpDefinition {
    static let kind = OpKind.elementwise
    static let summary = "n-ary add, subtract, multiply, average, maximum, minimum with broadcasting"
    static let milOps = ["add", "sub", "mul", "maximum", "minimum"]
    static let onnxOps = ["Sum", "Sub", "Mul", "Mean", "Max", "Min"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .elementwise(kind) = op else { return [:] }
        return ["kind": .string(kind.rawValue)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .elementwise(try a.enumeration("kind", ElementwiseKind.self)) }

    static var functions: [OpFunctionExample] {
        ElementwiseKind.allCases.map { OpFunctionExample($0.rawValue, .elementwise($0), inputs: [TensorType([1, 4, 4, 8]), TensorType([1, 4, 4, 8])]) }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .elementwise(kind) = node.op else { return [] }
        try node.expectInputs(ins, atLeast: 2)
        if kind == .subtract { try node.expectInputs(ins, 2) }
        return [TensorType(try node.broadcastAll(ins), ins[0].elementType)]
    }
}
