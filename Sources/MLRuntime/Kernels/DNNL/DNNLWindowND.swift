import CDNNL
import MLGraph

// Convolution and pooling on oneDNN for any spatial rank (1, 2 or 3): the shared builders of
// conv1d / conv2d / conv3d and pool1d / pool2d / globalPool2d / pool3d. Activations stay channels
// last (nwc, nhwc, ndhwc) and are used in place.

/// oneDNN format tags for `spatial` spatial axes: channels-last data, plain weights ([O, I, k…]
/// and grouped [G, O/G, I/G, k…]), or nil for a rank oneDNN has no tag for here.
func dnnlWindowTags(spatial: Int) -> (data: dnnl_format_tag_t, weights: dnnl_format_tag_t, groupedWeights: dnnl_format_tag_t)? {
    switch spatial {
    case 1: return (dnnl_nwc, dnnl_oiw, dnnl_goiw)
    case 2: return (dnnl_nhwc, dnnl_oihw, dnnl_goihw)
    case 3: return (dnnl_ndhwc, dnnl_oidhw, dnnl_goidhw)
    default: return nil
    }
}

/// The geometry of one convolution on channels-last tensors: x [N, spatial…, Cin] → y [N, out…, Cout].
struct DNNLConvGeometry {
    var n: Int, cin: Int, cout: Int
    var inSpatial: [Int], outSpatial: [Int]
    var kernel: [Int], strides: [Int], dilations: [Int]
    var padBefore: [Int], padAfter: [Int]
    var groups: Int
}

/// Builds a direct oneDNN convolution (weights reordered once into the layout the implementation
/// prefers, optional bias, `activation` fused as post-ops where oneDNN can), or nil when the
/// geometry, weight or bias shapes do not fit (the factory declines).
func makeDNNLConvolution(_ ctx: KernelContext, _ geo: DNNLConvGeometry, activation: Activation?,
                         weight: ConstantTensor, bias: ConstantTensor?, residual: ResidualAdd? = nil) throws -> Kernel? {
    let r = geo.kernel.count, g = geo.groups
    guard let tags = dnnlWindowTags(spatial: r), geo.inSpatial.count == r, geo.outSpatial.count == r,
          geo.strides.count == r, geo.dilations.count == r, geo.padBefore.count == r, geo.padAfter.count == r,
          g >= 1, geo.cin % g == 0, geo.cout % g == 0, (geo.padBefore + geo.padAfter).allSatisfy({ $0 >= 0 }),
          geo.dilations.allSatisfy({ $0 >= 1 }), weight.shape == [geo.cout, geo.cin / g] + geo.kernel
    else { return nil }
    if let bias, bias.shape != [geo.cout] { return nil }
    var src = try dnnlMD([geo.n, geo.cin] + geo.inSpatial, tags.data)
    var dst = try dnnlMD([geo.n, geo.cout] + geo.outSpatial, tags.data)
    let weightDims = g == 1 ? [geo.cout, geo.cin] + geo.kernel : [g, geo.cout / g, geo.cin / g] + geo.kernel
    let plainWeights = try dnnlMD(weightDims, g == 1 ? tags.weights : tags.groupedWeights)
    var anyWeights = try dnnlMD(weightDims, dnnl_format_tag_any)
    var biasMD = try dnnlMD([geo.cout], dnnl_x)
    // MARK: Winograd convolutions (issue 12)
    if DNNLRuntime.winogradEnabled,
       let winograd = try DNNLWinogradConv2D.make(ctx, geo, activation: activation, residual: residual, weight: weight,
                                                  plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst) {
        return winograd
    }
    let strides = geo.strides.map { Int64($0) }, dilates = geo.dilations.map { Int64($0 - 1) }
    let padL = geo.padBefore.map { Int64($0) }, padR = geo.padAfter.map { Int64($0) }
    var desc = dnnl_convolution_desc_t()
    try withUnsafeMutablePointer(to: &biasMD) { bp in
        try dnnlCheck(dnnl_dilated_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &src, &anyWeights,
            bias == nil ? nil : UnsafePointer(bp), &dst, strides, dilates, padL, padR),
            "dnnl_dilated_convolution_forward_desc_init")
    }
    if let residual {  // MARK: residual add fusion (issue 12)
        return try withUnsafePointer(to: &desc) {
            try makeResidualDNNLConvolution(ctx, opDesc: UnsafeRawPointer($0), activation: activation, residual: residual,
                                            weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst)
        }
    }
    return try withUnsafePointer(to: &desc) {
        try makeWeightedDNNLKernel(ctx, opDesc: UnsafeRawPointer($0), what: "convolution", activation: activation,
                                   weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst)
    }
}

