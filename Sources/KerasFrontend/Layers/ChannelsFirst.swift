import MLGraph

/// Layers with `data_format='channels_first'` (Keras 2; Keras 1's `dim_ordering='th'`, which
/// `Keras1Config` renames): the tensors between layers keep Keras' channels-first layout, so
/// reshapes, Flatten → Dense and BatchNormalization(axis=1) see exactly what Keras saw. Each such
/// layer runs channels-last inside a pair of transposes: `<name>__to_channels_last`
/// ([N, C, …] → [N, …, C]), the layer's own converter (on the config with channels_last), then
/// `<name>__to_channels_first` back. Exceptions, as Keras computes them: `Flatten` flattens the
/// channels-last order (Keras 2's Flatten permutes channels-first inputs to channels-last before
/// flattening) and global poolings without `keepdims` give [N, C]; neither needs the transpose
/// back. Keras 1's Flatten has no `dim_ordering` and flattens the tensor as it is (channels first).
enum KerasChannelsFirst {
    /// The classes whose `data_format` this handles (their converters are channels-last only).
    static let classNames: Set<String> = [
        "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "Conv1DTranspose", "SeparableConv1D",
        "SeparableConv2D", "DepthwiseConv1D", "DepthwiseConv2D",
        "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
        "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
        "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "GlobalAveragePooling1D",
        "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
        "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D",
        "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "Cropping1D", "Cropping2D", "Cropping3D",
        "UpSampling1D", "UpSampling2D", "UpSampling3D", "Flatten",
    ]

    /// Whether `ctx`'s layer is a channels-first layer this adapter converts.
    static func applies(to ctx: KerasLayerContext) -> Bool {
        ctx.config["data_format"]?.string == "channels_first" && classNames.contains(ctx.className)
            && ctx.inputs.count == 1 && ctx.inputShape.count >= 3
    }

    /// Converts a call with `converter`, wrapped in transposes when the layer is channels-first.
    static func convert(_ ctx: KerasLayerContext, with converter: any KerasLayerConverter) throws -> [Node] {
        guard applies(to: ctx) else { return try converter.convert(ctx) }
        let shape = ctx.inputShape, rank = shape.count
        let toLast = [0] + Array(2..<rank) + [1]
        guard case var .object(c) = ctx.config else { return try converter.convert(ctx) }
        c["data_format"] = .string("channels_last")
        var layer = ctx.layer
        layer.config = .object(c)

        let t = ctx.nodeName + "__to_channels_last"
        let inType = TensorType(toLast.map { shape[$0] }, ctx.inputTypes[0].elementType)
        let flatOutput = ctx.className == "Flatten"
            || (ctx.className.hasPrefix("Global") && ctx.config["keepdims"]?.bool != true)
        let innerOut = flatOutput ? ctx.outputNames[0] : ctx.nodeName + "__channels_last"
        let inner = KerasLayerContext(
            layer: layer, scope: ctx.scope, callIndex: ctx.callIndex, nodeName: ctx.nodeName, inputs: [t], inputTypes: [inType],
            outputNames: [innerOut], kerasVersion: ctx.kerasVersion, backend: ctx.backend, file: ctx.file,
            storedWeights: ctx.storedWeights, weightRoles: ctx.weightRoles, readWeight: ctx.readWeight, constantCache: ctx.constantCache)
        var nodes = [Node(name: t, op: .transpose(perm: toLast), inputs: [ctx.inputs[0]], outputs: [t])]
        let made = try converter.convert(inner)
        if made.isEmpty { return [] }  // an identity layer: the input is the output, layout unchanged
        nodes += made
        if flatOutput { return nodes }
        let types = try Lowering1D.inferTypes(ctx, nodes, known: Lowering1D.inputTypes(ctx))
        guard let out = types[innerOut], out.shape.count >= 3 else {
            throw ctx.unsupported("the channels-first layer's output could not be laid out back to channels first",
                                  hint: "rebuild the model with data_format='channels_last'")
        }
        let r = out.shape.count
        nodes.append(Node(name: ctx.nodeName + "__to_channels_first", op: .transpose(perm: [0, r - 1] + Array(1..<(r - 1))),
                          inputs: [innerOut], outputs: [ctx.outputNames[0]]))
        return nodes
    }
}
