// Graph verifier, layer 4: shapes (see GraphVerifier.Layer.shapes).

extension GraphVerifier {
    /// Ranks and dimensions of inputs, weights and inferred outputs; each op's shape rule; recorded
    /// shapes against inferred ones.
    static func checkShapes(_ run: inout VerifierRun) throws {
        let g = run.graph
        let inferred = run.inferred()
        for i in g.inputs {
            if let p = rankOrDimensionProblem(i.type) {
                throw GraphVerificationFailure.at(.shapes, tensor: i.name, "input '\(i.name)' has shape \(formatShape(i.type.shape)): \(p)",
                                                  expected: "rank ≤ \(Node.maxRank), dimensions ≥ 1 or −1 (unknown)", found: formatShape(i.type.shape))
            }
            if let recorded = g.tensorTypes[i.name], recorded.shape != i.type.shape {
                throw GraphVerificationFailure.at(.shapes, tensor: i.name,
                    "tensor '\(i.name)' is recorded as \(recorded) but the input is declared as \(i.type)",
                    expected: formatShape(i.type.shape), found: formatShape(recorded.shape))
            }
        }
        for (k, node) in g.nodes.enumerated() {
            for owner in withNestedNodes(node) {
                for key in owner.weights.keys.sorted() {
                    guard let w = owner.weights[key], let p = weightRankOrDimensionProblem(w.shape) else { continue }
                    throw GraphVerificationFailure.at(.shapes, node: owner, weight: key,
                        "weight '\(key)' of node '\(owner.name)' (\(owner.op.name)) has shape \(formatShape(w.shape)): \(p)",
                        expected: "rank ≤ \(Node.maxRank), dimensions ≥ 0", found: formatShape(w.shape))
                }
            }
            switch inferred.stop {
            case let .ruleFailed(at, error)? where at == k:
                let inputs = node.inputs.map { inferred.types[$0].map(\.description) ?? "?" }.joined(separator: ", ")
                throw GraphVerificationFailure.at(.shapes, node: node, "node '\(node.name)' (\(node.op.name)): its shape rule refuses it: \(error)",
                                                  expected: "inputs, attributes and weights that \(node.op.name) accepts",
                                                  found: "inputs \(inputs.isEmpty ? "none" : inputs), weights \(node.weights.keys.sorted().map { "\($0) \(formatShape(node.weights[$0]?.shape ?? []))" }.joined(separator: ", "))",
                                                  cause: (error as? GraphError).map { .graph($0) })
            case let .outputCount(at, given)? where at == k:
                throw GraphVerificationFailure.at(.shapes, node: node, "node '\(node.name)' (\(node.op.name)) produces \(given) outputs, but \(node.outputs.count) output names are given",
                                                  expected: "\(given) output names", found: "\(node.outputs.count)")
            case let .unusableInput(at, _)? where at == k, let .unusableWeight(at)? where at == k:
                return  // an element count beyond the limits: the sizes layer names it
            default: break
            }
            for o in node.outputs {
                guard let t = inferred.types[o] else { continue }
                if let p = rankOrDimensionProblem(t) {
                    throw GraphVerificationFailure.at(.shapes, node: node, tensor: o, "output '\(o)' of node '\(node.name)' (\(node.op.name)) would have shape \(formatShape(t.shape)): \(p)",
                                                      expected: "rank ≤ \(Node.maxRank), dimensions ≥ 1 or −1 (unknown)", found: formatShape(t.shape))
                }
                if let recorded = g.tensorTypes[o], recorded.shape != t.shape {
                    throw GraphVerificationFailure.at(.shapes, node: node, tensor: o,
                        "tensor '\(o)' is recorded as \(recorded) but its producer, node '\(node.name)' (\(node.op.name)), gives \(t)",
                        expected: formatShape(t.shape), found: formatShape(recorded.shape))
                }
            }
        }
    }

    /// A rank above `Node.maxRank`, or a dimension neither positive nor `TensorType.unknown`.
    static func rankOrDimensionProblem(_ t: TensorType) -> String? {
        guard t.rank <= Node.maxRank else { return "rank \(t.rank) is more than \(Node.maxRank)" }
        for d in t.shape where d != TensorType.unknown && d <= 0 {
            return "dimension \(d) is not positive (nor −1, unknown until prediction)"
        }
        return nil
    }

    /// A weight rank above `Node.maxRank`, or a negative dimension (weights may be empty).
    static func weightRankOrDimensionProblem(_ shape: [Int]) -> String? {
        guard shape.count <= Node.maxRank else { return "rank \(shape.count) is more than \(Node.maxRank)" }
        for d in shape where d < 0 { return "dimension \(d) is negative" }
        return nil
    }

    /// Why a weight's shape is unusable (rank, negative dimension, or more than
    /// `TensorType.maxElementCount` elements), or nil.
    static func weightShapeProblem(_ shape: [Int]) -> String? {
        if let p = weightRankOrDimensionProblem(shape) { return p }
        return checkedElementCount(shape) == nil ? "more than 2^40 elements" : nil
    }

    /// Whether `node`, or a node of its blocks, has a weight of unusable shape.
    static func hasUnusableWeight(_ node: Node) -> Bool {
        withNestedNodes(node).contains { n in n.weights.values.contains { weightShapeProblem($0.shape) != nil } }
    }

    /// `node` and every node of its blocks (depth first; the structure layer bounded the depth).
    static func withNestedNodes(_ node: Node) -> [Node] {
        var out = [node]
        for b in node.blocks { for n in b.nodes { out += withNestedNodes(n) } }
        return out
    }

    /// Product of the known dimensions (`TensorType.unknown` skipped), or nil when a dimension is
    /// negative, or the product overflows or exceeds `TensorType.maxElementCount`.
    static func checkedElementCount(_ shape: [Int]) -> Int? {
        var n = 1
        for d in shape where d != TensorType.unknown {
            guard d >= 0 else { return nil }
            let (p, o) = n.multipliedReportingOverflow(by: d)
            guard !o, p <= TensorType.maxElementCount else { return nil }
            n = p
        }
        return n
    }
}
