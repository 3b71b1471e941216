// Core ML `Scaler` (Scaler.proto).
import CoreMLFormat
import Foundation

/// f(x) = scaleValue · (x + shiftValue) (Scaler.proto: the shift is added before scaling).
/// An empty `shift` is 0 and an empty `scale` is 1; a single value applies to every element of
/// an array input, otherwise there is one value per element (row-major). Int64 inputs are
/// scaled as doubles; an Int64 output must be an exact integer (a lossy cast is
/// `FeatureError.invalidValue`, as the proto says). Array outputs keep the input's shape, in the
/// declared data type.
public struct ScalerModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    public let shift: [Double]
    public let scale: [Double]
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription

    /// - Throws: `FeatureError.invalidModel` when the description does not have one input and one output.
    public init(shift: [Double], scale: [Double], description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        input = try signature.onlyInput("a scaler")
        output = try signature.onlyOutput("a scaler")
        self.shift = shift
        self.scale = scale
    }

    /// scale · (x + shift), element-wise with broadcasting of single values.
    /// - Throws: `FeatureError.shapeMismatch` when a parameter list has neither 0, 1 nor `x.count` values.
    func apply(_ x: [Double]) throws -> [Double] {
        for (p, label) in [(shift, "shiftValue"), (scale, "scaleValue")] where p.count > 1 && p.count != x.count {
            throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
                reason: "the input has \(x.count) values but \(label) has \(p.count); give an array of \(p.count) values")
        }
        return x.indices.map { i in
            let b = shift.isEmpty ? 0 : shift.count == 1 ? shift[0] : shift[i]
            let s = scale.isEmpty ? 1 : scale.count == 1 ? scale[0] : scale[i]
            return s * (x[i] + b)
        }
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let value = try signature.value(input.name, in: inputs)
        let x: [Double]
        var shape: [Int]? = nil
        var inType: MultiArray.DataType = .float64
        switch value {
        case let .double(d): x = [d]
        case let .int64(i): x = [Double(i)]
        case let .multiArray(a): x = a.values; shape = a.shape; inType = a.dataType
        default:
            throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: "a Double, Int64 or MultiArray", found: value.typeName)
        }
        let y = try apply(x)
        switch output.type?.kind {
        case .double?:
            guard y.count == 1 else { break }
            return [output.name: .double(y[0])]
        case .int64?:
            guard y.count == 1 else { break }
            guard let n = Int64(exactly: y[0]) else {
                throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
                    reason: "the scaled value \(y[0]) is not an integer, but the output '\(output.name)' is Int64 (a lossy cast is an error)")
            }
            return [output.name: .int64(n)]
        case let .multiArray(t)?:
            let dt = MultiArray.DataType(t.dataType) ?? inType
            return [output.name: .multiArray(try MultiArray(shape: shape ?? [y.count], dataType: dt, values: y))]
        default:
            if shape == nil, y.count == 1 { return [output.name: .double(y[0])] }
            return [output.name: .multiArray(try MultiArray(shape: shape ?? [y.count], dataType: inType, values: y))]
        }
        throw FeatureError.invalidValue(model: signature.modelName, feature: input.name,
            reason: "an array of \(y.count) values cannot be the scalar output '\(output.name)'")
    }
}

extension CoreMLModelLoader {
    /// The `scaler` row.
    static func registerScaler(_ t: inout [Spec.ModelKind: Loader]) {
        t[.scaler] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .scaler(p) = $0 { return p }; return nil }
            return try ScalerModel(shift: p.shiftValue, scale: p.scaleValue, description: spec.description, name: context.name)
        }
    }
}
