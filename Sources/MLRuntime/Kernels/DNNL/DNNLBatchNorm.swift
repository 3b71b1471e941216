import CDNNL
import MLGraph

/// batchNorm (inference) on oneDNN batch normalization with global statistics, scale and shift:
/// y = gamma·(x − mean)/sqrt(variance + epsilon) + beta. The IR tensor is described to oneDNN
/// as logical (batch, C = shape[axis], other axes…) with the row-major strides of the IR layout,
/// so NHWC with axis 3 is oneDNN's `nhwc`. Declines axis 0 and ranks outside 2…5.
/// In place (output i depends on input i only).
enum DNNLBatchNorm {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .batchNorm(a) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.outputTypes[0].shape == ctx.inputTypes[0].shape
        else { return nil }
        let shape = ctx.inputTypes[0].shape, rank = shape.count
        guard rank >= 2, rank <= 5, a.axis >= 1, a.axis < rank else { return nil }
        let c = shape[a.axis]
        guard let mean = ctx.node.weights["mean"], let variance = ctx.node.weights["variance"],
              mean.shape == [c], variance.shape == [c]
        else { return nil }
        let gamma = ctx.node.weights["gamma"], beta = ctx.node.weights["beta"]
        if let gamma, gamma.shape != [c] { return nil }
        if let beta, beta.shape != [c] { return nil }

        var rowStrides = [Int](repeating: 1, count: rank)
        for i in stride(from: rank - 2, through: 0, by: -1) { rowStrides[i] = rowStrides[i + 1] * shape[i + 1] }
        let order = [0, a.axis] + (1..<rank).filter { $0 != a.axis }
        var data = try dnnlMD(order.map { shape[$0] }, strides: order.map { rowStrides[$0] })
        let engine = try DNNLEngine.get()
        var desc = dnnl_batch_normalization_desc_t()
        let flags = dnnl_use_global_stats.rawValue | dnnl_use_scale.rawValue | dnnl_use_shift.rawValue
        try dnnlCheck(dnnl_batch_normalization_forward_desc_init(&desc, dnnl_forward_inference, &data, a.epsilon, UInt32(flags)),
                      "dnnl_batch_normalization_forward_desc_init")
        let (pd, _) = try dnnlPrimitiveDesc(activation: nil, what: "dnnl_primitive_desc_create (batch normalization)") { attr in
            var pd: dnnl_primitive_desc_t?
            let s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, nil)
            return (s, pd)
        }
        let storage = DNNLStorage()
        let vec = try dnnlMD([c], dnnl_x)
        let constants: [(DNNLArg, UnsafeMutableRawPointer)] = [
            (DNNLArg(arg: mlconv_dnnl_arg_mean(), md: vec), storage.floats(mean)),
            (DNNLArg(arg: mlconv_dnnl_arg_variance(), md: vec), storage.floats(variance)),
            (DNNLArg(arg: mlconv_dnnl_arg_scale(), md: vec),
             gamma.map { storage.floats($0) } ?? storage.copy([Float](repeating: 1, count: c))),
            (DNNLArg(arg: mlconv_dnnl_arg_shift(), md: vec),
             beta.map { storage.floats($0) } ?? storage.copy([Float](repeating: 0, count: c))),
        ]
        let exe = try DNNLExecutable(
            pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: data), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: data)],
            constants: constants, storage: storage, threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount], inPlace: true)
    }
}
