import MLGraph

/// `quantize_linear`: `WeightQuantizer` in `.linear(bits:)` (or `.linearSymmetric`) mode as a
/// `GraphPass` — per-output-channel linear n-bit weights, byte-identical to coremltools
/// (batch-norm statistics folded first). The report of the last `apply` is `lastReport`.
public final class QuantizeLinearPass: GraphPass, Sendable {
    /// "quantize_linear".
    public var name: String { "quantize_linear" }
    private let core: WeightPassCore

    /// - Parameters:
    ///   - bits: 1…8 (asymmetric); with `symmetric`, must be 8 (coremltools `linear_symmetric`).
    ///   - options: which weights.
    ///   - progress: as `WeightQuantizer.quantize(_:progress:)`.
    /// - Throws: `QuantizationError.invalidBits` outside 1…8, `.invalidArgument` for `symmetric`
    ///   with bits other than 8;
    ///   otherwise as `WeightQuantizer.init`.
    public init(bits: Int, symmetric: Bool = false, options: QuantizationOptions = QuantizationOptions(),
                progress: (@Sendable (Int, Int) -> Void)? = nil) throws {
        if symmetric, bits != 8 {
            throw QuantizationError.invalidArgument("linear-symmetric quantization is 8-bit only, got \(bits) bits; use 8 bits, or asymmetric linear for fewer")
        }
        let mode: QuantizationMode = symmetric ? .linearSymmetric : .linear(bits: bits)
        core = WeightPassCore(quantizer: try WeightQuantizer(mode: mode, options: options), progress: progress)
    }

    /// The quantizer the pass runs.
    public var quantizer: WeightQuantizer { core.quantizer }
    /// The report of the most recent `apply` (nil before any, or when it threw).
    public var lastReport: QuantizationReport? { core.lastReport }

    /// - Returns: whether any weight was quantized or batch norm folded.
    /// - Throws: as `WeightQuantizer.quantize(_:progress:)`; the graph is then unchanged.
    public func apply(to graph: inout Graph) throws -> Bool { try core.apply(to: &graph) }
}
