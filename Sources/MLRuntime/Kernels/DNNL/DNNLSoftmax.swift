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
        var data = try dnnlMD([outer, shape[axis], inner], dnnl_abc)
        var desc = dnnl_softmax_desc_t()
        if logarithm {
            try dnnlCheck(dnnl_logsoftmax_forward_desc_init(&desc, dnnl_forward_inference, &data, 1), "dnnl_logsoftmax_forward_desc_init")
        } else {
            try dnnlCheck(dnnl_softmax_forward_desc_init(&desc, dnnl_forward_inference, &data, 1), "dnnl_softmax_forward_desc_init")
        }
        return try dnnlSourceToDestinationKernel(&desc, src: data, dst: data, what: ctx.node.op.name, ctx)
    }
}
