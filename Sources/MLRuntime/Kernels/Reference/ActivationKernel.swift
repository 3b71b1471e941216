import MLGraph

/// Reference `Op.activation`: y = `Activation.apply`(x) elementwise, any shape. Supports in-place.
final class ReferenceActivation: Kernel {
    let activation: Activation
    let count: Int

    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .activation(a) = ctx.node.op else { return nil }
        return ReferenceActivation(activation: a, count: ctx.inputTypes[0].elementCount)
    }

    private init(activation: Activation, count: Int) { self.activation = activation; self.count = count }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for i in 0..<count { y[i] = activation.apply(x[i]) }
    }
}
