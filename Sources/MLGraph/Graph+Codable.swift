import Foundation

/// Where a constant's bytes live inside a container (e.g. the weight section of an `.mlbundle`).
public struct WeightLocation: Codable, Hashable, Sendable {
    /// Byte offset from the start of the container's weight section.
    public var offset: Int
    public var byteCount: Int
    public init(offset: Int, byteCount: Int) { self.offset = offset; self.byteCount = byteCount }
}

/// Receives constants while a graph is encoded and returns where their bytes were put.
/// Install one in `JSONEncoder.userInfo[.constantArchiver]`; without it, bytes are inlined (base64).
public protocol ConstantArchiver: AnyObject {
    func archive(_ tensor: ConstantTensor) throws -> WeightLocation
}

/// Provides the bytes of constants while a graph is decoded (e.g. slices of a mapped file).
/// Install one in `JSONDecoder.userInfo[.constantUnarchiver]`.
public protocol ConstantUnarchiver: AnyObject {
    /// - Throws: when the location lies outside the container.
    func storage(at location: WeightLocation) throws -> ByteStorage
}

extension CodingUserInfoKey {
    public static let constantArchiver = CodingUserInfoKey(rawValue: "mlconv.constantArchiver")!
    public static let constantUnarchiver = CodingUserInfoKey(rawValue: "mlconv.constantUnarchiver")!
    /// Set to `GraphEncoding.legacy` to decode the format-1.0 layout (ops and weight encodings as
    /// Swift's synthesized enum `Codable`). Absent: the explicit layout of bundle format 2.
    public static let graphEncoding = CodingUserInfoKey(rawValue: "mlconv.graphEncoding")!
}

/// Layouts of the graph JSON (docs/BUNDLE_FORMAT.md §5).
public enum GraphEncoding: Sendable {
    /// Format 1.x: each op as Swift's synthesized enum `Codable` form
    /// (`{"conv2d": {"_0": {…}}}`), weight encodings likewise. Read only.
    case legacy
    /// Format 2.x: `"op": "<OpKind raw value>"` and `"attributes"` as each op's definition names
    /// them (`OpDefinition.encodeAttributes`); weight encodings as `{"kind": …}` objects.
    case explicit

    static func of(_ userInfo: [CodingUserInfoKey: Any]) -> GraphEncoding {
        (userInfo[.graphEncoding] as? GraphEncoding) ?? .explicit
    }
}

extension WeightEncoding {
    /// The explicit (format 2) form: {"kind": "float32" | "float16"} or
    /// {"kind": "linear", "bits", "axis", "scale", "bias"} or {"kind": "lookupTable", "bits", "table"};
    /// format 2.1 adds {"kind": "blockwise", "bits", "signed", "blocks", "zeroPoint"},
    /// {"kind": "palettized", "bits", "blocks"} and {"kind": "sparse", "nonzeroCount", "values": {…}}.
    public var attributeValue: AttributeValue {
        switch self {
        case .float32: return .object(["kind": .string("float32")])
        case .float16: return .object(["kind": .string("float16")])
        case let .linear(q):
            return .object(["kind": .string("linear"), "bits": .int(q.bits), "axis": .int(q.axis),
                            "scale": .list(q.scale.map { .number($0) }), "bias": .list(q.bias.map { .number($0) })])
        case let .lookupTable(q):
            return .object(["kind": .string("lookupTable"), "bits": .int(q.bits), "table": .list(q.table.map { .number($0) })])
        case let .blockwise(q):
            return .object(["kind": .string("blockwise"), "bits": .int(q.bits), "signed": .bool(q.signed), "blocks": .ints(q.blocks),
                            "zeroPoint": .bool(q.hasZeroPoint)])
        case let .palettized(q):
            return .object(["kind": .string("palettized"), "bits": .int(q.bits), "blocks": .ints(q.blocks)])
        case let .sparse(s):
            return .object(["kind": .string("sparse"), "nonzeroCount": .int(s.nonzeroCount), "values": s.values.attributeValue])
        }
    }

    /// Decodes the explicit form. - Throws: `GraphError.invalidAttribute`.
    public init(attributeValue v: AttributeValue) throws {
        let a = try AttributeReader(kind: .identity, values: ["encoding": v]).object("encoding")
        switch try a.string("kind") {
        case "float32": self = .float32
        case "float16": self = .float16
        case "linear":
            self = .linear(LinearQuantization(bits: try a.int("bits"), axis: try a.int("axis"), scale: try a.floats("scale"), bias: try a.floats("bias")))
        case "lookupTable": self = .lookupTable(LookupTableQuantization(bits: try a.int("bits"), table: try a.floats("table")))
        // MARK: compressed ML program weights (format 2.1)
        case "blockwise":
            self = .blockwise(BlockwiseQuantization(bits: try a.int("bits"), signed: try a.bool("signed"), blocks: try a.ints("blocks"),
                                                    hasZeroPoint: try a.bool("zeroPoint")))
        case "palettized": self = .palettized(PalettizedQuantization(bits: try a.int("bits"), blocks: try a.ints("blocks")))
        case "sparse":
            let inner = try WeightEncoding(attributeValue: try a.value("values"))
            if case .sparse = inner {
                throw GraphError.invalidAttribute(op: "constant", attribute: "encoding.values", expected: "float32, float16, blockwise or palettized", found: "\"sparse\"")
            }
            self = .sparse(SparseEncoding(nonzeroCount: try a.int("nonzeroCount"), values: inner))
        case let other:
            throw GraphError.invalidAttribute(op: "constant", attribute: "encoding", expected: "float32, float16, linear, lookupTable, blockwise, palettized or sparse", found: "\"\(other)\"")
        }
    }

