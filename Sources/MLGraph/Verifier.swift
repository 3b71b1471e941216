extension Graph {
    /// Checks the graph in layers, the first failure naming the tensor or node:
    /// 1. structure — unique node names, every tensor produced once, inputs produced before use
    ///    (topological order), every graph output produced, no node without outputs;
    /// 2. types — re-infers every shape (weights included) and compares with `tensorTypes`;
    /// 3. description — feature descriptions name real inputs/outputs.
    /// - Throws: `GraphError`.
    public func verify() throws {
        var names = Set<String>()
        for n in nodes {
            guard names.insert(n.name).inserted else { throw GraphError.invalidTopology("two nodes are named '\(n.name)'") }
            guard !n.outputs.isEmpty else {
                throw GraphError.invalidNode(node: n.name, op: n.op.name, message: "has no outputs")
            }
        }
        var inputNames = Set<String>()
        for i in inputs {
            guard inputNames.insert(i.name).inserted else { throw GraphError.invalidTopology("input '\(i.name)' is declared twice") }
        }
        var copy = self
        try copy.inferShapes()
        for (name, t) in copy.tensorTypes {
            if let stored = tensorTypes[name], stored != t {
                throw GraphError.invalidTopology("tensor '\(name)' is recorded as \(stored) but its producer gives \(t)")
            }
        }
        for f in description.inputs where !inputNames.contains(f.name) {
            throw GraphError.invalidTopology("description names input '\(f.name)', which the graph does not have")
        }
        let outs = Set(outputs)
        for f in description.outputs where !outs.contains(f.name) {
            throw GraphError.invalidTopology("description names output '\(f.name)', which the graph does not have")
        }
    }
}
