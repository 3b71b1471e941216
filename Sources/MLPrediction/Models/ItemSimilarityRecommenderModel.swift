// Core ML `ItemSimilarityRecommender` (ItemSimilarityRecommender.proto).
import CoreMLFormat
import Foundation

/// Item-similarity recommendations (ItemSimilarityRecommender.proto).
///
/// Items are numbered 0 ..< `itemCount`; their public ids are `itemIds` (String or Int64; when
/// the model gives none, the ids are the numbers themselves, as Int64).
///
/// The score of item k, for the observed items i with scores score_i, is
///   Σ_i sim(k, i) · (score_i − shift_k)
/// where sim(k, i) is the similarity listed for item k in the `SimilarItems` entry of item i
/// (0 when not listed) and shift_k the `itemScoreAdjustment` of item k's own entry (0 when it
/// has none) — the proto's formula, with its subscripts.
///
/// Inputs: the observed items — a dictionary id → score, or a sequence (or multiArray) of ids,
/// each with score 1; observed ids the model does not know contribute nothing. Optional:
/// the number of recommendations (Int64; default: every candidate), a restriction list (only
/// these items are candidates) and an exclusion list (default: the observed items), each a
/// sequence or multiArray of ids.
///
/// Outputs: the candidates by descending score (lower item number first on ties), the first
/// `numRecommendations` of them — the id list (a sequence) and/or the id → score dictionary.
public struct ItemSimilarityRecommenderModel: FeatureModel {
    public enum ItemIds: Equatable, Sendable {
        case strings([String])
        case int64s([Int64])
    }

    public struct SimilarItems: Equatable, Sendable {
        public var itemId: Int
        /// (item k, sim(k, itemId)).
        public var similarItems: [(itemId: Int, similarity: Double)]
        public var itemScoreAdjustment: Double
        public init(itemId: Int, similarItems: [(itemId: Int, similarity: Double)], itemScoreAdjustment: Double = 0) {
            self.itemId = itemId
            self.similarItems = similarItems
            self.itemScoreAdjustment = itemScoreAdjustment
        }
        public static func == (a: SimilarItems, b: SimilarItems) -> Bool {
            a.itemId == b.itemId && a.itemScoreAdjustment == b.itemScoreAdjustment
                && a.similarItems.map(\.itemId) == b.similarItems.map(\.itemId)
                && a.similarItems.map(\.similarity) == b.similarItems.map(\.similarity)
        }
    }

    public struct Parameters: Equatable, Sendable {
        public var similarities: [SimilarItems]
        /// nil: the ids are 0 ..< itemCount (Int64).
        public var itemIds: ItemIds?
        public var itemInputFeatureName: String
        public var numRecommendationsInputFeatureName: String
        public var itemRestrictionInputFeatureName: String
        public var itemExclusionInputFeatureName: String
        public var recommendedItemListOutputFeatureName: String
        public var recommendedItemScoreOutputFeatureName: String
        public init(similarities: [SimilarItems], itemIds: ItemIds? = nil, itemInputFeatureName: String,
                    numRecommendationsInputFeatureName: String = "", itemRestrictionInputFeatureName: String = "",
                    itemExclusionInputFeatureName: String = "", recommendedItemListOutputFeatureName: String = "",
                    recommendedItemScoreOutputFeatureName: String = "") {
            self.similarities = similarities
            self.itemIds = itemIds
            self.itemInputFeatureName = itemInputFeatureName
            self.numRecommendationsInputFeatureName = numRecommendationsInputFeatureName
            self.itemRestrictionInputFeatureName = itemRestrictionInputFeatureName
            self.itemExclusionInputFeatureName = itemExclusionInputFeatureName
            self.recommendedItemListOutputFeatureName = recommendedItemListOutputFeatureName
            self.recommendedItemScoreOutputFeatureName = recommendedItemScoreOutputFeatureName
        }
    }

    public let modelDescription: Spec.ModelDescription
    public let parameters: Parameters
    let signature: FeatureSignature
    let itemCount: Int
    let itemInput: String
    /// For each observed item i: [(k, sim(k, i))].
    let neighbours: [Int: [(Int, Double)]]
    let shift: [Int: Double]
    let stringIndex: [String: Int]
    let int64Index: [Int64: Int]

