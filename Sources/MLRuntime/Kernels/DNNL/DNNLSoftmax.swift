import CDNNL
import MLGraph

/// softmax and logSoftmax on oneDNN: the tensor is viewed as [outer, axis, inner] (row-major,
/// no copy) and normalized along the middle axis (oneDNN's softmax / logsoftmax primitives,
/// which share one descriptor type).
enum DNNLSoftmax {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let rawAxis: Int, logarithm: Bool
        switch ctx.node.op {
        case let .softmax(a): rawAxis = a; logarithm = false
        case let .logSoftmax(a): rawAxis = a; logarithm = true
        default: return nil
        }
        guard ctx.inputTypes.count == 1, ctx.outputTypes.count == 1, ctx.outputTypes[0].shape == ctx.inputTypes[0].shape else { return nil }
        let shape = ctx.inputTypes[0].shape
        guard let axis = resolvedAxis(rawAxis, rank: shape.count) else { return nil }
        let outer = shape[..<axis].reduce(1, *), inner = shape[(axis + 1)...].reduce(1, *)
        let engine = try DNNLEngine.get()
        var data = try dnnlMD([outer, shape[axis], inner], dnnl_abc)
        var desc = dnnl_softmax_desc_t()
        if logarithm {
            try dnnlCheck(dnnl_logsoftmax_forward_desc_init(&desc, dnnl_forward_inference, &data, 1), "dnnl_logsoftmax_forward_desc_init")
        } else {
            try dnnlCheck(dnnl_softmax_forward_desc_init(&desc, dnnl_forward_inference, &data, 1), "dnnl_softmax_forward_desc_init")
        }
        let (pd, _) = try dnnlPrimitiveDesc(activation: nil, what: "dnnl_primitive_desc_create (\(ctx.node.op.name))") { attr in
            var pd: dnnl_primitive_desc_t?
            let s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, nil)
            return (s, pd)
        }
        let exe = try DNNLExecutable(
            pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: data), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: data)],
            constants: [], storage: DNNLStorage(), threads: DNNLRuntime.threads(for: ctx))
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
    }
}
