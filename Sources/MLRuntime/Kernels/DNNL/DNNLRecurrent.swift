import CDNNL
import MLGraph
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `Op.recurrent` (SimpleRNN / LSTM / GRU, optionally Bidirectional) on oneDNN, two kernels tried
/// in order (numerics: `ReferenceRecurrent`):
///
/// 1. `DNNLRNNKernel`: one oneDNN RNN primitive for the whole layer (`vanilla_rnn`, `lstm`,
///    `gru`, or `lbr_gru` for Keras `reset_after`), directions left2right / right2left /
///    bidirectional_concat / bidirectional_sum. Covers the Keras-2.3+/TF2 defaults: gates
///    sigmoid and activation tanh (SimpleRNN: tanh, relu, leaky relu or sigmoid), no mask, any
///    merge mode (ave = sum × ½; mul multiplies the halves of a concat), goBackwards only without
///    Bidirectional.
/// 2. `DNNLRecurrentBatchedKernel`, for everything else (hard_sigmoid gates of Keras ≤ 2.2, other
///    activations, masks, Bidirectional with goBackwards): the input projection x·Wᵀ + b for all
///    T steps is one oneDNN inner product per direction; each step runs one small oneDNN inner
///    product h·Rᵀ (GRU without reset_after: two, the second on r∘h) and the gate arithmetic in
///    Swift. The two directions of a Bidirectional layer run one after the other (running them on
///    two GCD threads measured several times slower on a loaded 2-core machine: the second thread
///    waits to be scheduled longer than a direction takes, ~0.4 ms for LSTM(128) over 75 steps).
///
/// Both prepare (reorder) their weights once and are safe to run concurrently: per-call buffers
/// and oneDNN execution contexts come from pools (as `DNNLExecutable`).
enum DNNLRecurrent {
    /// The registered factory (declines non-float32 tensors; maps oneDNN errors).
    static let factory: KernelFactory = dnnlFactory(make)

    /// `DNNLRNNKernel` when the RNN primitive covers the node, else `DNNLRecurrentBatchedKernel`;
    /// nil (reference kernel) when the node's shapes or weights are inconsistent.
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .recurrent(a) = ctx.node.op, let layer = RecurrentLayer(ctx, a) else { return nil }
        if let k = try DNNLRNNKernel.make(ctx, layer) { return k }
        return try DNNLRecurrentBatchedKernel(ctx, layer)
    }
}

// MARK: - Layer description shared by both kernels

/// Validated sizes and dequantized weights of a recurrent node.
struct RecurrentLayer {
    /// One direction's weights (IR layout, Keras gate order) and processing order.
    struct Direction {
        /// "kernel" [G·U, D].
        var kernel: [Float]
        /// "recurrentKernel" [G·U, U].
        var recurrentKernel: [Float]
        /// "bias" [G·U], zeros when absent.
        var bias: [Float]
        /// "recurrentBias" [G·U], zeros when absent.
        var recurrentBias: [Float]
        /// Whether this direction reads the sequence from the end (the backward direction of a
        /// Bidirectional layer does unless the layer itself has goBackwards).
        var goBackwards: Bool
    }

    /// The node's attributes.
    let a: RecurrentAttributes
    /// N, T, D of the input; U (units); G (gate blocks).
    let batch, steps, inputSize, units, gates: Int
    /// Forward then backward; emptied by `droppingWeights` once the kernel has packed them.
    private(set) var directions: [Direction]

    /// Units of output 0's last axis (2·units for a concat merge).
    var outputWidth: Int { a.bidirectional == .concat ? 2 * units : units }
    /// State tensors per direction (LSTM: h and c).
    var stateCount: Int { a.kind.stateCount }

    /// This description without the weight arrays (kernels keep only their packed copies).
    func droppingWeights() -> RecurrentLayer {
        var copy = self
        copy.directions = []
        return copy
    }

    /// nil when the node's types or weights are not what `Op.recurrent` documents (the reference
    /// kernel then reports the problem).
    init?(_ ctx: KernelContext, _ a: RecurrentAttributes) {
        guard let x = ctx.inputTypes.first?.shape, x.count == 3, x.allSatisfy({ $0 > 0 }), a.units > 0 else { return nil }
        self.a = a
        (batch, steps, inputSize) = (x[0], x[1], x[2])
        units = a.units
        gates = a.kind.gateCount
        let stateInputs = a.initialStates ? a.kind.stateCount * a.directions : 0
        guard ctx.inputTypes.count == 1 + stateInputs + (a.hasMask ? 1 : 0),
              ctx.inputTypes.dropFirst().prefix(stateInputs).allSatisfy({ $0.shape == [x[0], a.units] }),
              !a.hasMask || ctx.inputTypes.last!.shape == [x[0], x[1]]
        else { return nil }
        let width = a.bidirectional == .concat ? 2 * a.units : a.units
        var outs = [a.returnSequences ? [batch, steps, width] : [batch, width]]
        if a.returnState { outs += Array(repeating: [batch, units], count: a.kind.stateCount * a.directions) }
        guard ctx.outputTypes.map(\.shape) == outs else { return nil }
        let g = gates * units
        var dirs: [Direction] = []
        for d in 0..<a.directions {
            let suffix = d == 0 ? "" : "_backward"
            guard let k = ctx.node.weights["kernel" + suffix], k.shape == [g, inputSize],
                  let r = ctx.node.weights["recurrentKernel" + suffix], r.shape == [g, units]
            else { return nil }
            let b = ctx.node.weights["bias" + suffix], rb = ctx.node.weights["recurrentBias" + suffix]
            if let b, b.shape != [g] { return nil }
            if let rb, rb.shape != [g] { return nil }
            dirs.append(Direction(kernel: k.floats(), recurrentKernel: r.floats(),
                                  bias: b?.floats() ?? [Float](repeating: 0, count: g),
                                  recurrentBias: rb?.floats() ?? [Float](repeating: 0, count: g),
                                  goBackwards: d == 0 ? a.goBackwards : !a.goBackwards))
        }
        directions = dirs
    }

