// The update of a pipeline whose last stage is updatable: earlier stages run forward only.
import CoreMLFormat
import MLPrediction

/// Runs the training rows through every stage but the last (as predictions, `CoreMLModelLoader`),
/// adds their outputs to each row, and updates the last stage with the result (Core ML allows
/// only the last stage of an updatable pipeline to be updatable).
public final class PipelineUpdater: ModelUpdater {
    public let modelName: String
    let model: Spec.Model
    public let last: any ModelUpdater

    /// - Throws: `TrainingError.notUpdatable` (the pipeline or its last stage is not
    ///   updatable, or an earlier stage is marked updatable), errors of the stages' predictions.
    public init(model: Spec.Model, name: String, rows: [FeatureProvider], overrides: UpdateParameterOverrides = .init()) throws {
        guard model.isUpdatable else {
            throw TrainingError.notUpdatable(model: name, reason: "the pipeline is not marked updatable (Model.isUpdatable is false)")
        }
        let stages = model.pipelineModels
        guard let final = stages.last else { throw TrainingError.notUpdatable(model: name, reason: "the pipeline has no stages") }
        if let i = stages.dropLast().firstIndex(where: { $0.isUpdatable }) {
            throw TrainingError.invalidUpdateDescription(model: name, layer: "stage \(i)",
                rule: "only the last stage of a pipeline may be updatable")
        }
        guard final.isUpdatable else {
            throw TrainingError.notUpdatable(model: name, reason: "its last stage (\(final.kind?.name ?? "none")) is not updatable")
        }
        var features = rows
        let context = ModelLoadContext(name: name)
        for (i, stage) in stages.dropLast().enumerated() {
            let runnable = try CoreMLModelLoader.load(stage, context: context.stage(i, kind: stage.kind?.name ?? "none"))
            features = try features.map { row in
                var merged = row
                for (k, v) in try runnable.prediction(from: row) { merged[k] = v }
                return merged
            }
        }
        last = try UpdateTask.makeUpdater(model: final, name: "\(name) › stage \(stages.count - 1) (\(final.kind?.name ?? "none"))",
                                          rows: features, overrides: overrides)
        self.model = model
        self.modelName = name
    }

    public var settings: UpdateSettings { last.settings }

    public func train(report: (UpdateEvent, UpdateMetrics) throws -> Void, isCancelled: () -> Bool) throws {
        try last.train(report: report, isCancelled: isCancelled)
    }

    /// The pipeline with its last stage replaced by the updated one.
    public func updatedModel() throws -> Spec.Model {
        var m = model
        let stage = try last.updatedModel()
        func replace(_ p: inout Spec.Pipeline) { if !p.models.isEmpty { p.models[p.models.count - 1] = stage } }
        switch m.type {
        case var .pipeline(p): replace(&p); m.type = .pipeline(p)
        case var .pipelineClassifier(c): if var p = c.pipeline { replace(&p); c.pipeline = p }; m.type = .pipelineClassifier(c)
        case var .pipelineRegressor(r): if var p = r.pipeline { replace(&p); r.pipeline = p }; m.type = .pipelineRegressor(r)
        default: break
        }
        return m
    }
}
