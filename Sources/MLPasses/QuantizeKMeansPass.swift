import MLGraph

/// `quantize_kmeans`: `WeightQuantizer` in `.kmeans(bits:)` mode as a `GraphPass` — per-tensor
/// look-up tables of 2^bits entries from exact 1-D k-means (batch-norm statistics folded first).
/// The report of the last `apply` is `lastReport`.
public final class QuantizeKMeansPass: GraphPass, Sendable {
    /// "quantize_kmeans".
    public var name: String { "quantize_kmeans" }
    private let core: WeightPassCore

    /// - Parameters:
    ///   - bits: 1…8.
    ///   - options: which weights.
    ///   - progress: as `WeightQuantizer.quantize(_:progress:)`.
    /// - Throws: as `WeightQuantizer.init`.
    public init(bits: Int, options: QuantizationOptions = QuantizationOptions(),
                progress: (@Sendable (Int, Int) -> Void)? = nil) throws {
        core = WeightPassCore(quantizer: try WeightQuantizer(mode: .kmeans(bits: bits), options: options), progress: progress)
    }

    /// The quantizer the pass runs.
    public var quantizer: WeightQuantizer { core.quantizer }
    /// The report of the most recent `apply` (nil before any, or when it threw).
    public var lastReport: QuantizationReport? { core.lastReport }

    /// - Returns: whether any weight was quantized or batch norm folded.
    /// - Throws: as `WeightQuantizer.quantize(_:progress:)`; the graph is then unchanged.
    public func apply(to graph: inout Graph) throws -> Bool { try core.apply(to: &graph) }
}
