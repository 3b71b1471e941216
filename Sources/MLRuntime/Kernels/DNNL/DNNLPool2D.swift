import CDNNL
import MLGraph

/// pool2d and globalPool2d on oneDNN pooling, NHWC in place: max, and average excluding padded
/// pixels (`dnnl_pooling_avg_exclude_padding`, as Keras/TF). Declines padding ≥ the window (a
/// window entirely in padding has no defined value). Built by `makeDNNLPooling` (shared with
/// pool1d / pool3d).
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
        return try makeDNNLPooling(ctx, kind: a.kind, n: x[0], c: x[3], inSpatial: [x[1], x[2]], outSpatial: [y[1], y[2]],
                                   kernel: a.kernel, strides: a.strides, padBefore: [p.top, p.left], padAfter: [p.bottom, p.right])
    }

    /// Global pooling: one window of the whole image ([N, C] or [N, 1, 1, C]: the same bytes).
    static func makeGlobal(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .globalPool2d(kind, _) = ctx.node.op, ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4
        else { return nil }
        let x = ctx.inputTypes[0].shape
        guard ctx.outputTypes[0].elementCount == x[0] * x[3] else { return nil }
        return try makeDNNLPooling(ctx, kind: kind, n: x[0], c: x[3], inSpatial: [x[1], x[2]], outSpatial: [1, 1],
                                   kernel: [x[1], x[2]], strides: [1, 1], padBefore: [0, 0], padAfter: [0, 0])
    }
}
