// MARK: transpose sinking (issue 12)

/// `sink_transposes`: moves transposes towards the graph outputs through layout-agnostic ops —
/// also ops with two or more inputs and tensors with several readers — until they meet their
/// inverse and cancel (the idea of ONNX Runtime's transpose optimizer, written for this IR).
///
/// An ML program keeps its convolutions channels-first; imported into the channels-last IR, each
/// `conv` reads NCHW → NHWC and writes NHWC → NCHW transposes. `cancel_transpose_pairs` removes
/// a pair around a single-reader chain; what it leaves are the transposes at tensors read twice —
/// MobileNetV2's residual `add`s, whose block input feeds both the add and the next expansion
/// convolution (31 transposes there, plus the 16 batch norms left on NCHW tensors).
///
/// For a transpose T (input `u`, output `t`, permutation p: axis a of `t` is axis p[a] of `u`)
/// whose output is not a graph output, every reader R of `t` must be one of:
/// - a transpose: it reads `u` with the composed permutation (nothing when that is the identity);
/// - an op that commutes with a permutation of the axes — activation, clip, unary, identity,
///   batch norm, softmax, pad (its axis or amounts moved: axis a → p[a]), binary with a constant
///   second operand (the constant, padded to the rank on the left as NumPy broadcasting does,
///   is permuted at compile time; float32 or one element only), binary / element-wise / concat
///   whose every input is `t` or the output of a transpose with the same p, and reduce (axes
///   moved; without `keepDims`, the transpose after it is dropped when the kept axes stay in
///   order; a reduce over the trailing axes is not moved when its axes would no longer be
///   trailing — the reduction kernels are fast on contiguous rows only, so an NCHW global mean
///   over H, W keeps one transpose before it). R then reads `u` (and the
///   other transposes' inputs), and a transpose with p after R writes R's old output, so every
///   later reader and the graph outputs see the same tensor.
///
/// When some reader cannot move, the readers that are T's inverse still read `u` instead.
/// Otherwise the rewrite is made only when it does not add transposes: the transposes it adds (one per
/// moved reader, unless only inverse transposes read that reader's output: they cancel next) are
/// at most those it removes (T, readers that compose to the identity, those inverses, and
/// other-operand transposes read by nothing else afterwards); when they are equal, a moved
/// reader must not write more elements than T did. Transposes only move towards the outputs, so
/// the pass terminates. Values: data movement and per-element ops are exact; a reduce over
/// several axes may add its elements in another order (rounding differences only). Float32
/// and integer tensors alike; graph inputs, outputs and their types are unchanged; graphs
/// with control-flow blocks are left alone. Removes the nodes it leaves dead or no-op
/// (`RemoveNoOpNodes`). Idempotent.
public struct SinkTransposes: GraphPass {
    /// "sink_transposes".
    public var name: String { "sink_transposes" }

    public init() {}

    /// - Returns: whether at least one transpose was moved or removed.
    public func apply(to graph: inout Graph) -> Bool {
        guard graph.nodes.allSatisfy({ $0.blocks.isEmpty }) else { return false }
        var changed = false
        // Each rewrite moves a transpose past one node towards the outputs; the bound is a guard.
        var budget = 8 * graph.nodes.count + 16
        while budget > 0, sinkOne(&graph) {
            changed = true
            budget -= 1
            _ = RemoveNoOpNodes().apply(to: &graph)
        }
        return changed
    }

    /// Whether `p` is a permutation of 0..<p.count.
    static func isPermutation(_ p: [Int]) -> Bool {
        p.allSatisfy { $0 >= 0 && $0 < p.count } && Set(p).count == p.count
    }

    /// How one reader of the transposed tensor is rewritten.
    enum Move {
        /// A transpose reader: reads `u` with this permutation (identity → an `identity` node).
        case compose([Int])
        /// Any other reader: new op, inputs and weights; `after` is the permutation of the
        /// transpose that restores its old output (nil: none needed); `outType` is the type of
        /// the op's new output tensor when `after` is not nil.
        case move(op: Op, inputs: [String], weights: [String: ConstantTensor], after: [Int]?, outType: TensorType?)
    }

