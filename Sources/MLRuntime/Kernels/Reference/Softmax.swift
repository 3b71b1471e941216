import Foundation
import MLGraph

/// Reference `Op.softmax` and `Op.logSoftmax` along any axis (negative axes resolved against the
/// rank), with m = max_k x[…, k, …] subtracted so large inputs do not overflow:
///
///     softmax:     y[…, j, …] = exp(x[…, j, …] − m) / Σ_k exp(x[…, k, …] − m)   (sum in Double)
///     logSoftmax:  y[…, j, …] = x[…, j, …] − m − log Σ_k exp(x[…, k, …] − m)      (in Double)
///
/// A NaN in a slice makes the slice NaN; +∞ gives NaN as in TF.
final class ReferenceSoftmax: Kernel {
    let outer, length, inner: Int
    let logarithm: Bool

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let rawAxis: Int, logarithm: Bool
        switch ctx.node.op {
        case let .softmax(a): rawAxis = a; logarithm = false
        case let .logSoftmax(a): rawAxis = a; logarithm = true
        default: return nil
        }
        let s = ctx.inputTypes[0].shape
        guard let axis = resolvedAxis(rawAxis, rank: s.count) else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "\(ctx.node.op.name): axis \(rawAxis) out of range for \(formatShape(s))")
        }
        return ReferenceSoftmax(outer: s[..<axis].reduce(1, *), length: s[axis], inner: s[(axis + 1)...].reduce(1, *), logarithm: logarithm)
    }

    private init(outer: Int, length: Int, inner: Int, logarithm: Bool) {
        self.outer = outer; self.length = length; self.inner = inner; self.logarithm = logarithm
    }

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
                if logarithm {
                    var sum = 0.0
                    for j in 0..<length { sum += exp(Double(x[base + j * inner]) - Double(m)) }
                    let shift = Double(m) + log(sum)
                    for j in 0..<length { y[base + j * inner] = Float(Double(x[base + j * inner]) - shift) }
                    continue
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
