import MLGraph

/// Reference `Op.crop`, any rank: y[j] = x[j + before] per axis (removes `crops[d] = [before,
/// after]` elements from each axis).
final class ReferenceCrop: Kernel {
    let outShape: [Int]
    let inStrides: [Int]
    let base: Int

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .crop(crops) = ctx.node.op else { return nil }
        let strides = rowMajorStrides(ctx.inputTypes[0].shape)
        return ReferenceCrop(outShape: ctx.outputTypes[0].shape, inStrides: strides,
                             base: zip(crops, strides).reduce(0) { $0 + $1.0[0] * $1.1 })
    }

    private init(outShape: [Int], inStrides: [Int], base: Int) { self.outShape = outShape; self.inStrides = inStrides; self.base = base }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var it = Odometer(shape: outShape, strides: [inStrides], base: [base])
        for o in 0..<outShape.reduce(1, *) {
            y[o] = x[it.offsets[0]]
            it.advance()
        }
    }
}
