import MLGraph

/// `fp16`: `WeightQuantizer` in `.fp16` mode as a `GraphPass` — the selected weights stored as
/// IEEE float16 (batch-norm statistics folded first, see `FoldBatchNormStatistics`).
/// The report of the last `apply` is `lastReport`.
public final class Float16Pass: GraphPass, Sendable {
    /// "fp16".
    public var name: String { "fp16" }
    private let core: WeightPassCore

    /// - Parameters:
    ///   - options: which weights, and fp16 clamping.
    ///   - progress: as `WeightQuantizer.quantize(_:progress:)`.
    /// - Throws: as `WeightQuantizer.init`.
    public init(options: QuantizationOptions = QuantizationOptions(), progress: (@Sendable (Int, Int) -> Void)? = nil) throws {
        core = WeightPassCore(quantizer: try WeightQuantizer(mode: .fp16, options: options), progress: progress)
    }

    /// The quantizer the pass runs.
    public var quantizer: WeightQuantizer { core.quantizer }
    /// The report of the most recent `apply` (nil before any, or when it threw).
    public var lastReport: QuantizationReport? { core.lastReport }

    /// - Returns: whether any weight was converted or batch norm folded.
    /// - Throws: as `WeightQuantizer.quantize(_:progress:)`; the graph is then unchanged.
    public func apply(to graph: inout Graph) throws -> Bool { try core.apply(to: &graph) }
}
