// Definitions of the integer / bool-valued ops (issue 9, typed tensors): cast, argmax/argmin,
// compare, logical, select, gather, gatherND, gatherAlongAxis, oneHot, range1d, fill, topk.
// Comparisons are one kind (`compare`) and logical ops one kind (`logical`), each with a function
// enum (as `elementwise`): fewer kinds, the same MIL coverage.

/// Attributes of `Op.argmax` / `Op.argmin` (MIL `reduce_argmax` / `reduce_argmin`).
public struct ArgReduceAttributes: Codable, Hashable, Sendable {
    /// The reduced axis; negative counts from the end (−1 is the last).
    public var axis: Int
    /// Keep the reduced axis with size 1 (MIL `keep_dims`, default false).
    public var keepDims: Bool
    public init(axis: Int = -1, keepDims: Bool = false) { self.axis = axis; self.keepDims = keepDims }
}

/// The comparison of `Op.compare`; raw values are the MIL op names.
public enum CompareFunction: String, Codable, Hashable, Sendable, CaseIterable {
    case equal, notEqual = "not_equal", less, lessEqual = "less_equal", greater, greaterEqual = "greater_equal"
}

/// The function of `Op.logical`; raw values are the MIL op names.
public enum LogicalFunction: String, Codable, Hashable, Sendable, CaseIterable {
    case and = "logical_and", or = "logical_or", xor = "logical_xor", not = "logical_not"
}

/// Attributes of `Op.oneHot` (MIL `one_hot`).
public struct OneHotAttributes: Codable, Hashable, Sendable {
    /// Size of the new axis (MIL `one_hot_vector_size`), 1…`Node.maxCountAttribute`.
    public var depth: Int
    /// Position of the new axis in the output, −(r+1)…r for rank-r indices (default −1: last).
    public var axis: Int
    /// Value where the index equals the position (default 1) and elsewhere (default 0).
    public var onValue: Float
    public var offValue: Float
    public init(depth: Int, axis: Int = -1, onValue: Float = 1, offValue: Float = 0) {
        self.depth = depth; self.axis = axis; self.onValue = onValue; self.offValue = offValue
    }
}

/// Attributes of `Op.range1d` (MIL `range_1d` with constant inputs).
public struct RangeAttributes: Codable, Hashable, Sendable {
    public var start: Float
    public var end: Float
    /// Non-zero; negative counts down.
    public var step: Float
    /// float32 or int32 (MIL: int32 when start, end and step are integers); int32 needs integral
    /// start and step.
    public var elementType: ElementType
    public init(start: Float = 0, end: Float, step: Float = 1, elementType: ElementType = .float32) {
        self.start = start; self.end = end; self.step = step; self.elementType = elementType
    }

    /// Number of values: ceil((end − start) / step), or nil when it is not finite.
    public var count: Int? {
        let n = ((Double(end) - Double(start)) / Double(step)).rounded(.up)
        guard n.isFinite, n < Double(1 << 50) else { return nil }
        return n <= 0 ? 0 : Int(n)  // n in (0, 2^50): exact; a huge negative n must not reach Int(_:)
    }
}

/// Attributes of `Op.fill` (MIL `fill`).
public struct FillAttributes: Codable, Hashable, Sendable {
    /// The output shape (rank 1…`Node.maxRank`, dimensions ≥ 1) when the node has no input;
    /// empty when the shape comes from the node's input (an int32 / int64 / float32 vector read
    /// at prediction time).
    public var shape: [Int]
    /// The value, converted to `elementType` with `cast` semantics.
    public var value: Float
    public var elementType: ElementType
    public init(shape: [Int], value: Float, elementType: ElementType = .float32) {
        self.shape = shape; self.value = value; self.elementType = elementType
    }
}

