// The contract of one op kind's forward and backward rule, and the registry keyed by OpKind.
import MLGraph

/// A layer rule failed on a node (shape or attribute it cannot handle); the engine turns it into
/// `TrainingError.unsupportedLayer` naming the node.
struct RuleFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// What a backward rule returns: the gradient of each input (nil where not requested) and of
/// each weight role (e.g. "weight", "bias"; only when requested).
struct Gradients {
    var inputs: [TrainTensor?]
    var weights: [String: [Float]] = [:]
}

/// Forward and backward of one op kind on float32 tensors whose first dimension is the
/// mini-batch. Weights are the node's constants by role, in the IR's layouts (Core ML's:
/// convolution [Cout, Cin/groups, kH, kW], inner product [Cout, Cin]).
protocol LayerRule {
    /// y = f(x; w) for every sample of the mini-batch.
    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor
    /// Given dL/dy, the gradients dL/dx (for inputs with `needInputs[i]`) and, when
    /// `needWeights`, dL/dw summed over the mini-batch.
    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients
}

/// The registry: one rule per op kind the engine trains through (one file per rule in Rules/).
/// Kinds absent here cannot sit on the path from an updatable layer to the loss, nor before it.
enum LayerRules {
    static let table: [OpKind: any LayerRule.Type] = [
        .dense: DenseRule.self,
        .conv2d: Conv2DRule.self,
        .pool2d: Pool2DRule.self,
        .globalPool2d: GlobalPool2DRule.self,
        .batchNorm: BatchNormRule.self,
        .activation: ActivationRule.self,
        .softmax: SoftmaxRule.self,
        .reshape: ReshapeRule.self,
        .transpose: TransposeRule.self,
        .identity: IdentityRule.self,
        .pad: PadRule.self,
    ]

    /// The op kinds the engine can run forward and backward, sorted by name.
    static var supportedKinds: [OpKind] { table.keys.sorted { $0.rawValue < $1.rawValue } }
}

// MARK: - Small helpers shared by the rules

extension Node {
    /// The node's single input, or a failure.
    func checkedSingleInput(_ inputs: [TrainTensor]) throws -> TrainTensor {
        guard inputs.count == 1 else { throw RuleFailure("expects one input, found \(inputs.count)") }
        return inputs[0]
    }
}

/// Row-major strides of `shape`.
func rowMajorStrides(_ shape: [Int]) -> [Int] {
    var s = [Int](repeating: 1, count: shape.count)
    var acc = 1
    for i in stride(from: shape.count - 1, through: 0, by: -1) {
        s[i] = acc
        acc *= shape[i]
    }
    return s
}
