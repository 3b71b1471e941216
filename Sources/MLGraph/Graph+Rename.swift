extension Graph {
    /// Renames tensor `old` to `new` everywhere: graph inputs/outputs, node inputs/outputs,
    /// recorded types and feature descriptions (the CLI's `--input-name` / `--output-name`).
    /// - Throws: `GraphError.invalidTopology` when `old` does not exist or `new` is already used.
    public mutating func renameTensor(_ old: String, to new: String) throws {
        guard old != new else { return }
        guard tensorTypes[old] != nil || inputs.contains(where: { $0.name == old }) else {
            throw GraphError.invalidTopology("cannot rename '\(old)': no such tensor; inputs are \(inputs.map(\.name).joined(separator: ", ")), outputs are \(outputs.joined(separator: ", "))")
        }
        guard tensorTypes[new] == nil, !inputs.contains(where: { $0.name == new }) else {
            throw GraphError.invalidTopology("cannot rename '\(old)' to '\(new)': a tensor named '\(new)' already exists")
        }
        func r(_ s: String) -> String { s == old ? new : s }
        for i in inputs.indices { inputs[i].name = r(inputs[i].name) }
        outputs = outputs.map(r)
        for i in nodes.indices {
            nodes[i].inputs = nodes[i].inputs.map(r)
            nodes[i].outputs = nodes[i].outputs.map(r)
        }
        if let t = tensorTypes.removeValue(forKey: old) { tensorTypes[new] = t }
        for i in description.inputs.indices { description.inputs[i].name = r(description.inputs[i].name) }
        for i in description.outputs.indices { description.outputs[i].name = r(description.outputs[i].name) }
        if let p = description.probabilitiesOutput { description.probabilitiesOutput = r(p) }
    }
}
