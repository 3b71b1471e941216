// MARK: random ops — the reference kernel of `Op.random`.
import MLGraph

/// Reference `Op.random`: output element i (row-major) is `RandomAttributes.sample(i)` — the
/// generator documented on `RandomAttributes` (splitmix64 counter stream, Box–Muller normals).
/// The input's values are not read (any element type), so the kernel is typed.
final class ReferenceRandom: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .random(a) = ctx.node.op else { return nil }
        let n = ctx.outputTypes[0].elementCount
        return ReferenceRandom { _, outs in
            let y = outs[0].assumingMemoryBound(to: Float.self)
            for i in 0..<n { y[i] = a.sample(i) }
        }
    }
}