    /// Merges one forward and one backward value (Keras `Bidirectional.merge_mode`, not concat).
    @inline(__always)
    static func merge(_ mode: BidirectionalMerge, _ f: Float, _ b: Float) -> Float {
        switch mode {
        case .concat, .sum: return f + b
        case .mul: return f * b
        case .ave: return (f + b) / 2
        }
    }
}

// MARK: - Per-call buffers

/// A 64-byte-aligned, zero-initialized float buffer, freed on deinit.
final class RecurrentBuffer: @unchecked Sendable {
    private let raw: UnsafeMutableRawPointer
    /// The first float.
    let pointer: UnsafeMutablePointer<Float>
    /// Floats allocated (at least 1).
    let count: Int

    init(count: Int) {
        self.count = Swift.max(count, 1)
        raw = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(self.count * 4, 64), alignment: 64)
        pointer = raw.initializeMemory(as: Float.self, repeating: 0, count: self.count)
    }

    deinit { raw.deallocate() }
}

/// A pool of per-call objects: `acquire` pops an idle one or makes another (only under
/// concurrent use; the first is made at prepare, so failures surface there).
final class RecurrentPool<T: AnyObject & Sendable>: @unchecked Sendable {
    private let idle: Mutex<[T]>
    private let make: () throws -> T

    /// Makes the first object now (so that failures surface at prepare).
    init(_ make: @escaping () throws -> T) throws {
        self.make = make
        idle = Mutex([try make()])
    }

    /// An idle object, or a new one when all are in use.
    func acquire() -> T {
        while true {
            if let t = idle.withLock({ $0.popLast() }) { return t }
            if let t = try? make() { return t }
            sched_yield()  // out of memory: wait for a busy one to come back (one exists)
        }
    }

    /// Returns `t` to the pool.
    func release(_ t: T) { idle.withLock { $0.append(t) } }

    /// Runs `body` with an object acquired for the duration of the call.
    func with<R>(_ body: (T) -> R) -> R {
        let t = acquire()
        defer { release(t) }
        return body(t)
    }
}

/// The OpenMP thread count for a recurrent computation of `work` multiply-adds: `threads`, or 1
/// below 16M. Measured (BiLSTM(128), T 75, one sequence, 2-core machine under load): one thread
/// 0.63 ms against 0.75 ms with two for the RNN primitive, and a two-thread input projection
/// saved under 0.1 ms but sometimes stalled for milliseconds when the second OpenMP thread was
/// descheduled.
private func recurrentThreads(_ threads: Int32, work: Int) -> Int32 {
    work < (1 << 24) ? 1 : threads
}

/// Runs `body` with the calling thread's OpenMP thread count set to `threads`, then restores it.
@inline(__always)
private func withOMPThreads<R>(_ threads: Int32, _ body: () throws -> R) rethrows -> R {
    let old = omp_get_max_threads()
    if old != threads { omp_set_num_threads(threads) }
    defer { if old != threads { omp_set_num_threads(old) } }
    return try body()
}

// MARK: - 1. One oneDNN RNN primitive per layer

/// The whole layer as one oneDNN RNN primitive (see `DNNLRecurrent`).
final class DNNLRNNKernel: Kernel {
    /// Per-call buffers (float offsets into one allocation).
    private struct Scratch {
        /// Offsets of dst_layer (when not output 0), the stacked initial states (Bidirectional)
        /// and the final states; `total` floats in all.
        var dstLayer = 0, srcIter = 0, srcIterC = 0, dstIter = 0, dstIterC = 0, total = 0
    }

    /// Sizes and attributes (without the weights, which live packed in `executable`).
    let layer: RecurrentLayer
    /// The RNN primitive on (src_layer, [src_iter, src_iter_c]; dst_layer, [dst_iter, dst_iter_c]).
    let executable: DNNLExecutable
    /// oneDNN cell kind, for diagnostics ("lstm", "lbr_gru", …).
    let cell: String
    /// src_iter(_c) given (initial states); dst_iter(_c) requested (final states or last output).
    private let hasSrcIter, hasDstIter: Bool
    /// dst_layer is output 0 itself (no copy).
    private let dstLayerIsOutput: Bool
    /// dst_layer channels: 2·units for bidirectional_concat.
    private let dstLayerWidth: Int
    private let scratch: Scratch
    private let pool: RecurrentPool<RecurrentBuffer>

