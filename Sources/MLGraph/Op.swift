/// One operation of the graph IR. Each case documents its inputs, weights (by name in
/// `Node.weights`), attributes and output. Activations are channels-last with batch first.
public enum Op: Codable, Hashable, Sendable {
    case conv2d(Conv2DAttributes)
    case deconv2d(Deconv2DAttributes)
    case dense(DenseAttributes)
    case batchNorm(BatchNormAttributes)
    /// Elementwise activation; one input, same shape out.
    case activation(Activation)
    /// Softmax along `axis` (non-negative); one input, same shape out.
    case softmax(axis: Int)
    /// Keras PReLU: y = x if x ≥ 0 else alpha·x. Weight "alpha" has the input's shape without the
    /// batch dimension, with 1 on shared axes (broadcast).
    case prelu
    case pool2d(Pool2DAttributes)
    /// [N, H, W, C] → [N, C], or [N, 1, 1, C] when `keepDims`.
    case globalPool2d(kind: PoolKind, keepDims: Bool)
    case pad(PadAttributes)
    /// Removes `crops[axis] = [before, after]` elements on each axis (rank entries).
    case crop(crops: [[Int]])
    case upsample2d(Upsample2DAttributes)
    /// Output [N] + `targetShape` (Keras Reshape/Flatten; row-major, so channels-last order).
    case reshape(targetShape: [Int])
    /// Output axis i = input axis perm[i] (rank entries, batch first).
    case transpose(perm: [Int])
    /// n inputs (subtract: exactly 2) of the same shape or NumPy-broadcastable shapes.
    case elementwise(ElementwiseKind)
    /// Concatenation along `axis` (non-negative, batch is 0).
    case concat(axis: Int)
    /// Keras RepeatVector: [N, D] → [N, n, D].
    case repeatVector(n: Int)
    /// Output = input (Dropout and noise layers at inference; kept only where a name must survive).
    case identity
    case custom(CustomLayerAttributes)
    /// Recurrent layer (see `RecurrentAttributes`).
    case recurrent(RecurrentAttributes)
    /// Keras Embedding: indices x [N, L] (float values holding integers 0…vocab−1) → [N, L, D].
    /// Weight "weight" [D, vocab] (Core ML EmbeddingLayerParams layout: [outputChannels,
    /// inputDim]); an index outside 0…vocab−1 gives zeros (documented divergence from TF, which errors).
    case embedding(outputChannels: Int)
    /// Keras masking: x [N, T, …] → mask [N, T], 1 where any element of step t differs from
    /// `value`, else 0 (Keras `Masking(mask_value)`; Embedding `mask_zero` uses value 0 on [N, T]).
    case sequenceMask(value: Float)
    /// Multiplies each step of x [N, T, …] (input 0) by mask [N, T] (input 1): Keras `Masking`'s
    /// own output (masked steps become 0).
    case applyMask
    // MARK: elementwise math ops
    /// y = f(scale·x + shift) elementwise (`UnaryAttributes`, `UnaryFunction`); one input, same
    /// shape out, any layout. MIL `abs`, `sqrt`, `rsqrt`, `inverse`, `exp`, `log`, `round`, …;
    /// ONNX `Abs`, `Neg`, `Sqrt`, `Reciprocal`, …; Core ML `unary`.
    case unary(UnaryAttributes)
    /// f(x, y) with NumPy broadcasting (output: the broadcast shape). Inputs: x, y — or x alone
    /// when the node has weight "y" (a constant second operand of any broadcastable shape).
    /// MIL `add`, `sub`, `mul`, `real_div`, `floor_div`, `mod`, `pow`, `maximum`, `minimum`.
    case binary(BinaryFunction)
    /// y = min(max(x, alpha), beta); one input, same shape out. MIL `clip`, ONNX `Clip`.
    case clip(alpha: Float, beta: Float)

