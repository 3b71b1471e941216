// Reads and validates the update description of a neural network as Core ML does
// (coremltools mlmodel/src/Validation/NeuralNetwork/UpdatableNeuralNetworkValidator.cpp and
// NeuralNetworkValidatorGraph.hpp define the rules; this is our own implementation of them).
import Diagnostics
import CoreMLFormat

/// The validated update description of an updatable neural network.
public struct NetworkUpdateDescription: Equatable, Sendable {
    public var lossLayerName: String
    public var loss: LossFunction
    /// The blob the loss reads (a softmax output for cross-entropy).
    public var lossInput: String
    /// The loss layer's target feature name.
    public var lossTarget: String
    /// The training feature holding the target: the classifier's predicted feature name when
    /// the training inputs declare it (its label is mapped to a class index), else `lossTarget`.
    public var targetFeature: String
    /// Class labels when the target is a classifier label.
    public var classLabels: [String]?
    /// The layers marked updatable (convolution or innerProduct), in network order.
    public var updatableLayers: [String]
    /// The model's defaults.
    public var settings: UpdateSettings
    /// The parameters as declared (for checking overrides against their allowed values).
    public var parameters: Spec.NetworkUpdateParameters

    /// The layers Core ML back-propagates through (NeuralNetworkValidatorGraph.hpp).
    static func isBackPropagable(_ l: Spec.NeuralNetworkLayer.Layer) -> Bool {
        switch l {
        case .convolution, .innerProduct, .flatten, .pooling, .batchnorm: return true
        case let .activation(a):
            switch a.nonlinearity {
            case .relu, .sigmoid, .tanh: return true
            default: return false
            }
        default:
            return l.typeName == "uniDirectionalLSTM"
        }
    }

