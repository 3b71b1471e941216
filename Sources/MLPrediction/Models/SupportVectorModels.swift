// Core ML support vector machines (SVM.proto). The parameters are LibSVM's model (coremltools
// writes scikit-learn's `_dual_coef_` and LibSVM's ρ, see converters/sklearn/_SVC.py), so the
// decision values, one-vs-one votes and pairwise-coupling probabilities follow LibSVM:
// decision = Σ coef_i · K(x, sv_i) − ρ.
import CoreMLFormat
import Foundation

/// `SVM.proto` `Kernel`.
public enum SVMKernel: Equatable, Sendable {
    /// xᵀx'.
    case linear
    /// exp(−γ‖x − x'‖²).
    case rbf(gamma: Double)
    /// (γ xᵀx' + c)^degree.
    case polynomial(gamma: Double, c: Double, degree: Int32)
    /// tanh(γ xᵀx' + c).
    case sigmoid(gamma: Double, c: Double)
}

/// One entry of a sparse support vector: `index` is 1-based (feature `index − 1`), as LibSVM.
public struct SVMSparseEntry: Equatable, Sendable {
    public var index: Int32
    public var value: Double
    public init(index: Int32, value: Double) { self.index = index; self.value = value }
}

/// `SVM.proto` support vectors.
public enum SVMSupportVectors: Equatable, Sendable {
    case dense([[Double]])
    /// Entries with strictly increasing indices; absent features are 0.
    case sparse([[SVMSparseEntry]])

    public var count: Int {
        switch self {
        case let .dense(v): return v.count
        case let .sparse(v): return v.count
        }
    }
}

/// `SupportVectorRegressor` parameters.
public struct SupportVectorRegressorParameters: Equatable, Sendable {
    public var kernel: SVMKernel
    public var supportVectors: SVMSupportVectors
    /// One per support vector.
    public var coefficients: [Double]
    public var rho: Double
    public init(kernel: SVMKernel, supportVectors: SVMSupportVectors, coefficients: [Double], rho: Double) {
        self.kernel = kernel
        self.supportVectors = supportVectors
        self.coefficients = coefficients
        self.rho = rho
    }
}

/// `SupportVectorClassifier` parameters (LibSVM's multi-class model).
public struct SupportVectorClassifierParameters: Equatable, Sendable {
    public var kernel: SVMKernel
    /// Support vectors of class 0 first, then class 1, …: one count per class.
    public var supportVectorsPerClass: [Int32]
    public var supportVectors: SVMSupportVectors
    /// K − 1 rows, one value per support vector each (LibSVM's `sv_coef`).
    public var coefficients: [[Double]]
    /// K(K−1)/2 values, pairs (0,1), (0,2), …, (0,K−1), (1,2), … .
    public var rho: [Double]
    /// Platt-sigmoid parameters per pair (same order); both empty, or K(K−1)/2 values each.
    public var probA: [Double]
    public var probB: [Double]
    public var labels: ClassLabels
    public init(kernel: SVMKernel, supportVectorsPerClass: [Int32], supportVectors: SVMSupportVectors,
                coefficients: [[Double]], rho: [Double], probA: [Double] = [], probB: [Double] = [], labels: ClassLabels) {
        self.kernel = kernel
        self.supportVectorsPerClass = supportVectorsPerClass
        self.supportVectors = supportVectors
        self.coefficients = coefficients
        self.rho = rho
        self.probA = probA
        self.probB = probB
        self.labels = labels
    }
}

/// Validated support vectors and kernel: computes K(x, sv_i) for every support vector.
struct KernelMachine: Sendable {
    enum Storage: Sendable {
        /// `count × width` row-major.
        case dense([Double])
        /// CSR: entries of vector i are `start[i]..<start[i+1]`; `index` 0-based.
        case sparse(start: [Int], index: [Int], value: [Double])
    }
    let kernel: SVMKernel
    let storage: Storage
    let count: Int
    /// Dense: the vector length (the input width must equal it). Sparse: the largest index.
    let minimumWidth: Int
    let dense: Bool

