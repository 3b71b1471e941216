import MLGraph

extension KerasLayerContext {
    /// A context for the layer `inner` wrapped by this one (TimeDistributed, Bidirectional): the
    /// inner config, named `<wrapper>/<inner>` in messages and constant keys, reading the
    /// wrapper's stored weights (matched to `weightRoles`). Inputs, types, outputs and node name
    /// default to the wrapper's.
    func wrapping(_ inner: KerasLayerConfig, nodeName: String? = nil, inputs: [String]? = nil, inputTypes: [TensorType]? = nil,
                  outputNames: [String]? = nil, weightRoles: [String] = []) -> KerasLayerContext {
        KerasLayerContext(
            layer: inner, scope: scope + [layer.name], callIndex: callIndex, nodeName: nodeName ?? self.nodeName,
            inputs: inputs ?? self.inputs, inputTypes: inputTypes ?? self.inputTypes, outputNames: outputNames ?? self.outputNames,
            kerasVersion: kerasVersion, backend: backend, file: file, storedWeights: storedWeights, weightRoles: weightRoles,
            readWeight: readWeight, constantCache: constantCache)
    }
}

/// `TimeDistributed(layer)` on [N, T, …]: applies the wrapped layer to every step.
/// * Layers that act on the last axis or elementwise (Dense, Activation, ReLU, LeakyReLU, ELU,
///   ThresholdedReLU, Softmax, and the inference identities such as Dropout) are converted
///   directly on the [N, T, …] tensor (the IR's dense applies to the last axis of any rank).
/// * Any other layer with a built-in converter (Conv2D, MaxPooling2D, Flatten, Conv1D, LSTM, …)
///   runs on the steps as a batch: transpose [N, T, …] → [T, N, …] (`<name>__to_steps`), reshape
///   to [T, …] (`<name>__merge_steps`; needs N = 1, which the IR's fixed batch of 1 gives; the
///   IR's reshape keeps axis 0, so the steps are moved there first), the wrapped layer's nodes
///   (main node named `<name>`), then reshape [T, 1, …'] (`<name>__split_steps`) and transpose
///   back to [1, T, …'] (`<name>__from_steps`).
/// The wrapped layer's weights are the TimeDistributed layer's. The output carries the input's
/// mask (Keras' TimeDistributed passes it on).
struct TimeDistributedConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshape, .transpose] }
    var classNames: [String] { ["TimeDistributed"] }

    /// Wrapped classes converted directly on the [N, T, …] tensor.
    static let perStepClasses: Set<String> = [
        "Dense", "Activation", "ReLU", "LeakyReLU", "ELU", "ThresholdedReLU", "Softmax",
        "Dropout", "SpatialDropout1D", "GaussianNoise", "GaussianDropout", "AlphaDropout", "ActivityRegularization",
    ]

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        guard let inner = BidirectionalConverter.inner(layer.config), let c = KerasLayerRegistry.converter(for: inner.className) else { return [] }
        return c.weightRoles(inner, version: version)
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard let inner = BidirectionalConverter.inner(ctx.config) else { throw ctx.invalid("layer", expected: "the wrapped layer's config") }
        guard inner.nestedModel == nil, let converter = KerasLayerRegistry.converter(for: inner.className) else {
            throw ctx.unsupported("wraps a '\(inner.className)' layer, which has no built-in converter",
                                  hint: "convert this layer with a `LayerHook`")
        }
        let operand = ctx.inputs.indices.dropFirst().first(where: ctx.isMaskOperand)
        guard ctx.inputs.count == 1 + (operand == nil ? 0 : 1) else {
            throw ctx.unsupported("is called with \(ctx.inputs.count) inputs", hint: "TimeDistributed reads one tensor")
        }
        let mask = try ctx.inputMask(explicit: operand)
        let shape = ctx.inputShape
        guard shape.count >= 3 else {
            throw ctx.unsupported("expects an input with a time axis [batch, steps, …], found \(formatShape(shape))", hint: "check the model")
        }
        let roles = converter.weightRoles(inner, version: ctx.kerasVersion)
        let nodes: [Node]
        if Self.perStepClasses.contains(inner.className) {
            nodes = try converter.convert(ctx.wrapping(inner, inputs: [ctx.inputs[0]], inputTypes: [ctx.inputTypes[0]],
                                                       outputNames: [ctx.outputNames[0]], weightRoles: roles))
        } else {
            nodes = try stepsAsBatch(ctx, inner: inner, converter: converter, roles: roles)
        }
        if let mask, !nodes.isEmpty { ctx.maskTable.maskOf[ctx.outputNames[0]] = mask }
        return nodes
    }

    /// The transpose / reshape lowering running the wrapped layer on the steps as a batch.
    func stepsAsBatch(_ ctx: KerasLayerContext, inner: KerasLayerConfig, converter: any KerasLayerConverter, roles: [String]) throws -> [Node] {
        let shape = ctx.inputShape, rank = shape.count
        guard shape[0] == 1 else {
            throw ctx.unsupported("wrapping '\(inner.className)' needs a batch of 1, found \(formatShape(shape))", hint: "convert with batch size 1")
        }
        let t = shape[1], rest = Array(shape.dropFirst(2))
        let swap = [1, 0] + Array(2..<rank)
        let toSteps = ctx.nodeName + "__to_steps", merged = ctx.nodeName + "__merge_steps"
        var nodes = [Node(name: toSteps, op: .transpose(perm: swap), inputs: [ctx.inputs[0]], outputs: [toSteps]),
                     Node(name: merged, op: .reshape(targetShape: rest), inputs: [toSteps], outputs: [merged])]
        let innerOut = ctx.nodeName + "__inner"
        let innerNodes = try converter.convert(ctx.wrapping(inner, inputs: [merged], inputTypes: [TensorType([t] + rest, ctx.inputTypes[0].elementType)],
                                                            outputNames: [innerOut], weightRoles: roles))
        if innerNodes.isEmpty { return [] }
        nodes += innerNodes
        let types = try Lowering1D.inferTypes(ctx, nodes, known: Lowering1D.inputTypes(ctx))
        guard let out = types[innerOut]?.shape, out.first == t else {
            throw ctx.unsupported("the wrapped '\(inner.className)' does not keep one result per step", hint: "check the model")
        }
        let o = Array(out.dropFirst())
        let split = ctx.nodeName + "__split_steps"
        nodes.append(Node(name: split, op: .reshape(targetShape: [1] + o), inputs: [innerOut], outputs: [split]))
        nodes.append(Node(name: ctx.nodeName + "__from_steps", op: .transpose(perm: [1, 0] + Array(2..<(o.count + 2))),
                          inputs: [split], outputs: [ctx.outputNames[0]]))
        return nodes
    }
}
