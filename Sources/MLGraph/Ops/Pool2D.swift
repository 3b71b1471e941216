public enum PoolKind: String, Codable, Hashable, Sendable, CaseIterable { case max, average }

/// `Op.pool2d`. Input [N, H, W, C] → [N, Ho, Wo, C]. Average pooling excludes padded pixels
/// (Keras/TF; Core ML avgPoolExcludePadding = true).
public struct Pool2DAttributes: Codable, Hashable, Sendable {
    public var kind: PoolKind
    public var kernel: [Int]
    public var strides: [Int]
    public var padding: PaddingMode
    public init(kind: PoolKind, kernel: [Int], strides: [Int], padding: PaddingMode) {
        self.kind = kind; self.kernel = kernel; self.strides = strides; self.padding = padding
    }
}

/// Definition of `Op.pool2d`. MIL `max_pool` / `avg_pool`, ONNX `MaxPool` / `AveragePool`,
/// Core ML `pooling`.
enum Pool2DDefinition: OpDefinition {
    static let kind = OpKind.pool2d
    static let summary = "2-D max or average pooling (average excludes padding), NHWC"
    static let milOps = ["max_pool", "avg_pool"]
    static let onnxOps = ["MaxPool", "AveragePool"]

    static func checkAttributes(of node: Node) throws {
        guard case let .pool2d(a) = node.op else { return }
        try node.checkPair(a.kernel, "kernel"); try node.checkPair(a.strides, "strides"); try node.checkPadding(a.padding)
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .pool2d(a) = op else { return [:] }
        return ["kind": .string(a.kind.rawValue), "kernel": .ints(a.kernel), "strides": .ints(a.strides), "padding": a.padding.attributeValue]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .pool2d(Pool2DAttributes(kind: try a.enumeration("kind", PoolKind.self), kernel: try a.ints("kernel"),
                                 strides: try a.ints("strides"), padding: try PaddingMode(attribute: "padding", of: a)))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .pool2d(a) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape
        let (h, w) = try node.windowOutput(s[1], s[2], a.kernel, a.strides, [1, 1], a.padding)
        return [TensorType([s[0], h, w, s[3]], ins[0].elementType)]
    }
}