    /// - Throws: `FeatureError.invalidModel` when no output is named, the item input cannot be
    ///   determined, an item number is beyond the ids, or ids repeat (Core ML's checks).
    public init(parameters: Parameters, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        var maxItem = -1
        var nb: [Int: [(Int, Double)]] = [:]
        var sh: [Int: Double] = [:]
        for s in parameters.similarities {
            guard s.itemId >= 0, s.similarItems.allSatisfy({ $0.itemId >= 0 }) else {
                throw FeatureError.invalidModel(model: name, reason: "item numbers must be ≥ 0")
            }
            maxItem = max(maxItem, s.itemId, s.similarItems.map(\.itemId).max() ?? -1)
            nb[s.itemId, default: []].append(contentsOf: s.similarItems.map { ($0.itemId, $0.similarity) })
            if s.itemScoreAdjustment != 0 { sh[s.itemId] = s.itemScoreAdjustment }
        }
        var si: [String: Int] = [:], ii: [Int64: Int] = [:]
        switch parameters.itemIds {
        case let .strings(ids)?:
            for (i, v) in ids.enumerated() { si[v] = i }
            guard si.count == ids.count else { throw FeatureError.invalidModel(model: name, reason: "the string item ids repeat") }
            itemCount = ids.count
        case let .int64s(ids)?:
            for (i, v) in ids.enumerated() { ii[v] = i }
            guard ii.count == ids.count else { throw FeatureError.invalidModel(model: name, reason: "the integer item ids repeat") }
            itemCount = ids.count
        case nil:
            guard maxItem < maximumFeatureVectorLength else {
                throw FeatureError.invalidModel(model: name, reason: "item number \(maxItem) is too large")
            }
            itemCount = maxItem + 1
        }
        guard maxItem < itemCount else {
            throw FeatureError.invalidModel(model: name, reason: "item number \(maxItem) is beyond the \(itemCount) item ids")
        }
        if parameters.recommendedItemListOutputFeatureName.isEmpty && parameters.recommendedItemScoreOutputFeatureName.isEmpty {
            throw FeatureError.invalidModel(model: name, reason: "neither recommendedItemListOutputFeatureName nor recommendedItemScoreOutputFeatureName is set")
        }
        if !parameters.itemInputFeatureName.isEmpty {
            itemInput = parameters.itemInputFeatureName
        } else if signature.inputs.count == 1 {
            itemInput = signature.inputs[0].name
        } else {
            throw FeatureError.invalidModel(model: name, reason: "itemInputFeatureName is not set and the model has \(signature.inputs.count) inputs")
        }
        neighbours = nb
        shift = sh
        stringIndex = si
        int64Index = ii
        self.parameters = parameters
    }

    /// Scores of every item (index = item number) for observed (item number, score) pairs.
    func scores(observed: [(Int, Double)]) -> [Double] {
        var s = [Double](repeating: 0, count: itemCount)
        for (i, score) in observed {
            for (k, sim) in neighbours[i] ?? [] { s[k] += sim * (score - (shift[k] ?? 0)) }
        }
        return s
    }

    private func index(of v: FeatureValue) -> Int? {
        switch (parameters.itemIds, v) {
        case let (.strings?, .string(s)): return stringIndex[s]
        case (.int64s?, _): return v.exactInt64.flatMap { int64Index[$0] }
        case (nil, _): return v.exactInt64.flatMap { Int(exactly: $0) }.flatMap { $0 >= 0 && $0 < itemCount ? $0 : nil }
        default: return nil
        }
    }

    private func idList(_ name: String, _ value: FeatureValue) throws -> [Int] {
        switch value {
        case let .sequence(.string(s)): return s.compactMap { index(of: .string($0)) }
        case let .sequence(.int64(s)): return s.compactMap { index(of: .int64($0)) }
        case let .multiArray(a): return a.values.compactMap { index(of: .double($0)) }
        case .int64, .string: return [index(of: value)].compactMap { $0 }
        default:
            throw FeatureError.typeMismatch(model: signature.modelName, feature: name, expected: "a Sequence or MultiArray of item ids", found: value.typeName)
        }
    }

