import MLGraph

/// Reference `Op.conv2d`: x [N, H, W, Cin] → y [N, Ho, Wo, Cout] (NHWC), weight
/// [Cout, Cin/groups, kH, kW], optional bias [Cout], any strides, dilations, groups and
/// `PaddingMode` (resolved with `PaddingMode.resolve`; padded pixels are zero), then the fused
/// activation.
///
///     y[n, oy, ox, oc] = act(bias[oc] + Σ_{ky, kx, i} x[n, oy·sH − top + ky·dH, ox·sW − left + kx·dW, g·Cg + i]
///                                                   · weight[oc, i, ky, kx])
///
/// with g = oc / (Cout/groups), Cg = Cin/groups, i over 0..<Cg, out-of-range pixels skipped.
/// Accumulates in Double. With a fused residual (`Conv2DAttributes.residual`, input 1 r of the
/// output's shape), then y = residual.activation(y + r), the sum in float32 as the unfused `add`.
/// - Complexity: N·Ho·Wo·Cout·kH·kW·Cin/groups multiply-adds.
final class ReferenceConv2D: Kernel {
    let n, h, w, cin, oh, ow, cout, kh, kw, sh, sw, dh, dw, top, left, groups: Int
    /// Weights repacked to [Cout, kH, kW, Cin/groups] so the channel loop is contiguous.
    let weight: [Float]
    let bias: [Float]
    let activation: Activation?
    // MARK: residual add fusion (issue 12)
    let residual: ResidualAdd?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .conv2d(a) = ctx.node.op else { return nil }
        return try ReferenceConv2D(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: Conv2DAttributes) throws {
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        (n, h, w, cin) = (x[0], x[1], x[2], x[3])
        (oh, ow, cout) = (y[1], y[2], y[3])
        (kh, kw, sh, sw, dh, dw) = (a.kernel[0], a.kernel[1], a.strides[0], a.strides[1], a.dilations[0], a.dilations[1])
        groups = a.groups
        let pads = a.padding.resolve(inH: h, inW: w, kernel: (kh, kw), stride: (sh, sw), dilation: (dh, dw))
        (top, left) = (pads.top, pads.left)
        let raw = try ctx.weightValues("weight")  // [Cout, Cg, kH, kW]
        let cg = cin / a.groups
        var packed = [Float](repeating: 0, count: raw.count)
        for o in 0..<cout { for i in 0..<cg { for ky in 0..<kh { for kx in 0..<kw {
            packed[((o * kh + ky) * kw + kx) * cg + i] = raw[((o * cg + i) * kh + ky) * kw + kx]
        } } } }
        weight = packed
        bias = ctx.optionalWeightValues("bias") ?? [Float](repeating: 0, count: cout)
        activation = a.activation
        residual = a.residual
        if residual != nil, ctx.inputTypes.count != 2 || ctx.inputTypes[1].shape != y {
            throw RuntimeError.unsupportedOp(node: ctx.node.name, op: ctx.node.op.name,
                                             message: "a conv2d with a fused residual needs input 1 of the output's shape \(y)")
        }
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let cg = cin / groups, coutG = cout / groups
        weight.withUnsafeBufferPointer { wbuf in
            let wp = wbuf.baseAddress!
            for b in 0..<n { for oy in 0..<oh { for ox in 0..<ow { for oc in 0..<cout {
                let g = oc / coutG
                var acc = Double(bias[oc])
                for ky in 0..<kh {
                    let iy = oy * sh - top + ky * dh
                    if iy < 0 || iy >= h { continue }
                    for kx in 0..<kw {
                        let ix = ox * sw - left + kx * dw
                        if ix < 0 || ix >= w { continue }
                        let xs = x + ((b * h + iy) * w + ix) * cin + g * cg
                        let ws = wp + ((oc * kh + ky) * kw + kx) * cg
                        for i in 0..<cg { acc += Double(xs[i]) * Double(ws[i]) }
                    }
                }
                y[((b * oh + oy) * ow + ox) * cout + oc] = Float(acc)
            } } } }
        }
        applyActivation(activation, y, count: n * oh * ow * cout)
        if let residual {
            let r = inputs[1], count = n * oh * ow * cout
            for i in 0..<count { y[i] += r[i] }
            applyActivation(residual.activation, y, count: count)
        }
    }
}
