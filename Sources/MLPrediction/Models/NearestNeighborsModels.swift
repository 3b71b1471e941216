// Core ML's k-nearest-neighbors classifier (NearestNeighbors.proto).
import CoreMLFormat
import Foundation

/// `KNearestNeighborsClassifier` parameters.
public struct KNearestNeighborsParameters: Equatable, Sendable {
    /// `NearestNeighborsIndex.IndexType`. Both give the same neighbours: mlconv scans linearly
    /// for either (a kd-tree only accelerates the search).
    public enum Index: Equatable, Sendable {
        case linear
        case kdTree(leafSize: Int32)
    }
    /// `KNearestNeighborsClassifier.WeightingScheme`.
    public enum Weighting: Equatable, Sendable { case uniform, inverseDistance }
    /// `Int64Parameter.AllowedValues` of `numberOfNeighbors`.
    public enum Allowed: Equatable, Sendable {
        case range(min: Int64, max: Int64)
        case set([Int64])
    }
    /// `numberOfDimensions`.
    public var dimensions: Int32
    /// `floatSamples`: one vector of `dimensions` values per sample.
    public var samples: [[Float]]
    /// One label per sample (coremltools writes scikit-learn's per-sample `_y`).
    public var labels: ClassLabels
    /// `defaultStringLabel` / `defaultInt64Label`: the prediction of a model without samples.
    public var defaultLabel: FeatureValue?
    public var index: Index
    /// `numberOfNeighbors.defaultValue`.
    public var numberOfNeighbors: Int64
    public var allowedNeighbors: Allowed?
    public var weighting: Weighting

    public init(dimensions: Int32, samples: [[Float]], labels: ClassLabels, defaultLabel: FeatureValue? = nil,
                index: Index = .linear, numberOfNeighbors: Int64, allowedNeighbors: Allowed? = nil,
                weighting: Weighting = .uniform) {
        self.dimensions = dimensions
        self.samples = samples
        self.labels = labels
        self.defaultLabel = defaultLabel
        self.index = index
        self.numberOfNeighbors = numberOfNeighbors
        self.allowedNeighbors = allowedNeighbors
        self.weighting = weighting
    }
}