/// Attributes of `Op.topk` (MIL `topk`).
public struct TopKAttributes: Codable, Hashable, Sendable {
    /// How many values to keep, 1…size of `axis`.
    public var k: Int
    /// Negative counts from the end (default −1).
    public var axis: Int
    /// Smallest first instead of largest first (default false).
    public var ascending: Bool
    public init(k: Int, axis: Int = -1, ascending: Bool = false) { self.k = k; self.axis = axis; self.ascending = ascending }
}

// MARK: - Shared checks

extension Node {
    /// Checks that input `i` (`what`) is int32 or int64.
    func expectIndices(_ t: TensorType, _ what: String = "indices") throws {
        guard t.elementType.isInteger else { throw fail("\(what) must be int32 or int64, found \(t.elementType)") }
    }

    /// Checks that `t` has element type `type`.
    func expectElementType(_ t: TensorType, _ type: ElementType, _ what: String) throws {
        guard t.elementType == type else { throw fail("\(what) must be \(type), found \(t.elementType)") }
    }

    /// Checks that every input has the element type of the first.
    func expectSameElementType(_ ins: [TensorType], _ what: String = "inputs") throws {
        guard let first = ins.first, ins.allSatisfy({ $0.elementType == first.elementType }) else {
            throw fail("\(what) must have one element type, found \(ins.map(\.elementType.rawValue).joined(separator: ", "))")
        }
    }

    /// Checks that an output shape has rank 0…maxRank.
    func expectOutputRank(_ shape: [Int], hint: String) throws {
        guard shape.count <= Node.maxRank else { throw fail("the output would have rank \(shape.count) (at most \(Node.maxRank))") }
    }
}

extension AttributeValue {
    /// A float attribute of the typed ops: an integer (`.int`) when the value is integral and at
    /// most 2^24 in magnitude, else `number(_:)` — so JSON files that write `2` and files that
    /// write `2.5` both re-encode exactly as stored (`AttributeReader.float` reads either).
    static func canonicalNumber(_ f: Float) -> AttributeValue {
        if f.isFinite, f.rounded() == f, abs(f) <= 16_777_216 { return .int(Int(f)) }
        return .number(f)
    }
}

extension AttributeReader {
    /// An element type by MIL dtype name (`fp32`, `fp16`, `int32`, `int64`, `bool`).
    func elementType(_ name: String) throws -> ElementType {
        let s = try string(name)
        guard let t = ElementType(milName: s) else {
            throw mismatch(name, expected: "one of \"fp32\", \"fp16\", \"int32\", \"int64\", \"bool\"", found: .string(s))
        }
        return t
    }
}

// MARK: - cast

enum CastDefinition: OpDefinition {
    static let kind = OpKind.cast
    static let summary = "element type conversion (float → int truncates toward zero)"
    static let milOps = ["cast"]
    static let onnxOps = ["Cast"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .cast(t) = op else { return [:] }
        return ["dtype": .string(t.milName)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .cast(to: try a.elementType("dtype")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .cast(t) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        return [TensorType(ins[0].shape, t)]
    }
}

// MARK: - argmax / argmin

enum ArgReduceSupport {
    static func encode(_ a: ArgReduceAttributes) -> [String: AttributeValue] { ["axis": .int(a.axis), "keep_dims": .bool(a.keepDims)] }
    static func decode(_ r: AttributeReader) throws -> ArgReduceAttributes {
        ArgReduceAttributes(axis: try r.int("axis"), keepDims: try r.bool("keep_dims"))
    }
    static func infer(_ node: Node, _ a: ArgReduceAttributes, _ ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank)
        var shape = ins[0].shape
        if a.keepDims { shape[axis] = 1 } else { shape.remove(at: axis) }
        try node.expectOutputRank(shape, hint: "set keep_dims")
        return [TensorType(shape, .int32)]
    }
}

enum ArgmaxDefinition: OpDefinition {
    static let kind = OpKind.argmax
    static let summary = "index (int32) of the largest value along an axis; ties → first"
    static let milOps = ["reduce_argmax"]
    static let onnxOps = ["ArgMax"]
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .argmax(a) = op else { return [:] }
        return ArgReduceSupport.encode(a)
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .argmax(try ArgReduceSupport.decode(r)) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .argmax(a) = node.op else { return [] }
        return try ArgReduceSupport.infer(node, a, ins)
    }
}

