import MLGraph

/// Everything a layer converter (built-in or `LayerHook`) needs to convert one call of one Keras
/// layer: the layer's config, the IR tensors it reads and must write, their shapes, its stored
/// weights, and helpers that read config values and weights with errors naming the layer.
public struct KerasLayerContext {
    /// The layer as written in the model config.
    public let layer: KerasLayerConfig
    /// Names of the nested models enclosing the layer, outermost first ([] at top level).
    public let scope: [String]
    /// Which call of the layer this is (shared layers are called several times; 0 for the first).
    public let callIndex: Int
    /// The name to give the layer's main IR node (the layer name, `<layer>_<k>` for later calls
    /// of a shared layer). Extra nodes should be named `nodeName + "__…"`.
    public let nodeName: String
    /// IR tensors the call reads, in Keras order.
    public let inputs: [String]
    /// Their types (shape with batch first, channels last).
    public let inputTypes: [TensorType]
    /// IR tensors the call must produce (output 0 first; usually one, equal to `nodeName`).
    public let outputNames: [String]
    /// The Keras version recorded in the file (or the architecture JSON).
    public let kerasVersion: KerasVersion
    /// The Keras backend recorded in the file ("tensorflow", "theano", "jax", …), nil when absent.
    public let backend: String?
    /// The file being converted (for messages).
    public let file: String
    /// The layer's stored weights, in file order.
    public let storedWeights: [KerasStoredWeight]
    /// The Keras variables the converter expects, in Keras order (e.g. ["kernel", "bias"]);
    /// [] for hooks (weights are then found by name only).
    public let weightRoles: [String]

    let readWeight: (KerasStoredWeight) throws -> [Float]
    let constantCache: ConstantCache

    /// The input shapes Keras recorded for this call (batch first, nil for None): from the Keras 3
    /// keras tensors or the tf.keras `build_config`; [] when the file records none, or when the
    /// conversion changes the saved input sizes (`KerasConversionOptions.inputShapes`).
    public internal(set) var recordedInputShapes: [[Int?]] = []
    /// The output shapes Keras recorded (from the recorded input shapes of the layers reading the
    /// outputs), one per output; [] when not recorded for every output, or when the conversion
    /// changes the saved input sizes. Hook results are checked against them.
    public internal(set) var recordedOutputShapes: [[Int?]] = []

    /// The layer's class name.
    public var className: String { layer.className }
    /// The layer's config object.
    public var config: KerasJSON { layer.config }
    /// The layer's name, with its enclosing nested models ("outer/inner") when nested.
    public var qualifiedName: String { (scope + [layer.name]).joined(separator: "/") }
    /// Shape of input 0 (with batch).
    public var inputShape: [Int] { inputTypes.first?.shape ?? [] }
    /// The Lambda function info when the layer is a `Lambda`.
    public var lambda: KerasLambdaInfo? { KerasLambdaInfo(layer: layer) }

    // MARK: Errors

    /// An `unsupportedConfiguration` error for this layer.
    public func unsupported(_ message: String, hint: String) -> KerasConversionError {
        .unsupportedConfiguration(file: file, layer: qualifiedName, className: className, message: message, hint: hint)
    }

    /// An `invalidLayerConfig` error for config key `key`.
    public func invalid(_ key: String, expected: String) -> KerasConversionError {
        .invalidLayerConfig(file: file, layer: qualifiedName, className: className, key: key, expected: expected,
                            found: config[key]?.description ?? "nothing")
    }

    // MARK: Config values

    /// Config value `key` when present and not null.
    public func value(_ key: String) -> KerasJSON? {
        guard let v = config[key], !v.isNull else { return nil }
        return v
    }

    /// Integer config value; `defaultValue` when absent or null.
    public func int(_ key: String, default defaultValue: Int? = nil) throws -> Int {
        guard let v = value(key) else {
            if let d = defaultValue { return d }
            throw invalid(key, expected: "an integer")
        }
        if let i = v.int { return i }
        if let a = v.array, a.count == 1, let i = a[0].int { return i }
        throw invalid(key, expected: "an integer")
    }

    /// Float config value, nil when absent or null.
    public func optionalFloat(_ key: String) throws -> Float? {
        guard let v = value(key) else { return nil }
        if let d = v.double { return Float(d) }
        throw invalid(key, expected: "a number")
    }

    /// Float config value; `defaultValue` when absent or null.
    public func float(_ key: String, default defaultValue: Float? = nil) throws -> Float {
        if let f = try optionalFloat(key) { return f }
        if let d = defaultValue { return d }
        throw invalid(key, expected: "a number")
    }

