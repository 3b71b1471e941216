// The IR graph of a neural network prepared for training: forward with saved activations,
// backward through the registry's rules, gradients of the updatable weights only.
import MLGraph

/// One updatable weight: the graph node (named as its Core ML layer) and the weight role.
public struct UpdatableWeight: Hashable, Sendable {
    public var node: String
    /// "weight" or "bias" (the IR's role names for convolution and inner product).
    public var role: String
    public init(node: String, role: String) { self.node = node; self.role = role }
    var key: String { node + "/" + role }
}

/// A graph ready to train: every node on the way to the loss input has a rule in
/// `LayerRules.table`; the parameters are the nodes' constants as float32, updated in place.
public struct TrainableNetwork: Sendable {
    public let graph: Graph
    /// Current weights: node name → role → values (IR layouts).
    public internal(set) var parameters: [String: [String: [Float]]]
    public let updatableWeights: [UpdatableWeight]
    /// The tensor the loss reads.
    public let lossInput: String
    public let loss: LossFunction
    let modelName: String
    /// Indices into `graph.nodes` of the nodes that compute `lossInput`, in graph order.
    let plan: [Int]
    /// Tensors whose gradient is needed (an updatable weight lies upstream).
    let needsGradient: Set<String>
    let updatableNodes: Set<String>
    /// The softmax node whose output a cross-entropy loss reads (its gradient is fused with the loss).
    let fusedSoftmax: Int?

    /// - Parameters:
    ///   - graph: an imported graph (`CoreMLImporter`), batch dimension first.
    ///   - updatable: the weights to train; every other constant stays fixed.
    ///   - lossInput: the graph tensor the loss reads.
    /// - Throws: `TrainingError.unsupportedLayer` for a node on the path to the loss without a
    ///   rule (or, between an updatable weight and the loss, without a backward rule);
    ///   `.invalidUpdateDescription` when `lossInput` or an updatable weight is not in the graph.
    public init(graph: Graph, updatable: [UpdatableWeight], lossInput: String, loss: LossFunction, modelName: String) throws {
        self.graph = graph
        self.updatableWeights = updatable
        self.lossInput = lossInput
        self.loss = loss
        self.modelName = modelName
        var params: [String: [String: [Float]]] = [:]
        for n in graph.nodes where !n.weights.isEmpty {
            params[n.name] = n.weights.mapValues { $0.floats() }
        }
        self.parameters = params
        self.updatableNodes = Set(updatable.map(\.node))
        for u in updatable where params[u.node]?[u.role] == nil {
            throw TrainingError.invalidUpdateDescription(model: modelName, layer: u.node,
                rule: "the imported graph has no '\(u.role)' weight for this updatable layer")
        }

        // The nodes needed to compute the loss input.
        var producer: [String: Int] = [:]
        for (i, n) in graph.nodes.enumerated() { for o in n.outputs { producer[o] = i } }
        guard producer[lossInput] != nil else {
            throw TrainingError.invalidUpdateDescription(model: modelName, layer: "",
                rule: "no layer produces the loss input '\(lossInput)'")
        }
        var needed = Set<Int>()
        var stack = [lossInput]
        while let t = stack.popLast() {
            guard let i = producer[t], needed.insert(i).inserted else { continue }
            stack.append(contentsOf: graph.nodes[i].inputs)
        }
        plan = needed.sorted()
        for u in updatable where !plan.contains(where: { graph.nodes[$0].name == u.node }) {
            throw TrainingError.invalidUpdateDescription(model: modelName, layer: u.node,
                rule: "the updatable layer does not contribute to the loss input '\(lossInput)'")
        }
        var needs = Set<String>()
        for i in plan {
            let n = graph.nodes[i]
            guard LayerRules.table[n.op.kind] != nil else {
                throw TrainingError.unsupportedLayer(model: modelName, node: n.name, op: n.op.name,
                    reason: "the training engine has no rule for '\(n.op.kind.rawValue)' nodes (it runs "
                        + LayerRules.supportedKinds.map(\.rawValue).joined(separator: ", ") + ")")
            }
            guard n.outputs.count == 1, n.blocks.isEmpty else {
                throw TrainingError.unsupportedLayer(model: modelName, node: n.name, op: n.op.name,
                    reason: "nodes with several outputs or nested blocks cannot be trained")
            }
            if updatableNodes.contains(n.name) || n.inputs.contains(where: needs.contains) {
                needs.insert(n.outputs[0])
            }
        }
        needsGradient = needs
        if loss == .categoricalCrossEntropy, let i = producer[lossInput], case let .softmax(axis) = graph.nodes[i].op,
           axis == -1 || axis == (graph.tensorTypes[lossInput]?.shape.count ?? 0) - 1 {
            fusedSoftmax = i
        } else {
            fusedSoftmax = nil
        }
        // Every node between an updatable weight and the loss must be differentiable.
        for i in plan where needs.contains(graph.nodes[i].outputs[0]) && i != fusedSoftmax {
            if case let .activation(a) = graph.nodes[i].op, !ActivationRule.isDifferentiable(a) {
                throw TrainingError.unsupportedLayer(model: modelName, node: graph.nodes[i].name, op: graph.nodes[i].op.name,
                    reason: "a \(a) activation lies between an updatable layer and the loss; Core ML back-propagates "
                        + "only through ReLU, sigmoid and tanh")
            }
        }
    }

