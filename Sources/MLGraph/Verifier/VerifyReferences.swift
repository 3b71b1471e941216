// Graph verifier, layer 2: references (see GraphVerifier.Layer.references).

extension GraphVerifier {
    /// Every node input names a graph input or a node output of its scope (blocks are closed);
    /// descriptions name real inputs and outputs.
    static func checkReferences(_ run: VerifierRun) throws {
        let g = run.graph
        try checkNames(bound: g.inputs.map(\.name), nodes: g.nodes, owner: nil, scope: "graph")
        let inputs = Set(g.inputs.map(\.name))
        for f in g.description.inputs where !inputs.contains(f.name) {
            throw GraphVerificationFailure.at(.references, tensor: f.name,
                "description names input '\(f.name)', which the graph does not have",
                expected: "one of the graph inputs (\(g.inputs.map(\.name).joined(separator: ", ")))", found: "'\(f.name)'")
        }
        let outputs = Set(g.outputs)
        for f in g.description.outputs where !outputs.contains(f.name) {
            throw GraphVerificationFailure.at(.references, tensor: f.name,
                "description names output '\(f.name)', which the graph does not have",
                expected: "one of the graph outputs (\(g.outputs.joined(separator: ", ")))", found: "'\(f.name)'")
        }
        if let p = g.description.probabilitiesOutput, !outputs.contains(p) {
            throw GraphVerificationFailure.at(.references, tensor: p,
                "the classifier's probabilities output '\(p)' is not a graph output",
                expected: "one of the graph outputs (\(g.outputs.joined(separator: ", ")))", found: "'\(p)'")
        }
    }

    private static func checkNames(bound: [String], nodes: [Node], owner: Node?, scope: String) throws {
        var known = Set(bound)
        for n in nodes { known.formUnion(n.outputs) }
        for n in nodes {
            for i in n.inputs where !known.contains(i) {
                if let owner {
                    throw GraphVerificationFailure.at(.references, node: owner, tensor: i,
                        "\(scope): node '\(n.name)' (\(n.op.name)) reads tensor '\(i)', which no node or input of the block produces (blocks are closed: pass outer values as operands of the op)",
                        expected: "a block input or an output of a node of the block", found: "'\(i)'")
                }
                throw GraphVerificationFailure.at(.references, node: n, tensor: i,
                    "node '\(n.name)' (\(n.op.name)) reads tensor '\(i)', which no input or node of the graph produces",
                    expected: "a graph input or a node output", found: "'\(i)'")
            }
            for (b, block) in n.blocks.enumerated() {
                let label = owner == nil ? "block \(b) of node '\(n.name)'" : "\(scope), block \(b) of node '\(n.name)'"
                try checkNames(bound: block.inputs, nodes: block.nodes, owner: owner ?? n, scope: label)
            }
        }
    }
}
