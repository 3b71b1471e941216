// MIL ops of issue 11 (group B), composed from existing IR ops:
//   space_to_depth, depth_to_space (TensorFlow's DCR channel order, the IR's spaceToDepth /
//   depthToSpace between NCHW ↔ NHWC transposes); pixel_shuffle, pixel_unshuffle (PyTorch's CRD
//   order: rank-6 reshape → transpose → reshape); space_to_batch, batch_to_space (TensorFlow's
//   SpaceToBatchND / BatchToSpaceND on NCHW: output batch index (i·b1 + j)·N + n); reshape_like
//   (output shape sliced from reference shapes at import); non_maximum_suppression (iOS15 layout
//   [n, B, 4] and iOS17 layout [n, 4, B] without score_threshold and count output); non_zero
//   (NeuralNetwork whereNonZero's composition, int32 result); random_bernoulli, random_normal,
//   random_uniform, random_categorical (the NeuralNetwork random layers' convention).
//
// Random ops: Core ML does not specify its generator, so mlconv samples with its own seeded
// generator (`MLGraph.RandomAttributes`) from the op's `seed` (MIL's default −1 is used as is):
// the outputs follow the op's distribution but are not Apple's numbers, and every prediction
// draws the same numbers. random_categorical is the Gumbel-max composition of the
// NeuralNetwork importer's categoricalDistribution (probs become logits log(p + 1e-10)).
import MLGraph

enum MILMoreOpsB {
    /// The fully known shape of `t`, or a failure naming what needs it.
    static func knownShape(_ c: MILOpContext, _ t: String, rank r: Int? = nil) throws -> [Int] {
        let s = c.shape(t)
        if let r, s.count != r { throw LayerImportFailure("needs a rank-\(r) input [N, C, H, W], found shape \(formatShape(s))") }
        guard !s.contains(TensorType.unknown) else {
            throw LayerImportFailure("needs its input's shape at import, found \(formatShape(s)) (a dimension known only at run time)")
        }
        return s
    }

    static func positive(_ v: Int, _ what: String) throws -> Int {
        guard v >= 1, v <= Node.maxCountAttribute else { throw LayerImportFailure("has \(what) \(v); expected an integer ≥ 1") }
        return v
    }

    // MARK: depth ↔ space

    /// The rank-4 input `x`, its shape and the positive `block_size` of space_to_depth / depth_to_space.
    static func blockSizeOperands(_ c: MILOpContext) throws -> (x: String, shape: [Int], blockSize: Int) {
        let x = try c.tensor("x")
        return (x, try knownShape(c, x, rank: 4), try positive(try c.int("block_size"), "block_size"))
    }

    static func spaceToDepth(_ c: MILOpContext) throws -> [MILValue] {
        let (x, s, bs) = try blockSizeOperands(c)
        guard s[2] % bs == 0, s[3] % bs == 0 else {
            throw LayerImportFailure("has block_size \(bs), which does not divide H × W = \(s[2]) × \(s[3]) of its input \(formatShape(s))")
        }
        let y = try c.helper("channels_last", .spaceToDepth(blockSize: bs), [try c.toChannelsLast(x)])
        return [try c.fromChannelsLast(y)]
    }

    static func depthToSpace(_ c: MILOpContext) throws -> [MILValue] {
        let (x, s, bs) = try blockSizeOperands(c)
        guard s[1] % (bs * bs) == 0 else {
            throw LayerImportFailure("has block_size \(bs); its input's \(s[1]) channels are not divisible by block_size² = \(bs * bs)")
        }
        let y = try c.helper("channels_last", .depthToSpace(blockSize: bs), [try c.toChannelsLast(x)])
        return [try c.fromChannelsLast(y)]
    }

    /// pixel_shuffle (PyTorch PixelShuffle): y[n, c, h·f + i, w·f + j] = x[n, c·f² + i·f + j, h, w].
    static func pixelShuffle(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let s = try knownShape(c, x, rank: 4)
        let f = try positive(try c.int("upscale_factor"), "upscale_factor")
        guard s[1] % (f * f) == 0 else {
            throw LayerImportFailure("has upscale_factor \(f); its input's \(s[1]) channels are not divisible by upscale_factor² = \(f * f)")
        }
        let ch = s[1] / (f * f)
        let (oh, ow) = (try Checked.product([s[2], f], "output height"), try Checked.product([s[3], f], "output width"))
        let split = try c.helper("split", .reshapeND(shape: [s[0], ch, f, f, s[2], s[3]]), [x])
        let moved = try c.helper("interleave", .transpose(perm: [0, 1, 4, 2, 5, 3]), [split])
        return [try c.emit(.reshapeND(shape: [s[0], ch, oh, ow]), [moved])]
    }

