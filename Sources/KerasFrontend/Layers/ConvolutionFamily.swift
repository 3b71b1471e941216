import MLGraph

// Convolution-family layers of issue 14 composed from existing IR ops: Conv1DTranspose,
// Conv3DTranspose, DepthwiseConv1D, SeparableConv1D, UpSampling3D, ZeroPadding3D, Cropping3D.
// (Conv3D, MaxPooling3D / AveragePooling3D and the 3-D global poolings are in Convolution3D.swift;
// ConvLSTM1D / ConvLSTM2D in ConvLSTM.swift.)

/// Placement of a Keras transposed convolution's output, for any number of spatial axes.
enum KerasDeconvPadding {
    /// The IR padding and output padding that reproduce Keras' `ConvNDTranspose` output size
    /// (Keras' `deconv_output_length`: out = in·s for 'same' and max(in·s, (in−1)·s + k) for
    /// 'valid' without `output_padding`; (in−1)·s + k − 2·pad + output_padding with it, pad = k/2
    /// for 'same' and 0 for 'valid', k the dilated kernel) and placement (TensorFlow's
    /// `conv_transpose` puts ⌊(full − out)/2⌋ cropped elements before the output, full =
    /// (in−1)·s + k). Same rule per axis as `Conv2DTransposeConverter.irPadding`.
    static func resolve(input: [Int], kernel k: [Int], strides s: [Int], dilations d: [Int], same: Bool,
                        outputPadding op: [Int]?) -> (SpatialPadding, [Int]) {
        var before: [Int] = [], after: [Int] = [], extra: [Int] = []
        var canUseSame = same && op == nil
        for a in input.indices {
            let ke = (k[a] - 1) * d[a] + 1
            let full = (input[a] - 1) * s[a] + ke
            let out: Int
            if let op {
                out = (input[a] - 1) * s[a] + ke - 2 * (same ? ke / 2 : 0) + op[a]
            } else {
                out = same ? input[a] * s[a] : input[a] * s[a] + max(ke - s[a], 0)
            }
            if ke < s[a] { canUseSame = false }
            let b = same ? max(full - out, 0) / 2 : 0
            let q = max(0, out + b - full)
            before.append(b); extra.append(q); after.append(full + q - b - out)
        }
        if canUseSame { return (.same, input.map { _ in 0 }) }
        if before.allSatisfy({ $0 == 0 }), after.allSatisfy({ $0 == 0 }) { return (.valid, extra) }
        return (.explicit(before: before, after: after), extra)
    }
}

/// Reads the common arguments of a Keras `Conv1DTranspose` / `Conv3DTranspose` with `rank`
/// spatial axes and builds its deconv node (`deconv1d` / `deconv3d`).
private func kerasDeconvND(_ ctx: KerasLayerContext, rank: Int) throws -> [Node] {
    try ctx.requireChannelsLast()
    try requireRank(ctx, rank + 2, rank == 1 ? "NWC" : "NDHWC")
    guard !ctx.kernelsNeedSpatialFlip else {
        throw ctx.unsupported("Theano-trained \(ctx.className) kernels (spatially flipped) are not supported", hint: "re-save the model with the TensorFlow backend")
    }
    let filters = try ctx.int("filters")
    let k = try ctx.ints("kernel_size", count: rank)
    let s = try ctx.ints("strides", count: rank, default: Array(repeating: 1, count: rank))
    let d = try ctx.ints("dilation_rate", count: rank, default: Array(repeating: 1, count: rank))
    let useBias = try ctx.bool("use_bias", default: true)
    let padName = try ctx.string("padding", default: "valid").lowercased()
    guard padName == "same" || padName == "valid" else {
        throw ctx.unsupported("padding '\(padName)' is not supported", hint: "use padding='same' or 'valid'")
    }
    guard try ctx.int("groups", default: 1) == 1 else {
        throw ctx.unsupported("groups other than 1 are not supported for \(ctx.className)", hint: "use groups=1")
    }
    guard filters >= 1, filters <= 1 << 24, (k + s + d).allSatisfy({ $0 >= 1 && $0 <= 1 << 16 }) else {
        throw ctx.invalid("filters", expected: "positive filters, and kernel_size, strides and dilation_rate in 1…65536")
    }
    let op: [Int]? = ctx.value("output_padding") == nil ? nil : try ctx.ints("output_padding", count: rank)
    if let op, zip(op, s).contains(where: { $0 < 0 || $0 >= $1 }) {
        throw ctx.invalid("output_padding", expected: "values in 0..<strides")
    }
    let cin = ctx.inputShape[rank + 1]
    let (padding, q) = KerasDeconvPadding.resolve(input: Array(ctx.inputShape[1...rank]), kernel: k, strides: s, dilations: d,
                                                  same: padName == "same", outputPadding: op)
    // Keras kernel (k…, filters, Cin) → IR [Cin, filters, k…].
    let kshape = k + [filters, cin]
    let perm = [rank + 1, rank] + Array(0..<rank)
    let w = try ctx.constant("weight", shape: [cin, filters] + k) {
        WeightLayout.transpose(try ctx.weight("kernel", shape: kshape), shape: kshape, perm: perm)
    }
    var weights = ["weight": w]
    if useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
    return try ctx.withActivation(rank: rank + 2) { act, out in
        let a = DeconvNDAttributes(kernel: k, strides: s, dilations: d, padding: padding, outputPadding: q,
                                   outputChannels: filters, activation: act)
        return Node(name: ctx.nodeName, op: rank == 1 ? .deconv1d(a) : .deconv3d(a), inputs: [ctx.inputs[0]], outputs: [out], weights: weights)
    }
}