enum ArgminDefinition: OpDefinition {
    static let kind = OpKind.argmin
    static let summary = "index (int32) of the smallest value along an axis; ties → first"
    static let milOps = ["reduce_argmin"]
    static let onnxOps = ["ArgMin"]
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .argmin(a) = op else { return [:] }
        return ArgReduceSupport.encode(a)
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .argmin(try ArgReduceSupport.decode(r)) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .argmin(a) = node.op else { return [] }
        return try ArgReduceSupport.infer(node, a, ins)
    }
}

// MARK: - compare, logical, select

enum CompareDefinition: OpDefinition {
    static let kind = OpKind.compare
    static let summary = "equal, not_equal, less, less_equal, greater, greater_equal with broadcasting → bool"
    static let milOps = CompareFunction.allCases.map(\.rawValue)
    static let onnxOps = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .compare(f) = op else { return [:] }
        return ["function": .string(f.rawValue)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .compare(try a.enumeration("function", CompareFunction.self)) }

    static var functions: [OpFunctionExample] {
        CompareFunction.allCases.map { OpFunctionExample($0.rawValue, .compare($0), inputs: [TensorType([1, 4, 4, 8]), TensorType([1, 4, 4, 8])]) }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 2)
        try node.expectSameElementType(ins)
        return [TensorType(try node.broadcastAll(ins), .bool)]
    }
}

enum LogicalDefinition: OpDefinition {
    static let kind = OpKind.logical
    static let summary = "logical_and, logical_or, logical_xor (broadcasting), logical_not on bool tensors"
    static let milOps = LogicalFunction.allCases.map(\.rawValue)
    static let onnxOps = ["And", "Or", "Xor", "Not"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .logical(f) = op else { return [:] }
        return ["function": .string(f.rawValue)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .logical(try a.enumeration("function", LogicalFunction.self)) }

    static var functions: [OpFunctionExample] {
        LogicalFunction.allCases.map {
            OpFunctionExample($0.rawValue, .logical($0), inputs: Array(repeating: TensorType([1, 4, 4, 8], .bool), count: $0 == .not ? 1 : 2))
        }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .logical(f) = node.op else { return [] }
        try node.expectInputs(ins, f == .not ? 1 : 2)
        for (i, t) in ins.enumerated() { try node.expectElementType(t, .bool, "input \(i)") }
        return [TensorType(try node.broadcastAll(ins), .bool)]
    }
}

enum SelectDefinition: OpDefinition {
    static let kind = OpKind.select
    static let summary = "cond ? a : b elementwise with broadcasting (cond bool)"
    static let milOps = ["select"]
    static let onnxOps = ["Where"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from a: AttributeReader) throws -> Op { .select }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 3)
        try node.expectElementType(ins[0], .bool, "cond (input 0)")
        try node.expectSameElementType(Array(ins[1...]), "a and b (inputs 1, 2)")
        return [TensorType(try node.broadcastAll(ins), ins[1].elementType)]
    }
}

// MARK: - gathers