    /// pixel_unshuffle (PyTorch PixelUnshuffle): y[n, c·f² + i·f + j, h, w] = x[n, c, h·f + i, w·f + j].
    static func pixelUnshuffle(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let s = try knownShape(c, x, rank: 4)
        let f = try positive(try c.int("downscale_factor"), "downscale_factor")
        guard s[2] % f == 0, s[3] % f == 0 else {
            throw LayerImportFailure("has downscale_factor \(f), which does not divide H × W = \(s[2]) × \(s[3]) of its input \(formatShape(s))")
        }
        let split = try c.helper("split", .reshapeND(shape: [s[0], s[1], s[2] / f, f, s[3] / f, f]), [x])
        let moved = try c.helper("gather_blocks", .transpose(perm: [0, 1, 3, 5, 2, 4]), [split])
        return [try c.emit(.reshapeND(shape: [s[0], try Checked.product([s[1], f, f], "output channels"), s[2] / f, s[3] / f]), [moved])]
    }

    // MARK: space ↔ batch

    /// block_shape [2] and a [2, 2] amount table (paddings or crops), checked.
    static func blockAndPairs(_ c: MILOpContext, _ pairsName: String) throws -> (block: [Int], pairs: [[Int]]) {
        guard let block = try c.ints("block_shape"), block.count == 2 else {
            throw LayerImportFailure("needs block_shape of two integers known at import")
        }
        let k = try c.requiredConstant(pairsName)
        guard k.shape == [2, 2], let v = try c.ints(pairsName), v.count == 4 else {
            throw LayerImportFailure("has \(pairsName) of shape \(k.shape); expected [2, 2] integers")
        }
        for b in block { _ = try positive(b, "block_shape entry") }
        guard v.allSatisfy({ $0 >= 0 }) else { throw LayerImportFailure("has \(pairsName) \(v); expected amounts ≥ 0") }
        return (block, [[v[0], v[1]], [v[2], v[3]]])
    }

    /// space_to_batch (TensorFlow SpaceToBatchND on NCHW): x [N, C, H, W] zero-padded by
    /// `paddings` → [b0·b1·N, C, H'/b0, W'/b1]; output batch (i·b1 + j)·N + n holds
    /// x_padded[n, c, h·b0 + i, w·b1 + j].
    static func spaceToBatch(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let s = try knownShape(c, x, rank: 4)
        let (bl, pads) = try blockAndPairs(c, "paddings")
        // Dimensions and amounts are bounded (TensorType.maxElementCount, Node.maxCountAttribute): no overflow.
        let h = s[2] + pads[0][0] + pads[0][1], w = s[3] + pads[1][0] + pads[1][1]
        guard h % bl[0] == 0, w % bl[1] == 0 else {
            throw LayerImportFailure("has block_shape \(bl), which does not divide the padded H × W = \(h) × \(w)")
        }
        var padded = x
        if pads.joined().contains(where: { $0 != 0 }) {
            padded = try c.helper("pad", .pad(PadAttributes(mode: .constant, pads: [[0, 0], [0, 0]] + pads, value: 0)), [x])
        }
        let split = try c.helper("split", .reshapeND(shape: [s[0], s[1], h / bl[0], bl[0], w / bl[1], bl[1]]), [padded])
        let moved = try c.helper("blocks_first", .transpose(perm: [3, 5, 0, 1, 2, 4]), [split])
        let batch = try Checked.product([bl[0], bl[1], s[0]], "output batch")
        return [try c.emit(.reshapeND(shape: [batch, s[1], h / bl[0], w / bl[1]]), [moved])]
    }

