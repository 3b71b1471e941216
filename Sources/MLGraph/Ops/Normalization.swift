// Normalisations computed from the input at run time: layer, instance, L2 and local response
// normalisation (coremltools `converters/mil/mil/ops/defs/iOS15/normalization.py`).

/// `Op.layerNorm` (MIL `layer_norm`): over the axes `axes` (each slice of the other axes
/// separately),
///
///     y = gamma·(x − mean)/sqrt(var + epsilon) + beta,   var = mean((x − mean)²)  (biased)
///
/// Optional weights "gamma" (absent = 1) and "beta" (absent = 0), both shaped
/// [x.shape[a] for a in the sorted resolved axes] (MIL: `x.shape[axes]`).
public struct LayerNormAttributes: Codable, Hashable, Sendable {
    /// Normalised axes (negative counts from the end; no axis twice); empty = every axis (MIL's
    /// default `range(rank)`).
    public var axes: [Int]
    /// Added to the variance (finite, ≥ 0; MIL default 1e-5).
    public var epsilon: Float
    public init(axes: [Int], epsilon: Float = 1e-5) { self.axes = axes; self.epsilon = epsilon }
}

/// `Op.l2Norm` (MIL `l2_norm`, Core ML `l2normalize`): y = x / sqrt(Σ x² + epsilon), the sum over
/// `axes` for each slice of the other axes. MIL normalises the last three axes (C, H, W of a
/// [*B, C, H, W] tensor); in the IR's channels-last layout that set is H, W, C: `axes` [−3, −2, −1].
public struct L2NormAttributes: Codable, Hashable, Sendable {
    /// Axes summed over (negative counts from the end; no axis twice); empty = every axis.
    public var axes: [Int]
    /// Added to the sum of squares (finite, ≥ 0; MIL default 1e-6).
    public var epsilon: Float
    public init(axes: [Int], epsilon: Float = 1e-6) { self.axes = axes; self.epsilon = epsilon }
}

/// `Op.localResponseNorm` (MIL `local_response_norm`, Core ML `lrn`, ONNX `LRN`) along the last
/// axis (channels), C channels:
///
///     y[c] = x[c] / (k + alpha/size · Σ_{j} x[j]²)^beta,
///     j from max(0, c − ⌊(size−1)/2⌋) to min(C−1, c + ⌈(size−1)/2⌉)
///
/// (for an even `size` the window has one more channel after c than before, as ONNX, Caffe and
/// oneDNN define it).
public struct LocalResponseNormAttributes: Codable, Hashable, Sendable {
    /// Number of channels in the window (1…maxCountAttribute).
    public var size: Int
    /// Scale (MIL default 1e-4), exponent (0.75) and additive constant (1): all finite.
    public var alpha: Float
    public var beta: Float
    public var k: Float
    public init(size: Int, alpha: Float = 1e-4, beta: Float = 0.75, k: Float = 1) {
        self.size = size; self.alpha = alpha; self.beta = beta; self.k = k
    }
}

extension Node {
    func checkEpsilon(_ e: Float) throws {
        guard e >= 0, e.isFinite else { throw fail("epsilon must be finite and ≥ 0, found \(e)") }
    }
}

/// Definition of `Op.layerNorm`. MIL `layer_norm`, ONNX `LayerNormalization`, Core ML
/// `layerNormalization` (v2) and `mvn` with normalizeVariance (over C, H, W or H, W).
enum LayerNormDefinition: OpDefinition {
    static let kind = OpKind.layerNorm
    static let summary = "layer normalisation over a set of axes (statistics computed at run time)"
    static let milOps = ["layer_norm"]
    static let onnxOps = ["LayerNormalization", "MeanVarianceNormalization"]

