import MLGraph

/// The settings of a Keras `ConvLSTM1D` / `ConvLSTM2D` layer.
struct KerasConvLSTMSettings {
    /// Spatial axes: 1 (ConvLSTM1D) or 2 (ConvLSTM2D).
    var rank: Int
    var filters: Int
    var kernel: [Int]
    var strides: [Int]
    var dilations: [Int]
    /// `padding='same'` (else 'valid') of the input convolution; the recurrent convolution is
    /// always 'same' with stride 1 and no dilation (as Keras' ConvLSTMCell).
    var same: Bool
    /// `data_format='channels_first'`: input [N, T, C, spatial…], outputs [N, (T,) F, spatial…].
    var channelsFirst: Bool
    /// `activation` (default tanh); nil = linear.
    var activation: Activation?
    /// `recurrent_activation` (the file records it; default hard_sigmoid before Keras 3 —
    /// tf.keras' ConvLSTM default — and sigmoid from Keras 3); nil = linear.
    var recurrentActivation: Activation?
    var useBias: Bool
    var returnSequences: Bool
    var returnState: Bool
    var goBackwards: Bool

    /// The spatial rank of a Keras class name, or nil when it is not a ConvLSTM this converter knows.
    static func rank(of className: String) -> Int? {
        switch className {
        case "ConvLSTM1D": return 1
        case "ConvLSTM2D": return 2
        default: return nil
        }
    }

    /// Reads the settings from `ctx`'s config.
    /// - Throws: `unsupportedConfiguration` for stateful layers, ConvLSTM3D, softmax activations;
    ///   `invalidLayerConfig` for malformed values.
    init(_ ctx: KerasLayerContext) throws {
        guard let rank = Self.rank(of: ctx.className) else {
            throw ctx.unsupported("'\(ctx.className)' is not supported", hint: "use ConvLSTM1D or ConvLSTM2D, or convert this layer with a `LayerHook`")
        }
        self.rank = rank
        guard !ctx.kernelsNeedSpatialFlip else {
            throw ctx.unsupported("Theano-trained \(ctx.className) kernels (spatially flipped) are not supported", hint: "re-save the model with the TensorFlow backend")
        }
        filters = try ctx.int("filters")
        kernel = try ctx.ints("kernel_size", count: rank)
        strides = try ctx.ints("strides", count: rank, default: Array(repeating: 1, count: rank))
        dilations = try ctx.ints("dilation_rate", count: rank, default: Array(repeating: 1, count: rank))
        guard filters >= 1, filters <= 1 << 20, (kernel + strides + dilations).allSatisfy({ $0 >= 1 && $0 <= 1 << 16 }) else {
            throw ctx.invalid("filters", expected: "positive filters, kernel_size, strides and dilation_rate")
        }
        switch try ctx.string("padding", default: "valid").lowercased() {
        case "same": same = true
        case "valid": same = false
        case let p: throw ctx.unsupported("padding '\(p)' is not supported", hint: "use padding='same' or 'valid'")
        }
        switch try ctx.string("data_format", default: "channels_last") {
        case "channels_last": channelsFirst = false
        case "channels_first": channelsFirst = true
        case let f: throw ctx.invalid("data_format", expected: "'channels_last' or 'channels_first', found '\(f)'")
        }
        if try ctx.bool("stateful", default: false) {
            throw ctx.unsupported("stateful=True is not supported (the state would have to persist between predictions)",
                                  hint: "rebuild the layer with stateful=False, copy the weights, and pass the state explicitly with initial_state / return_state")
        }
        func act(_ key: String, default def: Activation) throws -> Activation? {
            guard ctx.value(key) != nil else { return def }
            switch try ctx.kerasActivation(ctx.value(key), key: key) {
            case .identity: return nil
            case let .fused(a): return a
            case .softmax:
                throw ctx.unsupported("\(key) 'softmax' is not supported inside a ConvLSTM cell", hint: "use an elementwise activation")
            }
        }
        let v = ctx.kerasVersion
        let keras3 = !v.isUnknown && v >= KerasVersion("3.0.0")
        activation = try act("activation", default: .tanh)
        recurrentActivation = try act("recurrent_activation", default: keras3 ? .sigmoid : .hardSigmoid(alpha: 0.2, beta: 0.5))
        useBias = try ctx.bool("use_bias", default: true)
        returnSequences = try ctx.bool("return_sequences", default: false)
        returnState = try ctx.bool("return_state", default: false)
        goBackwards = try ctx.bool("go_backwards", default: false)
    }

