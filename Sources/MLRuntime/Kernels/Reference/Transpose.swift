import MLGraph

/// Reference `Op.transpose`: output axis i is input axis perm[i], i.e.
/// y[j₀, …, jᵣ] = x at the index whose axis perm[i] is jᵢ.
final class ReferenceTranspose: Kernel {
    let outShape: [Int]
    /// Input strides in output-axis order: strides[i] = inputStrides[perm[i]].
    let strides: [Int]

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .transpose(perm) = ctx.node.op else { return nil }
        let inStrides = rowMajorStrides(ctx.inputTypes[0].shape)
        return ReferenceTranspose(outShape: ctx.outputTypes[0].shape, strides: perm.map { inStrides[$0] })
    }

    private init(outShape: [Int], strides: [Int]) { self.outShape = outShape; self.strides = strides }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var it = Odometer(shape: outShape, strides: [strides])
        for o in 0..<outShape.reduce(1, *) {
            y[o] = x[it.offsets[0]]
            it.advance()
        }
    }
}
