import MLGraph

/// Keras `padding` of a window layer → IR padding ("same" / "valid").
func windowPadding(_ ctx: KerasLayerContext) throws -> PaddingMode {
    switch try ctx.string("padding", default: "valid").lowercased() {
    case "valid": return .valid
    case "same": return .same
    case let p:
        throw ctx.unsupported("padding '\(p)' is not supported for \(ctx.className)", hint: "use padding='same' or 'valid'")
    }
}

func requireRank(_ ctx: KerasLayerContext, _ rank: Int, _ what: String = "NHWC") throws {
    guard ctx.inputShape.count == rank else {
        throw ctx.unsupported("expects a rank-\(rank) (\(what)) input, found shape \(formatShape(ctx.inputShape))",
                              hint: "this converter handles the 2-D (image) form of the layer only")
    }
}

/// `Conv2D`: → conv2d, kernel transposed (3,2,0,1) (and flipped spatially for Theano-trained
/// files, see `KerasLayerContext.kernelsNeedSpatialFlip`), fused activation (softmax as a
/// separate node).
struct Conv2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv2d, .activation, .softmax] }
    var classNames: [String] { ["Conv2D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let filters = try ctx.int("filters")
        let k = try ctx.ints("kernel_size", count: 2)
        let s = try ctx.ints("strides", count: 2, default: [1, 1])
        let d = try ctx.ints("dilation_rate", count: 2, default: [1, 1])
        let groups = try ctx.int("groups", default: 1)
        let useBias = try ctx.bool("use_bias", default: true)
        let padding = try windowPadding(ctx)
        let cin = ctx.inputShape[3]
        guard groups >= 1, cin % groups == 0, filters % groups == 0 else {
            throw ctx.unsupported("groups \(groups) must divide the input channels \(cin) and filters \(filters)", hint: "check the model")
        }
        let kshape = [k[0], k[1], cin / groups, filters]
        let w = try ctx.constant("weight", shape: [filters, cin / groups, k[0], k[1]]) {
            WeightLayout.conv2DKernel(ctx.backendKernel(try ctx.weight("kernel", shape: kshape), kerasShape: kshape), kerasShape: kshape)
        }
        var weights = ["weight": w]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
        return try ctx.withActivation(rank: 4) { act, out in
            Node(name: ctx.nodeName, op: .conv2d(Conv2DAttributes(kernel: k, strides: s, dilations: d, padding: padding,
                                                                  groups: groups, outputChannels: filters, activation: act)),
                 inputs: [ctx.inputs[0]], outputs: [out], weights: weights)
        }
    }
}

/// `DepthwiseConv2D`: → conv2d with groups = Cin, Cout = Cin·depth_multiplier.
struct DepthwiseConv2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv2d, .activation, .softmax] }
    var classNames: [String] { ["DepthwiseConv2D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["depthwise_kernel"] : ["depthwise_kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let k = try ctx.ints("kernel_size", count: 2)
        let s = try ctx.ints("strides", count: 2, default: [1, 1])
        let d = try ctx.ints("dilation_rate", count: 2, default: [1, 1])
        let m = try ctx.int("depth_multiplier", default: 1)
        let useBias = try ctx.bool("use_bias", default: true)
        let padding = try windowPadding(ctx)
        let cin = ctx.inputShape[3], cout = cin * m
        let kshape = [k[0], k[1], cin, m]
        let w = try ctx.constant("weight", shape: [cout, 1, k[0], k[1]]) {
            WeightLayout.depthwiseKernel(ctx.backendKernel(try ctx.weight("depthwise_kernel", shape: kshape), kerasShape: kshape), kerasShape: kshape)
        }
        var weights = ["weight": w]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [cout]) { try ctx.weight("bias", shape: [cout]) } }
        return try ctx.withActivation(rank: 4) { act, out in
            Node(name: ctx.nodeName, op: .conv2d(Conv2DAttributes(kernel: k, strides: s, dilations: d, padding: padding,
                                                                  groups: cin, outputChannels: cout, activation: act)),
                 inputs: [ctx.inputs[0]], outputs: [out], weights: weights)
        }
    }
}