/// `Conv1DTranspose` (filters, kernel_size, strides, dilation_rate, padding same / valid,
/// output_padding, use_bias, activation) on [N, W, C] → deconv1d. Keras kernel (k, filters, C)
/// → IR weight [C, filters, k]; output size and placement as Keras (`KerasDeconvPadding`).
struct Conv1DTransposeConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.deconv1d, .activation, .softmax] }
    var classNames: [String] { ["Conv1DTranspose", "Convolution1DTranspose"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] { try kerasDeconvND(ctx, rank: 1) }
}

/// `Conv3DTranspose` on [N, D, H, W, C] → deconv3d. Keras kernel (kD, kH, kW, filters, C) → IR
/// weight [C, filters, kD, kH, kW]; output size and placement as Keras (`KerasDeconvPadding`).
struct Conv3DTransposeConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.deconv3d, .activation, .softmax] }
    var classNames: [String] { ["Conv3DTranspose", "Convolution3DTranspose"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] { try kerasDeconvND(ctx, rank: 3) }
}

/// The end of a 1-D layer run as a 2-D op on a height-1 image: reshape the op's [N, 1, W', C']
/// output `convOut` back to [N, W', C'], then a softmax on the last axis when the activation is
/// softmax (other activations are fused into the op by the caller).
private func finish1D(_ ctx: KerasLayerContext, _ nodes: [Node], convOut: String, softmax: Bool) throws -> [Node] {
    let types = try Lowering1D.inferTypes(ctx, nodes, known: Lowering1D.inputTypes(ctx))
    guard let s2 = types[convOut]?.shape, s2.count == 4 else {
        throw ctx.unsupported("could not infer the convolution's output", hint: "check the model")
    }
    if softmax {
        let pre = ctx.nodeName + "__preactivation__"
        return nodes + [Lowering1D.to1D(ctx, from: convOut, shape2D: s2, output: pre),
                        Node(name: ctx.nodeName + "__activation__", op: .softmax(axis: 2), inputs: [pre], outputs: [ctx.outputNames[0]])]
    }
    return nodes + [Lowering1D.to1D(ctx, from: convOut, shape2D: s2, output: ctx.outputNames[0])]
}

/// The common arguments of DepthwiseConv1D / SeparableConv1D.
private struct Depthwise1DArguments {
    var kernel: Int, stride: Int, dilation: Int, multiplier: Int, useBias: Bool, padding: PaddingMode
    var fused: Activation?, softmax: Bool

    init(_ ctx: KerasLayerContext) throws {
        try ctx.requireChannelsLast()
        try Lowering1D.requireSequence(ctx)
        guard !ctx.kernelsNeedSpatialFlip else {
            throw ctx.unsupported("Theano-trained \(ctx.className) kernels (spatially flipped) are not supported", hint: "re-save the model with the TensorFlow backend")
        }
        kernel = try ctx.ints("kernel_size", count: 1)[0]
        stride = try ctx.ints("strides", count: 1, default: [1])[0]
        dilation = try ctx.ints("dilation_rate", count: 1, default: [1])[0]
        multiplier = try ctx.int("depth_multiplier", default: 1)
        guard [kernel, stride, dilation, multiplier].allSatisfy({ $0 >= 1 && $0 <= 1 << 16 }) else {
            throw ctx.invalid("kernel_size", expected: "kernel_size, strides, dilation_rate and depth_multiplier in 1…65536")
        }
        useBias = try ctx.bool("use_bias", default: true)
        let padName = try ctx.string("padding", default: "valid").lowercased()
        guard let p = Conv1DConverter.padding(padName, kernel: kernel, dilation: dilation) else {
            throw ctx.unsupported("padding '\(padName)' is not supported", hint: "use padding='same', 'valid' or 'causal'")
        }
        padding = p
        switch try ctx.kerasActivation(ctx.value("activation")) {
        case .identity: fused = nil; softmax = false
        case let .fused(a): fused = a; softmax = false
        case .softmax: fused = nil; softmax = true
        }
    }
}