    private func id(_ k: Int) -> FeatureValue {
        switch parameters.itemIds {
        case let .strings(s)?: return .string(s[k])
        case let .int64s(s)?: return .int64(s[k])
        case nil: return .int64(Int64(k))
        }
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let p = parameters
        let items = try signature.value(itemInput, in: inputs)
        var observed: [(Int, Double)] = []
        switch items {
        case let .dictionary(.stringKeys(d)):
            for (k, v) in d { if let i = index(of: .string(k)) { observed.append((i, v)) } }
        case let .dictionary(.int64Keys(d)):
            for (k, v) in d { if let i = index(of: .int64(k)) { observed.append((i, v)) } }
        default:
            observed = try idList(itemInput, items).map { ($0, 1) }
        }
        observed.sort { $0.0 < $1.0 }  // a fixed summation order
        let s = scores(observed: observed)
        var candidates = Array(0..<itemCount)
        if !p.itemRestrictionInputFeatureName.isEmpty, let r = inputs[p.itemRestrictionInputFeatureName] {
            let allowed = Set(try idList(p.itemRestrictionInputFeatureName, r))
            candidates = candidates.filter(allowed.contains)
        }
        let excluded: Set<Int>
        if !p.itemExclusionInputFeatureName.isEmpty, let e = inputs[p.itemExclusionInputFeatureName] {
            excluded = Set(try idList(p.itemExclusionInputFeatureName, e))
        } else {
            excluded = Set(observed.map(\.0))
        }
        candidates = candidates.filter { !excluded.contains($0) }
        candidates.sort { s[$0] != s[$1] ? s[$0] > s[$1] : $0 < $1 }
        if !p.numRecommendationsInputFeatureName.isEmpty, let n = inputs[p.numRecommendationsInputFeatureName] {
            guard let count = n.exactInt64, count >= 0 else {
                throw FeatureError.invalidValue(model: signature.modelName, feature: p.numRecommendationsInputFeatureName,
                                                reason: "the number of recommendations must be an Int64 ≥ 0")
            }
            if count < candidates.count { candidates.removeLast(candidates.count - Int(count)) }
        }
        var out: FeatureProvider = [:]
        if !p.recommendedItemListOutputFeatureName.isEmpty {
            switch p.itemIds {
            case let .strings(ids)?: out[p.recommendedItemListOutputFeatureName] = .sequence(.string(candidates.map { ids[$0] }))
            case let .int64s(ids)?: out[p.recommendedItemListOutputFeatureName] = .sequence(.int64(candidates.map { ids[$0] }))
            case nil: out[p.recommendedItemListOutputFeatureName] = .sequence(.int64(candidates.map { Int64($0) }))
            }
        }
        if !p.recommendedItemScoreOutputFeatureName.isEmpty {
            switch p.itemIds {
            case let .strings(ids)?:
                var d: [String: Double] = [:]
                for k in candidates { d[ids[k]] = s[k] }
                out[p.recommendedItemScoreOutputFeatureName] = .dictionary(.stringKeys(d))
            default:
                var d: [Int64: Double] = [:]
                for k in candidates { if case let .int64(v) = id(k) { d[v] = s[k] } }
                out[p.recommendedItemScoreOutputFeatureName] = .dictionary(.int64Keys(d))
            }
        }
        return out
    }
}

extension CoreMLModelLoader {
    /// The `itemSimilarityRecommender` row.
    static func registerItemSimilarityRecommender(_ t: inout [Spec.ModelKind: Loader]) {
        t[.itemSimilarityRecommender] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .itemSimilarityRecommender(p) = $0 { return p }; return nil }
            let similarities = try p.itemItemSimilarities.map { s in
                ItemSimilarityRecommenderModel.SimilarItems(
                    itemId: try checkedIndex(s.itemId, "itemId", context),
                    similarItems: try s.similarItemList.map { (try checkedIndex($0.itemId, "itemId", context), $0.similarityScore) },
                    itemScoreAdjustment: s.itemScoreAdjustment)
            }
            let strings = p.itemStringIds?.vector ?? [], ints = p.itemInt64Ids?.vector ?? []
            if !strings.isEmpty, !ints.isEmpty {
                throw FeatureError.invalidModel(model: context.name, reason: "both string and integer item ids are given; give one kind")
            }
            let ids: ItemSimilarityRecommenderModel.ItemIds? = !ints.isEmpty ? .int64s(ints) : !strings.isEmpty ? .strings(strings) : nil
            return try ItemSimilarityRecommenderModel(parameters: .init(
                similarities: similarities, itemIds: ids, itemInputFeatureName: p.itemInputFeatureName,
                numRecommendationsInputFeatureName: p.numRecommendationsInputFeatureName,
                itemRestrictionInputFeatureName: p.itemRestrictionInputFeatureName,
                itemExclusionInputFeatureName: p.itemExclusionInputFeatureName,
                recommendedItemListOutputFeatureName: p.recommendedItemListOutputFeatureName,
                recommendedItemScoreOutputFeatureName: p.recommendedItemScoreOutputFeatureName),
                description: spec.description, name: context.name)
        }
    }
}
