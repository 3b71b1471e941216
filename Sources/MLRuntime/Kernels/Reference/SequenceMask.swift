import MLGraph

/// Reference `Op.sequenceMask` (Keras `Masking(mask_value)`, Embedding `mask_zero`):
/// x [N, T, …] → mask [N, T], 1 where any element of step (n, t) differs from `value` (a NaN
/// differs from everything), else 0.
final class ReferenceSequenceMask: Kernel {
    let steps: Int
    let stepSize: Int
    let value: Float

    /// The kernel for an `Op.sequenceMask` node (nil for other ops).
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .sequenceMask(value) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        guard s.count >= 2 else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "sequenceMask: expects a rank ≥ 2 input, found \(formatShape(s))")
        }
        return ReferenceSequenceMask(steps: s[0] * s[1], stepSize: s.dropFirst(2).reduce(1, *), value: value)
    }

    private init(steps: Int, stepSize: Int, value: Float) {
        self.steps = steps; self.stepSize = stepSize; self.value = value
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for s in 0..<steps {
            var any = false
            for i in 0..<stepSize where x[s * stepSize + i] != value {
                any = true
                break
            }
            y[s] = any ? 1 : 0
        }
    }
}

/// Reference `Op.applyMask` (the output of Keras `Masking`): x [N, T, …] (input 0) times
/// mask [N, T] (input 1) broadcast over each step: y[n, t, …] = x[n, t, …]·mask[n, t] (so a NaN
/// at a masked step stays NaN, as in Keras). Supports in-place on input 0.
final class ReferenceApplyMask: Kernel {
    let steps: Int
    let stepSize: Int

    var supportsInPlace: Bool { true }

    /// The kernel for an `Op.applyMask` node (nil for other ops).
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .applyMask = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        guard s.count >= 2, ctx.inputTypes.count == 2, ctx.inputTypes[1].shape == Array(s.prefix(2)) else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "applyMask: mask must have the first two axes of \(formatShape(s))")
        }
        return ReferenceApplyMask(steps: s[0] * s[1], stepSize: s.dropFirst(2).reduce(1, *))
    }

    private init(steps: Int, stepSize: Int) { self.steps = steps; self.stepSize = stepSize }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], mask = inputs[1], y = outputs[0]
        for s in 0..<steps {
            let m = mask[s]
            for i in 0..<stepSize { y[s * stepSize + i] = x[s * stepSize + i] * m }
        }
    }
}
