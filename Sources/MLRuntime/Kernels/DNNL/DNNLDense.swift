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
        return try withUnsafePointer(to: &desc) {
            try makeWeightedDNNLKernel(ctx, opDesc: UnsafeRawPointer($0), what: "inner product", activation: a.activation,
                                       weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD, src: src, dst: dst)
        }
    }
}
