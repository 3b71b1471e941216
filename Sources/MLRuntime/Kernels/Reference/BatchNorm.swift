import MLGraph

/// Reference `Op.batchNorm` (inference) along any axis, folded at load to
///
///     scale[c] = gamma[c] / sqrt(variance[c] + epsilon),  shift[c] = beta[c] − mean[c]·scale[c]
///     y = x·scale[c] + shift[c]   with c the index along `axis`
///
/// (absent gamma = 1, absent beta = 0; the fold is computed in Double). Supports in-place.
final class ReferenceBatchNorm: Kernel {
    let count, channels, inner: Int
    let scale: [Float]
    let shift: [Float]

    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .batchNorm(a) = ctx.node.op else { return nil }
        return try ReferenceBatchNorm(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: BatchNormAttributes) throws {
        let s = ctx.inputTypes[0].shape
        count = ctx.inputTypes[0].elementCount
        channels = s[a.axis]
        inner = s[(a.axis + 1)...].reduce(1, *)
        let mean = try ctx.weightValues("mean"), variance = try ctx.weightValues("variance")
        let gamma = ctx.optionalWeightValues("gamma"), beta = ctx.optionalWeightValues("beta")
        var scale = [Float](repeating: 0, count: channels), shift = scale
        for c in 0..<channels {
            let k = Double(gamma?[c] ?? 1) / (Double(variance[c]) + Double(a.epsilon)).squareRoot()
            scale[c] = Float(k)
            shift[c] = Float(Double(beta?[c] ?? 0) - Double(mean[c]) * k)
        }
        self.scale = scale; self.shift = shift
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for i in 0..<count {
            let c = (i / inner) % channels
            y[i] = x[i] * scale[c] + shift[c]
        }
    }
}