    init(kernel: SVMKernel, vectors: SVMSupportVectors, inputWidth: Int?, model: String) throws {
        func bad(_ r: String) -> FeatureError { .invalidModel(model: model, reason: r) }
        switch kernel {
        case let .rbf(g) where !(g >= 0), let .sigmoid(g, _) where !(g >= 0), let .polynomial(g, _, _) where !(g >= 0):
            throw bad("kernel gamma is \(g); it must be ≥ 0")
        case let .polynomial(_, _, d) where d < 0:
            throw bad("polynomial kernel degree is \(d); it must be ≥ 0")
        default: break
        }
        self.kernel = kernel
        count = vectors.count
        switch vectors {
        case let .dense(v):
            let w = v.first?.count ?? (inputWidth ?? 0)
            for (i, r) in v.enumerated() where r.count != w {
                throw bad("support vector \(i) has \(r.count) values, support vector 0 has \(w)")
            }
            if let inputWidth, !v.isEmpty, inputWidth != w {
                throw bad("support vectors have \(w) values but the inputs describe \(inputWidth) features")
            }
            storage = .dense(v.flatMap { $0 })
            minimumWidth = w
            dense = true
        case let .sparse(v):
            var start = [0], index: [Int] = [], value: [Double] = []
            var maxIndex = 0
            for (i, r) in v.enumerated() {
                var previous: Int32 = 0
                for e in r {
                    guard e.index > previous else {
                        throw bad("sparse support vector \(i): index \(e.index) after \(previous) (indices are 1-based and increasing)")
                    }
                    if let inputWidth, Int(e.index) > inputWidth {
                        throw bad("sparse support vector \(i) uses feature index \(e.index), but the inputs describe \(inputWidth) features")
                    }
                    previous = e.index
                    index.append(Int(e.index) - 1)
                    value.append(e.value)
                    maxIndex = max(maxIndex, Int(e.index))
                }
                start.append(index.count)
            }
            storage = .sparse(start: start, index: index, value: value)
            minimumWidth = maxIndex
            dense = false
        }
    }

    /// The feature matrix of a batch: dense vectors fix the width; sparse ones need ≥ their largest index.
    func features(_ s: FeatureSignature, _ batch: [FeatureProvider]) throws -> ([Double], Int) {
        if dense && count > 0 { return (try s.numericMatrix(from: batch, width: minimumWidth), minimumWidth) }
        return try s.featureMatrix(from: batch, minimumWidth: minimumWidth)
    }

    /// k[i] = K(x, sv_i) for the feature vector `x[offset..<offset+width]`.
    func evaluate(_ x: UnsafeBufferPointer<Double>, offset xo: Int, width: Int, into k: inout [Double]) {
        switch storage {
        case let .dense(v):
            v.withUnsafeBufferPointer { vp in
                for i in 0..<count {
                    let vo = i * width
                    var s = 0.0
                    if case .rbf = kernel {
                        for j in 0..<width { let d = x[xo + j] - vp[vo + j]; s += d * d }
                    } else {
                        for j in 0..<width { s += x[xo + j] * vp[vo + j] }
                    }
                    k[i] = finish(s)
                }
            }
        case let .sparse(start, index, value):
            for i in 0..<count {
                var s = 0.0
                if case .rbf = kernel {
                    // ‖x − v‖² over every feature; v is 0 where it has no entry.
                    var e = start[i]
                    let end = start[i + 1]
                    for j in 0..<width {
                        var d = x[xo + j]
                        if e < end && index[e] == j { d -= value[e]; e += 1 }
                        s += d * d
                    }
                } else {
                    for e in start[i]..<start[i + 1] { s += x[xo + index[e]] * value[e] }
                }
                k[i] = finish(s)
            }
        }
    }

    /// The kernel of a dot product (or of the squared distance for RBF).
    @inline(__always)
    private func finish(_ s: Double) -> Double {
        switch kernel {
        case .linear: return s
        case let .rbf(g): return exp(-g * s)
        case let .polynomial(g, c, d): return Self.power(g * s + c, d)
        case let .sigmoid(g, c): return tanh(g * s + c)
        }
    }

    /// b^n for n ≥ 0 by repeated squaring (LibSVM's integer power).
    static func power(_ b: Double, _ n: Int32) -> Double {
        var result = 1.0, base = b, e = n
        while e > 0 {
            if e & 1 == 1 { result *= base }
            base *= base
            e >>= 1
        }
        return result
    }
}

