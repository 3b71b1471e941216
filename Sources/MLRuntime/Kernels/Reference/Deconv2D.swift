import MLGraph

/// Reference `Op.deconv2d` (transposed convolution, Keras `Conv2DTranspose`):
/// x [N, H, W, Cin] → y [N, Ho, Wo, Cout], weight [Cin, Cout/groups, kH, kW], optional bias [Cout].
///
/// Every input pixel scatters into the full (uncropped) output:
///
///     full[n, iy·sH + ky·dH, ix·sW + kx·dW, g·Og + o] += x[n, iy, ix, c] · weight[c, o, ky, kx]
///
/// for c in group g (Cin/groups channels each), o in 0..<Og = Cout/groups. The full size per axis is
/// (in−1)·s + (k−1)·d + 1 + outputPadding. The output is the window of `deconvOutputSize` pixels
/// starting at `top`/`left` of `full` (pixels beyond `full` are 0):
/// - `.valid`: top = left = 0 (the output is `full`);
/// - `.same`: output in·s + outputPadding; total = full − output, top = max(total, 0)/2 (TF
///   `conv2d_transpose` SAME, as Keras), the rest cropped at the bottom/right;
/// - `.explicit(t, b, l, r)`: top = t, left = l.
///
/// Then + bias and the fused activation. Computed as a gather (for each output pixel, the input
/// pixels that reach it); accumulates in Double.
/// - Complexity: N·Ho·Wo·Cout·kH·kW·Cin/groups checks, at most that many multiply-adds.
final class ReferenceDeconv2D: Kernel {
    let n, h, w, cin, oh, ow, cout, kh, kw, sh, sw, dh, dw, top, left, groups: Int
    let weight: [Float]  // [Cin, Cout/groups, kH, kW]
    let bias: [Float]
    let activation: Activation?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .deconv2d(a) = ctx.node.op else { return nil }
        return try ReferenceDeconv2D(ctx, a)
    }

    /// (top, left) crop of the full output for `a` on an input of `inH`×`inW`.
    static func cropOrigin(inH: Int, inW: Int, _ a: Deconv2DAttributes) -> (Int, Int) {
        func origin(_ input: Int, _ axis: Int) -> Int {
            switch a.padding {
            case .valid: return 0
            case .same:
                let full = (input - 1) * a.strides[axis] + (a.kernel[axis] - 1) * a.dilations[axis] + 1 + a.outputPadding[axis]
                return Swift.max(full - deconvOutputSize(input, axis: axis, a), 0) / 2
            case let .explicit(t, _, l, _): return axis == 0 ? t : l
            }
        }
        return (origin(inH, 0), origin(inW, 1))
    }

    private init(_ ctx: KernelContext, _ a: Deconv2DAttributes) throws {
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        (n, h, w, cin) = (x[0], x[1], x[2], x[3])
        (oh, ow, cout) = (y[1], y[2], y[3])
        (kh, kw, sh, sw, dh, dw) = (a.kernel[0], a.kernel[1], a.strides[0], a.strides[1], a.dilations[0], a.dilations[1])
        groups = a.groups
        (top, left) = ReferenceDeconv2D.cropOrigin(inH: h, inW: w, a)
        weight = try ctx.weightValues("weight")
        bias = ctx.optionalWeightValues("bias") ?? [Float](repeating: 0, count: cout)
        activation = a.activation
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let cg = cin / groups, og = cout / groups
        for b in 0..<n { for oy in 0..<oh { for ox in 0..<ow { for oc in 0..<cout {
            let g = oc / og, o = oc % og
            let fy = oy + top, fx = ox + left  // position in the full output
            var acc = Double(bias[oc])
            for ky in 0..<kh {
                let ty = fy - ky * dh
                if ty < 0 || ty % sh != 0 || ty / sh >= h { continue }
                let iy = ty / sh
                for kx in 0..<kw {
                    let tx = fx - kx * dw
                    if tx < 0 || tx % sw != 0 || tx / sw >= w { continue }
                    let ix = tx / sw
                    for i in 0..<cg {
                        let c = g * cg + i
                        acc += Double(x[((b * h + iy) * w + ix) * cin + c]) * Double(weight[((c * og + o) * kh + ky) * kw + kx])
                    }
                }
            }
            y[((b * oh + oy) * ow + ox) * cout + oc] = Float(acc)
        } } } }
        applyActivation(activation, y, count: n * oh * ow * cout)
    }
}
