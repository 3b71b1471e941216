import CDNNL
import MLGraph

/// pool2d and globalPool2d on oneDNN pooling, NHWC in place: max, and average excluding padded
/// pixels (`dnnl_pooling_avg_exclude_padding`, as Keras/TF). Declines padding ≥ the window (a
/// window entirely in padding has no defined value).
enum DNNLPool2D {
    static let factory: KernelFactory = dnnlFactory(make)
    static let globalFactory: KernelFactory = dnnlFactory(makeGlobal)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .pool2d(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4, ctx.outputTypes[0].rank == 4,
              a.kernel.count == 2, a.strides.count == 2,
              a.kernel.allSatisfy({ $0 >= 1 }), a.strides.allSatisfy({ $0 >= 1 })
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        guard y[0] == x[0], y[3] == x[3] else { return nil }
        let p = a.padding.resolve(inH: x[1], inW: x[2], kernel: (a.kernel[0], a.kernel[1]),
                                  stride: (a.strides[0], a.strides[1]), dilation: (1, 1))
        guard p.top >= 0, p.bottom >= 0, p.left >= 0, p.right >= 0,
              p.top < a.kernel[0], p.bottom < a.kernel[0], p.left < a.kernel[1], p.right < a.kernel[1]
        else { return nil }
        return try build(ctx, kind: a.kind, x: x, outHW: (y[1], y[2]), kernel: a.kernel, strides: a.strides,
                         padL: [p.top, p.left], padR: [p.bottom, p.right])
    }

    /// Global pooling: one window of the whole image ([N, C] or [N, 1, 1, C]: the same bytes).
    static func makeGlobal(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .globalPool2d(kind, _) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4
        else { return nil }
        let x = ctx.inputTypes[0].shape
        guard ctx.outputTypes[0].elementCount == x[0] * x[3] else { return nil }
        return try build(ctx, kind: kind, x: x, outHW: (1, 1), kernel: [x[1], x[2]], strides: [1, 1],
                         padL: [0, 0], padR: [0, 0])
    }

    private static func build(_ ctx: KernelContext, kind: PoolKind, x: [Int], outHW: (Int, Int), kernel: [Int],
                              strides: [Int], padL: [Int], padR: [Int]) throws -> Kernel?
    {
        let engine = try DNNLEngine.get()
        var src = try dnnlMD([x[0], x[3], x[1], x[2]], dnnl_nhwc)
        var dst = try dnnlMD([x[0], x[3], outHW.0, outHW.1], dnnl_nhwc)
        var desc = dnnl_pooling_desc_t()
        try dnnlCheck(dnnl_pooling_forward_desc_init(
            &desc, dnnl_forward_inference, kind == .max ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding,
            &src, &dst, strides.map { Int64($0) }, kernel.map { Int64($0) }, padL.map { Int64($0) }, padR.map { Int64($0) }),
            "dnnl_pooling_forward_desc_init")
        let (pd, _) = try dnnlPrimitiveDesc(activation: nil, what: "dnnl_primitive_desc_create (pooling)") { attr in
            var pd: dnnl_primitive_desc_t?
            let s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, nil)
            return (s, pd)
        }
        let exe = try DNNLExecutable(
            pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)],
            constants: [], storage: DNNLStorage(), threads: DNNLRuntime.threads(for: ctx))
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
    }
}
