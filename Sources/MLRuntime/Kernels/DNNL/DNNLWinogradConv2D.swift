import CDNNL
import Foundation
import MLGraph
import Synchronization

// MARK: Winograd convolutions (issue 12)

extension DNNLRuntime {
    private static let winogradSetting = Atomic<Bool>(
        ProcessInfo.processInfo.environment["MLCONV_WINOGRAD"].map { $0 != "0" && $0.lowercased() != "false" } ?? true)

    /// Whether 3×3 stride-1 convolutions that Winograd speeds up run on oneDNN's Winograd
    /// F(2×2, 3×3) kernel (`DNNLWinogradConv2D`) instead of the direct one. Default true;
    /// `MLCONV_WINOGRAD=0` in the environment turns it off. Applies to models loaded after the
    /// change. Winograd computes the same convolution with other roundings: on the 3×3 layers of
    /// ResNet50 it differs from the direct kernel by about 2·10⁻⁶ relative to the output's largest
    /// value (docs/PERFORMANCE.md, "Winograd").
    public static var winogradEnabled: Bool {
        get { winogradSetting.load(ordering: .relaxed) }
        set { winogradSetting.store(newValue, ordering: .relaxed) }
    }
}

/// conv2d with a 3×3 kernel, stride 1, no dilation and no groups, on oneDNN's Winograd kernel
/// (`jit_fp32_wino_2x3` on AVX-512). That kernel works on oneDNN's blocked layouts only
/// (`nChw16c`), so the kernel reorders x [N, H, W, Cin] (NHWC) into a blocked buffer, convolves
/// into another, and reorders the result back to y [N, H', W', Cout] (NHWC): three oneDNN
/// primitives per run. Activations are fused as post-ops (oneDNN's Winograd kernel takes ReLU
/// only; a node with another activation keeps the direct kernel). A fused residual add
/// (`Conv2DAttributes.residual`, y = act₂(act₁(conv(x) + b) + r)) reorders r into the blocked
/// destination first and runs the `sum` post-op there, as `makeResidualDNNLConvolution` does in NHWC.
///
/// Measured on this machine's AVX-512 core, one thread, reorders included (docs/PERFORMANCE.md):
/// 28–38 % faster than the direct NHWC kernel (`brgconv`) at 56×56×64 and 28×28×128, 16 % at
/// 14×14×256, about even at 7×7×512, and slower with fewer than 64 channels; hence `suits(_:)`.
enum DNNLWinogradConv2D {
    /// Activation reorders up to this size run on one thread (see `make`).
    static let singleThreadReorderBytes = 1 << 20

    /// Whether Winograd pays for a convolution of this geometry (see the type's documentation).
    static func suits(_ geo: DNNLConvGeometry) -> Bool {
        geo.kernel == [3, 3] && geo.strides == [1, 1] && geo.dilations == [1, 1] && geo.groups == 1
            && geo.cin >= 64 && geo.cout >= 64 && geo.outSpatial.count == 2 && geo.outSpatial[0] * geo.outSpatial[1] >= 14 * 14
    }