    /// batch_to_space (TensorFlow BatchToSpaceND on NCHW), the inverse of space_to_batch: x
    /// [b0·b1·N, C, H, W] → [N, C, H·b0, W·b1], then `crops` removed from H and W.
    static func batchToSpace(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let s = try knownShape(c, x, rank: 4)
        let (bl, crops) = try blockAndPairs(c, "crops")
        let bb = bl[0] * bl[1]
        guard s[0] % bb == 0 else {
            throw LayerImportFailure("has batch \(s[0]), not divisible by block_shape \(bl[0]) × \(bl[1])")
        }
        let h = try Checked.product([s[2], bl[0]], "output height"), w = try Checked.product([s[3], bl[1]], "output width")
        guard crops[0][0] + crops[0][1] < h, crops[1][0] + crops[1][1] < w else {
            throw LayerImportFailure("has crops \(crops), which remove all of the \(h) × \(w) output")
        }
        let n = s[0] / bb
        let split = try c.helper("split", .reshapeND(shape: [bl[0], bl[1], n, s[1], s[2], s[3]]), [x])
        let moved = try c.helper("blocks_inner", .transpose(perm: [2, 3, 4, 0, 5, 1]), [split])
        guard crops.joined().contains(where: { $0 != 0 }) else {
            return [try c.emit(.reshapeND(shape: [n, s[1], h, w]), [moved])]
        }
        let full = try c.helper("merge", .reshapeND(shape: [n, s[1], h, w]), [moved])
        return [try c.emit(.crop(crops: [[0, 0], [0, 0]] + crops), [full])]
    }

    // MARK: reshape_like

    /// Python slice bounds shape[begin:end] (negative counts from the end, clamped).
    static func slice(_ shape: [Int], begin: Int, end: Int?) -> ArraySlice<Int> {
        let r = shape.count
        func clamp(_ v: Int) -> Int { min(max(v < 0 ? v + r : v, 0), r) }
        let lo = clamp(begin), hi = end.map(clamp) ?? r
        return lo < hi ? shape[lo..<hi] : []
    }

    static func reshapeLike(_ c: MILOpContext) throws -> [MILValue] {
        let refs = try c.bindings("ref_tensors")
        func scalars(_ p: String) throws -> [Double] {
            try c.bindings(p).map { n, v in
                guard case let .constant(k) = v, k.elementCount == 1, let d = k.doubles().first else {
                    throw LayerImportFailure("needs \(p) of constant scalars, but '\(n)' is not one")
                }
                return d
            }
        }
        let begins = try scalars("begins"), ends = try scalars("ends"), masks = try scalars("end_masks")
        guard !refs.isEmpty, begins.count == refs.count, ends.count == refs.count, masks.count == refs.count else {
            throw LayerImportFailure("has \(refs.count) ref_tensors, \(begins.count) begins, \(ends.count) ends and \(masks.count) end_masks; expected as many of each (at least one)")
        }
        var target: [Int] = []
        for (i, (n, v)) in refs.enumerated() {
            let shape: [Int]
            switch v {
            case let .constant(k): shape = k.shape
            case .tensor: shape = try knownShape(c, try c.importer.tensor(named: n, value: v))
            case .none: throw LayerImportFailure("reads '\(n)', which has no value")
            }
            guard let b = Int(exactly: begins[i]), let e = Int(exactly: ends[i]), abs(b) <= Node.maxRank, abs(e) <= Node.maxRank else {
                throw LayerImportFailure("has begins[\(i)] \(begins[i]) / ends[\(i)] \(ends[i]); expected integers")
            }
            target += slice(shape, begin: b, end: masks[i] != 0 ? nil : e)
        }
        guard target.count <= Node.maxRank else { throw LayerImportFailure("makes a rank-\(target.count) shape; mlconv supports rank ≤ \(Node.maxRank)") }
        let total = try Checked.product(target, "reshape_like shape")
        if case let .constant(k)? = try c.value("x")?.1 {
            guard k.elementCount == total else {
                throw LayerImportFailure("reshapes a constant of shape \(k.shape) to \(target): the element counts differ")
            }
            return [.constant(MILShapeOps.reshaped(k, target))]
        }
        let x = try c.tensor("x")
        let xs = c.shape(x)
        if !xs.contains(TensorType.unknown), try Checked.product(xs, "input size") != total {
            throw LayerImportFailure("reshapes its input \(formatShape(xs)) to \(formatShape(target)): the element counts differ")
        }
        return [try c.emit(.reshapeND(shape: target), [x])]
    }

