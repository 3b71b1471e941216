// Shared input and output handling of classical Core ML models, following Core ML's conventions:
// numeric input features are concatenated, in the order of the model description, into one
// feature vector (a double or int64 feature contributes one value, a multiArray all its values
// row-major); classifiers return the winning label and a label → probability dictionary.
import CoreMLFormat
import Foundation

/// The inputs and outputs of one model, resolved from its `ModelDescription` at load time.
public struct FeatureSignature: Sendable {
    public let modelName: String
    public let description: Spec.ModelDescription

    public init(modelName: String, description: Spec.ModelDescription?) {
        self.modelName = modelName
        self.description = description ?? Spec.ModelDescription()
    }

    public var inputs: [Spec.FeatureDescription] { description.input }
    public var outputs: [Spec.FeatureDescription] { description.output }

    /// The given value of input `name`, or `FeatureError.missingInput`.
    public func value(_ name: String, in provider: FeatureProvider) throws -> FeatureValue {
        if let v = provider[name] { return v }
        let type = inputs.first { $0.name == name }?.type.map(describe) ?? "a value"
        throw FeatureError.missingInput(model: modelName, feature: name, expected: type)
    }

    /// Core ML's numeric feature vector: every input of the description, in order, concatenated
    /// (double / int64 → one value, multiArray → its values row-major).
    /// - Parameter count: when given, the vector must have exactly this many values.
    /// - Throws: `FeatureError.missingInput`, `.typeMismatch` (string, dictionary, image inputs),
    ///   `.shapeMismatch` when `count` differs.
    public func numericVector(from provider: FeatureProvider, count: Int? = nil) throws -> [Double] {
        var v: [Double] = []
        if let count { v.reserveCapacity(count) }
        for input in inputs {
            switch try value(input.name, in: provider) {
            case let .double(d): v.append(d)
            case let .int64(i): v.append(Double(i))
            case let .multiArray(a): v.append(contentsOf: a.values)
            case let other:
                throw FeatureError.typeMismatch(model: modelName, feature: input.name,
                                                expected: "a Double, Int64 or MultiArray", found: other.typeName)
            }
        }
        if let count, v.count != count {
            throw FeatureError.shapeMismatch(feature: inputs.map(\.name).joined(separator: "+"), expected: [count], found: v.count)
        }
        return v
    }

    /// The description's output feature named `name`, or the first output when `name` is empty.
    public func output(named name: String) -> Spec.FeatureDescription? {
        name.isEmpty ? outputs.first : outputs.first { $0.name == name }
    }

    /// A regression result as the output's declared type: a Double feature gets `values[0]`,
    /// a multiArray feature gets all values (shape `[values.count]`, or the declared shape when
    /// it holds that many), an Int64 feature the value truncated toward zero.
    public func regressionValue(_ values: [Double], for output: Spec.FeatureDescription?) -> FeatureValue {
        switch output?.type?.kind {
        case let .multiArray(t)?:
            let dt = MultiArray.DataType(t.dataType) ?? .float64
            let shape = t.shape.compactMap { Int(exactly: $0) }
            if shape.count == t.shape.count, !shape.isEmpty, shape.reduce(1, *) == values.count,
               let a = try? MultiArray(shape: shape, dataType: dt, values: values) {
                return .multiArray(a)
            }
            return .multiArray(MultiArray(vector: values, dataType: dt))
        case .int64?:
            let d = values.first ?? 0
            return .int64(d.isFinite ? Int64(clamping: Int(exactly: d.rounded(.towardZero)) ?? (d < 0 ? Int.min : Int.max)) : 0)
        default:
            if values.count == 1 { return .double(values[0]) }
            return .multiArray(MultiArray(vector: values, dataType: .float64))
        }
    }

    /// A classifier's outputs: `predictedFeatureName` ← the label of the largest score (first on
    /// ties, as Core ML), `predictedProbabilitiesName` ← label → score (when the description has it).
    /// - Parameters:
    ///   - labels: class labels in the model's class order.
    ///   - scores: one score (probability) per class, same order.
    ///   - winner: the index of the predicted label when the model's own rule decides it (a
    ///     one-dimension tree ensemble's `p ≥ 0.5`, LibSVM's vote, kNN's tie-break); `nil` = argmax.
    public func classifierOutputs(labels: ClassLabels, scores: [Double], winner: Int? = nil) throws -> FeatureProvider {
        guard scores.count == labels.count, !scores.isEmpty else {
            throw FeatureError.invalidModel(model: modelName,
                                            reason: "\(scores.count) class scores for \(labels.count) class labels")
        }
        var best = 0
        if let winner, scores.indices.contains(winner) {
            best = winner
        } else {
            for i in 1..<scores.count where scores[i] > scores[best] || (scores[best].isNaN && !scores[i].isNaN) { best = i }
        }
        var out: FeatureProvider = [:]
        out[predictedLabelName] = labels.value(at: best)
        if let probName = probabilitiesName { out[probName] = labels.dictionary(scores) }
        return out
    }

    /// The classifier's label output: `predictedFeatureName`, else the first String/Int64 output,
    /// else `"classLabel"`.
    public var predictedLabelName: String {
        description.predictedFeatureName.isEmpty
            ? (outputs.first { if case .string? = $0.type?.kind { return true }; if case .int64? = $0.type?.kind { return true }; return false }?.name ?? "classLabel")
            : description.predictedFeatureName
    }

    /// The classifier's label → probability output: `predictedProbabilitiesName`, else the first
    /// dictionary output, else nil (the model returns no probabilities).
    public var probabilitiesName: String? {
        description.predictedProbabilitiesName.isEmpty
            ? outputs.first { if case .dictionary? = $0.type?.kind { return true }; return false }?.name
            : description.predictedProbabilitiesName
    }

    private func describe(_ t: Spec.FeatureType) -> String {
        switch t.kind {
        case .int64: return "Int64"
        case .double: return "Double"
        case .string: return "String"
        case let .multiArray(a): return "MultiArray \(a.dataType) \(a.shape)"
        case .dictionary: return "Dictionary"
        case .image: return "Image"
        case .sequence: return "Sequence"
        default: return "a value"
        }
    }
}

/// A classifier's class labels (`stringClassLabels` or `int64ClassLabels` in the .proto files).
public enum ClassLabels: Hashable, Sendable {
    case strings([String])
    case int64s([Int64])

    public var count: Int {
        switch self {
        case let .strings(s): return s.count
        case let .int64s(s): return s.count
        }
    }

    /// The label at `i` as a feature value (String or Int64).
    public func value(at i: Int) -> FeatureValue {
        switch self {
        case let .strings(s): return .string(s[i])
        case let .int64s(s): return .int64(s[i])
        }
    }

    /// label → score. Duplicate labels keep the last score.
    public func dictionary(_ scores: [Double]) -> FeatureValue {
        switch self {
        case let .strings(s):
            var d: [String: Double] = [:]
            for (l, p) in zip(s, scores) { d[l] = p }
            return .dictionary(.stringKeys(d))
        case let .int64s(s):
            var d: [Int64: Double] = [:]
            for (l, p) in zip(s, scores) { d[l] = p }
            return .dictionary(.int64Keys(d))
        }
    }
}

extension MultiArray.DataType {
    /// The Core ML `ArrayFeatureType.ArrayDataType`; nil for INVALID and unknown values.
    public init?(_ t: Spec.ArrayFeatureType.DataType) {
        switch t {
        case .float32: self = .float32
        case .double: self = .float64
        case .int32: self = .int32
        case .float16: self = .float16
        default: return nil
        }
    }
}