    /// Boolean config value; `defaultValue` when absent or null.
    public func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let v = value(key) else { return defaultValue }
        if let b = v.bool { return b }
        if let d = v.double { return d != 0 }
        throw invalid(key, expected: "true or false")
    }

    /// String config value; `defaultValue` when absent or null.
    public func string(_ key: String, default defaultValue: String? = nil) throws -> String {
        guard let v = value(key) else {
            if let d = defaultValue { return d }
            throw invalid(key, expected: "a string")
        }
        if let s = v.string { return s }
        throw invalid(key, expected: "a string")
    }

    /// A per-axis integer tuple: an integer n means [n, n, …] (`count` entries), a list must
    /// have `count` entries. `defaultValue` when absent or null.
    public func ints(_ key: String, count: Int, default defaultValue: [Int]? = nil) throws -> [Int] {
        guard let v = value(key) else {
            if let d = defaultValue { return d }
            throw invalid(key, expected: "an integer or a list of \(count) integers")
        }
        if let i = v.int { return Array(repeating: i, count: count) }
        if let a = v.array, a.count == count, a.allSatisfy({ $0.int != nil }) { return a.map { $0.int! } }
        throw invalid(key, expected: "an integer or a list of \(count) integers")
    }

    /// Rejects `data_format: channels_first` (the IR is channels-last).
    public func requireChannelsLast() throws {
        if let f = value("data_format")?.string, f != "channels_last" {
            throw unsupported("data_format is '\(f)'; only channels_last is supported (the IR and Keras' TensorFlow backend are channels-last)",
                              hint: "rebuild the model with data_format='channels_last' (the Keras default), copy the weights over (Conv2D kernels need no change), and re-save it")
        }
    }

    /// Normalizes an axis (negative counts from the end) for rank `rank`.
    public func axis(_ a: Int, rank: Int, key: String = "axis") throws -> Int {
        let n = a < 0 ? a + rank : a
        guard n >= 0, n < rank else { throw invalid(key, expected: "an axis in -\(rank)…\(rank - 1) for input shape \(formatShape(inputShape))") }
        return n
    }

    // MARK: Weights

    /// Finds the stored weights for `roles` (Keras variable names such as ["kernel", "bias"],
    /// in Keras' order): by name when every role is found by name, else by position when the
    /// counts agree.
    /// - Throws: `missingWeight` listing expected roles and found names.
    public func matchWeights(_ roles: [String]) throws -> [String: KerasStoredWeight] {
        if let m = KerasLayerContext.match(roles: roles, stored: storedWeights) { return m }
        throw KerasConversionError.missingWeight(
            file: file, layer: qualifiedName, className: className,
            expected: "weights " + roles.joined(separator: ", "),
            found: storedWeights.isEmpty ? "no weights stored for this layer" : storedWeights.map(\.description).joined(separator: ", "))
    }

    static func match(roles: [String], stored: [KerasStoredWeight]) -> [String: KerasStoredWeight]? {
        var out: [String: KerasStoredWeight] = [:]
        var byName = true
        for r in roles {
            let c = stored.filter { $0.role == r }
            if c.count == 1 { out[r] = c[0] } else { byName = false; break }
        }
        if byName { return out }
        guard stored.count == roles.count else { return nil }
        out = [:]
        for (r, w) in zip(roles, stored) { out[r] = w }
        return out
    }

    /// Reads weight `role` (matched with `matchWeights(weightRoles)`, or by name when
    /// `weightRoles` is empty), checking its shape when `expected` is given.
    /// - Throws: `missingWeight`; `weightShapeMismatch` naming the layer, the weight, expected and
    ///   found shapes.
    public func weight(_ role: String, shape expected: [Int]?) throws -> [Float] {
        let m = try matchWeights(weightRoles.isEmpty ? [role] : weightRoles)
        guard let w = m[role] else {
            throw KerasConversionError.missingWeight(file: file, layer: qualifiedName, className: className,
                                                     expected: "weight '\(role)'", found: storedWeights.map(\.description).joined(separator: ", "))
        }
        if let expected, w.shape != expected {
            throw KerasConversionError.weightShapeMismatch(
                file: file, layer: qualifiedName, className: className, weight: w.name, expected: expected, found: w.shape,
                hint: "the architecture and the weights disagree: pass the architecture JSON that belongs to this weights file (Keras matches weights-only files by layer order), or re-save the full model with `model.save`")
        }
        return try readWeight(w)
    }

    /// The stored shape of weight `role` (see `weight(_:shape:)`).
    public func storedShape(_ role: String) throws -> [Int] {
        let m = try matchWeights(weightRoles.isEmpty ? [role] : weightRoles)
        guard let w = m[role] else {
            throw KerasConversionError.missingWeight(file: file, layer: qualifiedName, className: className,
                                                     expected: "weight '\(role)'", found: storedWeights.map(\.description).joined(separator: ", "))
        }
        return w.shape
    }

    /// An IR constant built once per layer and `key` and shared by every call of the layer
    /// (shared layers' nodes share their ConstantTensors).
    public func constant(_ key: String, shape: [Int], _ make: () throws -> [Float]) rethrows -> ConstantTensor {
        let k = qualifiedName + "\u{1}" + key
        if let c = constantCache.values[k] { return c }
        let c = ConstantTensor(shape: shape, floats: try make())
        constantCache.values[k] = c
        return c
    }

    /// Whether convolution kernels were trained on Theano, which (Keras 2 `theano_backend`,
    /// `T.nnet.conv2d` with `filter_flip=True`) computes a true convolution: the kernels must be
    /// flipped spatially to run as the cross-correlation TensorFlow and the IR compute (what
    /// `keras.utils.conv_utils.convert_kernel` does).
    public var kernelsNeedSpatialFlip: Bool { backend?.lowercased() == "theano" }

    /// Flips a Keras kernel (kH, kW, …) along its two spatial axes when `kernelsNeedSpatialFlip`.
    public func backendKernel(_ v: [Float], kerasShape s: [Int]) -> [Float] {
        guard kernelsNeedSpatialFlip, s.count >= 2 else { return v }
        let (kh, kw) = (s[0], s[1]), inner = s.dropFirst(2).reduce(1, *)
        var out = v
        for h in 0..<kh { for w in 0..<kw {
            let src = (h * kw + w) * inner, dst = ((kh - 1 - h) * kw + (kw - 1 - w)) * inner
            for i in 0..<inner { out[dst + i] = v[src + i] }
        } }
        return out
    }

    // MARK: Activations

    /// Nodes for a layer with a fused activation (config key `key`): `make(activation, output)`
    /// builds the main node writing `output`. Activations the IR can fuse are passed to `make`;
    /// softmax gets a separate `<node>__activation__` softmax node on the last axis.
    public func withActivation(key: String = "activation", rank: Int,
                               _ make: (_ activation: Activation?, _ output: String) throws -> Node) throws -> [Node] {
        let kind = try kerasActivation(value(key), key: key)
        switch kind {
        case .identity: return [try make(nil, outputNames[0])]
        case let .fused(a): return [try make(a, outputNames[0])]
        case .softmax:
            let pre = nodeName + "__preactivation__"
            return [try make(nil, pre),
                    Node(name: nodeName + "__activation__", op: .softmax(axis: rank - 1), inputs: [pre], outputs: [outputNames[0]])]
        }
    }

    /// Maps a Keras activation (a name such as "relu", or Keras 3's serialized function object).
    public func kerasActivation(_ v: KerasJSON?, key: String = "activation") throws -> KerasActivationKind {
        guard let v else { return .identity }
        let name = v.string ?? v["config"]?.string ?? v["class_name"]?.string
        guard let name else { throw invalid(key, expected: "an activation name") }
        guard let kind = KerasActivationKind(name: name, version: kerasVersion, config: v["config"]) else {
            throw unsupported("activation '\(name)' is not supported",
                              hint: "use a built-in activation (\(KerasActivationKind.supportedNames.joined(separator: ", "))), or convert this layer with a `LayerHook`")
        }
        return kind
    }
}