    /// A short name for messages and `inspect` (e.g. "conv2d").
    public var name: String {
        switch self {
        case .conv2d: return "conv2d"
        case .deconv2d: return "deconv2d"
        case .dense: return "dense"
        case .batchNorm: return "batchNorm"
        case .activation: return "activation"
        case .softmax: return "softmax"
        case .prelu: return "prelu"
        case .pool2d: return "pool2d"
        case .globalPool2d: return "globalPool2d"
        case .pad: return "pad"
        case .crop: return "crop"
        case .upsample2d: return "upsample2d"
        case .reshape: return "reshape"
        case .transpose: return "transpose"
        case .elementwise: return "elementwise"
        case .concat: return "concat"
        case .repeatVector: return "repeatVector"
        case .identity: return "identity"
        case let .custom(a): return "custom(\(a.className))"
        case let .recurrent(a): return a.bidirectional == nil ? a.kind.rawValue : "bidirectional-" + a.kind.rawValue
        case .embedding: return "embedding"
        case .sequenceMask: return "sequenceMask"
        case .applyMask: return "applyMask"
        // MARK: elementwise math ops
        case .unary: return "unary"
        case .binary: return "binary"
        case .clip: return "clip"
        }
    }
}

/// The kinds of op of the IR, without their attributes: the key of every op registry (reference
/// and fast kernels, converters, Core ML import and export, the bundle codec). The raw value is
/// the op's stable name in files, messages and `mlconv ops`.
public enum OpKind: String, CaseIterable, Codable, Hashable, Sendable, Comparable {
    case conv2d, deconv2d, dense, batchNorm, activation, softmax, prelu, pool2d, globalPool2d
    case pad, crop, upsample2d, reshape, transpose, elementwise, concat, repeatVector, identity
    case custom, recurrent, embedding, sequenceMask, applyMask
    // MARK: elementwise math ops
    case unary, binary, clip

    /// The op's definition (Sources/MLGraph/Ops/): summary, correspondences, shape inference,
    /// attribute validation and weight roles. The switch is exhaustive: a new kind without a
    /// definition does not compile.
    public var definition: any OpDefinition.Type {
        switch self {
        case .conv2d: return Conv2DDefinition.self
        case .deconv2d: return Deconv2DDefinition.self
        case .dense: return DenseDefinition.self
        case .batchNorm: return BatchNormDefinition.self
        case .activation: return ActivationDefinition.self
        case .softmax: return SoftmaxDefinition.self
        case .prelu: return PReLUDefinition.self
        case .pool2d: return Pool2DDefinition.self
        case .globalPool2d: return GlobalPool2DDefinition.self
        case .pad: return PadDefinition.self
        case .crop: return CropDefinition.self
        case .upsample2d: return Upsample2DDefinition.self
        case .reshape: return ReshapeDefinition.self
        case .transpose: return TransposeDefinition.self
        case .elementwise: return ElementwiseDefinition.self
        case .concat: return ConcatDefinition.self
        case .repeatVector: return RepeatVectorDefinition.self
        case .identity: return IdentityDefinition.self
        case .custom: return CustomDefinition.self
        case .recurrent: return RecurrentDefinition.self
        case .embedding: return EmbeddingDefinition.self
        case .sequenceMask: return SequenceMaskDefinition.self
        case .applyMask: return ApplyMaskDefinition.self
        // MARK: elementwise math ops
        case .unary: return UnaryDefinition.self
        case .binary: return BinaryDefinition.self
        case .clip: return ClipDefinition.self
        }
    }

    public static func < (a: OpKind, b: OpKind) -> Bool { a.rawValue < b.rawValue }
}

extension Op {
    /// The op's kind (its case without attributes).
    public var kind: OpKind {
        switch self {
        case .conv2d: return .conv2d
        case .deconv2d: return .deconv2d
        case .dense: return .dense
        case .batchNorm: return .batchNorm
        case .activation: return .activation
        case .softmax: return .softmax
        case .prelu: return .prelu
        case .pool2d: return .pool2d
        case .globalPool2d: return .globalPool2d
        case .pad: return .pad
        case .crop: return .crop
        case .upsample2d: return .upsample2d
        case .reshape: return .reshape
        case .transpose: return .transpose
        case .elementwise: return .elementwise
        case .concat: return .concat
        case .repeatVector: return .repeatVector
        case .identity: return .identity
        case .custom: return .custom
        case .recurrent: return .recurrent
        case .embedding: return .embedding
        case .sequenceMask: return .sequenceMask
        case .applyMask: return .applyMask
        // MARK: elementwise math ops
        case .unary: return .unary
        case .binary: return .binary
        case .clip: return .clip
        }
    }

    /// The op's definition (`kind.definition`).
    public var definition: any OpDefinition.Type { kind.definition }
}

extension Op {
    /// The weight roles this op defines (`OpDefinition.weightRoles`).
    public var weightRoles: [WeightRole] { definition.weightRoles }
}
