// Core ML `DictVectorizer` (DictVectorizer.proto).
import CoreMLFormat
import Foundation

/// A dictionary → a vector by an index mapping (DictVectorizer.proto): the value of key
/// `keys[i]` goes to position `i`; positions whose key is absent from the input are 0.
///
/// - Output: a multiArray of `keys.count` values in the declared data type, or, when the output
///   is described as a dictionary (scikit-learn conversions declare `Dictionary (Int64 → Double)`,
///   the sparse form a feature vectorizer then densifies), the entries `i → value` (Int64 keys).
/// - Input keys that are not in the mapping: DictVectorizer.proto says every input key must be
///   in the mapping; such keys are skipped (they have no position), as scikit-learn's
///   `DictVectorizer.transform` does.
/// - The input dictionary's key type must be the mapping's (String or Int64).
public struct DictVectorizerModel: FeatureModel {
    /// The mapping keys in index order: String or Int64, the same list type as a classifier's `ClassLabels`.
    public typealias Keys = ClassLabels

    public let modelDescription: Spec.ModelDescription
    public let keys: Keys
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription
    let sparse: Bool
    let stringIndex: [String: Int]
    let int64Index: [Int64: Int]

    /// - Throws: `FeatureError.invalidModel` when the description does not have one input and one output.
    public init(keys: Keys, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        self.keys = keys
        input = try signature.onlyInput("a dictionary vectorizer")
        output = try signature.onlyOutput("a dictionary vectorizer")
        if case .dictionary? = output.type?.kind { sparse = true } else { sparse = false }
        var s: [String: Int] = [:], n: [Int64: Int] = [:]
        switch keys {
        case let .strings(k): for (i, v) in k.enumerated() where s[v] == nil { s[v] = i }
        case let .int64s(k): for (i, v) in k.enumerated() where n[v] == nil { n[v] = i }
        }
        stringIndex = s
        int64Index = n
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let value = try signature.value(input.name, in: inputs)
        var entries: [(Int, Double)] = []
        switch (keys, value) {
        case let (.strings, .dictionary(.stringKeys(d))):
            for (k, v) in d { if let i = stringIndex[k] { entries.append((i, v)) } }
        case let (.int64s, .dictionary(.int64Keys(d))):
            for (k, v) in d { if let i = int64Index[k] { entries.append((i, v)) } }
        default:
            let want: String
            if case .strings = keys { want = "a Dictionary with String keys" } else { want = "a Dictionary with Int64 keys" }
            let found: String
            switch value {
            case .dictionary(.stringKeys): found = "a Dictionary with String keys"
            case .dictionary(.int64Keys): found = "a Dictionary with Int64 keys"
            default: found = value.typeName
            }
            throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: want, found: found)
        }
        if sparse {
            var d: [Int64: Double] = [:]
            for (i, v) in entries { d[Int64(i)] = v }
            return [output.name: .dictionary(.int64Keys(d))]
        }
        var v = [Double](repeating: 0, count: keys.count)
        for (i, x) in entries { v[i] = x }
        return [output.name: signature.arrayValue(v, for: output)]
    }
}

extension CoreMLModelLoader {
    /// The `dictVectorizer` row.
    static func registerDictVectorizer(_ t: inout [Spec.ModelKind: Loader]) {
        t[.dictVectorizer] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .dictVectorizer(p) = $0 { return p }; return nil }
            let keys: DictVectorizerModel.Keys
            switch p.map {
            case let .stringToIndex(v)?: keys = .strings(v.vector)
            case let .int64ToIndex(v)?: keys = .int64s(v.vector)
            case nil: throw FeatureError.invalidModel(model: context.name, reason: "the dictionary vectorizer sets no mapping (stringToIndex or int64ToIndex)")
            }
            return try DictVectorizerModel(keys: keys, description: spec.description, name: context.name)
        }
    }
}