/// A runnable `kNearestNeighborsClassifier` (squared Euclidean distance, the only distance the
/// .proto defines).
///
/// - Neighbours: the k samples of smallest squared distance (computed in Double from the Float
///   samples); equal distances are ordered by sample index (the earlier sample first). k is
///   `numberOfNeighbors` (`defaultValue`, or the `numberOfNeighbors:` override, Core ML's
///   `MLParameterKey.numberOfNeighbors`), capped by the sample count.
/// - Votes: uniform weighting gives each neighbour 1; inverse-distance weighting gives
///   1 / (squared distance), as the .proto's "highest sum of (1 / distance)" with its squared
///   Euclidean distance function. Neither the .proto nor coremltools documents the epsilon Core ML
///   uses for a zero distance; mlconv takes the limit: when some neighbours are at distance 0,
///   only they vote, 1 each (the same rule as scikit-learn's `weights='distance'`).
/// - Label: the label of the highest vote total; ties go to the smallest label (Int64 order, or
///   String code-point order), as scikit-learn's KNeighborsClassifier (its mode over sorted
///   `classes_`), which is where coremltools' kNN conversions come from.
/// - Probability output (when described): each distinct sample label → its share of the vote
///   total (coremltools' builder documents the output as "probabilities / score for each possible
///   label"; Core ML's exact values are unpublished). Labels no neighbour has get 0.
/// - Without samples: the default label and an empty dictionary.
public struct KNearestNeighborsClassifierModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    let dimensions: Int
    /// `sampleCount × dimensions` row-major.
    let samples: [Double]
    let sampleCount: Int
    /// Per sample: index into `distinct`.
    let sampleClass: [Int]
    /// Distinct labels, ascending.
    let distinct: ClassLabels
    let defaultLabel: FeatureValue?
    public let k: Int
    let weighting: KNearestNeighborsParameters.Weighting

    /// - Parameter numberOfNeighbors: overrides `numberOfNeighbors.defaultValue`; must be allowed.
    /// - Throws: `FeatureError.invalidModel` (as Core ML's kNN validator): label count ≠ sample
    ///   count, a sample of another length than `dimensions`, no samples and no default label, a
    ///   default label of another type than the labels, k < 1 or outside the allowed range/set, a
    ///   kd-tree leaf size < 1.
    public init(_ p: KNearestNeighborsParameters, signature: FeatureSignature, numberOfNeighbors: Int64? = nil) throws {
        let m = signature.modelName
        func bad(_ r: String) -> FeatureError { .invalidModel(model: m, reason: r) }
        self.signature = signature
        modelDescription = signature.description
        guard p.dimensions > 0 else { throw bad("numberOfDimensions is \(p.dimensions); it must be ≥ 1") }
        dimensions = Int(p.dimensions)
        if let w = signature.numericWidth, w != dimensions {
            throw bad("numberOfDimensions is \(dimensions) but the inputs describe \(w) features")
        }
        guard p.labels.count == p.samples.count else {
            throw bad("\(p.labels.count) labels for \(p.samples.count) samples (one label per sample)")
        }
        for (i, s) in p.samples.enumerated() where s.count != dimensions {
            throw bad("sample \(i) has \(s.count) values; numberOfDimensions is \(dimensions)")
        }
        switch (p.defaultLabel, p.labels) {
        case (nil, _) where p.samples.isEmpty:
            throw bad("the model has no samples and no default label")
        case (.string?, .int64s(let l)) where !l.isEmpty:
            throw bad("the default label is a String but the class labels are Int64")
        case (.int64?, .strings(let l)) where !l.isEmpty:
            throw bad("the default label is an Int64 but the class labels are Strings")
        case (let d?, _):
            switch d {
            case .string, .int64: break
            default: throw bad("the default label must be a String or an Int64")
            }
        default: break
        }
        if case let .kdTree(leaf) = p.index, leaf <= 0 {
            throw bad("kd-tree leaf size is \(leaf); it must be ≥ 1")
        }
        let requested = numberOfNeighbors ?? p.numberOfNeighbors
        guard requested >= 1 else { throw bad("numberOfNeighbors is \(requested); it must be ≥ 1") }
        switch p.allowedNeighbors {
        case let .range(lo, hi)? where requested < lo || requested > hi:
            throw bad("numberOfNeighbors \(requested) is outside the allowed range \(lo)…\(hi)")
        case let .set(s)? where !s.contains(requested):
            throw bad("numberOfNeighbors \(requested) is not one of the allowed values \(s)")
        default: break
        }
        sampleCount = p.samples.count
        k = Int(min(requested, Int64(max(sampleCount, 1))))
        samples = p.samples.flatMap { $0.map(Double.init) }
        defaultLabel = p.defaultLabel
        weighting = p.weighting
        switch p.labels {
        case let .strings(l):
            let d = Array(Set(l)).sorted { Array($0.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.unicodeScalars.map(\.value)) }
            let at = Dictionary(uniqueKeysWithValues: d.enumerated().map { ($1, $0) })
            sampleClass = l.map { at[$0] ?? 0 }
            distinct = .strings(d)
        case let .int64s(l):
            let d = Array(Set(l)).sorted()
            let at = Dictionary(uniqueKeysWithValues: d.enumerated().map { ($1, $0) })
            sampleClass = l.map { at[$0] ?? 0 }
            distinct = .int64s(d)
        }
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let x = try signature.numericMatrix(from: batch, width: dimensions)
        guard sampleCount > 0 else {
            var o: FeatureProvider = [signature.predictedLabelName: defaultLabel ?? .int64(0)]
            if let pn = signature.probabilitiesName {
                if case .string? = defaultLabel { o[pn] = .dictionary(.stringKeys([:])) } else { o[pn] = .dictionary(.int64Keys([:])) }
            }
            return Array(repeating: o, count: batch.count)
        }
        var out: [FeatureProvider] = []
        out.reserveCapacity(batch.count)
        // The k best (distance, sample) pairs so far, ascending.
        var bestD = [Double](repeating: 0, count: k)
        var bestI = [Int](repeating: 0, count: k)
        var votes = [Double](repeating: 0, count: distinct.count)
        for r in 0..<batch.count {
            var filled = 0
            let xo = r * dimensions
            samples.withUnsafeBufferPointer { sp in
                x.withUnsafeBufferPointer { xp in
                    for s in 0..<sampleCount {
                        var d = 0.0
                        let so = s * dimensions
                        for j in 0..<dimensions { let t = xp[xo + j] - sp[so + j]; d += t * t }
                        // Insert keeping (distance, index) order; a later sample never displaces an equal one.
                        if filled == k && !(d < bestD[k - 1]) { continue }
                        var pos = filled == k ? k - 1 : filled
                        if filled < k { filled += 1 }
                        while pos > 0 && d < bestD[pos - 1] {
                            bestD[pos] = bestD[pos - 1]
                            bestI[pos] = bestI[pos - 1]
                            pos -= 1
                        }
                        bestD[pos] = d
                        bestI[pos] = s
                    }
                }
            }
            for c in votes.indices { votes[c] = 0 }
            let exact = weighting == .inverseDistance && bestD[0] == 0
            for n in 0..<filled {
                let w: Double
                switch weighting {
                case .uniform: w = 1
                case .inverseDistance: w = exact ? (bestD[n] == 0 ? 1 : 0) : 1 / bestD[n]
                }
                votes[sampleClass[bestI[n]]] += w
            }
            var best = 0
            var total = 0.0
            for c in votes.indices {
                total += votes[c]
                if votes[c] > votes[best] { best = c }
            }
            let scores = total > 0 ? votes.map { $0 / total } : votes
            out.append(try signature.classifierOutputs(labels: distinct, scores: scores, winner: best))
        }
        return out
    }
}

