// Core ML `ArrayFeatureExtractor` (ArrayFeatureExtractor.proto).
import CoreMLFormat
import Foundation

/// Picks values of a multiArray input by zero-based (row-major) index (ArrayFeatureExtractor.proto).
///
/// - Output described as Double: the one extracted value (exactly one index, as Core ML's
///   validator requires); as Int64: the value, which must be an integer (a fractional value is
///   `FeatureError.invalidValue`, not truncated); as multiArray: the extracted values in index
///   order, in the declared data type.
/// - An index beyond the input's values is `FeatureError.invalidValue`.
public struct ArrayFeatureExtractorModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    public let indices: [Int]
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription

    /// - Throws: `FeatureError.invalidModel` for no index, a negative index, a scalar output
    ///   with several indices, or a description without one input and one output.
    public init(indices: [Int], description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        input = try signature.onlyInput("an array feature extractor")
        output = try signature.onlyOutput("an array feature extractor")
        guard !indices.isEmpty, indices.allSatisfy({ $0 >= 0 }) else {
            throw FeatureError.invalidModel(model: name, reason: "extractIndex must hold one or more indices ≥ 0, found \(indices)")
        }
        switch output.type?.kind {
        case .double?, .int64?:
            guard indices.count == 1 else {
                throw FeatureError.invalidModel(model: name, reason: "the output '\(output.name)' is a scalar but \(indices.count) indices are extracted; exactly one is allowed")
            }
        case .multiArray?, nil: break
        case let k?:
            throw FeatureError.invalidModel(model: name, reason: "the output '\(output.name)' is \(k.featureTypeName); it must be a Double, Int64 or MultiArray")
        }
        self.indices = indices
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let value = try signature.value(input.name, in: inputs)
        let values: [Double]
        switch value {
        case let .multiArray(a): values = a.values
        case let .double(d): values = [d]
        case let .int64(i): values = [Double(i)]
        default:
            throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: "a MultiArray", found: value.typeName)
        }
        var picked: [Double] = []
        picked.reserveCapacity(indices.count)
        for i in indices {
            guard i < values.count else {
                throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
                    reason: "index \(i) is outside the array's \(values.count) values")
            }
            picked.append(values[i])
        }
        switch output.type?.kind {
        case .double?:
            return [output.name: .double(picked[0])]
        case .int64?:
            guard let n = Int64(exactly: picked[0]) else {
                throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
                    reason: "value \(picked[0]) at index \(indices[0]) is not an integer, but the output '\(output.name)' is Int64")
            }
            return [output.name: .int64(n)]
        default:
            return [output.name: signature.arrayValue(picked, for: output)]
        }
    }
}

extension CoreMLModelLoader {
    /// The `arrayFeatureExtractor` row.
    static func registerArrayFeatureExtractor(_ t: inout [Spec.ModelKind: Loader]) {
        t[.arrayFeatureExtractor] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .arrayFeatureExtractor(p) = $0 { return p }; return nil }
            let indices = try p.extractIndex.map { try checkedIndex($0, "extractIndex", context) }
            return try ArrayFeatureExtractorModel(indices: indices, description: spec.description, name: context.name)
        }
    }
}