    /// The kernel, or nil when oneDNN's RNN primitive does not cover the configuration.
    static func make(_ ctx: KernelContext, _ layer: RecurrentLayer) throws -> Kernel? {
        let a = layer.a
        guard !a.hasMask, !(a.bidirectional != nil && a.goBackwards) else { return nil }
        var activation = dnnl_eltwise_tanh, alpha: Float = 0
        switch a.kind {
        case .lstm, .gru:
            guard a.activation == .tanh, a.recurrentActivation == .sigmoid else { return nil }
        case .simpleRNN:
            switch a.activation {
            case .tanh: activation = dnnl_eltwise_tanh
            case .sigmoid: activation = dnnl_eltwise_logistic
            case .relu: activation = dnnl_eltwise_relu
            case let .leakyReLU(slope): activation = dnnl_eltwise_relu; alpha = slope
            default: return nil
            }
        }
        do {
            // Small layers run on one thread (see `recurrentThreads`); the primitive is created
            // with the count it runs with.
            let threads = recurrentThreads(DNNLRuntime.threads(for: ctx),
                                           work: layer.batch * layer.steps * layer.gates * layer.units * (layer.inputSize + layer.units))
            return try withOMPThreads(threads) {
                try DNNLRNNKernel(ctx, layer, activation: activation, alpha: alpha, threads: threads)
            }
        } catch let e as DNNLError where e.status == dnnl_unimplemented {
            return nil
        }
    }

