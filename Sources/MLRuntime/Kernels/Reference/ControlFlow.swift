import MLGraph

// Kernel-table entries of the control-flow, tensor-list and shape ops. `cond`, `whileLoop` and
// the list ops own blocks or produce lists, which no buffer kernel can hold: `Model` runs them in
// its dynamic executor (DynamicExecutor.swift), and their factories here refuse to build a
// standalone kernel. `shape` of a tensor whose shape is known at load is an ordinary kernel.

enum ControlFlowKernels {
    /// Refuses: the op runs only inside `Model` (dynamic executor).
    static func dynamicOnly(_ ctx: KernelContext) throws -> Kernel? {
        throw RuntimeError.unsupportedOp(node: ctx.node.name, op: ctx.node.op.name,
                                         message: "runs in Model's dynamic executor (control flow / tensor lists), not as a standalone kernel")
    }
}

/// Reference `Op.shape` for an input of known shape: writes its dimensions as int32.
final class ReferenceShape: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .shape = ctx.node.op, ctx.inputTypes[0].isFullyKnown else { return nil }
        let dims = ctx.inputTypes[0].shape.map { Int32(clamping: $0) }
        return ReferenceShape { _, outs in
            for (i, d) in dims.enumerated() { outs[0].storeBytes(of: d, toByteOffset: i * 4, as: Int32.self) }
        }
    }
}
