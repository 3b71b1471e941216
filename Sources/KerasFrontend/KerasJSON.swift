import Foundation

/// A JSON value as Keras writes it (`model.to_json()`, the `model_config` HDF5 attribute).
///
/// Keras configs come from Python's `json.dumps`, which writes the non-standard literals `NaN`,
/// `Infinity` and `-Infinity` for special floats; `KerasJSON.parse` accepts them (Foundation's
/// `JSONSerialization` does not), so this small value type and parser are used instead.
/// Object keys keep no order (Keras configs never depend on key order).
public enum KerasJSON: Hashable, Sendable, CustomStringConvertible {
    /// `null` (Python None).
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// Any number (integers are exact up to 2⁵³), including NaN and ±Infinity.
    case number(Double)
    /// A string.
    case string(String)
    /// A list.
    case array([KerasJSON])
    /// An object (dictionary).
    case object([String: KerasJSON])

    /// Parses JSON text (UTF-8), accepting `NaN`, `Infinity` and `-Infinity`.
    /// - Throws: `KerasJSONError` giving the byte offset and what was expected.
    public static func parse(_ text: String) throws -> KerasJSON {
        var parser = KerasJSONParser(Array(text.utf8))
        return try parser.parseDocument()
    }

    /// Parses JSON bytes (UTF-8), see `parse(_:)`.
    public static func parse(bytes: [UInt8]) throws -> KerasJSON {
        var parser = KerasJSONParser(bytes)
        return try parser.parseDocument()
    }

    /// The member `key` of an object, nil for other values or a missing key.
    public subscript(key: String) -> KerasJSON? {
        if case let .object(o) = self { return o[key] }
        return nil
    }

    /// The element `index` of an array, nil for other values or an index out of range.
    public subscript(index: Int) -> KerasJSON? {
        if case let .array(a) = self, index >= 0, index < a.count { return a[index] }
        return nil
    }

    /// The string value, nil for other values.
    public var string: String? { if case let .string(s) = self { return s }; return nil }
    /// The number value, nil for other values.
    public var double: Double? { if case let .number(d) = self { return d }; return nil }
    /// The number value when it is integral, nil otherwise.
    public var int: Int? {
        if case let .number(d) = self, d.isFinite, d == d.rounded(), abs(d) < 9.0e15 { return Int(d) }
        return nil
    }
    /// The Boolean value, nil for other values.
    public var bool: Bool? { if case let .bool(b) = self { return b }; return nil }
    /// The elements of an array, nil for other values.
    public var array: [KerasJSON]? { if case let .array(a) = self { return a }; return nil }
    /// The members of an object, nil for other values.
    public var object: [String: KerasJSON]? { if case let .object(o) = self { return o }; return nil }
    /// True for `null`.
    public var isNull: Bool { if case .null = self { return true }; return false }

    /// Compact JSON text (object keys sorted, special floats as Python writes them).
    public var description: String {
        switch self {
        case .null: return "null"
        case let .bool(b): return b ? "true" : "false"
        case let .number(d):
            if d.isNaN { return "NaN" }
            if d.isInfinite { return d > 0 ? "Infinity" : "-Infinity" }
            if d == d.rounded(), abs(d) < 1e15 { return String(Int(d)) }
            return String(d)
        case let .string(s): return KerasJSON.quote(s)
        case let .array(a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        case let .object(o):
            return "{" + o.keys.sorted().map { KerasJSON.quote($0) + ": " + o[$0]!.description }
                .joined(separator: ", ") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}

/// A JSON syntax error: the byte offset and what the parser expected there.
public struct KerasJSONError: Error, CustomStringConvertible, Sendable {
    /// Byte offset of the failure in the text.
    public var offset: Int
    /// What was expected at `offset`.
    public var message: String
    /// "invalid JSON at byte N: expected …, found …".
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

struct KerasJSONParser {
    let b: [UInt8]
    var i = 0
    var depth = 0

    init(_ bytes: [UInt8]) {
        b = bytes
        // Skip a UTF-8 byte-order mark.
        if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
    }

    mutating func parseDocument() throws -> KerasJSON {
        let v = try value()
        skipSpace()
        // Tolerate trailing NUL bytes (fixed-length HDF5 strings are NUL padded).
        while i < b.count, b[i] == 0 { i += 1 }
        guard i == b.count else { throw error("end of text after the top-level value") }
        return v
    }

    func error(_ m: String) -> KerasJSONError {
        let near = i < b.count ? ", found '\(String(decoding: b[i..<min(b.count, i + 20)], as: UTF8.self))'" : ", found end of text"
        return KerasJSONError(offset: i, message: m + near)
    }

    mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func literal(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard i + u.count <= b.count, Array(b[i..<i + u.count]) == u else { return false }
        i += u.count
        return true
    }

    mutating func value() throws -> KerasJSON {
        skipSpace()
        guard i < b.count else { throw error("a value") }
        switch b[i] {
        case UInt8(ascii: "{"):
            depth += 1; defer { depth -= 1 }
            guard depth < 512 else { throw error("less nesting (over 512 levels)") }
            i += 1
            var o: [String: KerasJSON] = [:]
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            while true {
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw error("a string key") }
                let k = try string()
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw error("':'") }
                i += 1
                o[k] = try value()
                skipSpace()
                guard i < b.count else { throw error("',' or '}'") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
                throw error("',' or '}'")
            }
        case UInt8(ascii: "["):
            depth += 1; defer { depth -= 1 }
            guard depth < 512 else { throw error("less nesting (over 512 levels)") }
            i += 1
            var a: [KerasJSON] = []
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            while true {
                a.append(try value())
                skipSpace()
                guard i < b.count else { throw error("',' or ']'") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
                throw error("',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            if literal("true") { return .bool(true) }
        case UInt8(ascii: "f"):
            if literal("false") { return .bool(false) }
        case UInt8(ascii: "n"):
            if literal("null") { return .null }
        case UInt8(ascii: "N"):
            if literal("NaN") { return .number(.nan) }
        case UInt8(ascii: "I"):
            if literal("Infinity") { return .number(.infinity) }
        default:
            if b[i] == UInt8(ascii: "-") || (b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9")) {
                return try number()
            }
        }
        throw error("a JSON value")
    }

    mutating func number() throws -> KerasJSON {
        let start = i
        if b[i] == UInt8(ascii: "-") {
            i += 1
            if literal("Infinity") { return .number(-.infinity) }
        }
        while i < b.count, let c = Optional(b[i]),
              (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "e")
                || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
            i += 1
        }
        let text = String(decoding: b[start..<i], as: UTF8.self)
        guard let d = Double(text) else { i = start; throw error("a number") }
        return .number(d)
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= b.count, let v = UInt32(String(decoding: b[i..<i + 4], as: UTF8.self), radix: 16) else {
            throw error("four hex digits after \\u")
        }
        i += 4
        return v
    }

    mutating func string() throws -> String {
        i += 1  // opening quote
        var bytes: [UInt8] = []
        while true {
            guard i < b.count else { throw error("a closing '\"'") }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c == UInt8(ascii: "\\") {
                i += 1
                guard i < b.count else { throw error("an escape character") }
                let e = b[i]; i += 1
                switch e {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if code >= 0xD800, code < 0xDC00, i + 6 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") {
                        i += 2
                        let low = try hex4()
                        if low >= 0xDC00, low < 0xE000 { code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00) }
                    }
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("a valid escape")
                }
                continue
            }
            bytes.append(c); i += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