    private init(_ ctx: KernelContext, _ layer: RecurrentLayer, activation: dnnl_alg_kind_t, alpha: Float, threads: Int32) throws {
        self.layer = layer.droppingWeights()
        let a = layer.a
        let (n, t, d, u, dirs) = (layer.batch, layer.steps, layer.inputSize, layer.units, a.directions)
        let lbr = a.kind == .gru && a.resetAfter
        let biasGates = layer.gates + (lbr ? 1 : 0)
        let direction: dnnl_rnn_direction_t
        switch a.bidirectional {
        case nil: direction = a.goBackwards ? dnnl_unidirectional_right2left : dnnl_unidirectional_left2right
        case .concat?, .mul?: direction = dnnl_bidirectional_concat
        case .sum?, .ave?: direction = dnnl_bidirectional_sum
        }
        dstLayerWidth = direction == dnnl_bidirectional_concat ? 2 * u : u
        hasSrcIter = a.initialStates
        hasDstIter = a.returnState || !a.returnSequences
        dstLayerIsOutput = a.returnSequences
            && (a.bidirectional == nil ? !a.goBackwards : a.bidirectional != .mul)

        var s = Scratch()
        func take(_ count: Int) -> Int { defer { s.total += count }; return s.total }
        if !dstLayerIsOutput { s.dstLayer = take(n * t * dstLayerWidth) }
        if hasSrcIter && dirs == 2 { s.srcIter = take(2 * n * u); s.srcIterC = take(2 * n * u) }
        if hasDstIter { s.dstIter = take(dirs * n * u); s.dstIterC = take(dirs * n * u) }
        scratch = s
        let total = s.total
        pool = try RecurrentPool { RecurrentBuffer(count: total) }

        // Descriptors: src/dst layer in the IR's [N, T, C] order (ntc), states ldnc.
        let engine = try DNNLEngine.get()
        var srcLayer = try dnnlMD([t, n, d], dnnl_ntc)
        var dstLayer = try dnnlMD([t, n, dstLayerWidth], dnnl_ntc)
        let stateMD = try dnnlMD([1, dirs, n, u], dnnl_ldnc)
        let none = dnnl_memory_desc_t()
        var srcIter = hasSrcIter ? stateMD : none, srcIterC = srcIter
        var dstIter = hasDstIter ? stateMD : none, dstIterC = dstIter
        var weightsLayer = try dnnlMD([1, dirs, d, layer.gates, u], dnnl_format_tag_any)
        var weightsIter = try dnnlMD([1, dirs, u, layer.gates, u], dnnl_format_tag_any)
        var biasMD = try dnnlMD([1, dirs, biasGates, u], dnnl_ldgo)
        var desc = dnnl_rnn_desc_t()
        let prop = dnnl_forward_inference
        switch a.kind {
        case .simpleRNN:
            cell = "vanilla_rnn"
            try dnnlCheck(dnnl_vanilla_rnn_forward_desc_init(&desc, prop, activation, direction, &srcLayer, &srcIter,
                                                             &weightsLayer, &weightsIter, &biasMD, &dstLayer, &dstIter,
                                                             0, alpha, 0), "dnnl_vanilla_rnn_forward_desc_init")
        case .lstm:
            cell = "lstm"
            try dnnlCheck(dnnl_lstm_forward_desc_init(&desc, prop, direction, &srcLayer, &srcIter, &srcIterC,
                                                      &weightsLayer, &weightsIter, &biasMD, &dstLayer, &dstIter,
                                                      &dstIterC, 0), "dnnl_lstm_forward_desc_init")
        case .gru where lbr:
            cell = "lbr_gru"
            try dnnlCheck(dnnl_lbr_gru_forward_desc_init(&desc, prop, direction, &srcLayer, &srcIter, &weightsLayer,
                                                         &weightsIter, &biasMD, &dstLayer, &dstIter, 0),
                          "dnnl_lbr_gru_forward_desc_init")
        case .gru:
            cell = "gru"
            try dnnlCheck(dnnl_gru_forward_desc_init(&desc, prop, direction, &srcLayer, &srcIter, &weightsLayer,
                                                     &weightsIter, &biasMD, &dstLayer, &dstIter, 0),
                          "dnnl_gru_forward_desc_init")
        }
        let attr = try DNNLAttr()
        var pdHandle: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil),
                      "dnnl_primitive_desc_create (\(cell))")
        let pd = DNNLPrimitiveDesc(pdHandle!)

        // Weights: our [G·U, D] per direction is oneDNN's ldgoi (l, d, g, o, i) with l = 1;
        // both directions stacked, then reordered once to the layout the primitive chose.
        // Gate orders agree: LSTM i, f, c̃, o; GRU u(= Keras z), r, o(= h̃), and oneDNN's
        // h = u∘h + (1 − u)∘o is Keras' update.
        let storage = DNNLStorage()
        func packed(_ values: [Float], plain: dnnl_memory_desc_t, arg: Int32) throws -> (DNNLArg, UnsafeMutableRawPointer) {
            let target = try pd.md(dnnl_query_exec_arg_md, arg)
            let p = storage.copy(values)
            if dnnlMDEqual(plain, target) { return (DNNLArg(arg: arg, md: target), p) }
            return (DNNLArg(arg: arg, md: target), try storage.dnnlReorder(p, from: plain, to: target))
        }
        let plainLayer = try dnnlMD([1, dirs, d, layer.gates, u], dnnl_ldgoi)
        let plainIter = try dnnlMD([1, dirs, u, layer.gates, u], dnnl_ldgoi)
        var bias: [Float] = []
        for w in layer.directions {
            if lbr {
                // oneDNN LBR GRU: u = σ(Wx + Uh + b₀), r = σ(… + b₁), o = tanh(Wx + b₂ + r∘(Uh + b₃)).
                bias += zip(w.bias[..<(2 * u)], w.recurrentBias[..<(2 * u)]).map { $0 + $1 }
                bias += w.bias[(2 * u)...]
                bias += w.recurrentBias[(2 * u)...]
            } else {
                bias += zip(w.bias, w.recurrentBias).map { $0 + $1 }
            }
        }
        let constants = [
            try packed(layer.directions.flatMap(\.kernel), plain: plainLayer, arg: DNNL_ARG_WEIGHTS_0),
            try packed(layer.directions.flatMap(\.recurrentKernel), plain: plainIter, arg: DNNL_ARG_WEIGHTS_1),
            (DNNLArg(arg: DNNL_ARG_BIAS, md: biasMD), storage.copy(bias)),
        ]
        var runtime = [DNNLArg(arg: DNNL_ARG_SRC_0, md: srcLayer)]
        if hasSrcIter {
            runtime.append(DNNLArg(arg: DNNL_ARG_SRC_1, md: srcIter))
            if a.kind == .lstm { runtime.append(DNNLArg(arg: DNNL_ARG_SRC_2, md: srcIterC)) }
        }
        runtime.append(DNNLArg(arg: DNNL_ARG_DST_0, md: dstLayer))
        if hasDstIter {
            runtime.append(DNNLArg(arg: DNNL_ARG_DST_1, md: dstIter))
            if a.kind == .lstm { runtime.append(DNNLArg(arg: DNNL_ARG_DST_2, md: dstIterC)) }
        }
        executable = try DNNLExecutable(pd: pd, runtime: runtime, constants: constants, storage: storage,
                                        threads: threads, scratch: ctx.scratch)
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        pool.with { buffer in run(inputs, outputs, buffer.pointer) }
    }

    private func run(_ inputs: [UnsafePointer<Float>], _ outputs: [UnsafeMutablePointer<Float>], _ base: UnsafeMutablePointer<Float>) {
        let a = layer.a
        let (n, t, u, sc, dirs) = (layer.batch, layer.steps, layer.units, layer.stateCount, a.directions)
        let lstm = a.kind == .lstm
        var ins = [inputs[0]]
        if hasSrcIter {
            if dirs == 1 {
                ins.append(inputs[1])
                if lstm { ins.append(inputs[2]) }
            } else {
                for d in 0..<2 {
                    (base + scratch.srcIter + d * n * u).update(from: inputs[1 + d * sc], count: n * u)
                    if lstm { (base + scratch.srcIterC + d * n * u).update(from: inputs[2 + d * sc], count: n * u) }
                }
                ins.append(UnsafePointer(base + scratch.srcIter))
                if lstm { ins.append(UnsafePointer(base + scratch.srcIterC)) }
            }
        }
        let dstLayer = dstLayerIsOutput ? outputs[0] : base + scratch.dstLayer
        // States go straight to the state outputs of a single direction.
        let statesDirect = dirs == 1 && a.returnState
        let dstIter = statesDirect ? outputs[1] : base + scratch.dstIter
        let dstIterC = statesDirect && lstm ? outputs[2] : base + scratch.dstIterC
        var outs = [dstLayer]
        if hasDstIter {
            outs.append(dstIter)
            if lstm { outs.append(dstIterC) }
        }
        guard executable.execute(inputs: ins, outputs: outs) else {
            // Cannot happen after a successful prepare; make a failure visible rather than silent.
            for (i, o) in outputs.enumerated() {
                o.update(repeating: .nan, count: i == 0 ? (a.returnSequences ? n * t : n) * layer.outputWidth : n * u)
            }
            return
        }
        let y = outputs[0]
        if a.returnSequences {
            switch a.bidirectional {
            case nil:
                // right2left writes step t at position t; Keras' go_backwards output is in processing order.
                if a.goBackwards {
                    for b in 0..<n {
                        for k in 0..<t { (y + (b * t + k) * u).update(from: dstLayer + (b * t + t - 1 - k) * u, count: u) }
                    }
                }
            case .ave?:
                for i in 0..<(n * t * u) { y[i] = y[i] / 2 }
            case .mul?:
                for r in 0..<(n * t) {
                    let src = dstLayer + r * 2 * u, dst = y + r * u
                    for j in 0..<u { dst[j] = src[j] * src[u + j] }
                }
            case .concat?, .sum?:
                break
            }
        } else {
            // The last output of each direction is its final h (dst_iter, direction-major).
            let width = layer.outputWidth
            for b in 0..<n {
                let f = dstIter + b * u, dst = y + b * width
                guard let mode = a.bidirectional else { dst.update(from: f, count: u); continue }
                let bw = dstIter + (n + b) * u
                if mode == .concat {
                    dst.update(from: f, count: u)
                    (dst + u).update(from: bw, count: u)
                } else {
                    for j in 0..<u { dst[j] = RecurrentLayer.merge(mode, f[j], bw[j]) }
                }
            }
        }
        if a.returnState && !statesDirect {
            for d in 0..<dirs {
                outputs[1 + d * sc].update(from: dstIter + d * n * u, count: n * u)
                if lstm { outputs[2 + d * sc].update(from: dstIterC + d * n * u, count: n * u) }
            }
        }
    }
}

