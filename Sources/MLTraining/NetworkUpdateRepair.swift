// An explicit repair of an "updatable" neural network whose update parameters have no loss
// layer (the model is marked updatable, has updatable layers, an optimizer and epochs, but Core
// ML refuses to update it). It adds the loss layer and the training inputs the way coremltools'
// NeuralNetworkBuilder.set_categorical_cross_entropy_loss / set_mean_squared_error_loss write
// them. Never applied implicitly: `mlconv update --add-loss` or `NetworkUpdateRepair.repaired`.
import Diagnostics
import CoreMLFormat

/// Adds the missing loss layer to an updatable neural network.
///
/// What the repaired model gets (coremltools 7.2's conventions, builder.py):
/// - one loss layer named `lossLayerName` in `updateParams.lossLayers`, reading `lossInput`
///   with target `target` (default `<lossInput>_true`);
/// - `description.trainingInput`: the model's inputs, then the target feature:
///   - cross-entropy on a classifier's probability output (`predictedProbabilitiesName`): the
///     classifier's label feature (`predictedFeatureName`), typed as its label output (String
///     or Int64); the label is mapped to its class index when training;
///   - cross-entropy otherwise: `target`, a multi-array [1] of INT32 (a class index);
///   - mean squared error: `target`, a multi-array of DOUBLE shaped as the `lossInput` output;
/// - `specificationVersion` raised to 4 (Core ML 3, the first with updatable models).
/// Everything else is kept: layers, weights, the optimizer and epochs (re-encoded field by field
/// into `updateParams` together with the new loss layer), metadata.
public struct NetworkUpdateRepair: Equatable, Sendable {
    /// The loss to add.
    public var loss: LossFunction
    /// The blob the loss reads. nil: for cross-entropy the classifier's probability output when a
    /// softmax layer produces it, else the output of the last softmax layer; for mean squared
    /// error the model's only multi-array output.
    public var lossInput: String?
    /// The loss layer's target name; nil: `<lossInput>_true` (as coremltools names it).
    public var target: String?
    /// The loss layer's name.
    public var lossLayerName: String

    /// The minimum `specificationVersion` of updatable models (coremltools'
    /// `_MINIMUM_UPDATABLE_SPEC_VERSION`).
    public static let minimumUpdatableSpecificationVersion: Int32 = 4

    public init(loss: LossFunction, lossInput: String? = nil, target: String? = nil, lossLayerName: String = "lossLayer") {
        self.loss = loss
        self.lossInput = lossInput
        self.target = target
        self.lossLayerName = lossLayerName
    }

