// Core ML `CategoricalMapping` (CategoricalMapping.proto).
import CoreMLFormat
import Foundation

/// String → Int64 or Int64 → String by a table (CategoricalMapping.proto). A value missing from
/// the table maps to the default value when the model has one, else it is
/// `FeatureError.invalidValue`. A sequence input (of the input type) is mapped element by
/// element into a sequence output, as Core ML's validator allows.
public struct CategoricalMappingModel: FeatureModel {
    public enum Mapping: Equatable, Sendable {
        case stringToInt64([String: Int64])
        case int64ToString([Int64: String])
    }

    /// `ValueOnUnknown`: an Int64 default for string → int64, a String for int64 → string.
    public enum Default: Equatable, Sendable {
        case int64(Int64)
        case string(String)
    }

    public let modelDescription: Spec.ModelDescription
    public let mapping: Mapping
    public let defaultValue: Default?
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription

    /// - Throws: `FeatureError.invalidModel` when the default's type is not the mapping's output
    ///   type (Core ML's validator), or the description does not have one input and one output.
    public init(mapping: Mapping, defaultValue: Default?, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        input = try signature.onlyInput("a categorical mapping")
        output = try signature.onlyOutput("a categorical mapping")
        switch (mapping, defaultValue) {
        case (.stringToInt64, .string?):
            throw FeatureError.invalidModel(model: name, reason: "the default value is a String but the mapping produces Int64 values")
        case (.int64ToString, .int64?):
            throw FeatureError.invalidModel(model: name, reason: "the default value is an Int64 but the mapping produces String values")
        default: break
        }
        self.mapping = mapping
        self.defaultValue = defaultValue
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let value = try signature.value(input.name, in: inputs)
        switch (mapping, value) {
        case let (.stringToInt64, .string(s)):
            return [output.name: .int64(try map(s))]
        case let (.stringToInt64, .sequence(.string(s))):
            return [output.name: .sequence(.int64(try s.map(map)))]
        case let (.int64ToString, .sequence(.int64(s))):
            return [output.name: .sequence(.string(try s.map(map)))]
        case (.int64ToString, _):
            guard let i = value.exactInt64 else { break }
            return [output.name: .string(try map(i))]
        default: break
        }
        let want: String
        if case .stringToInt64 = mapping { want = "a String (or a sequence of strings)" } else { want = "an Int64 (or a sequence of Int64)" }
        throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: want, found: value.typeName)
    }

    private func map(_ s: String) throws -> Int64 {
        if case let .stringToInt64(m) = mapping, let v = m[s] { return v }
        if case let .int64(d)? = defaultValue { return d }
        throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
            reason: "'\(s)' is not in the mapping and the model has no default value; give a known category")
    }

    private func map(_ i: Int64) throws -> String {
        if case let .int64ToString(m) = mapping, let v = m[i] { return v }
        if case let .string(d)? = defaultValue { return d }
        throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
            reason: "\(i) is not in the mapping and the model has no default value; give a known category")
    }
}

extension CoreMLModelLoader {
    /// The `categoricalMapping` row.
    static func registerCategoricalMapping(_ t: inout [Spec.ModelKind: Loader]) {
        t[.categoricalMapping] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .categoricalMapping(p) = $0 { return p }; return nil }
            let mapping: CategoricalMappingModel.Mapping
            switch p.mappingType {
            case let .stringToInt64Map(m)?: mapping = .stringToInt64(m.map)
            case let .int64ToStringMap(m)?: mapping = .int64ToString(m.map)
            case nil: throw FeatureError.invalidModel(model: context.name, reason: "the categorical mapping sets no mapping (stringToInt64Map or int64ToStringMap)")
            }
            let d: CategoricalMappingModel.Default?
            switch p.valueOnUnknown {
            case let .strValue(s)?: d = .string(s)
            case let .int64Value(i)?: d = .int64(i)
            case nil: d = nil
            }
            return try CategoricalMappingModel(mapping: mapping, defaultValue: d, description: spec.description, name: context.name)
        }
    }
}
