import MLGraph

/// One activation node named after the layer.
private func activationNode(_ ctx: KerasLayerContext, _ a: Activation) -> [Node] {
    [Node(name: ctx.nodeName, op: .activation(a), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
}

/// `Activation(name)`: an activation node; softmax → softmax node on the last axis; linear → identity.
struct ActivationLayerConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.activation, .softmax] }
    var classNames: [String] { ["Activation"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        switch try ctx.kerasActivation(ctx.value("activation")) {
        case .identity: return []
        case let .fused(a): return activationNode(ctx, a)
        case .softmax:
            return [Node(name: ctx.nodeName, op: .softmax(axis: ctx.inputShape.count - 1), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
        }
    }
}

/// `ReLU(max_value, negative_slope, threshold)`: relu, or clippedReLU for the general form.
struct ReLUConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.activation] }
    var classNames: [String] { ["ReLU"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let maxValue = try ctx.optionalFloat("max_value")
        let slope = try ctx.float("negative_slope", default: 0)
        let threshold = try ctx.float("threshold", default: 0)
        if maxValue == nil, slope == 0, threshold == 0 { return activationNode(ctx, .relu) }
        return activationNode(ctx, .clippedReLU(maxValue: maxValue, negativeSlope: slope, threshold: threshold))
    }
}

/// `LeakyReLU`: `alpha` (Keras 2, default 0.3) or `negative_slope` (Keras 3, default 0.3).
struct LeakyReLUConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.activation] }
    var classNames: [String] { ["LeakyReLU"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let alpha = try ctx.optionalFloat("negative_slope") ?? ctx.optionalFloat("alpha") ?? 0.3
        return activationNode(ctx, .leakyReLU(alpha: alpha))
    }
}

/// `ELU(alpha)` (default 1).
struct ELUConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.activation] }
    var classNames: [String] { ["ELU"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        activationNode(ctx, .elu(alpha: try ctx.float("alpha", default: 1)))
    }
}

/// `ThresholdedReLU(theta)` (default 1).
struct ThresholdedReLUConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.activation] }
    var classNames: [String] { ["ThresholdedReLU"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        activationNode(ctx, .thresholdedReLU(theta: try ctx.float("theta", default: 1)))
    }
}

/// `Softmax(axis)` (default −1) → softmax node on the normalized axis.
struct SoftmaxConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.softmax] }
    var classNames: [String] { ["Softmax"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let raw = try ctx.int("axis", default: -1)
        let axis = try ctx.axis(raw, rank: ctx.inputShape.count)
        return [Node(name: ctx.nodeName, op: .softmax(axis: axis), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `PReLU`: weight `alpha` with the input's shape without batch, 1 on `shared_axes` (1-based).
struct PReLUConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.prelu] }
    var classNames: [String] { ["PReLU"] }
    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] { ["alpha"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        var shape = Array(ctx.inputShape.dropFirst())
        if let shared = ctx.value("shared_axes") {
            let axes = shared.int.map { [$0] } ?? shared.array?.compactMap(\.int) ?? []
            for a in axes {
                let i = a < 0 ? a + ctx.inputShape.count : a
                guard i >= 1, i <= shape.count else { throw ctx.invalid("shared_axes", expected: "axes in 1…\(shape.count)") }
                shape[i - 1] = 1
            }
        }
        let alpha = try ctx.constant("alpha", shape: shape) { try ctx.weight("alpha", shape: shape) }
        return [Node(name: ctx.nodeName, op: .prelu, inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]], weights: ["alpha": alpha])]
    }
}