    /// Validates `model` (a neural network, classifier or regressor) and reads its update
    /// description.
    ///
    /// - Throws: `TrainingError.notUpdatable` (not marked updatable, not a neural network, no
    ///   update parameters), `.invalidUpdateDescription` naming the layer and the rule that
    ///   failed, `.invalidParameter` for parameters outside their allowed values.
    public init(model: Spec.Model, name: String, overrides: UpdateParameterOverrides = .init()) throws {
        func bad(_ layer: String, _ rule: String, cause: (any Error)? = nil) -> TrainingError {
            .invalidUpdateDescription(model: name, layer: layer, rule: rule, cause: cause.map(DiagnosticCause.init))
        }
        guard model.isUpdatable else {
            throw TrainingError.notUpdatable(model: name, reason: "it is not marked updatable (Model.isUpdatable is false); "
                + "make it updatable with coremltools (NeuralNetworkBuilder.make_updatable) or Create ML")
        }
        guard let nn = model.neuralNetwork else {
            throw TrainingError.notUpdatable(model: name, reason: "a \(model.kind?.name ?? "model without type") is not a neural network")
        }
        let params: Spec.NetworkUpdateParameters
        do {
            guard let p = try nn.updateParameters(file: name) else {
                throw TrainingError.notUpdatable(model: name, reason: "the network has no update parameters (NetworkUpdateParameters)")
            }
            params = p
        } catch let e as CoreMLFormatError {
            throw bad("", "", cause: e)
        }
        parameters = params
        let layers = nn.layers

        // Updatable layers: at least one; convolution / innerProduct only; weights marked and fp32.
        var updatable: [String] = []
        for l in layers where l.isUpdatable {
            let weights: Spec.WeightParams?, bias: Spec.WeightParams?, hasBias: Bool
            switch l.layer {
            case let .convolution(p): (weights, bias, hasBias) = (p.weights, p.bias, p.hasBias)
            case let .innerProduct(p): (weights, bias, hasBias) = (p.weights, p.bias, p.hasBias)
            default:
                if l.layer.typeName == "uniDirectionalLSTM" {
                    throw bad(l.name, "updatable uniDirectionalLSTM layers are valid in Core ML but mlconv does not train recurrent layers")
                }
                throw bad(l.name, "the layer is marked updatable but is a \(l.layer.typeName); only convolution and innerProduct layers can be updatable")
            }
            if weights?.quantization != nil || (hasBias && bias?.quantization != nil) {
                throw bad(l.name, "an updatable layer has quantized weights or bias; quantized parameters cannot be updated")
            }
            if weights?.isUpdatable != true || (hasBias && bias?.isUpdatable != true) {
                throw bad(l.name, "an updatable layer has a weight or bias parameter not marked updatable (WeightParams.isUpdatable)")
            }
            if weights?.storage != .float32 || (hasBias && bias?.storage != .float32) {
                throw bad(l.name, "an updatable layer's weights must be stored as float32 (floatValue); found "
                    + "\(weights?.storage ?? .empty)\(hasBias ? " / \(bias?.storage ?? .empty)" : "")")
            }
            updatable.append(l.name)
        }
        guard !updatable.isEmpty else {
            throw bad("", "the model is marked updatable, but none of its layers is")
        }
        updatableLayers = updatable

        // Names: layers and loss layers unique.
        var names = Set<String>()
        for n in layers.map(\.name) + params.lossLayers.map(\.name) where !names.insert(n).inserted {
            throw bad(n, "two layers or loss layers share this name")
        }

        // Exactly one loss layer, fed as Core ML requires.
        guard params.lossLayers.count == 1, let lossLayer = params.lossLayers.first else {
            throw bad("", params.lossLayers.isEmpty ? "the update parameters have no loss layer"
                : "\(params.lossLayers.count) loss layers are given; Core ML supports exactly one")
        }
        lossLayerName = lossLayer.name
        var producer: [String: Spec.NeuralNetworkLayer] = [:]
        for l in layers { for o in l.output { producer[o] = l } }
        switch lossLayer.lossLayerType {
        case let .categoricalCrossEntropyLossLayer(c)?:
            loss = .categoricalCrossEntropy
            (lossInput, lossTarget) = (c.input, c.target)
            guard let p = producer[c.input], case .softmax = p.layer, p.output.first == c.input else {
                throw bad(lossLayer.name, "the categorical cross-entropy loss's input '\(c.input)' is not generated from a softmax output")
            }
        case let .meanSquaredErrorLossLayer(m)?:
            loss = .meanSquaredError
            (lossInput, lossTarget) = (m.input, m.target)
            guard producer[m.input] != nil else {
                throw bad(lossLayer.name, "the mean squared error loss's input '\(m.input)' is not generated within the network")
            }
        case nil:
            throw bad(lossLayer.name, "the loss function is not set; only categorical cross-entropy and mean squared error are supported")
        }
        if producer[lossTarget] != nil {
            throw bad(lossLayer.name, "the loss target '\(lossTarget)' is generated within the network; it must be a training input")
        }

        // Optimizer and top-level parameters.
        let optimizer: OptimizerSettings
        let batch: Int64
        switch params.optimizer?.optimizerType {
        case let .sgdOptimizer(s)?:
            guard let lr = s.learningRate else { throw bad("", "the SGD optimizer has no learningRate") }
            guard let mb = s.miniBatchSize else { throw bad("", "the SGD optimizer has no miniBatchSize") }
            let rate = try ParameterCheck.double(lr, override: overrides.learningRate, name: "learningRate", model: name)
            batch = try ParameterCheck.int(mb, override: overrides.miniBatchSize.map(Int64.init), name: "miniBatchSize", positive: true, model: name)
            let momentum = try s.momentum.map { try ParameterCheck.double($0, override: overrides.momentum, name: "momentum", model: name) }
                ?? overrides.momentum ?? 0
            optimizer = .sgd(learningRate: rate, momentum: momentum)
        case let .adamOptimizer(a)?:
            guard let lr = a.learningRate else { throw bad("", "the Adam optimizer has no learningRate") }
            guard let mb = a.miniBatchSize else { throw bad("", "the Adam optimizer has no miniBatchSize") }
            guard let b1 = a.beta1 else { throw bad("", "the Adam optimizer has no beta1") }
            guard let b2 = a.beta2 else { throw bad("", "the Adam optimizer has no beta2") }
            guard let eps = a.eps else { throw bad("", "the Adam optimizer has no eps") }
            optimizer = .adam(learningRate: try ParameterCheck.double(lr, override: overrides.learningRate, name: "learningRate", model: name),
                              beta1: try ParameterCheck.double(b1, override: overrides.beta1, name: "beta1", model: name),
                              beta2: try ParameterCheck.double(b2, override: overrides.beta2, name: "beta2", model: name),
                              epsilon: try ParameterCheck.double(eps, override: overrides.eps, name: "eps", model: name))
            batch = try ParameterCheck.int(mb, override: overrides.miniBatchSize.map(Int64.init), name: "miniBatchSize", positive: true, model: name)
        case nil:
            throw bad("", "the update parameters have no optimizer; Core ML supports SGD and Adam")
        }
        guard let ep = params.epochs else { throw bad("", "the update parameters have no epochs") }
        let epochs = try ParameterCheck.int(ep, override: overrides.epochs.map(Int64.init), name: "epochs", positive: true, model: name)
        let seed = try params.seed.map { try ParameterCheck.int($0, override: overrides.seed, name: "seed", positive: false, model: name) }
            ?? overrides.seed ?? 0
        guard let batchSize = Int(exactly: batch), let epochCount = Int(exactly: epochs), epochCount <= 1_000_000 else {
            throw TrainingError.invalidParameter(model: name, parameter: "epochs", reason: "\(epochs) epochs is more than 1000000")
        }
        settings = UpdateSettings(optimizer: optimizer, miniBatchSize: batchSize, epochs: epochCount,
                                  shuffle: overrides.shuffle ?? params.shuffle?.defaultValue ?? false, seed: seed)

        // Every updatable layer reaches the loss only through back-propagable layers (a
        // softmax directly under a cross-entropy loss is allowed).
        var consumersOf: [String: [Spec.NeuralNetworkLayer]] = [:]
        for l in layers { for i in l.input { consumersOf[i, default: []].append(l) } }
        var parentsOf: [String: [Spec.NeuralNetworkLayer]] = [:]  // layer name → producers of its inputs
        for l in layers { parentsOf[l.name] = l.input.compactMap { producer[$0] } }
        var queue: [(name: String, isLoss: Bool)] = [(lossLayer.name, true)]
        parentsOf[lossLayer.name] = [producer[lossInput]].compactMap { $0 }
        var visited = Set<String>()
        var blocker: String?
        while !queue.isEmpty {
            let (current, isLoss) = queue.removeFirst()
            for parent in parentsOf[current] ?? [] where visited.insert(parent.name).inserted {
                queue.append((parent.name, false))
                if parent.isUpdatable, let b = blocker {
                    throw bad(b, "the layer does not support back-propagation and lies between the updatable layer '\(parent.name)' and the loss")
                }
                if !Self.isBackPropagable(parent.layer) {
                    if case .softmax = parent.layer, isLoss, loss == .categoricalCrossEntropy { continue }
                    if blocker == nil { blocker = parent.name }
                }
            }
        }

        // Training inputs: the target (or, for a classifier, its predicted feature) and at
        // least one prediction input.
        guard let desc = model.description else { throw bad("", "the model has no description") }
        guard desc.trainingInput.count > 1 else {
            throw bad("", "the model must describe its training inputs (trainingInput): the network's input(s) and the loss target")
        }
        let exclusive = desc.trainingInput.filter { t in !desc.input.contains(t) }
        guard !exclusive.isEmpty, exclusive.count < desc.trainingInput.count else {
            throw bad("", exclusive.isEmpty ? "the training inputs don't describe the loss target"
                : "the training inputs must include at least one input of the model")
        }
        var labels: [String]?
        let target = lossTarget
        var targetFeature = target
        var found = exclusive.contains { $0.name == target }
        if case let .neuralNetworkClassifier(c) = model.type, let t = exclusive.first(where: { $0.name == desc.predictedFeatureName }) {
            if let out = desc.output.first(where: { $0.name == t.name }), out.type?.kind != t.type?.kind {
                throw bad("", "the training input '\(t.name)' has another type than the classifier's label output")
            }
            found = true
            targetFeature = t.name
            switch c.classLabels {
            case let .strings(s)?: labels = s
            case let .int64s(v)?: labels = v.map(String.init)
            case nil: throw bad("", "the classifier has no class labels")
            }
        }
        guard found else {
            throw bad("", "the training inputs don't include the loss target '\(lossTarget)'"
                + (desc.predictedFeatureName.isEmpty ? "" : " or the classifier's label '\(desc.predictedFeatureName)'"))
        }
        self.targetFeature = targetFeature
        self.classLabels = labels
    }
}
