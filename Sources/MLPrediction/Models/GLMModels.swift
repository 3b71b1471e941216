// Core ML's generalized linear models (GLMRegressor.proto, GLMClassifier.proto): per output /
// class, a weighted sum of the numeric feature vector plus an offset, then a link function.
import CoreMLFormat
import Foundation

/// `GLMRegressor` parameters.
public struct GLMRegressorParameters: Equatable, Sendable {
    /// `GLMRegressor.PostEvaluationTransform`: applied to every output.
    public enum Transform: Equatable, Sendable {
        /// The weighted sum itself.
        case none
        /// 1 / (1 + e^(−z)).
        case logit
        /// Φ(z), the standard normal CDF.
        case probit
    }
    /// One row per output value; every row has one weight per feature-vector element.
    public var weights: [[Double]]
    /// One offset per output value.
    public var offsets: [Double]
    public var transform: Transform

    public init(weights: [[Double]], offsets: [Double], transform: Transform = .none) {
        self.weights = weights
        self.offsets = offsets
        self.transform = transform
    }
}

/// `GLMClassifier` parameters.
public struct GLMClassifierParameters: Equatable, Sendable {
    /// `GLMClassifier.PostEvaluationTransform` (probit is binary-only, as the .proto says).
    public enum Transform: Equatable, Sendable { case logit, probit }
    /// `GLMClassifier.ClassEncoding`.
    public enum ClassEncoding: Equatable, Sendable {
        /// Class 0 is the reference: K − 1 weight rows for classes 1…K−1. Binary: one row, the
        /// score of class 1 against class 0.
        case referenceClass
        /// One row per class, each class's link value normalised by their sum; binary: one row
        /// (class 1), as coremltools writes scikit-learn's binary LogisticRegression.
        case oneVsRest
    }
    public var weights: [[Double]]
    public var offsets: [Double]
    public var transform: Transform
    public var encoding: ClassEncoding
    public var labels: ClassLabels

    public init(weights: [[Double]], offsets: [Double], transform: Transform = .logit,
                encoding: ClassEncoding, labels: ClassLabels) {
        self.weights = weights
        self.offsets = offsets
        self.transform = transform
        self.encoding = encoding
        self.labels = labels
    }
}

/// Validated weight matrix of a GLM: `rows × width`, row-major, plus one offset per row.
struct LinearRows: Sendable {
    let rows: Int
    let width: Int
    let w: [Double]
    let b: [Double]

    init(weights: [[Double]], offsets: [Double], inputWidth: Int?, model: String) throws {
        guard !weights.isEmpty else { throw FeatureError.invalidModel(model: model, reason: "the GLM has no weight rows") }
        guard weights.count == offsets.count else {
            throw FeatureError.invalidModel(model: model, reason: "\(weights.count) weight rows but \(offsets.count) offsets (they must match)")
        }
        let width = weights[0].count
        guard width > 0 else { throw FeatureError.invalidModel(model: model, reason: "GLM weight rows are empty") }
        for (i, r) in weights.enumerated() where r.count != width {
            throw FeatureError.invalidModel(model: model, reason: "GLM weight row \(i) has \(r.count) values, row 0 has \(width)")
        }
        if let inputWidth, inputWidth != width {
            throw FeatureError.invalidModel(model: model, reason: "GLM weight rows have \(width) values but the inputs describe a \(inputWidth)-value feature vector")
        }
        rows = weights.count
        self.width = width
        w = weights.flatMap { $0 }
        b = offsets
    }

    /// z[r*rows + j] = w_j · x_r + b_j for every row r of `x` (row-major, `width` per row).
    func apply(_ x: [Double], count n: Int) -> [Double] {
        var z = [Double](repeating: 0, count: n * rows)
        x.withUnsafeBufferPointer { xp in
            w.withUnsafeBufferPointer { wp in
                for r in 0..<n {
                    let xo = r * width
                    for j in 0..<rows {
                        var s = 0.0
                        let wo = j * width
                        for k in 0..<width { s += wp[wo + k] * xp[xo + k] }
                        z[r * rows + j] = s + b[j]
                    }
                }
            }
        }
        return z
    }
}