enum GatherDefinition: OpDefinition {
    static let kind = OpKind.gather
    static let summary = "take slices of x along an axis at integer indices"
    static let milOps = ["gather"]
    static let onnxOps = ["Gather"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .gather(axis) = op else { return [:] }
        return ["axis": .int(axis)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .gather(axis: try a.int("axis")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .gather(axis) = node.op else { return [] }
        try node.expectInputs(ins, 2)
        try node.expectIndices(ins[1])
        let a = try node.resolveAxis(axis, rank: ins[0].rank)
        let x = ins[0].shape
        let shape = Array(x[..<a]) + ins[1].shape + Array(x[(a + 1)...])
        try node.expectOutputRank(shape, hint: "")
        return [TensorType(shape, ins[0].elementType)]
    }
}

enum GatherNDDefinition: OpDefinition {
    static let kind = OpKind.gatherND
    static let summary = "take slices of x at index tuples (the last axis of indices)"
    static let milOps = ["gather_nd"]
    static let onnxOps = ["GatherND"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from a: AttributeReader) throws -> Op { .gatherND }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 2)
        try node.expectIndices(ins[1])
        let k = ins[1].shape.last ?? 0
        guard k >= 1, k <= ins[0].rank else {
            throw node.fail("the last axis of indices (\(k)) must be in 1…\(ins[0].rank), the rank of x")
        }
        let shape = Array(ins[1].shape.dropLast()) + Array(ins[0].shape[k...])
        try node.expectOutputRank(shape, hint: "index fewer axes of x, or give indices a leading axis")
        return [TensorType(shape, ins[0].elementType)]
    }
}

