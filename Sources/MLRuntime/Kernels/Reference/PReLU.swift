import MLGraph

/// Reference `Op.prelu` (Keras `PReLU`): y = x if x ≥ 0 else alpha·x, with weight "alpha" of the
/// input's shape without the batch dimension, 1 on shared axes (NumPy broadcasting). Supports
/// in-place.
final class ReferencePReLU: Kernel {
    let shape: [Int]
    let alphaStrides: [Int]
    let alpha: [Float]

    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .prelu = ctx.node.op else { return nil }
        let shape = ctx.inputTypes[0].shape
        let alphaShape = ctx.node.weights["alpha"]?.shape ?? []
        return ReferencePReLU(shape: shape, alphaStrides: broadcastStrides(alphaShape, to: shape),
                              alpha: try ctx.weightValues("alpha"))
    }

    private init(shape: [Int], alphaStrides: [Int], alpha: [Float]) {
        self.shape = shape; self.alphaStrides = alphaStrides; self.alpha = alpha
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var it = Odometer(shape: shape, strides: [alphaStrides])
        for i in 0..<shape.reduce(1, *) {
            let v = x[i]
            y[i] = v >= 0 ? v : alpha[it.offsets[0]] * v
            it.advance()
        }
    }
}
