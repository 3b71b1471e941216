import MLGraph

/// Reference `Op.elementwise`: n inputs (subtract: 2) with NumPy broadcasting to the output shape,
/// combined left to right:
/// - add: Σ xₖ; subtract: x₀ − x₁; multiply: Π xₖ; average: (Σ xₖ)/n;
/// - maximum / minimum: NaN if any input is NaN (as `tf.maximum`), else the max / min.
///
/// Supports in-place when input 0 already has the output's shape.
final class ReferenceElementwise: Kernel {
    let kind: ElementwiseKind
    let outShape: [Int]
    let strides: [[Int]]
    let inPlace: Bool

    var supportsInPlace: Bool { inPlace }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .elementwise(kind) = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        return ReferenceElementwise(kind: kind, outShape: out, strides: ctx.inputTypes.map { broadcastStrides($0.shape, to: out) },
                                    inPlace: ctx.inputTypes[0].shape == out)
    }

    private init(kind: ElementwiseKind, outShape: [Int], strides: [[Int]], inPlace: Bool) {
        self.kind = kind; self.outShape = outShape; self.strides = strides; self.inPlace = inPlace
    }

    @inline(__always)
    private func combine(_ a: Float, _ b: Float) -> Float {
        switch kind {
        case .add, .average: return a + b
        case .subtract: return a - b
        case .multiply: return a * b
        case .maximum: return a.isNaN || b.isNaN ? .nan : Swift.max(a, b)
        case .minimum: return a.isNaN || b.isNaN ? .nan : Swift.min(a, b)
        }
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let y = outputs[0]
        var it = Odometer(shape: outShape, strides: strides)
        let scale = kind == .average ? 1 / Float(inputs.count) : 1
        for o in 0..<outShape.reduce(1, *) {
            var v = inputs[0][it.offsets[0]]
            for k in 1..<inputs.count { v = combine(v, inputs[k][it.offsets[k]]) }
            y[o] = kind == .average ? v * scale : v
            it.advance()
        }
    }
}
