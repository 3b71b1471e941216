import MLGraph

/// Reference `Op.concat` along any axis: for each index of the axes before `axis`, the inputs'
/// contiguous blocks (shape[axis]·inner values each) are copied one after another.
final class ReferenceConcat: Kernel {
    let outer: Int
    /// Values per outer index for each input.
    let blocks: [Int]

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .concat(rawAxis) = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        guard let axis = resolvedAxis(rawAxis, rank: out.count) else { return nil }
        return ReferenceConcat(outer: out[..<axis].reduce(1, *),
                               blocks: ctx.inputTypes.map { $0.shape[axis...].reduce(1, *) })
    }

    private init(outer: Int, blocks: [Int]) { self.outer = outer; self.blocks = blocks }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        var y = outputs[0]
        for o in 0..<outer {
            for (k, block) in blocks.enumerated() {
                y.update(from: inputs[k] + o * block, count: block)
                y += block
            }
        }
    }
}