    private func sinkOne(_ graph: inout Graph) -> Bool {
        var producer: [String: Int] = [:]
        for (i, n) in graph.nodes.enumerated() { for o in n.outputs { producer[o] = i } }
        let uses = TensorUses(graph)
        for (ti, tnode) in graph.nodes.enumerated() {
            guard case let .transpose(p) = tnode.op, tnode.inputs.count == 1, tnode.outputs.count == 1,
                  tnode.weights.isEmpty, Self.isPermutation(p) else { continue }
            let t = tnode.outputs[0], u = tnode.inputs[0]
            guard !uses.graphOutputs.contains(t), let tType = graph.tensorTypes[t], !tType.isList, tType.rank == p.count,
                  let readers = uses.readers[t], !readers.isEmpty else { continue }
            var plan: [(Int, Move)] = []
            var otherTransposes = Set<Int>()
            for r in Self.unique(readers) {
                guard let move = Self.move(graph.nodes[r], reading: t, from: u, perm: p, graph: graph, producer: producer,
                                           otherTransposes: &otherTransposes) else { plan = []; break }
                plan.append((r, move))
            }
            guard !plan.isEmpty else {
                // Some reader cannot move: still let the inverse transposes among the readers read
                // `u` (they become identities, removed), as merge_reshapes_transposes would.
                let inverses = Self.unique(readers).filter { r in
                    let n = graph.nodes[r]
                    guard case let .transpose(q) = n.op, n.inputs == [t], q.count == p.count, Self.isPermutation(q) else { return false }
                    return q.map { p[$0] } == Array(0..<p.count)
                }
                guard !inverses.isEmpty else { continue }
                rewrite(&graph, plan: inverses.map { ($0, Move.compose(Array(0..<p.count))) }, transposeInput: u)
                return true
            }
            // Cost: transposes added against transposes removed.
            let moved = Set(plan.compactMap { r, m -> Int? in if case .move = m { return r } else { return nil } })
            var added = 0, removed = 1, growth = false
            for (r, m) in plan {
                switch m {
                case let .compose(q): if q == Array(0..<q.count) { removed += 1 }
                case let .move(_, _, _, after, outType):
                    if let after {
                        // A transpose added where only its inverses read: they all cancel next.
                        let old = graph.nodes[r].outputs[0]
                        let next = uses.readers[old] ?? []
                        if !uses.graphOutputs.contains(old), !next.isEmpty, next.allSatisfy({ k in
                            guard case let .transpose(q) = graph.nodes[k].op, q.count == after.count, Self.isPermutation(q) else { return false }
                            return q.map { after[$0] } == Array(0..<q.count)
                        }) {
                            removed += Set(next).count
                        } else {
                            added += 1
                        }
                    }
                    if let o = outType, o.isFullyKnown, tType.isFullyKnown, o.elementCount > tType.elementCount { growth = true }
                }
            }
            for k in otherTransposes where k != ti {
                let o = graph.nodes[k].outputs[0]
                if !uses.graphOutputs.contains(o), (uses.readers[o] ?? []).allSatisfy({ moved.contains($0) }) { removed += 1 }
            }
            guard added < removed || (added == removed && !growth) else { continue }
            rewrite(&graph, plan: plan, transposeInput: u)
            return true
        }
        return false
    }

    /// Applies `plan`; the transposes it leaves unread go with `RemoveNoOpNodes` afterwards.
    private func rewrite(_ graph: inout Graph, plan: [(Int, Move)], transposeInput u: String) {
        var names = Set(graph.nodes.map(\.name))
        var tensors = Set(graph.tensorTypes.keys)
        for n in graph.nodes { tensors.formUnion(n.outputs); tensors.formUnion(n.inputs) }
        func fresh(_ base: String, _ used: inout Set<String>) -> String {
            var name = base, k = 1
            while used.contains(name) { k += 1; name = "\(base)_\(k)" }
            used.insert(name)
            return name
        }
        var inserts: [(after: Int, node: Node)] = []
        for (r, m) in plan {
            switch m {
            case let .compose(q):
                graph.nodes[r].op = q == Array(0..<q.count) ? .identity : .transpose(perm: q)
                graph.nodes[r].inputs = [u]
            case let .move(op, inputs, weights, after, outType):
                graph.nodes[r].op = op
                graph.nodes[r].inputs = inputs
                graph.nodes[r].weights = weights
                guard let after else { continue }  // same output tensor, same type
                let old = graph.nodes[r].outputs[0]
                let new = fresh(old + "_sunk", &tensors)
                graph.nodes[r].outputs[0] = new
                if let outType { graph.tensorTypes[new] = outType }
                let node = Node(name: fresh(graph.nodes[r].name + "_sunk_transpose", &names), op: .transpose(perm: after),
                                inputs: [new], outputs: [old])
                inserts.append((r, node))
            }
        }
        for (r, node) in inserts.sorted(by: { $0.after > $1.after }) { graph.nodes.insert(node, at: r + 1) }
    }

    static func unique(_ xs: [Int]) -> [Int] {
        var seen = Set<Int>()
        return xs.filter { seen.insert($0).inserted }
    }

