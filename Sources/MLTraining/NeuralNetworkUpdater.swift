// Trains an updatable neural network (Core ML's MLUpdateTask for neuralNetwork,
// neuralNetworkClassifier and neuralNetworkRegressor models) and writes the new weights back
// into its specification.
import CoreMLFormat
import Foundation
import MLGraph
import MLPrediction

/// The training loop of one neural network update.
public final class NeuralNetworkUpdater: ModelUpdater {
    public let updateDescription: NetworkUpdateDescription
    public private(set) var network: TrainableNetwork
    /// The specification as given (its updatable weights are replaced by `updatedModel()`).
    public let originalModel: Spec.Model
    public let modelName: String
    let examples: [PreparedExample]
    /// Mean loss of each finished epoch.
    public private(set) var epochLosses: [Double] = []

    /// Validates the model's update description, imports its network and prepares `rows`
    /// (feature name → value, typed as the model's `trainingInput` says).
    /// - Throws: `TrainingError` (see `NetworkUpdateDescription.init`, `TrainableNetwork.init`,
    ///   and `.invalidExample` for rows that do not fit), `CoreMLImportError`.
    public init(model: Spec.Model, name: String, rows: [FeatureProvider], overrides: UpdateParameterOverrides = .init()) throws {
        let d = try NetworkUpdateDescription(model: model, name: name, overrides: overrides)
        let imported = try CoreMLImporter.importModel(model, fileName: name)
        let graph = imported.graph
        let updatable = d.updatableLayers.flatMap { layer in
            (imported.updatableWeights[layer] ?? []).map { UpdatableWeight(node: layer, role: $0) }
        }
        guard let producerLayer = model.neuralNetwork?.layers.last(where: { $0.output.contains(d.lossInput) }),
              let node = graph.nodes.first(where: { $0.name == producerLayer.name }), let lossTensor = node.outputs.first else {
            throw TrainingError.invalidUpdateDescription(model: name, layer: d.lossLayerName,
                rule: "the loss input '\(d.lossInput)' has no node in the imported graph")
        }
        network = try TrainableNetwork(graph: graph, updatable: updatable, lossInput: lossTensor, loss: d.loss, modelName: name)
        updateDescription = d
        originalModel = model
        modelName = name
        guard !rows.isEmpty else {
            throw TrainingError.invalidTrainingData(source: name, reason: "no training examples were given")
        }
        examples = try ExamplePreparation.prepare(rows, network: network, description: d, model: name)
    }

    public var settings: UpdateSettings { updateDescription.settings }

    /// Runs every epoch. `report` is called after each mini-batch and each epoch; `isCancelled`
    /// is polled before each mini-batch.
    /// - Throws: `TrainingError.cancelled`, `.diverged` (non-finite loss), `.unsupportedLayer`.
    public func train(report: (UpdateEvent, UpdateMetrics) throws -> Void, isCancelled: () -> Bool) throws {
        let s = settings
        let optimizer = OptimizerState(s.optimizer)
        var order = EpochOrder(count: examples.count, shuffle: s.shuffle, seed: s.seed)
        let inputs = network.requiredInputs
        for epoch in 0..<s.epochs {
            let indices = order.next()
            var total = 0.0
            var batchIndex = 0
            var start = 0
            while start < indices.count {
                if isCancelled() { throw TrainingError.cancelled(model: modelName) }
                let slice = indices[start..<min(start + s.miniBatchSize, indices.count)]
                start += s.miniBatchSize
                let feeds = ExamplePreparation.batch(examples, slice, inputs: inputs)
                let values = try network.forward(feeds)
                guard let out = values[network.lossInput] else {
                    throw TrainingError.invalidUpdateDescription(model: modelName, layer: updateDescription.lossLayerName,
                                                                 rule: "the loss input was not computed")
                }
                let evaluation: LossEvaluation
                do {
                    evaluation = try LossEvaluation.evaluate(network.loss, input: out, targets: slice.map { examples[$0].target },
                                                             fusedWithSoftmax: network.fusedSoftmax != nil)
                } catch let f as RuleFailure {
                    throw TrainingError.invalidExample(model: modelName, example: slice.first ?? 0,
                                                       feature: updateDescription.targetFeature, reason: f.reason)
                }
                guard evaluation.sum.isFinite else {
                    throw TrainingError.diverged(model: modelName, epoch: epoch, reason: "the loss is \(evaluation.sum)")
                }
                let grads = try network.backward(values, lossGradient: evaluation.gradient)
                optimizer.beginStep()
                for u in network.updatableWeights {
                    guard let g = grads[u], var w = network.parameters[u.node]?[u.role] else { continue }
                    optimizer.apply(u.key, to: &w, gradient: g)
                    guard w.allSatisfy({ $0.isFinite }) else {
                        throw TrainingError.diverged(model: modelName, epoch: epoch, reason: "a weight of '\(u.node)' became non-finite")
                    }
                    network.parameters[u.node]![u.role] = w
                }
                total += evaluation.sum
                try report(.miniBatchEnd, UpdateMetrics(epochIndex: epoch, miniBatchIndex: batchIndex,
                                                        lossValue: evaluation.sum / Double(slice.count)))
                batchIndex += 1
            }
            let mean = total / Double(examples.count)
            epochLosses.append(mean)
            try report(.epochEnd, UpdateMetrics(epochIndex: epoch, miniBatchIndex: batchIndex - 1, lossValue: mean))
        }
    }

    /// The specification with the trained weights: the `floatValue` of each updatable layer's
    /// weights and bias replaced (same layout: the IR keeps Core ML's), everything else as given,
    /// still updatable.
    public func updatedModel() throws -> Spec.Model {
        var m = originalModel
        func patch(_ nn: inout Spec.NeuralNetwork) {
            for i in nn.layers.indices where nn.layers[i].isUpdatable {
                let name = nn.layers[i].name
                guard let p = network.parameters[name] else { continue }
                switch nn.layers[i].layer {
                case var .innerProduct(ip):
                    if let w = p["weight"], network.updatableWeights.contains(.init(node: name, role: "weight")) { ip.weights?.floatValue = w }
                    if let b = p["bias"], network.updatableWeights.contains(.init(node: name, role: "bias")) { ip.bias?.floatValue = b }
                    nn.layers[i].layer = .innerProduct(ip)
                case var .convolution(c):
                    if let w = p["weight"], network.updatableWeights.contains(.init(node: name, role: "weight")) { c.weights?.floatValue = w }
                    if let b = p["bias"], network.updatableWeights.contains(.init(node: name, role: "bias")) { c.bias?.floatValue = b }
                    nn.layers[i].layer = .convolution(c)
                default: break
                }
            }
        }
        switch m.type {
        case var .neuralNetwork(n): patch(&n); m.type = .neuralNetwork(n)
        case var .neuralNetworkClassifier(c): patch(&c.network); m.type = .neuralNetworkClassifier(c)
        case var .neuralNetworkRegressor(r): patch(&r.network); m.type = .neuralNetworkRegressor(r)
        default: break
        }
        return m
    }
}
