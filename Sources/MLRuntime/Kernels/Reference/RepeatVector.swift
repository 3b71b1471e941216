import MLGraph

/// Reference `Op.repeatVector` (Keras `RepeatVector`): x [N, D] → y [N, n, D], y[b, r, :] = x[b, :].
final class ReferenceRepeatVector: Kernel {
    let batch, repeats, length: Int

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .repeatVector(n) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        return ReferenceRepeatVector(batch: s[0], repeats: n, length: s[1])
    }

    private init(batch: Int, repeats: Int, length: Int) { self.batch = batch; self.repeats = repeats; self.length = length }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        for b in 0..<batch {
            for r in 0..<repeats {
                (outputs[0] + (b * repeats + r) * length).update(from: inputs[0] + b * length, count: length)
            }
        }
    }
}
