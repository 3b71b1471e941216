import MLGraph

/// `MaxPooling1D` / `AveragePooling1D` (and the `MaxPool1D` / `AvgPool1D` aliases): pool_size
/// (default 2), strides (None = pool_size), padding same / valid on [N, W, C] → reshape
/// [N, 1, W, C] → pool2d `<name>` with window [1, pool_size] → reshape [N, W', C]. Average
/// pooling excludes padding (as Keras). The output carries no mask (Keras drops masks here).
struct Pooling1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.pool2d, .reshape] }
    var classNames: [String] { ["MaxPooling1D", "AveragePooling1D", "MaxPool1D", "AvgPool1D"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try Lowering1D.requireSequence(ctx)
        let kind: PoolKind = ctx.className.hasPrefix("Max") ? .max : .average
        let k = try ctx.ints("pool_size", count: 1, default: [2])[0]
        let s = try ctx.ints("strides", count: 1, default: [k])[0]
        let padding = try windowPadding(ctx)
        let (x2d, reshapeIn) = Lowering1D.to2D(ctx)
        let pooled = ctx.nodeName + "__pool"
        let pool = Node(name: ctx.nodeName, op: .pool2d(Pool2DAttributes(kind: kind, kernel: [1, k], strides: [1, s], padding: padding)),
                        inputs: [x2d], outputs: [pooled])
        let types = try Lowering1D.inferTypes(ctx, [reshapeIn, pool], known: Lowering1D.inputTypes(ctx))
        guard let s2 = types[pooled]?.shape else { throw ctx.unsupported("could not infer the pooling output", hint: "check the model") }
        return [reshapeIn, pool, Lowering1D.to1D(ctx, from: pooled, shape2D: s2, output: ctx.outputNames[0])]
    }
}

/// `GlobalMaxPooling1D` / `GlobalAveragePooling1D` (and aliases), `keepdims`: [N, W, C] →
/// reshape [N, 1, W, C] → globalPool2d `<name>` → [N, C], or [N, 1, C] (reshape) with keepdims.
/// A masked input of GlobalAveragePooling1D is rejected: Keras then averages over the unmasked
/// steps only, a division the IR has no op for.
struct GlobalPooling1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.globalPool2d, .reshape] }
    var classNames: [String] { ["GlobalMaxPooling1D", "GlobalAveragePooling1D", "GlobalMaxPool1D", "GlobalAvgPool1D"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        let kind: PoolKind = ctx.className.hasPrefix("GlobalMax") ? .max : .average
        let operand = ctx.inputs.indices.first(where: ctx.isMaskOperand)
        let c = operand.map { o in ctx.replacingInputs(ctx.inputs.indices.filter { $0 != o }) } ?? ctx
        try Lowering1D.requireSequence(c)
        if kind == .average, try ctx.inputMask(explicit: operand) != nil {
            throw ctx.unsupported("its input carries a Keras mask: Keras averages over the unmasked steps only, which needs a division the IR does not have",
                                  hint: "remove the Masking / mask_zero before this layer, or use GlobalMaxPooling1D")
        }
        let keep = try ctx.bool("keepdims", default: false)
        let (x2d, reshapeIn) = Lowering1D.to2D(c)
        guard keep else {
            return [reshapeIn, Node(name: c.nodeName, op: .globalPool2d(kind: kind, keepDims: false), inputs: [x2d], outputs: [c.outputNames[0]])]
        }
        let pooled = c.nodeName + "__pool"
        return [reshapeIn,
                Node(name: c.nodeName, op: .globalPool2d(kind: kind, keepDims: false), inputs: [x2d], outputs: [pooled]),
                Node(name: c.nodeName + "__keepdims", op: .reshape(targetShape: [1, c.inputShape[2]]), inputs: [pooled], outputs: [c.outputNames[0]])]
    }
}
