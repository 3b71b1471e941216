import MLGraph

/// `BatchNormalization` (inference): batchNorm on the normalized `axis` (int, negative, or a
/// one-element list), `epsilon`; gamma/beta absent when `scale`/`center` are False.
struct BatchNormalizationConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.batchNorm] }
    var classNames: [String] { ["BatchNormalization"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        var r: [String] = []
        if layer.config["scale"]?.bool != false { r.append("gamma") }
        if layer.config["center"]?.bool != false { r.append("beta") }
        return r + ["moving_mean", "moving_variance"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let rank = ctx.inputShape.count
        var raw = -1
        if let v = ctx.value("axis") {
            if let i = v.int { raw = i } else if let a = v.array, a.count == 1, let i = a[0].int { raw = i } else {
                throw ctx.unsupported("normalizing over several axes \(v) is not supported", hint: "use a single axis")
            }
        }
        let axis = try ctx.axis(raw, rank: rank)
        if let mode = ctx.value("mode")?.int, mode != 0 {
            throw ctx.unsupported("Keras 1 BatchNormalization mode \(mode) is not supported", hint: "only mode 0 (feature-wise) converts")
        }
        let eps = try ctx.float("epsilon", default: 1e-3)
        let c = ctx.inputShape[axis]
        var w: [String: ConstantTensor] = [:]
        w["mean"] = try ctx.constant("mean", shape: [c]) { try ctx.weight("moving_mean", shape: [c]) }
        w["variance"] = try ctx.constant("variance", shape: [c]) { try ctx.weight("moving_variance", shape: [c]) }
        if try ctx.bool("scale", default: true) { w["gamma"] = try ctx.constant("gamma", shape: [c]) { try ctx.weight("gamma", shape: [c]) } }
        if try ctx.bool("center", default: true) { w["beta"] = try ctx.constant("beta", shape: [c]) { try ctx.weight("beta", shape: [c]) } }
        return [Node(name: ctx.nodeName, op: .batchNorm(BatchNormAttributes(axis: axis, epsilon: eps)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]], weights: w)]
    }
}
