import MLGraph

/// Reference `Op.reshape` and `Op.reshapeND`: row-major data is unchanged, so y = x (a copy,
/// skipped when the memory plan runs it in place).
final class ReferenceReshape: Kernel {
    let count: Int
    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        switch ctx.node.op {
        case .reshape, .reshapeND: break
        default: return nil
        }
        return ReferenceReshape(count: ctx.inputTypes[0].elementCount)
    }

    private init(count: Int) { self.count = count }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        copyIfDistinct(inputs[0], outputs[0], count: count)
    }
}
