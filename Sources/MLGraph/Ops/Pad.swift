public enum PadMode: String, Codable, Hashable, Sendable, CaseIterable {
    /// Fill with `PadAttributes.value`.
    case constant
    /// Mirror without repeating the edge (TF/NumPy `reflect`): [a b c] → b | a b c | b.
    case reflect
    /// Repeat the edge value (NumPy `edge`, Core ML `replication`).
    case edge
}

/// `Op.pad`: pads each axis by `pads[axis] = [before, after]` (rank entries, batch first).
public struct PadAttributes: Codable, Hashable, Sendable {
    public var mode: PadMode
    public var pads: [[Int]]
    public var value: Float
    public init(mode: PadMode, pads: [[Int]], value: Float = 0) { self.mode = mode; self.pads = pads; self.value = value }
}

/// Definition of `Op.pad`. MIL `pad`, ONNX `Pad`, Core ML `padding` / `constantPad`.
enum PadDefinition: OpDefinition {
    static let kind = OpKind.pad
    static let summary = "constant, reflect or edge padding of any axes"
    static let milOps = ["pad"]
    static let onnxOps = ["Pad"]

    static func checkAttributes(of node: Node) throws {
        guard case let .pad(a) = node.op else { return }
        try node.checkAmounts(a.pads, "pads")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .pad(a) = op else { return [:] }
        return ["mode": .string(a.mode.rawValue), "pads": .intPairs(a.pads), "value": .number(a.value)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .pad(PadAttributes(mode: try a.enumeration("mode", PadMode.self), pads: try a.intPairs("pads"), value: try a.float("value")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .pad(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard a.pads.count == ins[0].rank else {  // pairs and signs: checkAttributes
            throw node.fail("pads \(a.pads) need one non-negative [before, after] per axis of \(formatShape(ins[0].shape))")
        }
        if a.mode == .reflect {
            for (d, p) in zip(ins[0].shape, a.pads) where p[0] >= d || p[1] >= d {
                throw node.fail("reflect padding \(p) must be smaller than the axis size \(d)")
            }
        }
        return [TensorType(zip(ins[0].shape, a.pads).map { $0 + $1[0] + $1[1] }, ins[0].elementType)]
    }
}