/// Per-conversion cache of constants (shared layers share their weights).
final class ConstantCache {
    var values: [String: ConstantTensor] = [:]
}

/// A Keras activation as the IR expresses it.
public enum KerasActivationKind: Hashable, Sendable {
    /// `linear` / None: no node.
    case identity
    /// An elementwise activation that conv/dense nodes can fuse or an activation node applies.
    case fused(Activation)
    /// Softmax on the last axis: a separate softmax node.
    case softmax

    /// Activation names this converter maps.
    public static let supportedNames = ["linear", "relu", "relu6", "sigmoid", "hard_sigmoid", "tanh", "softmax", "softplus",
                                        "softsign", "elu", "selu", "swish", "silu", "gelu", "exponential", "leaky_relu",
                                        "mish", "hard_silu", "hard_swish", "log_sigmoid"]

    /// Maps a Keras activation name; nil for names the IR cannot express.
    /// `hard_sigmoid` is 0.2x+0.5 before Keras 3 and relu6(x+3)/6 from Keras 3 on.
    public init?(name: String, version: KerasVersion, config: KerasJSON? = nil) {
        switch name {
        case "linear", "None": self = .identity
        case "relu": self = .fused(.relu)
        case "relu6": self = .fused(.clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0))
        case "sigmoid": self = .fused(.sigmoid)
        case "hard_sigmoid":
            self = .fused(version.isKeras3 ? .hardSigmoid(alpha: 1.0 / 6.0, beta: 0.5) : .hardSigmoid(alpha: 0.2, beta: 0.5))
        case "tanh": self = .fused(.tanh)
        case "softmax": self = .softmax
        case "softplus": self = .fused(.softplus)
        case "softsign": self = .fused(.softsign)
        case "elu": self = .fused(.elu(alpha: 1))
        case "selu": self = .fused(.selu)
        case "swish", "silu": self = .fused(.swish)
        case "gelu": self = .fused(.gelu(approximate: false))
        case "exponential": self = .fused(.exponential)
        case "leaky_relu": self = .fused(.leakyReLU(alpha: 0.2))
        // MARK: elementwise math ops (issue 9): Keras 3 activations.
        case "mish": self = .fused(.mish)
        case "hard_silu", "hard_swish": self = .fused(.hardSwish)  // x·relu6(x + 3)/6
        case "log_sigmoid": self = .fused(.logSigmoid)
        default: return nil
        }
    }
}