/// A runnable `supportVectorRegressor`: Σ coef_i · K(x, sv_i) − ρ.
public struct SupportVectorRegressorModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    let machine: KernelMachine
    let coefficients: [Double]
    let rho: Double

    /// - Throws: `FeatureError.invalidModel` for a negative γ or degree, ragged or out-of-range
    ///   support vectors, or a coefficient count other than the support-vector count.
    public init(_ p: SupportVectorRegressorParameters, signature: FeatureSignature) throws {
        self.signature = signature
        modelDescription = signature.description
        machine = try KernelMachine(kernel: p.kernel, vectors: p.supportVectors, inputWidth: signature.numericWidth, model: signature.modelName)
        guard p.coefficients.count == machine.count else {
            throw FeatureError.invalidModel(model: signature.modelName,
                                            reason: "\(p.coefficients.count) coefficients for \(machine.count) support vectors")
        }
        coefficients = p.coefficients
        rho = p.rho
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let (x, width) = try machine.features(signature, batch)
        var k = [Double](repeating: 0, count: machine.count)
        let out = signature.regressionOutput
        let name = signature.regressionOutputName
        var result: [FeatureProvider] = []
        result.reserveCapacity(batch.count)
        x.withUnsafeBufferPointer { xp in
            for r in 0..<batch.count {
                machine.evaluate(xp, offset: r * width, width: width, into: &k)
                var s = 0.0
                for i in 0..<machine.count { s += coefficients[i] * k[i] }
                result.append([name: signature.regressionValue([s - rho], for: out)])
            }
        }
        return result
    }
}

/// A runnable `supportVectorClassifier` (LibSVM one-vs-one).
///
/// For each class pair (i, j), i < j, in LibSVM's order: decision d_ij = Σ_{sv of class i}
/// coef[j−1] · K + Σ_{sv of class j} coef[i] · K − ρ_ij; d_ij > 0 is a vote for i, else for j.
/// - Without probA/probB: the label is the class with most votes (the first on ties, as LibSVM
///   `svm_predict`); the probability output, if the description has one, holds each class's share
///   of the K(K−1)/2 votes (Core ML documents no probabilities for such models).
/// - With probA/probB: r_ij = 1 / (1 + e^(d_ij·A_ij + B_ij)) clipped to [1e−7, 1 − 1e−7]
///   (LibSVM `sigmoid_predict`); two classes: P = (r_01, 1 − r_01); more: LibSVM's
///   `multiclass_probability` (Wu, Lin & Weng 2004, method 2). The label is the first most
///   probable class, as LibSVM `svm_predict_probability`. scikit-learn couples binary
///   probabilities as well, so its binary `predict_proba` differs by up to ~0.5% (coremltools
///   prints that warning when converting).
public struct SupportVectorClassifierModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    let machine: KernelMachine
    let classes: Int
    let start: [Int]
    let perClass: [Int]
    /// `(K − 1) × count` row-major.
    let coefficients: [Double]
    let rho: [Double]
    let probA: [Double]
    let probB: [Double]
    let labels: ClassLabels

    /// - Throws: `FeatureError.invalidModel` when counts disagree (as Core ML's SVM validator:
    ///   K − 1 coefficient rows of one value per support vector, K per-class counts summing to the
    ///   support-vector count, K(K−1)/2 ρ values, probA/probB both absent or K(K−1)/2 each) or the
    ///   kernel is invalid.
    public init(_ p: SupportVectorClassifierParameters, signature: FeatureSignature) throws {
        let m = signature.modelName
        func bad(_ r: String) -> FeatureError { .invalidModel(model: m, reason: r) }
        self.signature = signature
        modelDescription = signature.description
        machine = try KernelMachine(kernel: p.kernel, vectors: p.supportVectors, inputWidth: signature.numericWidth, model: m)
        let k = p.labels.count
        guard k >= 2, k <= 1 << 16 else { throw bad("an SVM classifier needs 2 to 65536 class labels, found \(k)") }
        let pairs = k * (k - 1) / 2
        guard p.supportVectorsPerClass.count == k else {
            throw bad("numberOfSupportVectorsPerClass has \(p.supportVectorsPerClass.count) values for \(k) classes")
        }
        var start: [Int] = [], total = 0
        for (c, n) in p.supportVectorsPerClass.enumerated() {
            guard n >= 0 else { throw bad("class \(c) has \(n) support vectors") }
            start.append(total)
            total += Int(n)
        }
        guard total == machine.count else {
            throw bad("numberOfSupportVectorsPerClass sums to \(total), but there are \(machine.count) support vectors")
        }
        guard p.coefficients.count == k - 1 else { throw bad("\(p.coefficients.count) coefficient rows for \(k) classes (need \(k - 1))") }
        for (i, r) in p.coefficients.enumerated() where r.count != total {
            throw bad("coefficient row \(i) has \(r.count) values for \(total) support vectors")
        }
        guard p.rho.count == pairs else { throw bad("\(p.rho.count) rho values for \(pairs) class pairs") }
        guard p.probA.count == p.probB.count, p.probA.isEmpty || p.probA.count == pairs else {
            throw bad("probA has \(p.probA.count) and probB \(p.probB.count) values; both must be empty or have \(pairs) (one per class pair)")
        }
        classes = k
        self.start = start
        perClass = p.supportVectorsPerClass.map(Int.init)
        coefficients = p.coefficients.flatMap { $0 }
        rho = p.rho
        probA = p.probA
        probB = p.probB
        labels = p.labels
    }

    public var hasProbabilities: Bool { !probA.isEmpty }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let (x, width) = try machine.features(signature, batch)
        let n = machine.count
        var kv = [Double](repeating: 0, count: n)
        var dec = [Double](repeating: 0, count: rho.count)
        var out: [FeatureProvider] = []
        out.reserveCapacity(batch.count)
        try x.withUnsafeBufferPointer { xp in
            for r in 0..<batch.count {
                machine.evaluate(xp, offset: r * width, width: width, into: &kv)
                var votes = [Int](repeating: 0, count: classes)
                var p = 0
                for i in 0..<classes {
                    for j in (i + 1)..<classes {
                        var s = 0.0
                        let c1 = (j - 1) * n, c2 = i * n
                        for t in start[i]..<(start[i] + perClass[i]) { s += coefficients[c1 + t] * kv[t] }
                        for t in start[j]..<(start[j] + perClass[j]) { s += coefficients[c2 + t] * kv[t] }
                        s -= rho[p]
                        dec[p] = s
                        if s > 0 { votes[i] += 1 } else { votes[j] += 1 }
                        p += 1
                    }
                }
                if hasProbabilities {
                    let probs = SVMProbability.coupled(decisions: dec, probA: probA, probB: probB, classes: classes)
                    out.append(try signature.classifierOutputs(labels: labels, scores: probs))
                } else {
                    var best = 0
                    for c in 1..<classes where votes[c] > votes[best] { best = c }
                    let share = votes.map { Double($0) / Double(rho.count) }
                    out.append(try signature.classifierOutputs(labels: labels, scores: share, winner: best))
                }
            }
        }
        return out
    }
}

