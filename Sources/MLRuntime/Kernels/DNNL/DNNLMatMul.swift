import CDNNL
import MLGraph

/// matmul on the oneDNN matmul primitive: x [B…, M, K] · w [B…, K, N] → [B…, M, N] with the batch
/// axes broadcast (size-1 axes of either operand) and the transposes expressed as strides of
/// the operands' plain row-major storage (no copy). Rank-1 operands are promoted as MIL does.
/// The second operand is input 1 or the constant weight "y" (used in place when float32, else
/// dequantized once). Declines batch ranks beyond oneDNN's 12 dimensions.
enum DNNLMatMul {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .matmul(a) = ctx.node.op, ctx.outputTypes.count == 1 else { return nil }
        let x = ctx.inputTypes[0].shape
        let constant = ctx.inputTypes.count == 1 ? ctx.node.weights["y"] : nil
        guard ctx.inputTypes.count == 2 || constant != nil else { return nil }
        let w = constant?.shape ?? ctx.inputTypes[1].shape
        guard case let .success(g) = MatMulGeometry.make(x: x, y: w, transposeX: a.transposeX, transposeY: a.transposeY),
              g.batch.count + 2 <= 12, g.m * g.n > 0, g.k > 0 else { return nil }
        // Operand descriptors over the stored (row-major) buffers, batch axes first.
        func operand(batch: [Int], rows: Int, cols: Int, transposed: Bool) throws -> dnnl_memory_desc_t {
            let matrix = rows * cols
            var bs = [Int](repeating: 0, count: batch.count)
            var acc = matrix
            for i in stride(from: batch.count - 1, through: 0, by: -1) { bs[i] = acc; acc *= batch[i] }
            let inner = transposed ? [1, rows] : [cols, 1]
            return try dnnlMD(batch + [rows, cols], strides: bs + inner)
        }
        var src = try operand(batch: g.xBatch, rows: g.m, cols: g.k, transposed: a.transposeX)
        var wei = try operand(batch: g.yBatch, rows: g.k, cols: g.n, transposed: a.transposeY && w.count > 1)
        var dst = try dnnlRowMajorMD(g.batch + [g.m, g.n])
        var desc = dnnl_matmul_desc_t()
        try dnnlCheck(dnnl_matmul_desc_init(&desc, &src, &wei, nil, &dst), "dnnl_matmul_desc_init")
        let engine = try DNNLEngine.get()
        let attr = try DNNLAttr()
        var pdHandle: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil), "dnnl_primitive_desc_create (matmul)")
        let pd = DNNLPrimitiveDesc(pdHandle!)
        let storage = DNNLStorage()
        let srcArg = DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), dstArg = DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)
        let weiArg = DNNLArg(arg: mlconv_dnnl_arg_weights(), md: wei)
        let exe: DNNLExecutable
        if let constant {
            exe = try DNNLExecutable(pd: pd, runtime: [srcArg, dstArg], constants: [(weiArg, storage.floats(constant))],
                                     storage: storage, threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
        } else {
            exe = try DNNLExecutable(pd: pd, runtime: [srcArg, weiArg, dstArg], constants: [], storage: storage,
                                     threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
        }
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
    }
}