// MARK: - 2. Batched input projection + per-step recurrent product

/// A oneDNN inner product y[M, O] = x[M, K]·Wᵀ (+ b) prepared once, run on contexts that each
/// caller owns (`DNNLExecutionContext`, one thread at a time).
final class RecurrentInnerProduct: @unchecked Sendable {
    /// The primitive (destroyed on deinit).
    let primitive: dnnl_primitive_t
    private let engine: dnnl_engine_t
    private let runtime: [DNNLArg]
    private let constants: [(DNNLArg, UnsafeMutableRawPointer)]
    private let scratchpadMD: dnnl_memory_desc_t?
    private let storage: DNNLStorage
    /// Implementation oneDNN chose, for diagnostics.
    let implementation: String

    /// - Parameters: weights [outputs, inputs] row-major; bias [outputs] or nil.
    init(rows: Int, inputs: Int, outputs: Int, weights: [Float], bias: [Float]?) throws {
        engine = try DNNLEngine.get()
        var src = try dnnlMD([rows, inputs], dnnl_nc)
        var dst = try dnnlMD([rows, outputs], dnnl_nc)
        let plain = try dnnlMD([outputs, inputs], dnnl_oi)
        var anyWeights = try dnnlMD([outputs, inputs], dnnl_format_tag_any)
        var biasMD = try dnnlMD([outputs], dnnl_x)
        var desc = dnnl_inner_product_desc_t()
        try withUnsafeMutablePointer(to: &biasMD) { bp in
            try dnnlCheck(dnnl_inner_product_forward_desc_init(&desc, dnnl_forward_inference, &src, &anyWeights,
                                                               bias == nil ? nil : UnsafePointer(bp), &dst),
                          "dnnl_inner_product_forward_desc_init")
        }
        let attr = try DNNLAttr()
        var pdHandle: dnnl_primitive_desc_t?
        try dnnlCheck(dnnl_primitive_desc_create(&pdHandle, &desc, attr.handle, engine, nil),
                      "dnnl_primitive_desc_create (inner product)")
        let pd = DNNLPrimitiveDesc(pdHandle!)
        storage = DNNLStorage()
        let chosen = try pd.md(dnnl_query_weights_md)
        let w = storage.copy(weights)
        let packed = dnnlMDEqual(plain, chosen) ? w : try storage.dnnlReorder(w, from: plain, to: chosen)
        var constants = [(DNNLArg(arg: mlconv_dnnl_arg_weights(), md: chosen), packed)]
        if let bias { constants.append((DNNLArg(arg: mlconv_dnnl_arg_bias(), md: biasMD), storage.copy(bias))) }
        self.constants = constants
        runtime = [DNNLArg(arg: mlconv_dnnl_arg_src(), md: src), DNNLArg(arg: mlconv_dnnl_arg_dst(), md: dst)]
        if let md = dnnlQueryMD(pd.handle, dnnl_query_scratchpad_md), dnnlMDSize(md) > 0 {
            scratchpadMD = md
        } else {
            scratchpadMD = nil
        }
        var impl: UnsafePointer<CChar>?
        if dnnl_primitive_desc_query(pd.handle, dnnl_query_impl_info_str, 0, &impl) == dnnl_success, let impl {
            implementation = String(cString: impl)
        } else {
            implementation = "?"
        }
        var prim: dnnl_primitive_t?
        try dnnlCheck(dnnl_primitive_create(&prim, pd.handle), "dnnl_primitive_create (inner product)")
        primitive = prim!
    }

    deinit { dnnl_primitive_destroy(primitive) }