    // MARK: non_maximum_suppression, non_zero

    /// non_maximum_suppression. iOS15: boxes [n, B, 4], scores [n, B, K], score_threshold →
    /// (boxes [n, M, 4], scores [n, M, K], indices [n, M], counts [n]). iOS17 (no
    /// score_threshold, three outputs): boxes [n, 4, B], scores [n, K, B] → (boxes [n, 4, M],
    /// scores [n, K, M], indices [n, M]); every box takes part (threshold −∞). Rows past the count
    /// are zeros, indices −1 (`MLGraph.NonMaximumSuppressionAttributes`).
    static func nonMaximumSuppression(_ c: MILOpContext) throws -> [MILValue] {
        let iOS17 = !c.has("score_threshold")
        guard c.op.outputs.count == (iOS17 ? 3 : 4) else {
            throw LayerImportFailure("has \(c.op.outputs.count) outputs; expected 4 (with score_threshold, iOS15) or 3 (without, iOS17)")
        }
        let iou = try c.float("iou_threshold")
        let score = iOS17 ? -Float.infinity : try c.float("score_threshold")
        guard !iou.isNaN, !score.isNaN else { throw LayerImportFailure("has a NaN iou_threshold or score_threshold") }
        let maxBoxes = try positive(try c.int("max_boxes"), "max_boxes")
        let a = NonMaximumSuppressionAttributes(iouThreshold: iou, scoreThreshold: score, maxBoxes: maxBoxes,
                                                perClassSuppression: try c.bool("per_class_suppression", default: false))
        var boxes = try c.tensor("boxes"), scores = try c.tensor("scores")
        for (t, what, last) in [(boxes, "boxes", 4), (scores, "scores", -1)] {
            let s = c.shape(t)
            guard s.count == 3 else { throw LayerImportFailure("has \(what) of shape \(formatShape(s)); expected rank 3") }
            let coordAxis = iOS17 ? 1 : 2
            if last > 0, s[coordAxis] != last {
                throw LayerImportFailure("has boxes of shape \(formatShape(s)); expected \(iOS17 ? "[n, 4, B] (iOS17)" : "[n, B, 4] (iOS15)")")
            }
        }
        if !iOS17 {
            let outs = try c.b.emitMulti(c.name, .nonMaximumSuppression(a), [boxes, scores], outputs: c.op.outputs.map(\.name))
            return outs.map { .tensor($0) }
        }
        boxes = try c.helper("boxes_last", .transpose(perm: [0, 2, 1]), [boxes])
        scores = try c.helper("scores_last", .transpose(perm: [0, 2, 1]), [scores])
        let outs = try c.b.emitMulti(c.name + "__nms", .nonMaximumSuppression(a), [boxes, scores],
                                     outputs: ["boxes", "scores", "indices", "counts"].map { c.name + "__nms_" + $0 })
        return [try c.emit(.transpose(perm: [0, 2, 1]), [outs[0]], output: 0),
                try c.emit(.transpose(perm: [0, 2, 1]), [outs[1]], output: 1),
                try c.emit(.identity, [outs[2]], output: 2)]
    }

    /// non_zero: int32 [N, rank] multi-indices of the non-zero elements in row-major order
    /// (numpy.argwhere). N is known only at run time (the graph runs in the dynamic executor) and
    /// must be ≥ 1: an input without a non-zero element fails at prediction time. A constant input
    /// is evaluated at import.
    static func nonZero(_ c: MILOpContext) throws -> [MILValue] {
        if case let .constant(k)? = try c.value("x")?.1 {
            let v = k.doubles()
            guard !k.shape.isEmpty, v.count == k.elementCount else { throw LayerImportFailure("needs a numeric constant of rank ≥ 1") }
            var rows: [Double] = []
            for (p, e) in v.enumerated() where e != 0 {
                var rest = p
                var coord = [Double](repeating: 0, count: k.shape.count)
                for d in stride(from: k.shape.count - 1, through: 0, by: -1) {
                    coord[d] = Double(rest % k.shape[d]); rest /= k.shape[d]
                }
                rows += coord
            }
            guard !rows.isEmpty else {
                throw LayerImportFailure("has a constant input without a non-zero element; the result would be empty, which mlconv's IR cannot hold")
            }
            return [.constant(MILConst(shape: [rows.count / k.shape.count, k.shape.count], dataType: .int32, numbers: rows))]
        }
        let x = try c.tensor("x")
        guard c.rank(x) >= 1 else { throw LayerImportFailure("has a rank-0 input; expected rank ≥ 1") }
        let li = LayerImporter(builder: c.b, layers: [], consumers: [:], description: Spec.ModelDescription())
        let coords = try li.whereNonZero(x, name: c.name + "__where", out: c.name + "__coords")
        return [try c.emit(.cast(to: .int32), [coords])]
    }