    /// The Keras variables of the layer, in Keras' order.
    var roles: [String] { useBias ? ["kernel", "recurrent_kernel", "bias"] : ["kernel", "recurrent_kernel"] }

    /// Whether two directions of a Bidirectional layer compute the same kind of cell.
    func sameCell(as o: KerasConvLSTMSettings) -> Bool {
        rank == o.rank && filters == o.filters && kernel == o.kernel && strides == o.strides && dilations == o.dilations
            && same == o.same && channelsFirst == o.channelsFirst && activation == o.activation
            && recurrentActivation == o.recurrentActivation && useBias == o.useBias
            && returnSequences == o.returnSequences && returnState == o.returnState
    }
}

/// How a Bidirectional ConvLSTM combines its two directions (Keras `merge_mode`).
enum ConvLSTMMerge {
    case concat, sum, mul, ave
    /// `merge_mode=None`: the forward and backward outputs are two separate outputs.
    case separate
}

/// The lowering of ConvLSTM1D / ConvLSTM2D (alone or inside Bidirectional) to existing IR ops,
/// unrolled over the time steps (the step count is fixed at conversion: the file's input shape or
/// `--input-shape`):
///
/// * channels_first inputs are transposed to channels-last first (`<name>__channels_last`) and
///   every output back (`<name>__…_channels_first`);
/// * the input convolution of all steps at once with the bias: ConvLSTM2D a conv3d over
///   [N, T, H, W, C] with kernel (1, kH, kW) (`<name><dir>__input_conv`), ConvLSTM1D a conv2d over
///   [N, T, W, C] with kernel (1, k) — the layer's strides, dilation and padding on the spatial
///   axes, none on time;
/// * per step t (in processing order; `go_backwards` reverses it): the step's gates
///   (`sliceByIndex`), plus the recurrent convolution of h (conv2d / conv1d, 'same', stride 1, no
///   bias; skipped at the first step without an initial state, where h = 0), split into Keras'
///   gate order i, f, c, o; i, f, o through `recurrent_activation`, c̃ through `activation`;
///   c = f·c + i·c̃, h = o·activation(c) (`<name><dir>__t<j>_…`);
/// * the sequence output stacks h in processing order (Keras returns a `go_backwards` sequence
///   reversed); Bidirectional's backward direction runs with the opposite `go_backwards` and its
///   sequence is reversed back before the merge (concat on the last axis of Keras' layout, sum,
///   mul, ave, or separate outputs for merge_mode=None).
///
/// Outputs: y, then with return_state h and c (Bidirectional: forward h, c, then backward h, c).
/// Initial states (`initial_state`) are extra inbound tensors in that order. Masks are refused.
enum ConvLSTMLowering {
    /// The IR kinds the lowering may emit.
    static let ops: Set<OpKind> = [.conv1d, .conv2d, .conv3d, .sliceByIndex, .split, .activation, .elementwise,
                                   .stack, .transpose, .identity, .concat]

