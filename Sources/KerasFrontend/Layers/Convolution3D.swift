import MLGraph

/// Keras `padding` of a 1-D / 3-D window layer → IR `SpatialPadding` ("same" / "valid").
func spatialWindowPadding(_ ctx: KerasLayerContext) throws -> SpatialPadding {
    switch try windowPadding(ctx) {
    case .same: return .same
    default: return .valid
    }
}

/// `Conv3D` (filters, kernel_size, strides, dilation_rate, groups, padding same / valid,
/// use_bias, activation) on [N, D, H, W, C] → conv3d. Keras kernel (kD, kH, kW, C/groups,
/// filters) → IR weight [filters, C/groups, kD, kH, kW] (transpose (4, 3, 0, 1, 2)). Softmax
/// activation: a separate softmax node on the last axis. Theano-trained files (spatially flipped
/// kernels) are refused.
struct Conv3DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv3d, .activation, .softmax] }
    var classNames: [String] { ["Conv3D", "Convolution3D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 5, "NDHWC")
        guard !ctx.kernelsNeedSpatialFlip else {
            throw ctx.unsupported("Theano-trained Conv3D kernels (flipped on three axes) are not supported", hint: "re-save the model with the TensorFlow backend")
        }
        let filters = try ctx.int("filters")
        let k = try ctx.ints("kernel_size", count: 3)
        let s = try ctx.ints("strides", count: 3, default: [1, 1, 1])
        let d = try ctx.ints("dilation_rate", count: 3, default: [1, 1, 1])
        let groups = try ctx.int("groups", default: 1)
        let useBias = try ctx.bool("use_bias", default: true)
        let padding = try spatialWindowPadding(ctx)
        let cin = ctx.inputShape[4]
        guard groups >= 1, cin % groups == 0, filters % groups == 0 else {
            throw ctx.unsupported("groups \(groups) must divide the input channels \(cin) and filters \(filters)", hint: "check the model")
        }
        let kshape = [k[0], k[1], k[2], cin / groups, filters]
        let w = try ctx.constant("weight", shape: [filters, cin / groups] + k) {
            WeightLayout.transpose(try ctx.weight("kernel", shape: kshape), shape: kshape, perm: [4, 3, 0, 1, 2])
        }
        var weights = ["weight": w]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
        return try ctx.withActivation(rank: 5) { act, out in
            Node(name: ctx.nodeName, op: .conv3d(ConvNDAttributes(kernel: k, strides: s, dilations: d, padding: padding,
                                                                  groups: groups, outputChannels: filters, activation: act)),
                 inputs: [ctx.inputs[0]], outputs: [out], weights: weights)
        }
    }
}

/// `MaxPooling3D` / `AveragePooling3D` (and `MaxPool3D` / `AvgPool3D`): pool_size, strides
/// (None = pool_size), padding same / valid → pool3d. Average pooling excludes padding.
struct Pooling3DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.pool3d] }
    var classNames: [String] { ["MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 5, "NDHWC")
        let kind: PoolKind = ctx.className.hasPrefix("Max") ? .max : .average
        let k = try ctx.ints("pool_size", count: 3, default: [2, 2, 2])
        let s = try ctx.ints("strides", count: 3, default: k)
        let padding = try spatialWindowPadding(ctx)
        return [Node(name: ctx.nodeName, op: .pool3d(PoolNDAttributes(kind: kind, kernel: k, strides: s, padding: padding)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `GlobalMaxPooling3D` / `GlobalAveragePooling3D` (and aliases), `keepdims` → reduce max / mean
/// over axes 1, 2, 3 of [N, D, H, W, C] ([N, C], or [N, 1, 1, 1, C] with keepdims).
struct GlobalPooling3DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reduce] }
    var classNames: [String] { ["GlobalMaxPooling3D", "GlobalAveragePooling3D", "GlobalMaxPool3D", "GlobalAvgPool3D"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 5, "NDHWC")
        let function: ReduceFunction = ctx.className.hasPrefix("GlobalMax") ? .max : .mean
        let keep = try ctx.bool("keepdims", default: false)
        return [Node(name: ctx.nodeName, op: .reduce(ReduceAttributes(function: function, axes: [1, 2, 3], keepDims: keep)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}
