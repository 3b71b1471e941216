import MLGraph

/// The settings of one Keras recurrent layer (SimpleRNN, LSTM, GRU) as the IR needs them.
struct KerasRecurrentSettings: Equatable {
    /// SimpleRNN, LSTM or GRU.
    var kind: RecurrentKind
    /// `units`.
    var units: Int
    /// `activation` (default tanh).
    var activation: Activation
    /// `recurrent_activation` (default sigmoid; hard_sigmoid for Keras < 2.3 files).
    var recurrentActivation: Activation
    /// `use_bias`.
    var useBias: Bool
    /// `return_sequences`.
    var returnSequences: Bool
    /// `return_state`.
    var returnState: Bool
    /// `go_backwards`.
    var goBackwards: Bool
    /// GRU `reset_after`; nil when the config does not say (Keras < 2.3 files), decided from the
    /// stored bias shape.
    var resetAfter: Bool?
    /// `zero_output_for_mask` (Keras 3 always records it; tf.keras only when True).
    var zeroOutputForMask: Bool

    /// The recurrent kind of a Keras class name.
    static func kind(of className: String) -> RecurrentKind? {
        switch className {
        case "SimpleRNN": return .simpleRNN
        case "LSTM": return .lstm
        case "GRU": return .gru
        default: return nil
        }
    }

    /// Reads the settings from `ctx`'s config (a SimpleRNN / LSTM / GRU layer).
    /// - Throws: `unsupportedConfiguration` for stateful layers, time-major inputs, softmax
    ///   activations; `invalidLayerConfig` for malformed values.
    init(_ ctx: KerasLayerContext) throws {
        guard let kind = Self.kind(of: ctx.className) else {
            throw ctx.unsupported("'\(ctx.className)' is not a recurrent layer this converter knows", hint: "use SimpleRNN, LSTM or GRU")
        }
        self.kind = kind
        if ctx.value("units") == nil, ctx.value("output_dim") != nil {
            throw ctx.unsupported("this is a Keras 1 recurrent layer (output_dim, inner_activation, one weight per gate), which is not supported",
                                  hint: "load the model with Keras 2 (which converts Keras 1 configs and weights) and re-save it")
        }
        units = try ctx.int("units")
        guard units >= 1 else { throw ctx.invalid("units", expected: "a positive integer") }
        if try ctx.bool("stateful", default: false) {
            throw ctx.unsupported("stateful=True is not supported (the state would have to persist between predictions)",
                                  hint: "rebuild the layer with stateful=False, copy the weights, and pass the state explicitly with initial_state / return_state")
        }
        if try ctx.bool("time_major", default: false) {
            throw ctx.unsupported("time_major=True is not supported", hint: "rebuild the layer with time_major=False (batch-major input)")
        }
        // `unroll`, `implementation`, dropout and recurrent_dropout change neither the weights
        // nor the inference result.
        func act(_ key: String, default def: Activation) throws -> Activation {
            guard ctx.value(key) != nil else { return def }
            switch try ctx.kerasActivation(ctx.value(key), key: key) {
            case .identity: return .identity
            case let .fused(a): return a
            case .softmax:
                throw ctx.unsupported("\(key) 'softmax' is not supported inside a recurrent cell", hint: "use an elementwise activation")
            }
        }
        let v = ctx.kerasVersion
        let oldKeras = !v.isUnknown && v < KerasVersion("2.3.0")
        activation = try act("activation", default: .tanh)
        recurrentActivation = try act("recurrent_activation",
                                      default: oldKeras ? .hardSigmoid(alpha: 0.2, beta: 0.5) : .sigmoid)
        useBias = try ctx.bool("use_bias", default: true)
        returnSequences = try ctx.bool("return_sequences", default: false)
        returnState = try ctx.bool("return_state", default: false)
        goBackwards = try ctx.bool("go_backwards", default: false)
        if kind != .gru {
            resetAfter = false
        } else if ctx.value("reset_after") == nil {
            resetAfter = nil
        } else {
            resetAfter = try ctx.bool("reset_after", default: false)
        }
        zeroOutputForMask = try ctx.bool("zero_output_for_mask", default: false)
    }