enum GatherAlongAxisDefinition: OpDefinition {
    static let kind = OpKind.gatherAlongAxis
    static let summary = "out[i] = x[i with the axis coordinate replaced by indices[i]] (take_along_axis)"
    static let milOps = ["gather_along_axis"]
    static let onnxOps = ["GatherElements"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .gatherAlongAxis(axis) = op else { return [:] }
        return ["axis": .int(axis)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .gatherAlongAxis(axis: try a.int("axis")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .gatherAlongAxis(axis) = node.op else { return [] }
        try node.expectInputs(ins, 2)
        try node.expectIndices(ins[1])
        let a = try node.resolveAxis(axis, rank: ins[0].rank)
        let x = ins[0].shape, i = ins[1].shape
        guard i.count == x.count, (0..<x.count).allSatisfy({ $0 == a || i[$0] == x[$0] }) else {
            throw node.fail("indices of shape \(formatShape(i)) must have x's shape \(formatShape(x)) except on axis \(a)")
        }
        return [TensorType(i, ins[0].elementType)]
    }
}

// MARK: - oneHot, range1d, fill

enum OneHotDefinition: OpDefinition {
    static let kind = OpKind.oneHot
    static let summary = "one-hot float32 vectors of integer indices along a new axis"
    static let milOps = ["one_hot"]
    static let onnxOps = ["OneHot"]

    static func checkAttributes(of node: Node) throws {
        guard case let .oneHot(a) = node.op else { return }
        try node.checkCount(a.depth, "depth")
        try node.checkFinite(a.onValue, "on_value")
        try node.checkFinite(a.offValue, "off_value")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .oneHot(a) = op else { return [:] }
        return ["depth": .int(a.depth), "axis": .int(a.axis), "on_value": .canonicalNumber(a.onValue), "off_value": .canonicalNumber(a.offValue)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .oneHot(OneHotAttributes(depth: try r.int("depth"), axis: try r.int("axis"), onValue: try r.float("on_value"),
                                 offValue: try r.float("off_value")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .oneHot(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        try node.expectIndices(ins[0])
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank + 1)
        var shape = ins[0].shape
        shape.insert(a.depth, at: axis)
        try node.expectOutputRank(shape, hint: "")
        return [TensorType(shape, .float32)]
    }
}

enum Range1DDefinition: OpDefinition {
    static let kind = OpKind.range1d
    static let summary = "start, start + step, … up to end (excluded), like numpy.arange"
    static let milOps = ["range_1d"]
    static let onnxOps = ["Range"]

    static func checkAttributes(of node: Node) throws {
        guard case let .range1d(a) = node.op else { return }
        for (v, n) in [(a.start, "start"), (a.end, "end"), (a.step, "step")] { try node.checkFinite(v, n) }
        guard a.step != 0 else { throw node.fail("step must not be 0") }
        guard a.elementType == .float32 || a.elementType == .int32 else {
            throw node.fail("dtype must be fp32 or int32, found \(a.elementType.milName)")
        }
        if a.elementType == .int32 {
            for (v, n) in [(a.start, "start"), (a.end, "end"), (a.step, "step")] where v.rounded() != v || abs(v) > 16_777_216 {
                throw node.fail("\(n) must be an integer of magnitude at most 2^24 for an int32 range, found \(v)")
            }
        }
        guard let n = a.count, n >= 1, n <= Node.maxCountAttribute else {
            throw node.fail("the range from \(a.start) to \(a.end) by \(a.step) must have 1…\(Node.maxCountAttribute) values")
        }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .range1d(a) = op else { return [:] }
        return ["start": .canonicalNumber(a.start), "end": .canonicalNumber(a.end), "step": .canonicalNumber(a.step), "dtype": .string(a.elementType.milName)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .range1d(RangeAttributes(start: try r.float("start"), end: try r.float("end"), step: try r.float("step"),
                                 elementType: try r.elementType("dtype")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .range1d(a) = node.op else { return [] }
        try node.expectInputs(ins, 0)
        return [TensorType([a.count ?? 1], a.elementType)]
    }
}

enum FillDefinition: OpDefinition {
    static let kind = OpKind.fill
    static let summary = "a constant tensor of a given shape and value"
    static let milOps = ["fill"]
    static let onnxOps = ["ConstantOfShape"]

    static func checkAttributes(of node: Node) throws {
        guard case let .fill(a) = node.op else { return }
        if !node.inputs.isEmpty {
            guard a.shape.isEmpty else { throw node.fail("shape must be empty when an input gives the shape, found \(a.shape)") }
            return
        }
        guard !a.shape.isEmpty, a.shape.count <= Node.maxRank else { throw node.fail("shape must have rank 1…\(Node.maxRank), found \(a.shape)") }
        if let problem = TensorType(a.shape).shapeProblem { throw node.fail("shape \(formatShape(a.shape)): \(problem)") }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .fill(a) = op else { return [:] }
        return ["shape": .ints(a.shape), "value": .canonicalNumber(a.value), "dtype": .string(a.elementType.milName)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .fill(FillAttributes(shape: try r.ints("shape"), value: try r.float("value"), elementType: try r.elementType("dtype")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .fill(a) = node.op else { return [] }
        guard let s = ins.first else { return [TensorType(a.shape, a.elementType)] }
        // Dynamic fill: the shape is the input's values, known at prediction time.
        try node.expectInputs(ins, 1)
        try node.expectIndexVector(s, "input 0 (the shape)")
        guard s.shape[0] >= 1, s.shape[0] <= Node.maxRank else {
            throw node.fail("input 0 (the shape) must have a known length 1…\(Node.maxRank), found \(s)")
        }
        return [TensorType(Array(repeating: TensorType.unknown, count: s.shape[0]), a.elementType)]
    }
}

// MARK: - topk

enum TopKDefinition: OpDefinition {
    static let kind = OpKind.topk
    static let summary = "the k largest (or smallest) values along an axis, sorted, and their int32 indices"
    static let milOps = ["topk"]
    static let onnxOps = ["TopK"]

    static func checkAttributes(of node: Node) throws {
        guard case let .topk(a) = node.op else { return }
        try node.checkCount(a.k, "k")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .topk(a) = op else { return [:] }
        return ["k": .int(a.k), "axis": .int(a.axis), "ascending": .bool(a.ascending)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .topk(TopKAttributes(k: try r.int("k"), axis: try r.int("axis"), ascending: try r.bool("ascending")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .topk(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank)
        guard a.k <= ins[0].shape[axis] else {
            throw node.fail("k \(a.k) exceeds the size \(ins[0].shape[axis]) of axis \(axis)")
        }
        var shape = ins[0].shape
        shape[axis] = a.k
        return [TensorType(shape, ins[0].elementType), TensorType(shape, .int32)]
    }
}