/// A runnable `glmRegressor`: output j = link(w_j · x + offset_j). One output value is returned
/// as a Double (or the declared output type), several as a rank-1 multiArray.
public struct GLMRegressorModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    let linear: LinearRows
    let transform: GLMRegressorParameters.Transform

    /// - Throws: `FeatureError.invalidModel` when rows and offsets disagree, rows differ in
    ///   length, or their length differs from the described input width.
    public init(_ p: GLMRegressorParameters, signature: FeatureSignature) throws {
        self.signature = signature
        modelDescription = signature.description
        linear = try LinearRows(weights: p.weights, offsets: p.offsets, inputWidth: signature.numericWidth, model: signature.modelName)
        transform = p.transform
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let x = try signature.numericMatrix(from: batch, width: linear.width)
        var z = linear.apply(x, count: batch.count)
        switch transform {
        case .none: break
        case .logit: for i in z.indices { z[i] = NumericMath.logistic(z[i]) }
        case .probit: for i in z.indices { z[i] = NumericMath.probit(z[i]) }
        }
        let out = signature.regressionOutput
        let name = signature.regressionOutputName
        return (0..<batch.count).map { r in
            [name: signature.regressionValue(Array(z[r * linear.rows..<(r + 1) * linear.rows]), for: out)]
        }
    }
}

/// A runnable `glmClassifier`. With link f (logistic or Φ) and z_j = w_j · x + offset_j:
/// - two classes, one row (either encoding): P(class 1) = f(z_0), P(class 0) = 1 − f(z_0);
/// - `oneVsRest`, K rows: P(k) = f(z_k) / Σ_j f(z_j);
/// - `referenceClass`, K − 1 rows (logit only): class 0 scores 0, class k scores z_{k−1},
///   P = softmax — the multinomial logit whose reference class is the first, as the .proto names it.
/// The label is the class of the largest probability (the first on ties).
public struct GLMClassifierModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    let linear: LinearRows
    let transform: GLMClassifierParameters.Transform
    let encoding: GLMClassifierParameters.ClassEncoding
    let labels: ClassLabels

    /// - Throws: `FeatureError.invalidModel` when the number of weight rows does not fit the
    ///   classes and encoding (as Core ML's GLM validator: reference class K − 1 rows; one vs rest
    ///   K rows, or 1 for K = 2), probit is used with more than two classes, or rows are ragged.
    public init(_ p: GLMClassifierParameters, signature: FeatureSignature) throws {
        let m = signature.modelName
        self.signature = signature
        modelDescription = signature.description
        linear = try LinearRows(weights: p.weights, offsets: p.offsets, inputWidth: signature.numericWidth, model: m)
        let k = p.labels.count
        guard k >= 2 else { throw FeatureError.invalidModel(model: m, reason: "a GLM classifier needs at least 2 class labels, found \(k)") }
        switch p.encoding {
        case .referenceClass where linear.rows != k - 1:
            throw FeatureError.invalidModel(model: m, reason: "ReferenceClass encoding of \(k) classes needs \(k - 1) weight rows, found \(linear.rows)")
        case .oneVsRest where k == 2 && linear.rows != 1:
            throw FeatureError.invalidModel(model: m, reason: "OneVsRest encoding of 2 classes needs 1 weight row, found \(linear.rows)")
        case .oneVsRest where k > 2 && linear.rows != k:
            throw FeatureError.invalidModel(model: m, reason: "OneVsRest encoding of \(k) classes needs \(k) weight rows, found \(linear.rows)")
        default: break
        }
        if p.transform == .probit && k > 2 {
            throw FeatureError.invalidModel(model: m, reason: "the Probit transform is only defined for 2 classes (GLMClassifier.proto), found \(k)")
        }
        transform = p.transform
        encoding = p.encoding
        labels = p.labels
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let x = try signature.numericMatrix(from: batch, width: linear.width)
        let z = linear.apply(x, count: batch.count)
        let k = labels.count
        let f: (Double) -> Double = transform == .logit ? NumericMath.logistic : NumericMath.probit
        var out: [FeatureProvider] = []
        out.reserveCapacity(batch.count)
        var p = [Double](repeating: 0, count: k)
        for r in 0..<batch.count {
            let zr = z[r * linear.rows..<(r + 1) * linear.rows]
            if k == 2 {
                let p1 = f(zr[zr.startIndex])
                p[0] = 1 - p1
                p[1] = p1
            } else if encoding == .oneVsRest {
                var s = 0.0
                for j in 0..<k { p[j] = f(zr[zr.startIndex + j]); s += p[j] }
                for j in 0..<k { p[j] /= s }
            } else {
                p[0] = 0
                for j in 1..<k { p[j] = zr[zr.startIndex + j - 1] }
                NumericMath.softmax(&p, 0..<k)
            }
            out.append(try signature.classifierOutputs(labels: labels, scores: p))
        }
        return out
    }
}