/// Builds a oneDNN pooling of channels-last x [n, spatial…, c] → [n, out…, c]: max, or average
/// excluding padded elements (`dnnl_pooling_avg_exclude_padding`, as Keras/TF). Declines (nil)
/// padding ≥ the window on an axis (a window entirely in padding has no defined value).
func makeDNNLPooling(_ ctx: KernelContext, kind: PoolKind, n: Int, c: Int, inSpatial: [Int], outSpatial: [Int],
                     kernel: [Int], strides: [Int], padBefore: [Int], padAfter: [Int]) throws -> Kernel? {
    let r = kernel.count
    guard let tags = dnnlWindowTags(spatial: r), inSpatial.count == r, outSpatial.count == r, strides.count == r,
          padBefore.count == r, padAfter.count == r, kernel.allSatisfy({ $0 >= 1 }), strides.allSatisfy({ $0 >= 1 }),
          (0..<r).allSatisfy({ padBefore[$0] >= 0 && padAfter[$0] >= 0 && padBefore[$0] < kernel[$0] && padAfter[$0] < kernel[$0] })
    else { return nil }
    var src = try dnnlMD([n, c] + inSpatial, tags.data)
    var dst = try dnnlMD([n, c] + outSpatial, tags.data)
    var desc = dnnl_pooling_desc_t()
    try dnnlCheck(dnnl_pooling_forward_desc_init(
        &desc, dnnl_forward_inference, kind == .max ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding,
        &src, &dst, strides.map { Int64($0) }, kernel.map { Int64($0) }, padBefore.map { Int64($0) }, padAfter.map { Int64($0) }),
        "dnnl_pooling_forward_desc_init")
    return try dnnlSourceToDestinationKernel(&desc, src: src, dst: dst, what: "pooling", ctx)
}

/// conv1d (nwc) and conv3d (ndhwc) on oneDNN: `makeDNNLConvolution` with the node's geometry
/// (`SpatialPadding.resolve`), groups (incl. depthwise), dilations and fused activation.
enum DNNLConvND {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let a: ConvNDAttributes
        switch ctx.node.op {
        case let .conv1d(v), let .conv3d(v): a = v
        default: return nil
        }
        let r = a.kernel.count
        guard ctx.inputTypes.count == 1, ctx.outputTypes.count == 1, ctx.inputTypes[0].rank == r + 2,
              ctx.outputTypes[0].rank == r + 2, a.strides.count == r, a.dilations.count == r,
              let weight = ctx.node.weights["weight"]
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        guard y[0] == x[0], y[r + 1] == a.outputChannels else { return nil }
        let inSpatial = Array(x[1...r])
        let pads = a.padding.resolve(input: inSpatial, kernel: a.kernel, strides: a.strides, dilations: a.dilations)
        guard pads.count == r else { return nil }
        let geo = DNNLConvGeometry(n: x[0], cin: x[r + 1], cout: a.outputChannels, inSpatial: inSpatial,
                                   outSpatial: Array(y[1...r]), kernel: a.kernel, strides: a.strides, dilations: a.dilations,
                                   padBefore: pads.map(\.before), padAfter: pads.map(\.after), groups: a.groups)
        return try makeDNNLConvolution(ctx, geo, activation: a.activation, weight: weight, bias: ctx.node.weights["bias"])
    }
}

/// pool1d (nwc) and pool3d (ndhwc) on oneDNN pooling (`makeDNNLPooling`).
enum DNNLPoolND {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let a: PoolNDAttributes
        switch ctx.node.op {
        case let .pool1d(v), let .pool3d(v): a = v
        default: return nil
        }
        let r = a.kernel.count
        guard ctx.inputTypes.count == 1, ctx.outputTypes.count == 1, ctx.inputTypes[0].rank == r + 2,
              ctx.outputTypes[0].rank == r + 2, a.strides.count == r
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        guard y[0] == x[0], y[r + 1] == x[r + 1] else { return nil }
        let inSpatial = Array(x[1...r])
        let pads = a.padding.resolve(input: inSpatial, kernel: a.kernel, strides: a.strides, dilations: a.kernel.map { _ in 1 })
        guard pads.count == r else { return nil }
        return try makeDNNLPooling(ctx, kind: a.kind, n: x[0], c: x[r + 1], inSpatial: inSpatial, outSpatial: Array(y[1...r]),
                                   kernel: a.kernel, strides: a.strides, padBefore: pads.map(\.before), padAfter: pads.map(\.after))
    }
}

