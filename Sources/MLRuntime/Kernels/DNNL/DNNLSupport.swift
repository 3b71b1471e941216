import CDNNL
import MLGraph
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// Shared plumbing of the oneDNN kernels: the engine, error mapping, memory descriptors, fused
// activations (post-ops), constant (weight) preparation, and `DNNLExecutable`, the thread-safe
// wrapper that runs one primitive on caller-owned buffers.
//
// Threading design
// - One CPU engine for the process, created lazily and thread-safely (Swift global `let`).
// - Primitives are created once at prepare and never mutated; oneDNN primitives may be executed
//   concurrently with different memory objects.
// - Per-call mutable state (dnnl_memory objects wrapping the caller's pointers, a stream, a
//   user-mode scratchpad buffer) lives in a `DNNLExecutionContext`. Each executable keeps a pool of
//   them: a run takes one from the pool (creating another only when all are busy, i.e. under
//   concurrent use) and gives it back after. The first context is built at prepare, so the common
//   path allocates nothing and everything that can fail was validated before `run`.
// - OpenMP thread counts are per calling thread in libgomp; a run sets the kernel's count on the
//   calling thread for the duration of the call (it was also in effect when the primitive was
//   created, which fixes oneDNN's work partitioning) and restores the previous value.

/// Process-wide settings of the oneDNN kernels.
public enum DNNLRuntime {
    private static let defaultThreads = Atomic<Int>(0)

    /// Sets the number of OpenMP threads oneDNN kernels use when their `KernelContext.threadCount`
    /// is 0 (or negative), and applies it to the calling thread (`omp_set_num_threads`).
    /// Kernels prepared with a positive `threadCount` use that count instead.
    public static func setThreadCount(_ count: Int) {
        let n = Swift.max(1, count)
        defaultThreads.store(n, ordering: .relaxed)
        omp_set_num_threads(Int32(clamping: n))
    }

    /// The default thread count: the last `setThreadCount` value, else OpenMP's maximum
    /// (`OMP_NUM_THREADS` or the number of CPUs).
    public static var threadCount: Int {
        let n = defaultThreads.load(ordering: .relaxed)
        return n > 0 ? n : Int(omp_get_max_threads())
    }

    /// oneDNN library version, e.g. "2.6.3".
    public static var version: String {
        guard let v = dnnl_version()?.pointee else { return "unknown" }
        return "\(v.major).\(v.minor).\(v.patch)"
    }

    /// Kernels whose inputs, outputs and weights each hold fewer elements than this run on one
    /// thread whatever the configured count (see `threads(for:)`).
    static let parallelElementThreshold = 1 << 15

    /// Thread count a kernel prepared with `context` uses: the context's (else the default)
    /// count, but 1 for a kernel whose every tensor holds fewer than `parallelElementThreshold`
    /// elements (128 KiB of float32). A parallel region costs a wake-up of libgomp's workers,
    /// which sleep between kernels (mlconv's spin count, docs/PERFORMANCE.md "Thread pool"), and
    /// on a busy machine a wait for a descheduled one; on work this small that costs more than a
    /// second thread gains (EfficientNetB0's squeeze-and-excitation ops, ONNX Runtime's cost model).
    static func threads(for context: KernelContext) -> Int32 {
        let n = context.threadCount > 0 ? context.threadCount : threadCount
        guard n > 1 else { return Int32(clamping: n) }
        let largest = (context.inputTypes.map(\.elementCount) + context.outputTypes.map(\.elementCount)
            + context.node.weights.values.map(\.elementCount)).max() ?? 0
        return largest < parallelElementThreshold ? 1 : Int32(clamping: n)
    }
}

/// A failed oneDNN call. Factories map it to `RuntimeError.kernelFailure`, except
/// `dnnl_unimplemented`, which means "this configuration is not supported": the factory declines.
struct DNNLError: Error {
    let status: dnnl_status_t
    let call: String
}

@inline(__always)
func dnnlCheck(_ status: dnnl_status_t, _ call: @autoclosure () -> String) throws {
    if status != dnnl_success { throw DNNLError(status: status, call: call()) }
}

func dnnlStatusName(_ s: dnnl_status_t) -> String {
    if let p = dnnl_status2str(s) { return "dnnl_" + String(cString: p) }
    return "dnnl_status \(s.rawValue)"
}

/// The process-wide CPU engine (created on first use, thread-safe via Swift's lazy globals).
final class DNNLEngine: @unchecked Sendable {
    let handle: dnnl_engine_t?
    let status: dnnl_status_t

    static let shared = DNNLEngine()

    private init() {
        var e: dnnl_engine_t?
        status = dnnl_engine_create(&e, dnnl_cpu, 0)
        handle = status == dnnl_success ? e : nil
    }