    /// A context bound to `src` and `dst` (re-pointable with `bind`).
    func makeContext(src: UnsafeRawPointer? = nil, dst: UnsafeMutableRawPointer? = nil) throws -> DNNLExecutionContext {
        let c = try DNNLExecutionContext(engine: engine, runtime: runtime, constants: constants, scratchpad: scratchpadMD,
                                         ownScratchpad: true)
        if let src, let dst { guard bind(c, src: src, dst: dst) else { throw DNNLError(status: dnnl_runtime_error, call: "dnnl_memory_set_data_handle") } }
        return c
    }

    /// Points `c`'s source and destination at the given buffers.
    func bind(_ c: DNNLExecutionContext, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer) -> Bool {
        dnnl_memory_set_data_handle_v2(c.runtimeMemories[0], UnsafeMutableRawPointer(mutating: src), c.stream) == dnnl_success
            && dnnl_memory_set_data_handle_v2(c.runtimeMemories[1], dst, c.stream) == dnnl_success
    }

    /// Executes on the buffers `c` is bound to.
    @inline(__always)
    func execute(_ c: DNNLExecutionContext) -> Bool {
        let s = c.args.withUnsafeBufferPointer { dnnl_primitive_execute(primitive, c.stream, Int32($0.count), $0.baseAddress) }
        return s == dnnl_success && dnnl_stream_wait(c.stream) == dnnl_success
    }
}

/// Applies `activation` in place to `count` values with the loop chosen once (same formulas as
/// `Activation.apply`, so results match the reference kernel exactly for the same inputs).
@inline(__always)
private func activate(_ activation: Activation, _ p: UnsafeMutablePointer<Float>, _ count: Int) {
    switch activation {
    case .sigmoid: for i in 0..<count { p[i] = 1 / (1 + expf(-p[i])) }
    case .tanh: for i in 0..<count { p[i] = tanhf(p[i]) }
    case let .hardSigmoid(alpha, beta): for i in 0..<count { p[i] = Swift.min(1, Swift.max(0, alpha * p[i] + beta)) }
    case .relu: for i in 0..<count { p[i] = p[i] < 0 ? 0 : p[i] }  // NaN stays NaN
    case let .linear(alpha, beta): if !activation.isIdentity { for i in 0..<count { p[i] = alpha * p[i] + beta } }
    default: for i in 0..<count { p[i] = activation.apply(p[i]) }
    }
}

/// The general recurrent kernel (see `DNNLRecurrent`): batched input projection, per-step
/// recurrent product on oneDNN, gate arithmetic and masking in Swift.
final class DNNLRecurrentBatchedKernel: Kernel {
    /// One direction's prepared products.
    final class DirectionPlan {
        /// x [N·T, D] → [N·T, G·U], bias folded (all of b + rb except the GRU reset_after candidate's rb).
        let projection: RecurrentInnerProduct
        /// h [N, U] → [N, G·U] (GRU without reset_after: → [N, 2U], the z and r rows).
        let recurrent: RecurrentInnerProduct
        /// GRU without reset_after: (r∘h) [N, U] → [N, U] with the candidate rows of R.
        let candidate: RecurrentInnerProduct?
        /// GRU reset_after: the candidate's recurrent bias [U] (inside r∘(…)).
        let candidateBias: [Float]
        /// Processing order of this direction.
        let goBackwards: Bool

        init(projection: RecurrentInnerProduct, recurrent: RecurrentInnerProduct, candidate: RecurrentInnerProduct?,
             candidateBias: [Float], goBackwards: Bool) {
            self.projection = projection; self.recurrent = recurrent; self.candidate = candidate
            self.candidateBias = candidateBias; self.goBackwards = goBackwards
        }
    }

    /// Per-call state of one direction: buffers and execution contexts bound to them.
    final class DirectionWork: @unchecked Sendable {
        /// [N·T, G·U] input projections.
        let xg: RecurrentBuffer
        /// [N, G·U] recurrent products / gate pre-activations.
        let gates: RecurrentBuffer
        /// [N, U] each: h, c, r∘h, candidate product, new h and new c (temporaries).
        let h, c, rh, rc, hNew, cNew: RecurrentBuffer
        /// [N·T, U] this direction's outputs in processing order.
        let sequence: RecurrentBuffer
        /// Contexts of the plan's products: the projection is bound per run (x is the caller's);
        /// the per-step products are bound once to `h` → `gates` and `rh` → `rc`.
        let projection, recurrent: DNNLExecutionContext
        let candidate: DNNLExecutionContext?

        /// Allocates the buffers and binds the step contexts to them.
        init(_ plan: DirectionPlan, layer: RecurrentLayer) throws {
            let (n, t, u, g) = (layer.batch, layer.steps, layer.units, layer.gates)
            xg = RecurrentBuffer(count: n * t * g * u)
            gates = RecurrentBuffer(count: n * g * u)
            h = RecurrentBuffer(count: n * u); c = RecurrentBuffer(count: n * u)
            rh = RecurrentBuffer(count: n * u); rc = RecurrentBuffer(count: n * u)
            hNew = RecurrentBuffer(count: n * u); cNew = RecurrentBuffer(count: n * u)
            sequence = RecurrentBuffer(count: n * t * u)
            projection = try plan.projection.makeContext()
            recurrent = try plan.recurrent.makeContext(src: h.pointer, dst: gates.pointer)
            candidate = try plan.candidate?.makeContext(src: rh.pointer, dst: rc.pointer)
        }
    }

