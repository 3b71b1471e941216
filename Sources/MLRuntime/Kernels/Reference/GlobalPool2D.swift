import MLGraph

/// Reference `Op.globalPool2d`: x [N, H, W, C] → y [N, C] (or [N, 1, 1, C] with keepDims, the same
/// values), the max or the mean over all H·W pixels of each channel. Max propagates NaN; the mean
/// sums in Double.
final class ReferenceGlobalPool2D: Kernel {
    let kind: PoolKind
    let n, pixels, c: Int

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .globalPool2d(kind, _) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        return ReferenceGlobalPool2D(kind: kind, n: s[0], pixels: s[1] * s[2], c: s[3])
    }

    private init(kind: PoolKind, n: Int, pixels: Int, c: Int) { self.kind = kind; self.n = n; self.pixels = pixels; self.c = c }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for b in 0..<n {
            for ch in 0..<c {
                switch kind {
                case .max:
                    var m = -Float.infinity
                    for p in 0..<pixels {
                        let v = x[(b * pixels + p) * c + ch]
                        if v > m || v.isNaN && !m.isNaN { m = v }
                    }
                    y[b * c + ch] = m
                case .average:
                    var sum = 0.0
                    for p in 0..<pixels { sum += Double(x[(b * pixels + p) * c + ch]) }
                    y[b * c + ch] = Float(sum / Double(pixels))
                }
            }
        }
    }
}
