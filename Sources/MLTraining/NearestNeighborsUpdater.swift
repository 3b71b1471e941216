// The update of a k-nearest-neighbours classifier: the examples become samples of its index.
import Diagnostics
import CoreMLFormat
import MLPrediction

/// Appends each training example (input vector, label) to a `kNearestNeighborsClassifier`, as
/// Core ML's update of such a model does: no epochs, no loss; the label feature is the model's
/// predicted feature (or its one training input that is not a prediction input), typed as the
/// model's class labels (String or Int64).
public final class NearestNeighborsUpdater: ModelUpdater {
    public let modelName: String
    public private(set) var model: Spec.Model
    let samples: [[Float]]
    let labels: Spec.Model.NearestNeighborLabels
    private var done = false

    /// - Throws: `TrainingError.notUpdatable` (not marked updatable), `.invalidExample` (missing
    ///   or mistyped input or label), `.invalidTrainingData` (no examples).
    public init(model: Spec.Model, name: String, rows: [FeatureProvider], overrides: UpdateParameterOverrides = .init()) throws {
        guard model.isUpdatable else {
            throw TrainingError.notUpdatable(model: name, reason: "it is not marked updatable (Model.isUpdatable is false)")
        }
        guard case let .kNearestNeighborsClassifier(knn)? = try model.classicalParameters(file: name),
              let desc = model.description else {
            throw TrainingError.notUpdatable(model: name, reason: "it is not a kNearestNeighborsClassifier")
        }
        guard !rows.isEmpty else { throw TrainingError.invalidTrainingData(source: name, reason: "no training examples were given") }
        guard let input = desc.input.first else {
            throw TrainingError.invalidUpdateDescription(model: name, layer: "", rule: "the model has no input")
        }
        let training = desc.trainingInput.isEmpty ? desc.input : desc.trainingInput
        let labelName = training.first(where: { $0.name == desc.predictedFeatureName })?.name
            ?? training.first(where: { t in !desc.input.contains { $0.name == t.name } })?.name ?? desc.predictedFeatureName
        guard !labelName.isEmpty else {
            throw TrainingError.invalidUpdateDescription(model: name, layer: "", rule: "the training inputs name no label feature")
        }
        let dims = Int(knn.nearestNeighborsIndex?.numberOfDimensions ?? 0)
        let stringLabels: Bool
        switch knn.classLabels {
        case .stringClassLabels?: stringLabels = true
        case .int64ClassLabels?: stringLabels = false
        case nil:
            if case .int64? = desc.output.first(where: { $0.name == desc.predictedFeatureName })?.type?.kind { stringLabels = false } else { stringLabels = true }
        }
        var samples: [[Float]] = []
        var strings: [String] = []
        var ints: [Int64] = []
        for (i, row) in rows.enumerated() {
            guard let v = row[input.name] else {
                throw TrainingError.invalidExample(model: name, example: i, feature: input.name, reason: "the feature is missing")
            }
            let values: [Float]
            switch v {
            case let .multiArray(a): values = a.values.map { Float($0) }
            case let .double(x): values = [Float(x)]
            case let .int64(x): values = [Float(x)]
            default: throw TrainingError.invalidExample(model: name, example: i, feature: input.name, reason: "a \(v.typeName) is not a sample vector")
            }
            guard values.count == dims else {
                throw TrainingError.invalidExample(model: name, example: i, feature: input.name,
                                                   reason: "has \(values.count) values; the index has \(dims) dimensions")
            }
            samples.append(values)
            switch (row[labelName], stringLabels) {
            case let (.string(s)?, true): strings.append(s)
            case let (.int64(x)?, false): ints.append(x)
            case let (.double(x)?, false) where x == x.rounded() && abs(x) < 9e15: ints.append(Int64(x))
            case (nil, _):
                throw TrainingError.invalidExample(model: name, example: i, feature: labelName, reason: "the label is missing")
            case let (other?, _):
                throw TrainingError.invalidExample(model: name, example: i, feature: labelName,
                    reason: "the model's labels are \(stringLabels ? "String" : "Int64"), found \(describe(other))")
            }
        }
        self.samples = samples
        self.labels = stringLabels ? .strings(strings) : .int64s(ints)
        self.model = model
        self.modelName = name
    }

    public var settings: UpdateSettings {
        UpdateSettings(optimizer: .sgd(learningRate: 0, momentum: 0), miniBatchSize: samples.count, epochs: 1)
    }

    /// Appends the samples (one epoch, one mini-batch; loss NaN: a kNN has none).
    public func train(report: (UpdateEvent, UpdateMetrics) throws -> Void, isCancelled: () -> Bool) throws {
        if isCancelled() { throw TrainingError.cancelled(model: modelName) }
        if !done {
            do {
                try model.appendNearestNeighborSamples(samples, labels: labels, file: modelName)
            } catch let e as CoreMLFormatError {
                throw TrainingError.invalidUpdateDescription(model: modelName, layer: "", rule: "", cause: DiagnosticCause(e))
            }
            done = true
        }
        try report(.miniBatchEnd, UpdateMetrics(epochIndex: 0, miniBatchIndex: 0, lossValue: .nan))
        try report(.epochEnd, UpdateMetrics(epochIndex: 0, miniBatchIndex: 0, lossValue: .nan))
    }

    public func updatedModel() throws -> Spec.Model { model }
}
