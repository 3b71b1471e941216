// MARK: constant folding (issue 12)
import MLGraph

/// The runtime's `ConstantEvaluator` for the `fold_constants` pass: runs the node alone on the
/// reference kernels (the specification of every op, `Model.Configuration.referenceOnly`), one
/// thread, with its constant inputs as the inputs of a one-node graph, and returns its outputs as
/// float32 constants. Returns nil when the one-node graph does not type to `outputTypes`;
/// throws what `Model` throws (the pass then leaves the node as it is).
///
/// `Model` runs `PassPipeline.inference.withConstantEvaluator(ReferenceConstantEvaluator.evaluate)`
/// at load, and `mlconv keras` the same before storing a bundle, so folded values are exactly those
/// the reference kernels compute at prediction time.
public enum ReferenceConstantEvaluator {
    public static let evaluate: ConstantEvaluator = { node, inputs, outputTypes in
        guard inputs.count == node.inputs.count else { return nil }
        var values: [String: ConstantTensor] = [:]
        var graphInputs: [ValueInfo] = []
        for (name, c) in zip(node.inputs, inputs) where values[name] == nil {
            values[name] = c
            graphInputs.append(ValueInfo(name: name, type: TensorType(c.shape)))
        }
        var g = Graph(inputs: graphInputs, outputs: node.outputs, nodes: [node])
        try g.inferShapes()
        guard node.outputs.map({ g.tensorTypes[$0] }) == outputTypes.map({ Optional($0) }) else { return nil }
        let model = try Model(graph: g, configuration: .init(threadCount: 1, referenceOnly: true))
        var feeds: [String: NDArray] = [:]
        for (name, c) in values { feeds[name] = try NDArray(shape: c.shape, scalars: c.floats()) }
        let out = try model.prediction(from: feeds)
        var result: [ConstantTensor] = []
        for (name, t) in zip(node.outputs, outputTypes) {
            guard let a = out[name], a.shape == t.shape, a.elementType == .float32 else { return nil }
            result.append(ConstantTensor(shape: a.shape, floats: a.scalars))
        }
        return result
    }
}
