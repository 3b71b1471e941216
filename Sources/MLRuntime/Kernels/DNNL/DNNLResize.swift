import CDNNL
import MLGraph

/// resize on oneDNN resampling, NHWC in place, for the HALF_PIXEL sampling mode only — the one
/// oneDNN implements: its linear coordinate is (i + 0.5)·Xin/Xout − 0.5 with the taps clamped to
/// the input (the reference's clamped coordinate, `ResizeSamplingMode.coordinate`), and its
/// nearest index round((i + 0.5)·Xin/Xout − 0.5) (half away from zero) equals the reference's
/// floor((i + 0.5)·Xin/Xout) (`ResizeSamplingMode.nearestIndex`). The factors are left to oneDNN,
/// which takes them from the sizes (Xout/Xin), as the reference does. Other sampling modes
/// (ALIGN_CORNERS, STRICT_ALIGN_CORNERS, ASYMMETRIC) decline and run on the reference kernel.
enum DNNLResize {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .resize(a) = ctx.node.op, a.samplingMode == .halfPixel,
              ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
              ctx.inputTypes[0].rank == 4, ctx.outputTypes[0].rank == 4
        else { return nil }
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        guard y[0] == x[0], y[3] == x[3] else { return nil }
        var src = try dnnlMD([x[0], x[3], x[1], x[2]], dnnl_nhwc)
        var dst = try dnnlMD([y[0], y[3], y[1], y[2]], dnnl_nhwc)
        var desc = dnnl_resampling_desc_t()
        let alg = a.method == .nearest ? dnnl_resampling_nearest : dnnl_resampling_linear
        try dnnlCheck(dnnl_resampling_forward_desc_init(&desc, dnnl_forward_inference, alg, nil, &src, &dst),
                      "dnnl_resampling_forward_desc_init")
        return try dnnlSourceToDestinationKernel(&desc, src: src, dst: dst, what: "resampling", ctx)
    }
}
