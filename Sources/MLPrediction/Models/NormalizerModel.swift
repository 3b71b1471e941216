// Core ML `Normalizer` (Normalizer.proto).
import CoreMLFormat
import Foundation

/// Divides a multiArray by its norm (Normalizer.proto): `LMax` z = max(x_i) (the largest value,
/// as the proto's formula says — not the largest magnitude), `L1` z = Σ|x_i|, `L2`
/// z = √(Σ x_i²). The output has the input's shape, in the declared data type.
/// A zero norm leaves the values unchanged (division by 1), as scikit-learn's `normalize` does;
/// the proto does not say.
public struct NormalizerModel: FeatureModel {
    public enum Norm: String, Equatable, Sendable { case lMax, l1, l2 }

    public let modelDescription: Spec.ModelDescription
    public let norm: Norm
    let signature: FeatureSignature
    let input: Spec.FeatureDescription
    let output: Spec.FeatureDescription

    /// - Throws: `FeatureError.invalidModel` when the description does not have one input and one output.
    public init(norm: Norm, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        input = try signature.onlyInput("a normalizer")
        output = try signature.onlyOutput("a normalizer")
        self.norm = norm
    }

    /// The normalized values (`x / z`, or `x` when z = 0).
    public static func normalize(_ x: [Double], norm: Norm) -> [Double] {
        var z: Double
        switch norm {
        case .lMax: z = x.max() ?? 0
        case .l1: z = x.reduce(0) { $0 + abs($1) }
        case .l2: z = x.reduce(0) { $0 + $1 * $1 }.squareRoot()
        }
        if z == 0 { z = 1 }
        return x.map { $0 / z }
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let value = try signature.value(input.name, in: inputs)
        guard case let .multiArray(a) = value else {
            throw FeatureError.typeMismatch(model: signature.modelName, feature: input.name, expected: "a MultiArray", found: value.typeName)
        }
        let y = Self.normalize(a.values, norm: norm)
        let dt: MultiArray.DataType
        if case let .multiArray(t)? = output.type?.kind, let d = MultiArray.DataType(t.dataType) { dt = d } else { dt = a.dataType }
        return [output.name: .multiArray(try MultiArray(shape: a.shape, dataType: dt, values: y))]
    }
}

extension CoreMLModelLoader {
    /// The `normalizer` row.
    static func registerNormalizer(_ t: inout [Spec.ModelKind: Loader]) {
        t[.normalizer] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .normalizer(p) = $0 { return p }; return nil }
            let norm: NormalizerModel.Norm
            switch p.normType {
            case .lMax: norm = .lMax
            case .l1: norm = .l1
            case .l2: norm = .l2
            default: throw FeatureError.invalidModel(model: context.name, reason: "normType \(p.normType.rawValue) is not LMax (0), L1 (1) or L2 (2)")
            }
            return try NormalizerModel(norm: norm, description: spec.description, name: context.name)
        }
    }
}
