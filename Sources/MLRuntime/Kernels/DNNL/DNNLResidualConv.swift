// MARK: residual add fusion (issue 12)
import CDNNL
import Foundation
import MLGraph

/// Builds the oneDNN kernel of a convolution with a fused residual (`Conv2DAttributes.residual`):
/// y = residual.activation(activation(conv(x) + bias) + r).
///
/// Preferred form: one primitive whose post-ops are the eltwise chain of `activation`, a `sum`
/// (dst = result + dst, scale 1) and the eltwise chain of `residual.activation`; the destination
/// must then hold r when the primitive starts. The kernel copies r into y first unless the memory
/// plan gave y r's buffer (`inPlaceInputIndex` 1: r is an intermediate read by no later node),
/// so the copy disappears in ResNet / MobileNetV2 blocks. When oneDNN has no eltwise equivalent of
/// an activation (`dnnlEltwiseChain` nil) or refuses the chain, the convolution runs with
/// `activation` fused as far as it can be, then the sum and the residual activation are applied
/// here with the reference scalar definitions (same order, float32).
func makeResidualDNNLConvolution(_ ctx: KernelContext, opDesc: UnsafeRawPointer, activation: Activation?,
                                 residual: ResidualAdd, weight: ConstantTensor, plainWeights: dnnl_memory_desc_t,
                                 bias: ConstantTensor?, biasMD: dnnl_memory_desc_t,
                                 src: dnnl_memory_desc_t, dst: dnnl_memory_desc_t) throws -> Kernel {
    let what = "dnnl_primitive_desc_create (convolution with residual sum)"
    let fused = try dnnlResidualSumPrimitiveDesc(opDesc: opDesc, activation: activation, residual: residual, what: what)
    let pd: DNNLPrimitiveDesc, leftover: Activation?
    if let fused {
        (pd, leftover) = (fused, nil)
    } else {
        (pd, leftover) = try dnnlOpPrimitiveDesc(opDesc: opDesc, activation: activation, what: what)
    }
    let exe = try makeWeightedDNNLExecutable(ctx, pd: pd, weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD,
                                             src: src, dst: dst)
    return DNNLResidualConvKernel(exe, count: ctx.outputTypes[0].elementCount, sumFused: fused != nil,
                                  leftover: leftover, residualActivation: residual.activation)
}

/// The primitive descriptor of the convolution `opDesc` with post-ops eltwise(`activation`), `sum`,
/// eltwise(`residual.activation`), or nil when oneDNN has no eltwise equivalent of an activation
/// or no implementation takes the chain.
/// - Throws: `DNNLError` for other oneDNN failures.
func dnnlResidualSumPrimitiveDesc(opDesc: UnsafeRawPointer, activation: Activation?, residual: ResidualAdd,
                                  what: String) throws -> DNNLPrimitiveDesc? {
    guard let before = dnnlEltwiseChain(activation), let after = dnnlEltwiseChain(residual.activation) else { return nil }
    let attr = try DNNLAttr(postOps: before + after, sumAt: before.count)
    var pd: dnnl_primitive_desc_t?
    let s = dnnl_primitive_desc_create(&pd, opDesc, attr.handle, try DNNLEngine.get(), nil)
    if s == dnnl_unimplemented { return nil }
    try dnnlCheck(s, what)
    guard let pd else { throw DNNLError(status: dnnl_runtime_error, call: what) }
    return DNNLPrimitiveDesc(pd)
}

/// The kernel of `makeResidualDNNLConvolution`: inputs (x, r), output y.
final class DNNLResidualConvKernel: Kernel {
    let executable: DNNLExecutable
    let count: Int
    /// Whether the primitive runs the sum and the residual activation (post-ops).
    let sumFused: Bool
    /// The convolution's activation oneDNN could not fuse (only when `sumFused` is false).
    let leftover: Activation?
    let residualActivation: Activation?

    init(_ executable: DNNLExecutable, count: Int, sumFused: Bool, leftover: Activation?, residualActivation: Activation?) {
        self.executable = executable
        self.count = count
        self.sumFused = sumFused
        self.leftover = leftover
        self.residualActivation = residualActivation
    }

    /// With the sum fused, y may take r's buffer (the sum post-op reads dst before writing it).
    var supportsInPlace: Bool { sumFused }
    var inPlaceInputIndex: Int { 1 }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        guard inputs.count == 2, let y = outputs.first else { return }
        let x = inputs[0], r = inputs[1]
        if sumFused {
            if UnsafePointer(y) != r { y.update(from: r, count: count) }
            if !executable.execute(inputs: [x], outputs: [y]) { y.update(repeating: .nan, count: count) }
            return
        }
        guard executable.execute(inputs: [x], outputs: [y]) else {
            y.update(repeating: .nan, count: count)  // cannot happen after a successful prepare
            return
        }
        let leftover = self.leftover.flatMap { $0.isIdentity ? nil : $0 }
        let after = residualActivation.flatMap { $0.isIdentity ? nil : $0 }
        for i in 0..<count {
            var v = y[i]
            if let leftover { v = leftover.apply(v) }
            v += r[i]
            if let after { v = after.apply(v) }
            y[i] = v
        }
    }
}