    static func get() throws -> dnnl_engine_t {
        guard let h = shared.handle else { throw DNNLError(status: shared.status, call: "dnnl_engine_create") }
        return h
    }
}

/// Wraps a kernel builder: declines non-float32 tensors and unimplemented oneDNN configurations,
/// maps other oneDNN errors to `RuntimeError.kernelFailure` naming the node and the status, and
/// runs the builder with the kernel's OpenMP thread count in effect on this thread.
func dnnlFactory(_ build: @escaping (KernelContext) throws -> Kernel?) -> KernelFactory {
    return { context in
        guard context.inputTypes.allSatisfy({ $0.elementType == .float32 }),
              context.outputTypes.allSatisfy({ $0.elementType == .float32 }),
              context.outputTypes.allSatisfy({ $0.elementCount > 0 })
        else { return nil }
        let threads = DNNLRuntime.threads(for: context)
        let old = omp_get_max_threads()
        if old != threads { omp_set_num_threads(threads) }
        defer { if old != threads { omp_set_num_threads(old) } }
        do {
            return try build(context)
        } catch let e as DNNLError {
            if e.status == dnnl_unimplemented { return nil }
            throw RuntimeError.kernelFailure(
                node: context.node.name,
                message: "oneDNN \(e.call) failed with \(dnnlStatusName(e.status)) while preparing \(context.node.op.name) "
                    + "(inputs \(context.inputTypes.map { formatShape($0.shape) }.joined(separator: ", ")))"
                    + "; run with Model.Configuration.referenceOnly to bypass oneDNN")
        }
    }
}

// MARK: - Memory descriptors

/// A float32 descriptor of logical `dims` with a format tag (or `dnnl_format_tag_any`).
func dnnlMD(_ dims: [Int], _ tag: dnnl_format_tag_t) throws -> dnnl_memory_desc_t {
    var md = dnnl_memory_desc_t()
    let d = dims.map { Int64($0) }
    try dnnlCheck(dnnl_memory_desc_init_by_tag(&md, Int32(d.count), d, dnnl_f32, tag), "dnnl_memory_desc_init_by_tag")
    return md
}

/// A float32 descriptor of logical `dims` with explicit element strides.
func dnnlMD(_ dims: [Int], strides: [Int]) throws -> dnnl_memory_desc_t {
    var md = dnnl_memory_desc_t()
    let d = dims.map { Int64($0) }, s = strides.map { Int64($0) }
    try dnnlCheck(dnnl_memory_desc_init_by_strides(&md, Int32(d.count), d, dnnl_f32, s), "dnnl_memory_desc_init_by_strides")
    return md
}

/// Dense row-major descriptor of `shape` (the IR layout of any tensor).
func dnnlRowMajorMD(_ shape: [Int]) throws -> dnnl_memory_desc_t {
    var strides = [Int](repeating: 1, count: shape.count)
    var acc = 1
    for i in stride(from: shape.count - 1, through: 0, by: -1) { strides[i] = acc; acc *= shape[i] }
    return try dnnlMD(shape, strides: strides)
}

func dnnlQueryMD(_ pd: dnnl_primitive_desc_t, _ what: dnnl_query_t, _ index: Int32 = 0) -> dnnl_memory_desc_t? {
    guard let p = dnnl_primitive_desc_query_md(pd, what, index) else { return nil }
    return p.pointee
}

func dnnlMDEqual(_ a: dnnl_memory_desc_t, _ b: dnnl_memory_desc_t) -> Bool {
    var a = a, b = b
    return dnnl_memory_desc_equal(&a, &b) != 0
}

func dnnlMDSize(_ md: dnnl_memory_desc_t) -> Int {
    var md = md
    return Int(dnnl_memory_desc_get_size(&md))
}

// MARK: - Fused activations

/// One oneDNN eltwise operation: dst = scale · f_alg(x; alpha, beta).
struct DNNLEltwise: Equatable {
    var alg: dnnl_alg_kind_t
    var alpha: Float = 0
    var beta: Float = 0
    var scale: Float = 1
}