    /// The nodes of one call. `merge` nil: a ConvLSTM layer; else a Bidirectional one whose
    /// `stored` holds the forward then the backward weights.
    static func convert(_ ctx: KerasLayerContext, settings s: KerasConvLSTMSettings, merge: ConvLSTMMerge?,
                        stored: [[String: KerasStoredWeight]]) throws -> [Node] {
        let shape = ctx.inputShape
        let r = s.rank
        guard shape.count == r + 3 else {
            throw ctx.unsupported("expects a [batch, steps, \(s.channelsFirst ? "channels, " : "")\(r == 1 ? "width" : "height, width")\(s.channelsFirst ? "" : ", channels")] input, found \(formatShape(shape))",
                                  hint: "check the model")
        }
        let steps = shape[1]
        guard steps >= 1, steps <= 1 << 16 else {
            throw ctx.unsupported("has \(steps) time steps; the lowering unrolls at most 65536", hint: "fix a smaller time dimension with --input-shape")
        }
        let cin = s.channelsFirst ? shape[2] : shape[r + 2]
        let spatialIn = s.channelsFirst ? Array(shape[3...]) : Array(shape[2..<(r + 2)])
        var spatialOut: [Int] = []
        for a in 0..<r {
            let ke = (s.kernel[a] - 1) * s.dilations[a] + 1
            let o = s.same ? (spatialIn[a] + s.strides[a] - 1) / s.strides[a] : (spatialIn[a] - ke) / s.strides[a] + 1
            guard o >= 1, !(!s.same && spatialIn[a] < ke) else {
                throw ctx.unsupported("kernel \(s.kernel) (dilation \(s.dilations)) does not fit the input \(formatShape(shape)) with 'valid' padding", hint: "check the model")
            }
            spatialOut.append(o)
        }
        let directions = merge == nil ? 1 : 2
        let maskOperand = ctx.inputs.indices.dropFirst().first(where: ctx.isMaskOperand)
        if try ctx.inputMask(explicit: maskOperand) != nil {
            throw ctx.unsupported("a masked input is not supported for \(ctx.className)", hint: "remove the Masking layer before the ConvLSTM")
        }
        let extra = Array(ctx.inputs.indices.dropFirst())
        guard extra.isEmpty || extra.count == 2 * directions else {
            throw ctx.unsupported("is called with \(extra.count) initial state tensors; expected \(2 * directions)\(directions == 2 ? " (forward h, c then backward h, c)" : " (h and c)")",
                                  hint: "pass one tensor per state")
        }
        let stateShape = s.channelsFirst ? [shape[0], s.filters] + spatialOut : [shape[0]] + spatialOut + [s.filters]
        for i in extra where ctx.inputTypes[i].shape != stateShape {
            throw ctx.unsupported("initial state '\(ctx.inputs[i])' has shape \(formatShape(ctx.inputTypes[i].shape)); expected \(formatShape(stateShape))",
                                  hint: "check the model")
        }
        let returnState = s.returnState && ctx.outputNames.count > 1
        let produced = (merge == .separate ? 2 : 1) + (returnState ? 2 * directions : 0)
        guard ctx.outputNames.count <= produced else {
            throw ctx.unsupported("\(ctx.outputNames.count) outputs are read, but the layer returns \(produced)", hint: "check the model")
        }

        let n = ctx.nodeName
        var nodes: [Node] = []
        // Channels-last views of the input and initial states.
        var x = ctx.inputs[0]
        let toLast = [0, 1] + Array(3..<(r + 3)) + [2]            // [N, T, C, S…] → [N, T, S…, C]
        let stateToLast = [0] + Array(2..<(r + 2)) + [1]          // [N, F, S…] → [N, S…, F]
        let seqToFirst = [0, 1, r + 2] + Array(2..<(r + 2))       // [N, T, S…, F] → [N, T, F, S…]
        let stateToFirst = [0, r + 1] + Array(1..<(r + 1))        // [N, S…, F] → [N, F, S…]
        if s.channelsFirst {
            x = n + "__channels_last"
            nodes.append(Node(name: x, op: .transpose(perm: toLast), inputs: [ctx.inputs[0]], outputs: [x]))
        }
        var initial: [String] = []
        for i in extra {
            if s.channelsFirst {
                let t = n + "__initial_state\(initial.count)_channels_last"
                nodes.append(Node(name: t, op: .transpose(perm: stateToLast), inputs: [ctx.inputs[i]], outputs: [t]))
                initial.append(t)
            } else {
                initial.append(ctx.inputs[i])
            }
        }

        // Each direction: (sequence or nil, last h, last c), channels-last.
        var results: [(seq: String?, h: String, c: String)] = []
        for k in 0..<directions {
            let suffix = k == 0 ? "" : "_backward"
            let backwards = k == 0 ? s.goBackwards : !s.goBackwards
            let init0 = initial.isEmpty ? nil : (h: initial[2 * k], c: initial[2 * k + 1])
            let (made, result) = try direction(ctx, s, stored: stored[k], input: x, cin: cin, steps: steps, backwards: backwards,
                                               reverseSequence: k == 1, initial: init0, prefix: n + suffix, suffix: suffix)
            nodes += made
            results.append(result)
        }

        // Outputs in Keras' layout.
        func place(_ src: String, _ dst: String, sequence: Bool) -> Node {
            if s.channelsFirst {
                return Node(name: dst + "__channels_first", op: .transpose(perm: sequence ? seqToFirst : stateToFirst), inputs: [src], outputs: [dst])
            }
            return Node(name: dst + "__identity", op: .identity, inputs: [src], outputs: [dst])
        }
        var outNames = ctx.outputNames
        for i in outNames.count..<produced { outNames.append(n + "__unused_output\(i)") }
        let ys = results.map { $0.seq ?? $0.h }
        switch merge {
        case nil:
            nodes.append(place(ys[0], outNames[0], sequence: s.returnSequences))
        case .separate?:
            nodes.append(place(ys[0], outNames[0], sequence: s.returnSequences))
            nodes.append(place(ys[1], outNames[1], sequence: s.returnSequences))
        case let m?:
            let parts = [n + "__forward_output", n + "__backward_output"]
            for (y, p) in zip(ys, parts) { nodes.append(place(y, p, sequence: s.returnSequences)) }
            let op: Op
            switch m {
            case .concat: op = .concat(axis: -1)
            case .sum: op = .elementwise(.add)
            case .mul: op = .elementwise(.multiply)
            default: op = .elementwise(.average)
            }
            nodes.append(Node(name: n, op: op, inputs: parts, outputs: [outNames[0]]))
        }
        if returnState {
            var i = merge == .separate ? 2 : 1
            for res in results {
                for t in [res.h, res.c] where i < ctx.outputNames.count {
                    nodes.append(place(t, outNames[i], sequence: false))
                    i += 1
                }
            }
        }
        return nodes
    }

