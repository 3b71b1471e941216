/// `cancel_transpose_pairs`: removes a transpose and its inverse when only layout-agnostic ops
/// lie between them.
///
/// ML programs keep spatial ops channels-first; imported into the channels-last IR, each
/// `conv` becomes transpose → conv2d → transpose, so a chain conv → batch_norm → relu6 → conv
/// reads NCHW → NHWC … NHWC → NCHW transposes around the element-wise ops between the
/// convolutions (MobileNetV2: about two per convolution). For a `transpose` T2 whose input is
/// produced by a chain of single-consumer element-wise nodes (activation, clip, unary, identity,
/// a binary op with a one-element constant, batch norm, softmax and pad — their axis moved
/// through the permutation) that starts at a transpose T1 with the inverse permutation, the chain is rewired
/// to read T1's input and to write T2's output tensor, and T1 and T2 are removed. The result
/// computes the same values (element-wise ops commute with a permutation of the axes); graph
/// inputs, outputs and every remaining tensor outside the chain keep their types. Graphs with
/// control-flow blocks are left alone. Idempotent.
public struct CancelTransposePairs: GraphPass {
    /// "cancel_transpose_pairs".
    public var name: String { "cancel_transpose_pairs" }

    public init() {}

    /// Whether applying `p1` then `p2` is the identity (output axis i of the pair = input axis
    /// p1[p2[i]]).
    static func inverse(_ p1: [Int], _ p2: [Int]) -> Bool {
        guard p1.count == p2.count else { return false }
        for i in p2.indices {
            guard p2[i] >= 0, p2[i] < p1.count, p1[p2[i]] == i else { return false }
        }
        return true
    }

    /// The op of `node` computed on the un-transposed tensor (axis a of the transposed tensor is
    /// axis p1[a] of the original), or nil when the node is not layout-agnostic.
    static func movedThrough(_ node: Node, perm p1: [Int]) -> Op? {
        guard node.outputs.count == 1 else { return nil }
        let rank = p1.count
        func axis(_ a: Int) -> Int? {
            let n = a < 0 ? a + rank : a
            return n >= 0 && n < rank ? p1[n] : nil
        }
        switch node.op {
        case .activation, .clip, .unary, .identity:
            return node.inputs.count == 1 ? node.op : nil
        case .binary:
            guard node.inputs.count == 1, let y = node.weights["y"], y.elementCount == 1 else { return nil }
            return node.op
        case let .batchNorm(a):
            guard node.inputs.count == 1, let ax = axis(a.axis) else { return nil }
            return .batchNorm(BatchNormAttributes(axis: ax, epsilon: a.epsilon))
        case let .softmax(a):
            guard node.inputs.count == 1, let ax = axis(a) else { return nil }
            return .softmax(axis: ax)
        case let .pad(a):
            // Amounts follow their axis: axis a of the transposed tensor is axis p1[a].
            guard node.inputs.count == 1, a.pads.count == rank else { return nil }
            var pads = a.pads
            for i in 0..<rank { pads[p1[i]] = a.pads[i] }
            var moved = a
            moved.pads = pads
            return .pad(moved)
        default:
            return nil
        }
    }

    /// - Returns: whether at least one pair was removed.
    public func apply(to graph: inout Graph) -> Bool {
        guard graph.nodes.allSatisfy({ $0.blocks.isEmpty }) else { return false }
        var changed = false
        while applyOnce(to: &graph) { changed = true }
        return changed
    }

    private func applyOnce(to graph: inout Graph) -> Bool {
        let nodes = graph.nodes
        let outputs = Set(graph.outputs)
        var producer: [String: Int] = [:]
        var consumers: [String: [Int]] = [:]
        for (i, n) in nodes.enumerated() {
            for t in n.outputs { producer[t] = i }
            for t in n.inputs { consumers[t, default: []].append(i) }
        }
        for (i2, t2) in nodes.enumerated() {
            guard case let .transpose(p2) = t2.op, t2.inputs.count == 1, t2.outputs.count == 1 else { continue }
            var chain: [Int] = []  // producer order reversed: chain[0] feeds T2
            var cur = t2.inputs[0]
            var next = i2
            while let pi = producer[cur], consumers[cur] == [next], !outputs.contains(cur) {
                let n = nodes[pi]
                if case let .transpose(p1) = n.op, n.inputs.count == 1, n.outputs.count == 1, Self.inverse(p1, p2) {
                    guard !chain.isEmpty else { break }  // T1 → T2 directly: left to a later rewrite with no chain
                    // Rewrite: chain (in execution order) reads T1's input and writes T2's output.
                    let ordered = Array(chain.reversed())
                    var g = graph
                    for (k, ci) in ordered.enumerated() {
                        guard let op = Self.movedThrough(nodes[ci], perm: p1) else { return false }
                        g.nodes[ci].op = op
                        if k == 0 { g.nodes[ci].inputs[0] = n.inputs[0] }
                        g.tensorTypes.removeValue(forKey: nodes[ci].outputs[0])
                    }
                    let last = ordered[ordered.count - 1]
                    g.nodes[last].outputs[0] = t2.outputs[0]
                    g.tensorTypes.removeValue(forKey: n.outputs[0])
                    g.nodes = g.nodes.enumerated().filter { $0.offset != pi && $0.offset != i2 }.map(\.element)
                    graph = g
                    return true
                }
                guard Self.movedThrough(n, perm: Array(0..<p2.count)) != nil else { break }
                chain.append(pi)
                next = pi
                cur = n.inputs[0]
            }
        }
        return false
    }
}