    /// The Keras variables of the layer, in Keras' order.
    var roles: [String] { useBias ? ["kernel", "recurrent_kernel", "bias"] : ["kernel", "recurrent_kernel"] }

    /// Whether two directions of a Bidirectional layer compute the same kind of cell.
    func sameCell(as o: KerasRecurrentSettings) -> Bool {
        kind == o.kind && units == o.units && activation == o.activation && recurrentActivation == o.recurrentActivation
            && useBias == o.useBias && (resetAfter ?? true) == (o.resetAfter ?? true)
    }
}

/// Reading and laying out recurrent weights.
enum RecurrentWeights {
    /// Keras kernel (D, gates·units) → IR "kernel" [gates·units, D] (and likewise the recurrent
    /// kernel (units, gates·units) → [gates·units, units]): gate blocks stay in Keras' order.
    static func kernel(_ v: [Float], kerasShape s: [Int]) -> [Float] { WeightLayout.transpose(v, shape: s, perm: [1, 0]) }

    /// Splits a GRU `reset_after` bias (2, 3·units): row 0 = input bias ("bias"), row 1 =
    /// recurrent bias ("recurrentBias").
    static func splitGRUBias(_ v: [Float], gates g: Int) -> (input: [Float], recurrent: [Float]) {
        (Array(v[0..<g]), Array(v[g..<(2 * g)]))
    }

    /// The stored weights of each direction, by role: for a Bidirectional layer the weights under
    /// a `forward_…` / `backward_…` name component, else the two halves in file order.
    static func match(_ ctx: KerasLayerContext, roles: [String], directions: Int) throws -> [[String: KerasStoredWeight]] {
        let stored = ctx.storedWeights
        func fail() -> KerasConversionError {
            .missingWeight(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                           expected: (directions == 2 ? "forward and backward weights " : "weights ") + roles.joined(separator: ", "),
                           found: stored.isEmpty ? "no weights stored for this layer" : stored.map(\.description).joined(separator: ", "))
        }
        if directions == 1 {
            guard let m = KerasLayerContext.match(roles: roles, stored: stored) else { throw fail() }
            return [m]
        }
        func under(_ prefix: String) -> [KerasStoredWeight] {
            stored.filter { $0.name.split(separator: "/").dropLast().contains { $0.hasPrefix(prefix) } }
        }
        let fw = under("forward"), bw = under("backward")
        if fw.count == roles.count, bw.count == roles.count,
           let f = KerasLayerContext.match(roles: roles, stored: fw), let b = KerasLayerContext.match(roles: roles, stored: bw) {
            return [f, b]
        }
        guard stored.count == 2 * roles.count,
              let f = KerasLayerContext.match(roles: roles, stored: Array(stored.prefix(roles.count))),
              let b = KerasLayerContext.match(roles: roles, stored: Array(stored.suffix(roles.count))) else { throw fail() }
        return [f, b]
    }

    /// Reads one stored weight, checking its shape.
    static func read(_ ctx: KerasLayerContext, _ w: KerasStoredWeight, shape: [Int]) throws -> [Float] {
        guard w.shape == shape else {
            throw KerasConversionError.weightShapeMismatch(
                file: ctx.file, layer: ctx.qualifiedName, className: ctx.className, weight: w.name, expected: shape, found: w.shape,
                hint: "the architecture and the weights disagree: pass the architecture JSON that belongs to this weights file, or re-save the full model with `model.save`")
        }
        return try ctx.readWeight(w)
    }

