public enum RecurrentKind: String, Codable, Hashable, Sendable, CaseIterable {
    /// Keras SimpleRNN: h_t = activation(W·x_t + R·h_{t−1} + b). Gates: 1.
    case simpleRNN
    /// Keras LSTM, gate order i, f, c (candidate), o (Keras' own order). Gates: 4.
    case lstm
    /// Keras GRU, gate order z (update), r (reset), h (candidate). Gates: 3. `resetAfter` as Keras.
    case gru

    /// Number of gate blocks in the weight matrices.
    public var gateCount: Int { self == .lstm ? 4 : self == .gru ? 3 : 1 }
    /// Number of state tensors per direction (LSTM has h and c).
    public var stateCount: Int { self == .lstm ? 2 : 1 }
}

/// How a bidirectional layer combines its two directions (Keras `Bidirectional.merge_mode`).
public enum BidirectionalMerge: String, Codable, Hashable, Sendable, CaseIterable { case concat, sum, mul, ave }

/// `Op.recurrent`: a Keras recurrent layer (SimpleRNN / LSTM / GRU, optionally Bidirectional).
///
/// Inputs, in order: x [N, T, D]; then, when `initialStates`, the initial states per direction
/// (forward then backward; LSTM: h then c), each [N, units]; then, when `hasMask`, a mask
/// [N, T] (1 = use the step, 0 = skip it: states carried over and the output repeats the previous
/// step's (zeros before the first used step) — Keras masking; inside a Bidirectional layer with
/// `returnSequences` Keras zeroes masked outputs instead). A non-GRU `recurrentBias` is added
/// outside any gate nonlinearity (as ONNX).
/// Outputs: y — [N, T, U] when `returnSequences`, else [N, U] (U = units, or 2·units for
/// `.concat`) — then, when `returnState`, the final states per direction (forward then backward;
/// LSTM: h then c), each [N, units].
/// Weights per direction (backward ones suffixed "_backward"): "kernel" [gates·units, D],
/// "recurrentKernel" [gates·units, units], optional "bias" [gates·units] and, for GRU with
/// `resetAfter`, "recurrentBias" [gates·units]; gate blocks stacked in `RecurrentKind`'s order
/// (Keras' order, rows = output units: Keras kernels transposed).
public struct RecurrentAttributes: Codable, Hashable, Sendable {
    public var kind: RecurrentKind
    public var units: Int
    /// Output/candidate activation (Keras `activation`, default tanh).
    public var activation: Activation
    /// Gate activation (Keras `recurrent_activation`: sigmoid, or hard_sigmoid in Keras ≤ 2.2).
    public var recurrentActivation: Activation
    public var returnSequences: Bool
    public var returnState: Bool
    /// Process the sequence from the end (Keras `go_backwards`; the output sequence stays reversed).
    public var goBackwards: Bool
    /// GRU only: apply the reset gate after the recurrent matmul (Keras `reset_after`, TF2 default).
    public var resetAfter: Bool
    /// nil for a single direction; the merge mode for Keras `Bidirectional`.
    public var bidirectional: BidirectionalMerge?
    public var initialStates: Bool
    public var hasMask: Bool

    public init(kind: RecurrentKind, units: Int, activation: Activation = .tanh, recurrentActivation: Activation = .sigmoid,
                returnSequences: Bool = false, returnState: Bool = false, goBackwards: Bool = false, resetAfter: Bool = false,
                bidirectional: BidirectionalMerge? = nil, initialStates: Bool = false, hasMask: Bool = false) {
        self.kind = kind; self.units = units; self.activation = activation; self.recurrentActivation = recurrentActivation
        self.returnSequences = returnSequences; self.returnState = returnState; self.goBackwards = goBackwards
        self.resetAfter = resetAfter; self.bidirectional = bidirectional; self.initialStates = initialStates; self.hasMask = hasMask
    }

    /// Number of directions (1 or 2).
    public var directions: Int { bidirectional == nil ? 1 : 2 }
}


