/// One named graph rewrite: an inference rewrite (`FusePadIntoConv`) or a weight pass
/// (MLPasses' `fold_batchnorm_statistics`, `fp16`, `quantize_linear`, `quantize_kmeans`).
///
/// A pass mutates the graph in place and says whether it changed anything. It must keep every
/// graph input and output (names and shapes) unless its documentation says otherwise, and leave a
/// graph that `Graph.verify()` accepts: `PassPipeline` verifies after every pass that reports a
/// change and names the pass when the verifier fails. A pass that reports `false` must leave the
/// graph exactly as it found it (`==`).
///
/// To add a pass: a type in its own file (`Sources/MLGraph/Passes/` for structural rewrites,
/// `Sources/MLPasses/` for weight passes) with a unique snake_case `name`, a positive and a
/// negative test, and, for an inference rewrite, an entry in `PassPipeline.inference`
/// (see docs/ARCHITECTURE.md, "Passes").
public protocol GraphPass: Sendable {
    /// Unique snake_case name, as given to `--disable-pass` and `PassPipeline.run(on:disabling:)`,
    /// e.g. "fuse_pad_into_conv".
    var name: String { get }

    /// Rewrites `graph` in place.
    /// - Returns: whether the graph changed; `false` promises the graph is unchanged.
    /// - Throws: the pass's own typed error; the graph's state is then unspecified.
    func apply(to graph: inout Graph) throws -> Bool
}