    /// `model` with the loss layer and training inputs added (see the type's description),
    /// checked afterwards by `NetworkUpdateDescription` as any updatable model is.
    ///
    /// - Parameter name: names the model in errors.
    /// - Throws: `TrainingError.notUpdatable` when the model is not a neural network, not marked
    ///   updatable, has no updatable layer or no update parameters (the repair adds only the
    ///   loss; use coremltools' `make_updatable` and `set_*_optimizer` for the rest);
    ///   `.invalidUpdateDescription` naming the rule when the model already has a loss layer, the
    ///   loss input is not what the loss needs (cross-entropy: a softmax output; mean squared
    ///   error: a multi-array output of the model), or a name collides; and any error of
    ///   `NetworkUpdateDescription.init` for the repaired model.
    public func repaired(_ model: Spec.Model, name: String) throws -> Spec.Model {
        func bad(_ layer: String, _ rule: String, cause: (any Error)? = nil) -> TrainingError {
            .invalidUpdateDescription(model: name, layer: layer, rule: rule, cause: cause.map(DiagnosticCause.init))
        }
        guard var nn = model.neuralNetwork else {
            throw TrainingError.notUpdatable(model: name, reason: "a \(model.kind?.name ?? "model without type") is not a neural network; "
                + "only a neural network's loss layer can be added")
        }
        guard model.isUpdatable else {
            throw TrainingError.notUpdatable(model: name, reason: "it is not marked updatable (Model.isUpdatable is false); adding a loss "
                + "does not make a model updatable: use coremltools (NeuralNetworkBuilder.make_updatable) or Create ML")
        }
        guard nn.layers.contains(where: \.isUpdatable) else {
            throw bad("", "the model is marked updatable, but none of its layers is; adding a loss layer does not choose the layers to train")
        }
        let params: Spec.NetworkUpdateParameters
        do {
            guard let p = try nn.updateParameters(file: name) else {
                throw TrainingError.notUpdatable(model: name, reason: "the network has no update parameters (optimizer, epochs); "
                    + "adding a loss layer does not choose them: use coremltools' set_sgd_optimizer / set_adam_optimizer and set_epochs")
            }
            params = p
        } catch let e as CoreMLFormatError {
            throw bad("", "", cause: e)
        }
        if let existing = params.lossLayers.first {
            throw bad(existing.name, "the model already has a loss layer ('\(existing.name)'); there is nothing to repair: "
                + "update it without --add-loss")
        }
        guard var desc = model.description else { throw bad("", "the model has no description") }

        var producer: [String: Spec.NeuralNetworkLayer] = [:]
        for l in nn.layers { for o in l.output { producer[o] = l } }
        let outputNames = Set(desc.output.map(\.name)), inputNames = Set(desc.input.map(\.name))

        // The loss input, checked against what the loss needs.
        let input: String
        switch loss {
        case .categoricalCrossEntropy:
            func isSoftmaxOutput(_ blob: String) -> Bool {
                guard let p = producer[blob], case .softmax = p.layer else { return false }
                return p.output.first == blob
            }
            if let given = lossInput {
                input = given
            } else if case .neuralNetworkClassifier = model.type, isSoftmaxOutput(desc.predictedProbabilitiesName) {
                input = desc.predictedProbabilitiesName
            } else if let last = nn.layers.last(where: { if case .softmax = $0.layer { return true } else { return false } }),
                      let out = last.output.first {
                input = out
            } else {
                throw bad(lossLayerName, "the categorical cross-entropy loss needs a softmax output, and the network has no softmax layer; "
                    + "add the loss on a softmax output or use --add-loss mse")
            }
            guard producer[input] != nil else {
                throw bad(lossLayerName, "the loss input '\(input)' is not an output of any layer of the network")
            }
            guard isSoftmaxOutput(input) else {
                throw bad(lossLayerName, "the categorical cross-entropy loss's input '\(input)' is not generated from a softmax output "
                    + "(it is the output of the \(producer[input]?.layer.typeName ?? "?") layer '\(producer[input]?.name ?? "")')")
            }
        case .meanSquaredError:
            let arrays = desc.output.filter { if case .multiArray? = $0.type?.kind { return true } else { return false } }
            if let given = lossInput {
                input = given
            } else if arrays.count == 1 {
                input = arrays[0].name
            } else {
                throw bad(lossLayerName, "the mean squared error loss needs an input: the model has \(arrays.count) multi-array outputs; "
                    + "name one with --loss-input")
            }
            guard producer[input] != nil else {
                throw bad(lossLayerName, "the loss input '\(input)' is not an output of any layer of the network")
            }
        }

        // The target and the training inputs.
        let target = self.target ?? input + "_true"
        guard !target.isEmpty, !lossLayerName.isEmpty else { throw bad(lossLayerName, "the loss layer name and target must not be empty") }
        if outputNames.contains(target) { throw bad(lossLayerName, "the loss target '\(target)' must not be a model output") }
        if inputNames.contains(target) { throw bad(lossLayerName, "the loss target '\(target)' must not be a model input") }
        if producer[target] != nil {
            throw bad(lossLayerName, "the loss target '\(target)' is generated within the network; it must be a training input")
        }
        if nn.layers.contains(where: { $0.name == lossLayerName }) {
            throw bad(lossLayerName, "a layer of the network already has this name; choose another loss layer name")
        }
        let targetFeature: Spec.FeatureDescription
        switch loss {
        case .categoricalCrossEntropy:
            if case .neuralNetworkClassifier = model.type, input == desc.predictedProbabilitiesName {
                let label = desc.predictedFeatureName
                guard let out = desc.output.first(where: { $0.name == label }), let kind = out.type?.kind,
                      kind == .string || kind == .int64 else {
                    throw bad(lossLayerName, "the classifier's label output '\(label)' is not described as a String or Int64 output")
                }
                targetFeature = Spec.FeatureDescription(name: label, type: Spec.FeatureType(kind))
            } else {
                targetFeature = Spec.FeatureDescription(name: target, type: Spec.FeatureType(.multiArray(
                    Spec.ArrayFeatureType(shape: [1], dataType: .int32))))
            }
        case .meanSquaredError:
            guard let out = desc.output.first(where: { $0.name == input }), case let .multiArray(a)? = out.type?.kind else {
                throw bad(lossLayerName, "the mean squared error loss's input '\(input)' must be a multi-array output of the model "
                    + "(its shape gives the target's)")
            }
            targetFeature = Spec.FeatureDescription(name: target, type: Spec.FeatureType(.multiArray(
                Spec.ArrayFeatureType(shape: a.shape, dataType: .double))))
        }
        var training = desc.trainingInput
        for f in desc.input where !training.contains(where: { $0.name == f.name }) { training.append(f) }
        if let i = training.firstIndex(where: { $0.name == targetFeature.name }) {
            guard training[i].type?.kind == targetFeature.type?.kind else {
                throw bad(lossLayerName, "the training input '\(targetFeature.name)' is already described with another type")
            }
        } else {
            training.append(targetFeature)
        }
        desc.trainingInput = training

        // The loss layer, written into updateParams with the kept optimizer and epochs.
        var newParams = params
        let layerType: Spec.LossLayer.LossLayerType
        switch loss {
        case .categoricalCrossEntropy:
            layerType = .categoricalCrossEntropyLossLayer(Spec.CategoricalCrossEntropyLossLayer(input: input, target: target))
        case .meanSquaredError:
            layerType = .meanSquaredErrorLossLayer(Spec.MeanSquaredErrorLossLayer(input: input, target: target))
        }
        newParams.lossLayers = [Spec.LossLayer(name: lossLayerName, lossLayerType: layerType)]
        do {
            try nn.setUpdateParameters(newParams)
        } catch {
            throw bad(lossLayerName, "the update parameters cannot be written", cause: error)
        }

        var m = model
        switch m.type {
        case .neuralNetwork: m.type = .neuralNetwork(nn)
        case var .neuralNetworkClassifier(c): c.network = nn; m.type = .neuralNetworkClassifier(c)
        case var .neuralNetworkRegressor(r): r.network = nn; m.type = .neuralNetworkRegressor(r)
        default: break
        }
        m.description = desc
        m.specificationVersion = max(m.specificationVersion, Self.minimumUpdatableSpecificationVersion)
        _ = try NetworkUpdateDescription(model: m, name: name)
        return m
    }
}
