import MLGraph

/// The static memory plan of a model: where every tensor lives during a prediction.
///
/// - Graph inputs get their own buffers (`Location.input`), filled from the caller's arrays.
/// - Graph outputs get their own, never-reused region (`Location.output`), copied out at the end.
/// - Every other tensor (an intermediate) gets an offset in one shared arena. Offsets are chosen
///   from liveness over the topological order: a tensor is live from the node that produces it to
///   the last node that reads it (inclusive), and two tensors share arena bytes only when their
///   live ranges are disjoint. Placement is greedy by size, best fit: tensors are placed largest
///   first, each in the smallest gap left between already-placed tensors whose live ranges overlap
///   it, else after them (TFLite's arena planner).
/// - In place: when a node's kernel declares `Kernel.supportsInPlace`, its output 0 has input 0's
///   byte count, input 0 is an intermediate read by no later node, and output 0 is an
///   intermediate, output 0 takes input 0's storage (e.g. a conv → batchNorm → relu chain needs one
///   buffer after the conv). The input is `Kernel.inPlaceInputIndex` instead of 0 when the kernel
///   says so (a convolution with a fused residual sum writes over its residual, input 1).
///
/// Offsets and sizes are in bytes: a tensor takes `elementCount × elementType.byteSize` bytes
/// (float32 4, float16 2, int32 4, int64 8, bool 1), rounded up to `alignmentBytes` (64), so every
/// tensor starts on a 64-byte boundary whatever its type; in-place reuse needs equal byte sizes.
/// The `…ElementCount` properties give the same sizes in float32 elements (bytes / 4).
/// - Complexity: O(T²) in the number of intermediate tensors T.
package struct MemoryPlan: Sendable, Equatable {
    /// Where one tensor lives.
    public enum Location: Hashable, Sendable {
        /// The buffer of graph input number `index` (in `Graph.inputs` order).
        case input(index: Int)
        /// `offset` bytes into the graph-outputs buffer.
        case output(offset: Int)
        /// `offset` bytes into the shared arena.
        case arena(offset: Int)
    }

    /// Offsets and sizes are multiples of this many bytes.
    public static let alignmentBytes = 64
    /// `alignmentBytes` in float32 elements (16).
    public static let alignmentElements = alignmentBytes / 4

    /// Location of every tensor of the graph, by name.
    public let locations: [String: Location]
    /// Size of the shared arena in bytes.
    public let arenaByteCount: Int
    /// Size of the graph-outputs buffer in bytes.
    public let outputByteCount: Int
    /// Sum of the (aligned) sizes of all intermediate tensors, in bytes: what the arena would need
    /// without any reuse.
    public let intermediateByteCount: Int
    /// Number of nodes whose output 0 reuses input 0's storage.
    public let inPlaceNodeCount: Int

    /// `arenaByteCount` in float32 elements.
    public var arenaElementCount: Int { arenaByteCount / 4 }
    /// `outputByteCount` in float32 elements.
    public var outputElementCount: Int { outputByteCount / 4 }
    /// `intermediateByteCount` in float32 elements.
    public var intermediateElementCount: Int { intermediateByteCount / 4 }

    /// Bytes of tensor type `t` rounded up to `alignmentBytes` (at least one alignment unit).
    public static func alignedByteCount(_ t: TensorType) -> Int {
        let n = t.elementCount * t.elementType.byteSize
        let a = alignmentBytes
        return Swift.max(a, (n + a - 1) / a * a)
    }

    /// Plans `graph`, whose `tensorTypes` must hold every tensor (after `inferShapes()`).
    /// - Parameter inPlace: whether node number i's kernel supports writing output 0 over input 0.
    /// - Precondition: the graph is verified (every tensor typed, topological order).
    /// - Parameter inPlaceInput: which input's storage node number i's output 0 may take (default
    ///   input 0; `Kernel.inPlaceInputIndex`).
    public init(graph: Graph, inPlace: (Int) -> Bool = { _ in false }, inPlaceInput: (Int) -> Int = { _ in 0 }) {
        let types = graph.tensorTypes
        func size(_ t: String) -> Int { MemoryPlan.alignedByteCount(types[t]!) }
        var locations: [String: Location] = [:]
        for (i, input) in graph.inputs.enumerated() { locations[input.name] = .input(index: i) }
        var outputOffset = 0
        for o in graph.outputs where locations[o] == nil {
            locations[o] = .output(offset: outputOffset)
            outputOffset += size(o)
        }

        // Last reader of every tensor.
        var lastUse: [String: Int] = [:]
        for (i, node) in graph.nodes.enumerated() { for t in node.inputs { lastUse[t] = i } }

        // Storage groups: tensors sharing one buffer (in-place chains). Intermediates only.
        struct Group { var size: Int; var start: Int; var end: Int; var offset = 0 }
        var groups: [Group] = []
        var groupOf: [String: Int] = [:]
        var inPlaceCount = 0
        var total = 0
        for (i, node) in graph.nodes.enumerated() {
            for (k, out) in node.outputs.enumerated() where locations[out] == nil {
                total += size(out)
                let end = lastUse[out] ?? i
                let j = inPlaceInput(i)
                // An input other than 0 is taken over only when no other slot reads the same tensor
                // (a convolution with a fused residual reading t as both source and residual must
                // not write its sum over its source).
                if k == 0, j >= 0, j < node.inputs.count, case let in0 = node.inputs[j], let g = groupOf[in0], lastUse[in0] == i,
                   j == 0 || node.inputs.filter({ $0 == in0 }).count == 1,
                   types[in0]!.elementCount * types[in0]!.elementType.byteSize == types[out]!.elementCount * types[out]!.elementType.byteSize,
                   inPlace(i)
                {
                    groupOf[out] = g
                    groups[g].end = Swift.max(groups[g].end, end)
                    inPlaceCount += 1
                } else {
                    groupOf[out] = groups.count
                    groups.append(Group(size: size(out), start: i, end: end))
                }
            }
        }

        // Greedy by size, best fit.
        var placed: [Int] = []  // group indices, kept sorted by offset
        var arenaEnd = 0
        let order = groups.indices.sorted { a, b in
            groups[a].size != groups[b].size ? groups[a].size > groups[b].size : groups[a].start < groups[b].start
        }
        for g in order {
            var best: Int? = nil, bestGap = Int.max, cursor = 0
            for p in placed where groups[p].start <= groups[g].end && groups[g].start <= groups[p].end {
                let gap = groups[p].offset - cursor
                if gap >= groups[g].size && gap < bestGap { best = cursor; bestGap = gap }
                cursor = Swift.max(cursor, groups[p].offset + groups[p].size)
            }
            groups[g].offset = best ?? cursor
            arenaEnd = Swift.max(arenaEnd, groups[g].offset + groups[g].size)
            let at = placed.firstIndex { groups[$0].offset > groups[g].offset } ?? placed.count
            placed.insert(g, at: at)
        }
        for (t, g) in groupOf { locations[t] = .arena(offset: groups[g].offset) }

        self.locations = locations
        self.arenaByteCount = arenaEnd
        self.outputByteCount = outputOffset
        self.intermediateByteCount = total
        self.inPlaceNodeCount = inPlaceCount
    }
}
