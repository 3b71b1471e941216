import CDNNL
import MLGraph

// MARK: elementwise math ops on oneDNN (unary and clip on eltwise, binary on the binary primitive)

/// One oneDNN eltwise operation over the flat tensor (in place), as `DNNLActivation` runs it.
func makeDNNLEltwiseKernel(_ ctx: KernelContext, _ e: DNNLEltwise) throws -> Kernel? {
    guard ctx.inputTypes.count == 1, ctx.outputTypes.count == 1,
          ctx.outputTypes[0].elementCount == ctx.inputTypes[0].elementCount, e.scale == 1 else { return nil }
    let engine = try DNNLEngine.get()
    var data = try dnnlMD([ctx.inputTypes[0].elementCount], dnnl_x)
    var desc = dnnl_eltwise_desc_t()
    try dnnlCheck(dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, e.alg, &data, e.alpha, e.beta),
                  "dnnl_eltwise_forward_desc_init")
    let attr = try DNNLAttr()
    var pdHandle: dnnl_primitive_desc_t?
    try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil), "dnnl_primitive_desc_create (eltwise)")
    let exe = try DNNLExecutable(
        pd: DNNLPrimitiveDesc(pdHandle!),
        runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: data), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: data)],
        constants: [], storage: DNNLStorage(), threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
    return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount], inPlace: true)
}

/// `Op.unary` on one oneDNN eltwise operation: abs, sqrt, exp, square, log (epsilon 0), power
/// (eltwise_pow 1·x^α), inverse and rsqrt with epsilon 0 (pow −1, −½), threshold (clip_v2 [α, ∞);
/// maps NaN to α, the divergence `DNNLClip` documents),
/// round (half to even, as the reference), and neg with any scale/shift (linear). Declines an
/// input transform (scale ≠ 1 or shift ≠ 0) for the others (a second eltwise would be needed:
/// see `DNNLActivation` for why chains are avoided) and the functions oneDNN lacks (exp2, sin,
/// cos, tan, the inverse and hyperbolic functions, erf, floor, ceil, sign, and log/inverse/rsqrt
/// with an epsilon).
enum DNNLUnary {
    static let factory: KernelFactory = dnnlFactory(make)

    static func eltwise(_ a: UnaryAttributes) -> DNNLEltwise? {
        if a.function == .neg { return DNNLEltwise(alg: dnnl_eltwise_linear, alpha: -a.scale, beta: -a.shift) }
        guard !a.isAffine else { return nil }
        switch a.function {
        case .abs: return DNNLEltwise(alg: dnnl_eltwise_abs)
        case .sqrt: return DNNLEltwise(alg: dnnl_eltwise_sqrt)
        case .exp: return DNNLEltwise(alg: dnnl_eltwise_exp)
        case .square: return DNNLEltwise(alg: dnnl_eltwise_square)
        case .round: return DNNLEltwise(alg: dnnl_eltwise_round)
        case .log: return a.epsilon == 0 ? DNNLEltwise(alg: dnnl_eltwise_log) : nil
        case .power: return DNNLEltwise(alg: dnnl_eltwise_pow, alpha: 1, beta: a.alpha)
        case .inverse: return a.epsilon == 0 ? DNNLEltwise(alg: dnnl_eltwise_pow, alpha: 1, beta: -1) : nil
        case .rsqrt: return a.epsilon == 0 ? DNNLEltwise(alg: dnnl_eltwise_pow, alpha: 1, beta: -0.5) : nil
        case .threshold: return DNNLEltwise(alg: dnnl_eltwise_clip_v2, alpha: a.alpha, beta: .infinity)
        case .neg, .exp2, .sin, .cos, .tan, .asin, .acos, .atan, .sinh, .cosh, .tanh, .asinh, .acosh, .atanh, .erf, .floor, .ceil, .sign:
            return nil
        }
    }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .unary(a) = ctx.node.op, let e = eltwise(a) else { return nil }
        return try makeDNNLEltwiseKernel(ctx, e)
    }
}

/// `Op.clip` on oneDNN eltwise clip_v2 (bounds may be infinite); declines alpha > beta, where
/// clip_v2 would not give the reference's min(max(x, α), β) = β. Known divergence (as oneDNN's
/// ReLU): clip_v2 maps NaN to alpha where the reference keeps NaN (`referenceOnly` keeps it).
enum DNNLClip {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .clip(alpha, beta) = ctx.node.op, alpha <= beta else { return nil }
        return try makeDNNLEltwiseKernel(ctx, DNNLEltwise(alg: dnnl_eltwise_clip_v2, alpha: alpha, beta: beta))
    }
}

/// `Op.binary` on oneDNN binary: add, sub, mul, real_div (binary_div). The second operand is
/// input 1 or the constant weight "y" (bound once at prepare). It may broadcast (size-1 axes,
/// NumPy rules); for add and mul the first may broadcast instead (operands swapped). Declines
/// two broadcasting operands, maximum/minimum (oneDNN's max/min do not propagate NaN as the
/// reference does) and floor_div, mod, pow (no oneDNN binary algorithm). In place when input 0
/// has the output's shape and is not swapped.
enum DNNLBinary {
    static let factory: KernelFactory = dnnlFactory(make)

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .binary(f) = ctx.node.op, ctx.outputTypes.count == 1 else { return nil }
        let alg: dnnl_alg_kind_t
        switch f {
        case .add: alg = dnnl_binary_add
        case .sub: alg = dnnl_binary_sub
        case .mul: alg = dnnl_binary_mul
        case .realDiv: alg = dnnl_binary_div
        case .maximum, .minimum, .floorDiv, .mod, .pow: return nil
        }
        let constant = ctx.node.weights["y"]
        guard ctx.inputTypes.count == (constant == nil ? 2 : 1) else { return nil }
        return try makeDNNLBinaryKernel(ctx, alg: alg, commutative: f.isCommutative, constant: constant)
    }
}

