/// Definition of `Op.activation`: one `Activation` applied elementwise (see Activation.swift for
/// each function's formula). MIL `relu`, `sigmoid`, `tanh`, `elu`, `leaky_relu`, `gelu`, …;
/// Core ML `activation`.
enum ActivationDefinition: OpDefinition {
    static let kind = OpKind.activation
    static let summary = "elementwise activation function (Activation: relu, sigmoid, gelu, …)"
    static let milOps = ["relu", "relu6", "leaky_relu", "elu", "sigmoid", "sigmoid_hard", "tanh", "softplus",
                         "softsign", "silu", "gelu", "linear_activation", "thresholded_relu", "exp", "clamped_relu"]
    static let onnxOps = ["Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "Tanh", "Softplus",
                          "Softsign", "Gelu", "ThresholdedRelu", "Exp"]

    static func checkAttributes(of node: Node) throws {
        guard case let .activation(a) = node.op else { return }
        try a.check(node)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        return [ins[0]]
    }
}

extension Activation {
    /// Rejects non-finite parameters (a file can hold any float).
    func check(_ node: Node) throws {
        switch self {
        case let .linear(alpha, beta): try node.checkFinite(alpha, "alpha"); try node.checkFinite(beta, "beta")
        case let .clippedReLU(maxValue, negativeSlope, threshold):
            if let m = maxValue, m.isNaN { throw node.fail("maxValue must not be NaN") }
            try node.checkFinite(negativeSlope, "negativeSlope"); try node.checkFinite(threshold, "threshold")
        case let .leakyReLU(alpha), let .elu(alpha): try node.checkFinite(alpha, "alpha")
        case let .hardSigmoid(alpha, beta): try node.checkFinite(alpha, "alpha"); try node.checkFinite(beta, "beta")
        case let .thresholdedReLU(theta): try node.checkFinite(theta, "theta")
        case .relu, .selu, .sigmoid, .tanh, .softplus, .softsign, .swish, .gelu, .exponential: break
        }
    }
}