/// The oneDNN eltwise chain equal to `activation` (an empty chain for the identity), or nil when
/// oneDNN 2.6 has no equivalent (softsign, thresholdedReLU with θ ≠ 0, clippedReLU with a
/// threshold, a negative max value or a negative slope under a max value). oneDNN 2.6 has no
/// hardsigmoid: it is linear(α, β) followed by clip(0, 1).
func dnnlEltwiseChain(_ activation: Activation?) -> [DNNLEltwise]? {
    guard let a = activation, !a.isIdentity else { return [] }
    switch a {
    case let .linear(alpha, beta): return [DNNLEltwise(alg: dnnl_eltwise_linear, alpha: alpha, beta: beta)]
    // oneDNN's ReLU is max(x, 0), which maps NaN to 0 where TensorFlow keeps NaN. Its leaky form
    // with a tiny slope would keep NaN but turns negative values into denormals instead of exact
    // zeros, so exact zeros win: the known divergence is documented (docs/ARCHITECTURE.md), and
    // `referenceOnly` (`mlconv predict --reference`) propagates NaN as TensorFlow does.
    case .relu: return [DNNLEltwise(alg: dnnl_eltwise_relu, alpha: 0)]
    case let .leakyReLU(alpha): return [DNNLEltwise(alg: dnnl_eltwise_relu, alpha: alpha)]
    case let .clippedReLU(maxValue, slope, threshold):
        guard threshold == 0 else { return nil }
        guard let m = maxValue else { return [DNNLEltwise(alg: dnnl_eltwise_relu, alpha: slope)] }
        guard m >= 0, slope >= 0 else { return nil }
        if slope == 0 { return [DNNLEltwise(alg: dnnl_eltwise_clip_v2, alpha: 0, beta: m)] }
        return [DNNLEltwise(alg: dnnl_eltwise_relu, alpha: slope),
                DNNLEltwise(alg: dnnl_eltwise_clip_v2, alpha: -Float.greatestFiniteMagnitude, beta: m)]
    case let .elu(alpha): return [DNNLEltwise(alg: dnnl_eltwise_elu, alpha: alpha)]
    case .selu:
        return [DNNLEltwise(alg: dnnl_eltwise_elu, alpha: 1.6732632423543772, scale: 1.0507009873554805)]
    case .sigmoid: return [DNNLEltwise(alg: dnnl_eltwise_logistic)]
    case let .hardSigmoid(alpha, beta):
        return [DNNLEltwise(alg: dnnl_eltwise_linear, alpha: alpha, beta: beta),
                DNNLEltwise(alg: dnnl_eltwise_clip_v2, alpha: 0, beta: 1)]
    case .tanh: return [DNNLEltwise(alg: dnnl_eltwise_tanh)]
    case .softplus: return [DNNLEltwise(alg: dnnl_eltwise_soft_relu, alpha: 1)]
    case .softsign: return nil
    case .swish: return [DNNLEltwise(alg: dnnl_eltwise_swish, alpha: 1)]
    case let .gelu(approximate):
        return [DNNLEltwise(alg: approximate ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf)]
    case .exponential: return [DNNLEltwise(alg: dnnl_eltwise_exp)]
    case let .thresholdedReLU(theta):
        return theta == 0 ? [DNNLEltwise(alg: dnnl_eltwise_relu, alpha: 0)] : nil
    // MARK: elementwise math ops (activations added with issue 9)
    case .mish: return [DNNLEltwise(alg: dnnl_eltwise_mish)]
    case .hardSwish: return [DNNLEltwise(alg: dnnl_eltwise_hardswish)]
    case let .parametricSoftplus(alpha, beta):
        // oneDNN 2.6's soft_relu has no parameters: linear(β) first, α as the eltwise scale.
        return (beta == 1 ? [] : [DNNLEltwise(alg: dnnl_eltwise_linear, alpha: beta, beta: 0)])
            + [DNNLEltwise(alg: dnnl_eltwise_soft_relu, scale: alpha)]
    case let .scaledTanh(alpha, beta):
        return (beta == 1 ? [] : [DNNLEltwise(alg: dnnl_eltwise_linear, alpha: beta, beta: 0)])
            + [DNNLEltwise(alg: dnnl_eltwise_tanh, scale: alpha)]
    case .geluSigmoid: return [DNNLEltwise(alg: dnnl_eltwise_swish, alpha: 1.702)]
    case .logSigmoid: return [DNNLEltwise(alg: dnnl_eltwise_logsigmoid)]
    }
}

/// Primitive attributes: user-mode scratchpad (so concurrent runs never share one) and the
/// given eltwise post-ops.
final class DNNLAttr {
    let handle: dnnl_primitive_attr_t

