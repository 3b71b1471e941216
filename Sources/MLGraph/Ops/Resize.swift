// Spatial data movement on NHWC: spaceToDepth, depthToSpace, resize (issue 9). MIL defines these
// on NCHW (ops/defs/iOS15/tensor_transformation.py, image_resizing.py); the IR applies the same
// formulas to the H and W axes of [N, H, W, C].

/// Definition of `Op.spaceToDepth(blockSize:)`. MIL `space_to_depth`, ONNX `SpaceToDepth`,
/// Core ML `reorganizeData` SPACE_TO_DEPTH.
enum SpaceToDepthDefinition: OpDefinition {
    static let kind = OpKind.spaceToDepth
    static let summary = "moves b×b spatial blocks into channels (NHWC, DCR order as TensorFlow)"
    static let milOps = ["space_to_depth"]
    static let onnxOps = ["SpaceToDepth"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .spaceToDepth(b) = op else { return [:] }
        return ["block_size": .int(b)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .spaceToDepth(blockSize: try a.int("block_size")) }
    static func checkAttributes(of node: Node) throws {
        guard case let .spaceToDepth(b) = node.op else { return }
        try node.checkWindow([b], count: 1, "blockSize", min: 1)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .spaceToDepth(b) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape
        guard s[1] % b == 0, s[2] % b == 0 else { throw node.fail("H×W \(s[1])×\(s[2]) is not divisible by the block size \(b)") }
        return [TensorType([s[0], s[1] / b, s[2] / b, s[3] * b * b], ins[0].elementType)]  // b ≤ H, W: no overflow
    }
}

/// Definition of `Op.depthToSpace(blockSize:)`. MIL `depth_to_space`, ONNX `DepthToSpace`
/// (mode DCR), Core ML `reorganizeData` DEPTH_TO_SPACE.
enum DepthToSpaceDefinition: OpDefinition {
    static let kind = OpKind.depthToSpace
    static let summary = "moves channels into b×b spatial blocks (NHWC, DCR order as TensorFlow)"
    static let milOps = ["depth_to_space"]
    static let onnxOps = ["DepthToSpace"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .depthToSpace(b) = op else { return [:] }
        return ["block_size": .int(b)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .depthToSpace(blockSize: try a.int("block_size")) }
    static func checkAttributes(of node: Node) throws {
        guard case let .depthToSpace(b) = node.op else { return }
        try node.checkWindow([b], count: 1, "blockSize", min: 1)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .depthToSpace(b) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape
        guard s[3] % (b * b) == 0 else { throw node.fail("channels \(s[3]) are not divisible by blockSize² = \(b * b)") }
        let (h, o1) = s[1].multipliedReportingOverflow(by: b), (w, o2) = s[2].multipliedReportingOverflow(by: b)
        guard !o1, !o2 else { throw node.fail("output size overflows") }
        return [TensorType([s[0], h, w, s[3] / (b * b)], ins[0].elementType)]
    }
}

/// Interpolation of `Op.resize`.
public enum ResizeMethod: String, Codable, Hashable, Sendable, CaseIterable {
    case nearest, bilinear
}

/// Where output pixel i samples the input along one axis, for input size `Xin` and output size
/// `Xout` (MIL `resize_bilinear` sampling modes; the ratio is always Xin/Xout, also when the
/// output size came from scale factors, as MIL `upsample_bilinear`, "recompute_scale_factor").
public enum ResizeSamplingMode: String, Codable, Hashable, Sendable, CaseIterable {
    /// MIL ALIGN_CORNERS: g = i·(Xin−1)/(Xout−1); g = (Xin−1)/2 when Xout = 1.
    case alignCorners = "ALIGN_CORNERS"
    /// MIL STRICT_ALIGN_CORNERS (TF `align_corners=True`): g = i·(Xin−1)/(Xout−1); g = 0 when Xout = 1.
    case strictAlignCorners = "STRICT_ALIGN_CORNERS"
    /// MIL UNALIGN_CORNERS (TF2 default, `half_pixel_centers=True`): g = (i + 0.5)·Xin/Xout − 0.5.
    case halfPixel = "HALF_PIXEL"
    /// MIL DEFAULT (TF1 default): g = i·Xin/Xout.
    case asymmetric = "ASYMMETRIC"

    /// The sampling coordinate of output index `i`, clamped to [0, Xin − 1] (as MIL).
    public func coordinate(_ i: Int, inSize: Int, outSize: Int) -> Double {
        let xin = Double(inSize), xout = Double(outSize), di = Double(i)
        let g: Double
        switch self {
        case .alignCorners: g = outSize == 1 ? (xin - 1) / 2 : di * (xin - 1) / (xout - 1)
        case .strictAlignCorners: g = outSize == 1 ? 0 : di * (xin - 1) / (xout - 1)
        case .halfPixel: g = (di + 0.5) * xin / xout - 0.5
        case .asymmetric: g = di * xin / xout
        }
        return Swift.min(xin - 1, Swift.max(0, g))
    }

