import CDNNL
import MLGraph

/// deconv2d (transposed convolution) on oneDNN deconvolution: NHWC activations in place, weights
/// [Cin, Cout/groups, kH, kW] (oneDNN `iohw` / `giohw`) reordered once to the preferred layout,
/// bias, strides, dilation, groups, fused activation (`makeDNNLDeconvolution`, shared with deconv3d).
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
        guard y[0] == x[0], y[3] == a.outputChannels else { return nil }
        var padL: [Int] = [], padR: [Int] = []
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
            padL.append(top); padR.append(full - top - out)
        }
        let geo = DNNLConvGeometry(n: x[0], cin: x[3], cout: a.outputChannels, inSpatial: [x[1], x[2]], outSpatial: [y[1], y[2]],
                                   kernel: a.kernel, strides: a.strides, dilations: a.dilations,
                                   padBefore: padL, padAfter: padR, groups: a.groups)
        return try makeDNNLDeconvolution(ctx, geo, activation: a.activation, weight: weight, bias: ctx.node.weights["bias"])
    }
}