    /// The rewrite of `node`, which reads `t` = transpose(`u`, perm `p`), or nil when it cannot
    /// read `u` instead. Records in `otherTransposes` the transposes whose input it would read.
    static func move(_ node: Node, reading t: String, from u: String, perm p: [Int], graph: Graph,
                     producer: [String: Int], otherTransposes: inout Set<Int>) -> Move? {
        guard node.blocks.isEmpty, node.outputs.count == 1 else { return nil }
        let rank = p.count
        if case let .transpose(q) = node.op {
            guard node.inputs == [t], node.weights.isEmpty, q.count == rank, isPermutation(q) else { return nil }
            return .compose(q.map { p[$0] })
        }
        guard let outT = graph.tensorTypes[node.outputs[0]], !outT.isList else { return nil }
        /// Output type in u's layout for a same-rank output: shape_u[p[a]] = shape_t[a].
        func permutedBack(_ ty: TensorType) -> TensorType? {
            guard ty.rank == rank else { return nil }
            var s = ty.shape
            for a in 0..<rank { s[p[a]] = ty.shape[a] }
            var out = ty
            out.shape = s
            return out
        }
        func moved(_ op: Op, inputs: [String], weights: [String: ConstantTensor]) -> Move? {
            guard let o = permutedBack(outT) else { return nil }
            return .move(op: op, inputs: inputs, weights: weights, after: p, outType: o)
        }
        switch node.op {
        case .binary where node.inputs == [t] && node.weights.count == 1:
            guard let y = node.weights["y"] else { return nil }
            if y.elementCount == 1 { return moved(node.op, inputs: [u], weights: node.weights) }
            guard y.encoding == .float32, y.shape.count <= rank, let py = permutedConstant(y, rank: rank, perm: p) else { return nil }
            return moved(node.op, inputs: [u], weights: ["y": py])
        case .binary, .elementwise, .concat:
            guard node.weights.isEmpty, node.inputs.count >= 1 else { return nil }
            if case .binary = node.op, node.inputs.count != 2 { return nil }
            var inputs: [String] = []
            for x in node.inputs {
                if x == t { inputs.append(u); continue }
                guard let k = producer[x], case let .transpose(q) = graph.nodes[k].op, q == p,
                      graph.nodes[k].inputs.count == 1, graph.nodes[k].weights.isEmpty else { return nil }
                otherTransposes.insert(k)
                inputs.append(graph.nodes[k].inputs[0])
            }
            var op = node.op
            if case let .concat(axis) = node.op {
                let a = axis < 0 ? axis + rank : axis
                guard a >= 0, a < rank else { return nil }
                op = .concat(axis: p[a])
            }
            return moved(op, inputs: inputs, weights: [:])
        case let .reduce(a):
            guard node.inputs == [t], node.weights.isEmpty, let axes = resolveAxisSet(a.axes, rank: rank) else { return nil }
            let newAxes = axes.map { p[$0] }.sorted()
            // A reduce over the trailing axes (contiguous rows: the fast case of the reduction
            // kernels — oneDNN's is ~100× slower over middle axes) stays where it is rather than
            // reduce axes that are no longer trailing (NCHW mean over H, W → NHWC axes 1, 2).
            let trailing = { (ax: [Int]) in ax == Array((rank - ax.count)..<rank) }
            if trailing(axes), !trailing(newAxes) { return nil }
            var attrs = a
            attrs.axes = newAxes
            if a.keepDims { return moved(.reduce(attrs), inputs: [u], weights: [:]) }
            // Kept axes of t in order, as axes of u; the result of the moved reduce keeps u's
            // remaining axes in increasing order.
            let keptT = (0..<rank).filter { !axes.contains($0) }
            let keptU = keptT.map { p[$0] }
            let sortedU = keptU.sorted()
            let after = keptU.map { ax in sortedU.firstIndex(of: ax) ?? 0 }
            if after == Array(0..<after.count) {
                return .move(op: .reduce(attrs), inputs: [u], weights: [:], after: nil, outType: nil)
            }
            guard outT.rank == after.count else { return nil }
            var s = outT.shape
            for i in 0..<after.count { s[after[i]] = outT.shape[i] }
            var o = outT
            o.shape = s
            return .move(op: .reduce(attrs), inputs: [u], weights: [:], after: after, outType: o)
        default:
            guard node.inputs == [t], let op = CancelTransposePairs.movedThrough(node, perm: p) else { return nil }
            return moved(op, inputs: [u], weights: node.weights)
        }
    }

    /// Constant `y` (a binary op's second operand in `t`'s layout, NumPy-broadcast against a
    /// rank-`rank` tensor) as the operand in `u`'s layout, where axis a of `t` is axis p[a] of `u`:
    /// shape padded with 1s on the left to `rank`, then permuted with its data.
    static func permutedConstant(_ y: ConstantTensor, rank: Int, perm p: [Int]) -> ConstantTensor? {
        let s = Array(repeating: 1, count: rank - y.shape.count) + y.shape
        var su = s
        for a in 0..<rank { su[p[a]] = s[a] }
        let values = y.floats()
        guard values.count == y.elementCount else { return nil }
        // Row-major strides of the t-layout constant.
        var stridesT = Array(repeating: 1, count: rank)
        for a in stride(from: rank - 2, through: 0, by: -1) { stridesT[a] = stridesT[a + 1] * s[a + 1] }
        // Stride in the t-layout data of each u axis: u axis p[a] is t axis a.
        var strideOfU = Array(repeating: 0, count: rank)
        for a in 0..<rank { strideOfU[p[a]] = stridesT[a] }
        var out = [Float](repeating: 0, count: values.count)
        var index = Array(repeating: 0, count: rank)
        for k in 0..<values.count {
            var src = 0
            for j in 0..<rank { src += index[j] * strideOfU[j] }
            out[k] = values[src]
            var j = rank - 1
            while j >= 0 {
                index[j] += 1
                if index[j] < su[j] { break }
                index[j] = 0
                j -= 1
            }
        }
        return ConstantTensor(shape: su, floats: out)
    }
}