/// `DepthwiseConv1D` (kernel_size, strides, dilation_rate, depth_multiplier, padding same / valid
/// / causal, use_bias, activation) on [N, W, C] → reshape [N, 1, W, C] (`<name>__as_2d`) →
/// grouped conv2d `<name>` (groups = C, C·M outputs in TensorFlow's order c·M + m) → reshape
/// [N, W', C·M] (`<name>__as_1d`). Keras kernel (k, C, M) → IR weight [C·M, 1, 1, k].
struct DepthwiseConv1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv2d, .reshape, .activation, .softmax] }
    var classNames: [String] { ["DepthwiseConv1D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["depthwise_kernel"] : ["depthwise_kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let a = try Depthwise1DArguments(ctx)
        let cin = ctx.inputShape[2], cout = cin * a.multiplier
        let kshape = [a.kernel, cin, a.multiplier]
        let w = try ctx.constant("weight", shape: [cout, 1, 1, a.kernel]) {
            WeightLayout.transpose(try ctx.weight("depthwise_kernel", shape: kshape), shape: kshape, perm: [1, 2, 0])
        }
        var weights = ["weight": w]
        if a.useBias { weights["bias"] = try ctx.constant("bias", shape: [cout]) { try ctx.weight("bias", shape: [cout]) } }
        let (x2d, reshapeIn) = Lowering1D.to2D(ctx)
        let convOut = ctx.nodeName + "__conv"
        let conv = Node(name: ctx.nodeName,
                        op: .conv2d(Conv2DAttributes(kernel: [1, a.kernel], strides: [1, a.stride], dilations: [1, a.dilation], padding: a.padding,
                                                     groups: cin, outputChannels: cout, activation: a.fused)),
                        inputs: [x2d], outputs: [convOut], weights: weights)
        return try finish1D(ctx, [reshapeIn, conv], convOut: convOut, softmax: a.softmax)
    }
}

/// `SeparableConv1D` (filters, kernel_size, strides, dilation_rate, depth_multiplier, padding
/// same / valid / causal, use_bias, activation) on [N, W, C] → reshape [N, 1, W, C] → depthwise
/// conv2d `<name>__depthwise` (groups = C, no bias) → 1×1 conv2d `<name>` with the bias and
/// activation → reshape [N, W', filters]. Keras depthwise kernel (k, C, M) → [C·M, 1, 1, k];
/// pointwise kernel (1, C·M, filters) → [filters, C·M, 1, 1].
struct SeparableConv1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv2d, .reshape, .activation, .softmax] }
    var classNames: [String] { ["SeparableConv1D", "SeparableConvolution1D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["depthwise_kernel", "pointwise_kernel"]
            : ["depthwise_kernel", "pointwise_kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let a = try Depthwise1DArguments(ctx)
        let filters = try ctx.int("filters")
        guard filters >= 1, filters <= 1 << 24 else { throw ctx.invalid("filters", expected: "a positive integer") }
        let cin = ctx.inputShape[2], mid = cin * a.multiplier
        let dshape = [a.kernel, cin, a.multiplier], pshape = [1, mid, filters]
        let dw = try ctx.constant("depthwise", shape: [mid, 1, 1, a.kernel]) {
            WeightLayout.transpose(try ctx.weight("depthwise_kernel", shape: dshape), shape: dshape, perm: [1, 2, 0])
        }
        let pw = try ctx.constant("pointwise", shape: [filters, mid, 1, 1]) {
            WeightLayout.transpose(try ctx.weight("pointwise_kernel", shape: pshape), shape: pshape, perm: [2, 1, 0])
        }
        var weights = ["weight": pw]
        if a.useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
        let (x2d, reshapeIn) = Lowering1D.to2D(ctx)
        let midName = ctx.nodeName + "__depthwise", convOut = ctx.nodeName + "__conv"
        let depthwise = Node(name: midName,
                             op: .conv2d(Conv2DAttributes(kernel: [1, a.kernel], strides: [1, a.stride], dilations: [1, a.dilation],
                                                          padding: a.padding, groups: cin, outputChannels: mid)),
                             inputs: [x2d], outputs: [midName], weights: ["weight": dw])
        let pointwise = Node(name: ctx.nodeName,
                             op: .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: filters, activation: a.fused)),
                             inputs: [midName], outputs: [convOut], weights: weights)
        return try finish1D(ctx, [reshapeIn, depthwise, pointwise], convOut: convOut, softmax: a.softmax)
    }
}

