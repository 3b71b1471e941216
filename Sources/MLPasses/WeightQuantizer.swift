import Foundation
import MLGraph

/// The weight-compression pass: fp16, linear n-bit, linear symmetric 8-bit, or k-means LUT n-bit,
/// applied to the weights that `QuantizationOptions` selects, with a `QuantizationReport`.
///
/// Inputs already stored as fp16, linear or LUT are dequantized (`ConstantTensor.floats()`) and
/// re-encoded; the report's SQNR is against those dequantized values. Activations, graph structure,
/// tensor types and skipped weights are unchanged. Deterministic: the same graph and options give
/// the same bytes.
///
/// ```swift
/// let q = try WeightQuantizer(mode: .kmeans(bits: 4), options: QuantizationOptions(minWeights: 4096))
/// let (small, report) = try q.quantize(graph)
/// print(report.renderTable())
/// ```
public struct WeightQuantizer: Sendable {
    /// The encoding applied to selected weights.
    public let mode: QuantizationMode
    /// Which weights are selected (and fp16 clamping).
    public let options: QuantizationOptions

    /// - Throws: `QuantizationError.invalidBits` when a `.linear` or `.kmeans` bit width is outside
    ///   1…8; `.invalidArgument` when `options.minWeights` is negative.
    public init(mode: QuantizationMode, options: QuantizationOptions = QuantizationOptions()) throws {
        switch mode {
        case let .linear(bits) where !(1...8).contains(bits):
            throw QuantizationError.invalidBits(mode: "linear", bits: bits)
        case let .kmeans(bits) where !(1...8).contains(bits):
            throw QuantizationError.invalidBits(mode: "k-means", bits: bits)
        default: break
        }
        guard options.minWeights >= 0 else {
            throw QuantizationError.invalidArgument("minWeights must be ≥ 0, got \(options.minWeights)")
        }
        self.mode = mode
        self.options = options
    }

    /// Compresses the selected weights of `graph`.
    /// - Parameters:
    ///   - progress: called after each compressed tensor with (done, total) tensor counts, one call
    ///     at a time with `done` increasing, possibly from worker threads (tensors are compressed
    ///     concurrently); total counts only tensors that will be compressed.
    /// - Returns: the graph with new weight tensors, and the report.
    /// - Throws: `QuantizationError.fp16Overflow` (fp16 without `clampFP16`) or
    ///   `.nonFiniteWeight` (linear, k-means), naming the node and weight; nothing is returned then.
    ///   `GraphError` when batch norms were folded and the graph then does not verify (the input
    ///   graph is expected to verify).
    public func quantize(_ original: Graph, progress: ((Int, Int) -> Void)? = nil) throws -> (Graph, QuantizationReport) {
        let (graph, report, _) = try run(original, progress: progress)
        return (graph, report)
    }

    /// `quantize(_:progress:)`, also saying whether the graph changed (a weight compressed or a
    /// batch norm folded); the weight passes' `apply`.
    func run(_ original: Graph, progress: ((Int, Int) -> Void)? = nil) throws -> (Graph, QuantizationReport, Bool) {
        // 0. Batch norms whose parameters will be compressed get their statistics folded first
        //    (the `fold_batchnorm_statistics` pass, verified by the pipeline when it folds).
        var notes: [String] = []
        var graph = original
        let fold = FoldBatchNormStatistics(options: options)
        let folded = try PassPipeline([fold]).run(on: &graph).isEmpty == false
        if folded {
            notes.append(FoldBatchNormStatistics.note(folded: fold.lastFoldedCount))
            // Folding changes no type: keep the caller's tensor types exactly as they were (the
            // pipeline re-inferred them).
            graph.tensorTypes = original.tensorTypes
        }
        // 1. Plan: which (node, role) pairs to compress.
        var plan: [(node: Int, role: String)] = []
        var skipped: [QuantizationReport.Skipped] = []
        for (ni, node) in graph.nodes.enumerated() {
            let roles = node.weights.keys.sorted()
            if case let .custom(a) = node.op, !roles.isEmpty {
                notes.append("custom layer '\(node.name)' (\(a.className)): its \(roles.count) weight(s) are left as they are")
            }
            var reasons: [String: SkipReason] = [:]  // absent = compress
            for role in roles {
                let t = node.weights[role]!
                if let r = options.selection(node: node, role: role) { reasons[role] = r }
                else if t.elementCount < options.minWeights { reasons[role] = .belowMinWeights }
                else if t.elementCount == 0 { reasons[role] = .empty }
                else if case .kmeans = mode, case let .recurrent(a) = node.op, a.kind.gateCount > 1 { reasons[role] = .perGateTables }
                else if options.skipWhenNotSmaller, let size = compressedByteEstimate(t, op: node.op, role: role),
                        size >= 4 * t.elementCount { reasons[role] = .noSaving }
            }
            // Core ML: conv / deconv / inner product need weight and bias both fp16 or both fp32, so
            // in fp16 mode the bias follows the weight.
            if mode == .fp16, opKind(node.op) != .other, let w = node.weights["weight"],
               let b = node.weights["bias"], b.elementCount > 0, w.elementCount > 0
            {
                if reasons["weight"] == nil { reasons["bias"] = nil }
                else if reasons["bias"] == nil { reasons["bias"] = .fp16FollowsWeight }
            }
            for role in roles {
                if let reason = reasons[role] {
                    skipped.append(.init(layer: node.name, opType: node.op.name, weight: role,
                                         count: node.weights[role]!.elementCount, reason: reason))
                } else {
                    plan.append((ni, role))
                }
            }
        }

        // 2. Compress.
        var out = graph
        // Tensors are independent: compress them on every core, then apply the results in plan
        // order, so the output and the report are the same as a serial run.
        var results = [Result<(ConstantTensor, QuantizationReport.Entry), Error>?](repeating: nil, count: plan.count)
        let lock = NSLock()
        var done = 0
        results.withUnsafeMutableBufferPointer { slots in
            let base = slots.baseAddress!
            DispatchQueue.concurrentPerform(iterations: plan.count) { i in
                let item = plan[i]
                let node = graph.nodes[item.node]
                let r = Result { try quantizeTensor(node.weights[item.role]!, op: node.op, node: node.name, role: item.role) }
                base[i] = r
                lock.lock()
                done += 1
                progress?(done, plan.count)
                lock.unlock()
            }
        }
        var entries: [QuantizationReport.Entry] = []
        entries.reserveCapacity(plan.count)
        for (i, item) in plan.enumerated() {
            let (tensor, entry) = try results[i]!.get()
            out.nodes[item.node].weights[item.role] = tensor
            entries.append(entry)
        }
        func total(_ g: Graph) -> Int { g.nodes.reduce(0) { $0 + $1.weights.values.reduce(0) { $0 + storedByteCount(of: $1) } } }
        let report = QuantizationReport(mode: mode, entries: entries, skipped: skipped, notes: notes,
                                        totalBytesBefore: total(graph), totalBytesAfter: total(out))
        return (out, report, folded || !entries.isEmpty)
    }

