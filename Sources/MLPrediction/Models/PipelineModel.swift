// Core ML pipelines (`pipeline`, `pipelineClassifier`, `pipelineRegressor`; Model.proto `Pipeline`):
// stages run in order over one running set of named features.
import CoreMLFormat
import Foundation

/// A Core ML pipeline: its stages run in order. Each stage reads the features its own description
/// names from the running set — the pipeline's inputs plus the outputs of the stages before it (a
/// later output replaces an earlier feature of the same name, as Core ML's pipeline does) — and
/// the pipeline returns the outputs its description declares. A pipeline may be a stage of
/// another pipeline; neural networks are stages through `NeuralNetworkFeatureModel`.
public struct PipelineModel: FeatureModel {
    /// One stage: its name (the pipeline's `names` entry, else `model<i>` as Model.proto says),
    /// its model kind and the loaded model.
    public struct Stage: Sendable {
        public let name: String
        public let kind: Spec.ModelKind
        public let model: any FeatureModel
        public init(name: String, kind: Spec.ModelKind, model: any FeatureModel) {
            self.name = name
            self.kind = kind
            self.model = model
        }
    }

    public let modelDescription: Spec.ModelDescription
    public let stages: [Stage]
    let name: String

    /// Checks, as Core ML's pipeline validator does, that every stage input is a pipeline input or
    /// an output of an earlier stage, and that every pipeline output is produced.
    /// - Throws: `FeatureError.invalidModel` naming the stage and the feature.
    public init(stages: [Stage], description: Spec.ModelDescription?, name: String) throws {
        guard !stages.isEmpty else {
            throw FeatureError.invalidModel(model: name, reason: "the pipeline has no stages; Core ML requires one or more")
        }
        let desc = description ?? Spec.ModelDescription()
        var known = Set(desc.input.map(\.name))
        for (i, s) in stages.enumerated() {
            for f in s.model.modelDescription.input where !known.contains(f.name) && !(f.type?.isOptional ?? false) {
                throw FeatureError.invalidModel(model: name,
                    reason: "stage \(i) (\(s.kind.name), '\(s.name)') reads feature '\(f.name)', which is neither a pipeline input nor an output of an earlier stage")
            }
            known.formUnion(s.model.modelDescription.output.map(\.name))
        }
        for f in desc.output where !known.contains(f.name) {
            throw FeatureError.invalidModel(model: name, reason: "the pipeline output '\(f.name)' is produced by no stage and is not an input")
        }
        self.stages = stages
        self.modelDescription = desc
        self.name = name
    }

    /// Loads a `pipeline`, `pipelineClassifier` or `pipelineRegressor` model: each stage through
    /// `CoreMLModelLoader.load` with the context `context.stage(i, kind:)`, so errors (an
    /// Apple-proprietary stage, damaged parameters) name the stage.
    /// - Throws: `FeatureError` / `CoreMLImportError` of the first stage that cannot be loaded.
    public init(spec: Spec.Model, context: ModelLoadContext) throws {
        let pipeline: Spec.Pipeline?
        switch spec.type {
        case let .pipeline(p): pipeline = p
        case let .pipelineClassifier(p): pipeline = p.pipeline
        case let .pipelineRegressor(p): pipeline = p.pipeline
        default:
            throw FeatureError.unsupportedModel(model: context.name, kind: spec.kind?.name ?? "none",
                                                hint: "PipelineModel loads pipeline, pipelineClassifier and pipelineRegressor models")
        }
        guard let p = pipeline else {
            throw FeatureError.invalidModel(model: context.name, reason: "the \(spec.kind?.name ?? "pipeline") has no Pipeline message")
        }
        if !p.names.isEmpty, p.names.count != p.models.count {
            throw FeatureError.invalidModel(model: context.name,
                                            reason: "\(p.names.count) stage names for \(p.models.count) stages")
        }
        var stages: [Stage] = []
        stages.reserveCapacity(p.models.count)
        for (i, m) in p.models.enumerated() {
            let kind = m.kind ?? Spec.ModelKind(rawValue: 0)
            let stageName = p.names.isEmpty ? "model\(i)" : p.names[i]
            let label = p.names.isEmpty ? (m.kind?.name ?? "none") : "\(m.kind?.name ?? "none") '\(stageName)'"
            let model = try CoreMLModelLoader.load(m, context: context.stage(i, kind: label))
            stages.append(Stage(name: stageName, kind: kind, model: model))
        }
        try self.init(stages: stages, description: spec.description, name: context.name)
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        var features = inputs
        for s in stages {
            var stageInputs: FeatureProvider = [:]
            for f in s.model.modelDescription.input {
                if let v = features[f.name] { stageInputs[f.name] = v }
            }
            let out = try s.model.prediction(from: stageInputs)
            for (k, v) in out { features[k] = v }
        }
        var result: FeatureProvider = [:]
        for f in modelDescription.output {
            guard let v = features[f.name] else {
                if f.type?.isOptional ?? false { continue }
                throw FeatureError.invalidModel(model: name, reason: "no stage produced the pipeline output '\(f.name)'")
            }
            result[f.name] = v
        }
        return result
    }
}

extension CoreMLModelLoader {
    /// Rows for `pipeline`, `pipelineClassifier`, `pipelineRegressor` (`PipelineModel`).
    static func registerPipelines(_ t: inout [Spec.ModelKind: Loader]) {
        let load: Loader = { spec, context in try PipelineModel(spec: spec, context: context) }
        t[.pipeline] = load
        t[.pipelineClassifier] = load
        t[.pipelineRegressor] = load
    }
}
