// Core ML `Identity` (Identity.proto).
import CoreMLFormat
import Foundation

/// Returns its inputs unchanged (Identity.proto). Output `i` is the input of the same name when
/// there is one, else input `i` of the description.
public struct IdentityModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    /// output name → input name.
    let sources: [(String, String)]

    /// - Throws: `FeatureError.invalidModel` when an output has neither an input of its name nor
    ///   an input at its position.
    public init(description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        let inputNames = signature.inputs.map(\.name)
        var s: [(String, String)] = []
        for (i, o) in signature.outputs.enumerated() {
            if inputNames.contains(o.name) { s.append((o.name, o.name)) }
            else if i < inputNames.count { s.append((o.name, inputNames[i])) }
            else {
                throw FeatureError.invalidModel(model: name, reason: "identity output '\(o.name)' has no input of its name nor at its position \(i)")
            }
        }
        sources = s
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        var out: FeatureProvider = [:]
        for (o, i) in sources { out[o] = try signature.value(i, in: inputs) }
        return out
    }
}

extension CoreMLModelLoader {
    /// The `identity` row.
    static func registerIdentity(_ t: inout [Spec.ModelKind: Loader]) {
        t[.identity] = { spec, context in
            _ = try classicalParameters(spec, context) { if case let .identity(p) = $0 { return p }; return nil }
            return try IdentityModel(description: spec.description, name: context.name)
        }
    }
}
