// The public update API, in the shape of Core ML's MLUpdateTask / MLUpdateContext.
import CoreMLFormat
import Foundation
import MLPrediction

/// When a progress handler is called (Core ML's `MLUpdateProgressEvent`).
public enum UpdateEvent: Sendable, Hashable {
    /// Before the first epoch.
    case trainingBegin
    /// After each mini-batch's gradient step.
    case miniBatchEnd
    /// After each epoch.
    case epochEnd
}

/// Metrics reported with an event (Core ML's `MLMetricKey` lossValue, epochIndex, miniBatchIndex).
public struct UpdateMetrics: Sendable, Equatable {
    /// 0-based epoch.
    public var epochIndex: Int
    /// 0-based mini-batch within the epoch (the last one at `.epochEnd`).
    public var miniBatchIndex: Int
    /// Mean loss of the mini-batch (`.miniBatchEnd`) or of the epoch (`.epochEnd`; the mean of
    /// the per-example losses computed while the epoch ran). NaN for events without a loss.
    public var lossValue: Double
    public init(epochIndex: Int, miniBatchIndex: Int, lossValue: Double) {
        self.epochIndex = epochIndex; self.miniBatchIndex = miniBatchIndex; self.lossValue = lossValue
    }
}

/// The state of an update, given to progress handlers and returned at the end (Core ML's
/// `MLUpdateContext`): the event, its metrics and the model as it is now.
public struct UpdateContext {
    public let event: UpdateEvent
    public let metrics: UpdateMetrics
    /// The hyper-parameters in use.
    public let parameters: UpdateSettings?
    let updater: any ModelUpdater

    /// The current model's specification (updated weights or samples; writable with
    /// `Spec.Model.write(toFile:)`, and updatable again).
    public func model() throws -> Spec.Model { try updater.updatedModel() }

    /// The current model, ready to predict without writing it (`CoreMLModelLoader`).
    public func predictionModel() throws -> any FeatureModel {
        try CoreMLModelLoader.load(try model(), context: ModelLoadContext(name: updater.modelName))
    }
}

/// One model kind's update (neural network, k-nearest neighbours, pipeline).
public protocol ModelUpdater: AnyObject {
    var modelName: String { get }
    var settings: UpdateSettings { get }
    /// Trains; calls `report` after each mini-batch and epoch; polls `isCancelled`.
    func train(report: (UpdateEvent, UpdateMetrics) throws -> Void, isCancelled: () -> Bool) throws
    /// The specification as trained so far.
    func updatedModel() throws -> Spec.Model
}

extension ModelUpdater {
    public var settings: UpdateSettings { UpdateSettings(optimizer: .sgd(learningRate: 0, momentum: 0), miniBatchSize: 1, epochs: 1) }
}

/// Updates an updatable Core ML model with training examples, as `MLUpdateTask` does.
///
/// ```swift
/// let task = try UpdateTask(model: spec, name: "Model.mlmodel", trainingData: rows) { ctx in
///     if ctx.event == .epochEnd { print(ctx.metrics.epochIndex, ctx.metrics.lossValue) }
/// }
/// let done = try task.run()
/// try done.model().write(toFile: "Personal.mlmodel")
/// ```
///
/// Neural networks (`isUpdatable` convolution / innerProduct layers, one loss layer, SGD or
/// Adam: `NetworkUpdateDescription`), k-nearest-neighbours classifiers (examples appended) and
/// pipelines whose last stage is one of those (earlier stages run forward only) are updatable.
/// `run()` is synchronous; call `cancel()` from another thread (or from a progress handler) to
/// stop it with `TrainingError.cancelled` before the next mini-batch.
public final class UpdateTask: @unchecked Sendable {
    public let updater: any ModelUpdater
    private let progress: ((UpdateContext) throws -> Void)?
    private let events: Set<UpdateEvent>
    private let lock = NSLock()
    private var cancelled = false

    /// - Parameters:
    ///   - model: the updatable specification (`Spec.Model.load(contentsOf:)`).
    ///   - name: names the model in messages.
    ///   - trainingData: one row per example, typed as the model's `trainingInput` describes
    ///     (`FeatureJSON.rows` / `FeatureCSV.rows` with `trainingDescription(of:)`).
    ///   - parameters: overrides of the model's update parameters (epochs, learning rate, …).
    ///   - events: which events reach `progress`.
    ///   - progress: called on the thread running `run()`; may throw to stop the update.
    /// - Throws: `TrainingError` (`.notUpdatable` for models without updatable parts, with the
    ///   rule that failed otherwise).
    public init(model: Spec.Model, name: String, trainingData: [FeatureProvider],
                parameters: UpdateParameterOverrides = .init(),
                events: Set<UpdateEvent> = [.trainingBegin, .miniBatchEnd, .epochEnd],
                progress: ((UpdateContext) throws -> Void)? = nil) throws {
        updater = try Self.makeUpdater(model: model, name: name, rows: trainingData, overrides: parameters)
        self.progress = progress
        self.events = events
    }

    /// The updater for `model`'s kind.
    static func makeUpdater(model: Spec.Model, name: String, rows: [FeatureProvider],
                            overrides: UpdateParameterOverrides) throws -> any ModelUpdater {
        switch model.kind {
        case .neuralNetwork?, .neuralNetworkClassifier?, .neuralNetworkRegressor?:
            return try NeuralNetworkUpdater(model: model, name: name, rows: rows, overrides: overrides)
        case .pipeline?, .pipelineClassifier?, .pipelineRegressor?:
            return try PipelineUpdater(model: model, name: name, rows: rows, overrides: overrides)
        case .kNearestNeighborsClassifier?:
            return try NearestNeighborsUpdater(model: model, name: name, rows: rows, overrides: overrides)
        default:
            throw TrainingError.notUpdatable(model: name, reason: "a \(model.kind?.name ?? "model without type") cannot be updated; "
                + "Core ML updates neural networks, k-nearest-neighbours classifiers and pipelines ending in one")
        }
    }

    /// Stops the update before its next mini-batch (`run()` then throws `TrainingError.cancelled`).
    public func cancel() {
        lock.lock(); cancelled = true; lock.unlock()
    }

    public var isCancelled: Bool {
        lock.lock(); defer { lock.unlock() }
        return cancelled
    }

    /// Runs the whole update and returns the final context (event `.epochEnd` of the last
    /// epoch; its `model()` is the personalised model).
    public func run() throws -> UpdateContext {
        let settings = updater.settings
        var last = UpdateContext(event: .trainingBegin, metrics: UpdateMetrics(epochIndex: 0, miniBatchIndex: 0, lossValue: .nan),
                                 parameters: settings, updater: updater)
        if events.contains(.trainingBegin) { try progress?(last) }
        try updater.train(report: { event, metrics in
            let ctx = UpdateContext(event: event, metrics: metrics, parameters: settings, updater: updater)
            if event == .epochEnd { last = ctx }
            if events.contains(event) { try progress?(ctx) }
        }, isCancelled: { self.isCancelled })
        return last
    }

    /// The description rows of training data are typed by: the model's `trainingInput`
    /// (for a pipeline, the pipeline's own).
    public static func trainingDescription(of model: Spec.Model) -> Spec.ModelDescription {
        var d = model.description ?? Spec.ModelDescription()
        if !d.trainingInput.isEmpty { d.input = d.trainingInput }
        return d
    }
}
