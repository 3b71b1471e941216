import CDNNL
import MLGraph

/// reduce on oneDNN reduction: source described row-major with the input's shape, destination
/// with the reduced axes set to 1 (the same element order as the IR output with or without
/// keepDims). sum, mean, prod (`mul`), max, min, l1_norm / l2_norm (`norm_lp_sum` p = 1 / 2,
/// ε = 0) and sum_square (`norm_lp_power_p_sum` p = 2). Declines log_sum_exp, max/min (oneDNN's
/// max and min do not propagate NaN as the reference does), reductions where every reduced
/// axis has size 1 (nothing to reduce) and ranks above 6.
enum DNNLReduction {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .reduce(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1 else { return nil }
        let shape = ctx.inputTypes[0].shape
        guard shape.count <= 6, let axes = resolveAxisSet(a.axes, rank: shape.count),
              axes.contains(where: { shape[$0] > 1 })
        else { return nil }
        let alg: dnnl_alg_kind_t
        var p: Float = 0
        switch a.function {
        case .sum: alg = dnnl_reduction_sum
        case .mean: alg = dnnl_reduction_mean
        case .prod: alg = dnnl_reduction_mul
        case .l1Norm: alg = dnnl_reduction_norm_lp_sum; p = 1
        case .l2Norm: alg = dnnl_reduction_norm_lp_sum; p = 2
        case .sumSquare: alg = dnnl_reduction_norm_lp_power_p_sum; p = 2
        case .max, .min, .logSumExp: return nil
        }
        let dstShape = shape.indices.map { axes.contains($0) ? 1 : shape[$0] }
        guard dstShape.reduce(1, *) == ctx.outputTypes[0].elementCount else { return nil }
        var src = try dnnlRowMajorMD(shape), dst = try dnnlRowMajorMD(dstShape)
        var desc = dnnl_reduction_desc_t()
        try dnnlCheck(dnnl_reduction_desc_init(&desc, alg, &src, &dst, p, 0), "dnnl_reduction_desc_init")
        return try dnnlSourceToDestinationKernel(&desc, src: src, dst: dst, what: "reduction", ctx)
    }
}

/// layerNorm on oneDNN layer normalization when the normalised axes are the trailing ones
/// (axes k…rank−1, the common case): the tensor is viewed as [outer, inner] and normalised over
/// `inner`, with gamma/beta (flattened, [inner]) as oneDNN scale and shift. Declines other axis
/// sets (the reference kernel runs).
enum DNNLLayerNorm {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .layerNorm(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.outputTypes[0].shape == ctx.inputTypes[0].shape
        else { return nil }
        let shape = ctx.inputTypes[0].shape
        guard let axes = resolveAxisSet(a.axes, rank: shape.count), let first = axes.first,
              axes == Array(first..<shape.count)
        else { return nil }
        let outer = shape[..<first].reduce(1, *), inner = shape[first...].reduce(1, *)
        let gamma = ctx.node.weights["gamma"], beta = ctx.node.weights["beta"]
        if let gamma, gamma.elementCount != inner { return nil }
        if let beta, beta.elementCount != inner { return nil }
        let engine = try DNNLEngine.get()
        var data = try dnnlMD([outer, inner], dnnl_ab)
        var desc = dnnl_layer_normalization_desc_t()
        var flags: UInt32 = 0
        if gamma != nil { flags |= UInt32(dnnl_use_scale.rawValue) }
        if beta != nil { flags |= UInt32(dnnl_use_shift.rawValue) }
        try dnnlCheck(dnnl_layer_normalization_forward_desc_init(&desc, dnnl_forward_inference, &data, nil, a.epsilon, flags),
                      "dnnl_layer_normalization_forward_desc_init")
        let (pd, _) = try dnnlPrimitiveDesc(activation: nil, what: "dnnl_primitive_desc_create (layer normalization)") { attr in
            var pd: dnnl_primitive_desc_t?
            let s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, nil)
            return (s, pd)
        }
        let storage = DNNLStorage()
        let vec = try dnnlMD([inner], dnnl_x)
        var constants: [(DNNLArg, UnsafeMutableRawPointer)] = []
        if let gamma { constants.append((DNNLArg(arg: mlconv_dnnl_arg_scale(), md: vec), storage.floats(gamma))) }
        if let beta { constants.append((DNNLArg(arg: mlconv_dnnl_arg_shift(), md: vec), storage.floats(beta))) }
        let exe = try DNNLExecutable(
            pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: data), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: data)],
            constants: constants, storage: storage, threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
    }
}
