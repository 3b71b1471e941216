extension Graph {
    /// Verifies the graph with `GraphVerifier`, layer by layer — structure, references, types,
    /// shapes, sizes (see `GraphVerifier.Layer`) — so that the runtime and the kernels can trust
    /// it. Every reader runs it on the graph it builds; `PassPipeline` after each pass.
    /// - Throws: `GraphError.verificationFailed` naming the layer, the node / op / tensor /
    ///   weight, expected and found (with the op's own error, or `MemoryLimitExceeded`, as cause).
    public func verify() throws {
        try GraphVerifier.verify(self)
    }
}
