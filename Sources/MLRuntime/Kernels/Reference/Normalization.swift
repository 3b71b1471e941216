import Foundation
import MLGraph

/// Reference `Op.layerNorm` and `Op.instanceNorm`: the input is split into slices (`AxisSplit`
/// by the normalised axes); for each slice, in Double,
///
///     mean = Σx/n,  var = Σ(x − mean)²/n,  y = (x − mean)/sqrt(var + epsilon)·gamma + beta
///
/// with gamma/beta indexed by the member (layer norm: the flat index in the normalised axes) or
/// by the channel (instance norm: group index mod C). Absent gamma = 1, absent beta = 0.
final class ReferenceMeanVarianceNorm: Kernel {
    let split: AxisSplit
    let epsilon: Double
    let gamma: [Float]?, beta: [Float]?
    /// Instance norm: gamma/beta by channel (group mod channels); else by member.
    let perChannel: Int?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let shape = ctx.inputTypes[0].shape
        switch ctx.node.op {
        case let .layerNorm(a):
            guard let axes = resolveAxisSet(a.axes, rank: shape.count) else {
                throw RuntimeError.kernelFailure(node: ctx.node.name, message: "layerNorm: invalid axes \(a.axes) for \(formatShape(shape))")
            }
            return ReferenceMeanVarianceNorm(ctx, AxisSplit(shape: shape, axes: axes), a.epsilon, perChannel: nil)
        case let .instanceNorm(epsilon):
            guard shape.count >= 3 else { return nil }
            return ReferenceMeanVarianceNorm(ctx, AxisSplit(shape: shape, axes: Array(1..<(shape.count - 1))), epsilon,
                                             perChannel: shape[shape.count - 1])
        default: return nil
        }
    }

    private init(_ ctx: KernelContext, _ split: AxisSplit, _ epsilon: Float, perChannel: Int?) {
        self.split = split; self.epsilon = Double(epsilon); self.perChannel = perChannel
        gamma = ctx.optionalWeightValues("gamma"); beta = ctx.optionalWeightValues("beta")
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let members = split.memberOffsets
        let n = Double(members.count)
        for (g, base) in split.groupOffsets.enumerated() {
            var sum = 0.0
            for m in members { sum += Double(x[base + m]) }
            let mean = sum / n
            var sq = 0.0
            for m in members { let d = Double(x[base + m]) - mean; sq += d * d }
            let inv = 1 / (sq / n + epsilon).squareRoot()
            for (j, m) in members.enumerated() {
                let w = perChannel.map { g % $0 } ?? j
                let v = (Double(x[base + m]) - mean) * inv * Double(gamma?[w] ?? 1) + Double(beta?[w] ?? 0)
                y[base + m] = Float(v)
            }
        }
    }
}

/// Reference `Op.l2Norm`: y = x / sqrt(Σ x² + epsilon) over the slice of `axes` (Double sums).
final class ReferenceL2Norm: Kernel {
    let split: AxisSplit
    let epsilon: Double

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .l2Norm(a) = ctx.node.op else { return nil }
        let shape = ctx.inputTypes[0].shape
        guard let axes = resolveAxisSet(a.axes, rank: shape.count) else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "l2Norm: invalid axes \(a.axes) for \(formatShape(shape))")
        }
        return ReferenceL2Norm(split: AxisSplit(shape: shape, axes: axes), epsilon: Double(a.epsilon))
    }

    private init(split: AxisSplit, epsilon: Double) { self.split = split; self.epsilon = epsilon }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let members = split.memberOffsets
        for base in split.groupOffsets {
            var sq = 0.0
            for m in members { let v = Double(x[base + m]); sq += v * v }
            let inv = 1 / (sq + epsilon).squareRoot()
            for m in members { y[base + m] = Float(Double(x[base + m]) * inv) }
        }
    }
}

/// Reference `Op.localResponseNorm` along the last axis (C channels):
/// y[c] = x[c] / (k + alpha/size · Σ_{j=max(0, c−⌊(size−1)/2⌋)}^{min(C−1, c+⌈(size−1)/2⌉)} x[j]²)^beta,
/// in Double.
final class ReferenceLocalResponseNorm: Kernel {
    let a: LocalResponseNormAttributes
    let channels: Int, count: Int

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .localResponseNorm(a) = ctx.node.op, let c = ctx.inputTypes[0].shape.last else { return nil }
        return ReferenceLocalResponseNorm(a: a, channels: c, count: ctx.inputTypes[0].elementCount)
    }

    private init(a: LocalResponseNormAttributes, channels: Int, count: Int) { self.a = a; self.channels = channels; self.count = count }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let before = (a.size - 1) / 2, after = a.size / 2
        let scale = Double(a.alpha) / Double(a.size)
        for base in stride(from: 0, to: count, by: channels) {
            for c in 0..<channels {
                var sq = 0.0
                for j in Swift.max(0, c - before)...Swift.min(channels - 1, c + after) {
                    let v = Double(x[base + j]); sq += v * v
                }
                y[base + c] = Float(Double(x[base + c]) / pow(Double(a.k) + scale * sq, Double(a.beta)))
            }
        }
    }
}
