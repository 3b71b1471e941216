import MLGraph

/// Reference `Op.nonMaximumSuppression` (MIL `non_maximum_suppression`, Core ML
/// `NonMaximumSuppressionLayerParams`), per batch entry b:
/// 1. score[i] = max_k scores[b, i, k] (NaN if any class score is NaN), class[i] = the first k
///    reaching it;
/// 2. candidates: boxes with score > scoreThreshold (NaN never passes), by decreasing score, ties
///    by lower index;
/// 3. greedy: a candidate is kept unless IoU(candidate, kept box) > iouThreshold for a kept box
///    (of the same class when `perClassSuppression`), until maxBoxes are kept;
/// 4. row r < count: the kept box's coordinates, class scores and index; rows past the count:
///    zeros, zeros and −1; counts[b] = number kept.
/// Boxes are (center x, center y, width, height); corners are min/max of center ± size/2, so a
/// negative size is its absolute value; IoU = intersection / union in Double, 0 when the union is 0.
final class ReferenceNonMaximumSuppression: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .nonMaximumSuppression(a) = ctx.node.op else { return nil }
        let batches = ctx.inputTypes[0].shape[0], n = ctx.inputTypes[0].shape[1], k = ctx.inputTypes[1].shape[2]
        let m = a.maxBoxes, iouThreshold = Double(a.iouThreshold), scoreThreshold = a.scoreThreshold, perClass = a.perClassSuppression
        return ReferenceNonMaximumSuppression { ins, outs in
            let boxes = ins[0], scores = ins[1]
            var score = [Float](repeating: 0, count: n), cls = [Int](repeating: 0, count: n)
            var corners = [(x1: Double, y1: Double, x2: Double, y2: Double)](repeating: (0, 0, 0, 0), count: n)
            for b in 0..<batches {
                for i in 0..<n {
                    var best = scores.element((b * n + i) * k, as: Float.self), c = 0
                    for j in 1..<Swift.max(k, 1) {
                        let v = scores.element((b * n + i) * k + j, as: Float.self)
                        if v.isNaN || best.isNaN { best = .nan; break }
                        if v > best { best = v; c = j }
                    }
                    score[i] = best; cls[i] = c
                    let at = (b * n + i) * 4
                    let cx = Double(boxes.element(at, as: Float.self)), cy = Double(boxes.element(at + 1, as: Float.self))
                    let w = Double(boxes.element(at + 2, as: Float.self)) / 2, h = Double(boxes.element(at + 3, as: Float.self)) / 2
                    corners[i] = (Swift.min(cx - w, cx + w), Swift.min(cy - h, cy + h), Swift.max(cx - w, cx + w), Swift.max(cy - h, cy + h))
                }
                func iou(_ p: Int, _ q: Int) -> Double {
                    let (u, v) = (corners[p], corners[q])
                    let iw = Swift.max(0, Swift.min(u.x2, v.x2) - Swift.max(u.x1, v.x1))
                    let ih = Swift.max(0, Swift.min(u.y2, v.y2) - Swift.max(u.y1, v.y1))
                    let inter = iw * ih
                    let union = (u.x2 - u.x1) * (u.y2 - u.y1) + (v.x2 - v.x1) * (v.y2 - v.y1) - inter
                    return union > 0 ? inter / union : 0
                }
                let candidates = (0..<n).filter { score[$0] > scoreThreshold }.sorted { p, q in
                    score[p] != score[q] ? score[p] > score[q] : p < q
                }
                var kept: [Int] = []
                for i in candidates where kept.count < m {
                    if !kept.contains(where: { j in (!perClass || cls[j] == cls[i]) && iou(i, j) > iouThreshold }) { kept.append(i) }
                }
                for r in 0..<m {
                    let src = r < kept.count ? kept[r] : nil
                    for d in 0..<4 {
                        outs[0].setElement((b * m + r) * 4 + d, src.map { boxes.element((b * n + $0) * 4 + d, as: Float.self) } ?? 0)
                    }
                    for j in 0..<k {
                        outs[1].setElement((b * m + r) * k + j, src.map { scores.element((b * n + $0) * k + j, as: Float.self) } ?? 0)
                    }
                    outs[2].setElement(b * m + r, Int32(truncatingIfNeeded: src ?? -1))
                }
                outs[3].setElement(b, Int32(truncatingIfNeeded: kept.count))
            }
        }
    }
}
