import MLGraph

/// `InputLayer`: model inputs become graph inputs (handled by the converter itself); an
/// InputLayer inside a nested model is an identity on the tensor the nested model is called with.
struct InputLayerConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [] }
    var classNames: [String] { ["InputLayer"] }
    var minimumInputCount: Int { 0 }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] { [] }
}

/// `Dense` on an input of any rank ≥ 2 (applied to the last axis): kernel (Cin, Cout) → [Cout, Cin].
struct DenseConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.dense, .activation, .softmax] }
    var classNames: [String] { ["Dense"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let units = try ctx.int("units")
        let useBias = try ctx.bool("use_bias", default: true)
        guard ctx.inputShape.count >= 2 else {
            throw ctx.unsupported("expects an input of rank ≥ 2 (batch, …, features), found \(formatShape(ctx.inputShape))", hint: "check the model")
        }
        let cin = ctx.inputShape.last!
        let kshape = [cin, units]
        let w = try ctx.constant("weight", shape: [units, cin]) {
            WeightLayout.denseKernel(try ctx.weight("kernel", shape: kshape), kerasShape: kshape)
        }
        var weights = ["weight": w]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [units]) { try ctx.weight("bias", shape: [units]) } }
        return try ctx.withActivation(rank: ctx.inputShape.count) { act, out in
            Node(name: ctx.nodeName, op: .dense(DenseAttributes(outputChannels: units, activation: act)),
                 inputs: [ctx.inputs[0]], outputs: [out], weights: weights)
        }
    }
}

/// Layers that are the identity at inference (Dropout and noise layers): no node, the output is
/// the input.
struct IdentityLayerConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.identity] }
    var classNames: [String] {
        ["Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise", "GaussianDropout",
         "AlphaDropout", "ActivityRegularization"]
    }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] { [] }
}

/// `Rescaling(scale, offset)`: y = scale·x + offset → activation linear(scale, offset); per-channel
/// (list) values → a batchNorm on the last axis with mean 0, variance 1, epsilon 0.
struct RescalingConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.activation, .batchNorm] }
    var classNames: [String] { ["Rescaling"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        func values(_ key: String, _ def: Float) throws -> [Float] {
            guard let v = ctx.value(key) else { return [def] }
            if let d = v.double { return [Float(d)] }
            if let a = v.array, a.allSatisfy({ $0.double != nil }) { return a.map { Float($0.double!) } }
            // Keras 3 may serialize a NumPy array as {"class_name": "__numpy__", "config": {"value": [...]}}.
            if let a = v["config"]?["value"]?.array, a.allSatisfy({ $0.double != nil }) { return a.map { Float($0.double!) } }
            if let d = v["config"]?["value"]?.double { return [Float(d)] }
            throw ctx.invalid(key, expected: "a number or a list of numbers")
        }
        let scale = try values("scale", 1), offset = try values("offset", 0)
        if scale.count == 1, offset.count == 1 {
            return [Node(name: ctx.nodeName, op: .activation(.linear(alpha: scale[0], beta: offset[0])),
                         inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
        }
        let c = ctx.inputShape.last ?? 0
        func expand(_ v: [Float]) throws -> [Float] {
            if v.count == 1 { return Array(repeating: v[0], count: c) }
            guard v.count == c else {
                throw ctx.unsupported("per-channel scale/offset of \(v.count) values does not match the last axis \(c) of \(formatShape(ctx.inputShape))",
                                      hint: "use a scalar or one value per channel (last axis)")
            }
            return v
        }
        let g = try expand(scale), b = try expand(offset)
        return [Node(name: ctx.nodeName, op: .batchNorm(BatchNormAttributes(axis: ctx.inputShape.count - 1, epsilon: 0)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]],
                     weights: ["mean": ConstantTensor(shape: [c], floats: Array(repeating: 0, count: c)),
                               "variance": ConstantTensor(shape: [c], floats: Array(repeating: 1, count: c)),
                               "gamma": ConstantTensor(shape: [c], floats: g), "beta": ConstantTensor(shape: [c], floats: b)])]
    }
}
