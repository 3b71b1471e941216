// Small helpers shared by the feature-engineering models (one input, one output, declared types).
import CoreMLFormat
import Foundation

extension FeatureSignature {
    /// The model's single input, or `FeatureError.invalidModel` saying how many there are.
    func onlyInput(_ what: String) throws -> Spec.FeatureDescription {
        guard inputs.count == 1 else {
            throw FeatureError.invalidModel(model: modelName, reason: "\(what) takes exactly one input feature, the description has \(inputs.count)")
        }
        return inputs[0]
    }

    /// The model's single output, or `FeatureError.invalidModel` saying how many there are.
    func onlyOutput(_ what: String) throws -> Spec.FeatureDescription {
        guard outputs.count == 1 else {
            throw FeatureError.invalidModel(model: modelName, reason: "\(what) has exactly one output feature, the description has \(outputs.count)")
        }
        return outputs[0]
    }

    /// A multiArray result with the declared data type of `output` (float64 when it declares
    /// none) and its declared shape when that holds `values.count` values, else `[values.count]`.
    func arrayValue(_ values: [Double], for output: Spec.FeatureDescription?) -> FeatureValue {
        if case .multiArray? = output?.type?.kind { return regressionValue(values, for: output) }
        return .multiArray(MultiArray(vector: values))
    }
}

extension Spec.FeatureType.Kind {
    /// The Core ML name of the kind, for messages.
    var featureTypeName: String {
        switch self {
        case .none: return "no type"
        case .int64: return "Int64"
        case .double: return "Double"
        case .string: return "String"
        case .image: return "Image"
        case .multiArray: return "MultiArray"
        case .dictionary: return "Dictionary"
        case .sequence: return "Sequence"
        case .state: return "State"
        }
    }
}

extension FeatureValue {
    /// The value as an Int64 when it is one, or a Double holding an integer exactly.
    var exactInt64: Int64? {
        switch self {
        case let .int64(i): return i
        case let .double(d): return Int64(exactly: d)
        default: return nil
        }
    }
}

/// The largest vector a feature-engineering model builds from sizes read from a file
/// (2^28 values, 2 GiB of doubles): larger sizes are refused as damaged.
let maximumFeatureVectorLength = 1 << 28

extension CoreMLModelLoader {
    /// The typed parameters of a classical model (`Spec.Model.classicalParameters`), picked by
    /// `extract`; `FeatureError.invalidModel` naming the model when they are absent.
    static func classicalParameters<T>(_ spec: Spec.Model, _ context: ModelLoadContext,
                                       _ extract: (Spec.ClassicalParameters) -> T?) throws -> T {
        guard let p = try spec.classicalParameters(file: context.name), let t = extract(p) else {
            throw FeatureError.invalidModel(model: context.name,
                                            reason: "the \(spec.kind?.name ?? "model")'s parameters are missing")
        }
        return t
    }

    /// A count or index read from a file, as an Int in 0...`maximumFeatureVectorLength`.
    static func checkedIndex(_ v: UInt64, _ what: String, _ context: ModelLoadContext) throws -> Int {
        guard let i = Int(exactly: v), i <= maximumFeatureVectorLength else {
            throw FeatureError.invalidModel(model: context.name, reason: "\(what) \(v) is too large (at most \(maximumFeatureVectorLength))")
        }
        return i
    }
}