    /// The input index nearest interpolation reads for output index `i`: floor(i·Xin/Xout) in
    /// ASYMMETRIC mode (MIL `resize_nearest_neighbor` / `upsample_nearest_neighbor`, Core ML
    /// upsample NN); floor((i + 0.5)·Xin/Xout) in HALF_PIXEL (TF `half_pixel_centers`); the
    /// ALIGN_CORNERS coordinate rounded half away from zero (TF `align_corners`); clamped to the input.
    public func nearestIndex(_ i: Int, inSize: Int, outSize: Int) -> Int {
        let xin = Double(inSize), xout = Double(outSize), di = Double(i)
        let v: Double
        switch self {
        case .asymmetric: v = (di * xin / xout).rounded(.down)
        case .halfPixel: v = ((di + 0.5) * xin / xout).rounded(.down)
        case .alignCorners, .strictAlignCorners: v = coordinate(i, inSize: inSize, outSize: outSize).rounded(.toNearestOrAwayFromZero)
        }
        return Swift.min(inSize - 1, Swift.max(0, Int(v)))
    }
}

/// `Op.resize`: [N, H, W, C] → [N, H', W', C] with H', W' = `size`, or floor(H·scale[0]),
/// floor(W·scale[1]) (float32 product, as MIL) when `scale` is given (exactly one of them).
public struct ResizeAttributes: Codable, Hashable, Sendable {
    public var method: ResizeMethod
    public var samplingMode: ResizeSamplingMode
    /// Target [H', W'].
    public var size: [Int]?
    /// Scale factors [sH, sW] (positive, may be fractional).
    public var scale: [Float]?
    public init(method: ResizeMethod, samplingMode: ResizeSamplingMode, size: [Int]? = nil, scale: [Float]? = nil) {
        self.method = method; self.samplingMode = samplingMode; self.size = size; self.scale = scale
    }
}

/// Definition of `Op.resize`. MIL `resize_nearest_neighbor`, `resize_bilinear`,
/// `upsample_nearest_neighbor`, `upsample_bilinear`; ONNX `Resize`; Core ML `resizeBilinear`, `upsample`.
enum ResizeDefinition: OpDefinition {
    static let kind = OpKind.resize
    static let summary = "nearest or bilinear resize of H and W (NHWC) to a size or by float scale factors"
    static let milOps = ["resize_nearest_neighbor", "resize_bilinear", "upsample_nearest_neighbor", "upsample_bilinear"]
    static let onnxOps = ["Resize"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .resize(a) = op else { return [:] }
        var v: [String: AttributeValue] = ["method": .string(a.method.rawValue), "sampling_mode": .string(a.samplingMode.rawValue)]
        if let s = a.size { v["size"] = .ints(s) }
        // Integral factors are written as integers: JSON reads `2` and `2.0` alike as an integer.
        if let s = a.scale {
            v["scale"] = .list(s.map { (f: Float) -> AttributeValue in
                f.rounded() == f && abs(f) < 16_777_216 ? AttributeValue.int(Int(f)) : AttributeValue.number(f)
            })
        }
        return v
    }
    static func decodeOp(from a: AttributeReader) throws -> Op {
        .resize(ResizeAttributes(method: try a.enumeration("method", ResizeMethod.self),
                                 samplingMode: try a.enumeration("sampling_mode", ResizeSamplingMode.self),
                                 size: a.has("size") ? try a.ints("size") : nil, scale: a.has("scale") ? try a.floats("scale") : nil))
    }
    static func checkAttributes(of node: Node) throws {
        guard case let .resize(a) = node.op else { return }
        switch (a.size, a.scale) {
        case let (s?, nil): try node.checkWindow(s, count: 2, "size")
        case let (nil, s?):
            guard s.count == 2, s.allSatisfy({ $0.isFinite && $0 > 0 && $0 <= Float(Node.maxWindowAttribute) }) else {
                throw node.fail("scale must be two finite factors in (0, \(Node.maxWindowAttribute)], found \(s)")
            }
        default: throw node.fail("exactly one of size and scale must be given")
        }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .resize(a) = node.op else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], 4, "NHWC input")
        let s = ins[0].shape
        var hw = a.size ?? []
        if let sc = a.scale {
            for (d, f) in zip([s[1], s[2]], sc) {
                let v = (Float(d) * f).rounded(.down)
                guard v >= 1, v <= Float(TensorType.maxElementCount) else { throw node.fail("scale \(f) of size \(d) gives an empty or huge axis") }
                hw.append(Int(v))
            }
        }
        return [TensorType([s[0], hw[0], hw[1], s[3]], ins[0].elementType)]
    }
}
