// MARK: constant folding (issue 12)

/// Evaluates one node on constant inputs at compile time: given the node, the values of its inputs
/// (in input order, each float32 of the recorded type) and its output types, returns one constant
/// per output, or nil when it cannot (the node then stays). Thrown errors are treated as nil.
///
/// MLGraph has no kernels; the runtime provides the evaluator (`MLRuntime`'s
/// `ReferenceConstantEvaluator`, which runs the node on its reference kernel — the specification)
/// through `PassPipeline.withConstantEvaluator(_:)`.
public typealias ConstantEvaluator = @Sendable (_ node: Node, _ inputs: [ConstantTensor], _ outputTypes: [TensorType]) throws -> [ConstantTensor]?

/// `fold_constants`: replaces every node whose inputs all come from `constant` nodes by `constant`
/// nodes holding its outputs, computed at compile time by an injected `ConstantEvaluator`.
///
/// Matches, in node order (so chains of constant computations fold in one run), a node that is
/// not `constant`, `random` or `custom`, has no blocks, whose inputs are all outputs of `constant`
/// nodes (a node without inputs, e.g. `fill` / `range1d`, qualifies), and whose inputs and outputs
/// are static float32 tensors (not lists) with at most `maximumFoldedElements` output elements in
/// all. Each output k becomes a node `constant` named after the node (`name` for output 0,
/// `name_k` for the others) with weight "value" in float32; the node's own weights are dropped with
/// it. `constant` nodes that nothing reads any more (and that are not graph outputs) are removed.
/// Tensor names and types are unchanged, so readers and graph outputs need no rewiring.
///
/// Without an evaluator (`PassPipeline.inference` as MLGraph defines it) the pass changes nothing;
/// `MLRuntime.Model` runs the pipeline with the reference evaluator. Idempotent.
public struct FoldConstants: GraphPass {
    /// "fold_constants".
    public var name: String { "fold_constants" }
    /// The evaluator; nil: the pass does nothing.
    public let evaluator: ConstantEvaluator?
    /// Upper bound on the elements a folded node may output (all outputs together), so folding
    /// never turns a small computation (e.g. a `fill` or `tile`) into a large stored weight.
    public static let maximumFoldedElements = 1 << 20

    public init(evaluator: ConstantEvaluator? = nil) { self.evaluator = evaluator }

    /// - Returns: whether at least one node was folded.
    public func apply(to graph: inout Graph) -> Bool {
        guard let evaluator else { return false }
        var constantOf: [String: ConstantTensor] = [:]
        for n in graph.nodes {
            if case .constant = n.op, n.outputs.count == 1, n.inputs.isEmpty, let v = n.weights["value"],
               graph.allFloat32(n.outputs) { constantOf[n.outputs[0]] = v }
        }
        var changed = false
        var i = 0
        while i < graph.nodes.count {
            let node = graph.nodes[i]
            defer { i += 1 }
            switch node.op {
            case .constant, .random, .custom: continue
            default: break
            }
            guard node.blocks.isEmpty, !node.outputs.isEmpty, graph.allFloat32(node.inputs + node.outputs) else { continue }
            let inputs = node.inputs.compactMap { constantOf[$0] }
            guard inputs.count == node.inputs.count else { continue }
            let types = node.outputs.compactMap { graph.tensorTypes[$0] }
            guard types.count == node.outputs.count, types.allSatisfy({ $0.shape.allSatisfy { $0 >= 0 } }) else { continue }
            var total = 0
            for t in types {
                let (s, o) = total.addingReportingOverflow(t.elementCount)
                guard !o else { total = Int.max; break }
                total = s
            }
            guard total <= Self.maximumFoldedElements,
                  let values = (try? evaluator(node, inputs, types)) ?? nil, values.count == types.count,
                  zip(values, types).allSatisfy({ $0.shape == $1.shape })
            else { continue }
            let replacements = zip(node.outputs, values).enumerated().map { k, pair in
                Node(name: k == 0 ? node.name : "\(node.name)_\(k)", op: .constant, inputs: [], outputs: [pair.0],
                     weights: ["value": pair.1])
            }
            for (t, v) in zip(node.outputs, values) { constantOf[t] = v }
            graph.nodes.replaceSubrange(i...i, with: replacements)
            i += replacements.count - 1
            changed = true
        }
        guard changed else { return false }
        // Drop constants nothing reads any more.
        let uses = TensorUses(graph)
        var dead: [String] = []
        graph.nodes.removeAll { n in
            guard case .constant = n.op, n.outputs.allSatisfy({ uses.isUnused($0) }) else { return false }
            dead += n.outputs
            return true
        }
        for t in dead { graph.tensorTypes.removeValue(forKey: t) }
        return true
    }
}

extension PassPipeline {
    /// This pipeline with every `fold_constants` pass given `evaluator` (same names and order).
    public func withConstantEvaluator(_ evaluator: @escaping ConstantEvaluator) -> PassPipeline {
        PassPipeline(uncheckedPasses: passes.map { $0 is FoldConstants ? FoldConstants(evaluator: evaluator) : $0 })
    }
}
