// Optional inputs with default values (Core ML 5+: `ArrayFeatureType.defaultOptionalValue`,
// with `FeatureType.isOptional`): when such an input is not given, Core ML fills an array of the
// declared (default) shape with the default value. Applied by `CoreMLModelLoader.load` to every
// model, pipeline stages included.
import CoreMLFormat
import Foundation

struct DefaultedInputsModel: FeatureModel {
    let base: any FeatureModel
    /// input name → the value used when the input is absent.
    let defaults: [String: FeatureValue]

    var modelDescription: Spec.ModelDescription { base.modelDescription }

    /// The defaults a description declares, or nil when it declares none.
    /// - Throws: `FeatureError.invalidModel` for a default whose declared shape is unusable.
    static func defaults(of description: Spec.ModelDescription?, model: String) throws -> [String: FeatureValue]? {
        var out: [String: FeatureValue] = [:]
        for f in description?.input ?? [] {
            guard let t = f.type, t.isOptional, case let .multiArray(a) = t.kind, let d = a.defaultValue else { continue }
            let value: Double
            switch d {
            case let .int(i): value = Double(i)
            case let .float(x): value = Double(x)
            case let .double(x): value = x
            }
            var shape: [Int] = []
            var count = 1
            for dim in a.shape {
                guard let n = Int(exactly: dim), n >= 0, n <= 1 << 24 else {
                    throw FeatureError.invalidModel(model: model, reason: "optional input '\(f.name)' has a default value but its shape \(a.shape) is not a fixed, reasonable shape")
                }
                let (p, o) = count.multipliedReportingOverflow(by: n)
                guard !o, p <= 1 << 24 else {
                    throw FeatureError.invalidModel(model: model, reason: "optional input '\(f.name)': default shape \(a.shape) holds more than 2^24 values")
                }
                shape.append(n)
                count = p
            }
            if shape.isEmpty { shape = [1] }
            out[f.name] = .multiArray(try MultiArray(shape: shape, dataType: MultiArray.DataType(a.dataType) ?? .float64,
                                                     values: [Double](repeating: value, count: count)))
        }
        return out.isEmpty ? nil : out
    }

    private func filled(_ p: FeatureProvider) -> FeatureProvider {
        var p = p
        for (k, v) in defaults where p[k] == nil { p[k] = v }
        return p
    }

    func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try base.prediction(from: filled(inputs))
    }

    func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        try base.predictions(from: batch.map(filled))
    }
}