/// Builds a direct oneDNN deconvolution (transposed convolution) of channels-last tensors with
/// `spatial` 2 or 3 axes; the weights are [Cin, Cout/groups, k…] (`iohw` / `iodhw`, grouped
/// `giohw` / `giodhw`), reordered once. `geo.padBefore` is the crop at the start of the full
/// output (in−1)·s + (k−1)·d + 1, `geo.padAfter` = full − before − out, which may be negative down
/// to −stride + 1 (output padding at the end). Nil when the geometry does not fit.
func makeDNNLDeconvolution(_ ctx: KernelContext, _ geo: DNNLConvGeometry, activation: Activation?,
                           weight: ConstantTensor, bias: ConstantTensor?) throws -> Kernel? {
    let r = geo.kernel.count, g = geo.groups
    let tags: (data: dnnl_format_tag_t, weights: dnnl_format_tag_t, grouped: dnnl_format_tag_t)
    switch r {
    case 1: tags = (dnnl_nwc, dnnl_bac, dnnl_acbd)  // iow, giow
    case 2: tags = (dnnl_nhwc, dnnl_iohw, dnnl_giohw)
    case 3: tags = (dnnl_ndhwc, dnnl_iodhw, dnnl_giodhw)
    default: return nil
    }
    guard geo.inSpatial.count == r, geo.outSpatial.count == r, geo.strides.count == r, geo.dilations.count == r,
          geo.padBefore.count == r, geo.padAfter.count == r, g >= 1, geo.cin % g == 0, geo.cout % g == 0,
          geo.strides.allSatisfy({ $0 >= 1 }), geo.dilations.allSatisfy({ $0 >= 1 }),
          (0..<r).allSatisfy({ geo.padBefore[$0] >= 0 && geo.padAfter[$0] + geo.strides[$0] > 0 && geo.outSpatial[$0] > 0 }),
          weight.shape == [geo.cin, geo.cout / g] + geo.kernel
    else { return nil }
    if let bias, bias.shape != [geo.cout] { return nil }
    var src = try dnnlMD([geo.n, geo.cin] + geo.inSpatial, tags.data)
    var dst = try dnnlMD([geo.n, geo.cout] + geo.outSpatial, tags.data)
    let weightDims = g == 1 ? [geo.cout, geo.cin] + geo.kernel : [g, geo.cout / g, geo.cin / g] + geo.kernel
    let plainWeights = try dnnlMD(weightDims, g == 1 ? tags.weights : tags.grouped)
    var anyWeights = try dnnlMD(weightDims, dnnl_format_tag_any)
    var biasMD = try dnnlMD([geo.cout], dnnl_x)
    let strides = geo.strides.map { Int64($0) }, dilates = geo.dilations.map { Int64($0 - 1) }
    let padL = geo.padBefore.map { Int64($0) }, padR = geo.padAfter.map { Int64($0) }
    var desc = dnnl_deconvolution_desc_t()
    try withUnsafeMutablePointer(to: &biasMD) { bp in
        try dnnlCheck(dnnl_dilated_deconvolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_deconvolution_direct, &src, &anyWeights,
            bias == nil ? nil : UnsafePointer(bp), &dst, strides, dilates, padL, padR),
            "dnnl_dilated_deconvolution_forward_desc_init")
    }
    return try withUnsafePointer(to: &desc) {
        try makeWeightedDNNLKernel(ctx, opDesc: UnsafeRawPointer($0), what: "deconvolution", activation: activation,
                                   weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst)
    }
}

/// deconv1d (nwc) and deconv3d (ndhwc) on oneDNN deconvolution (`makeDNNLDeconvolution`): the crop origin of
/// `DeconvNDAttributes.cropOrigin` as padding_l, the rest (negative with output padding) as
/// padding_r. Declines where oneDNN cannot express the crop (see `DNNLDeconv2D`).
enum DNNLDeconvND {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let a: DeconvNDAttributes
        switch ctx.node.op {
        case let .deconv3d(v), let .deconv1d(v): a = v
        default: return nil
        }
        let r = a.kernel.count
        guard ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == r + 2, ctx.outputTypes[0].rank == r + 2, a.strides.count == r,
              a.dilations.count == r, a.outputPadding.count == r, let weight = ctx.node.weights["weight"]
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        guard y[0] == x[0], y[r + 1] == a.outputChannels else { return nil }
        var before: [Int] = [], after: [Int] = []
        for i in 0..<r {
            if case .same = a.padding, a.fullSize(x[1 + i], axis: i) < y[1 + i] { return nil }  // kernel below the stride
            let origin = a.cropOrigin(x[1 + i], axis: i)
            let full = a.fullSize(x[1 + i], axis: i) - a.outputPadding[i]
            before.append(origin); after.append(full - origin - y[1 + i])
        }
        let geo = DNNLConvGeometry(n: x[0], cin: x[r + 1], cout: a.outputChannels, inSpatial: Array(x[1...r]), outSpatial: Array(y[1...r]),
                                   kernel: a.kernel, strides: a.strides, dilations: a.dilations,
                                   padBefore: before, padAfter: after, groups: a.groups)
        return try makeDNNLDeconvolution(ctx, geo, activation: a.activation, weight: weight, bias: ctx.node.weights["bias"])
    }
}
