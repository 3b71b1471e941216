/// One attribute value of an op in the explicit, versioned graph encoding of `.mlbundle` files
/// (docs/BUNDLE_FORMAT.md): JSON numbers, strings, booleans, arrays and objects. Each op's
/// definition (`OpDefinition.encodeAttributes` / `decodeOp`) names its attributes and their
/// types, so renaming a Swift case or property never changes a file.
public indirect enum AttributeValue: Hashable, Sendable {
    case int(Int)
    case float(Float)
    case string(String)
    case bool(Bool)
    case list([AttributeValue])
    case object([String: AttributeValue])
    case null

    public static func ints(_ v: [Int]) -> AttributeValue { .list(v.map { .int($0) }) }
    public static func floats(_ v: [Float]) -> AttributeValue { .list(v.map { .float($0) }) }
    public static func intPairs(_ v: [[Int]]) -> AttributeValue { .list(v.map { .ints($0) }) }

    /// A short description of the value's type for messages.
    public var typeName: String {
        switch self {
        case .int: return "integer"
        case .float: return "number"
        case .string: return "string"
        case .bool: return "boolean"
        case .list: return "array"
        case .object: return "object"
        case .null: return "null"
        }
    }
}

/// Reads the named attributes of one op while decoding it, with typed errors naming the op,
/// the attribute, and the expected and found types. Values are range-checked afterwards by the
/// op's `checkAttributes` (the graph is inferred after decoding).
public struct AttributeReader {
    /// The op kind being decoded (for messages).
    public let kind: OpKind
    /// The attributes as stored.
    public let values: [String: AttributeValue]

    public init(kind: OpKind, values: [String: AttributeValue]) { self.kind = kind; self.values = values }

    /// The error for attribute `name` holding `found` where `expected` was needed.
    public func mismatch(_ name: String, expected: String, found: AttributeValue?) -> GraphError {
        GraphError.invalidAttribute(op: kind.rawValue, attribute: name, expected: expected,
                                    found: found.map { $0.typeName } ?? "nothing")
    }

    public func value(_ name: String) throws -> AttributeValue {
        guard let v = values[name] else { throw mismatch(name, expected: "a value", found: nil) }
        return v
    }

    public func int(_ name: String) throws -> Int {
        switch values[name] {
        case let .int(v)?: return v
        case let .float(f)? where f.rounded() == f && abs(f) < 1e15: return Int(f)
        case let v: throw mismatch(name, expected: "an integer", found: v)
        }
    }

    public func float(_ name: String) throws -> Float {
        switch values[name] {
        case let .float(v)?: return v
        case let .int(v)?: return Float(v)
        case let .string(s)?:  // non-finite floats are written as strings ("nan", "inf", "-inf")
            guard let f = AttributeValue.nonFinite(s) else { throw mismatch(name, expected: "a number", found: .string(s)) }
            return f
        case let v: throw mismatch(name, expected: "a number", found: v)
        }
    }

    public func string(_ name: String) throws -> String {
        guard case let .string(v)? = values[name] else { throw mismatch(name, expected: "a string", found: values[name]) }
        return v
    }

    public func bool(_ name: String) throws -> Bool {
        guard case let .bool(v)? = values[name] else { throw mismatch(name, expected: "a boolean", found: values[name]) }
        return v
    }

    public func ints(_ name: String) throws -> [Int] {
        guard case let .list(items)? = values[name] else { throw mismatch(name, expected: "an array of integers", found: values[name]) }
        return try items.map { item in
            let sub = AttributeReader(kind: kind, values: ["item": item])
            do { return try sub.int("item") } catch { throw mismatch(name, expected: "an array of integers", found: item) }
        }
    }

    public func floats(_ name: String) throws -> [Float] {
        guard case let .list(items)? = values[name] else { throw mismatch(name, expected: "an array of numbers", found: values[name]) }
        return try items.map { item in
            let sub = AttributeReader(kind: kind, values: ["item": item])
            do { return try sub.float("item") } catch { throw mismatch(name, expected: "an array of numbers", found: item) }
        }
    }

    public func intPairs(_ name: String) throws -> [[Int]] {
        guard case let .list(items)? = values[name] else { throw mismatch(name, expected: "an array of integer arrays", found: values[name]) }
        return try items.map { item in try AttributeReader(kind: kind, values: [name: item]).ints(name) }
    }

    /// A nested object, read with its own reader.
    public func object(_ name: String) throws -> AttributeReader {
        guard case let .object(v)? = values[name] else { throw mismatch(name, expected: "an object", found: values[name]) }
        return AttributeReader(kind: kind, values: v)
    }

    /// Whether attribute `name` is present and not null.
    public func has(_ name: String) -> Bool {
        if let v = values[name], v != .null { return true }
        return false
    }

    /// A string attribute that must be one of `T`'s raw values.
    public func enumeration<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type) throws -> T where T.RawValue == String {
        let s = try string(name)
        guard let v = T(rawValue: s) else {
            throw mismatch(name, expected: "one of " + T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "), found: .string(s))
        }
        return v
    }
}

extension AttributeValue {
    /// A float attribute; non-finite values become the strings "nan", "inf", "-inf" (JSON has no
    /// literal for them).
    public static func number(_ f: Float) -> AttributeValue {
        if f.isNaN { return .string("nan") }
        if f.isInfinite { return .string(f > 0 ? "inf" : "-inf") }
        return .float(f)
    }

    static func nonFinite(_ s: String) -> Float? {
        switch s {
        case "nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        default: return nil
        }
    }
}

/// JSON form of attribute values (the `.mlbundle` model section, `Fixtures/ops/*/case.json`):
/// integers and floats are JSON numbers (a float as its shortest decimal form that reads back to
/// the same float32), booleans, strings, arrays, objects and null as themselves. Reading tries
/// boolean, integer, number, string, array, object in that order, so `2` reads as `.int(2)` and
/// `2.5` as `.float(2.5)`; `AttributeReader.float` accepts both.
extension AttributeValue: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null; return }
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let i = try? c.decode(Int.self) {
            // "-0" reads as the integer 0; keep the float's sign (weights' scales and biases).
            if i == 0, let d = try? c.decode(Double.self), d.sign == .minus { self = .float(-0.0); return }
            self = .int(i); return
        }
        if let d = try? c.decode(Double.self) {
            guard let f = Float(exactly: d) ?? (abs(d) <= Double(Float.greatestFiniteMagnitude) ? Float(d) : nil) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "number \(d) is outside the float32 range")
            }
            self = .float(f); return
        }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let l = try? c.decode([AttributeValue].self) { self = .list(l); return }
        if let o = try? c.decode([String: AttributeValue].self) { self = .object(o); return }
        throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an attribute value")
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .int(v): try c.encode(v)
        case let .float(v):
            if v.isFinite { try c.encode(v) } else { try c.encode(AttributeValue.number(v)) }
        case let .string(v): try c.encode(v)
        case let .bool(v): try c.encode(v)
        case let .list(v): try c.encode(v)
        case let .object(v): try c.encode(v)
        case .null: try c.encodeNil()
        }
    }
}

extension OpKind {
    /// Decodes an op of this kind from its stored attributes (`OpDefinition.decodeOp`).
    /// - Throws: `GraphError.invalidAttribute`.
    public func decodeOp(_ attributes: [String: AttributeValue]) throws -> Op {
        try definition.decodeOp(from: AttributeReader(kind: self, values: attributes))
    }
}

extension Op {
    /// The op's attributes by stable name (`OpDefinition.encodeAttributes`).
    public var attributes: [String: AttributeValue] { definition.encodeAttributes(of: self) }
}
