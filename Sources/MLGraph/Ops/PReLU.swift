/// Definition of `Op.prelu`: y = x if x ≥ 0 else alpha·x, alpha broadcast over the input without
/// its batch axis. MIL `prelu`, ONNX `PRelu`, Core ML `activation` PReLU.
enum PReLUDefinition: OpDefinition {
    static let kind = OpKind.prelu
    static let summary = "parametric ReLU with a learned alpha tensor (Keras PReLU)"
    static let milOps = ["prelu"]
    static let onnxOps = ["PRelu"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from a: AttributeReader) throws -> Op { .prelu }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        guard let alpha = node.weights["alpha"] else { throw node.fail("missing weight 'alpha'") }
        let s = Array(ins[0].shape.dropFirst())
        guard alpha.shape.count == s.count, zip(alpha.shape, s).allSatisfy({ $0 == $1 || $0 == 1 }) else {
            throw node.fail("alpha shape \(formatShape(alpha.shape)) does not broadcast to \(formatShape(s))")
        }
        return [ins[0]]
    }

    static var weightRoles: [WeightRole] { [WeightRole("alpha", quantizationAxis: nil)] }
}
