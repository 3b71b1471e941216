import MLGraph

/// How `WeightQuantizer` encodes the weights it selects.
public enum QuantizationMode: Hashable, Sendable, CustomStringConvertible {
    /// IEEE float16, round-to-nearest-even (`WeightEncoding.float16`, 16 bits per value).
    case fp16
    /// Linear (asymmetric) n-bit per output channel, byte-identical to coremltools
    /// `linear` (`WeightEncoding.linear`); bits 1…8.
    case linear(bits: Int)
    /// Linear symmetric 8-bit per output channel (coremltools `linear_symmetric`).
    case linearSymmetric
    /// Per-tensor look-up table of 2^bits entries from exact 1-D k-means
    /// (`WeightEncoding.lookupTable`); bits 1…8.
    case kmeans(bits: Int)

    /// Bits per stored value: 16, n, 8, n.
    public var bits: Int {
        switch self {
        case .fp16: return 16
        case let .linear(b), let .kmeans(b): return b
        case .linearSymmetric: return 8
        }
    }

    /// Short mode name used in reports: "fp16", "linear", "linear-symmetric", "kmeans".
    public var name: String {
        switch self {
        case .fp16: return "fp16"
        case .linear: return "linear"
        case .linearSymmetric: return "linear-symmetric"
        case .kmeans: return "kmeans"
        }
    }

    /// e.g. "8-bit kmeans", "fp16".
    public var description: String {
        switch self {
        case .fp16: return "fp16"
        default: return "\(bits)-bit \(name)"
        }
    }
}

/// Which weights `WeightQuantizer` compresses. A weight is quantized when its node is not
/// skipped (`skipLayers`, `skipOpTypes`, custom layers), its role is selected for the node's op
/// (`rolesByOp`, else `otherOpRoles`), and it has at least `minWeights` elements.
public struct QuantizationOptions: Sendable, Equatable {
    /// Weight roles to quantize per op kind. Default (`defaultRolesByOp`): conv2d, deconv2d and
    /// dense "weight" and "bias"; batchNorm "gamma", "beta", "mean", "variance"; prelu "alpha";
    /// embedding "weight"; recurrent kernels.
    public var rolesByOp: [OpKind: Set<String>]
    /// Roles quantized on ops that `rolesByOp` does not list (ops added to the IR later). `nil`
    /// (the default) quantizes every weight of such ops; an empty set quantizes none.
    public var otherOpRoles: Set<String>?
    /// Tensors with fewer elements than this are left unchanged (default 0: quantize all).
    /// In `.fp16` mode the "bias" of conv2d, deconv2d and dense follows its "weight" (converted
    /// exactly when the weight is), because Core ML rejects fp16 weights with an fp32 bias and the
    /// reverse (coreml-format-facts §2.2).
    public var minWeights: Int
    /// Node names whose weights are left unchanged.
    public var skipLayers: Set<String>
    /// Op names (`Op.name` or `OpKind` raw values, e.g. "batchNorm", "dense", "lstm") whose
    /// weights are left unchanged.
    public var skipOpTypes: Set<String>
    /// `.fp16` only: clamp finite values beyond ±65504 to ±65504 instead of throwing
    /// `QuantizationError.fp16Overflow`.
    public var clampFP16: Bool
    /// Leave a tensor unchanged when its compressed form (codes plus look-up table or per-channel
    /// scales and biases) would not be smaller than float32 — e.g. a 64-value bias under 8-bit
    /// k-means needs a 1 KB table. Default true.
    public var skipWhenNotSmaller: Bool = true

