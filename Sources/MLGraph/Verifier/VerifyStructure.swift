// Graph verifier, layer 1: structure (see GraphVerifier.Layer.structure).

extension GraphVerifier {
    /// Unique node names, nodes with outputs, each tensor produced once, topological order,
    /// graph inputs declared once, graph outputs produced; blocks recursively (bounded depth).
    static func checkStructure(_ run: VerifierRun) throws {
        let g = run.graph
        var declared = Set<String>()
        for i in g.inputs where !declared.insert(i.name).inserted {
            throw GraphVerificationFailure.at(.structure, tensor: i.name, "input '\(i.name)' is declared twice",
                                              expected: "each graph input declared once", found: "two inputs named '\(i.name)'")
        }
        try checkScope(bound: g.inputs.map(\.name), nodes: g.nodes, outputs: g.outputs, scope: "graph", owner: nil, depth: 0)
    }

    /// One scope: the graph (bound names: its inputs) or a block (bound names: the block inputs).
    private static func checkScope(bound: [String], nodes: [Node], outputs: [String], scope: String, owner: Node?, depth: Int) throws {
        func fail(_ node: Node?, tensor: String? = nil, _ m: String, expected: String? = nil, found: String? = nil) -> GraphError {
            let inScope = owner == nil ? m : "\(scope): \(m)"
            if let node = node ?? owner {
                return GraphVerificationFailure.at(.structure, node: node, tensor: tensor, inScope, expected: expected, found: found)
            }
            return GraphVerificationFailure.at(.structure, tensor: tensor, inScope, expected: expected, found: found)
        }
        // Producer of every tensor of the scope: −1 for a bound name, else the node's index.
        var producer: [String: Int] = [:]
        for name in bound where producer.updateValue(-1, forKey: name) != nil {
            throw fail(nil, tensor: name, "input name '\(name)' is bound twice", expected: "distinct block input names", found: "'\(name)' twice")
        }
        var names = Set<String>()
        for (k, n) in nodes.enumerated() {
            guard names.insert(n.name).inserted else {
                throw fail(owner == nil ? n : nil, "two nodes are named '\(n.name)'", expected: "unique node names", found: "'\(n.name)' twice")
            }
            guard !n.outputs.isEmpty else {
                throw fail(owner == nil ? n : nil, "node '\(n.name)' (\(n.op.name)) has no outputs", expected: "at least one output", found: "none")
            }
            for o in n.outputs {
                if let p = producer.updateValue(k, forKey: o) {
                    let first = p < 0 ? "an input" : (p == k ? "this node" : "node '\(nodes[p].name)'")
                    throw fail(owner == nil ? n : nil, tensor: o, "tensor '\(o)' is produced twice (by \(first), again by node '\(n.name)')",
                               expected: "each tensor produced once", found: "produced by \(first) and node '\(n.name)'")
                }
            }
        }
        for (k, n) in nodes.enumerated() {
            for i in n.inputs {
                guard let p = producer[i], p >= k else { continue }  // unknown names: the references layer
                let by = p == k ? "the node itself" : "node '\(nodes[p].name)', later"
                throw fail(owner == nil ? n : nil, tensor: i,
                           "node '\(n.name)' (\(n.op.name)) reads tensor '\(i)', which \(by) produces; nodes must be in topological order",
                           expected: "'\(i)' produced before node '\(n.name)'", found: "produced by \(by)")
            }
            guard !n.blocks.isEmpty else { continue }
            guard n.op.kind == .cond || n.op.kind == .whileLoop else {
                throw fail(owner == nil ? n : nil, "node '\(n.name)' (\(n.op.name)) owns \(n.blocks.count) block(s); only cond and whileLoop own blocks",
                           expected: "no blocks", found: "\(n.blocks.count) block(s)")
            }
            guard depth + 1 <= Node.maxBlockNesting else {
                throw fail(owner == nil ? n : nil, "blocks of node '\(n.name)' nest \(depth + 1) levels deep; at most \(Node.maxBlockNesting) are supported",
                           expected: "at most \(Node.maxBlockNesting) levels", found: "\(depth + 1) levels")
            }
            for (b, block) in n.blocks.enumerated() {
                let label = owner == nil ? "block \(b) of node '\(n.name)'" : "\(scope), block \(b) of node '\(n.name)'"
                try checkScope(bound: block.inputs, nodes: block.nodes, outputs: block.outputs, scope: label, owner: owner ?? n, depth: depth + 1)
            }
        }
        for o in outputs where producer[o] == nil {
            throw fail(nil, tensor: o, "\(owner == nil ? "graph" : "block") output '\(o)' is not produced by any node or input",
                       expected: "'\(o)' produced in the \(owner == nil ? "graph" : "block")", found: "no producer")
        }
    }
}
