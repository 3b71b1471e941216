/// `Op.batchNorm` (inference): y = gamma·(x − mean)/sqrt(variance + epsilon) + beta along `axis`.
/// Weights "mean", "variance" [C]; optional "gamma" (absent = 1, Keras scale=False) and
/// "beta" (absent = 0, center=False), all [C] with C = shape[axis].
public struct BatchNormAttributes: Codable, Hashable, Sendable {
    /// Non-negative axis index into the input shape (batch is axis 0).
    public var axis: Int
    public var epsilon: Float
    public init(axis: Int, epsilon: Float) { self.axis = axis; self.epsilon = epsilon }
}

/// Definition of `Op.batchNorm`. MIL `batch_norm`, ONNX `BatchNormalization`, Core ML `batchnorm`.
enum BatchNormDefinition: OpDefinition {
    static let kind = OpKind.batchNorm
    static let summary = "inference batch normalisation along one axis"
    static let milOps = ["batch_norm"]
    static let onnxOps = ["BatchNormalization"]

    static func checkAttributes(of node: Node) throws {
        guard case let .batchNorm(a) = node.op else { return }
        guard a.epsilon >= 0, a.epsilon.isFinite else { throw node.fail("epsilon must be finite and ≥ 0, found \(a.epsilon)") }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .batchNorm(a) = op else { return [:] }
        return ["axis": .int(a.axis), "epsilon": .number(a.epsilon)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .batchNorm(BatchNormAttributes(axis: try a.int("axis"), epsilon: try a.float("epsilon")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .batchNorm(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard a.axis >= 0, a.axis < ins[0].rank else {
            throw node.fail("axis \(a.axis) out of range for \(formatShape(ins[0].shape))")
        }
        let c = ins[0].shape[a.axis]
        try node.expectWeight("mean", shape: [c]); try node.expectWeight("variance", shape: [c])
        try node.expectWeight("gamma", shape: [c], optional: true); try node.expectWeight("beta", shape: [c], optional: true)
        return [ins[0]]
    }

    static var weightRoles: [WeightRole] {
        ["gamma", "beta", "mean", "variance"].map { WeightRole($0) }
    }
}
