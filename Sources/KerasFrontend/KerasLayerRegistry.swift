import MLGraph

/// Converts the calls of one family of Keras layers to IR nodes. One small type per family,
/// registered in `KerasLayerRegistry.converters`.
public protocol KerasLayerConverter {
    /// The Keras class names handled (each may appear in only one converter of the registry).
    var classNames: [String] { get }
    /// The IR op kinds this converter's nodes may have, whatever the layer's config (listed by
    /// `mlconv ops`; the conversion session checks every layer's nodes against it). Wrappers
    /// (TimeDistributed, Bidirectional) list their own; the wrapped layer's converter adds its.
    var ops: Set<OpKind> { get }
    /// The kinds `mlconv ops` lists this converter's classes under: `ops` without the kinds a
    /// wrapper adds around any layer (mask propagation). Default `ops`.
    var listedOps: Set<OpKind> { get }
    /// The Keras variables the layer stores for this config, in Keras' order (e.g. Conv2D:
    /// ["kernel", "bias"], BatchNormalization with scale=False: ["beta", "moving_mean",
    /// "moving_variance"]); [] for layers without weights. Used to match stored weights (by name,
    /// else by position) and to know which layers have weights (weights-only files).
    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String]
    /// The fewest input tensors a call must have for `convert` (default 1: converters read
    /// `ctx.inputs[0]`). The conversion session checks it before calling `convert`, so a config
    /// whose inbound node lists no tensors is a typed error, never an out-of-range index.
    var minimumInputCount: Int { get }
    /// The nodes of one call (see `LayerHook` for the contract; `[]` = identity).
    func convert(_ ctx: KerasLayerContext) throws -> [Node]
}

extension KerasLayerConverter {
    public var listedOps: Set<OpKind> { ops }
    /// Default: one input.
    public var minimumInputCount: Int { 1 }
    /// Default: no weights.
    public func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] { [] }
}

/// The built-in table of layer converters, keyed by Keras class name (the single place where
/// converters are registered).
public enum KerasLayerRegistry {
    /// Every built-in converter, one per layer family.
    public static let converters: [any KerasLayerConverter] = [
        InputLayerConverter(),
        Conv2DConverter(),
        DepthwiseConv2DConverter(),
        SeparableConv2DConverter(),
        Conv2DTransposeConverter(),
        MaskPropagating(DenseConverter()),
        MaskPropagating(BatchNormalizationConverter()),
        MaskPropagating(ActivationLayerConverter()),
        MaskPropagating(ReLUConverter()),
        MaskPropagating(LeakyReLUConverter()),
        MaskPropagating(PReLUConverter()),
        MaskPropagating(ELUConverter()),
        MaskPropagating(ThresholdedReLUConverter()),
        MaskPropagating(SoftmaxConverter(), .reject("Keras adds to the logits of masked positions")),
        Pooling2DConverter(),
        GlobalPooling2DConverter(),
        ZeroPadding2DConverter(),
        Cropping2DConverter(),
        UpSampling2DConverter(),
        FlattenConverter(),
        ReshapeConverter(),
        PermuteConverter(),
        RepeatVectorConverter(),
        IdentityLayerConverter(),
        MaskPropagating(MergeConverter(), .merge),
        MaskPropagating(ConcatenateConverter(), .merge),
        MaskPropagating(RescalingConverter(), .passThroughInKeras3),
        Conv1DConverter(),
        Pooling1DConverter(),
        GlobalPooling1DConverter(),
        ZeroPadding1DConverter(),
        Cropping1DConverter(),
        UpSampling1DConverter(),
        RecurrentConverter(),
        BidirectionalConverter(),
        TimeDistributedConverter(),
        EmbeddingConverter(),
        MaskingConverter(),
        KerasMaskOpConverter(),
        // MARK: convolution and pooling in 3-D (Layers/Convolution3D.swift)
        Conv3DConverter(),
        Pooling3DConverter(),
        GlobalPooling3DConverter(),
        // MARK: convolution family of issue 14 (Layers/ConvolutionFamily.swift, Layers/ConvLSTM.swift)
        Conv1DTransposeConverter(), Conv3DTransposeConverter(), DepthwiseConv1DConverter(), SeparableConv1DConverter(),
        ZeroPadding3DConverter(), Cropping3DConverter(), UpSampling3DConverter(), ConvLSTMConverter(),
        // MARK: Keras 1 `Merge` (Layers/LegacyMerge.swift)
        MaskPropagating(LegacyMergeConverter(), .merge),
        // MARK: normalization, attention and preprocessing layers (issue 14, Layers/LayerNormalization.swift,
        // DotAttention.swift, MultiHeadAttention.swift, PreprocessingLayers.swift)
        LayerNormalizationConverter(),
        GroupNormalizationConverter(),
        UnitNormalizationConverter(),
        DotAttentionConverter(),
        EinsumDenseConverter(),
        MultiHeadAttentionConverter(),
        NormalizationPreprocessingConverter(),
        ResizingConverter(),
        CenterCropConverter(),
        KerasIdentityConverter(),
        // MARK: TensorFlow ops tf.keras wrapped as layers (Layers/TFOpLayers.swift)
        TFOpLambdaConverter(),
        TensorFlowOpLayerConverter(),
    ]

    /// Class names registered by more than one converter (must be empty; checked by a test).
    public static var duplicateClassNames: [String] {
        var seen = Set<String>(), dup: [String] = []
        for c in converters {
            for n in c.classNames where !seen.insert(n).inserted { dup.append(n) }
        }
        return dup
    }

    /// Class name → converter (the first registration wins if a name were duplicated).
    public static let table: [String: any KerasLayerConverter] = {
        var t: [String: any KerasLayerConverter] = [:]
        for c in converters { for n in c.classNames where t[n] == nil { t[n] = c } }
        return t
    }()

    /// Every supported Keras class name, sorted.
    public static var supportedClassNames: [String] { table.keys.sorted() }

    /// The converter for a class name.
    public static func converter(for className: String) -> (any KerasLayerConverter)? { table[className] }

    /// The Keras class names whose converter lists op kind `kind` (`listedOps`), sorted.
    public static func classNames(producing kind: OpKind) -> [String] {
        converters.filter { $0.listedOps.contains(kind) }.flatMap(\.classNames).sorted()
    }
}
