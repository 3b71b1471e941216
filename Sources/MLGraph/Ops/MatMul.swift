/// `Op.matmul`: MIL `matmul` (coremltools `ops/defs/iOS15/linear.py`), ONNX `MatMul`.
public struct MatMulAttributes: Codable, Hashable, Sendable {
    /// Swap the last two axes of x before multiplying (refused for a rank-1 x, as MIL).
    public var transposeX: Bool
    /// Swap the last two axes of the second operand before multiplying (no effect when it is rank 1).
    public var transposeY: Bool
    public init(transposeX: Bool = false, transposeY: Bool = false) { self.transposeX = transposeX; self.transposeY = transposeY }
}

/// The geometry of one matmul: operands viewed as batches of matrices (after promotion of rank-1
/// operands and the transposes), broadcast batch axes, and the output shape.
public struct MatMulGeometry: Hashable, Sendable {
    /// Broadcast batch shape (may be empty).
    public let batch: [Int]
    /// x's and y's batch shapes, left-padded with 1s to `batch.count` axes.
    public let xBatch: [Int], yBatch: [Int]
    /// Rows of the product, the contracted size, columns of the product.
    public let m: Int, k: Int, n: Int
    /// The output shape (batch + [m, n] without the axes inserted for rank-1 operands).
    public let outputShape: [Int]

    /// The geometry of x · y (shapes as stored, before the transposes), or a reason why none exists.
    public static func make(x: [Int], y: [Int], transposeX: Bool, transposeY: Bool) -> Result<MatMulGeometry, MatMulShapeError> {
        guard !x.isEmpty, !y.isEmpty else { return .failure(MatMulShapeError("operands must have rank ≥ 1")) }
        guard !(x.count == 1 && transposeX) else { return .failure(MatMulShapeError("x is rank 1 but transposeX is set (MIL refuses it)")) }
        var xs = x.count == 1 ? [1] + x : x
        var ys = y.count == 1 ? y + [1] : y
        if transposeX { xs.swapAt(xs.count - 1, xs.count - 2) }
        if transposeY && y.count > 1 { ys.swapAt(ys.count - 1, ys.count - 2) }
        let m = xs[xs.count - 2], k = xs[xs.count - 1], n = ys[ys.count - 1]
        guard ys[ys.count - 2] == k else {
            return .failure(MatMulShapeError("the contracted sizes differ: x \(formatShape(x)) gives \(k), y \(formatShape(y)) gives \(ys[ys.count - 2])"))
        }
        let xb = Array(xs.dropLast(2)), yb = Array(ys.dropLast(2))
        guard let batch = broadcastShapes(xb, yb) else {
            return .failure(MatMulShapeError("batch shapes \(formatShape(xb)) and \(formatShape(yb)) do not broadcast"))
        }
        var out = batch
        if x.count > 1 { out.append(m) }
        if y.count > 1 { out.append(n) }
        let pad = { (s: [Int]) in Array(repeating: 1, count: batch.count - s.count) + s }
        return .success(MatMulGeometry(batch: batch, xBatch: pad(xb), yBatch: pad(yb), m: m, k: k, n: n, outputShape: out))
    }
}

/// Why two shapes cannot be multiplied.
public struct MatMulShapeError: Error, Hashable, Sendable {
    public let message: String
    init(_ m: String) { message = m }
}

/// Definition of `Op.matmul`.
enum MatMulDefinition: OpDefinition {
    static let kind = OpKind.matmul
    static let summary = "batched matrix product with NumPy broadcasting of batch axes (optional transposes)"
    static let milOps = ["matmul"]
    static let onnxOps = ["MatMul"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .matmul(a) = op else { return [:] }
        return ["transpose_x": .bool(a.transposeX), "transpose_y": .bool(a.transposeY)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .matmul(MatMulAttributes(transposeX: try a.bool("transpose_x"), transposeY: try a.bool("transpose_y")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .matmul(a) = node.op else { return [] }
        let y: [Int]
        switch ins.count {
        case 1:
            guard let w = node.weights["y"] else { throw node.fail("with one input, expects the second operand as weight 'y'") }
            y = w.shape
        case 2:
            guard node.weights["y"] == nil else { throw node.fail("has two inputs and a weight 'y': the second operand is ambiguous") }
            y = ins[1].shape
        default: throw node.fail("expects 1 input (and weight 'y') or 2 inputs, found \(ins.count)")
        }
        guard y.count <= Node.maxRank, TensorType(y).shapeProblem == nil else { throw node.fail("operand y has an invalid shape \(formatShape(y))") }
        switch MatMulGeometry.make(x: ins[0].shape, y: y, transposeX: a.transposeX, transposeY: a.transposeY) {
        case let .success(g): return [TensorType(g.outputShape, ins[0].elementType)]
        case let .failure(e): throw node.fail(e.message)
        }
    }

    /// "y": the constant second operand (one scale; not compressed by default).
    static var weightRoles: [WeightRole] { [WeightRole("y", quantizationAxis: nil, quantizedByDefault: false)] }
}

/// Definition of `Op.constant`.
enum ConstantDefinition: OpDefinition {
    static let kind = OpKind.constant
    static let summary = "a constant tensor (weight \"value\") as an activation"
    static let milOps = ["const"]
    static let onnxOps = ["Constant"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from a: AttributeReader) throws -> Op { .constant }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 0)
        guard let v = node.weights["value"] else { throw node.fail("missing weight 'value'") }
        let t = TensorType(v.shape)
        if let problem = t.shapeProblem { throw node.fail("weight 'value' has shape \(formatShape(v.shape)): \(problem)") }
        guard v.shape.count <= Node.maxRank else { throw node.fail("weight 'value' has rank \(v.shape.count) > \(Node.maxRank)") }
        return [t]
    }

    /// "value": the constant (one scale; not compressed by default).
    static var weightRoles: [WeightRole] { [WeightRole("value", quantizationAxis: nil, quantizedByDefault: false)] }
}
