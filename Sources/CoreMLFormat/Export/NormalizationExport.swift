// IR reductions and normalisations → Core ML classic layers: reduce, mvn (+ scale), batchnorm
// instanceNormalization, l2normalize, lrn. Shapes are seen through the writer's NHWC view
// (`ExportWriter.view`): rank 4 as is, rank 3 [N, S, D] → [N, S, 1, D], rank 2 [N, D] → [N, 1, 1, D].
import MLGraph

extension ExportWriter {
    /// The view axes ([N, H, W, C] numbering) of IR axes `axes` of a rank-`rank` tensor.
    static func viewAxes(_ axes: [Int], rank: Int) -> [Int]? {
        var out: [Int] = []
        for a in axes {
            switch (rank, a) {
            case (4, _): out.append(a)
            case (3, 0), (2, 0): out.append(0)
            case (3, 1): out.append(1)
            case (3, 2), (2, 1): out.append(3)
            default: return nil
            }
        }
        return out
    }

    /// Lowers `reduce`, `logSoftmax`, `layerNorm`, `instanceNorm`, `l2Norm`, `localResponseNorm`.
    mutating func lowerNormalization(_ node: Node, _ ins: [TensorType], _ inBlobs: [String], _ out: String) {
        let x = ins[0]
        guard let v = Self.view(x.shape) else {
            fail(node, "\(node.op.name) on a rank-\(x.rank) tensor", "The classic layers take rank-2, 3 or 4 tensors.")
            return
        }
        /// The resolved IR axes as view axes, with the batch axis accepted only when N is 1.
        func axes(_ given: [Int]) -> Set<Int>? {
            guard let r = resolveAxisSet(given, rank: x.rank), let va = Self.viewAxes(r, rank: x.rank) else { return nil }
            if va.contains(0) {
                guard v[0] == 1 else { return nil }
                notes.append("node '\(node.name)': the batch axis (size 1) is among the axes; Core ML reduces C, H, W only")
            }
            return Set(va.filter { $0 != 0 })
        }
        /// `s` with the view axes of size 1 added (reducing or normalising them changes nothing).
        func widened(_ s: Set<Int>) -> Set<Int> { s.union((1...3).filter { v[$0] == 1 }) }

        switch node.op {
        case let .reduce(a):
            guard let s = axes(a.axes) else {
                return fail(node, "reduction over axes \(a.axes) of shape \(formatShape(x.shape)) with batch size \(v[0])",
                            "Reduce non-batch axes (C, H, W of the NHWC view).")
            }
            let mode: Spec.ReduceLayerParams.ReduceOperation
            switch a.function {
            case .sum: mode = .sum
            case .mean: mode = .avg
            case .prod: mode = .prod
            case .max: mode = .max
            case .min: mode = .min
            case .l1Norm: mode = .l1
            case .l2Norm: mode = .l2
            case .sumSquare: mode = .sumsquare
            case .logSumExp:
                return fail(node, "reduce log_sum_exp has no classic layer (Core ML LOGSUM is Σ log(x + ε), not log Σ exp x)",
                            "Export a graph without log-sum-exp reductions, or keep the model in mlconv's bundle format.")
            }
            // The Core ML axis set X with s ⊆ X ⊆ s ∪ (size-1 axes).
            let w = widened(s)
            let candidates: [(Spec.ReduceLayerParams.ReduceAxis, Set<Int>)] = [(.c, [3]), (.h, [1]), (.w, [2]), (.hw, [1, 2]), (.chw, [1, 2, 3])]
            guard let axis = candidates.first(where: { s.isSubset(of: $0.1) && $0.1.isSubset(of: w) })?.0 else {
                return fail(node, "reduction over view axes \(s.sorted()) of \(formatShape(v)) (C and one of H, W)",
                            "Core ML's classic reduce takes C, H, W, H×W or C×H×W.")
            }
            // Core ML keeps the reduced axes with size 1: the IR output must have that NHWC view.
            let want = (0..<4).map { $0 != 0 && s.contains($0) ? 1 : v[$0] }
            guard let outShape = types[node.outputs[0]]?.shape, Self.view(outShape) == want else {
                return fail(node, "reduction output \(formatShape(types[node.outputs[0]]?.shape ?? [])) is not the NHWC view \(formatShape(want)) "
                    + "Core ML's reduce produces", "Use keep_dims, or reduce H×W / C×H×W (whose results are [N, C] / [N, 1] too).")
            }
            emit(node.name, inBlobs, [out], .reduce(Spec.ReduceLayerParams(mode: mode, epsilon: 1e-6, axis: axis)))
        case .logSoftmax:
            fail(node, "log-softmax has no classic layer (softmax followed by unary LOG underflows to −∞ where log-softmax is finite)",
                 "Use softmax, or keep the model in mlconv's bundle format.")
        case let .layerNorm(a):
            guard let s = axes(a.axes) else {
                return fail(node, "layer normalisation over axes \(a.axes) with batch size \(v[0])", "Normalise non-batch axes.")
            }
            let w = widened(s)
            let across: Bool
            if w == [1, 2, 3] { across = true }
            else if w == [1, 2] || (w.isSuperset(of: [1, 2]) && v[3] == 1) { across = false }
            else {
                return fail(node, "layer normalisation over view axes \(s.sorted()) of \(formatShape(v))",
                            "Core ML's mvn normalises over C×H×W or H×W (per channel).")
            }
            let mvn = CoreMLLayer.mvn(Spec.MeanVarianceNormalizeLayerParams(acrossChannels: across, normalizeVariance: true, epsilon: a.epsilon))
            let gamma = node.weights["gamma"], beta = node.weights["beta"]
            guard gamma != nil || beta != nil else { return emit(node.name, inBlobs, [out], mvn) }
            guard let r = resolveAxisSet(a.axes, rank: x.rank), let va = Self.viewAxes(r, rank: x.rank) else { return }
            // gamma/beta (shaped like the normalised axes) spread over [C, H, W] for a scale layer.
            func chw(_ t: ConstantTensor?, _ fill: Float) -> [Float] {
                let values = t?.floats()
                let (h, ww, c) = (v[1], v[2], v[3])
                var outValues = [Float](repeating: fill, count: c * h * ww)
                guard let values else { return outValues }
                for ci in 0..<c { for hi in 0..<h { for wi in 0..<ww {
                    let idx = [0, hi, wi, ci]
                    var flat = 0
                    for ax in va { flat = flat * v[ax] + idx[ax] }
                    outValues[(ci * h + hi) * ww + wi] = values[flat]
                } } }
                return outValues
            }
            let shape = [UInt64(v[3]), UInt64(v[1]), UInt64(v[2])]
            let scale = CoreMLLayer.scale(Spec.ScaleLayerParams(
                shapeScale: shape, scale: Spec.WeightParams(chw(gamma, 1)), hasBias: true, shapeBias: shape, bias: Spec.WeightParams(chw(beta, 0))))
            chain([mvn, scale], name: node.name, input: inBlobs[0], output: out)
        case let .instanceNorm(epsilon):
            let c = v[3]
            let gamma = node.weights["gamma"].map { weightParams($0, node: node, role: "gamma") } ?? Spec.WeightParams([Float](repeating: 1, count: c))
            let beta = node.weights["beta"].map { weightParams($0, node: node, role: "beta") } ?? Spec.WeightParams([Float](repeating: 0, count: c))
            guard let gamma, let beta else { return }
            emit(node.name, inBlobs, [out], .batchnorm(Spec.BatchnormLayerParams(
                channels: UInt64(c), computeMeanVar: true, instanceNormalization: true, epsilon: epsilon, gamma: gamma, beta: beta,
                mean: Spec.WeightParams([Float](repeating: 0, count: c)), variance: Spec.WeightParams([Float](repeating: 1, count: c)))))
        case let .l2Norm(a):
            guard let s = axes(a.axes), widened(s) == [1, 2, 3] else {
                return fail(node, "L2 normalisation over axes \(a.axes) of shape \(formatShape(x.shape))",
                            "Core ML's l2normalize normalises over all of C, H, W (MIL l2_norm's last three axes).")
            }
            emit(node.name, inBlobs, [out], .l2normalize(epsilon: a.epsilon))
        case let .localResponseNorm(a):
            emit(node.name, inBlobs, [out], .lrn(Spec.LRNLayerParams(alpha: a.alpha, beta: a.beta, localSize: UInt64(a.size), k: a.k)))
        default:
            fail(node, "\(node.op.name) is not a reduction or normalisation", "Internal error: report it.")
        }
    }
}
