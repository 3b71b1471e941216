// MARK: nnmath — the random layers of NeuralNetwork v2 (randomNormal / randomUniform /
// randomBernoulli Like / Static / Dynamic, categoricalDistribution) → `Op.random`.
//
// Core ML does not define its generator, so no converter can reproduce Apple's samples. mlconv
// samples with its own seeded generator (documented on `MLGraph.RandomAttributes`: a splitmix64
// counter stream, Box–Muller normals), from the layer's `seed`: the distribution is Core ML's,
// the individual numbers are not, and every prediction draws the same numbers.
import MLGraph

extension LayerImporter {
    /// Whether `p` is one of the random layers.
    static func isRandomLayer(_ p: Spec.LayerParameters) -> Bool {
        switch p {
        case .randomNormalLike, .randomNormalStatic, .randomNormalDynamic, .randomUniformLike, .randomUniformStatic,
             .randomUniformDynamic, .randomBernoulliLike, .randomBernoulliStatic, .randomBernoulliDynamic, .categoricalDistribution:
            return true
        default: return false
        }
    }

    /// `*Like`: samples in the input's shape; `*Static`: in `outputShape`; `*Dynamic`: in the
    /// shape the rank-1 input holds at prediction time. categoricalDistribution: see `categorical`.
    func randomLayer(_ p: Spec.LayerParameters, _ ins: [String], name: String, out: String) throws -> String {
        func normal(_ mean: Float, _ std: Float) -> RandomDistribution { .normal(mean: mean, stdDev: std) }
        func uniform(_ lo: Float, _ hi: Float) -> RandomDistribution { .uniform(low: lo, high: hi) }
        switch p {
        case let .randomNormalLike(q): return try random(normal(q.mean, q.stdDev), q.seed, like: ins, name: name, out: out)
        case let .randomUniformLike(q): return try random(uniform(q.minVal, q.maxVal), q.seed, like: ins, name: name, out: out)
        case let .randomBernoulliLike(q): return try random(.bernoulli(probability: q.prob), q.seed, like: ins, name: name, out: out)
        case let .randomNormalStatic(q):
            return try random(normal(q.mean, q.stdDev), q.seed, shape: q.outputShape, ins, name: name, out: out)
        case let .randomUniformStatic(q):
            return try random(uniform(q.minVal, q.maxVal), q.seed, shape: q.outputShape, ins, name: name, out: out)
        case let .randomBernoulliStatic(q):
            return try random(.bernoulli(probability: q.prob), q.seed, shape: q.outputShape, ins, name: name, out: out)
        case let .randomNormalDynamic(q): return try random(normal(q.mean, q.stdDev), q.seed, shapeInput: ins, name: name, out: out)
        case let .randomUniformDynamic(q): return try random(uniform(q.minVal, q.maxVal), q.seed, shapeInput: ins, name: name, out: out)
        case let .randomBernoulliDynamic(q): return try random(.bernoulli(probability: q.prob), q.seed, shapeInput: ins, name: name, out: out)
        case let .categoricalDistribution(q): return try categorical(q, ins, name: name, out: out)
        default: throw LayerImportFailure("is not a random layer (internal dispatch error; please report it)")
        }
    }

    private func checked(_ d: RandomDistribution) throws -> RandomDistribution {
        try d.checkedParameters(stdDev: "stdDev", low: "minVal", high: "maxVal")
        return d
    }

    private func random(_ d: RandomDistribution, _ seed: Int64, like ins: [String], name: String, out: String) throws -> String {
        guard ins.count == 1 else { throw LayerImportFailure("expects 1 input (whose shape the output takes), found \(ins.count)") }
        return try b.emit(name, .random(RandomAttributes(checked(d), seed: seed)), ins, output: out)
    }

    private func random(_ d: RandomDistribution, _ seed: Int64, shape: [UInt64], _ ins: [String], name: String, out: String) throws -> String {
        guard ins.isEmpty else { throw LayerImportFailure("takes no input (the shape is outputShape), found \(ins.count)") }
        let s = try Checked.ints(shape, "outputShape", in: 1...Node.maxCountAttribute)
        guard !s.isEmpty, s.count <= Node.maxRank else { throw LayerImportFailure("has outputShape \(shape); expected rank 1…\(Node.maxRank)") }
        _ = try Checked.product(s, "outputShape")
        let shaped = try b.emit(name + "__shape", .fill(FillAttributes(shape: s, value: 0)), [])
        return try b.emit(name, .random(RandomAttributes(checked(d), seed: seed)), [shaped], output: out)
    }

