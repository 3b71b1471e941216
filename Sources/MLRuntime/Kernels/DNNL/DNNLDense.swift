import CDNNL
import MLGraph

/// dense on oneDNN inner product: input [..., Cin] flattened to [M, Cin] (row-major, no copy),
/// weights [Cout, Cin] reordered once to the preferred layout, bias, fused activation.
enum DNNLDense {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .dense(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank >= 2, let weight = ctx.node.weights["weight"]
        else { return nil }
        let cin = ctx.inputTypes[0].shape.last!, cout = a.outputChannels
        let m = ctx.inputTypes[0].elementCount / Swift.max(cin, 1)
        guard cin > 0, m > 0, weight.shape == [cout, cin], ctx.outputTypes[0].shape.last == cout,
              ctx.outputTypes[0].elementCount == m * cout
        else { return nil }
        let bias = ctx.node.weights["bias"]
        if let bias, bias.shape != [cout] { return nil }

        let engine = try DNNLEngine.get()
        var src = try dnnlMD([m, cin], dnnl_nc)
        var dst = try dnnlMD([m, cout], dnnl_nc)
        let plainWeights = try dnnlMD([cout, cin], dnnl_oi)
        var anyWeights = try dnnlMD([cout, cin], dnnl_format_tag_any)
        var biasMD = try dnnlMD([cout], dnnl_x)
        var desc = dnnl_inner_product_desc_t()
        try withUnsafeMutablePointer(to: &biasMD) { bp in
            try dnnlCheck(dnnl_inner_product_forward_desc_init(
                &desc, dnnl_forward_inference, &src, &anyWeights, bias == nil ? nil : UnsafePointer(bp), &dst),
                "dnnl_inner_product_forward_desc_init")
        }
        let (pd, leftover) = try dnnlPrimitiveDesc(activation: a.activation, what: "dnnl_primitive_desc_create (inner product)") { attr in
            var pd: dnnl_primitive_desc_t?
            let s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, nil)
            return (s, pd)
        }
        let storage = DNNLStorage()
        let chosen = try pd.md(dnnl_query_weights_md)
        let packed = try storage.constant(weight, plain: plainWeights, target: chosen)
        var constants = [(DNNLArg(arg: mlconv_dnnl_arg_weights(), md: chosen), packed)]
        if let bias {
            constants.append((DNNLArg(arg: mlconv_dnnl_arg_bias(), md: biasMD), storage.floats(bias)))
        }
        let exe = try DNNLExecutable(
            pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)],
            constants: constants, storage: storage, threads: DNNLRuntime.threads(for: ctx))
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount], postActivation: leftover)
    }
}
