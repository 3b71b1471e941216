import CDNNL
import MLGraph

/// elementwise on oneDNN binary for two inputs: add, subtract, multiply, and average (add with
/// an eltwise linear(0.5) post-op). Input 1 may broadcast (NumPy rules, size-1 axes); for the
/// commutative kinds input 0 may broadcast instead (the operands are swapped). Declines three or
/// more inputs, two broadcasting inputs, and maximum/minimum (oneDNN's max/min do not propagate
/// NaN as the reference does). In place when input 0 has the output's shape.
enum DNNLElementwise {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .elementwise(kind) = ctx.node.op, ctx.inputTypes.count == 2, ctx.outputTypes.count == 1
        else { return nil }
        let alg: dnnl_alg_kind_t
        switch kind {
        case .add, .average: alg = dnnl_binary_add
        case .subtract: alg = dnnl_binary_sub
        case .multiply: alg = dnnl_binary_mul
        case .maximum, .minimum: return nil
        }
        return try makeDNNLBinaryKernel(ctx, alg: alg, commutative: kind != .subtract, constant: nil,
                                        postOps: kind == .average ? [DNNLEltwise(alg: dnnl_eltwise_linear, alpha: 0.5, beta: 0)] : [])
    }
}