/// The row length a binary op runs on when its constant operand (padded shape `operand`) is one
/// value per channel (the last axis, C not a multiple of 16) of an `output`-shaped x: C·k, the
/// smallest multiple of C that is a multiple of 16 floats, when it divides the element count;
/// else nil. With few channels (C = 3 on [1, 224, 224, 3]: EfficientNetB0's Normalization, Keras'
/// Rescaling) oneDNN's jit loop works one pixel at a time with a masked tail, 0.6–0.9 ms per op;
/// the operand repeated k times, over x seen as rows of C·k floats, is the same arithmetic on full
/// vectors (0.04–0.05 ms).
func dnnlRepeatedChannelRow(output out: [Int], operand b: [Int]) -> Int? {
    guard let c = out.last, c > 0, c % 16 != 0, b.count == out.count, b.last == c,
          b.dropLast().allSatisfy({ $0 == 1 }) else { return nil }
    let row = c * (16 / (c & -c))  // c · 16 / gcd(c, 16)
    let total = out.reduce(1, *)
    return total % row == 0 && total > row ? row : nil
}

/// A oneDNN binary primitive `alg` on x (input 0) and y (input 1, or `constant`, bound once at
/// prepare), with `postOps` (eltwise) applied to the result. y may broadcast (NumPy rules, size-1
/// axes); when `commutative`, x may broadcast instead (the operands are swapped). nil (the
/// reference kernel runs) for two broadcasting operands or rank above 12. In place when input 0
/// has the output's shape and is not swapped. Used by `elementwise` and `binary`.
func makeDNNLBinaryKernel(_ ctx: KernelContext, alg: dnnl_alg_kind_t, commutative: Bool, constant: ConstantTensor?,
                          postOps: [DNNLEltwise] = []) throws -> Kernel? {
    guard ctx.outputTypes.count == 1, ctx.inputTypes.count == (constant == nil ? 2 : 1) else { return nil }
    let out = ctx.outputTypes[0].shape, rank = out.count
    guard rank >= 1, rank <= 12 else { return nil }
    func padded(_ s: [Int]) -> [Int]? { s.count <= rank ? Array(repeating: 1, count: rank - s.count) + s : nil }
    guard var a = padded(ctx.inputTypes[0].shape), var b = padded(constant?.shape ?? ctx.inputTypes[1].shape) else { return nil }
    var swapped = false
    if a != out {
        guard commutative, b == out else { return nil }
        swap(&a, &b)
        swapped = true
    }
    guard zip(b, out).allSatisfy({ $0 == $1 || $0 == 1 }) else { return nil }

    let engine = try DNNLEngine.get()
    let period = constant == nil || swapped ? nil : dnnlRepeatedChannelRow(output: out, operand: b)
    var src0: dnnl_memory_desc_t, src1: dnnl_memory_desc_t, dst: dnnl_memory_desc_t
    if let period {
        let rows = out.reduce(1, *) / period
        src0 = try dnnlRowMajorMD([rows, period]); dst = src0; src1 = try dnnlRowMajorMD([1, period])
    } else {
        src0 = try dnnlRowMajorMD(a); src1 = try dnnlRowMajorMD(b); dst = try dnnlRowMajorMD(out)
    }
    var desc = dnnl_binary_desc_t()
    try dnnlCheck(dnnl_binary_desc_init(&desc, alg, &src0, &src1, &dst), "dnnl_binary_desc_init")
    let attr = try DNNLAttr(postOps: postOps)
    var pdHandle: dnnl_primitive_desc_t?
    try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil), "dnnl_primitive_desc_create (binary)")
    guard let created = pdHandle else { return nil }
    let pd = DNNLPrimitiveDesc(created)
    // Operand x (input 0) is oneDNN's src0 unless swapped; y (input 1 or the constant) the other.
    let arg0 = mlconv_dnnl_arg_src(), arg1 = mlconv_dnnl_arg_src_1()
    let xArg = swapped ? DNNLArg(arg: arg1, md: src1) : DNNLArg(arg: arg0, md: src0)
    let yArg = swapped ? DNNLArg(arg: arg0, md: src0) : DNNLArg(arg: arg1, md: src1)
    let storage = DNNLStorage()
    var runtime = [xArg], constants: [(DNNLArg, UnsafeMutableRawPointer)] = []
    if let constant {
        if let period {
            let values = constant.floats()
            constants.append((yArg, storage.copy((0..<period).map { values[$0 % values.count] })))
        } else {
            constants.append((yArg, storage.floats(constant)))
        }
    } else {
        runtime.append(yArg)
    }
    runtime.append(DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst))
    let exe = try DNNLExecutable(pd: pd, runtime: runtime, constants: constants, storage: storage,
                                 threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
    return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount],
                      inPlace: !swapped && ctx.inputTypes[0].shape == out)
}
