/// Errors thrown by the weight-compression passes and the standalone quantization functions.
/// Every message names the node and weight role when there is one (standalone functions on
/// `[Float]` leave them empty), the offending value, and what to do.
public enum QuantizationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A bit width outside what the mode supports: 1…8 for `.linear` and `.kmeans`.
    case invalidBits(mode: String, bits: Int)
    /// fp16 conversion met a finite value with |value| > 65504 (it would become ±inf) and
    /// `QuantizationOptions.clampFP16` is false. `index` is the row-major element index.
    case fp16Overflow(node: String, weight: String, index: Int, value: Float)
    /// Linear or k-means quantization met NaN or ±inf, which has no finite code.
    case nonFiniteWeight(node: String, weight: String, index: Int, value: Float)
    /// Arguments that do not fit together (value count vs shape, axis out of range, cluster count,
    /// array lengths), with a description.
    case invalidArgument(String)

    /// The message: node and weight (when known), the value, and what to do.
    public var description: String {
        func at(_ node: String, _ weight: String) -> String {
            node.isEmpty && weight.isEmpty ? "" : "node '\(node)' weight '\(weight)': "
        }
        switch self {
        case let .invalidBits(mode, bits):
            return "\(mode) quantization needs 1…8 bits, got \(bits); choose a bit width from 1 to 8 (or fp16)"
        case let .fp16Overflow(node, weight, index, value):
            return "\(at(node, weight))value \(value) at element \(index) exceeds the float16 range (|w| ≤ 65504); "
                + "keep this layer in float32 (skip it) or enable clamping to ±65504"
        case let .nonFiniteWeight(node, weight, index, value):
            return "\(at(node, weight))non-finite value \(value) at element \(index) cannot be quantized; "
                + "fix the weights or skip this layer"
        case let .invalidArgument(m):
            return "invalid quantization argument: \(m)"
        }
    }
}
