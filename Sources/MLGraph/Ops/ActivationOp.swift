/// Definition of `Op.activation`: one `Activation` applied elementwise (see Activation.swift for
/// each function's formula). MIL `relu`, `sigmoid`, `tanh`, `elu`, `leaky_relu`, `gelu`, …;
/// Core ML `activation`.
enum ActivationDefinition: OpDefinition {
    static let kind = OpKind.activation
    static let summary = "elementwise activation function (Activation: relu, sigmoid, gelu, …)"
    static let milOps = ["relu", "relu6", "leaky_relu", "elu", "sigmoid", "sigmoid_hard", "tanh", "softplus",
                         "softsign", "silu", "gelu", "linear_activation", "thresholded_relu", "exp", "clamped_relu",
                         "softplus_parametric", "scaled_tanh"]
    static let onnxOps = ["Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "Tanh", "Softplus",
                          "Softsign", "Gelu", "ThresholdedRelu", "Exp",
                          "Mish", "HardSwish"]

    static func checkAttributes(of node: Node) throws {
        guard case let .activation(a) = node.op else { return }
        try a.check(node)
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .activation(a) = op else { return [:] }
        return ["function": a.attributeValue]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .activation(try Activation(attribute: "function", of: a)) }

    static var functions: [OpFunctionExample] {
        let all: [(String, Activation)] = [
            ("linear", .linear(alpha: 2, beta: 1)), ("relu", .relu), ("relu6", .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)),
            ("leaky_relu", .leakyReLU(alpha: 0.2)), ("elu", .elu(alpha: 1)), ("selu", .selu), ("sigmoid", .sigmoid),
            ("sigmoid_hard", .hardSigmoid(alpha: 0.2, beta: 0.5)), ("tanh", .tanh), ("softplus", .softplus), ("softsign", .softsign),
            ("silu", .swish), ("gelu", .gelu(approximate: false)), ("gelu_tanh_approximation", .gelu(approximate: true)),
            ("gelu_sigmoid_approximation", .geluSigmoid), ("exp", .exponential), ("thresholded_relu", .thresholdedReLU(theta: 1)),
            ("mish", .mish), ("hard_swish", .hardSwish), ("softplus_parametric", .parametricSoftplus(alpha: 1.5, beta: 0.5)),
            ("scaled_tanh", .scaledTanh(alpha: 1.5, beta: 0.5)), ("log_sigmoid", .logSigmoid),
        ]
        return all.map { OpFunctionExample($0.0, .activation($0.1), inputs: [TensorType([1, 4, 4, 8])]) }
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
        // MARK: elementwise math ops
        case let .parametricSoftplus(alpha, beta), let .scaledTanh(alpha, beta):
            try node.checkFinite(alpha, "alpha"); try node.checkFinite(beta, "beta")
        case .mish, .hardSwish, .geluSigmoid, .logSigmoid: break
        }
    }
}

extension Activation {
    /// Encoding: {"function": name, parameters…}; names are Keras' (and the Swift case names).
    public var attributeValue: AttributeValue {
        func f(_ name: String, _ params: [String: AttributeValue] = [:]) -> AttributeValue {
            .object(params.merging(["function": .string(name)]) { a, _ in a })
        }
        switch self {
        case let .linear(alpha, beta): return f("linear", ["alpha": .number(alpha), "beta": .number(beta)])
        case .relu: return f("relu")
        case let .clippedReLU(maxValue, negativeSlope, threshold):
            return f("clippedReLU", ["maxValue": maxValue.map { .number($0) } ?? .null,
                                     "negativeSlope": .number(negativeSlope), "threshold": .number(threshold)])
        case let .leakyReLU(alpha): return f("leakyReLU", ["alpha": .number(alpha)])
        case let .elu(alpha): return f("elu", ["alpha": .number(alpha)])
        case .selu: return f("selu")
        case .sigmoid: return f("sigmoid")
        case let .hardSigmoid(alpha, beta): return f("hardSigmoid", ["alpha": .number(alpha), "beta": .number(beta)])
        case .tanh: return f("tanh")
        case .softplus: return f("softplus")
        case .softsign: return f("softsign")
        case .swish: return f("swish")
        case let .gelu(approximate): return f("gelu", ["approximate": .bool(approximate)])
        case .exponential: return f("exponential")
        case let .thresholdedReLU(theta): return f("thresholdedReLU", ["theta": .number(theta)])
        // MARK: elementwise math ops
        case .mish: return f("mish")
        case .hardSwish: return f("hardSwish")
        case let .parametricSoftplus(alpha, beta): return f("parametricSoftplus", ["alpha": .number(alpha), "beta": .number(beta)])
        case let .scaledTanh(alpha, beta): return f("scaledTanh", ["alpha": .number(alpha), "beta": .number(beta)])
        case .geluSigmoid: return f("geluSigmoid")
        case .logSigmoid: return f("logSigmoid")
        }
    }

    /// Decodes `attributeValue` from attribute `name` of `a`.
    public init(attribute name: String, of a: AttributeReader) throws {
        let o = try a.object(name)
        switch try o.string("function") {
        case "linear": self = .linear(alpha: try o.float("alpha"), beta: try o.float("beta"))
        case "relu": self = .relu
        case "clippedReLU":
            self = .clippedReLU(maxValue: o.has("maxValue") ? try o.float("maxValue") : nil,
                                negativeSlope: try o.float("negativeSlope"), threshold: try o.float("threshold"))
        case "leakyReLU": self = .leakyReLU(alpha: try o.float("alpha"))
        case "elu": self = .elu(alpha: try o.float("alpha"))
        case "selu": self = .selu
        case "sigmoid": self = .sigmoid
        case "hardSigmoid": self = .hardSigmoid(alpha: try o.float("alpha"), beta: try o.float("beta"))
        case "tanh": self = .tanh
        case "softplus": self = .softplus
        case "softsign": self = .softsign
        case "swish": self = .swish
        case "gelu": self = .gelu(approximate: try o.bool("approximate"))
        case "exponential": self = .exponential
        case "thresholdedReLU": self = .thresholdedReLU(theta: try o.float("theta"))
        // MARK: elementwise math ops
        case "mish": self = .mish
        case "hardSwish": self = .hardSwish
        case "parametricSoftplus": self = .parametricSoftplus(alpha: try o.float("alpha"), beta: try o.float("beta"))
        case "scaledTanh": self = .scaledTanh(alpha: try o.float("alpha"), beta: try o.float("beta"))
        case "geluSigmoid": self = .geluSigmoid
        case "logSigmoid": self = .logSigmoid
        case let other: throw o.mismatch("function", expected: "a known activation function", found: .string(other))
        }
    }

    /// Decodes an optional activation (absent or null = nil).
    public init?(optionalAttribute name: String, of a: AttributeReader) throws {
        guard a.has(name) else { return nil }
        try self.init(attribute: name, of: a)
    }
}

extension Optional where Wrapped == Activation {
    /// The encoding of an optional fused activation (null when absent).
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
}