enum NearestNeighborsFamily {
    /// The row of `CoreMLModelLoader.table` for `kNearestNeighborsClassifier`.
    static let register: @Sendable (inout [Spec.ModelKind: CoreMLModelLoader.Loader]) -> Void = { t in
        t[.kNearestNeighborsClassifier] = { spec, ctx in
            guard case let .kNearestNeighborsClassifier(c) = try CoreMLModelLoader.classical(spec, ctx, .kNearestNeighborsClassifier) else {
                throw FeatureError.invalidModel(model: ctx.name, reason: "not a kNearestNeighborsClassifier")
            }
            func bad(_ r: String) -> FeatureError { .invalidModel(model: ctx.name, reason: r) }
            guard let index = c.nearestNeighborsIndex else { throw bad("the kNN classifier has no nearestNeighborsIndex") }
            let indexType: KNearestNeighborsParameters.Index
            switch index.indexType {
            case .linearIndex?: indexType = .linear
            case let .singleKdTreeIndex(k)?: indexType = .kdTree(leafSize: k.leafSize)
            case nil: throw bad("the kNN index sets no index type (linearIndex or singleKdTreeIndex)")
            }
            guard index.distanceFunction != nil else { throw bad("the kNN index sets no distance function") }
            let weighting: KNearestNeighborsParameters.Weighting
            switch c.weightingScheme {
            case .uniformWeighting?: weighting = .uniform
            case .inverseDistanceWeighting?: weighting = .inverseDistance
            case nil: throw bad("the kNN classifier sets no weighting scheme")
            }
            let defaultLabel: FeatureValue?
            switch c.defaultClassLabel {
            case let .defaultStringLabel(s)?: defaultLabel = .string(s)
            case let .defaultInt64Label(i)?: defaultLabel = .int64(i)
            case nil: defaultLabel = nil
            }
            let labels: ClassLabels
            switch c.classLabels {
            case let .stringClassLabels(s)?: labels = .strings(s.vector)
            case let .int64ClassLabels(s)?: labels = .int64s(s.vector)
            case nil:
                if case .string? = defaultLabel { labels = .strings([]) } else { labels = .int64s([]) }
            }
            let allowed: KNearestNeighborsParameters.Allowed?
            switch c.numberOfNeighbors?.allowedValues {
            case let .range(r)?: allowed = .range(min: r.minValue, max: r.maxValue)
            case let .set(s)?: allowed = .set(s.values)
            case nil: allowed = nil
            }
            return try KNearestNeighborsClassifierModel(
                .init(dimensions: index.numberOfDimensions, samples: index.floatSamples.map(\.vector), labels: labels,
                      defaultLabel: defaultLabel, index: indexType, numberOfNeighbors: c.numberOfNeighbors?.defaultValue ?? 0,
                      allowedNeighbors: allowed, weighting: weighting),
                signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
    }
}
