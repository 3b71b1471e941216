import MLGraph

/// Reference `Op.identity`: y = x (a copy, skipped when run in place).
final class ReferenceIdentity: Kernel {
    let count: Int
    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .identity = ctx.node.op else { return nil }
        return ReferenceIdentity(count: ctx.inputTypes[0].elementCount)
    }

    private init(count: Int) { self.count = count }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        copyIfDistinct(inputs[0], outputs[0], count: count)
    }
}