    /// Bytes of `t` once compressed in this mode, codes plus parameters (nil for fp16, which
    /// always halves).
    func compressedByteEstimate(_ t: ConstantTensor, op: Op, role: String) -> Int? {
        let n = t.elementCount
        switch mode {
        case .fp16: return nil
        case let .kmeans(bits): return (n * bits + 7) / 8 + 4 * (1 << bits)
        case .linear, .linearSymmetric:
            let axis = linearAxis(op: op, role: role, shape: t.shape)
            let channels = axis.map { t.shape[$0] } ?? 1
            return (n * mode.bits + 7) / 8 + 8 * channels
        }
    }

    /// Compresses one tensor as this quantizer would inside a graph node of op `op` (which fixes
    /// the per-channel axis: see `linearAxis`). Ignores the selection options except `clampFP16`.
    /// - Parameters: `node`/`role` name the tensor in errors and in the returned entry.
    /// - Throws: as `quantize(_:progress:)`; `.invalidArgument` for an empty tensor.
    public func quantizeTensor(_ tensor: ConstantTensor, op: Op, node: String = "", role: String = "weight") throws
        -> (ConstantTensor, QuantizationReport.Entry)
    {
        let values = tensor.floats()
        let n = values.count
        guard n > 0 else { throw QuantizationError.invalidArgument("node '\(node)' weight '\(role)' is empty") }
        var note: String? = nil
        let result: ConstantTensor
        do {
            switch mode {
            case .fp16:
                let clamped = options.clampFP16 ? values.reduce(0) { $0 + ($1.isFinite && abs($1) > float16Max ? 1 : 0) } : 0
                if clamped > 0 { note = "clamped \(clamped) value(s) to ±65504" }
                let bits = try values.withUnsafeBufferPointer { try float16Bits($0, clamp: options.clampFP16) }
                let storage = bits.map { $0.littleEndian }.withUnsafeBytes { ByteStorage(copying: $0) }
                result = try ConstantTensor(shape: tensor.shape, encoding: .float16, storage: storage)
            case .linear, .linearSymmetric:
                let axis = linearAxis(op: op, role: role, shape: tensor.shape)
                let q = try values.withUnsafeBufferPointer {
                    try linearQuantizeCore($0, shape: tensor.shape, axis: axis, bits: mode.bits,
                                           symmetric: mode == .linearSymmetric)
                }
                result = q.constant()
            case let .kmeans(bits):
                let q = try values.withUnsafeBufferPointer { try kmeansLUT($0, bits: bits, solver: .automatic) }
                let distinct = Set(q.table).count
                if distinct < 1 << bits { note = "\(distinct) distinct value(s) for \(1 << bits) LUT entries" }
                result = q.constant(shape: tensor.shape)
            }
        } catch let QuantizationError.fp16Overflow(_, _, index, value) {
            throw QuantizationError.fp16Overflow(node: node, weight: role, index: index, value: value)
        } catch let QuantizationError.nonFiniteWeight(_, _, index, value) {
            throw QuantizationError.nonFiniteWeight(node: node, weight: role, index: index, value: value)
        }
        let (signal, error) = signalAndError(values, result.floats())
        let entry = QuantizationReport.Entry(
            layer: node, opType: op.name, weight: role, shape: tensor.shape, count: n, bits: mode.bits,
            mode: mode.name, sourceEncoding: tensor.encoding.description, sqnr: sqnrDB(signal: signal, error: error),
            bytesBefore: storedByteCount(of: tensor), bytesAfter: storedByteCount(of: result),
            signalEnergy: signal, errorEnergy: error, note: note)
        return (result, entry)
    }
}

private enum OpKind { case conv2d, deconv2d, dense, other }
private func opKind(_ op: Op) -> OpKind {
    switch op {
    case .conv2d: return .conv2d
    case .deconv2d: return .deconv2d
    case .dense: return .dense
    default: return .other
    }
}
