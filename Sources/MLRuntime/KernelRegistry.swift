import Diagnostics
import MLGraph

/// The kernel tables, keyed by `OpKind`: for each op kind, an optimized (oneDNN) factory tried
/// first, then the reference kernel that every op kind has (a test iterates `OpKind.allCases`).
/// `Model.Configuration.referenceOnly` skips the optimized table — the oracle tests compare against.
package enum KernelRegistry {
    /// Plain Swift kernels, one per op: the specification of each op's numerics.
    public static let reference: [OpKind: KernelFactory] = ReferenceKernels.table
    /// Fast kernels (oneDNN); an op may be absent, and a factory may decline a configuration.
    public static let optimized: [OpKind: KernelFactory] = OptimizedKernels.table


    /// The names of the kernel implementations that can run a node of `kind`: "reference" always,
    /// then "oneDNN" or "memcpy" when an optimized kernel is registered (it may still decline some
    /// configurations; `kernels(covering:inputs:)` asks it about one).
    public static func kernelNames(for kind: OpKind) -> [String] {
        guard optimized[kind] != nil else { return ["reference"] }
        return ["reference", OptimizedKernels.memcpyKinds.contains(kind) ? "memcpy" : "oneDNN"]
    }

    /// The kernel implementations that accept a node of `op` on inputs `inputs` (the optimized
    /// kernel is built and asked; a configuration it declines or rejects is not listed).
    public static func kernels(covering op: Op, inputs: [TensorType]) -> [String] {
        let node = Node(name: "probe", op: op, inputs: inputs.indices.map { "in\($0)" }, outputs: ["out"])
        guard let outs = try? node.inferOutputTypes(inputs) else { return [] }
        let ctx = KernelContext(node: node, inputTypes: inputs, outputTypes: outs, threadCount: 1)
        var names: [String] = []
        if reference[op.kind] != nil { names.append("reference") }
        if let f = optimized[op.kind], let _ = try? f(ctx) {
            names.append(OptimizedKernels.memcpyKinds.contains(op.kind) ? "memcpy" : "oneDNN")
        }
        return names
    }

    /// Builds the kernel for `context.node`, preferring optimized kernels unless `referenceOnly`.
    /// - Throws: `RuntimeError.unsupportedOp` when no table has the op;
    ///   `.elementTypeMismatch` when the kernel is a float32 kernel (not a `TypedKernel`) and a
    ///   tensor of the node is not float32; a factory's
    ///   `RuntimeError` as is; any other factory error wrapped in `RuntimeError.kernelFailure`
    ///   naming the node.
    public static func makeKernel(_ context: KernelContext, referenceOnly: Bool) throws -> Kernel {
        let k = context.node.op.kind
        do {
            // A float32 kernel on a tensor of another element type is skipped (optimized) or
            // refused (reference: `RuntimeError.elementTypeMismatch`).
            if !referenceOnly, let f = optimized[k], let kernel = try f(context), (try? context.checkFloatKernel(kernel)) != nil {
                return kernel
            }
            if let f = reference[k], let kernel = try f(context) {
                // Data-movement ops on other element types: their typed versions.
                if (try? context.checkFloatKernel(kernel)) == nil, let typed = try TypedDataMovementKernels.table[k]?(context) {
                    return typed
                }
                try context.checkFloatKernel(kernel)
                return kernel
            }
        } catch let e as RuntimeError {
            throw e
        } catch {
            throw RuntimeError.kernelFailure(node: context.node.name, message: context.node.op.name, cause: DiagnosticCause(error))
        }
        throw RuntimeError.unsupportedOp(node: context.node.name, op: context.node.op.name,
                                         message: "no reference kernel covers this configuration")
    }
}