/// Definition of `Op.recurrent`. MIL `rnn` / `lstm` / `gru`; ONNX `RNN` / `LSTM` / `GRU`; Core ML
/// `simpleRecurrent`, `uniDirectionalLSTM`, `biDirectionalLSTM`, `gru`.
enum RecurrentDefinition: OpDefinition {
    static let kind = OpKind.recurrent
    static let summary = "SimpleRNN / LSTM / GRU layer, one or two directions, with states and mask"
    static let milOps = ["rnn", "lstm", "gru"]
    static let onnxOps = ["RNN", "LSTM", "GRU"]

    static func checkAttributes(of node: Node) throws {
        guard case let .recurrent(a) = node.op else { return }
        try node.checkCount(a.units, "units")
        if a.resetAfter, a.kind != .gru { throw node.fail("resetAfter applies to GRU only") }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .recurrent(a) = op else { return [:] }
        return ["kind": .string(a.kind.rawValue), "units": .int(a.units), "activation": a.activation.attributeValue,
                "recurrentActivation": a.recurrentActivation.attributeValue, "returnSequences": .bool(a.returnSequences),
                "returnState": .bool(a.returnState), "goBackwards": .bool(a.goBackwards), "resetAfter": .bool(a.resetAfter),
                "bidirectional": a.bidirectional.map { .string($0.rawValue) } ?? .null,
                "initialStates": .bool(a.initialStates), "hasMask": .bool(a.hasMask)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .recurrent(RecurrentAttributes(
            kind: try a.enumeration("kind", RecurrentKind.self), units: try a.int("units"),
            activation: try Activation(attribute: "activation", of: a),
            recurrentActivation: try Activation(attribute: "recurrentActivation", of: a),
            returnSequences: try a.bool("returnSequences"), returnState: try a.bool("returnState"),
            goBackwards: try a.bool("goBackwards"), resetAfter: try a.bool("resetAfter"),
            bidirectional: a.has("bidirectional") ? try a.enumeration("bidirectional", BidirectionalMerge.self) : nil,
            initialStates: try a.bool("initialStates"), hasMask: try a.bool("hasMask")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .recurrent(a) = node.op else { return [] }
        let stateInputs = a.initialStates ? a.kind.stateCount * a.directions : 0
        try node.expectInputs(ins, 1 + stateInputs + (a.hasMask ? 1 : 0))
        try node.expectRank(ins[0], 3, "[N, T, D] input")
        let (n, t, d) = (ins[0].shape[0], ins[0].shape[1], ins[0].shape[2])
        for i in 0..<stateInputs where ins[1 + i].shape != [n, a.units] {
            throw node.fail("initial state \(i) should have shape \(formatShape([n, a.units])), found \(formatShape(ins[1 + i].shape))")
        }
        if a.hasMask, let mask = ins.last, mask.shape != [n, t] {
            throw node.fail("mask should have shape \(formatShape([n, t])), found \(formatShape(mask.shape))")
        }
        let g = a.kind.gateCount * a.units
        for suffix in a.bidirectional == nil ? [""] : ["", "_backward"] {
            try node.expectWeight("kernel" + suffix, shape: [g, d])
            try node.expectWeight("recurrentKernel" + suffix, shape: [g, a.units])
            try node.expectWeight("bias" + suffix, shape: [g], optional: true)
            try node.expectWeight("recurrentBias" + suffix, shape: [g], optional: true)
        }
        let dtype = ins[0].elementType
        let u = a.bidirectional == .concat ? 2 * a.units : a.units
        var outs = [TensorType(a.returnSequences ? [n, t, u] : [n, u], dtype)]
        if a.returnState {
            outs += Array(repeating: TensorType([n, a.units], dtype), count: a.kind.stateCount * a.directions)
        }
        return outs
    }

    /// Kernels are quantized per row (output unit of one gate); biases stay float32 by default,
    /// as Core ML stores recurrent layers. Backward-direction roles are suffixed "_backward".
    static var weightRoles: [WeightRole] {
        ["", "_backward"].flatMap { s in
            [WeightRole("kernel" + s), WeightRole("recurrentKernel" + s),
             WeightRole("bias" + s, quantizedByDefault: false), WeightRole("recurrentBias" + s, quantizedByDefault: false)]
        }
    }
}
