// Definition of nonMaximumSuppression (issue 9): MIL `non_maximum_suppression` (iOS15,
// defs/iOS15/tensor_operation.py; Core ML NeuralNetwork `NonMaximumSuppressionLayerParams`).

/// Attributes of `Op.nonMaximumSuppression`. Per batch entry: each box's score is its largest class
/// score (its class: the first class with that score); boxes whose score is greater than
/// `scoreThreshold` are visited by decreasing score (ties: lower index first) and a box is kept
/// unless its intersection over union with an already kept box (of the same class, with
/// `perClassSuppression`) is greater than `iouThreshold`, until `maxBoxes` are kept.
///
/// Divergence: coremltools' (disabled) NumPy reference returns the single best box when no box
/// passes the threshold; here the count is 0 and every row is padding.
public struct NonMaximumSuppressionAttributes: Codable, Hashable, Sendable {
    /// Boxes overlapping a kept box with IoU greater than this are dropped (not NaN).
    public var iouThreshold: Float
    /// Boxes whose score is not greater than this are dropped first (not NaN; −∞ keeps all but NaN scores).
    public var scoreThreshold: Float
    /// Rows of the outputs (the most boxes kept), 1…`Node.maxCountAttribute`.
    public var maxBoxes: Int
    /// Suppress only among boxes of the same class (MIL default false).
    public var perClassSuppression: Bool
    public init(iouThreshold: Float, scoreThreshold: Float, maxBoxes: Int, perClassSuppression: Bool = false) {
        self.iouThreshold = iouThreshold; self.scoreThreshold = scoreThreshold; self.maxBoxes = maxBoxes
        self.perClassSuppression = perClassSuppression
    }
}

enum NonMaximumSuppressionDefinition: OpDefinition {
    static let kind = OpKind.nonMaximumSuppression
    static let summary = "greedy non-maximum suppression of center-format boxes; padded boxes, scores, indices and counts"
    static let milOps = ["non_maximum_suppression"]
    static let onnxOps = ["NonMaxSuppression"]

    static func checkAttributes(of node: Node) throws {
        guard case let .nonMaximumSuppression(a) = node.op else { return }
        guard !a.iouThreshold.isNaN else { throw node.fail("iou_threshold must not be NaN") }
        guard !a.scoreThreshold.isNaN else { throw node.fail("score_threshold must not be NaN") }
        try node.checkCount(a.maxBoxes, "max_boxes")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .nonMaximumSuppression(a) = op else { return [:] }
        return ["iou_threshold": .canonicalNumber(a.iouThreshold), "score_threshold": .canonicalNumber(a.scoreThreshold),
                "max_boxes": .int(a.maxBoxes), "per_class_suppression": .bool(a.perClassSuppression)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .nonMaximumSuppression(NonMaximumSuppressionAttributes(
            iouThreshold: try r.float("iou_threshold"), scoreThreshold: try r.float("score_threshold"),
            maxBoxes: try r.int("max_boxes"), perClassSuppression: try r.bool("per_class_suppression")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .nonMaximumSuppression(a) = node.op else { return [] }
        try node.expectInputs(ins, 2)
        try node.expectElementType(ins[0], .float32, "boxes (input 0)")
        try node.expectElementType(ins[1], .float32, "scores (input 1)")
        try node.expectRank(ins[0], 3, "boxes (input 0)")
        try node.expectRank(ins[1], 3, "scores (input 1)")
        let b = ins[0].shape[0], n = ins[0].shape[1], k = ins[1].shape[2]
        guard ins[0].shape[2] == 4 else { throw node.fail("boxes (input 0) must be [B, N, 4], found \(formatShape(ins[0].shape))") }
        guard ins[1].shape[0] == b, ins[1].shape[1] == n else {
            throw node.fail("scores (input 1) must be [\(b), \(n), K] for boxes \(formatShape(ins[0].shape)), found \(formatShape(ins[1].shape))")
        }
        guard n <= Int(Int32.max) else { throw node.fail("\(n) boxes are more than int32 indices can name") }
        let m = a.maxBoxes
        return [TensorType([b, m, 4]), TensorType([b, m, k]), TensorType([b, m], .int32), TensorType([b], .int32)]
    }
}
