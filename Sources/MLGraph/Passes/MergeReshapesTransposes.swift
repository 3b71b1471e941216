// MARK: inference passes (issue 12)

/// `merge_reshapes_transposes`: a transpose that reads a transpose, or a reshape that reads a
/// reshape, reads the first one's input instead, with the composed permutation (output axis i
/// of transpose(q) ∘ transpose(p) is input axis p[q[i]]) or the second reshape's own target
/// (a reshape's result depends only on the row-major data, and, for `reshape`, on the batch
/// size, which a `reshape` keeps). A composed permutation that is the identity becomes an
/// `identity` node, removed (with any other no-op or dead node, `RemoveNoOpNodes`) before the pass returns. The first node is removed when nothing else
/// reads it. Handled pairs: transpose → transpose; reshape → reshape; reshape or reshapeND →
/// reshapeND (a `reshape` after a `reshapeND` is left alone: its batch size comes from its input).
/// Only tensors with fully known shapes. Same values (data movement only); idempotent.
public struct MergeReshapesTransposes: GraphPass {
    /// "merge_reshapes_transposes".
    public var name: String { "merge_reshapes_transposes" }

    public init() {}

    /// - Returns: whether at least one pair was merged.
    public func apply(to graph: inout Graph) -> Bool {
        var changed = false
        var producerOf: [String: Int] = [:]
        for (i, n) in graph.nodes.enumerated() { for o in n.outputs { producerOf[o] = i } }
        var maybeDead: [Int] = []
        for i in graph.nodes.indices {
            let second = graph.nodes[i]
            guard second.inputs.count == 1, second.outputs.count == 1, second.blocks.isEmpty, second.weights.isEmpty,
                  let j = producerOf[second.inputs[0]] else { continue }
            let first = graph.nodes[j]
            guard first.inputs.count == 1, first.outputs.count == 1, first.blocks.isEmpty, first.weights.isEmpty,
                  [first.inputs[0], first.outputs[0], second.outputs[0]].allSatisfy({ graph.tensorTypes[$0]?.isFullyKnown ?? false })
            else { continue }
            let newOp: Op
            switch (first.op, second.op) {
            case let (.transpose(p), .transpose(q)):
                guard p.count == q.count, q.allSatisfy({ $0 >= 0 && $0 < p.count }),
                      Set(q).count == q.count, Set(p).count == p.count else { continue }
                let r = q.map { p[$0] }
                newOp = r == Array(0..<r.count) ? .identity : .transpose(perm: r)
            case (.reshape, .reshape), (.reshape, .reshapeND), (.reshapeND, .reshapeND):
                newOp = second.op
            default: continue
            }
            graph.nodes[i].op = newOp
            graph.nodes[i].inputs[0] = first.inputs[0]
            maybeDead.append(j)
            changed = true
        }
        guard changed else { return false }
        // Remove the first nodes nothing reads any more (they may feed other nodes too).
        let uses = TensorUses(graph)
        let dead = Set(maybeDead.filter { uses.isUnused(graph.nodes[$0].outputs[0]) })
        for j in dead { graph.tensorTypes.removeValue(forKey: graph.nodes[j].outputs[0]) }
        graph.nodes = graph.nodes.enumerated().filter { !dead.contains($0.offset) }.map(\.element)
        // The identities (and same-shape reshapes) a merge leaves go now, so the pipeline stays idempotent.
        _ = RemoveNoOpNodes().apply(to: &graph)
        return true
    }
}
