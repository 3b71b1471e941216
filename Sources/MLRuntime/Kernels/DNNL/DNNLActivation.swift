import CDNNL
import MLGraph

/// activation on oneDNN eltwise over the flat tensor, for activations that are one oneDNN eltwise
/// operation (see `dnnlEltwiseChain`). Declines the others, which the reference kernel runs:
/// activations without a oneDNN equivalent (softsign, thresholdedReLU θ ≠ 0, clippedReLU with a
/// threshold) and those needing a chain or a scale (selu, hardSigmoid, clippedReLU with both a
/// max value and a slope) — oneDNN 2.6's eltwise primitive with eltwise post-ops left the last
/// element of a 210-element tensor unwritten in testing. In place.
enum DNNLActivation {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .activation(act) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.outputTypes[0].elementCount == ctx.inputTypes[0].elementCount,
              let chain = dnnlEltwiseChain(act), chain.count <= 1, chain.first?.scale ?? 1 == 1
        else { return nil }
        let first = chain.first ?? DNNLEltwise(alg: dnnl_eltwise_linear, alpha: 1, beta: 0)

        let engine = try DNNLEngine.get()
        var data = try dnnlMD([ctx.inputTypes[0].elementCount], dnnl_x)
        var desc = dnnl_eltwise_desc_t()
        try dnnlCheck(dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, first.alg, &data, first.alpha, first.beta),
                      "dnnl_eltwise_forward_desc_init")
        let attr = try DNNLAttr()
        var pdHandle: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil),
                      "dnnl_primitive_desc_create (eltwise)")
        let exe = try DNNLExecutable(
            pd: DNNLPrimitiveDesc(pdHandle!),
            runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: data), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: data)],
            constants: [], storage: DNNLStorage(), threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount], inPlace: true)
    }
}
