import Diagnostics
/// An ordered list of `GraphPass`es with unique names, run one after the other.
///
/// After every pass that reports a change, `run(on:disabling:)` verifies the graph
/// (`Graph.verify()`, against the tensor types recorded before the pass) and re-infers every
/// tensor type, so the next pass and the caller see a typed, verified graph; a failure is
/// `GraphError.passProducedInvalidGraph` naming the pass.
///
/// ```swift
/// var g = try converter.convert(modelAt: url)
/// let changedBy = try PassPipeline.inference.run(on: &g, disabling: ["fuse_pad_into_conv"])
/// ```
public struct PassPipeline: Sendable {
    /// The passes, in the order they run.
    public let passes: [any GraphPass]

    /// The default inference pipeline: the rewrites that make a graph faster to run without
    /// changing any value it computes. Run by `mlconv keras` / `mlconv compile` on the graph they
    /// store in an `.mlbundle`, and by `MLRuntime.Model.init` at load (unless `referenceOnly`),
    /// so bundles written before the pipeline existed get the same rewrites. Every pass in it
    /// is idempotent: running the pipeline twice changes nothing the second time.
    /// Order: `fold_constants` (which needs an evaluator: `withConstantEvaluator(_:)`; MLRuntime's
    /// `Model` and `mlconv keras` give it the reference kernels), `remove_no_op_nodes`, `merge_reshapes_transposes`, `cancel_transpose_pairs`,
    /// `sink_transposes` (the transposes left at tensors read twice, e.g. residual adds),
    /// `fuse_pad_into_conv` (after the transposes, so that a pad moved back to NHWC is fused),
    /// `fold_batchnorm_into_conv`, `fuse_activation` (a batch norm is folded before the activation
    /// after it is fused, so conv → batch norm → ReLU becomes one convolution), `fuse_residual_add`
    /// (after `fuse_activation`: the convolution's own activation stays before the sum).
    public static let inference = PassPipeline(uncheckedPasses: [
        // MARK: constant folding (issue 12): a no-op here; MLRuntime gives it its evaluator
        FoldConstants(),
        RemoveNoOpNodes(), MergeReshapesTransposes(), CancelTransposePairs(),
        // MARK: transpose sinking (issue 12): before the pad and batch-norm fusions it exposes
        SinkTransposes(),
        FusePadIntoConv(),
        // MARK: inference passes (issue 12)
        FoldBatchNormIntoConv(), FuseActivation(),
        // MARK: residual add fusion (issue 12)
        FuseResidualAdd(),
    ])

    /// - Throws: `GraphError.duplicatePassName` when two passes share a name.
    public init(_ passes: [any GraphPass]) throws(GraphError) {
        var seen = Set<String>()
        for p in passes where !seen.insert(p.name).inserted {
            throw GraphError.duplicatePassName(p.name)
        }
        self.passes = passes
    }

    /// For pipelines built in this module whose names are unique by construction (tested).
    init(uncheckedPasses passes: [any GraphPass]) { self.passes = passes }

    /// The pass names, in order.
    public var names: [String] { passes.map(\.name) }

    /// Checks that every name in `disabling` is a pass of this pipeline.
    /// - Throws: `GraphError.unknownPass` naming the first unknown name (in sorted order) and
    ///   listing the known ones.
    public func validate(disabling: Set<String>) throws(GraphError) {
        let known = Set(names)
        if let unknown = disabling.sorted().first(where: { !known.contains($0) }) {
            throw GraphError.unknownPass(name: unknown, known: names)
        }
    }

    /// Runs every pass whose name is not in `disabling`, in order; after each pass that reports
    /// a change, verifies the graph and re-infers its tensor types.
    /// - Returns: the names of the passes that changed the graph, in order.
    /// - Throws: `GraphError.unknownPass` when `disabling` names a pass not in this pipeline
    ///   (before any pass runs); `GraphError.passProducedInvalidGraph` naming the pass when the
    ///   graph no longer verifies after it; any error a pass throws, unchanged.
    @discardableResult
    public func run(on graph: inout Graph, disabling: Set<String> = []) throws -> [String] {
        try validate(disabling: disabling)
        var changed: [String] = []
        for pass in passes where !disabling.contains(pass.name) {
            guard try pass.apply(to: &graph) else { continue }
            changed.append(pass.name)
            do {
                try graph.verify()  // compares with the types recorded before the pass
                try graph.inferShapes()  // types of new tensors; removed tensors' types dropped
            } catch let e as GraphError {
                throw GraphError.passProducedInvalidGraph(pass: pass.name, message: "", cause: DiagnosticCause(e))
            }
        }
        return changed
    }
}
