// Definitions of reverse, reverseSequence, argsort and slidingWindows (issue 9) — MIL `reverse`,
// `reverse_sequence`, `sliding_windows` (defs/iOS15/tensor_transformation.py) and `argsort`
// (defs/iOS15/tensor_operation.py). Each runs on any element type (byte copies / comparisons).

/// Attributes of `Op.slidingWindows` (MIL `sliding_windows`).
public struct SlidingWindowsAttributes: Codable, Hashable, Sendable {
    /// The windowed axis; negative counts from the end.
    public var axis: Int
    /// Elements per window, 1…size of the axis.
    public var size: Int
    /// Distance between the starts of consecutive windows (MIL default 1).
    public var stride: Int
    public init(axis: Int, size: Int, stride: Int = 1) { self.axis = axis; self.size = size; self.stride = stride }
}

enum ReverseDefinition: OpDefinition {
    static let kind = OpKind.reverse
    static let summary = "x reversed along the given axes (all axes when none are given)"
    static let milOps = ["reverse"]

    static func checkAttributes(of node: Node) throws {
        guard case let .reverse(axes) = node.op else { return }
        try node.checkAxisList(axes)
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .reverse(axes) = op else { return [:] }
        return ["axes": .ints(axes)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .reverse(axes: try r.ints("axes")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .reverse(axes) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        _ = try node.resolveAxes(axes, rank: ins[0].rank)
        return [ins[0]]
    }
}

enum ReverseSequenceDefinition: OpDefinition {
    static let kind = OpKind.reverseSequence
    static let summary = "for each batch entry b, the first lengths[b] elements along the sequence axis reversed"
    static let milOps = ["reverse_sequence"]
    static let onnxOps = ["ReverseSequence"]

    static func checkAttributes(of node: Node) throws {
        guard case let .reverseSequence(seqAxis, batchAxis) = node.op else { return }
        try node.checkAxisList([seqAxis, batchAxis], "seq_axis and batch_axis")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .reverseSequence(seqAxis, batchAxis) = op else { return [:] }
        return ["seq_axis": .int(seqAxis), "batch_axis": .int(batchAxis)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .reverseSequence(seqAxis: try r.int("seq_axis"), batchAxis: try r.int("batch_axis"))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .reverseSequence(seqAxis, batchAxis) = node.op else { return [] }
        try node.expectInputs(ins, 2)
        let s = try node.resolveAxis(seqAxis, rank: ins[0].rank, "seq_axis")
        let b = try node.resolveAxis(batchAxis, rank: ins[0].rank, "batch_axis")
        guard s != b else { throw node.fail("seq_axis and batch_axis must differ, both are axis \(s)") }
        try node.expectIndices(ins[1], "lengths (input 1)")
        guard ins[1].shape == [ins[0].shape[b]] else {
            throw node.fail("lengths (input 1) should have shape \(formatShape([ins[0].shape[b]])) (the batch axis \(b) of x), found \(formatShape(ins[1].shape))")
        }
        return [ins[0]]
    }
}

enum ArgsortDefinition: OpDefinition {
    static let kind = OpKind.argsort
    static let summary = "int32 positions sorting x along an axis (descending unless ascending; stable)"
    static let milOps = ["argsort"]

    static func checkAttributes(of node: Node) throws {
        guard case let .argsort(axis, _) = node.op else { return }
        try node.checkAxisList([axis], "axis")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .argsort(axis, ascending) = op else { return [:] }
        return ["axis": .int(axis), "ascending": .bool(ascending)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .argsort(axis: try r.int("axis"), ascending: try r.bool("ascending")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .argsort(axis, _) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let a = try node.resolveAxis(axis, rank: ins[0].rank)
        guard ins[0].shape[a] <= Int(Int32.max) else { throw node.fail("axis \(a) has \(ins[0].shape[a]) elements, more than int32 positions can name") }
        return [TensorType(ins[0].shape, .int32)]
    }
}

enum SlidingWindowsDefinition: OpDefinition {
    static let kind = OpKind.slidingWindows
    static let summary = "windows of size elements every stride along an axis (new axis after it)"
    static let milOps = ["sliding_windows"]

    static func checkAttributes(of node: Node) throws {
        guard case let .slidingWindows(a) = node.op else { return }
        try node.checkAxisList([a.axis], "axis")
        try node.checkCount(a.size, "size")
        try node.checkCount(a.stride, "stride")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .slidingWindows(a) = op else { return [:] }
        return ["axis": .int(a.axis), "size": .int(a.size), "stride": .int(a.stride)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .slidingWindows(SlidingWindowsAttributes(axis: try r.int("axis"), size: try r.int("size"), stride: try r.int("stride")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .slidingWindows(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank)
        let n = ins[0].shape[axis]
        guard a.size <= n else { throw node.fail("window size \(a.size) exceeds the size \(n) of axis \(axis)") }
        var shape = ins[0].shape
        shape[axis] = (n - a.size) / a.stride + 1
        shape.insert(a.size, at: axis + 1)
        try node.expectOutputRank(shape, hint: "")
        return [TensorType(shape, ins[0].elementType)]
    }
}
