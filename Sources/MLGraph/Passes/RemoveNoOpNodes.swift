// MARK: inference passes (issue 12)

/// `remove_no_op_nodes`: removes nodes that copy their input (identity nodes — Dropout and noise
/// layers at inference, Core ML `scale`/`bias` without parameters — `activation(.linear(1, 0))`,
/// a transpose with the identity permutation, a reshape / reshapeND / squeeze / expandDims whose
/// output type equals its input type) and dead nodes (no output read by any node and none a graph
/// output; control flow, list, random and custom nodes are kept).
///
/// A no-op node's readers read its input instead. When its output is a graph output, the node
/// that produces its input writes that name instead, if that tensor is read by nothing else and
/// is neither a graph input nor a graph output; otherwise the node stays (a graph output must
/// keep its name). Graph inputs and outputs are unchanged; same values; idempotent.
public struct RemoveNoOpNodes: GraphPass {
    /// "remove_no_op_nodes".
    public var name: String { "remove_no_op_nodes" }

    public init() {}

    /// Whether node `n` (whose types are in `types`) outputs a copy of its single input.
    static func isNoOp(_ n: Node, _ types: [String: TensorType]) -> Bool {
        guard n.inputs.count == 1, n.outputs.count == 1, n.blocks.isEmpty, n.weights.isEmpty,
              let tin = types[n.inputs[0]], let tout = types[n.outputs[0]], !tin.isList, !tout.isList else { return false }
        switch n.op {
        case .identity: return tin == tout
        case let .activation(f): return f == .linear(alpha: 1, beta: 0) && tin == tout && tin.elementType == .float32
        case let .transpose(perm): return perm == Array(0..<perm.count) && tin == tout
        case .reshape, .reshapeND, .squeeze, .expandDims: return tin == tout && tin.isFullyKnown
        default: return false
        }
    }

    /// Kinds never removed as dead (state, side effects or nested blocks).
    static let keptWhenDead: Set<OpKind> = [.custom, .random, .cond, .whileLoop, .makeList, .listRead, .listWrite,
                                            .listGather, .listScatter, .listLength]

    /// - Returns: whether at least one node was removed.
    public func apply(to graph: inout Graph) -> Bool {
        var changed = false
        // Until nothing changes: removing a dead reader can free a no-op's input to take its name.
        while removeNoOps(&graph) || removeDead(&graph) { changed = true }
        return changed
    }

    private func removeNoOps(_ graph: inout Graph) -> Bool {
        var changed = false
        var i = 0
        while i < graph.nodes.count {
            if Self.isNoOp(graph.nodes[i], graph.tensorTypes), removeNoOp(at: i, in: &graph) { changed = true } else { i += 1 }
        }
        return changed
    }

    /// Dead nodes, last to first, so a chain of dead nodes goes in one sweep.
    private func removeDead(_ graph: inout Graph) -> Bool {
        let uses = TensorUses(graph)
        var dead = Set<Int>()
        for k in graph.nodes.indices.reversed() {
            let n = graph.nodes[k]
            guard !n.outputs.isEmpty, !Self.keptWhenDead.contains(n.op.kind),
                  n.outputs.allSatisfy({ o in !uses.graphOutputs.contains(o) && (uses.readers[o] ?? []).allSatisfy { dead.contains($0) } })
            else { continue }
            dead.insert(k)
        }
        guard !dead.isEmpty else { return false }
        for k in dead { for o in graph.nodes[k].outputs { graph.tensorTypes.removeValue(forKey: o) } }
        graph.nodes = graph.nodes.enumerated().filter { !dead.contains($0.offset) }.map(\.element)
        return true
    }

    /// Removes no-op node `i` if its output can be replaced; returns whether it did.
    private func removeNoOp(at i: Int, in graph: inout Graph) -> Bool {
        let n = graph.nodes[i], input = n.inputs[0], output = n.outputs[0]
        let uses = TensorUses(graph)
        if !uses.graphOutputs.contains(output) {
            for r in uses.readers[output] ?? [] {
                graph.nodes[r].inputs = graph.nodes[r].inputs.map { $0 == output ? input : $0 }
            }
        } else {
            guard !uses.graphInputs.contains(input), !uses.graphOutputs.contains(input),
                  uses.readers[input] == [i],
                  let p = graph.nodes.firstIndex(where: { $0.outputs.contains(input) }), p < i
            else { return false }
            graph.nodes[p].outputs = graph.nodes[p].outputs.map { $0 == input ? output : $0 }
        }
        graph.tensorTypes.removeValue(forKey: uses.graphOutputs.contains(output) ? input : output)
        graph.nodes.remove(at: i)
        return true
    }
}