    /// - Parameter sumAt: when given, a `sum` post-op (dst = result + dst, scale 1) is inserted
    ///   before `postOps[sumAt]` (at the end when `sumAt == postOps.count`).
    init(postOps: [DNNLEltwise] = [], sumAt: Int? = nil) throws {
        var a: dnnl_primitive_attr_t?
        try dnnlCheck(dnnl_primitive_attr_create(&a), "dnnl_primitive_attr_create")
        handle = a!
        try dnnlCheck(dnnl_primitive_attr_set_scratchpad_mode(handle, dnnl_scratchpad_mode_user),
                      "dnnl_primitive_attr_set_scratchpad_mode")
        if !postOps.isEmpty || sumAt != nil {
            var po: dnnl_post_ops_t?
            try dnnlCheck(dnnl_post_ops_create(&po), "dnnl_post_ops_create")
            defer { dnnl_post_ops_destroy(po) }
            for (i, e) in postOps.enumerated() {
                if i == sumAt { try dnnlCheck(dnnl_post_ops_append_sum(po, 1), "dnnl_post_ops_append_sum") }
                try dnnlCheck(dnnl_post_ops_append_eltwise(po, e.scale, e.alg, e.alpha, e.beta),
                              "dnnl_post_ops_append_eltwise")
            }
            if let sumAt, sumAt >= postOps.count {
                try dnnlCheck(dnnl_post_ops_append_sum(po, 1), "dnnl_post_ops_append_sum")
            }
            try dnnlCheck(dnnl_primitive_attr_set_post_ops(handle, po), "dnnl_primitive_attr_set_post_ops")
        }
    }

    deinit { dnnl_primitive_attr_destroy(handle) }
}

/// Creates a primitive descriptor, fusing `activation` as eltwise post-ops when oneDNN has an
/// equivalent and the implementation accepts them. Returns the descriptor and the activation
/// still to apply after the primitive (nil when fused or absent).
func dnnlPrimitiveDesc(activation: Activation?, what: String,
                       _ create: (const_dnnl_primitive_attr_t) -> (dnnl_status_t, dnnl_primitive_desc_t?)) throws
    -> (DNNLPrimitiveDesc, Activation?)
{
    let leftover: Activation? = (activation?.isIdentity ?? true) ? nil : activation
    if let chain = dnnlEltwiseChain(activation), !chain.isEmpty {
        let attr = try DNNLAttr(postOps: chain)
        let (s, pd) = create(attr.handle)
        if s == dnnl_success, let pd { return (DNNLPrimitiveDesc(pd), nil) }
        if s != dnnl_unimplemented { throw DNNLError(status: s, call: what) }
    }
    let attr = try DNNLAttr()
    let (s, pd) = create(attr.handle)
    try dnnlCheck(s, what)
    return (DNNLPrimitiveDesc(pd!), leftover)
}

/// The kernel of a oneDNN primitive with one source and one destination and no weights or
/// post-ops (pooling, softmax, reduction, resampling): creates the primitive descriptor from the
/// initialized operation descriptor `desc` on the CPU engine and wraps it for `ctx`'s threads.
/// - Throws: `DNNLError` naming `what` when oneDNN refuses the descriptor.
func dnnlSourceToDestinationKernel<Desc>(_ desc: inout Desc, src: dnnl_memory_desc_t, dst: dnnl_memory_desc_t, what: String,
                                          _ ctx: KernelContext) throws -> Kernel {
    let engine = try DNNLEngine.get()
    let (pd, _) = try withUnsafeMutablePointer(to: &desc) { d in
        try dnnlPrimitiveDesc(activation: nil, what: "dnnl_primitive_desc_create (\(what))") { attr in
            var pd: dnnl_primitive_desc_t?
            let s = dnnl_primitive_desc_create(&pd, UnsafeRawPointer(d), attr, engine, nil)
            return (s, pd)
        }
    }
    let exe = try DNNLExecutable(
        pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)],
        constants: [], storage: DNNLStorage(), threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
    return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount])
}

/// An executable oneDNN reorder from `from` to `to` (runtime arguments: source, destination)
/// with `ctx`'s threads, or `threads` when given; `what` names it in errors.
/// - Throws: `DNNLError` when oneDNN has no reorder between the two descriptors.
func dnnlReorderExecutable(from: dnnl_memory_desc_t, to: dnnl_memory_desc_t, what: String, _ ctx: KernelContext,
                           threads: Int32? = nil) throws -> DNNLExecutable {
    var src = from, dst = to
    let engine = try DNNLEngine.get()
    var rpd: dnnl_primitive_desc_t?
    try dnnlCheck(dnnl_reorder_primitive_desc_create(&rpd, &src, engine, &dst, engine, nil), "dnnl_reorder_primitive_desc_create (\(what))")
    guard let rpd else { throw DNNLError(status: dnnl_runtime_error, call: "dnnl_reorder_primitive_desc_create (\(what))") }
    return try DNNLExecutable(pd: DNNLPrimitiveDesc(rpd),
                              runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)],
                              constants: [], storage: DNNLStorage(), threads: threads ?? DNNLRuntime.threads(for: ctx),
                              scratch: ctx.scratch)
}