    /// The default role table (see `rolesByOp`): each op's `WeightRole`s that are
    /// `quantizedByDefault` (its definition in Sources/MLGraph/Ops/).
    /// Recurrent layers: only the stacked gate matrices. Core ML stores each gate's matrix and
    /// bias as its own WeightParams, and coremltools quantizes them per gate; the IR stacks the
    /// gates in one tensor, where per-row linear scales equal coremltools' per-gate ones exactly but
    /// a single bias scale or look-up table across gates would be worse — so biases stay fp32 and
    /// k-means leaves multi-gate matrices alone (`SkipReason.perGateTables`).
    public static let defaultRolesByOp: [OpKind: Set<String>] = Dictionary(uniqueKeysWithValues:
        OpKind.allCases.compactMap { kind in
            let roles = kind.definition.weightRoles.filter(\.quantizedByDefault).map(\.name)
            return roles.isEmpty ? nil : (kind, Set(roles))
        })

    /// Options with the defaults documented on each property (every default-op weight, no skips).
    public init(rolesByOp: [OpKind: Set<String>] = QuantizationOptions.defaultRolesByOp,
                otherOpRoles: Set<String>? = nil, minWeights: Int = 0, skipLayers: Set<String> = [],
                skipOpTypes: Set<String> = [], clampFP16: Bool = false) {
        self.rolesByOp = rolesByOp; self.otherOpRoles = otherOpRoles; self.minWeights = minWeights
        self.skipLayers = skipLayers; self.skipOpTypes = skipOpTypes; self.clampFP16 = clampFP16
    }

    /// Whether `role` of `node` is selected by role and op (ignoring `minWeights`), or why not.
    func selection(node: Node, role: String) -> SkipReason? {
        if case .custom = node.op { return .customLayer }
        if skipLayers.contains(node.name) { return .skippedLayer }
        if skipOpTypes.contains(node.op.name) || skipOpTypes.contains(node.op.kind.rawValue) { return .skippedOpType }
        if let roles = rolesByOp[node.op.kind] {
            return roles.contains(role) ? nil : .roleNotSelected
        }
        if let roles = otherOpRoles, !roles.contains(role) { return .roleNotSelected }
        return nil
    }
}

/// Why a weight was left unchanged (listed in `QuantizationReport.skipped`).
public enum SkipReason: String, Sendable, Hashable, CustomStringConvertible {
    /// Custom layers' weights are opaque to mlconv (as coremltools, which skips them with a message).
    case customLayer = "custom layer (weights left as they are)"
    /// The node is in `QuantizationOptions.skipLayers`.
    case skippedLayer = "layer in skipLayers"
    /// The node's op is in `QuantizationOptions.skipOpTypes`.
    case skippedOpType = "op type in skipOpTypes"
    /// The role is not in `rolesByOp[op]` (or `otherOpRoles`).
    case roleNotSelected = "weight role not selected for this op"
    /// The tensor has fewer than `QuantizationOptions.minWeights` elements.
    case belowMinWeights = "fewer elements than minWeights"
    /// fp16 only: the bias follows its layer's weight (Core ML needs both fp16 or both fp32).
    case fp16FollowsWeight = "kept like its layer's weight (Core ML needs weight and bias both fp16 or both fp32)"
    /// An empty tensor has nothing to quantize.
    case empty = "empty tensor"
    /// k-means on a recurrent matrix stacking several gates: Core ML keeps one look-up table per
    /// gate, which one IR tensor cannot hold; a shared table would be worse than coremltools'.
    case perGateTables = "stacked recurrent gates need one look-up table per gate (left fp32)"
    /// The compressed form would not be smaller than float32 (`skipWhenNotSmaller`).
    case noSaving = "compressed form would not be smaller than fp32"

    /// The human-readable reason (the raw value).
    public var description: String { rawValue }
}

/// The per-channel axis of a weight for linear modes, or nil for one scale per tensor:
/// conv2d and dense "weight" axis 0, deconv2d "weight" axis 1 (its canonical layout is
/// [Cin, Cout/g, kH, kW]); other tensors of rank ≥ 2 axis 0 (coremltools' default); rank ≤ 1
/// and prelu "alpha" per tensor.
func linearAxis(op: Op, role: String, shape: [Int]) -> Int? {
    if shape.count <= 1 { return nil }
    guard let r = op.weightRoles.first(where: { $0.name == role }) else { return 0 }
    return r.quantizationAxis
}
