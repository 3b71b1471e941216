import MLGraph

/// `MaxPooling2D` / `AveragePooling2D` (and their `MaxPool2D` / `AvgPool2D` aliases):
/// pool_size, strides (None = pool_size), padding same/valid. Average pooling excludes padding.
struct Pooling2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.pool2d] }
    var classNames: [String] { ["MaxPooling2D", "AveragePooling2D", "MaxPool2D", "AvgPool2D"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let kind: PoolKind = ctx.className.hasPrefix("Max") ? .max : .average
        let k = try ctx.ints("pool_size", count: 2, default: [2, 2])
        let s = try ctx.ints("strides", count: 2, default: k)
        let padding = try windowPadding(ctx)
        return [Node(name: ctx.nodeName, op: .pool2d(Pool2DAttributes(kind: kind, kernel: k, strides: s, padding: padding)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `GlobalMaxPooling2D` / `GlobalAveragePooling2D` (and aliases), `keepdims`.
struct GlobalPooling2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.globalPool2d] }
    var classNames: [String] { ["GlobalMaxPooling2D", "GlobalAveragePooling2D", "GlobalMaxPool2D", "GlobalAvgPool2D"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let kind: PoolKind = ctx.className.hasPrefix("GlobalMax") ? .max : .average
        let keep = try ctx.bool("keepdims", default: false)
        return [Node(name: ctx.nodeName, op: .globalPool2d(kind: kind, keepDims: keep), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}
