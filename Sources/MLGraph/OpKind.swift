/// The kinds of op of the IR, without their attributes: the key of every op registry (reference
/// and fast kernels, converters, Core ML import and export, the bundle codec). The raw value is
/// the op's stable name in files, messages and `mlconv ops`.
public enum OpKind: String, CaseIterable, Codable, Hashable, Sendable, Comparable {
    case conv2d, deconv2d, dense, batchNorm, activation, softmax, prelu, pool2d, globalPool2d
    case pad, crop, upsample2d, reshape, transpose, elementwise, concat, repeatVector, identity
    case custom, recurrent, embedding, sequenceMask, applyMask

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
        }
    }

    /// The op's definition (`kind.definition`).
    public var definition: any OpDefinition.Type { kind.definition }
}

extension Op {
    /// The weight roles this op defines (`OpDefinition.weightRoles`).
    public var weightRoles: [WeightRole] { definition.weightRoles }
}
