// Definitions of the scatter ops (issue 9): scatter, scatterND, scatterAlongAxis — MIL
// `scatter`, `scatter_nd`, `scatter_along_axis` (coremltools converters/mil/mil/ops/defs/iOS15/
// scatter_gather.py). Indices are int32 or int64; negative indices wrap once (−1 is the last);
// an index still out of range after wrapping is skipped by the kernel (a kernel cannot throw at run
// time, and trapping on file data is not an option; MIL leaves it undefined).

/// How `Op.scatter`, `Op.scatterND` and `Op.scatterAlongAxis` combine an update u with the value
/// v already at its position (raw values: MIL's `mode` strings). Updates are applied one at a time
/// in row-major order of the indices, so duplicate indices accumulate (`update`: the last wins).
public enum ScatterMode: String, Codable, Hashable, Sendable, CaseIterable {
    /// v = u
    case update
    /// v = v + u
    case add
    /// v = v − u
    case sub
    /// v = v · u
    case mul
    /// v = v / u (integers: truncating toward zero; a zero divisor gives 0, no trap)
    case div
    /// v = max(v, u) (NaN propagates, as NumPy `maximum`)
    case max
    /// v = min(v, u) (NaN propagates)
    case min
}

/// Attributes of `Op.scatter` and `Op.scatterAlongAxis`.
public struct ScatterAttributes: Codable, Hashable, Sendable {
    /// The scattered axis of data; negative counts from the end (MIL default 0).
    public var axis: Int
    /// How updates combine with data (MIL default `add`).
    public var mode: ScatterMode
    public init(axis: Int = 0, mode: ScatterMode = .add) { self.axis = axis; self.mode = mode }
}

extension Node {
    /// Checks the data / updates pair of a scatter: one element type among float32, float16,
    /// int32, int64 (MIL: fp16, fp32, i32), and `updates` of shape `expected`.
    func checkScatterOperands(_ ins: [TensorType], expectedUpdates expected: [Int]) throws {
        guard ins[0].elementType != .bool else { throw fail("data must be float32, float16, int32 or int64, found bool") }
        try expectIndices(ins[1], "indices (input 1)")
        try expectSameElementType([ins[0], ins[2]], "data and updates (inputs 0, 2)")
        guard ins[2].shape == expected else {
            throw fail("updates (input 2) should have shape \(formatShape(expected)), found \(formatShape(ins[2].shape))")
        }
    }
}

enum ScatterSupport {
    static func encode(_ a: ScatterAttributes) -> [String: AttributeValue] { ["axis": .int(a.axis), "mode": .string(a.mode.rawValue)] }
    static func decode(_ r: AttributeReader) throws -> ScatterAttributes {
        ScatterAttributes(axis: try r.int("axis"), mode: try r.enumeration("mode", ScatterMode.self))
    }
}

enum ScatterDefinition: OpDefinition {
    static let kind = OpKind.scatter
    static let summary = "data with slices along an axis at integer indices combined with updates (update/add/sub/mul/div/max/min)"
    static let milOps = ["scatter"]
    static let onnxOps = ["ScatterElements"]

    static func checkAttributes(of node: Node) throws {
        guard case let .scatter(a) = node.op else { return }
        try node.checkAxisList([a.axis], "axis")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .scatter(a) = op else { return [:] }
        return ScatterSupport.encode(a)
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .scatter(try ScatterSupport.decode(r)) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .scatter(a) = node.op else { return [] }
        try node.expectInputs(ins, 3)
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank)
        let d = ins[0].shape
        let expected = Array(d[..<axis]) + ins[1].shape + Array(d[(axis + 1)...])
        guard expected.count <= Node.maxRank else { throw node.fail("updates would have rank \(expected.count) (at most \(Node.maxRank))") }
        try node.checkScatterOperands(ins, expectedUpdates: expected)
        return [ins[0]]
    }
}

enum ScatterNDDefinition: OpDefinition {
    static let kind = OpKind.scatterND
    static let summary = "data with the slices at index tuples (the last axis of indices) combined with updates"
    static let milOps = ["scatter_nd"]
    static let onnxOps = ["ScatterND"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .scatterND(mode) = op else { return [:] }
        return ["mode": .string(mode.rawValue)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .scatterND(mode: try r.enumeration("mode", ScatterMode.self)) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 3)
        let k = ins[1].shape.last ?? 0
        guard k >= 1, k <= ins[0].rank else {
            throw node.fail("the last axis of indices (\(k)) must be in 1…\(ins[0].rank), the rank of data")
        }
        let expected = Array(ins[1].shape.dropLast()) + Array(ins[0].shape[k...])
        guard !expected.isEmpty else {
            throw node.fail("updates would be a scalar (rank 0), which the IR does not support; give indices a leading axis")
        }
        try node.checkScatterOperands(ins, expectedUpdates: expected)
        return [ins[0]]
    }
}

enum ScatterAlongAxisDefinition: OpDefinition {
    static let kind = OpKind.scatterAlongAxis
    static let summary = "data with out[i with axis coordinate indices[i]] combined with updates[i] (put_along_axis)"
    static let milOps = ["scatter_along_axis"]
    static let onnxOps = ["ScatterElements"]

    static func checkAttributes(of node: Node) throws {
        guard case let .scatterAlongAxis(a) = node.op else { return }
        try node.checkAxisList([a.axis], "axis")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .scatterAlongAxis(a) = op else { return [:] }
        return ScatterSupport.encode(a)
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .scatterAlongAxis(try ScatterSupport.decode(r)) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .scatterAlongAxis(a) = node.op else { return [] }
        try node.expectInputs(ins, 3)
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank)
        let d = ins[0].shape, i = ins[1].shape
        guard i.count == d.count, (0..<d.count).allSatisfy({ $0 == axis || i[$0] == d[$0] }) else {
            throw node.fail("indices of shape \(formatShape(i)) must have data's shape \(formatShape(d)) except on axis \(axis)")
        }
        try node.checkScatterOperands(ins, expectedUpdates: i)
        return [ins[0]]
    }
}