/// Owns a primitive descriptor (destroyed on deinit; a primitive keeps its own copy).
final class DNNLPrimitiveDesc {
    let handle: dnnl_primitive_desc_t
    init(_ handle: dnnl_primitive_desc_t) { self.handle = handle }
    deinit { dnnl_primitive_desc_destroy(handle) }

    func md(_ what: dnnl_query_t, _ index: Int32 = 0) throws -> dnnl_memory_desc_t {
        guard let md = dnnlQueryMD(handle, what, index) else {
            throw DNNLError(status: dnnl_runtime_error, call: "dnnl_primitive_desc_query_md")
        }
        return md
    }
}

// MARK: - Constants (weights)

/// Memory owned by a prepared kernel: 64-byte-aligned allocations freed on deinit, and objects
/// (constant tensors) whose bytes are referenced without copying.
final class DNNLStorage {
    private(set) var allocations: [UnsafeMutableRawPointer] = []
    private(set) var retained: [AnyObject] = []

    func allocate(bytes: Int) -> UnsafeMutableRawPointer {
        let p = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(bytes, 64), alignment: 64)
        allocations.append(p)
        return p
    }

    func retain(_ o: AnyObject) { retained.append(o) }

    /// The float32 values of `c` in its canonical row-major layout: a pointer into the tensor when
    /// it is float32 already, else a dequantized copy.
    func floats(_ c: ConstantTensor) -> UnsafeMutableRawPointer {
        if let p = c.float32Pointer {
            retain(c)
            return UnsafeMutableRawPointer(mutating: p)
        }
        return copy(c.floats())
    }

    func copy(_ values: [Float]) -> UnsafeMutableRawPointer {
        let p = allocate(bytes: values.count * 4)
        values.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return p
    }

    deinit { for p in allocations { p.deallocate() } }
}

extension DNNLStorage {
    /// `c` in the layout `target`: the tensor's own bytes when `target` is its plain layout `plain`
    /// and it is float32 (no copy, the tensor is retained); otherwise a buffer reordered once
    /// (oneDNN reorder) from the plain float32 values (a dequantized copy for fp16 and quantized
    /// weights, freed after the reorder); the tensor's mapped pages are then released
    /// (`ByteStorage.releaseResidentPages`).
    func constant(_ c: ConstantTensor, plain: dnnl_memory_desc_t, target: dnnl_memory_desc_t) throws
        -> UnsafeMutableRawPointer
    {
        if dnnlMDEqual(plain, target) { return floats(c) }
        // The mapped bytes are not read again once repacked: their pages leave memory (peak RSS).
        defer { c.storage.releaseResidentPages() }
        if let p = c.float32Pointer {
            return try dnnlReorder(UnsafeMutableRawPointer(mutating: p), from: plain, to: target)
        }
        let values = c.floats()
        return try values.withUnsafeBytes {
            try dnnlReorder(UnsafeMutableRawPointer(mutating: $0.baseAddress!), from: plain, to: target)
        }
    }

    /// Reorders `src` (layout `from`) into a new buffer of layout `to`, owned by this storage.
    func dnnlReorder(_ src: UnsafeMutableRawPointer, from: dnnl_memory_desc_t, to: dnnl_memory_desc_t) throws
        -> UnsafeMutableRawPointer
    {
        let engine = try DNNLEngine.get()
        var fromMD = from, toMD = to
        let dst = allocate(bytes: dnnlMDSize(to))
        var rpd: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_reorder_primitive_desc_create(&rpd, &fromMD, engine, &toMD, engine, nil),
                      "dnnl_reorder_primitive_desc_create (weights)")
        defer { dnnl_primitive_desc_destroy(rpd) }
        var prim: dnnl_primitive_t?
        try dnnlCheck(dnnl_primitive_create(&prim, rpd), "dnnl_primitive_create (weight reorder)")
        defer { dnnl_primitive_destroy(prim) }
        var stream: dnnl_stream_t?
        try dnnlCheck(dnnl_stream_create(&stream, engine, UInt32(dnnl_stream_default_flags.rawValue)), "dnnl_stream_create")
        defer { dnnl_stream_destroy(stream) }
        var srcMem: dnnl_memory_t?, dstMem: dnnl_memory_t?
        try dnnlCheck(dnnl_memory_create(&srcMem, &fromMD, engine, src), "dnnl_memory_create")
        defer { dnnl_memory_destroy(srcMem) }
        try dnnlCheck(dnnl_memory_create(&dstMem, &toMD, engine, dst), "dnnl_memory_create")
        defer { dnnl_memory_destroy(dstMem) }
        let args = [dnnl_exec_arg_t(arg: mlconv_dnnl_arg_src(), memory: srcMem),
                    dnnl_exec_arg_t(arg: mlconv_dnnl_arg_dst(), memory: dstMem)]
        try dnnlCheck(dnnl_primitive_execute(prim, stream, Int32(args.count), args), "dnnl_primitive_execute (weight reorder)")
        try dnnlCheck(dnnl_stream_wait(stream), "dnnl_stream_wait")
        return dst
    }
}

