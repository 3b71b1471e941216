import CDNNL
import MLGraph

/// concat on oneDNN: each input viewed as [outer, axis_i, inner] (row-major, no copy),
/// concatenated along the middle axis.
enum DNNLConcat {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .concat(rawAxis) = ctx.node.op, !ctx.inputTypes.isEmpty, ctx.outputTypes.count == 1
        else { return nil }
        let out = ctx.outputTypes[0].shape
        guard let axis = resolvedAxis(rawAxis, rank: out.count),
              ctx.inputTypes.allSatisfy({ $0.rank == out.count }),
              ctx.inputTypes.reduce(0, { $0 + $1.shape[axis] }) == out[axis]
        else { return nil }
        let outer = out[..<axis].reduce(1, *), inner = out[(axis + 1)...].reduce(1, *)
        let engine = try DNNLEngine.get()
        let srcs = try ctx.inputTypes.map { try dnnlMD([outer, $0.shape[axis], inner], dnnl_abc) }
        var dst = try dnnlMD([outer, out[axis], inner], dnnl_abc)
        let attr = try DNNLAttr()
        var pdHandle: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_concat_primitive_desc_create(&pdHandle, &dst, Int32(srcs.count), 1, srcs, attr.handle, engine),
                      "dnnl_concat_primitive_desc_create")
        let pd = DNNLPrimitiveDesc(pdHandle!)
        var runtime = srcs.enumerated().map { DNNLArg(arg: mlconv_dnnl_arg_multiple_src(Int32($0.offset)), md: $0.element) }
        runtime.append(DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst))
        let exe = try DNNLExecutable(pd: pd, runtime: runtime, constants: [], storage: DNNLStorage(),
                                     threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
    }
}
