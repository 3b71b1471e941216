import CDNNL
import MLGraph

/// conv2d on oneDNN: NHWC activations used in place, weights reordered once into the layout the
/// implementation prefers (`format_tag_any`), bias, strides, dilation, explicit padding from
/// `PaddingMode.resolve`, groups (incl. depthwise), activation fused as eltwise post-ops.
enum DNNLConv2D {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .conv2d(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4, ctx.outputTypes[0].rank == 4,
              a.kernel.count == 2, a.strides.count == 2, a.dilations.count == 2, a.groups >= 1,
              let weight = ctx.node.weights["weight"]
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        let (n, h, w, cin) = (x[0], x[1], x[2], x[3])
        let cout = y[3], g = a.groups
        guard cin % g == 0, cout % g == 0, cout == a.outputChannels, y[0] == n,
              weight.shape == [cout, cin / g, a.kernel[0], a.kernel[1]]
        else { return nil }
        let bias = ctx.node.weights["bias"]
        if let bias, bias.shape != [cout] { return nil }

        let p = a.padding.resolve(inH: h, inW: w, kernel: (a.kernel[0], a.kernel[1]),
                                  stride: (a.strides[0], a.strides[1]), dilation: (a.dilations[0], a.dilations[1]))
        guard p.top >= 0, p.bottom >= 0, p.left >= 0, p.right >= 0 else { return nil }

        var src = try dnnlMD([n, cin, h, w], dnnl_nhwc)
        var dst = try dnnlMD([n, cout, y[1], y[2]], dnnl_nhwc)
        let weightDims = g == 1 ? [cout, cin, a.kernel[0], a.kernel[1]]
                                : [g, cout / g, cin / g, a.kernel[0], a.kernel[1]]
        let plainWeights = try dnnlMD(weightDims, g == 1 ? dnnl_oihw : dnnl_goihw)
        var anyWeights = try dnnlMD(weightDims, dnnl_format_tag_any)
        var biasMD = try dnnlMD([cout], dnnl_x)
        let strides: [Int64] = a.strides.map { Int64($0) }
        let dilates: [Int64] = a.dilations.map { Int64($0 - 1) }
        let padL: [Int64] = [Int64(p.top), Int64(p.left)], padR: [Int64] = [Int64(p.bottom), Int64(p.right)]

        var desc = dnnl_convolution_desc_t()
        try withUnsafeMutablePointer(to: &biasMD) { bp in
            try dnnlCheck(dnnl_dilated_convolution_forward_desc_init(
                &desc, dnnl_forward_inference, dnnl_convolution_direct, &src, &anyWeights,
                bias == nil ? nil : UnsafePointer(bp), &dst, strides, dilates, padL, padR),
                "dnnl_dilated_convolution_forward_desc_init")
        }
        return try withUnsafePointer(to: &desc) {
            try makeWeightedDNNLKernel(ctx, opDesc: UnsafeRawPointer($0), what: "convolution", activation: a.activation,
                                       weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst)
        }
    }
}
