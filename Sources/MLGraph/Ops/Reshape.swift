/// Definition of `Op.reshape(targetShape:)`: output [N] + targetShape (one entry may be −1),
/// row-major (Keras Reshape / Flatten). MIL `reshape`, ONNX `Reshape` / `Flatten`,
/// Core ML `reshape` / `flatten` / `reshapeStatic`.
enum ReshapeDefinition: OpDefinition {
    static let kind = OpKind.reshape
    static let summary = "row-major reshape keeping the batch axis"
    static let milOps: [String] = []  // MIL reshape names the full shape: `reshapeND`
    static let onnxOps = ["Flatten"]

    static func checkAttributes(of node: Node) throws {
        guard case let .reshape(t) = node.op else { return }
        guard !t.isEmpty, t.count <= Node.maxRank, t.filter({ $0 == -1 }).count <= 1,
              t.allSatisfy({ $0 == -1 || ($0 > 0 && $0 <= TensorType.maxElementCount) }),
              TensorType(t.map { $0 == -1 ? 1 : $0 }).shapeProblem == nil
        else {
            throw node.fail("target shape \(t) must be at most \(Node.maxRank) positive dimensions (one may be -1) with at most 2^40 elements")
        }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .reshape(t) = op else { return [:] }
        return ["targetShape": .ints(t)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .reshape(targetShape: try a.ints("targetShape")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .reshape(target) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard let n = ins[0].shape.first else { throw node.fail("expects an input with a batch axis, found a scalar") }
        var t = target
        if let i = t.firstIndex(of: -1) {
            let known = t.enumerated().filter { $0.offset != i }.reduce(1) { $0 * $1.element }
            guard known > 0, (ins[0].elementCount / n) % known == 0 else {
                throw node.fail("cannot reshape \(formatShape(ins[0].shape)) to \(formatShape(target))")
            }
            t[i] = ins[0].elementCount / n / known
        }
        let (total, overflow) = t.reduce(1, *).multipliedReportingOverflow(by: n)  // each factor ≤ 2^40
        guard !overflow, total == ins[0].elementCount else {
            throw node.fail("cannot reshape \(formatShape(ins[0].shape)) (\(ins[0].elementCount) elements) to \(formatShape([n] + target))")
        }
        return [TensorType([n] + t, ins[0].elementType)]
    }
}

/// Definition of `Op.reshapeND(shape:)`: MIL `reshape` — the full output shape, batch included,
/// one entry −1 (inferred); the element count must not change. (MIL iOS 17's 0 = "copy this
/// input dimension" is refused, as iOS 15/16 refuse it.)
enum ReshapeNDDefinition: OpDefinition {
    static let kind = OpKind.reshapeND
    static let summary = "row-major reshape to a full shape (MIL reshape)"
    static let milOps = ["reshape"]
    static let onnxOps = ["Reshape"]

    static func checkAttributes(of node: Node) throws {
        guard case let .reshapeND(shape) = node.op else { return }
        guard shape.count <= Node.maxRank, shape.filter({ $0 == -1 }).count <= 1,
              shape.allSatisfy({ $0 == -1 || ($0 > 0 && $0 <= TensorType.maxElementCount) }),
              TensorType(shape.map { $0 == -1 ? 1 : $0 }).shapeProblem == nil
        else {
            throw node.fail("shape \(shape) must be at most \(Node.maxRank) positive dimensions (one may be -1) with at most 2^40 elements")
        }
    }

    /// Inputs with unknown dimensions: the output keeps the dimensions `shape` gives (the −1
    /// entry is unknown until prediction, where the dynamic executor checks the element count).
    static let acceptsDynamicTypes = true

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .reshapeND(shape) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        if ins[0].isList { throw node.fail("input 0 is a tensor list (\(ins[0])); reshape an element read with listRead") }
        if !ins[0].isFullyKnown { return [TensorType(shape, ins[0].elementType)] }
        let count = ins[0].elementCount
        var out = shape
        if let i = out.firstIndex(of: -1) {
            let known = out.enumerated().filter { $0.offset != i }.reduce(1) { $0 * $1.element }  // ≤ 2^40 each: checked
            guard known > 0, count % known == 0 else {
                throw node.fail("cannot reshape \(formatShape(ins[0].shape)) (\(count) elements) to \(formatShape(shape))")
            }
            out[i] = count / known
        }
        guard out.reduce(1, *) == count else {
            throw node.fail("cannot reshape \(formatShape(ins[0].shape)) (\(count) elements) to \(formatShape(shape))")
        }
        return [TensorType(out, ins[0].elementType)]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .reshapeND(shape) = op else { return [:] }
        return ["shape": .ints(shape)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .reshapeND(shape: try a.ints("shape")) }
}