// MARK: - Execution

/// A memory argument of a primitive: its execution-argument id and descriptor.
struct DNNLArg {
    var arg: Int32
    var md: dnnl_memory_desc_t
}

/// Per-call mutable state of one executable; used by one thread at a time.
final class DNNLExecutionContext: @unchecked Sendable {
    let stream: dnnl_stream_t
    /// Memories of the runtime arguments (inputs then outputs), re-pointed at each run.
    let runtimeMemories: [dnnl_memory_t]
    /// The user-mode scratchpad's memory: without `ownScratchpad`, re-pointed at each run to a
    /// buffer of the plan's `ScratchArena`; nil when the primitive needs none.
    let scratchpadMemory: dnnl_memory_t?
    private let fixedMemories: [dnnl_memory_t]
    let args: [dnnl_exec_arg_t]
    /// The context's own scratchpad buffer (`ownScratchpad`), else nil.
    private let ownedScratchpad: UnsafeMutableRawPointer?

    /// - Parameter ownScratchpad: allocate a scratchpad that stays bound to this context (for a
    ///   caller that runs the primitive many times in a row, as the recurrent kernels do) instead
    ///   of binding one per run.
    init(engine: dnnl_engine_t, runtime: [DNNLArg], constants: [(DNNLArg, UnsafeMutableRawPointer)],
         scratchpad scratchMD: dnnl_memory_desc_t?, ownScratchpad: Bool = false) throws
    {
        var created: [dnnl_memory_t] = []
        var stream: dnnl_stream_t?
        var owned: UnsafeMutableRawPointer?
        var ok = false
        defer {
            if !ok {
                for m in created { dnnl_memory_destroy(m) }
                if let stream { dnnl_stream_destroy(stream) }
                owned?.deallocate()
            }
        }
        try dnnlCheck(dnnl_stream_create(&stream, engine, UInt32(dnnl_stream_default_flags.rawValue)), "dnnl_stream_create")
        func make(_ a: DNNLArg, _ p: UnsafeMutableRawPointer?) throws -> dnnl_memory_t {
            var md = a.md
            var m: dnnl_memory_t?
            try dnnlCheck(dnnl_memory_create(&m, &md, engine, p), "dnnl_memory_create")
            created.append(m!)
            return m!
        }
        var args: [dnnl_exec_arg_t] = []
        var runtimeMems: [dnnl_memory_t] = []
        for a in runtime {
            let m = try make(a, nil)
            runtimeMems.append(m)
            args.append(dnnl_exec_arg_t(arg: a.arg, memory: m))
        }
        var fixed: [dnnl_memory_t] = []
        for (a, p) in constants {
            let m = try make(a, p)
            fixed.append(m)
            args.append(dnnl_exec_arg_t(arg: a.arg, memory: m))
        }
        var scratchMemory: dnnl_memory_t?
        if let scratchMD {
            if ownScratchpad { owned = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(dnnlMDSize(scratchMD), 64), alignment: 64) }
            let m = try make(DNNLArg(arg: mlconv_dnnl_arg_scratchpad(), md: scratchMD), owned)
            scratchMemory = m
            args.append(dnnl_exec_arg_t(arg: mlconv_dnnl_arg_scratchpad(), memory: m))
        }
        self.stream = stream!
        self.runtimeMemories = runtimeMems
        self.scratchpadMemory = scratchMemory
        self.fixedMemories = fixed
        self.args = args
        self.ownedScratchpad = owned
        ok = true
    }

    deinit {
        for m in runtimeMemories { dnnl_memory_destroy(m) }
        for m in fixedMemories { dnnl_memory_destroy(m) }
        if let scratchpadMemory { dnnl_memory_destroy(scratchpadMemory) }
        dnnl_stream_destroy(stream)
        ownedScratchpad?.deallocate()
    }
}

/// One prepared oneDNN primitive with its constant arguments, executable concurrently on
/// caller-owned buffers.
final class DNNLExecutable: @unchecked Sendable {
    private let primitive: dnnl_primitive_t
    private let engine: dnnl_engine_t
    private let runtime: [DNNLArg]
    private let constants: [(DNNLArg, UnsafeMutableRawPointer)]
    private let scratchpadMD: dnnl_memory_desc_t?
    private let scratchpadBytes: Int
    /// Where the scratchpad comes from at each run: the plan's shared arena.
    private let scratch: ScratchArena
    let threads: Int32
    /// Keeps weight buffers alive.
    private let storage: DNNLStorage
    private let idle: Mutex<[DNNLExecutionContext]>
    /// Implementation oneDNN chose (e.g. "brgconv:avx512_core"), for diagnostics.
    let implementation: String