    /// Per-call state: one `DirectionWork` per direction.
    final class Work: @unchecked Sendable {
        /// Forward then backward.
        let directions: [DirectionWork]
        init(_ directions: [DirectionWork]) { self.directions = directions }
    }

    /// Sizes and attributes (the weights live packed in `plans`).
    let layer: RecurrentLayer
    /// Forward then backward.
    let plans: [DirectionPlan]
    /// OpenMP threads of the input projection and of the per-step products.
    let projectionThreads, stepThreads: Int32
    /// Keras `zero_output_for_mask` (Bidirectional with return_sequences).
    let zeroOutputForMask: Bool
    private let pool: RecurrentPool<Work>

    /// Prepares the products of every direction and the first per-call buffers.
    init(_ ctx: KernelContext, _ layer: RecurrentLayer) throws {
        self.layer = layer.droppingWeights()
        let a = layer.a
        let (n, t, d, u, g) = (layer.batch, layer.steps, layer.inputSize, layer.units, layer.gates)
        let gruClassic = a.kind == .gru && !a.resetAfter
        let threads = DNNLRuntime.threads(for: ctx)
        // Each product is created with the thread count it runs with (oneDNN sizes its work
        // partitioning and scratchpad at creation); small ones run on one thread.
        let projectionThreads = recurrentThreads(threads, work: n * t * g * u * d)
        self.projectionThreads = projectionThreads
        let stepThreads = n * g * u * u < (1 << 20) ? 1 : threads
        self.stepThreads = stepThreads
        var plans: [DirectionPlan] = []
        for w in layer.directions {
            var xBias = w.bias
            for row in 0..<(g * u) where !(a.kind == .gru && a.resetAfter && row >= 2 * u) { xBias[row] += w.recurrentBias[row] }
            let projection = try withOMPThreads(projectionThreads) {
                try RecurrentInnerProduct(rows: n * t, inputs: d, outputs: g * u, weights: w.kernel, bias: xBias)
            }
            let recurrentRows = gruClassic ? 2 * u : g * u
            let (recurrent, candidate) = try withOMPThreads(stepThreads) {
                () throws -> (RecurrentInnerProduct, RecurrentInnerProduct?) in
                (try RecurrentInnerProduct(rows: n, inputs: u, outputs: recurrentRows,
                                           weights: Array(w.recurrentKernel[..<(recurrentRows * u)]), bias: nil),
                 gruClassic ? try RecurrentInnerProduct(rows: n, inputs: u, outputs: u,
                                                        weights: Array(w.recurrentKernel[(2 * u * u)...]), bias: nil) : nil)
            }
            let candidateBias = a.kind == .gru && a.resetAfter ? Array(w.recurrentBias[(2 * u)...]) : []
            plans.append(DirectionPlan(projection: projection, recurrent: recurrent, candidate: candidate,
                                       candidateBias: candidateBias, goBackwards: w.goBackwards))
        }
        self.plans = plans
        zeroOutputForMask = a.bidirectional != nil && a.returnSequences
        let capturedPlans = plans, capturedLayer = self.layer
        pool = try RecurrentPool { Work(try capturedPlans.map { try DirectionWork($0, layer: capturedLayer) }) }
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        pool.with { work in
            let a = layer.a
            let maskIndex = a.hasMask ? inputs.count - 1 : nil
            var ok = true
            for d in plans.indices where ok { ok = runDirection(d, inputs, maskIndex: maskIndex, work.directions[d]) }
            guard ok else {
                // Cannot happen after a successful prepare; make a failure visible rather than silent.
                let (n, t, u) = (layer.batch, layer.steps, layer.units)
                for (i, o) in outputs.enumerated() {
                    o.update(repeating: .nan, count: i == 0 ? (a.returnSequences ? n * t : n) * layer.outputWidth : n * u)
                }
                return
            }
            writeOutputs(outputs, work)
        }
    }

