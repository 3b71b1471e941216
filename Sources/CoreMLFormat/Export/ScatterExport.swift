// Core ML export of the scatter / reverse / argsort / einsum / slidingWindows / NMS ops: refused
// with the reason. Their NeuralNetwork counterparts (scatter, scatterND, scatterAlongAxis,
// reverse, reverseSeq, argSort, einsum, slidingWindows, NonMaximumSuppression layers) are rank-N
// layers of specification 4 and later (Core ML 3), which take integer index / length tensors or
// produce int32 ones; the writer emits specification 1…3 models whose blobs are float
// [Seq, C, H, W] tensors.
import MLGraph

extension ExportWriter {
    /// The Core ML 3 (specification 4) layer that would implement `node`'s op.
    static func rankNLayer(_ op: Op) -> String {
        switch op {
        case .scatter: return "scatter (ScatterLayerParams)"
        case .scatterND: return "scatterND (ScatterNDLayerParams)"
        case .scatterAlongAxis: return "scatterAlongAxis (ScatterAlongAxisLayerParams)"
        case .reverse: return "reverse (ReverseLayerParams)"
        case .reverseSequence: return "reverseSeq (ReverseSeqLayerParams)"
        case .argsort: return "argSort (ArgSortLayerParams)"
        case .einsum: return "einsum (EinsumLayerParams, a fixed set of equations)"
        case .slidingWindows: return "slidingWindows (SlidingWindowsLayerParams)"
        case .nonMaximumSuppression: return "NonMaximumSuppression (NonMaximumSuppressionLayerParams)"
        default: return op.name
        }
    }

    /// Refuses `node`: its layer exists only among the rank-N layers of specification ≥ 4.
    mutating func failRankNOp(_ node: Node) {
        fail(node, "\(node.op.name) maps to the Core ML layer \(Self.rankNLayer(node.op)), a rank-N layer of specification 4 (Core ML 3) or later (N-d tensors; int32 indices, lengths or outputs where the op has them); the NeuralNetwork writer emits specification 1–3 models, whose blobs are float [Seq, C, H, W] tensors",
             "Keep the op out of graphs exported to .mlmodel (run them with mlconv), or export an ML Program with coremltools.")
    }
}
