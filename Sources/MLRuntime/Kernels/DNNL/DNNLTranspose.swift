import CDNNL
import MLGraph

// MARK: transpose sinking (issue 12): the transposes no pass removes run as a oneDNN reorder

/// `Op.transpose` on oneDNN: a reorder from the input viewed with permuted strides (logical dims =
/// the output shape, stride of output axis i = row-major input stride of axis perm[i]) to the
/// dense row-major output. Same values as `ReferenceTranspose` (data movement only); ranks 1…6
/// (declined otherwise, and for non-float32 tensors: the reference kernel runs).
enum DNNLTranspose {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .transpose(perm) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1 else { return nil }
        let inShape = ctx.inputTypes[0].shape, outShape = ctx.outputTypes[0].shape
        let rank = perm.count
        guard rank >= 1, rank <= 6, inShape.count == rank, outShape.count == rank,
              Set(perm).count == rank, perm.allSatisfy({ $0 >= 0 && $0 < rank }),
              (0..<rank).allSatisfy({ outShape[$0] == inShape[perm[$0]] }) else { return nil }
        var inStrides = [Int](repeating: 1, count: rank)
        for i in stride(from: rank - 2, through: 0, by: -1) { inStrides[i] = inStrides[i + 1] * inShape[i + 1] }
        let src = try dnnlMD(outShape, strides: perm.map { inStrides[$0] })
        let exe = try dnnlReorderExecutable(from: src, to: try dnnlRowMajorMD(outShape), what: "transpose", ctx)
        return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
    }
}
