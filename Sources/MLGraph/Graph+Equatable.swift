extension Graph: Equatable {
    /// Same inputs, outputs, nodes (in order; weights compared by value, `Node.==`), tensor types
    /// and description. Used to check that a pass which reports no change left the graph as is.
    public static func == (a: Graph, b: Graph) -> Bool {
        a.inputs == b.inputs && a.outputs == b.outputs && a.nodes == b.nodes
            && a.tensorTypes == b.tensorTypes && a.description == b.description
    }
}