    /// One direction, unrolled: returns its nodes and its (sequence, h, c) tensors (channels-last).
    private static func direction(_ ctx: KerasLayerContext, _ s: KerasConvLSTMSettings, stored m: [String: KerasStoredWeight],
                                  input x: String, cin: Int, steps: Int, backwards: Bool, reverseSequence: Bool,
                                  initial: (h: String, c: String)?, prefix p: String, suffix: String)
        throws -> ([Node], (seq: String?, h: String, c: String)) {
        let r = s.rank, f = s.filters, g = 4 * f
        // Weights. Keras kernel (k…, C, 4F), recurrent kernel (k…, F, 4F), gate blocks i, f, c, o.
        guard let kw = m["kernel"], let rw = m["recurrent_kernel"] else {
            throw KerasConversionError.missingWeight(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                                                     expected: "kernel and recurrent_kernel", found: ctx.storedWeights.map(\.description).joined(separator: ", "))
        }
        let kshape = s.kernel + [cin, g], rshape = s.kernel + [f, g]
        let toIR = [r + 1, r] + Array(0..<r)  // (k…, in, out) → [out, in, k…]
        let inputWeight = try ctx.constant("input_kernel" + suffix, shape: [g, cin, 1] + s.kernel) {
            WeightLayout.transpose(try RecurrentWeights.read(ctx, kw, shape: kshape), shape: kshape, perm: toIR)
        }
        let recurrentWeight = try ctx.constant("recurrent_kernel" + suffix, shape: [g, f] + s.kernel) {
            WeightLayout.transpose(try RecurrentWeights.read(ctx, rw, shape: rshape), shape: rshape, perm: toIR)
        }
        var inputWeights = ["weight": inputWeight]
        if s.useBias {
            guard let b = m["bias"] else {
                throw KerasConversionError.missingWeight(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                                                         expected: "bias", found: ctx.storedWeights.map(\.description).joined(separator: ", "))
            }
            inputWeights["bias"] = try ctx.constant("bias" + suffix, shape: [g]) { try RecurrentWeights.read(ctx, b, shape: [g]) }
        }

        var nodes: [Node] = []
        // Input convolution of every step, time as an extra spatial axis with kernel 1.
        let z = p + "__input_conv"
        if r == 2 {
            nodes.append(Node(name: z, op: .conv3d(ConvNDAttributes(kernel: [1] + s.kernel, strides: [1] + s.strides, dilations: [1] + s.dilations,
                                                                    padding: s.same ? .same : .valid, outputChannels: g)),
                              inputs: [x], outputs: [z], weights: inputWeights))
        } else {
            nodes.append(Node(name: z, op: .conv2d(Conv2DAttributes(kernel: [1] + s.kernel, strides: [1] + s.strides, dilations: [1] + s.dilations,
                                                                    padding: s.same ? .same : .valid, outputChannels: g)),
                              inputs: [x], outputs: [z], weights: inputWeights))
        }
        let zRank = r + 3
        func act(_ a: Activation?, _ src: String, _ name: String) -> String {
            guard let a else { return src }
            nodes.append(Node(name: name, op: .activation(a), inputs: [src], outputs: [name]))
            return name
        }
        var h = initial?.h, c = initial?.c
        var hs: [String] = []
        let order = backwards ? Array((0..<steps).reversed()) : Array(0..<steps)
        for (j, t) in order.enumerated() {
            let q = p + "__t\(j)"
            var begin = Array(repeating: 0, count: zRank), end = Array(repeating: 0, count: zRank)
            begin[1] = t; end[1] = t + 1
            var bm = Array(repeating: true, count: zRank), em = Array(repeating: true, count: zRank)
            bm[1] = false; em[1] = false
            var sq = Array(repeating: false, count: zRank)
            sq[1] = true
            let zt = q + "_input"
            nodes.append(Node(name: zt, op: .sliceByIndex(SliceByIndexAttributes(begin: begin, end: end, stride: Array(repeating: 1, count: zRank),
                                                                                  beginMask: bm, endMask: em, squeezeMask: sq)),
                              inputs: [z], outputs: [zt]))
            var gates = zt
            if let hPrev = h {
                let rc = q + "_recurrent_conv"
                if r == 2 {
                    nodes.append(Node(name: rc, op: .conv2d(Conv2DAttributes(kernel: s.kernel, padding: .same, outputChannels: g)),
                                      inputs: [hPrev], outputs: [rc], weights: ["weight": recurrentWeight]))
                } else {
                    nodes.append(Node(name: rc, op: .conv1d(ConvNDAttributes(kernel: s.kernel, padding: .same, outputChannels: g)),
                                      inputs: [hPrev], outputs: [rc], weights: ["weight": recurrentWeight]))
                }
                gates = q + "_gates"
                nodes.append(Node(name: gates, op: .elementwise(.add), inputs: [zt, rc], outputs: [gates]))
            }
            let parts = ["i", "f", "c", "o"].map { q + "_" + $0 + "_pre" }
            nodes.append(Node(name: q + "_split", op: .split(SplitAttributes(axis: -1, numSplits: 4)), inputs: [gates], outputs: parts))
            let i = act(s.recurrentActivation, parts[0], q + "_i")
            let o = act(s.recurrentActivation, parts[3], q + "_o")
            let cand = act(s.activation, parts[2], q + "_candidate")
            let ic = q + "_i_candidate"
            nodes.append(Node(name: ic, op: .elementwise(.multiply), inputs: [i, cand], outputs: [ic]))
            let cNew: String
            if let cPrev = c {
                let fg = act(s.recurrentActivation, parts[1], q + "_f")
                let fc = q + "_f_c"
                nodes.append(Node(name: fc, op: .elementwise(.multiply), inputs: [fg, cPrev], outputs: [fc]))
                cNew = q + "_c"
                nodes.append(Node(name: cNew, op: .elementwise(.add), inputs: [fc, ic], outputs: [cNew]))
            } else {
                cNew = ic  // c₀ = 0: f·c₀ vanishes
            }
            let ca = act(s.activation, cNew, q + "_c_activated")
            let hNew = q + "_h"
            nodes.append(Node(name: hNew, op: .elementwise(.multiply), inputs: [o, ca], outputs: [hNew]))
            h = hNew; c = cNew
            hs.append(hNew)
        }
        var seq: String? = nil
        if s.returnSequences {
            let name = p + "__sequence"
            nodes.append(Node(name: name, op: .stack(axis: 1), inputs: reverseSequence ? hs.reversed() : hs, outputs: [name]))
            seq = name
        }
        guard let hLast = h, let cLast = c else {
            throw ctx.unsupported("has no time steps", hint: "check the model")
        }
        return (nodes, (seq, hLast, cLast))
    }
}

