import MLGraph

/// Reference `Op.pool2d`: x [N, H, W, C] → y [N, Ho, Wo, C] over kH×kW windows with strides and
/// `PaddingMode` (resolved with `PaddingMode.resolve`). Padded pixels are ignored, as in Keras/TF:
/// max is over the in-range pixels; average is their sum divided by their count (Core ML
/// avgPoolExcludePadding). A window with no in-range pixel (possible only with large explicit
/// padding) gives 0. Max pooling propagates NaN. Average sums in Double.
final class ReferencePool2D: Kernel {
    let kind: PoolKind
    let n, h, w, c, oh, ow, kh, kw, sh, sw, top, left: Int

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .pool2d(a) = ctx.node.op else { return nil }
        return ReferencePool2D(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: Pool2DAttributes) {
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        kind = a.kind
        (n, h, w, c) = (x[0], x[1], x[2], x[3])
        (oh, ow) = (y[1], y[2])
        (kh, kw, sh, sw) = (a.kernel[0], a.kernel[1], a.strides[0], a.strides[1])
        let pads = a.padding.resolve(inH: h, inW: w, kernel: (kh, kw), stride: (sh, sw), dilation: (1, 1))
        (top, left) = (pads.top, pads.left)
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for b in 0..<n { for oy in 0..<oh { for ox in 0..<ow { for ch in 0..<c {
            let y0 = Swift.max(oy * sh - top, 0), y1 = Swift.min(oy * sh - top + kh, h)
            let x0 = Swift.max(ox * sw - left, 0), x1 = Swift.min(ox * sw - left + kw, w)
            var result: Float = 0
            if y0 < y1 && x0 < x1 {
                switch kind {
                case .max:
                    var m = -Float.infinity
                    for iy in y0..<y1 { for ix in x0..<x1 {
                        let v = x[((b * h + iy) * w + ix) * c + ch]
                        if v > m || v.isNaN && !m.isNaN { m = v }
                    } }
                    result = m
                case .average:
                    var sum = 0.0
                    for iy in y0..<y1 { for ix in x0..<x1 { sum += Double(x[((b * h + iy) * w + ix) * c + ch]) } }
                    result = Float(sum / Double((y1 - y0) * (x1 - x0)))
                }
            }
            y[((b * oh + oy) * ow + ox) * c + ch] = result
        } } } }
    }
}