/// Reads a 3-D (before, after) spec: n → ((n,n),(n,n),(n,n)); (a,b,c) → ((a,a),(b,b),(c,c));
/// ((a1,a2),(b1,b2),(c1,c2)). Values must be ≥ 0.
func tripleOfPairs(_ ctx: KerasLayerContext, _ key: String, default def: Int) throws -> [[Int]] {
    let out: [[Int]]
    if let v = ctx.value(key) {
        if let n = v.int {
            out = Array(repeating: [n, n], count: 3)
        } else if let a = v.array, a.count == 3, a.allSatisfy({ $0.int != nil }) {
            out = a.map { [$0.int!, $0.int!] }
        } else if let a = v.array, a.count == 3, a.allSatisfy({ $0.array?.count == 2 && $0.array!.allSatisfy { $0.int != nil } }) {
            out = a.map { $0.array!.map { $0.int! } }
        } else {
            throw ctx.invalid(key, expected: "an integer, three integers, or three (before, after) pairs")
        }
    } else {
        out = Array(repeating: [def, def], count: 3)
    }
    guard out.allSatisfy({ $0.allSatisfy { $0 >= 0 } }) else { throw ctx.invalid(key, expected: "non-negative integers") }
    return out
}

/// `ZeroPadding3D(padding)` on [N, D, H, W, C] → pad (constant 0) on D, H and W.
struct ZeroPadding3DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.pad] }
    var classNames: [String] { ["ZeroPadding3D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 5, "NDHWC")
        let p = try tripleOfPairs(ctx, "padding", default: 1)
        return [Node(name: ctx.nodeName, op: .pad(PadAttributes(mode: .constant, pads: [[0, 0]] + p + [[0, 0]])),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `Cropping3D(cropping)` on [N, D, H, W, C] → crop on D, H and W.
struct Cropping3DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.crop] }
    var classNames: [String] { ["Cropping3D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 5, "NDHWC")
        let c = try tripleOfPairs(ctx, "cropping", default: 1)
        for (i, pair) in c.enumerated() where pair[0] >= ctx.inputShape[i + 1] || pair[1] >= ctx.inputShape[i + 1] - pair[0] {
            throw ctx.unsupported("crops \(pair[0]) + \(pair[1]) of axis \(i + 1) leave nothing of size \(ctx.inputShape[i + 1])", hint: "check the model")
        }
        return [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0]] + c + [[0, 0]]), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `UpSampling3D(size)` on [N, D, H, W, C] (nearest: every element repeated sD·sH·sW times, as
/// Keras' `resize_volumes`) → reshape [N, D, H, W·C] (`<name>__dh`) → upsample2d `<name>`
/// nearest (sD, sH) → reshape [N, D·sD·H·sH, W, C] (`<name>__w`) → upsample2d `<name>__upsample_w`
/// (1, sW) → reshape [N, D·sD, H·sH, W·sW, C] (`<name>__as_3d`).
struct UpSampling3DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshape, .upsample2d] }
    var classNames: [String] { ["UpSampling3D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 5, "NDHWC")
        let s = try ctx.ints("size", count: 3, default: [2, 2, 2])
        guard s.allSatisfy({ $0 >= 1 && $0 <= 1 << 16 }) else { throw ctx.invalid("size", expected: "positive integers") }
        let (d, h, w, c) = (ctx.inputShape[1], ctx.inputShape[2], ctx.inputShape[3], ctx.inputShape[4])
        var total = 1
        for v in [d, h, w, c] + s {
            let (p, o) = total.multipliedReportingOverflow(by: v)
            guard !o, p <= TensorType.maxElementCount else {
                throw ctx.unsupported("size \(s) on \(formatShape(ctx.inputShape)) gives too many elements", hint: "check the model")
            }
            total = p
        }
        let n = ctx.nodeName
        let a = n + "__dh", b = n + "__upsampled_dh", e = n + "__w", f = n + "__upsampled_w"
        return [
            Node(name: a, op: .reshape(targetShape: [d, h, w * c]), inputs: [ctx.inputs[0]], outputs: [a]),
            Node(name: n, op: .upsample2d(Upsample2DAttributes(scale: [s[0], s[1]], mode: .nearest)), inputs: [a], outputs: [b]),
            Node(name: e, op: .reshape(targetShape: [d * s[0] * h * s[1], w, c]), inputs: [b], outputs: [e]),
            Node(name: n + "__upsample_w", op: .upsample2d(Upsample2DAttributes(scale: [1, s[2]], mode: .nearest)), inputs: [e], outputs: [f]),
            Node(name: n + "__as_3d", op: .reshape(targetShape: [d * s[0], h * s[1], w * s[2], c]), inputs: [f], outputs: [ctx.outputNames[0]]),
        ]
    }
}