/// `SeparableConv2D`: → a depthwise conv2d `<name>__depthwise` (groups = Cin, no bias, the
/// layer's strides/padding/dilation) then a 1×1 conv2d `<name>` with the bias and activation.
struct SeparableConv2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv2d, .activation, .softmax] }
    var classNames: [String] { ["SeparableConv2D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["depthwise_kernel", "pointwise_kernel"]
            : ["depthwise_kernel", "pointwise_kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let filters = try ctx.int("filters")
        let k = try ctx.ints("kernel_size", count: 2)
        let s = try ctx.ints("strides", count: 2, default: [1, 1])
        let d = try ctx.ints("dilation_rate", count: 2, default: [1, 1])
        let m = try ctx.int("depth_multiplier", default: 1)
        let useBias = try ctx.bool("use_bias", default: true)
        let padding = try windowPadding(ctx)
        let cin = ctx.inputShape[3], mid = cin * m
        let dshape = [k[0], k[1], cin, m], pshape = [1, 1, mid, filters]
        let dw = try ctx.constant("depthwise", shape: [mid, 1, k[0], k[1]]) {
            WeightLayout.depthwiseKernel(ctx.backendKernel(try ctx.weight("depthwise_kernel", shape: dshape), kerasShape: dshape), kerasShape: dshape)
        }
        let pw = try ctx.constant("pointwise", shape: [filters, mid, 1, 1]) {
            WeightLayout.conv2DKernel(try ctx.weight("pointwise_kernel", shape: pshape), kerasShape: pshape)
        }
        var weights = ["weight": pw]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
        let midName = ctx.nodeName + "__depthwise"
        let first = Node(name: midName, op: .conv2d(Conv2DAttributes(kernel: k, strides: s, dilations: d, padding: padding,
                                                                      groups: cin, outputChannels: mid)),
                         inputs: [ctx.inputs[0]], outputs: [midName], weights: ["weight": dw])
        return [first] + (try ctx.withActivation(rank: 4) { act, out in
            Node(name: ctx.nodeName, op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: filters, activation: act)),
                 inputs: [midName], outputs: [out], weights: weights)
        })
    }
}

/// `Conv2DTranspose`: → deconv2d, kernel
/// (kH, kW, Cout, Cin) transposed (3,2,0,1). Output size and placement follow TensorFlow's
/// `conv2d_transpose` with Keras' `deconv_output_length` (padding, strides, output_padding,
/// dilation), expressed with the IR's same / valid / explicit-crop + output padding.
struct Conv2DTransposeConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.deconv2d, .activation, .softmax] }
    var classNames: [String] { ["Conv2DTranspose"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    /// IR padding and output padding reproducing Keras for one layer.
    static func irPadding(input: [Int], kernel k: [Int], strides s: [Int], dilations d: [Int], same: Bool,
                          outputPadding op: [Int]?) -> (PaddingMode, [Int]) {
        var tops: [Int] = [], bottoms: [Int] = [], qs: [Int] = []
        var canUseSame = same && op == nil
        for a in 0..<2 {
            let ke = (k[a] - 1) * d[a] + 1
            let full = (input[a] - 1) * s[a] + ke
            let out: Int
            if let op {
                let pad = same ? ke / 2 : 0
                out = (input[a] - 1) * s[a] + ke - 2 * pad + op[a]
            } else {
                out = same ? input[a] * s[a] : input[a] * s[a] + max(ke - s[a], 0)
            }
            if ke < s[a] { canUseSame = false }
            let top = same ? max(full - out, 0) / 2 : 0
            let q = max(0, out + top - full)
            tops.append(top); qs.append(q); bottoms.append(full + q - top - out)
        }
        if canUseSame { return (.same, [0, 0]) }
        if tops == [0, 0], bottoms == [0, 0] { return (.valid, qs) }
        return (.explicit(top: tops[0], bottom: bottoms[0], left: tops[1], right: bottoms[1]), qs)
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let filters = try ctx.int("filters")
        let k = try ctx.ints("kernel_size", count: 2)
        let s = try ctx.ints("strides", count: 2, default: [1, 1])
        let d = try ctx.ints("dilation_rate", count: 2, default: [1, 1])
        let groups = try ctx.int("groups", default: 1)
        let useBias = try ctx.bool("use_bias", default: true)
        let padName = try ctx.string("padding", default: "valid").lowercased()
        guard padName == "same" || padName == "valid" else {
            throw ctx.unsupported("padding '\(padName)' is not supported", hint: "use padding='same' or 'valid'")
        }
        guard groups == 1 else { throw ctx.unsupported("groups \(groups) is not supported for Conv2DTranspose", hint: "use groups=1") }
        let op: [Int]? = ctx.value("output_padding") == nil ? nil : try ctx.ints("output_padding", count: 2)
        let cin = ctx.inputShape[3]
        let (padding, q) = Self.irPadding(input: [ctx.inputShape[1], ctx.inputShape[2]], kernel: k, strides: s, dilations: d,
                                          same: padName == "same", outputPadding: op)
        let kshape = [k[0], k[1], filters, cin]
        let w = try ctx.constant("weight", shape: [cin, filters, k[0], k[1]]) {
            WeightLayout.deconv2DKernel(ctx.backendKernel(try ctx.weight("kernel", shape: kshape), kerasShape: kshape), kerasShape: kshape)
        }
        var weights = ["weight": w]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
        return try ctx.withActivation(rank: 4) { act, out in
            Node(name: ctx.nodeName, op: .deconv2d(Deconv2DAttributes(kernel: k, strides: s, dilations: d, padding: padding,
                                                                      outputPadding: q, outputChannels: filters, activation: act)),
                 inputs: [ctx.inputs[0]], outputs: [out], weights: weights)
        }
    }
}
