public enum UpsampleMode: String, Codable, Hashable, Sendable, CaseIterable {
    case nearest
    /// Bilinear with half-pixel centres (TF2 `tf.image.resize`, Keras UpSampling2D).
    case bilinearHalfPixel
    /// Bilinear with align_corners = true.
    case bilinearAlignCorners
    /// Bilinear with src = dst/scale (TF1 `resize_bilinear` default, Core ML upsample BILINEAR default).
    case bilinearAsymmetric
}

/// `Op.upsample2d`: [N, H, W, C] → [N, H·sH, W·sW, C].
public struct Upsample2DAttributes: Codable, Hashable, Sendable {
    public var scale: [Int]  // [sH, sW]
    public var mode: UpsampleMode
    public init(scale: [Int], mode: UpsampleMode) { self.scale = scale; self.mode = mode }
}

/// Definition of `Op.upsample2d`. MIL `upsample_nearest_neighbor` / `upsample_bilinear` /
/// `resize_bilinear`, ONNX `Resize`, Core ML `upsample` / `resizeBilinear`.
enum Upsample2DDefinition: OpDefinition {
    static let kind = OpKind.upsample2d
    static let summary = "integer-factor 2-D upsampling, nearest or bilinear, NHWC"
    static let milOps = ["upsample_nearest_neighbor", "upsample_bilinear"]
    static let onnxOps = ["Resize"]

    static func checkAttributes(of node: Node) throws {
        guard case let .upsample2d(a) = node.op else { return }
        try node.checkPair(a.scale, "scale")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .upsample2d(a) = op else { return [:] }
        return ["scale": .ints(a.scale), "mode": .string(a.mode.rawValue)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .upsample2d(Upsample2DAttributes(scale: try a.ints("scale"), mode: try a.enumeration("mode", UpsampleMode.self)))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .upsample2d(a) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape
        return [TensorType([s[0], s[1] * a.scale[0], s[2] * a.scale[1], s[3]], ins[0].elementType)]
    }
}