    /// Decodes the encoding stored under `key` in the layout `userInfo` selects.
    static func decode<K: CodingKey>(from c: KeyedDecodingContainer<K>, forKey key: K, userInfo: [CodingUserInfoKey: Any]) throws -> WeightEncoding {
        switch GraphEncoding.of(userInfo) {
        case .legacy: return try c.decode(WeightEncoding.self, forKey: key)
        case .explicit: return try WeightEncoding(attributeValue: try c.decode(AttributeValue.self, forKey: key))
        }
    }
}

/// A constant as the bundle's model JSON describes it, before its bytes are attached: what a
/// reader checks (shape, encoding, location) before building a `ConstantTensor`.
public struct ConstantHeader: Decodable {
    public var shape: [Int]
    public var encoding: WeightEncoding
    public var location: WeightLocation?
    private enum CodingKeys: String, CodingKey { case shape, encoding, location }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        shape = try c.decode([Int].self, forKey: .shape)
        encoding = try WeightEncoding.decode(from: c, forKey: .encoding, userInfo: decoder.userInfo)
        location = try c.decodeIfPresent(WeightLocation.self, forKey: .location)
    }
}

extension ConstantTensor: Codable {
    private enum CodingKeys: String, CodingKey { case shape, encoding, location, bytes }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shape, forKey: .shape)
        try c.encode(encoding.attributeValue, forKey: .encoding)
        if let archiver = encoder.userInfo[.constantArchiver] as? ConstantArchiver {
            try c.encode(try archiver.archive(self), forKey: .location)
        } else {
            try c.encode(Data(UnsafeRawBufferPointer(start: storage.baseAddress, count: encodedByteCount)), forKey: .bytes)
        }
    }

    public convenience init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let shape = try c.decode([Int].self, forKey: .shape)
        let encoding = try WeightEncoding.decode(from: c, forKey: .encoding, userInfo: decoder.userInfo)
        let storage: ByteStorage
        if let loc = try c.decodeIfPresent(WeightLocation.self, forKey: .location) {
            guard let unarchiver = decoder.userInfo[.constantUnarchiver] as? ConstantUnarchiver else {
                throw GraphError.invalidConstant("constant refers to external weights but no weight source was given")
            }
            storage = try unarchiver.storage(at: loc)
        } else {
            let data = try c.decode(Data.self, forKey: .bytes)
            storage = data.withUnsafeBytes { ByteStorage(copying: $0) }
        }
        try self.init(shape: shape, encoding: encoding, storage: storage)
    }
}

extension Node: Codable {
    private enum CodingKeys: String, CodingKey { case name, op, attributes, inputs, outputs, weights, blocks }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let op: Op
        switch GraphEncoding.of(decoder.userInfo) {
        case .legacy:
            op = try c.decode(Op.self, forKey: .op)
        case .explicit:
            let name = try c.decode(String.self, forKey: .op)
            guard let kind = OpKind(rawValue: name) else {
                throw GraphError.invalidAttribute(op: name, attribute: "op", expected: "an op this mlconv knows (mlconv ops)",
                                                  found: "\"\(name)\"")
            }
            op = try kind.decodeOp(try c.decodeIfPresent([String: AttributeValue].self, forKey: .attributes) ?? [:])
        }
        self.init(name: try c.decode(String.self, forKey: .name), op: op,
                  inputs: try c.decode([String].self, forKey: .inputs), outputs: try c.decode([String].self, forKey: .outputs),
                  weights: try c.decodeIfPresent([String: ConstantTensor].self, forKey: .weights) ?? [:],
                  blocks: try c.decodeIfPresent([Block].self, forKey: .blocks) ?? [])
    }
    /// Writes the explicit layout (bundle format 2).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(op.kind.rawValue, forKey: .op)
        try c.encode(op.attributes, forKey: .attributes)
        try c.encode(inputs, forKey: .inputs)
        try c.encode(outputs, forKey: .outputs)
        if !weights.isEmpty {
            // Sorted keys: deterministic archive order.
            var w = c.nestedContainer(keyedBy: AnyKey.self, forKey: .weights)
            for k in weights.keys.sorted() { try w.encode(weights[k]!, forKey: AnyKey(k)) }
        }
        // Nested blocks (control flow): absent when empty, so other nodes encode as before.
        if !blocks.isEmpty { try c.encode(blocks, forKey: .blocks) }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ s: String) { stringValue = s }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

extension Graph: Codable {
    private enum CodingKeys: String, CodingKey { case inputs, outputs, nodes, tensorTypes, description }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(inputs: try c.decode([ValueInfo].self, forKey: .inputs), outputs: try c.decode([String].self, forKey: .outputs),
                  nodes: try c.decode([Node].self, forKey: .nodes),
                  tensorTypes: try c.decode([String: TensorType].self, forKey: .tensorTypes),
                  description: try c.decode(ModelDescription.self, forKey: .description))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(inputs, forKey: .inputs)
        try c.encode(outputs, forKey: .outputs)
        try c.encode(nodes, forKey: .nodes)
        try c.encode(tensorTypes, forKey: .tensorTypes)
        try c.encode(description, forKey: .description)
    }
}
