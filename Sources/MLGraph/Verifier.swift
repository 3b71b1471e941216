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

extension Graph {
    /// For readers: `inferShapes()` (recording every tensor's type), then `verify()`. When
    /// inference fails, the verifier runs on the graph as the reader built it, without recorded
    /// types, and throws its layered error (it refuses every graph that inference refuses);
    /// `inferShapes`' own error only if it does not.
    /// - Throws: `GraphError.verificationFailed` (see `GraphVerifier`), or `inferShapes`' error.
    public mutating func inferShapesAndVerify() throws {
        do {
            try inferShapes()
        } catch {
            var asBuilt = self
            asBuilt.tensorTypes = [:]
            try asBuilt.verify()
            throw error
        }
        try verify()
    }
}