    static func checkAttributes(of node: Node) throws {
        guard case let .layerNorm(a) = node.op else { return }
        try node.checkAxisList(a.axes)
        try node.checkEpsilon(a.epsilon)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .layerNorm(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let axes = try node.resolveReductionAxes(a.axes, rank: ins[0].rank)
        let wshape = axes.map { ins[0].shape[$0] }
        try node.expectWeight("gamma", shape: wshape, optional: true)
        try node.expectWeight("beta", shape: wshape, optional: true)
        return [ins[0]]
    }

    static var weightRoles: [WeightRole] {
        [WeightRole("gamma", quantizationAxis: nil, quantizedByDefault: false), WeightRole("beta", quantizationAxis: nil, quantizedByDefault: false)]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .layerNorm(a) = op else { return [:] }
        return ["axes": .ints(a.axes), "epsilon": .number(a.epsilon)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .layerNorm(LayerNormAttributes(axes: try a.ints("axes"), epsilon: try a.float("epsilon")))
    }
}

/// Definition of `Op.instanceNorm(epsilon:)`. MIL `instance_norm`, ONNX
/// `InstanceNormalization`, Core ML `batchnorm` with instanceNormalization.
enum InstanceNormDefinition: OpDefinition {
    static let kind = OpKind.instanceNorm
    static let summary = "instance normalisation (per sample and channel, over the spatial axes)"
    static let milOps = ["instance_norm"]
    static let onnxOps = ["InstanceNormalization"]

    static func checkAttributes(of node: Node) throws {
        guard case let .instanceNorm(epsilon) = node.op else { return }
        try node.checkEpsilon(epsilon)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case .instanceNorm = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard ins[0].rank >= 3 else {
            throw node.fail("expects an input [N, spatial…, C] of rank ≥ 3, found shape \(formatShape(ins[0].shape))")
        }
        let c = ins[0].shape[ins[0].rank - 1]
        try node.expectWeight("gamma", shape: [c], optional: true)
        try node.expectWeight("beta", shape: [c], optional: true)
        return [ins[0]]
    }

    static var weightRoles: [WeightRole] { [WeightRole("gamma", quantizedByDefault: false), WeightRole("beta", quantizedByDefault: false)] }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .instanceNorm(epsilon) = op else { return [:] }
        return ["epsilon": .number(epsilon)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .instanceNorm(epsilon: try a.float("epsilon")) }
}

/// Definition of `Op.l2Norm`. MIL `l2_norm`, ONNX `LpNormalization` (p = 2, one axis), Core ML
/// `l2normalize`.
enum L2NormDefinition: OpDefinition {
    static let kind = OpKind.l2Norm
    static let summary = "L2 normalisation x / sqrt(Σx² + epsilon) over a set of axes"
    static let milOps = ["l2_norm"]
    static let onnxOps = ["LpNormalization"]

    static func checkAttributes(of node: Node) throws {
        guard case let .l2Norm(a) = node.op else { return }
        try node.checkAxisList(a.axes)
        try node.checkEpsilon(a.epsilon)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .l2Norm(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        _ = try node.resolveReductionAxes(a.axes, rank: ins[0].rank)
        return [ins[0]]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .l2Norm(a) = op else { return [:] }
        return ["axes": .ints(a.axes), "epsilon": .number(a.epsilon)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .l2Norm(L2NormAttributes(axes: try a.ints("axes"), epsilon: try a.float("epsilon")))
    }
}

/// Definition of `Op.localResponseNorm`. MIL `local_response_norm`, ONNX `LRN`, Core ML `lrn`.
enum LocalResponseNormDefinition: OpDefinition {
    static let kind = OpKind.localResponseNorm
    static let summary = "local response normalisation across the channel (last) axis"
    static let milOps = ["local_response_norm"]
    static let onnxOps = ["LRN"]

    static func checkAttributes(of node: Node) throws {
        guard case let .localResponseNorm(a) = node.op else { return }
        try node.checkCount(a.size, "size")
        try node.checkFinite(a.alpha, "alpha")
        try node.checkFinite(a.beta, "beta")
        try node.checkFinite(a.k, "k")
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case .localResponseNorm = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard ins[0].rank >= 2 else {
            throw node.fail("expects an input [N, …, C] of rank ≥ 2, found shape \(formatShape(ins[0].shape))")
        }
        return [ins[0]]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .localResponseNorm(a) = op else { return [:] }
        return ["size": .int(a.size), "alpha": .number(a.alpha), "beta": .number(a.beta), "k": .number(a.k)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .localResponseNorm(LocalResponseNormAttributes(size: try a.int("size"), alpha: try a.float("alpha"),
                                                       beta: try a.float("beta"), k: try a.float("k")))
    }
}