/// LibSVM's probability estimates from pairwise decision values.
public enum SVMProbability {
    /// LibSVM's lower bound of a pairwise probability.
    static let minimumProbability = 1e-7

    /// Platt's sigmoid 1 / (1 + e^(d·A + B)), evaluated without overflow (LibSVM `sigmoid_predict`).
    public static func sigmoid(_ d: Double, _ a: Double, _ b: Double) -> Double {
        let f = d * a + b
        return f >= 0 ? exp(-f) / (1 + exp(-f)) : 1 / (1 + exp(f))
    }

    /// Class probabilities from the K(K−1)/2 decision values (LibSVM pair order).
    public static func coupled(decisions: [Double], probA: [Double], probB: [Double], classes k: Int) -> [Double] {
        var r = [Double](repeating: 0, count: k * k)
        var p = 0
        for i in 0..<k {
            for j in (i + 1)..<k {
                let v = min(max(sigmoid(decisions[p], probA[p], probB[p]), minimumProbability), 1 - minimumProbability)
                r[i * k + j] = v
                r[j * k + i] = 1 - v
                p += 1
            }
        }
        if k == 2 { return [r[1], r[2]] }
        return multiclass(r, classes: k)
    }

    /// Wu, Lin & Weng (2004) method 2 as LibSVM's `multiclass_probability` iterates it: minimise
    /// pᵀQp with Q_tt = Σ_{j≠t} r_jt², Q_tj = −r_jt·r_tj, Σp = 1, by coordinate updates until
    /// max_t |(Qp)_t − pᵀQp| < 0.005/k or max(100, k) sweeps. `r` is k×k row-major, r_ij = P(i | i or j).
    public static func multiclass(_ r: [Double], classes k: Int) -> [Double] {
        var q = [Double](repeating: 0, count: k * k)
        for t in 0..<k {
            for j in 0..<k where j != t {
                q[t * k + t] += r[j * k + t] * r[j * k + t]
                q[t * k + j] = -r[j * k + t] * r[t * k + j]
            }
        }
        var p = [Double](repeating: 1 / Double(k), count: k)
        var qp = [Double](repeating: 0, count: k)
        let tolerance = 0.005 / Double(k)
        for _ in 0..<max(100, k) {
            var pqp = 0.0
            for t in 0..<k {
                var s = 0.0
                for j in 0..<k { s += q[t * k + j] * p[j] }
                qp[t] = s
                pqp += p[t] * s
            }
            var worst = 0.0
            for t in 0..<k { worst = max(worst, abs(qp[t] - pqp)) }
            if worst < tolerance { break }
            for t in 0..<k {
                let diff = (pqp - qp[t]) / q[t * k + t]
                p[t] += diff
                pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / (1 + diff) / (1 + diff)
                for j in 0..<k {
                    qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff)
                    p[j] /= 1 + diff
                }
            }
        }
        return p
    }
}

