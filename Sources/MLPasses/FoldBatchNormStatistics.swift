import Foundation
import MLGraph

/// `fold_batchnorm_statistics`: rewrites each batchNorm whose four statistics are all selected
/// for compression (by `options`) into the equivalent gamma' = gamma/√(variance+ε),
/// beta' = beta − gamma'·mean, mean 0, variance 1 − ε (so √(variance'+ε) = 1), as coremltools'
/// Keras converter folds batch norms. Exact in float32 up to rounding, and it keeps large
/// statistics (a moving variance of 1.4·10⁵ in the real style-transfer network) inside the fp16
/// range and off the look-up tables. Batch norms with a variance + ε ≤ 0 are left alone.
///
/// `WeightQuantizer.quantize` runs it (through `PassPipeline`) before compressing; the number of
/// batch norms folded by the last `apply` is `lastFoldedCount`, and `note(folded:)` is the line
/// the quantization report carries.
public final class FoldBatchNormStatistics: GraphPass, @unchecked Sendable {
    /// "fold_batchnorm_statistics".
    public var name: String { "fold_batchnorm_statistics" }
    /// Selects the batch norms whose statistics will be compressed (only those are folded).
    public let options: QuantizationOptions
    private let lock = NSLock()
    private var folded = 0

    /// - Parameter options: the quantization selection the fold prepares for.
    public init(options: QuantizationOptions = QuantizationOptions()) { self.options = options }

    /// Batch norms folded by the most recent `apply` (0 before any).
    public var lastFoldedCount: Int { lock.withLock { folded } }

    /// The quantization report's note for `folded` batch norms.
    public static func note(folded: Int) -> String {
        "\(folded) batch norm(s): statistics folded into scale and shift (mean 0, variance 1 − ε) before compressing, as coremltools does"
    }

    /// - Returns: whether at least one batch norm was folded.
    public func apply(to graph: inout Graph) -> Bool {
        var count = 0
        for (i, node) in graph.nodes.enumerated() {
            guard case let .batchNorm(a) = node.op, let mean = node.weights["mean"], let variance = node.weights["variance"],
                  ["gamma", "beta", "mean", "variance"].allSatisfy({ node.weights[$0] == nil || options.selection(node: node, role: $0) == nil })
            else { continue }
            let m = mean.floats(), v = variance.floats()
            let gamma = node.weights["gamma"]?.floats() ?? [Float](repeating: 1, count: m.count)
            let beta = node.weights["beta"]?.floats() ?? [Float](repeating: 0, count: m.count)
            guard gamma.count == m.count, beta.count == m.count, v.count == m.count,
                  (v.allSatisfy { $0 + a.epsilon > 0 }) else { continue }
            let scale = (0..<m.count).map { gamma[$0] / (v[$0] + a.epsilon).squareRoot() }
            let shift = (0..<m.count).map { beta[$0] - scale[$0] * m[$0] }
            let c = [m.count]
            graph.nodes[i].weights = ["gamma": ConstantTensor(shape: c, floats: scale), "beta": ConstantTensor(shape: c, floats: shift),
                                      "mean": ConstantTensor(shape: c, floats: [Float](repeating: 0, count: m.count)),
                                      "variance": ConstantTensor(shape: c, floats: [Float](repeating: 1 - a.epsilon, count: m.count))]
            count += 1
        }
        lock.withLock { folded = count }
        return count > 0
    }
}
