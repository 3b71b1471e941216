// Core ML `OneHotEncoder` (OneHotEncoder.proto).
import CoreMLFormat
import Foundation

/// A categorical value (String or Int64) → a one-hot vector, as OneHotEncoder.proto describes:
/// the position of the value in the category list is where the single 1 goes.
///
/// - Output: a multiArray of `categories.count` values (0 everywhere, 1 at the category's
///   position), or, when the output is a dictionary (`outputSparse`), the one entry
///   `position → 1.0` (Int64 keys).
/// - Unknown values: all zeros (an empty dictionary) with `handleUnknown = IgnoreUnknown`,
///   `FeatureError.invalidValue` with `ErrorOnUnknown`.
/// - An Int64 category list also accepts a Double input holding an integer exactly.
public struct OneHotEncoderModel: FeatureModel {
    /// The categories in position order: String or Int64, the same list type as a classifier's `ClassLabels`.
    public typealias Categories = ClassLabels

    public struct Parameters: Equatable, Sendable {
        public var categories: Categories
        /// OneHotEncoder.proto `outputSparse`: a dictionary output instead of an array.
        public var outputSparse: Bool
        /// `handleUnknown == IgnoreUnknown`.
        public var ignoreUnknown: Bool
        public init(categories: Categories, outputSparse: Bool = false, ignoreUnknown: Bool = false) {
            self.categories = categories
            self.outputSparse = outputSparse
            self.ignoreUnknown = ignoreUnknown
        }
    }

    public let modelDescription: Spec.ModelDescription
    public let parameters: Parameters
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription
    let sparse: Bool
    let stringIndex: [String: Int]
    let int64Index: [Int64: Int]

    /// - Throws: `FeatureError.invalidModel` when the description does not have one input and one
    ///   output, or the output is neither a multiArray nor a dictionary.
    public init(parameters: Parameters, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        self.parameters = parameters
        input = try signature.onlyInput("a one-hot encoder")
        output = try signature.onlyOutput("a one-hot encoder")
        switch output.type?.kind {
        case .dictionary?: sparse = true
        case .multiArray?: sparse = false
        case nil: sparse = parameters.outputSparse
        case let k?:
            throw FeatureError.invalidModel(model: name, reason: "the one-hot encoder's output '\(output.name)' is \(k.featureTypeName); it must be a MultiArray or a Dictionary")
        }
        var s: [String: Int] = [:], n: [Int64: Int] = [:]
        switch parameters.categories {
        case let .strings(c): for (i, v) in c.enumerated() where s[v] == nil { s[v] = i }
        case let .int64s(c): for (i, v) in c.enumerated() where n[v] == nil { n[v] = i }
        }
        stringIndex = s
        int64Index = n
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let value = try signature.value(input.name, in: inputs)
        let index: Int?
        switch parameters.categories {
        case .strings:
            guard case let .string(s) = value else {
                throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: "a String", found: value.typeName)
            }
            index = stringIndex[s]
        case .int64s:
            guard let i = value.exactInt64 else {
                throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: "an Int64", found: value.typeName)
            }
            index = int64Index[i]
        }
        if index == nil, !parameters.ignoreUnknown {
            throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
                reason: "\(describe(value)) is not one of the encoder's \(parameters.categories.count) categories (handleUnknown = ErrorOnUnknown); give a known category")
        }
        if sparse {
            var d: [Int64: Double] = [:]
            if let index { d[Int64(index)] = 1 }
            return [output.name: .dictionary(.int64Keys(d))]
        }
        var v = [Double](repeating: 0, count: parameters.categories.count)
        if let index { v[index] = 1 }
        return [output.name: signature.arrayValue(v, for: output)]
    }

    private func describe(_ v: FeatureValue) -> String {
        switch v {
        case let .string(s): return "'\(s)'"
        case let .int64(i): return "\(i)"
        case let .double(d): return "\(d)"
        default: return v.typeName
        }
    }
}

extension CoreMLModelLoader {
    /// The `oneHotEncoder` row.
    static func registerOneHotEncoder(_ t: inout [Spec.ModelKind: Loader]) {
        t[.oneHotEncoder] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .oneHotEncoder(p) = $0 { return p }; return nil }
            let categories: OneHotEncoderModel.Categories
            switch p.categoryType {
            case let .stringCategories(v)?: categories = .strings(v.vector)
            case let .int64Categories(v)?: categories = .int64s(v.vector)
            case nil:
                throw FeatureError.invalidModel(model: context.name, reason: "the one-hot encoder sets no categories (stringCategories or int64Categories)")
            }
            guard p.handleUnknown == .errorOnUnknown || p.handleUnknown == .ignoreUnknown else {
                throw FeatureError.invalidModel(model: context.name, reason: "handleUnknown is \(p.handleUnknown.rawValue); expected 0 (ErrorOnUnknown) or 1 (IgnoreUnknown)")
            }
            return try OneHotEncoderModel(parameters: .init(categories: categories, outputSparse: p.outputSparse,
                                                            ignoreUnknown: p.handleUnknown == .ignoreUnknown),
                                          description: spec.description, name: context.name)
        }
    }
}