    /// The IR weights of one direction (`suffix` "" or "_backward"), and the GRU `reset_after`
    /// the stored bias implies.
    static func irWeights(_ ctx: KerasLayerContext, _ s: KerasRecurrentSettings, stored m: [String: KerasStoredWeight],
                          inputSize d: Int, suffix: String) throws -> (weights: [String: ConstantTensor], resetAfter: Bool) {
        let g = s.kind.gateCount * s.units
        var out: [String: ConstantTensor] = [:]
        out["kernel" + suffix] = try ctx.constant("kernel" + suffix, shape: [g, d]) {
            kernel(try read(ctx, m["kernel"]!, shape: [d, g]), kerasShape: [d, g])
        }
        out["recurrentKernel" + suffix] = try ctx.constant("recurrentKernel" + suffix, shape: [g, s.units]) {
            kernel(try read(ctx, m["recurrent_kernel"]!, shape: [s.units, g]), kerasShape: [s.units, g])
        }
        var resetAfter = s.resetAfter ?? false
        if s.useBias, let b = m["bias"] {
            if s.kind == .gru, s.resetAfter == nil { resetAfter = b.shape.count == 2 }
            if s.kind == .gru, resetAfter {
                let both = try read(ctx, b, shape: [2, g])
                let (i, r) = splitGRUBias(both, gates: g)
                out["bias" + suffix] = ctx.constant("bias" + suffix, shape: [g]) { i }
                out["recurrentBias" + suffix] = ctx.constant("recurrentBias" + suffix, shape: [g]) { r }
            } else {
                out["bias" + suffix] = try ctx.constant("bias" + suffix, shape: [g]) { try read(ctx, b, shape: [g]) }
            }
        }
        return (out, resetAfter)
    }
}

/// Shared conversion of a recurrent call (single direction or Bidirectional).
enum RecurrentLowering {
    /// Builds the nodes of one call: the `.recurrent` node `<name>` (its outputs are the layer's
    /// outputs; states nobody reads get `<name>__state<i>`), preceded by the mask node when the
    /// input's mask is not computed yet, followed by `<name>__zero_masked` (`.applyMask`) when
    /// Keras zeroes the masked steps of the output sequence.
    static func convert(_ ctx: KerasLayerContext, settings s: KerasRecurrentSettings, merge: BidirectionalMerge?,
                        stored: [[String: KerasStoredWeight]], zeroMaskedOutputs: Bool) throws -> [Node] {
        guard ctx.inputShape.count == 3 else {
            throw ctx.unsupported("expects a [batch, steps, features] input, found \(formatShape(ctx.inputShape))",
                                  hint: "reshape the input to a sequence of feature vectors")
        }
        let directions = merge == nil ? 1 : 2
        let stateInputs = s.kind.stateCount * directions
        // Extra inputs: the initial states, then (Keras 3) the explicit mask.
        var extra = Array(ctx.inputs.indices.dropFirst())
        var explicitMask: Int? = nil
        if let last = extra.last, ctx.isMaskOperand(last) || extra.count == stateInputs + 1 {
            explicitMask = last
            extra.removeLast()
        } else if extra.count == 1, stateInputs != 1, ctx.inputTypes[extra[0]].shape == [ctx.inputShape[0], ctx.inputShape[1]] {
            explicitMask = extra.removeLast()
        }
        guard extra.isEmpty || extra.count == stateInputs else {
            throw ctx.unsupported("is called with \(extra.count) initial state tensors; \(s.kind.rawValue) expects \(stateInputs)\(directions == 2 ? " (forward then backward)" : "")",
                                  hint: "pass one tensor per state (LSTM: h and c)")
        }
        for i in extra where ctx.inputTypes[i].shape != [ctx.inputShape[0], s.units] {
            throw ctx.unsupported("initial state '\(ctx.inputs[i])' has shape \(formatShape(ctx.inputTypes[i].shape)); expected \(formatShape([ctx.inputShape[0], s.units]))",
                                  hint: "check the model")
        }
        let mask = try ctx.inputMask(explicit: explicitMask)

        var weights: [String: ConstantTensor] = [:]
        var resetAfter = false
        for (k, m) in stored.enumerated() {
            let (w, r) = try RecurrentWeights.irWeights(ctx, s, stored: m, inputSize: ctx.inputShape[2], suffix: k == 0 ? "" : "_backward")
            weights.merge(w) { a, _ in a }
            if k == 0 { resetAfter = r } else if r != resetAfter {
                throw ctx.unsupported("the forward and backward GRUs differ in reset_after", hint: "use the same cell in both directions")
            }
        }
        let returnState = s.returnState && ctx.outputNames.count > 1
        let stateOutputs = returnState ? stateInputs : 0
        guard ctx.outputNames.count <= 1 + stateOutputs else {
            throw ctx.unsupported("\(ctx.outputNames.count) outputs are read, but the layer returns \(1 + stateOutputs)", hint: "check the model")
        }
        let zero = zeroMaskedOutputs && mask != nil
        if zero {
            guard s.returnSequences else {
                throw ctx.unsupported("zero_output_for_mask=True without return_sequences is not supported (Keras then zeroes the last output when the last step is masked)",
                                      hint: "set zero_output_for_mask=False, or return sequences")
            }
            guard merge != nil || !s.goBackwards else {
                throw ctx.unsupported("zero_output_for_mask=True with go_backwards=True is not supported", hint: "set zero_output_for_mask=False")
            }
        }
        let y = zero ? ctx.nodeName + "__unmasked" : ctx.outputNames[0]
        var outputs = [y]
        for i in 1..<(1 + stateOutputs) { outputs.append(i < ctx.outputNames.count ? ctx.outputNames[i] : ctx.nodeName + "__state\(i - 1)") }

        let attrs = RecurrentAttributes(kind: s.kind, units: s.units, activation: s.activation, recurrentActivation: s.recurrentActivation,
                                        returnSequences: s.returnSequences, returnState: returnState,
                                        goBackwards: merge == nil ? s.goBackwards : false, resetAfter: s.kind == .gru && resetAfter,
                                        bidirectional: merge, initialStates: !extra.isEmpty, hasMask: mask != nil)
        var nodes: [Node] = []
        var inputs = [ctx.inputs[0]] + extra.map { ctx.inputs[$0] }
        var maskTensor: String? = nil
        if let mask {
            let (t, made) = ctx.materialize(mask)
            nodes += made
            inputs.append(t)
            maskTensor = t
        }
        nodes.append(Node(name: ctx.nodeName, op: .recurrent(attrs), inputs: inputs, outputs: outputs, weights: weights))
        if zero, let maskTensor {
            nodes.append(Node(name: ctx.nodeName + "__zero_masked", op: .applyMask, inputs: [y, maskTensor], outputs: [ctx.outputNames[0]]))
        }
        if let mask, s.returnSequences { ctx.maskTable.maskOf[ctx.outputNames[0]] = mask }
        return nodes
    }
}