enum GLMFamily {
    /// Rows of `CoreMLModelLoader.table` for the linear family: `glmRegressor`, `glmClassifier`,
    /// and a reasoned refusal of `bayesianProbitRegressor`.
    static let register: @Sendable (inout [Spec.ModelKind: CoreMLModelLoader.Loader]) -> Void = { t in
        t[.bayesianProbitRegressor] = { _, ctx in
            // BayesianProbitRegressor.proto leaves the model undefined for a runtime: it names the
            // steepness β of P(y|x,w) = Φ(<w,x>/β) but stores no β, does not say how a feature id /
            // value matrix selects weights, and its "sampled probability" output is random.
            throw FeatureError.unsupportedModel(
                model: ctx.name, kind: "bayesianProbitRegressor",
                hint: "its .proto stores no β for Φ(<w,x>/β), leaves the input encoding unspecified and samples one output at random, so its predictions cannot be reproduced")
        }
        GLMLoaders.register(&t)
    }
}

enum GLMLoaders {
    static func register(_ t: inout [Spec.ModelKind: CoreMLModelLoader.Loader]) {
        t[.glmRegressor] = { spec, ctx in
            guard case let .glmRegressor(g) = try CoreMLModelLoader.classical(spec, ctx, .glmRegressor) else { throw FeatureError.invalidModel(model: ctx.name, reason: "not a glmRegressor") }
            let transform: GLMRegressorParameters.Transform
            switch g.postEvaluationTransform {
            case .noTransform: transform = .none
            case .logit: transform = .logit
            case .probit: transform = .probit
            default: throw FeatureError.invalidModel(model: ctx.name, reason: "unknown GLMRegressor postEvaluationTransform \(g.postEvaluationTransform.rawValue)")
            }
            return try GLMRegressorModel(.init(weights: g.weights.map(\.value), offsets: g.offset, transform: transform),
                                         signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
        t[.glmClassifier] = { spec, ctx in
            guard case let .glmClassifier(g) = try CoreMLModelLoader.classical(spec, ctx, .glmClassifier) else { throw FeatureError.invalidModel(model: ctx.name, reason: "not a glmClassifier") }
            let transform: GLMClassifierParameters.Transform
            switch g.postEvaluationTransform {
            case .logit: transform = .logit
            case .probit: transform = .probit
            default: throw FeatureError.invalidModel(model: ctx.name, reason: "unknown GLMClassifier postEvaluationTransform \(g.postEvaluationTransform.rawValue)")
            }
            let encoding: GLMClassifierParameters.ClassEncoding
            switch g.classEncoding {
            case .referenceClass: encoding = .referenceClass
            case .oneVsRest: encoding = .oneVsRest
            default: throw FeatureError.invalidModel(model: ctx.name, reason: "unknown GLMClassifier classEncoding \(g.classEncoding.rawValue)")
            }
            let labels: ClassLabels
            switch g.classLabels {
            case let .stringClassLabels(s)?: labels = .strings(s.vector)
            case let .int64ClassLabels(s)?: labels = .int64s(s.vector)
            case nil: throw FeatureError.invalidModel(model: ctx.name, reason: "the GLM classifier has no class labels")
            }
            return try GLMClassifierModel(.init(weights: g.weights.map(\.value), offsets: g.offset, transform: transform,
                                                encoding: encoding, labels: labels),
                                          signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
    }
}