    // MARK: random

    static func seed(_ c: MILOpContext) throws -> Int64 {
        guard let s = try c.ints("seed") else { return -1 }
        guard s.count == 1 else { throw LayerImportFailure("has seed \(s); expected one integer") }
        return Int64(s[0])
    }

    /// Samples of `d` in the shape `shape` names: a constant (fill of that shape, then random) or
    /// a run-time int32 vector (dynamic fill).
    static func random(_ c: MILOpContext, _ d: RandomDistribution) throws -> [MILValue] {
        try d.checkedParameters(stdDev: "stddev", low: "low", high: "high")
        let attrs = RandomAttributes(d, seed: try seed(c))
        guard let (n, v) = try c.value("shape") else { throw LayerImportFailure("has no shape") }
        let shaped: String
        if case .constant = v {
            guard let s = try c.ints("shape"), !s.isEmpty, s.count <= Node.maxRank else {
                throw LayerImportFailure("has a shape that is not a vector of 1…\(Node.maxRank) integers")
            }
            for e in s { _ = try positive(e, "shape entry") }
            _ = try Checked.product(s, "shape")
            shaped = try c.helper("shape", .fill(FillAttributes(shape: s, value: 0)), [])
        } else {
            let t = try c.importer.tensor(named: n, value: v)
            let ls = c.shape(t)
            guard ls.count == 1, ls[0] >= 1, ls[0] <= Node.maxRank else {
                throw LayerImportFailure("takes its shape from a tensor of shape \(formatShape(ls)); expected a vector of known length 1…\(Node.maxRank)")
            }
            shaped = try c.helper("shape", .fill(FillAttributes(shape: [], value: 0)), [t])
        }
        return [try c.emit(.random(attrs), [shaped])]
    }

    /// random_categorical: x [..., K] of logits (mode "logits") or probabilities ("probs") →
    /// [..., size] class indices (float), by the NeuralNetwork categoricalDistribution import.
    static func randomCategorical(_ c: MILOpContext) throws -> [MILValue] {
        let mode = try c.string("mode", default: "logits")
        guard mode == "logits" || mode == "probs" else { throw LayerImportFailure("has mode '\(mode)'; expected logits or probs") }
        let size = try positive(try c.int("size", default: 1), "size")
        let x = try c.tensor("x")
        let q = Spec.CategoricalDistributionLayerParams(seed: try seed(c), numSamples: Int64(size), isLogits: mode == "logits")
        let li = LayerImporter(builder: c.b, layers: [], consumers: [:], description: Spec.ModelDescription())
        let y = try li.randomLayer(.categoricalDistribution(q), [x], name: c.name + "__categorical", out: c.name + "__categorical")
        return [try c.emit(.identity, [y])]
    }

    static var mappers: [String: MILOpMapper] {
        var m: [String: MILOpMapper] = [:]
        m["space_to_depth"] = spaceToDepth
        m["depth_to_space"] = depthToSpace
        m["pixel_shuffle"] = pixelShuffle
        m["pixel_unshuffle"] = pixelUnshuffle
        m["space_to_batch"] = spaceToBatch
        m["batch_to_space"] = batchToSpace
        m["reshape_like"] = reshapeLike
        m["non_maximum_suppression"] = nonMaximumSuppression
        m["non_zero"] = nonZero
        m["random_bernoulli"] = { c in try random(c, .bernoulli(probability: try c.float("prob", default: 0.5))) }
        m["random_normal"] = { c in
            try random(c, .normal(mean: try c.float("mean", default: 0), stdDev: try c.float("stddev", default: 1)))
        }
        m["random_uniform"] = { c in try random(c, .uniform(low: try c.float("low", default: 0), high: try c.float("high", default: 1))) }
        m["random_categorical"] = randomCategorical
        return m
    }
}
