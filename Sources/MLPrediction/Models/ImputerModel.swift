// Core ML `Imputer` (Imputer.proto).
import CoreMLFormat
import Foundation

/// Replaces missing values by imputed ones (Imputer.proto).
///
/// What is missing: an input feature that is absent, or a value equal to `replaceValue`; when
/// the model sets no replace value, a Double NaN (the proto's example) — Int64 and String values
/// are then missing only when absent. For an array input each element is tested (Int64 replace
/// values compare with the element's value), and missing elements get `imputed` (a single
/// Double) or their own element of the imputed array. An absent input becomes the imputed value
/// itself (a Double, Int64, String, array, or dictionary). The output has the input's type.
public struct ImputerModel: FeatureModel {
    /// Imputer.proto `ImputedValue`.
    public enum ImputedValue: Equatable, Sendable {
        case double(Double)
        case int64(Int64)
        case string(String)
        case doubleArray([Double])
        case int64Array([Int64])
        case stringDictionary([String: Double])
        case int64Dictionary([Int64: Double])
    }

    /// Imputer.proto `ReplaceValue`.
    public enum ReplaceValue: Equatable, Sendable {
        case double(Double)
        case int64(Int64)
        case string(String)
    }

    public let modelDescription: Spec.ModelDescription
    public let imputed: ImputedValue
    public let replace: ReplaceValue?
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription

    /// - Throws: `FeatureError.invalidModel` when the replace value's type does not suit the
    ///   imputed value (Core ML's validator), or the description does not have one input and one output.
    public init(imputed: ImputedValue, replace: ReplaceValue?, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        input = try signature.onlyInput("an imputer")
        output = try signature.onlyOutput("an imputer")
        switch (imputed, replace) {
        case (_, nil), (.double, .double?), (.doubleArray, .double?), (.int64, .int64?), (.int64Array, .int64?),
             (.string, .string?): break
        default:
            throw FeatureError.invalidModel(model: name, reason: "the replace value \(replace.map { "\($0)" } ?? "none") does not suit the imputed value \(imputed)")
        }
        self.imputed = imputed
        self.replace = replace
    }

    private func isMissing(_ d: Double) -> Bool {
        switch replace {
        case nil: return d.isNaN
        case let .double(r)?: return r.isNaN ? d.isNaN : d == r
        case let .int64(r)?: return d == Double(r)
        case .string?: return false
        }
    }

    private var absentValue: FeatureValue {
        switch imputed {
        case let .double(d): return .double(d)
        case let .int64(i): return .int64(i)
        case let .string(s): return .string(s)
        case let .doubleArray(a): return signature.arrayValue(a, for: output)
        case let .int64Array(a): return signature.arrayValue(a.map(Double.init), for: output)
        case let .stringDictionary(d): return .dictionary(.stringKeys(d))
        case let .int64Dictionary(d): return .dictionary(.int64Keys(d))
        }
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        guard let value = inputs[input.name] else { return [output.name: absentValue] }
        switch (value, imputed) {
        case let (.double(d), .double(v)):
            return [output.name: .double(isMissing(d) ? v : d)]
        case let (.int64(i), .int64(v)):
            if case let .int64(r)? = replace, i == r { return [output.name: .int64(v)] }
            return [output.name: .int64(i)]
        case let (.string(s), .string(v)):
            if case let .string(r)? = replace, s == r { return [output.name: .string(v)] }
            return [output.name: .string(s)]
        case let (.multiArray(a), .double(v)):
            var a2 = a
            a2.values = a.values.map { isMissing($0) ? MultiArray.round(v, to: a.dataType) : $0 }
            return [output.name: .multiArray(a2)]
        case (.multiArray(let a), .doubleArray), (.multiArray(let a), .int64Array):
            let fill: [Double]
            if case let .doubleArray(f) = imputed { fill = f } else if case let .int64Array(f) = imputed { fill = f.map(Double.init) } else { fill = [] }
            guard fill.count == a.count else {
                throw FeatureError.shapeMismatch(feature: input.name, expected: [fill.count], found: a.count)
            }
            var a2 = a
            a2.values = a.values.indices.map { isMissing(a.values[$0]) ? MultiArray.round(fill[$0], to: a.dataType) : a.values[$0] }
            return [output.name: .multiArray(a2)]
        case (.dictionary, .stringDictionary), (.dictionary, .int64Dictionary):
            return [output.name: value]
        default:
            throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name,
                expected: "a value of the imputed type (\(imputed))", found: value.typeName)
        }
    }
}

extension CoreMLModelLoader {
    /// The `imputer` row.
    static func registerImputer(_ t: inout [Spec.ModelKind: Loader]) {
        t[.imputer] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .imputer(p) = $0 { return p }; return nil }
            let imputed: ImputerModel.ImputedValue
            switch p.imputedValue {
            case let .imputedDoubleValue(d)?: imputed = .double(d)
            case let .imputedInt64Value(i)?: imputed = .int64(i)
            case let .imputedStringValue(s)?: imputed = .string(s)
            case let .imputedDoubleArray(v)?: imputed = .doubleArray(v.vector)
            case let .imputedInt64Array(v)?: imputed = .int64Array(v.vector)
            case let .imputedStringDictionary(m)?: imputed = .stringDictionary(m.map)
            case let .imputedInt64Dictionary(m)?: imputed = .int64Dictionary(m.map)
            case nil: throw FeatureError.invalidModel(model: context.name, reason: "the imputer sets no imputed value")
            }
            let replace: ImputerModel.ReplaceValue?
            switch p.replaceValue {
            case let .replaceDoubleValue(d)?: replace = .double(d)
            case let .replaceInt64Value(i)?: replace = .int64(i)
            case let .replaceStringValue(s)?: replace = .string(s)
            case nil: replace = nil
            }
            return try ImputerModel(imputed: imputed, replace: replace, description: spec.description, name: context.name)
        }
    }
}