    /// The graph inputs the loss depends on.
    public var requiredInputs: [ValueInfo] {
        let used = Set(plan.flatMap { graph.nodes[$0].inputs })
        return graph.inputs.filter { used.contains($0.name) }
    }

    /// Runs the planned nodes on `feeds` (graph input → [N, …] with the graph's per-sample shape)
    /// and returns every tensor computed, the feeds included.
    public func forward(_ feeds: [String: TrainTensor]) throws -> [String: TrainTensor] {
        var values = feeds
        for i in plan {
            let n = graph.nodes[i]
            let ins = try n.inputs.map { name -> TrainTensor in
                guard let v = values[name] else {
                    throw TrainingError.unsupportedLayer(model: modelName, node: n.name, op: n.op.name,
                                                         reason: "its input '\(name)' was not given")
                }
                return v
            }
            do {
                values[n.outputs[0]] = try LayerRules.table[n.op.kind]!.forward(n, inputs: ins, weights: parameters[n.name] ?? [:])
            } catch let f as RuleFailure {
                throw TrainingError.unsupportedLayer(model: modelName, node: n.name, op: n.op.name, reason: f.reason)
            }
        }
        return values
    }

    /// Back-propagates `lossGradient` (dL/d lossInput, or, with `fusedSoftmax`, dL/d of the
    /// softmax's input) and returns dL/dw of every updatable weight, keyed by `UpdatableWeight`.
    func backward(_ values: [String: TrainTensor], lossGradient: TrainTensor) throws -> [UpdatableWeight: [Float]] {
        var grads: [String: TrainTensor] = [:]
        if let s = fusedSoftmax { grads[graph.nodes[s].inputs[0]] = lossGradient } else { grads[lossInput] = lossGradient }
        var out: [UpdatableWeight: [Float]] = [:]
        for i in plan.reversed() where i != fusedSoftmax {
            let n = graph.nodes[i]
            guard let gy = grads[n.outputs[0]] else { continue }
            let needInputs = n.inputs.map { needsGradient.contains($0) }
            let isUpdatable = updatableNodes.contains(n.name)
            guard isUpdatable || needInputs.contains(true) else { continue }
            let result: Gradients
            do {
                result = try LayerRules.table[n.op.kind]!.backward(
                    n, inputs: n.inputs.map { values[$0]! }, output: values[n.outputs[0]]!, gradOutput: gy,
                    weights: parameters[n.name] ?? [:], needInputs: needInputs, needWeights: isUpdatable)
            } catch let f as RuleFailure {
                throw TrainingError.unsupportedLayer(model: modelName, node: n.name, op: n.op.name, reason: f.reason)
            }
            for (name, g) in zip(n.inputs, result.inputs) {
                guard let g else { continue }
                if grads[name] == nil { grads[name] = g } else { grads[name]!.accumulate(g) }
            }
            if isUpdatable {
                for u in updatableWeights where u.node == n.name {
                    if let g = result.weights[u.role] { out[u] = g }
                }
            }
        }
        return out
    }

    /// The graph with the current parameters as its constants (float32), for prediction.
    public func updatedGraph() -> Graph {
        var g = graph
        for i in g.nodes.indices where updatableNodes.contains(g.nodes[i].name) {
            for u in updatableWeights where u.node == g.nodes[i].name {
                if let old = g.nodes[i].weights[u.role], let v = parameters[u.node]?[u.role] {
                    g.nodes[i].weights[u.role] = ConstantTensor(shape: old.shape, floats: v)
                }
            }
        }
        return g
    }
}