    /// Runs direction `d` over the whole sequence, leaving its outputs (processing order) in
    /// `w.sequence` and its final states in `w.h` / `w.c`. Returns false if oneDNN failed.
    private func runDirection(_ d: Int, _ inputs: [UnsafePointer<Float>], maskIndex: Int?, _ w: DirectionWork) -> Bool {
        let a = layer.a, plan = plans[d]
        let (n, t, u, g) = (layer.batch, layer.steps, layer.units, layer.gates)
        let gu = g * u
        let h = w.h.pointer, c = w.c.pointer, pre = w.gates.pointer, xg = w.xg.pointer
        let hNew = w.hNew.pointer, cNew = w.cNew.pointer, seq = w.sequence.pointer
        if a.initialStates {
            let first = 1 + d * layer.stateCount
            h.update(from: inputs[first], count: n * u)
            if a.kind == .lstm { c.update(from: inputs[first + 1], count: n * u) }
        } else {
            h.update(repeating: 0, count: n * u)
            c.update(repeating: 0, count: n * u)
        }
        // 1. x·Wᵀ + b for every (n, t) at once.
        let projected = withOMPThreads(projectionThreads) {
            plan.projection.bind(w.projection, src: inputs[0], dst: xg) && plan.projection.execute(w.projection)
        }
        guard projected else { return false }
        let mask = maskIndex.map { inputs[$0] }
        let rec = a.recurrentActivation, act = a.activation
        return withOMPThreads(stepThreads) {
            for k in 0..<t {
                let time = plan.goBackwards ? t - 1 - k : k
                // 2. h·Rᵀ for all rows.
                guard plan.recurrent.execute(w.recurrent) else { return false }
                // 3. Gates per batch row (rows masked at this step are skipped).
                var anyActive = false
                for b in 0..<n {
                    if let mask, mask[b * t + time] == 0 { continue }
                    anyActive = true
                    let x = xg + (b * t + time) * gu, p = pre + b * (a.kind == .gru && !a.resetAfter ? 2 * u : gu)
                    let hb = h + b * u, cb = c + b * u, hn = hNew + b * u, cn = cNew + b * u
                    switch a.kind {
                    case .simpleRNN:
                        for j in 0..<u { hn[j] = x[j] + p[j] }
                        activate(act, hn, u)
                    case .lstm:
                        for j in 0..<gu { p[j] += x[j] }
                        activate(rec, p, 2 * u)
                        activate(act, p + 2 * u, u)
                        activate(rec, p + 3 * u, u)
                        for j in 0..<u { cn[j] = p[u + j] * cb[j] + p[j] * p[2 * u + j] }
                        for j in 0..<u { hn[j] = cn[j] }
                        activate(act, hn, u)
                        for j in 0..<u { hn[j] = p[3 * u + j] * hn[j] }
                    case .gru where a.resetAfter:
                        for j in 0..<(2 * u) { p[j] += x[j] }
                        activate(rec, p, 2 * u)
                        plan.candidateBias.withUnsafeBufferPointer { rb in
                            for j in 0..<u { hn[j] = x[2 * u + j] + p[u + j] * (p[2 * u + j] + rb[j]) }
                        }
                        activate(act, hn, u)
                        for j in 0..<u { hn[j] = p[j] * hb[j] + (1 - p[j]) * hn[j] }
                    case .gru:
                        for j in 0..<(2 * u) { p[j] += x[j] }
                        activate(rec, p, 2 * u)
                        let rh = w.rh.pointer + b * u
                        for j in 0..<u { rh[j] = p[u + j] * hb[j] }
                    }
                }
                // GRU without reset_after: (r∘h)·Rhᵀ, then the candidate and the update.
                if a.kind == .gru && !a.resetAfter && anyActive {
                    guard let cp = plan.candidate, let cc = w.candidate, cp.execute(cc) else { return false }
                    for b in 0..<n {
                        if let mask, mask[b * t + time] == 0 { continue }
                        let x = xg + (b * t + time) * gu, p = pre + b * 2 * u
                        let hb = h + b * u, hn = hNew + b * u, rc = w.rc.pointer + b * u
                        for j in 0..<u { hn[j] = x[2 * u + j] + rc[j] }
                        activate(act, hn, u)
                        for j in 0..<u { hn[j] = p[j] * hb[j] + (1 - p[j]) * hn[j] }
                    }
                }
                // 4. Commit states and outputs (Keras masking: carry states; repeat or zero output).
                for b in 0..<n {
                    let out = seq + (b * t + k) * u
                    if let mask, mask[b * t + time] == 0 {
                        if zeroOutputForMask || k == 0 {
                            out.update(repeating: 0, count: u)
                        } else {
                            out.update(from: seq + (b * t + k - 1) * u, count: u)
                        }
                        continue
                    }
                    (h + b * u).update(from: hNew + b * u, count: u)
                    if a.kind == .lstm { (c + b * u).update(from: cNew + b * u, count: u) }
                    out.update(from: h + b * u, count: u)
                }
            }
            return true
        }
    }

    /// Output 0 (merged per `bidirectional`, backward sequence reversed to input order) and the
    /// final states.
    private func writeOutputs(_ outputs: [UnsafeMutablePointer<Float>], _ work: Work) {
        let a = layer.a
        let (n, t, u, sc) = (layer.batch, layer.steps, layer.units, layer.stateCount)
        let width = layer.outputWidth, y = outputs[0]
        let fwd = work.directions[0].sequence.pointer
        let bwd = work.directions.count > 1 ? work.directions[1].sequence.pointer : nil
        let positions = a.returnSequences ? t : 1
        for b in 0..<n {
            for p in 0..<positions {
                let kf = a.returnSequences ? p : t - 1, kb = a.returnSequences ? t - 1 - p : t - 1
                let f = fwd + (b * t + kf) * u, dst = y + (b * positions + p) * width
                guard let mode = a.bidirectional, let bwd else { dst.update(from: f, count: u); continue }
                let bw = bwd + (b * t + kb) * u
                if mode == .concat {
                    dst.update(from: f, count: u)
                    (dst + u).update(from: bw, count: u)
                } else {
                    for j in 0..<u { dst[j] = RecurrentLayer.merge(mode, f[j], bw[j]) }
                }
            }
        }
        if a.returnState {
            for (d, w) in work.directions.enumerated() {
                outputs[1 + d * sc].update(from: w.h.pointer, count: n * u)
                if a.kind == .lstm { outputs[2 + d * sc].update(from: w.c.pointer, count: n * u) }
            }
        }
    }
}