    /// - Parameters:
    ///   - runtime: descriptors of the buffers passed to `execute`, in order (inputs, then outputs).
    ///   - constants: weight arguments with their data (in the layout of their descriptor).
    ///   - scratch: the arena the user-mode scratchpad is taken from at each run.
    init(pd pdObject: DNNLPrimitiveDesc, runtime: [DNNLArg], constants: [(DNNLArg, UnsafeMutableRawPointer)],
         storage: DNNLStorage, threads: Int32, scratch: ScratchArena) throws
    {
        let pd = pdObject.handle
        engine = try DNNLEngine.get()
        var prim: dnnl_primitive_t?
        try dnnlCheck(dnnl_primitive_create(&prim, pd), "dnnl_primitive_create")
        primitive = prim!
        var impl: UnsafePointer<CChar>?
        if dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success, let impl {
            implementation = String(cString: impl)
        } else {
            implementation = "?"
        }
        if let md = dnnlQueryMD(pd, dnnl_query_scratchpad_md), dnnlMDSize(md) > 0 {
            scratchpadMD = md
            scratchpadBytes = dnnlMDSize(md)
        } else {
            scratchpadMD = nil
            scratchpadBytes = 0
        }
        self.scratch = scratch
        self.runtime = runtime
        self.constants = constants
        self.storage = storage
        self.threads = threads
        do {
            let first = try DNNLExecutionContext(engine: engine, runtime: runtime, constants: constants,
                                                 scratchpad: scratchpadMD)
            idle = Mutex([first])
        } catch {
            dnnl_primitive_destroy(primitive)
            throw error
        }
    }

    deinit { dnnl_primitive_destroy(primitive) }

    private func acquire() -> DNNLExecutionContext {
        while true {
            if let c = idle.withLock({ $0.popLast() }) { return c }
            // All contexts are busy (concurrent runs): make another. If that fails (out of
            // memory), wait for a busy one to come back — at least one exists.
            if let c = try? DNNLExecutionContext(engine: engine, runtime: runtime, constants: constants,
                                                 scratchpad: scratchpadMD) {
                return c
            }
            sched_yield()
        }
    }

    private func release(_ c: DNNLExecutionContext) {
        idle.withLock { $0.append(c) }
    }

    /// Executes on the caller's buffers: `inputs` then `outputs` are the runtime arguments, in
    /// order. Returns false if oneDNN reported an error (not expected once prepare succeeded).
    func execute(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) -> Bool {
        guard inputs.count + outputs.count == runtime.count else { return false }
        let c = acquire()
        defer { release(c) }
        let old = omp_get_max_threads()
        if old != threads { omp_set_num_threads(threads) }
        defer { if old != threads { omp_set_num_threads(old) } }
        for (i, p) in inputs.enumerated() {
            let s = dnnl_memory_set_data_handle_v2(c.runtimeMemories[i], UnsafeMutableRawPointer(mutating: p), c.stream)
            if s != dnnl_success { return false }
        }
        for (i, p) in outputs.enumerated() {
            let s = dnnl_memory_set_data_handle_v2(c.runtimeMemories[inputs.count + i], UnsafeMutableRawPointer(p), c.stream)
            if s != dnnl_success { return false }
        }
        func run() -> Bool {
            let s = c.args.withUnsafeBufferPointer {
                dnnl_primitive_execute(primitive, c.stream, Int32($0.count), $0.baseAddress)
            }
            return s == dnnl_success && dnnl_stream_wait(c.stream) == dnnl_success
        }
        // Its contexts never own a scratchpad (`acquire` makes them without `ownScratchpad`).
        guard let scratchpad = c.scratchpadMemory else { return run() }
        return scratch.withBuffer(bytes: scratchpadBytes) { buffer in
            dnnl_memory_set_data_handle_v2(scratchpad, buffer, c.stream) == dnnl_success && run()
        }
    }
}

/// The kernel all oneDNN ops share: one primitive over (inputs…, outputs…), then optionally an
/// activation oneDNN could not fuse, applied in place on output 0.
final class DNNLKernel: Kernel {
    let executable: DNNLExecutable
    let postActivation: Activation?
    let outputCounts: [Int]
    let inPlace: Bool

    init(_ executable: DNNLExecutable, outputCounts: [Int], postActivation: Activation? = nil, inPlace: Bool = false) {
        self.executable = executable
        self.outputCounts = outputCounts
        self.postActivation = postActivation
        self.inPlace = inPlace
    }

