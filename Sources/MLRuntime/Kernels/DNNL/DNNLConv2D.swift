import CDNNL
import MLGraph

/// conv2d on oneDNN: NHWC activations used in place, weights reordered once into the layout the
/// implementation prefers (`format_tag_any`), bias, strides, dilation, explicit padding from
/// `PaddingMode.resolve`, groups (incl. depthwise), activation fused as eltwise post-ops
/// (`makeDNNLConvolution`, shared with conv1d / conv3d).
enum DNNLConv2D {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .conv2d(a) = ctx.node.op, ctx.inputTypes.count == (a.residual == nil ? 1 : 2), ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4, ctx.outputTypes[0].rank == 4,
              a.kernel.count == 2, a.strides.count == 2, a.dilations.count == 2, a.groups >= 1,
              let weight = ctx.node.weights["weight"]
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        guard y[0] == x[0], y[3] == a.outputChannels else { return nil }
        let p = a.padding.resolve(inH: x[1], inW: x[2], kernel: (a.kernel[0], a.kernel[1]),
                                  stride: (a.strides[0], a.strides[1]), dilation: (a.dilations[0], a.dilations[1]))
        let geo = DNNLConvGeometry(n: x[0], cin: x[3], cout: a.outputChannels, inSpatial: [x[1], x[2]], outSpatial: [y[1], y[2]],
                                   kernel: a.kernel, strides: a.strides, dilations: a.dilations,
                                   padBefore: [p.top, p.left], padAfter: [p.bottom, p.right], groups: a.groups)
        if a.residual != nil, ctx.inputTypes[1].shape != y { return nil }
        return try makeDNNLConvolution(ctx, geo, activation: a.activation, weight: weight, bias: ctx.node.weights["bias"],
                                       residual: a.residual)
    }
}
