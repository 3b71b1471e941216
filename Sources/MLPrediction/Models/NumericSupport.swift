// What the numeric classical models (GLMs, tree ensembles, SVMs, kNN) share: the numeric input
// width a description declares, whole-batch feature matrices, and the link functions of Core ML's
// .proto files (logistic, probit, softmax).
import CoreMLFormat
import Foundation

extension FeatureSignature {
    /// The length of Core ML's numeric feature vector as the description declares it: 1 per
    /// double / int64 input plus the element count of each multiArray input's `shape`.
    /// `nil` when it cannot be known before predicting (no inputs, a multiArray without a shape,
    /// a non-numeric input, or a count that overflows).
    public var numericWidth: Int? {
        guard !inputs.isEmpty else { return nil }
        var total = 0
        for input in inputs {
            let n: Int
            switch input.type?.kind {
            case .double?, .int64?: n = 1
            case let .multiArray(a)?:
                guard !a.shape.isEmpty else { return nil }
                var p = 1
                for d in a.shape {
                    guard let di = Int(exactly: d), di >= 0 else { return nil }
                    let (q, o) = p.multipliedReportingOverflow(by: di)
                    if o { return nil }
                    p = q
                }
                n = p
            default: return nil
            }
            let (t, o) = total.addingReportingOverflow(n)
            if o { return nil }
            total = t
        }
        return total
    }

    /// The numeric feature vectors of a batch, row-major (`batch.count × width` values).
    /// - Throws: as `numericVector(from:count:)` for the first row that fails.
    public func numericMatrix(from batch: [FeatureProvider], width: Int) throws -> [Double] {
        let (total, o) = batch.count.multipliedReportingOverflow(by: width)
        guard !o else { throw FeatureError.invalidShape(shape: [batch.count, width]) }
        var m: [Double] = []
        m.reserveCapacity(total)
        for row in batch {
            let start = m.count
            for input in inputs {
                switch try value(input.name, in: row) {
                case let .double(d): m.append(d)
                case let .int64(i): m.append(Double(i))
                case let .multiArray(a): m.append(contentsOf: a.values)
                case let other:
                    throw FeatureError.typeMismatch(model: modelName, feature: input.name,
                                                    expected: "a Double, Int64 or MultiArray", found: other.typeName)
                }
            }
            if m.count - start != width {
                throw FeatureError.shapeMismatch(feature: inputs.map(\.name).joined(separator: "+"),
                                                 expected: [width], found: m.count - start)
            }
        }
        return m
    }

    /// The batch's feature matrix and its width: the described width when the description
    /// declares one, else the first row's width (every row must have it), which must be at least
    /// `minimumWidth` (the largest feature index the model reads + 1).
    /// - Throws: as `numericMatrix(from:width:)`; `.shapeMismatch` for rows narrower than the model reads.
    public func featureMatrix(from batch: [FeatureProvider], minimumWidth: Int) throws -> ([Double], Int) {
        if let w = numericWidth { return (try numericMatrix(from: batch, width: w), w) }
        guard let first = batch.first else { return ([], minimumWidth) }
        let w = try numericVector(from: first).count
        guard w >= minimumWidth else {
            throw FeatureError.shapeMismatch(feature: inputs.map(\.name).joined(separator: "+"), expected: [minimumWidth], found: w)
        }
        return (try numericMatrix(from: batch, width: w), w)
    }

    /// The regression output feature: `predictedFeatureName`, else the first output.
    var regressionOutput: Spec.FeatureDescription? { output(named: description.predictedFeatureName) }
    /// Its name (`"prediction"` when the description has no output).
    var regressionOutputName: String { regressionOutput?.name ?? "prediction" }
}

/// Link functions named by Core ML's GLM and tree-ensemble .proto files.
enum NumericMath {
    /// The logistic function 1 / (1 + e^(−x)), computed without overflow for large |x|.
    @inline(__always)
    static func logistic(_ x: Double) -> Double {
        if x >= 0 { return 1 / (1 + exp(-x)) }
        let e = exp(x)
        return e / (1 + e)
    }

    /// The standard normal CDF Φ(x) = erfc(−x/√2) / 2 (GLM "Probit").
    @inline(__always)
    static func probit(_ x: Double) -> Double { 0.5 * erfc(-x / 2.0.squareRoot()) }

    /// In-place softmax e^(x_i − max) / Σ_j e^(x_j − max) over `v[range]`.
    static func softmax(_ v: inout [Double], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        var m = -Double.infinity
        for i in range where v[i] > m { m = v[i] }
        if !m.isFinite { m = 0 }
        var s = 0.0
        for i in range { v[i] = exp(v[i] - m); s += v[i] }
        for i in range { v[i] /= s }
    }
}

// MARK: - Loading from decoded specifications

extension CoreMLModelLoader {
    /// The decoded classical parameters of `spec`, or `FeatureError.invalidModel` when the model's
    /// type is another kind than the loader's.
    static func classical(_ spec: Spec.Model, _ ctx: ModelLoadContext, _ kind: Spec.ModelKind) throws -> Spec.ClassicalParameters {
        guard let p = try spec.classicalParameters(file: ctx.name), p.kind == kind else {
            throw FeatureError.invalidModel(model: ctx.name, reason: "the model is not a \(kind.name) (its type is \(spec.kind?.name ?? "empty"))")
        }
        return p
    }
}