/// `ConvLSTM1D` / `ConvLSTM2D` (filters, kernel_size, strides, dilation_rate, padding same /
/// valid, data_format, activation, recurrent_activation, use_bias, return_sequences,
/// return_state, go_backwards, initial_state) → the unrolled lowering of `ConvLSTMLowering`.
/// Rejected: stateful=True, masks, softmax activations. Dropouts and `unroll` do not change
/// inference and are ignored.
struct ConvLSTMConverter: KerasLayerConverter {
    var ops: Set<OpKind> { ConvLSTMLowering.ops }
    var classNames: [String] { ["ConvLSTM1D", "ConvLSTM2D"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        layer.config["use_bias"]?.bool == false ? ["kernel", "recurrent_kernel"] : ["kernel", "recurrent_kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let s = try KerasConvLSTMSettings(ctx)
        let stored = try RecurrentWeights.match(ctx, roles: s.roles, directions: 1)
        return try ConvLSTMLowering.convert(ctx, settings: s, merge: nil, stored: stored)
    }

    /// `Bidirectional(ConvLSTM1D | ConvLSTM2D, merge_mode)` (called by `BidirectionalConverter`):
    /// merge modes concat (last axis of Keras' layout), sum, mul, ave and None (two outputs).
    /// The backward direction runs with the opposite `go_backwards` of the wrapped layer.
    static func convertBidirectional(_ ctx: KerasLayerContext, forward: KerasLayerConfig) throws -> [Node] {
        let merge: ConvLSTMMerge
        switch ctx.value("merge_mode")?.string ?? (ctx.config["merge_mode"]?.isNull == true ? "none" : "concat") {
        case "concat": merge = .concat
        case "sum": merge = .sum
        case "mul": merge = .mul
        case "ave": merge = .ave
        case "none": merge = .separate
        case let m: throw ctx.unsupported("merge_mode '\(m)' is not supported", hint: "use merge_mode 'concat', 'sum', 'mul', 'ave' or None")
        }
        let s = try KerasConvLSTMSettings(ctx.wrapping(forward))
        if let backward = BidirectionalConverter.inner(ctx.config, key: "backward_layer") {
            let b = try KerasConvLSTMSettings(ctx.wrapping(backward))
            guard b.sameCell(as: s), b.goBackwards != s.goBackwards else {
                throw ctx.unsupported("its backward_layer differs from the forward layer (settings, or go_backwards not opposite)",
                                      hint: "use the same settings in both directions")
            }
        }
        let stored = try RecurrentWeights.match(ctx, roles: s.roles, directions: 2)
        return try ConvLSTMLowering.convert(ctx, settings: s, merge: merge, stored: stored)
    }
}