/// `SimpleRNN`, `LSTM`, `GRU` → one `.recurrent` node (see `RecurrentAttributes`): kernels
/// (D, gates·units) and recurrent kernels (units, gates·units) transposed to rows = gate·units,
/// gate blocks in Keras' order (LSTM i, f, c, o; GRU z, r, h); GRU `reset_after=True` bias
/// (2, 3·units) split into "bias" (input) and "recurrentBias". The LSTM bias is used as stored:
/// `unit_forget_bias` only initialised it (the trained bias already holds the +1).
/// `return_sequences`, `return_state` (the states become the node's extra outputs),
/// `go_backwards` (the output sequence stays reversed, as Keras returns it), `initial_state`
/// (extra inbound tensors) and masks (see `Masking.swift`) are supported; `hard_sigmoid` follows
/// the file's Keras version (0.2x + 0.5 before Keras 3, x/6 + 0.5 from Keras 3). Rejected:
/// `stateful=True`, `time_major=True`, softmax activations. `unroll`, `implementation` and the
/// dropouts do not change inference and are ignored.
struct RecurrentConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.recurrent, .sequenceMask, .applyMask, .elementwise] }
    var classNames: [String] { ["SimpleRNN", "LSTM", "GRU"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel", "recurrent_kernel"] : ["kernel", "recurrent_kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let s = try KerasRecurrentSettings(ctx)
        let stored = try RecurrentWeights.match(ctx, roles: s.roles, directions: 1)
        return try RecurrentLowering.convert(ctx, settings: s, merge: nil, stored: stored, zeroMaskedOutputs: s.zeroOutputForMask)
    }
}