    /// The Winograd kernel for `geo`, or nil when oneDNN has no Winograd implementation for it
    /// here (no AVX-512, a padding it does not take) or cannot fuse `activation`: the caller
    /// then builds the direct kernel. `src` / `dst` describe the caller's NHWC buffers.
    /// - Throws: `DNNLError` for oneDNN failures other than "unimplemented".
    static func make(_ ctx: KernelContext, _ geo: DNNLConvGeometry, activation: Activation?, residual: ResidualAdd?,
                     weight: ConstantTensor, plainWeights: dnnl_memory_desc_t, bias: ConstantTensor?,
                     biasMD: dnnl_memory_desc_t, src nhwcSrc: dnnl_memory_desc_t, dst nhwcDst: dnnl_memory_desc_t) throws -> Kernel? {
        guard suits(geo) else { return nil }
        let srcDims = [geo.n, geo.cin] + geo.inSpatial, dstDims = [geo.n, geo.cout] + geo.outSpatial
        var anySrc = try dnnlMD(srcDims, dnnl_format_tag_any)
        var anyDst = try dnnlMD(dstDims, dnnl_format_tag_any)
        var anyWeights = try dnnlMD([geo.cout, geo.cin] + geo.kernel, dnnl_format_tag_any)
        var biasMD = biasMD
        var desc = dnnl_convolution_desc_t()
        let status = withUnsafeMutablePointer(to: &biasMD) { bp in
            dnnl_convolution_forward_desc_init(
                &desc, dnnl_forward_inference, dnnl_convolution_winograd, &anySrc, &anyWeights,
                bias == nil ? nil : UnsafePointer(bp), &anyDst, [1, 1], geo.padBefore.map { Int64($0) },
                geo.padAfter.map { Int64($0) })
        }
        if status == dnnl_unimplemented { return nil }
        try dnnlCheck(status, "dnnl_convolution_forward_desc_init (winograd)")
        let what = "dnnl_primitive_desc_create (winograd convolution)"
        let pd: DNNLPrimitiveDesc
        if let residual {
            // act₁, sum, act₂ as post-ops, all fused or no Winograd.
            guard let fused = try withUnsafePointer(to: &desc, {
                try dnnlResidualSumPrimitiveDesc(opDesc: UnsafeRawPointer($0), activation: activation, residual: residual, what: what)
            }) else { return nil }
            pd = fused
        } else {
            let leftover: Activation?
            do {
                (pd, leftover) = try withUnsafePointer(to: &desc) {
                    try dnnlOpPrimitiveDesc(opDesc: UnsafeRawPointer($0), activation: activation, what: what)
                }
            } catch let e as DNNLError where e.status == dnnl_unimplemented {
                return nil
            }
            guard leftover == nil else { return nil }
        }
        let blockedSrc = try pd.md(dnnl_query_src_md), blockedDst = try pd.md(dnnl_query_dst_md)
        let convolution = try makeWeightedDNNLExecutable(ctx, pd: pd, weight: weight, plainWeights: plainWeights, bias: bias,
                                                         biasMD: biasMD, src: blockedSrc, dst: blockedDst)
        // A small reorder runs on the calling thread: on two threads it took 3–4× longer in
        // ResNet50 (each parallel region wakes a libgomp worker that has gone to sleep since the
        // last one, mlconv's short spin: docs/PERFORMANCE.md, "Thread pool").
        func reorderThreads(_ md: dnnl_memory_desc_t) -> Int32? { dnnlMDSize(md) <= Self.singleThreadReorderBytes ? 1 : nil }
        let toBlocked = try dnnlReorderExecutable(from: nhwcSrc, to: blockedSrc, what: "winograd convolution", ctx,
                                                  threads: reorderThreads(nhwcSrc))
        let fromBlocked = try dnnlReorderExecutable(from: blockedDst, to: nhwcDst, what: "winograd convolution", ctx,
                                                    threads: reorderThreads(nhwcDst))
        let residualToBlocked = residual == nil ? nil : try dnnlReorderExecutable(from: nhwcDst, to: blockedDst, what: "winograd convolution", ctx,
                                                                                  threads: reorderThreads(nhwcDst))
        return DNNLBlockedConvolution(toBlocked: toBlocked, convolution: convolution, fromBlocked: fromBlocked,
                                      residualToBlocked: residualToBlocked,
                                      sourceBytes: dnnlMDSize(blockedSrc), destinationBytes: dnnlMDSize(blockedDst),
                                      outputCount: ctx.outputTypes[0].elementCount, scratch: ctx.scratch)
    }
}

/// A convolution that runs on blocked buffers between two reorders (`DNNLWinogradConv2D`); with a
/// residual, inputs (x, r) and r reordered into the blocked destination first. The blocked
/// buffers come from the plan's `ScratchArena` at each run (the kernels of a plan share them).
final class DNNLBlockedConvolution: Kernel, @unchecked Sendable {
    let toBlocked: DNNLExecutable
    let convolution: DNNLExecutable
    let fromBlocked: DNNLExecutable
    /// r (NHWC) → the blocked destination, for the `sum` post-op; nil without a residual.
    let residualToBlocked: DNNLExecutable?
    private let sourceBytes: Int
    private let destinationBytes: Int
    private let outputCount: Int
    private let scratch: ScratchArena

    init(toBlocked: DNNLExecutable, convolution: DNNLExecutable, fromBlocked: DNNLExecutable,
         residualToBlocked: DNNLExecutable?, sourceBytes: Int, destinationBytes: Int, outputCount: Int,
         scratch: ScratchArena) {
        self.toBlocked = toBlocked
        self.residualToBlocked = residualToBlocked
        self.convolution = convolution
        self.fromBlocked = fromBlocked
        self.sourceBytes = (sourceBytes + 63) / 64 * 64
        self.destinationBytes = destinationBytes
        self.outputCount = outputCount
        self.scratch = scratch
    }

    /// With a residual, y may take r's buffer: r is read (reordered) before y is written.
    var supportsInPlace: Bool { residualToBlocked != nil }
    var inPlaceInputIndex: Int { 1 }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let ok = scratch.withBuffer(bytes: sourceBytes + destinationBytes) { buffer in
            let blockedSource = buffer.assumingMemoryBound(to: Float.self)
            let blockedDestination = (buffer + sourceBytes).assumingMemoryBound(to: Float.self)
            if let residualToBlocked {
                guard inputs.count == 2, residualToBlocked.execute(inputs: [inputs[1]], outputs: [blockedDestination]) else { return false }
            }
            return toBlocked.execute(inputs: [inputs[0]], outputs: [blockedSource])
                && convolution.execute(inputs: [UnsafePointer(blockedSource)], outputs: [blockedDestination])
                && fromBlocked.execute(inputs: [UnsafePointer(blockedDestination)], outputs: [outputs[0]])
        }
        if !ok {
            // Cannot happen after a successful prepare; make a failure visible rather than silent.
            outputs[0].update(repeating: .nan, count: outputCount)
        }
    }
}