    var supportsInPlace: Bool { inPlace }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        guard executable.execute(inputs: inputs, outputs: outputs) else {
            // Cannot happen after a successful prepare; make a failure visible rather than silent.
            for (p, n) in zip(outputs, outputCounts) { p.update(repeating: .nan, count: n) }
            return
        }
        if let a = postActivation, let out = outputs.first, let n = outputCounts.first {
            // An activation oneDNN could not fuse (softsign, thresholdedReLU θ ≠ 0, clippedReLU
            // with a threshold…): the reference definition, split over the kernel's threads.
            let chunks = n >= 1 << 15 ? Swift.min(Int(executable.threads), n >> 14) : 1
            if chunks <= 1 {
                for i in 0..<n { out[i] = a.apply(out[i]) }
            } else {
                let address = UInt(bitPattern: out)
                DispatchQueue.concurrentPerform(iterations: chunks) { c in
                    let p = UnsafeMutablePointer<Float>(bitPattern: address)!
                    for i in (n * c / chunks)..<(n * (c + 1) / chunks) { p[i] = a.apply(p[i]) }
                }
            }
        }
    }
}

/// The shared second half of the weighted-op kernels (convolution, deconvolution, inner product):
/// creates the primitive descriptor for the initialised op descriptor `opDesc` with `activation`
/// fused as a post-op where oneDNN can (the rest runs after), packs `weight` once from its plain
/// layout `plainWeights` into the layout oneDNN chose, adds the optional bias, and returns the
/// kernel. `src`/`dst` describe the caller's activation buffers.
/// - Throws: `RuntimeError.kernelFailure` (via `dnnlCheck`) when oneDNN rejects the descriptor.
func makeWeightedDNNLKernel(_ ctx: KernelContext, opDesc: UnsafeRawPointer, what: String, activation: Activation?,
                            weight: ConstantTensor, plainWeights: dnnl_memory_desc_t,
                            bias: ConstantTensor?, biasMD: dnnl_memory_desc_t,
                            src: dnnl_memory_desc_t, dst: dnnl_memory_desc_t) throws -> Kernel {
    let (pd, leftover) = try dnnlOpPrimitiveDesc(opDesc: opDesc, activation: activation, what: "dnnl_primitive_desc_create (\(what))")
    let exe = try makeWeightedDNNLExecutable(ctx, pd: pd, weight: weight, plainWeights: plainWeights, bias: bias, biasMD: biasMD,
                                             src: src, dst: dst)
    return DNNLKernel(exe, outputCounts: [ctx.outputTypes[0].elementCount], postActivation: leftover)
}

/// `dnnlPrimitiveDesc` for the initialised op descriptor `opDesc` on the CPU engine: the primitive
/// descriptor with `activation` fused as far as oneDNN accepts, and the part left to run after.
/// - Throws: `RuntimeError.kernelFailure` (via `dnnlCheck`) when oneDNN rejects the descriptor.
func dnnlOpPrimitiveDesc(opDesc: UnsafeRawPointer, activation: Activation?, what: String) throws -> (DNNLPrimitiveDesc, Activation?) {
    let engine = try DNNLEngine.get()
    return try dnnlPrimitiveDesc(activation: activation, what: what) { attr in
        var pd: dnnl_primitive_desc_t?
        let s = dnnl_primitive_desc_create(&pd, opDesc, attr, engine, nil)
        return (s, pd)
    }
}

/// The executable of a weighted op's primitive descriptor `pd`: packs `weight` once from its plain
/// layout `plainWeights` into the weights layout `pd` chose, adds the optional `bias` (layout
/// `biasMD`), and binds the caller's activation buffers `src` / `dst` at run time.
/// - Throws: `RuntimeError.kernelFailure` when oneDNN cannot reorder the weights or build the primitive.
func makeWeightedDNNLExecutable(_ ctx: KernelContext, pd: DNNLPrimitiveDesc, weight: ConstantTensor, plainWeights: dnnl_memory_desc_t,
                                bias: ConstantTensor?, biasMD: dnnl_memory_desc_t,
                                src: dnnl_memory_desc_t, dst: dnnl_memory_desc_t) throws -> DNNLExecutable {
    let storage = DNNLStorage()
    let chosen = try pd.md(dnnl_query_weights_md)
    let packed = try storage.constant(weight, plain: plainWeights, target: chosen)
    var constants = [(DNNLArg(arg: mlconv_dnnl_arg_weights(), md: chosen), packed)]
    if let bias {
        constants.append((DNNLArg(arg: mlconv_dnnl_arg_bias(), md: biasMD), storage.floats(bias)))
    }
    return try DNNLExecutable(
        pd: pd, runtime: [DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)],
        constants: constants, storage: storage, threads: DNNLRuntime.threads(for: ctx), scratch: ctx.scratch)
}
