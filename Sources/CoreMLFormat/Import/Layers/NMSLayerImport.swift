// The NonMaximumSuppression *layer* (NeuralNetwork.proto NonMaximumSuppressionLayerParams, spec 4;
// not the NonMaximumSuppression model type): boxes [B, N, 4] (center x, center y, width, height),
// scores [B, N, C] → the IR's nonMaximumSuppression, whose outputs are the layer's: boxes
// [B, maxBoxes, 4], scores [B, maxBoxes, C], indices [B, maxBoxes] and counts [B] (the last two
// cast to float32, as Core ML gives every blob). The optional inputs 3–5 (IoU threshold, score
// threshold, maximum boxes) are taken when their value is known at import (constants, see
// ImportBuilder.staticValue); run-time values are refused, since the IR's attributes are static.
//
// Divergence (documented by the IR op): when no box passes the score threshold, Core ML's comment
// returns the best box with a count of 1; the IR gives a count of 0 and padding.
import MLGraph

extension LayerImporter {
    func nonMaximumSuppressionLayer(_ p: Spec.NonMaximumSuppressionLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer) throws -> [String] {
        guard (2...5).contains(ins.count) else { throw LayerImportFailure("NonMaximumSuppression takes 2 to 5 inputs, found \(ins.count)") }
        guard layer.output.count == 4 else { throw LayerImportFailure("NonMaximumSuppression gives 4 outputs, the layer names \(layer.output.count)") }
        func overridden(_ i: Int, _ what: String) throws -> Double? {
            guard i < ins.count else { return nil }
            guard let v = b.staticValue(ins[i]), v.count == 1 else {
                throw LayerImportFailure("its \(what) comes from input \(i + 1) ('\(layer.input[i])') at run time; mlconv's NMS op takes it only as a constant")
            }
            return v[0]
        }
        let iou = try overridden(2, "IoU threshold").map(Float.init) ?? p.iouThreshold
        let score = try overridden(3, "score threshold").map(Float.init) ?? p.scoreThreshold
        let maxBoxes = try overridden(4, "maximum number of boxes").map { Int(exactly: $0.rounded()) ?? -1 } ?? Int(clamping: p.maxBoxes)
        guard (1...Node.maxCountAttribute).contains(maxBoxes) else { throw LayerImportFailure("maxBoxes \(maxBoxes) is out of range") }
        guard !iou.isNaN, !score.isNaN else { throw LayerImportFailure("NaN thresholds") }
        let a = NonMaximumSuppressionAttributes(iouThreshold: iou, scoreThreshold: score, maxBoxes: maxBoxes, perClassSuppression: p.perClassSuppression)
        let name = layer.name
        let outs = try b.emitMulti(name, .nonMaximumSuppression(a), Array(ins.prefix(2)),
                                   outputs: [layer.output[0], layer.output[1], layer.output[2] + "__int", layer.output[3] + "__int"])
        let indices = try b.emit(name + "__indices", .cast(to: .float32), [outs[2]], output: layer.output[2])
        let counts = try b.emit(name + "__counts", .cast(to: .float32), [outs[3]], output: layer.output[3])
        return [outs[0], outs[1], indices, counts]
    }
}
