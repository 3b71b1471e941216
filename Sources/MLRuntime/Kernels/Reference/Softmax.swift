import Foundation
import MLGraph

/// Reference `Op.softmax` along any axis (negative axes resolved against the rank):
///
///     y[…, j, …] = exp(x[…, j, …] − m) / Σ_k exp(x[…, k, …] − m),  m = max_k x[…, k, …]
///
/// (max-subtracted, so large inputs do not overflow; sums in Double). A NaN in a slice makes the
/// slice NaN; +∞ gives NaN as in TF.
final class ReferenceSoftmax: Kernel {
    let outer, length, inner: Int

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .softmax(rawAxis) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        guard let axis = resolvedAxis(rawAxis, rank: s.count) else { return nil }
        return ReferenceSoftmax(outer: s[..<axis].reduce(1, *), length: s[axis], inner: s[(axis + 1)...].reduce(1, *))
    }

    private init(outer: Int, length: Int, inner: Int) { self.outer = outer; self.length = length; self.inner = inner }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for o in 0..<outer {
            for i in 0..<inner {
                let base = o * length * inner + i
                var m = -Float.infinity
                for j in 0..<length {
                    let v = x[base + j * inner]
                    if v > m || v.isNaN { m = v }
                    if m.isNaN { break }
                }
                var sum = 0.0
                for j in 0..<length {
                    let e = expf(x[base + j * inner] - m)
                    y[base + j * inner] = e
                    sum += Double(e)
                }
                for j in 0..<length { y[base + j * inner] = Float(Double(y[base + j * inner]) / sum) }
            }
        }
    }
}
