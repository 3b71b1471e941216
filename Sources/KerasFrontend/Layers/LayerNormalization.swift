import MLGraph

/// `LayerNormalization`: layerNorm over `axis` (an axis or a list, default −1), `epsilon`
/// (default 1e-3), gamma/beta shaped like the normalized axes (absent when `scale`/`center` are
/// False). Keras 3 `rms_scaling=True`, as keras.ops.layer_normalization computes it (3.15):
/// y = x·rsqrt(var(x) + epsilon)·gamma — the variance is centered, x is not; no beta.
struct LayerNormalizationConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.layerNorm, .reduce, .unary, .binary] }
    var classNames: [String] { ["LayerNormalization"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        var r: [String] = []
        let rms = layer.config["rms_scaling"]?.bool == true
        if layer.config["scale"]?.bool != false || rms { r.append("gamma") }
        if layer.config["center"]?.bool != false, !rms { r.append("beta") }
        return r
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let rank = ctx.inputShape.count
        let axes = try ctx.axisList("axis", rank: rank, default: [-1])
        let eps = try ctx.float("epsilon", default: 1e-3)
        let wshape = axes.map { ctx.inputShape[$0] }
        let roles = weightRoles(ctx.layer, version: ctx.kerasVersion)
        var w: [String: ConstantTensor] = [:]
        for r in roles { w[r] = try ctx.constant(r, shape: wshape) { try ctx.weight(r, shape: wshape) } }
        if try ctx.bool("rms_scaling", default: false) {
            // Keras 3: x * rsqrt(var(x, axis, keepdims) + epsilon) * gamma.
            guard let n = checkedProduct(wshape), n > 0 else { throw ctx.unsupported("empty normalized axes", hint: "check the input shape") }
            var chain = KerasNodeChain(ctx)
            let mean = chain.add("mean", .reduce(ReduceAttributes(function: .mean, axes: axes, keepDims: true)), [ctx.inputs[0]])
            let centered = chain.add("centered", .binary(.sub), [ctx.inputs[0], mean])
            let ss = chain.add("sum_square", .reduce(ReduceAttributes(function: .sumSquare, axes: axes, keepDims: true)), [centered])
            let inv = chain.add("rsqrt", .unary(UnaryAttributes(.rsqrt, epsilon: eps, scale: 1 / Float(n))), [ss])
            var y = chain.add("scaled", .binary(.mul), [ctx.inputs[0], inv])
            if let g = w["gamma"] {
                var bshape = Array(repeating: 1, count: rank)
                for a in axes { bshape[a] = ctx.inputShape[a] }
                y = chain.binary("gamma", .mul, y, constant: ConstantTensor(shape: bshape, floats: g.floats()))
            }
            return chain.finish(output: ctx.outputNames[0])
        }
        return [Node(name: ctx.nodeName, op: .layerNorm(LayerNormAttributes(axes: axes, epsilon: eps)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]], weights: w)]
    }
}

/// `GroupNormalization(groups, axis=-1, epsilon=1e-3, center, scale)`: the channels (last axis)
/// split into `groups` groups, each normalized over the spatial axes and its channels
/// (reshape to [N, spatial…, G, C/G] → layerNorm over all but N and G → reshape back), then
/// gamma·x + beta per channel (a batchNorm with mean 0, variance 1, epsilon 0).
struct GroupNormalizationConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshapeND, .layerNorm, .batchNorm] }
    var classNames: [String] { ["GroupNormalization"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        var r: [String] = []
        if layer.config["scale"]?.bool != false { r.append("gamma") }
        if layer.config["center"]?.bool != false { r.append("beta") }
        return r
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let shape = ctx.inputShape, rank = shape.count
        guard rank >= 2 else { throw ctx.unsupported("expects an input of rank ≥ 2, found \(formatShape(shape))", hint: "check the model") }
        let axis = try ctx.axis(try ctx.int("axis", default: -1), rank: rank)
        guard axis == rank - 1 else {
            throw ctx.unsupported("normalizing groups on axis \(axis) (not the last axis) is not supported",
                                  hint: "use axis=-1 (channels-last), the Keras default")
        }
        let c = shape[axis]
        var groups = try ctx.int("groups", default: 32)
        if groups == -1 { groups = c }
        guard groups > 0, c % groups == 0 else { throw ctx.invalid("groups", expected: "a divisor of the \(c) channels, or -1") }
        let eps = try ctx.float("epsilon", default: 1e-3)
        var chain = KerasNodeChain(ctx)
        let grouped = Array(shape.dropLast()) + [groups, c / groups]
        let r = chain.add("grouped", .reshapeND(shape: grouped), [ctx.inputs[0]])
        // Normalize every axis but the batch and the group axis.
        let axes = Array(1..<(rank - 1)) + [rank]
        let n = chain.add("norm", .layerNorm(LayerNormAttributes(axes: axes, epsilon: eps)), [r])
        var y = chain.add("ungrouped", .reshapeND(shape: shape), [n])
        let roles = weightRoles(ctx.layer, version: ctx.kerasVersion)
        if !roles.isEmpty {
            var w: [String: ConstantTensor] = [
                "mean": ConstantTensor(shape: [c], floats: Array(repeating: 0, count: c)),
                "variance": ConstantTensor(shape: [c], floats: Array(repeating: 1, count: c)),
            ]
            for role in roles { w[role] = try ctx.constant(role, shape: [c]) { try ctx.weight(role, shape: [c]) } }
            y = chain.add("affine", .batchNorm(BatchNormAttributes(axis: rank - 1, epsilon: 0)), [y], weights: w)
        }
        _ = y
        return chain.finish(output: ctx.outputNames[0])
    }
}

/// `UnitNormalization(axis=-1)`: x·rsqrt(max(Σx², e)) over `axis` (an axis or a list), as a
/// clip of Σx² (attributes, so fp16 weight passes leave the bound alone): e = 1e-24 in Keras 3
/// (`ops.normalize` bounds the inverse norm by 1/epsilon = 1e12), 1e-12 in tf.keras
/// (`tf.math.l2_normalize`: rsqrt(max(Σx², 1e-12))).
struct UnitNormalizationConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reduce, .clip, .unary, .binary] }
    var classNames: [String] { ["UnitNormalization"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let rank = ctx.inputShape.count
        let axes = try ctx.axisList("axis", rank: rank, default: [-1])
        let floor: Float = ctx.kerasVersion.isKeras3 ? 1e-24 : 1e-12
        var chain = KerasNodeChain(ctx)
        let ss = chain.add("sum_square", .reduce(ReduceAttributes(function: .sumSquare, axes: axes, keepDims: true)), [ctx.inputs[0]])
        let bounded = chain.add("bound", .clip(alpha: floor, beta: .greatestFiniteMagnitude), [ss])
        let inv = chain.add("rsqrt", .unary(UnaryAttributes(.rsqrt, epsilon: 0)), [bounded])
        chain.add("scaled", .binary(.mul), [ctx.inputs[0], inv])
        return chain.finish(output: ctx.outputNames[0])
    }
}
