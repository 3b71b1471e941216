import Diagnostics
import MLGraph

/// Helpers for 1-D layers, which the IR runs as 2-D ops on a height-1 image:
/// [N, W, C] → reshape [N, 1, W, C] → 2-D op → reshape back to [N, W', C'].
enum Lowering1D {
    /// The reshape [N, W, C] → [N, 1, W, C] named `<node>__as_2d`.
    static func to2D(_ ctx: KerasLayerContext) -> (tensor: String, node: Node) {
        let name = ctx.nodeName + "__as_2d"
        let s = ctx.inputShape
        return (name, Node(name: name, op: .reshape(targetShape: [1, s[1], s[2]]), inputs: [ctx.inputs[0]], outputs: [name]))
    }

    /// The reshape [N, 1, W', C'] → [N, W', C'] named `<node>__as_1d`, writing `output`.
    static func to1D(_ ctx: KerasLayerContext, from tensor: String, shape2D s: [Int], output: String) -> Node {
        Node(name: ctx.nodeName + "__as_1d", op: .reshape(targetShape: [s[2], s[3]]), inputs: [tensor], outputs: [output])
    }

    /// Requires a rank-3 [batch, steps, channels] input.
    static func requireSequence(_ ctx: KerasLayerContext) throws {
        guard ctx.inputShape.count == 3 else {
            throw ctx.unsupported("expects a [batch, steps, channels] input, found shape \(formatShape(ctx.inputShape))",
                                  hint: "check the model (1-D layers read rank-3 tensors)")
        }
    }

    /// Output types of `nodes` run in order from the known tensors `known` (for the shapes of
    /// intermediate tensors of a lowering).
    /// - Throws: `invalidGraph` naming the layer.
    static func inferTypes(_ ctx: KerasLayerContext, _ nodes: [Node], known: [String: TensorType]) throws -> [String: TensorType] {
        var types = known
        for n in nodes {
            let ins = n.inputs.map { types[$0] }
            guard ins.allSatisfy({ $0 != nil }) else { continue }
            do {
                for (name, t) in zip(n.outputs, try n.inferOutputTypes(ins.map { $0! })) { types[name] = t }
            } catch let e as GraphError {
                throw KerasConversionError.invalidGraph(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className, message: "", cause: DiagnosticCause(e))
            }
        }
        return types
    }

    /// The inputs' types by name.
    static func inputTypes(_ ctx: KerasLayerContext) -> [String: TensorType] {
        Dictionary(zip(ctx.inputs, ctx.inputTypes), uniquingKeysWith: { a, _ in a })
    }
}

/// `Conv1D` (filters, kernel_size, strides, dilation_rate, groups, padding same / valid /
/// causal, use_bias, activation) on [N, W, C] → reshape [N, 1, W, C] (`<name>__as_2d`) → conv2d
/// `<name>` with kernel [1, k] → reshape [N, W', filters] (`<name>__as_1d`). Keras kernel
/// (k, C/groups, filters) → IR weight [filters, C/groups, 1, k] (flipped for Theano-trained
/// files). `padding='causal'` is an explicit left padding of (k−1)·dilation then a valid
/// convolution (Keras pads the input on the left by that amount). Softmax activation: a separate
/// softmax node on the last axis.
struct Conv1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.conv2d, .reshape, .transpose, .pad, .activation, .softmax] }
    var classNames: [String] { ["Conv1D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel"] : ["kernel", "bias"]
    }

    /// The IR padding of a Keras Conv1D `padding` for kernel `k` and dilation `d` (causal: left
    /// (k−1)·d, nothing on the right).
    static func padding(_ name: String, kernel k: Int, dilation d: Int) -> PaddingMode? {
        switch name {
        case "valid": return .valid
        case "same": return .same
        case "causal": return .explicit(top: 0, bottom: 0, left: (k - 1) * d, right: 0)
        default: return nil
        }
    }

    /// Keras Conv1D kernel (k, Cin/g, Cout) → IR conv2d weight [Cout, Cin/g, 1, k].
    static func kernel(_ v: [Float], kerasShape s: [Int]) -> [Float] { WeightLayout.transpose(v, shape: s, perm: [2, 1, 0]) }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try Lowering1D.requireSequence(ctx)
        let filters = try ctx.int("filters")
        let k = try ctx.ints("kernel_size", count: 1)[0]
        let s = try ctx.ints("strides", count: 1, default: [1])[0]
        let d = try ctx.ints("dilation_rate", count: 1, default: [1])[0]
        let groups = try ctx.int("groups", default: 1)
        let useBias = try ctx.bool("use_bias", default: true)
        let padName = try ctx.string("padding", default: "valid").lowercased()
        guard let padding = Self.padding(padName, kernel: k, dilation: d) else {
            throw ctx.unsupported("padding '\(padName)' is not supported", hint: "use padding='same', 'valid' or 'causal'")
        }
        let cin = ctx.inputShape[2]
        guard groups >= 1, cin % groups == 0, filters % groups == 0 else {
            throw ctx.unsupported("groups \(groups) must divide the input channels \(cin) and filters \(filters)", hint: "check the model")
        }
        let kshape = [k, cin / groups, filters]
        let w = try ctx.constant("weight", shape: [filters, cin / groups, 1, k]) {
            Self.kernel(ctx.backendKernel(try ctx.weight("kernel", shape: kshape), kerasShape: [1] + kshape), kerasShape: kshape)
        }
        var weights = ["weight": w]
        if useBias { weights["bias"] = try ctx.constant("bias", shape: [filters]) { try ctx.weight("bias", shape: [filters]) } }
        let act = try ctx.kerasActivation(ctx.value("activation"))
        var fused: Activation? = nil
        if case let .fused(a) = act { fused = a }
        let (x2d, reshapeIn) = Lowering1D.to2D(ctx)
        let convOut = ctx.nodeName + "__conv"
        let conv = Node(name: ctx.nodeName,
                        op: .conv2d(Conv2DAttributes(kernel: [1, k], strides: [1, s], dilations: [1, d], padding: padding,
                                                     groups: groups, outputChannels: filters, activation: fused)),
                        inputs: [x2d], outputs: [convOut], weights: weights)
        let types = try Lowering1D.inferTypes(ctx, [reshapeIn, conv], known: Lowering1D.inputTypes(ctx))
        guard let s2 = types[convOut]?.shape else { throw ctx.unsupported("could not infer the convolution's output", hint: "check the model") }
        if case .softmax = act {
            let pre = ctx.nodeName + "__preactivation__"
            return [reshapeIn, conv, Lowering1D.to1D(ctx, from: convOut, shape2D: s2, output: pre),
                    Node(name: ctx.nodeName + "__activation__", op: .softmax(axis: 2), inputs: [pre], outputs: [ctx.outputNames[0]])]
        }
        return [reshapeIn, conv, Lowering1D.to1D(ctx, from: convOut, shape2D: s2, output: ctx.outputNames[0])]
    }
}
