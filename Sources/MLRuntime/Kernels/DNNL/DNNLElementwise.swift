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
        let out = ctx.outputTypes[0].shape, rank = out.count
        guard rank >= 1, rank <= 12 else { return nil }
        func padded(_ s: [Int]) -> [Int] { Array(repeating: 1, count: rank - s.count) + s }
        var a = padded(ctx.inputTypes[0].shape), b = padded(ctx.inputTypes[1].shape)
        var swapped = false
        if a != out {
            guard kind != .subtract, b == out else { return nil }
            swap(&a, &b)
            swapped = true
        }
        guard zip(b, out).allSatisfy({ $0 == $1 || $0 == 1 }) else { return nil }

        let engine = try DNNLEngine.get()
        var src0 = try dnnlRowMajorMD(a), src1 = try dnnlRowMajorMD(b), dst = try dnnlRowMajorMD(out)
        var desc = dnnl_binary_desc_t()
        try dnnlCheck(dnnl_binary_desc_init(&desc, alg, &src0, &src1, &dst), "dnnl_binary_desc_init")
        let attr = try DNNLAttr(postOps: kind == .average ? [DNNLEltwise(alg: dnnl_eltwise_linear, alpha: 0.5, beta: 0)] : [])
        var pdHandle: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil),
                      "dnnl_primitive_desc_create (binary)")
        let pd = DNNLPrimitiveDesc(pdHandle!)
        // Runtime buffers arrive as (input 0, input 1, output): map them to oneDNN's operands.
        let arg0 = mlconv_dnnl_arg_src(), arg1 = mlconv_dnnl_arg_src_1()
        let runtime = swapped
            ? [DNNLArg(arg: arg1, md: src1), DNNLArg(arg: arg0, md: src0), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)]
            : [DNNLArg(arg: arg0, md: src0), DNNLArg(arg: arg1, md: src1), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)]
        let exe = try DNNLExecutable(pd: pd, runtime: runtime, constants: [], storage: DNNLStorage(),
                                     threads: DNNLRuntime.threads(for: ctx))
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount],
                          inPlace: !swapped && ctx.inputTypes[0].shape == out)
    }
}
