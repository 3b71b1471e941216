import Foundation
import MLGraph

/// Reference `Op.upsample2d`: x [N, H, W, C] → y [N, H·sH, W·sW, C].
///
/// - `.nearest`: y[oy, ox] = x[oy / sH, ox / sW] (Keras `UpSampling2D`, Core ML NN).
/// - Bilinear modes map an output coordinate to a source coordinate `src` per axis, then
///   interpolate as TF's `resize_bilinear`: lower = max(floor(src), 0), upper = min(ceil(src),
///   in − 1), t = src − floor(src);
///   top = x[lo_y, lo_x] + (x[lo_y, hi_x] − x[lo_y, lo_x])·t_x (likewise bottom), y = top + (bottom − top)·t_y.
///   - `.bilinearHalfPixel` (TF2 `tf.image.resize`, Keras `UpSampling2D(interpolation='bilinear')`):
///     src = (dst + 0.5)·(in/out) − 0.5;
///   - `.bilinearAlignCorners`: src = dst·(in − 1)/(out − 1) (0 when out = 1);
///   - `.bilinearAsymmetric` (TF1 default, Core ML BILINEAR default): src = dst·(in/out).
///
/// Scales are computed in Float as TF does.
final class ReferenceUpsample2D: Kernel {
    struct Tap { let lower: Int; let upper: Int; let t: Float }
    let n, h, w, c, oh, ow: Int
    let mode: UpsampleMode
    let rows: [Tap]
    let cols: [Tap]

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .upsample2d(a) = ctx.node.op else { return nil }
        return ReferenceUpsample2D(ctx, a)
    }

    /// Interpolation taps for resizing `input` to `output` along one axis.
    static func taps(input: Int, output: Int, mode: UpsampleMode) -> [Tap] {
        (0..<output).map { dst -> Tap in
            let src: Float
            switch mode {
            case .nearest: return Tap(lower: dst * input / output, upper: dst * input / output, t: 0)
            case .bilinearHalfPixel: src = (Float(dst) + 0.5) * (Float(input) / Float(output)) - 0.5
            case .bilinearAlignCorners: src = output > 1 ? Float(dst) * (Float(input - 1) / Float(output - 1)) : 0
            case .bilinearAsymmetric: src = Float(dst) * (Float(input) / Float(output))
            }
            let f = floorf(src)
            return Tap(lower: Swift.max(Int(f), 0), upper: Swift.min(Int(ceilf(src)), input - 1), t: src - f)
        }
    }

    private init(_ ctx: KernelContext, _ a: Upsample2DAttributes) {
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        (n, h, w, c) = (x[0], x[1], x[2], x[3])
        (oh, ow) = (y[1], y[2])
        mode = a.mode
        rows = ReferenceUpsample2D.taps(input: h, output: oh, mode: a.mode)
        cols = ReferenceUpsample2D.taps(input: w, output: ow, mode: a.mode)
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        func at(_ b: Int, _ iy: Int, _ ix: Int, _ ch: Int) -> Float { x[((b * h + iy) * w + ix) * c + ch] }
        for b in 0..<n { for oy in 0..<oh { for ox in 0..<ow { for ch in 0..<c {
            let r = rows[oy], q = cols[ox]
            let v: Float
            if mode == .nearest {
                v = at(b, r.lower, q.lower, ch)
            } else {
                let tl = at(b, r.lower, q.lower, ch), tr = at(b, r.lower, q.upper, ch)
                let bl = at(b, r.upper, q.lower, ch), br = at(b, r.upper, q.upper, ch)
                let top = tl + (tr - tl) * q.t, bottom = bl + (br - bl) * q.t
                v = top + (bottom - top) * r.t
            }
            y[((b * oh + oy) * ow + ox) * c + ch] = v
        } } } }
    }
}
