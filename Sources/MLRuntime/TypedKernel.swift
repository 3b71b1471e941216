import MLGraph

/// A kernel whose tensors may have any `ElementType` (integer and boolean ops, `cast`, gathers):
/// `Model` calls `run(typedInputs:typedOutputs:)` with raw buffers instead of float ones.
///
/// Each buffer holds `inputTypes[i].elementCount` (`outputTypes[i].elementCount`) elements of the
/// tensor's element type, dense row-major, little-endian, with the type's natural layout (bool: one
/// byte, 0 or 1), starting on a 64-byte boundary. Read and write them with
/// `load(fromByteOffset:as:)` / `storeBytes(of:toByteOffset:as:)` (or the helpers in
/// Kernels/Reference/TypedSupport.swift). Same rules as `Kernel`: no throwing, no allocation of
/// tensors, no per-call mutable state; outputs never alias inputs unless `supportsInPlace`.
///
/// Kernels that do not adopt this protocol are float32 kernels: `Model.init` refuses to load a
/// graph in which such a kernel would read or write a tensor of another element type
/// (`RuntimeError.elementTypeMismatch`).
public protocol TypedKernel: Kernel {
    func run(typedInputs: [UnsafeRawPointer], typedOutputs: [UnsafeMutableRawPointer])
}

extension TypedKernel {
    /// Float entry point: forwards the buffers as raw pointers (for callers that hold float32
    /// buffers of a node whose tensors are all float32).
    public func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        run(typedInputs: inputs.map { UnsafeRawPointer($0) }, typedOutputs: outputs.map { UnsafeMutableRawPointer($0) })
    }
}

extension KernelContext {
    /// Checks that a float32 kernel (not a `TypedKernel`) is only given float32 tensors.
    /// - Throws: `RuntimeError.elementTypeMismatch` naming the node, the tensor, float32 and the
    ///   tensor's element type.
    func checkFloatKernel(_ kernel: Kernel) throws {
        guard !(kernel is TypedKernel) else { return }
        for (name, t) in zip(node.inputs + node.outputs, inputTypes + outputTypes) where t.elementType != .float32 {
            throw RuntimeError.elementTypeMismatch(node: node.name, op: node.op.name, tensor: name, expected: .float32, found: t.elementType)
        }
    }
}
