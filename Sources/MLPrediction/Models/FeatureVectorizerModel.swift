// Core ML `FeatureVectorizer` (FeatureVectorizer.proto).
import CoreMLFormat
import Foundation

/// Concatenates named features into one array, in the order of `inputList`
/// (FeatureVectorizer.proto). Each column contributes exactly `dimension` values:
/// - a Double or Int64 feature: its value (dimension 1);
/// - a multiArray: its values, row-major (it must hold `dimension` values);
/// - a dictionary with Int64 keys (a sparse vector, e.g. a one-hot encoder's or a dictionary
///   vectorizer's sparse output): value `v` of key `k` goes to position `k` of the column's block,
///   the other positions are 0; keys must lie in `0 ..< dimension`.
///
/// The output is a multiArray of the summed dimensions, in the declared data type.
public struct FeatureVectorizerModel: FeatureModel {
    public struct Column: Equatable, Sendable {
        public var name: String
        public var dimension: Int
        public init(name: String, dimension: Int) {
            self.name = name
            self.dimension = dimension
        }
    }

    public let modelDescription: Spec.ModelDescription
    public let columns: [Column]
    let signature: FeatureSignature
    let output: Spec.FeatureDescription
    let length: Int

    /// - Throws: `FeatureError.invalidModel` when a dimension is < 1 (Core ML's validator), the
    ///   total exceeds 2^28, or the description does not have one output.
    public init(columns: [Column], description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        output = try signature.onlyOutput("a feature vectorizer")
        var total = 0
        for c in columns {
            guard c.dimension >= 1, c.dimension <= maximumFeatureVectorLength else {
                throw FeatureError.invalidModel(model: name, reason: "column '\(c.name)' has dimension \(c.dimension); it must be 1…\(maximumFeatureVectorLength)")
            }
            total += c.dimension
            guard total <= maximumFeatureVectorLength else {
                throw FeatureError.invalidModel(model: name, reason: "the columns add up to more than \(maximumFeatureVectorLength) values")
            }
        }
        self.columns = columns
        length = total
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        var v: [Double] = []
        v.reserveCapacity(length)
        for c in columns {
            let value = try signature.value(c.name, in: inputs)
            switch value {
            case let .double(d):
                try check(c, count: 1)
                v.append(d)
            case let .int64(i):
                try check(c, count: 1)
                v.append(Double(i))
            case let .multiArray(a):
                try check(c, count: a.count)
                v.append(contentsOf: a.values)
            case let .dictionary(.int64Keys(d)):
                let start = v.count
                v.append(contentsOf: repeatElement(0, count: c.dimension))
                for (k, x) in d {
                    guard k >= 0, k < Int64(c.dimension) else {
                        throw FeatureError.invalidValue(model: signature.modelName, feature: c.name,
                            reason: "dictionary key \(k) is outside the column's dimension 0..<\(c.dimension)")
                    }
                    v[start + Int(k)] = x
                }
            case let other:
                throw FeatureError.typeMismatch(model: signature.modelName, feature: c.name,
                    expected: "a Double, Int64, MultiArray or Dictionary with Int64 keys", found: other.typeName == "Dictionary" ? "a Dictionary with String keys" : other.typeName)
            }
        }
        return [output.name: signature.arrayValue(v, for: output)]
    }

    private func check(_ c: Column, count: Int) throws {
        guard count == c.dimension else {
            throw FeatureError.shapeMismatch(feature: c.name, expected: [c.dimension], found: count)
        }
    }
}

extension CoreMLModelLoader {
    /// The `featureVectorizer` row.
    static func registerFeatureVectorizer(_ t: inout [Spec.ModelKind: Loader]) {
        t[.featureVectorizer] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .featureVectorizer(p) = $0 { return p }; return nil }
            let columns = try p.inputList.map {
                FeatureVectorizerModel.Column(name: $0.inputColumn,
                                              dimension: try checkedIndex($0.inputDimensions, "inputDimensions of '\($0.inputColumn)'", context))
            }
            return try FeatureVectorizerModel(columns: columns, description: spec.description, name: context.name)
        }
    }
}
