// Reductions over a set of axes (`Op.reduce`) and `Op.logSoftmax`.

/// The function `Op.reduce` applies to the elements of each reduced slice (n elements x_i).
/// Named after MIL's `reduce_*` ops (coremltools `converters/mil/mil/ops/defs/iOS15/reduction.py`).
public enum ReduceFunction: String, Codable, Hashable, Sendable, CaseIterable {
    /// Σ x_i (MIL `reduce_sum`, ONNX `ReduceSum`).
    case sum
    /// Σ x_i / n (`reduce_mean`, `ReduceMean`).
    case mean
    /// Π x_i (`reduce_prod`, `ReduceProd`).
    case prod
    /// max x_i; a NaN in the slice gives NaN (`reduce_max`, `ReduceMax`).
    case max
    /// min x_i; a NaN in the slice gives NaN (`reduce_min`, `ReduceMin`).
    case min
    /// Σ |x_i| (`reduce_l1_norm`, `ReduceL1`).
    case l1Norm = "l1_norm"
    /// sqrt(Σ x_i²) (`reduce_l2_norm`, `ReduceL2`).
    case l2Norm = "l2_norm"
    /// log Σ exp(x_i), computed as m + log Σ exp(x_i − m) with m = max x_i
    /// (`reduce_log_sum_exp`, `ReduceLogSumExp`).
    case logSumExp = "log_sum_exp"
    /// Σ x_i² (`reduce_sum_square`, `ReduceSumSquare`).
    case sumSquare = "sum_square"

    /// The MIL op name (`reduce_<raw value>`).
    public var milName: String { "reduce_" + rawValue }
}

/// `Op.reduce`: `function` over `axes` of the single input.
public struct ReduceAttributes: Codable, Hashable, Sendable {
    public var function: ReduceFunction
    /// Axes to reduce (negative counts from the end, −1 is the last axis; no axis twice). Empty
    /// means every axis (MIL `axes=None`).
    public var axes: [Int]
    /// Keep the reduced axes with size 1 (MIL `keep_dims`, default false).
    public var keepDims: Bool

    public init(function: ReduceFunction, axes: [Int], keepDims: Bool = false) {
        self.function = function; self.axes = axes; self.keepDims = keepDims
    }
}

/// The sorted, non-negative axes `axes` names in a rank-`rank` tensor (empty = all axes), or nil
/// when one is out of range or named twice (also as a negative and a positive index).
public func resolveAxisSet(_ axes: [Int], rank: Int) -> [Int]? {
    if axes.isEmpty { return Array(0..<rank) }
    guard axes.count <= rank else { return nil }
    var out: [Int] = []
    for a in axes {
        guard a >= -rank, a < rank else { return nil }
        let r = a < 0 ? a + rank : a
        guard !out.contains(r) else { return nil }
        out.append(r)
    }
    return out.sorted()
}

extension Node {
    /// Reduction axes: every axis when `axes` is empty (MIL axes=None), else `axes` resolved
    /// (negative counts from the end), sorted, without repeats.
    func resolveReductionAxes(_ axes: [Int], rank: Int, _ what: String = "axes") throws -> [Int] {
        axes.isEmpty ? Array(0..<rank) : try resolveAxes(axes, rank: rank, what).sorted()
    }
}

/// Definition of `Op.reduce`. MIL `reduce_*` (iOS15 reduction.py), ONNX `Reduce*`, Core ML
/// `reduce` (ReduceLayerParams) and `reduce*` (NeuralNetwork v2).
enum ReduceDefinition: OpDefinition {
    static let kind = OpKind.reduce
    static let summary = "reduction (sum, mean, prod, max, min, l1/l2 norm, log-sum-exp, sum of squares) over a set of axes"
    static let milOps = ReduceFunction.allCases.map(\.milName)
    static let onnxOps = ["ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                          "ReduceLogSumExp", "ReduceSumSquare"]

    static func checkAttributes(of node: Node) throws {
        guard case let .reduce(a) = node.op else { return }
        try node.checkAxisList(a.axes)
    }

    /// The output shape of reducing `shape` over the resolved `axes`.
    static func outputShape(_ shape: [Int], axes: [Int], keepDims: Bool) -> [Int] {
        if keepDims { return shape.indices.map { axes.contains($0) ? 1 : shape[$0] } }
        let kept = shape.indices.filter { !axes.contains($0) }.map { shape[$0] }
        return kept
    }

    static var functions: [OpFunctionExample] {
        ReduceFunction.allCases.map { OpFunctionExample($0.milName, .reduce(ReduceAttributes(function: $0, axes: [-1], keepDims: true)), inputs: [TensorType([1, 4, 4, 8])]) }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .reduce(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let axes = try node.resolveReductionAxes(a.axes, rank: ins[0].rank)
        return [TensorType(outputShape(ins[0].shape, axes: axes, keepDims: a.keepDims), ins[0].elementType)]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .reduce(a) = op else { return [:] }
        return ["function": .string(a.function.rawValue), "axes": .ints(a.axes), "keep_dims": .bool(a.keepDims)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .reduce(ReduceAttributes(function: try a.enumeration("function", ReduceFunction.self), axes: try a.ints("axes"),
                                 keepDims: try a.bool("keep_dims")))
    }
}

/// Definition of `Op.logSoftmax(axis:)`. ONNX `LogSoftmax`; MIL has no single op (coremltools
/// lowers torch `log_softmax` to `softmax` + `log`).
enum LogSoftmaxDefinition: OpDefinition {
    static let kind = OpKind.logSoftmax
    static let summary = "log of the softmax along one axis"
    static let milOps: [String] = []
    static let onnxOps = ["LogSoftmax"]

    static func checkAttributes(of node: Node) throws {
        guard case let .logSoftmax(axis) = node.op else { return }
        try node.checkAxisList([axis], "axis")
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .logSoftmax(axis) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        _ = try node.resolveAxis(axis, rank: ins[0].rank)
        return [ins[0]]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .logSoftmax(axis) = op else { return [:] }
        return ["axis": .int(axis)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .logSoftmax(axis: try a.int("axis")) }
}