enum SupportVectorFamily {
    /// Rows of `CoreMLModelLoader.table`: `supportVectorRegressor`, `supportVectorClassifier`.
    static let register: @Sendable (inout [Spec.ModelKind: CoreMLModelLoader.Loader]) -> Void = { t in
        t[.supportVectorRegressor] = { spec, ctx in
            guard case let .supportVectorRegressor(r) = try CoreMLModelLoader.classical(spec, ctx, .supportVectorRegressor) else {
                throw FeatureError.invalidModel(model: ctx.name, reason: "not a supportVectorRegressor")
            }
            let vectors: SVMSupportVectors
            switch r.supportVectors {
            case let .denseSupportVectors(d)?: vectors = .dense(d.vectors.map(\.values))
            case let .sparseSupportVectors(s)?: vectors = sparse(s)
            case nil: throw FeatureError.invalidModel(model: ctx.name, reason: "the SVM has no support vectors (sparse or dense)")
            }
            return try SupportVectorRegressorModel(.init(kernel: kernel(r.kernel, ctx), supportVectors: vectors,
                                                         coefficients: r.coefficients?.alpha ?? [], rho: r.rho),
                                                   signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
        t[.supportVectorClassifier] = { spec, ctx in
            guard case let .supportVectorClassifier(c) = try CoreMLModelLoader.classical(spec, ctx, .supportVectorClassifier) else {
                throw FeatureError.invalidModel(model: ctx.name, reason: "not a supportVectorClassifier")
            }
            let vectors: SVMSupportVectors
            switch c.supportVectors {
            case let .denseSupportVectors(d)?: vectors = .dense(d.vectors.map(\.values))
            case let .sparseSupportVectors(s)?: vectors = sparse(s)
            case nil: throw FeatureError.invalidModel(model: ctx.name, reason: "the SVM has no support vectors (sparse or dense)")
            }
            let labels: ClassLabels
            switch c.classLabels {
            case let .stringClassLabels(s)?: labels = .strings(s.vector)
            case let .int64ClassLabels(s)?: labels = .int64s(s.vector)
            case nil: throw FeatureError.invalidModel(model: ctx.name, reason: "the SVM classifier has no class labels")
            }
            return try SupportVectorClassifierModel(
                .init(kernel: kernel(c.kernel, ctx), supportVectorsPerClass: c.numberOfSupportVectorsPerClass,
                      supportVectors: vectors, coefficients: c.coefficients.map(\.alpha), rho: c.rho,
                      probA: c.probA, probB: c.probB, labels: labels),
                signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
    }

    static func sparse(_ s: Spec.SparseSupportVectors) -> SVMSupportVectors {
        .sparse(s.vectors.map { $0.nodes.map { SVMSparseEntry(index: $0.index, value: $0.value) } })
    }

    static func kernel(_ k: Spec.Kernel?, _ ctx: ModelLoadContext) throws -> SVMKernel {
        switch k?.kernel {
        case .linearKernel?: return .linear
        case let .rbfKernel(r)?: return .rbf(gamma: r.gamma)
        case let .polyKernel(p)?: return .polynomial(gamma: p.gamma, c: p.c, degree: p.degree)
        case let .sigmoidKernel(s)?: return .sigmoid(gamma: s.gamma, c: s.c)
        case nil: throw FeatureError.invalidModel(model: ctx.name, reason: "the SVM sets no kernel")
        }
    }
}
