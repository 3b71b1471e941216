import CDNNL
import MLGraph

/// deconv2d (transposed convolution) on oneDNN deconvolution: NHWC activations in place, weights
/// [Cin, Cout/groups, kH, kW] (oneDNN `iohw` / `giohw`) reordered once to the preferred layout,
/// bias, strides, dilation, groups, fused activation.
///
/// Padding: the IR crops `top` pixels from the full output (in−1)·s + (k−1)·d + 1 (+ output
/// padding, appended at the end); oneDNN writes dst[o] from full[o + padding_l]. So padding_l =
/// top and padding_r = full − top − out (without output padding), which is negative when output
/// padding adds pixels at the bottom/right; oneDNN accepts padding_r > −stride. Declines when the
/// crop would be negative (`.same` with a kernel smaller than the stride) or output padding is
/// not below stride + bottom crop.
enum DNNLDeconv2D {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .deconv2d(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4, ctx.outputTypes[0].rank == 4,
              a.kernel.count == 2, a.strides.count == 2, a.dilations.count == 2, a.outputPadding.count == 2,
              a.groups >= 1, let weight = ctx.node.weights["weight"]
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        let (n, h, w, cin) = (x[0], x[1], x[2], x[3])
        let cout = y[3], g = a.groups
        guard cin % g == 0, cout % g == 0, cout == a.outputChannels, y[0] == n,
              weight.shape == [cin, cout / g, a.kernel[0], a.kernel[1]],
              a.strides.allSatisfy({ $0 >= 1 }), a.dilations.allSatisfy({ $0 >= 1 })
        else { return nil }
        let bias = ctx.node.weights["bias"]
        if let bias, bias.shape != [cout] { return nil }

        var padL: [Int64] = [], padR: [Int64] = []
        for axis in 0..<2 {
            let input = x[1 + axis], out = y[1 + axis], s = a.strides[axis]
            let span = (a.kernel[axis] - 1) * a.dilations[axis] + 1
            let full = (input - 1) * s + span  // without output padding
            let top: Int
            switch a.padding {
            case .valid: top = 0
            case .same:
                let total = full + a.outputPadding[axis] - out
                guard total >= 0 else { return nil }
                top = total / 2
            case let .explicit(t, _, l, _): top = axis == 0 ? t : l
            }
            let right = full - top - out
            guard top >= 0, right + s > 0, out > 0 else { return nil }
            padL.append(Int64(top)); padR.append(Int64(right))
        }

        var src = try dnnlMD([n, cin, h, w], dnnl_nhwc)
        var dst = try dnnlMD([n, cout, y[1], y[2]], dnnl_nhwc)
        let weightDims = g == 1 ? [cout, cin, a.kernel[0], a.kernel[1]]
                                : [g, cout / g, cin / g, a.kernel[0], a.kernel[1]]
        let plainWeights = try dnnlMD(weightDims, g == 1 ? dnnl_iohw : dnnl_giohw)
        var anyWeights = try dnnlMD(weightDims, dnnl_format_tag_any)
        var biasMD = try dnnlMD([cout], dnnl_x)
        let strides: [Int64] = a.strides.map { Int64($0) }
        let dilates: [Int64] = a.dilations.map { Int64($0 - 1) }

        var desc = dnnl_deconvolution_desc_t()
        try withUnsafeMutablePointer(to: &biasMD) { bp in
            try dnnlCheck(dnnl_dilated_deconvolution_forward_desc_init(
                &desc, dnnl_forward_inference, dnnl_deconvolution_direct, &src, &anyWeights,
                bias == nil ? nil : UnsafePointer(bp), &dst, strides, dilates, padL, padR),
                "dnnl_dilated_deconvolution_forward_desc_init")
        }
        return try withUnsafePointer(to: &desc) {
            try makeWeightedDNNLKernel(ctx, opDesc: UnsafeRawPointer($0), what: "deconvolution", activation: a.activation,
                                       weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst)
        }
    }
}
