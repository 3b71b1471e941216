// Core ML reduction and normalisation layers → IR `reduce`, `layerNorm`, `instanceNorm`,
// `l2Norm`, `localResponseNorm`. Blobs are NHWC [1, H, W, C] (vectors [1, C] are made NHWC
// first), so Core ML's C, H, W are IR axes 3, 1, 2.
import MLGraph

extension LayerImporter {
    /// Why a classic reduce layer cannot be imported, or nil.
    static func reduceUnsupportedReason(_ p: Spec.ReduceLayerParams) -> String? {
        if reduceFunction(p.mode) == nil {
            switch p.mode {
            case .logsum: break  // Layers/ClassicVariants.swift
            case .argmax:
                if let a = reduceAxes(p.axis), a.count != 1 { return "reduce ARGMAX takes a single axis (C, H or W), found \(p.axis.rawValue)" }
            default: return "reduce mode \(p.mode.rawValue) is unknown"
            }
        }
        if reduceAxes(p.axis) == nil { return "reduce axis \(p.axis.rawValue) is unknown" }
        return nil
    }

    /// The IR function of a classic reduce mode (Core ML: SUM Σx, AVG Σx/n, PROD Πx, SUMSQUARE
    /// Σx², L1 Σ|x|, L2 sqrt(Σx²), MAX, MIN).
    static func reduceFunction(_ m: Spec.ReduceLayerParams.ReduceOperation) -> ReduceFunction? {
        switch m {
        case .sum: return .sum
        case .avg: return .mean
        case .prod: return .prod
        case .sumsquare: return .sumSquare
        case .l1: return .l1Norm
        case .l2: return .l2Norm
        case .max: return .max
        case .min: return .min
        default: return nil
        }
    }

    /// The NHWC axes of a classic reduce axis.
    static func reduceAxes(_ a: Spec.ReduceLayerParams.ReduceAxis) -> [Int]? {
        switch a {
        case .chw: return [1, 2, 3]
        case .hw: return [1, 2]
        case .c: return [3]
        case .h: return [1]
        case .w: return [2]
        default: return nil
        }
    }

    /// Classic reduce: the reduced axes stay with size 1 (Core ML: [C, H, W] → [1, H, W] for C,
    /// [C, 1, 1] for HW, …), so the result is the NHWC blob with those axes set to 1.
    func reduce(_ p: Spec.ReduceLayerParams, _ x0: String, name: String, out: String) throws -> String {
        if let t = try classicReduceExtra(p, x0, name: name, out: out) { return t }  // ARGMAX, LOGSUM
        guard let f = Self.reduceFunction(p.mode), let axes = Self.reduceAxes(p.axis) else {
            throw LayerImportFailure(Self.reduceUnsupportedReason(p) ?? "unsupported reduction")
        }
        let x = try b.toNHWC(x0, base: name)
        return try b.emit(name, .reduce(ReduceAttributes(function: f, axes: axes, keepDims: true)), [x], output: out)
    }

    /// mvn with normalizeVariance: (x − mean)/sqrt(var + ε) over C, H, W (acrossChannels) or over
    /// H, W per channel — `layerNorm` over those axes without gamma/beta (coremltools lowers MIL
    /// `layer_norm` to this layer).
    func mvnVariance(_ p: Spec.MeanVarianceNormalizeLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let axes = p.acrossChannels ? [1, 2, 3] : [1, 2]
        return try b.emit(name, .layerNorm(LayerNormAttributes(axes: axes, epsilon: p.epsilon)), [x], output: out)
    }

    /// l2normalize: x / sqrt(Σ x² + ε) over C, H, W (MIL `l2_norm`'s value inference).
    func l2normalize(_ epsilon: Float, _ x0: String, name: String, out: String) throws -> String {
        let axes = b.isVector(x0) ? [1] : [1, 2, 3]
        return try b.emit(name, .l2Norm(L2NormAttributes(axes: axes, epsilon: epsilon)), [x0], output: out)
    }

    /// lrn across channels (the last IR axis of both blob layouts).
    func lrn(_ p: Spec.LRNLayerParams, _ x0: String, name: String, out: String) throws -> String {
        guard p.localSize >= 1, p.localSize <= UInt64(Node.maxCountAttribute) else {
            throw LayerImportFailure("has localSize \(p.localSize); expected 1…\(Node.maxCountAttribute)")
        }
        let a = LocalResponseNormAttributes(size: Int(p.localSize), alpha: p.alpha, beta: p.beta, k: p.k)
        return try b.emit(name, .localResponseNorm(a), [x0], output: out)
    }

    /// batchnorm with instanceNormalization: statistics over H, W per channel at run time,
    /// y = gamma·(x − mean)/sqrt(var + ε) + beta — `instanceNorm` (the stored mean and variance
    /// are not used).
    func instanceNorm(_ p: Spec.BatchnormLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let c = b.chw(x).c
        guard try Checked.int(p.channels, "channels") == c else { throw LayerImportFailure("has \(p.channels) channels but its input has \(c)") }
        let w: [String: ConstantTensor] = [
            "gamma": try WeightImport.constant(p.gamma, shape: [c], what: "gamma"),
            "beta": try WeightImport.constant(p.beta, shape: [c], what: "beta"),
        ]
        return try b.emit(name, .instanceNorm(epsilon: p.epsilon), [x], output: out, weights: w)
    }
}