    private func random(_ d: RandomDistribution, _ seed: Int64, shapeInput ins: [String], name: String, out: String) throws -> String {
        guard ins.count == 1 else { throw LayerImportFailure("expects 1 input (the output shape), found \(ins.count)") }
        let shaped = try b.emit(name + "__shape", .fill(FillAttributes(shape: [], value: 0)), ins)
        return try b.emit(name, .random(RandomAttributes(checked(d), seed: seed)), [shaped], output: out)
    }

    /// categoricalDistribution: input [D1, …, D(R−1), K] of logits (or probabilities when not
    /// `isLogits`) → [D1, …, D(R−1), numSamples] class indices as float32. Sampled with the
    /// Gumbel-max rule: index = argmax_k (l_k/T + g_k), g = −log(−log u), u uniform in (0, 1)
    /// from `Op.random` — an exact draw from softmax(l/T). Probabilities become logits log(p + eps)
    /// (eps: the layer's, 0 / unset meaning the proto's default 1e-10); a temperature of 0 (unset)
    /// means the proto's default 1.
    private func categorical(_ q: Spec.CategoricalDistributionLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        guard ins.count == 1 else { throw LayerImportFailure("expects 1 input (logits or probabilities), found \(ins.count)") }
        try requireExact()
        let x = ins[0], s = b.shape(x)
        let samples = try Checked.int(q.numSamples, "numSamples", in: 1...Node.maxCountAttribute)
        let t = q.temperature == 0 ? 1 : q.temperature
        let eps = q.eps == 0 ? 1e-10 : q.eps
        guard t.isFinite, t > 0 else { throw LayerImportFailure("has temperature \(q.temperature); expected a finite value > 0") }
        guard eps.isFinite, eps > 0 else { throw LayerImportFailure("has eps \(q.eps); expected a finite value > 0") }
        guard !s.isEmpty, s.count <= Node.maxRank - 1 else { throw LayerImportFailure("needs an input of rank 1…\(Node.maxRank - 1), found \(s)") }
        var logits = x
        if !q.isLogits { logits = try b.emit(name + "__logits", .unary(UnaryAttributes(.log, epsilon: eps)), [x]) }
        // [.., K] → [.., 1, K] → [.., numSamples, K], each row scaled by 1/T.
        let expanded = try b.emit(name + "__expand", .expandDims(axes: [s.count - 1]), [logits])
        let tiled = try b.emit(name + "__tile", .tile(reps: Array(repeating: 1, count: s.count - 1) + [samples, 1]), [expanded])
        let scaled = t == 1 ? tiled : try b.emit(name + "__temperature", .binary(.mul), [tiled], weights: ["y": ConstantTensor(shape: [1], floats: [1 / t])])
        let u = try b.emit(name + "__uniform", .random(RandomAttributes(.uniform(low: 0, high: 1), seed: q.seed)), [tiled])
        let logU = try b.emit(name + "__log_u", .unary(UnaryAttributes(.log)), [u])
        let logNegLogU = try b.emit(name + "__log_neg_log_u", .unary(UnaryAttributes(.log, scale: -1)), [logU])
        let perturbed = try b.emit(name + "__perturbed", .binary(.sub), [scaled, logNegLogU])
        let index = try b.emit(name + "__index", .argmax(ArgReduceAttributes(axis: -1, keepDims: false)), [perturbed])
        return try b.emit(name, .cast(to: .float32), [index], output: out)
    }
}

extension RandomDistribution {
    /// Checks the parameters: finite mean and stdDev ≥ 0, finite low ≤ high, probability in
    /// [0, 1]. `stdDev`, `low` and `high` are the parameter names the source format uses (Core ML
    /// NeuralNetwork: stdDev / minVal / maxVal; MIL: stddev / low / high), for the message.
    /// - Throws: `LayerImportFailure` naming the parameters and the accepted range.
    func checkedParameters(stdDev: String, low: String, high: String) throws {
        switch self {
        case let .normal(mean, std):
            guard mean.isFinite, std.isFinite, std >= 0 else {
                throw LayerImportFailure("has mean \(mean), \(stdDev) \(std); expected finite values, \(stdDev) ≥ 0")
            }
        case let .uniform(lo, hi):
            guard lo.isFinite, hi.isFinite, lo <= hi else {
                throw LayerImportFailure("has \(low) \(lo), \(high) \(hi); expected finite values, \(low) ≤ \(high)")
            }
        case let .bernoulli(p):
            guard p >= 0, p <= 1 else { throw LayerImportFailure("has prob \(p); expected a probability in [0, 1]") }
        }
    }
}