/// `Bidirectional(SimpleRNN | LSTM | GRU, merge_mode)` → one `.recurrent` node with
/// `bidirectional` = merge_mode (concat, sum, mul, ave; `None` — two separate outputs — is
/// rejected). The forward weights come from the `forward_…` weights, the backward ones from
/// `backward_…` (IR names suffixed "_backward"); both directions must use the same cell settings.
/// The backward output sequence is aligned with the input (Keras reverses it back before
/// merging). With a mask and return_sequences, Keras zeroes the masked steps of both directions
/// (it forces `zero_output_for_mask`): an `.applyMask` follows the node. With `return_state`
/// the outputs are y, then the forward states, then the backward states (LSTM: h, c).
struct BidirectionalConverter: KerasLayerConverter {
    var ops: Set<OpKind> { Set<OpKind>([.recurrent, .sequenceMask, .applyMask, .elementwise]).union(ConvLSTMLowering.ops) }
    var classNames: [String] { ["Bidirectional"] }

    /// The wrapped (forward) layer's config.
    static func inner(_ config: KerasJSON, key: String = "layer") -> KerasLayerConfig? {
        guard let l = config[key], let cls = l["class_name"]?.string, let c = l["config"] else { return nil }
        return KerasLayerConfig(name: c["name"]?.string ?? cls.lowercased(), className: cls, config: c,
                                module: l["module"]?.string, registeredName: l["registered_name"]?.string)
    }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        guard let inner = Self.inner(layer.config) else { return [] }
        let r = RecurrentConverter().weightRoles(inner, version: version)
        return r + r.map { "backward_" + $0 }
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard let forward = Self.inner(ctx.config) else { throw ctx.invalid("layer", expected: "the wrapped recurrent layer's config") }
        if KerasConvLSTMSettings.rank(of: forward.className) != nil { return try ConvLSTMConverter.convertBidirectional(ctx, forward: forward) }
        guard KerasRecurrentSettings.kind(of: forward.className) != nil else {
            throw ctx.unsupported("wraps a '\(forward.className)' layer; only SimpleRNN, LSTM, GRU, ConvLSTM1D and ConvLSTM2D are supported", hint: "convert this layer with a `LayerHook`")
        }
        let merge: BidirectionalMerge
        switch ctx.value("merge_mode")?.string ?? (ctx.config["merge_mode"]?.isNull == true ? "none" : "concat") {
        case "concat": merge = .concat
        case "sum": merge = .sum
        case "mul": merge = .mul
        case "ave": merge = .ave
        case let m:
            throw ctx.unsupported("merge_mode \(m == "none" ? "None (separate forward and backward outputs)" : "'\(m)'") is not supported",
                                  hint: "use merge_mode 'concat', 'sum', 'mul' or 'ave'")
        }
        let fctx = ctx.wrapping(forward)
        let s = try KerasRecurrentSettings(fctx)
        if s.goBackwards {
            throw ctx.unsupported("the wrapped layer has go_backwards=True", hint: "wrap a layer with go_backwards=False (Bidirectional runs the backward direction itself)")
        }
        if let backward = Self.inner(ctx.config, key: "backward_layer") {
            let b = try KerasRecurrentSettings(ctx.wrapping(backward))
            guard b.sameCell(as: s), b.returnSequences == s.returnSequences, b.returnState == s.returnState else {
                throw ctx.unsupported("its backward_layer differs from the forward layer (kind, units, activations, bias or outputs)",
                                      hint: "use the same settings in both directions")
            }
        }
        let stored = try RecurrentWeights.match(ctx, roles: s.roles, directions: 2)
        return try RecurrentLowering.convert(ctx, settings: s, merge: merge, stored: stored, zeroMaskedOutputs: s.returnSequences)
    }
}
