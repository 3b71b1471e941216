// A bounds-checked reader for CPython's `marshal` format, enough to read the code object of a
// Python function as Keras stores it in a `Lambda` layer config. Nothing is executed: the reader
// only builds plain Swift values. Every length is checked against the bytes that remain before
// anything is allocated, nesting is capped, and every failure is a thrown `MarshalFailure`.
//
// Format notes (CPython `Python/marshal.c`, `r_object`):
// - one type byte per object; from CPython 3.4 (marshal version 3) the high bit `FLAG_REF`
//   (0x80) asks the reader to remember the object in a reference table that later `r` (TYPE_REF)
//   objects index. Containers and code objects take their table slot *before* their children
//   are read; singletons (None, True, …) never take one even when flagged.
// - integers are little-endian; lengths are signed 32-bit.
// - CPython 2 has no FLAG_REF; it has `t` (interned str, appended to a string table) and
//   `R` (a reference into that table).
// - the code object's fields differ by version: see `PythonCodeLayout`.

import Foundation

/// One code-object field layout of CPython's marshal format.
enum PythonCodeLayout: String, CaseIterable, Sendable {
    /// CPython 2.3–2.7: argcount, nlocals, stacksize, flags, code, consts, names, varnames,
    /// freevars, cellvars, filename, name, firstlineno, lnotab.
    case python2 = "2.x"
    /// CPython 3.0–3.7: adds kwonlyargcount after argcount.
    case python30to37 = "3.0–3.7"
    /// CPython 3.8–3.10: adds posonlyargcount after argcount (lnotab becomes linetable in 3.10).
    case python38to310 = "3.8–3.10"
    /// CPython 3.11 and later: argcount, posonlyargcount, kwonlyargcount, stacksize, flags, code,
    /// consts, names, localsplusnames, localspluskinds, filename, name, qualname, firstlineno,
    /// linetable, exceptiontable (no nlocals, varnames/freevars/cellvars merged).
    case python311plus = "3.11+"

    /// Whether the stream uses the CPython 2 object dialect (no FLAG_REF; `t`/`R` string table).
    var isPython2: Bool { self == .python2 }
    /// Whether `co_code` is wordcode (2-byte instructions) and so of even length.
    var isWordcode: Bool { self == .python38to310 || self == .python311plus }
}

/// A value read from a marshal stream (the subset of Python objects marshal can hold).
indirect enum MarshalValue: Sendable {
    case none
    case bool(Bool)
    case stopIteration
    case ellipsis
    case int(Int64)
    /// An int too large for `i`: sign and base-2¹⁵ digits, least significant first.
    case long(negative: Bool, digits: [UInt16])
    case float(Double)
    case complex(real: Double, imag: Double)
    case bytes([UInt8])
    case str(String)
    case tuple([MarshalValue])
    case list([MarshalValue])
    /// Key/value pairs in stream order.
    case dict([(MarshalValue, MarshalValue)])
    case set([MarshalValue])
    case frozenset([MarshalValue])
    case slice(MarshalValue, MarshalValue, MarshalValue)
    case code(MarshalCode)

    /// Python's type name, for error messages.
    var typeName: String {
        switch self {
        case .none: return "None"
        case .bool: return "bool"
        case .stopIteration: return "StopIteration"
        case .ellipsis: return "ellipsis"
        case .int, .long: return "int"
        case .float: return "float"
        case .complex: return "complex"
        case .bytes: return "bytes"
        case .str: return "str"
        case .tuple: return "tuple"
        case .list: return "list"
        case .dict: return "dict"
        case .set: return "set"
        case .frozenset: return "frozenset"
        case .slice: return "slice"
        case .code: return "code"
        }
    }
}

/// The fields of a marshalled code object, normalised across layouts.
struct MarshalCode: Sendable {
    var layout: PythonCodeLayout
    var argcount = 0
    var posonlyargcount = 0
    var kwonlyargcount = 0
    var nlocals = 0
    var stacksize = 0
    var flags = 0
    var code: [UInt8] = []
    var consts: [MarshalValue] = []
    var names: [String] = []
    /// co_varnames (before 3.11) or co_localsplusnames (3.11+).
    var varnames: [String] = []
    /// co_localspluskinds (3.11+; empty before).
    var localsKinds: [UInt8] = []
    var freevars: [String] = []
    var cellvars: [String] = []
    var filename = ""
    var name = ""
    var qualname: String?
    var firstlineno = 0
}

/// Why a marshal stream could not be read: the byte offset and a description.
struct MarshalFailure: Error, Sendable {
    var offset: Int
    var reason: String
}

/// What a successful read saw, for the Python version guess.
struct MarshalStreamTraits: Sendable {
    /// Some object carried FLAG_REF (CPython ≥ 3.4).
    var sawReferenceFlag = false
    /// Some object used a marshal-version-4 type (`a A z Z )`, CPython ≥ 3.4).
    var sawVersion4Type = false
    /// Some object was a slice (marshal version 5, CPython ≥ 3.14).
    var sawSlice = false
}

/// Reads one marshalled code object with a given field layout.
struct MarshalReader {
    /// Deepest nesting accepted (CPython allows 2000; Keras functions need a few dozen).
    static let maxDepth = 200

    private let bytes: [UInt8]
    private(set) var position = 0
    let layout: PythonCodeLayout
    private var references: [MarshalValue?] = []
    private var internedStrings: [MarshalValue] = []
    private var depth = 0
    private(set) var traits = MarshalStreamTraits()

    init(bytes: [UInt8], layout: PythonCodeLayout) {
        self.bytes = bytes
        self.layout = layout
    }

    private var remaining: Int { bytes.count - position }

    /// Object types (without FLAG_REF) that CPython enters in the reference table when flagged.
    private static let takesReferenceSlot: [Bool] = {
        var table = [Bool](repeating: false, count: 128)
        for c in "ilIfgxysautAzZ()[{<>c:".utf8 { table[Int(c)] = true }
        return table
    }()

    // MARK: Primitive reads (all bounds-checked)

    private mutating func byte() throws(MarshalFailure) -> UInt8 {
        guard position < bytes.count else {
            throw MarshalFailure(offset: position, reason: "truncated: expected 1 more byte, the data ends here")
        }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func take(_ n: Int, for what: String) throws(MarshalFailure) -> ArraySlice<UInt8> {
        guard n >= 0 else { throw MarshalFailure(offset: position, reason: "negative length \(n) for \(what)") }
        guard n <= remaining else {
            throw MarshalFailure(offset: position,
                                 reason: "truncated: \(what) needs \(n) bytes, only \(remaining) left")
        }
        defer { position += n }
        return bytes[position..<(position + n)]
    }

    private mutating func int32() throws(MarshalFailure) -> Int32 {
        let s = try take(4, for: "a 32-bit integer")
        var v: UInt32 = 0
        for (i, b) in s.enumerated() { v |= UInt32(b) << (8 * UInt32(i)) }
        return Int32(bitPattern: v)
    }

    private mutating func int64() throws(MarshalFailure) -> Int64 {
        let s = try take(8, for: "a 64-bit integer")
        var v: UInt64 = 0
        for (i, b) in s.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        return Int64(bitPattern: v)
    }

    private mutating func binaryDouble() throws(MarshalFailure) -> Double {
        let s = try take(8, for: "a binary float")
        var v: UInt64 = 0
        for (i, b) in s.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        return Double(bitPattern: v)
    }

    /// Old text floats (`f`, `x`): a 1-byte length and the repr text.
    private mutating func textDouble() throws(MarshalFailure) -> Double {
        let start = position
        let n = Int(try byte())
        let text = latin1String(try take(n, for: "a text float"))
        guard let v = Double(text.trimmingCharacters(in: .whitespaces)) else {
            throw MarshalFailure(offset: start, reason: "float text \(quoted(text)) is not a number")
        }
        return v
    }

    /// A signed 32-bit length for `what`, checked to be ≥ 0 and, as each unit takes at least
    /// `unitSize` bytes, to fit in the remaining data.
    private mutating func length(for what: String, unitSize: Int = 1) throws(MarshalFailure) -> Int {
        let at = position
        let n = Int(try int32())
        guard n >= 0 else { throw MarshalFailure(offset: at, reason: "negative \(what) size \(n)") }
        guard n <= remaining / max(unitSize, 1) else {
            throw MarshalFailure(offset: at, reason: "\(what) size \(n) exceeds the \(remaining) bytes left")
        }
        return n
    }

    // MARK: Objects

    /// Reads the whole stream as one code object; fails unless it ends exactly at the end.
    mutating func readTopLevelCode() throws(MarshalFailure) -> MarshalCode {
        guard let first = bytes.first else {
            throw MarshalFailure(offset: 0, reason: "no data")
        }
        guard first == 0x63 || (!layout.isPython2 && first == 0xE3) else {
            throw MarshalFailure(offset: 0, reason: String(format: "first byte 0x%02X is not a code object ('c')", first))
        }
        let value = try readObject(context: "the top-level object")
        guard case let .code(code) = value else {
            throw MarshalFailure(offset: 0, reason: "the top-level object is a \(value.typeName), not a code object")
        }
        guard position == bytes.count else {
            throw MarshalFailure(offset: position,
                                 reason: "\(bytes.count - position) unread bytes after the code object")
        }
        return code
    }

    /// Reads an object that must not be NULL.
    private mutating func readObject(context: String) throws(MarshalFailure) -> MarshalValue {
        let at = position
        guard let v = try readOptionalObject() else {
            throw MarshalFailure(offset: at, reason: "NULL object where \(context) was expected")
        }
        return v
    }

    /// Reads an object; nil is marshal's NULL (`0`), which only ends a dict legitimately.
    private mutating func readOptionalObject() throws(MarshalFailure) -> MarshalValue? {
        let start = position
        let code = try byte()
        depth += 1
        defer { depth -= 1 }
        guard depth <= MarshalReader.maxDepth else {
            throw MarshalFailure(offset: start, reason: "objects nested deeper than \(MarshalReader.maxDepth) levels")
        }
        let flagged: Bool
        let type: UInt8
        if layout.isPython2 {
            flagged = false
            type = code
        } else {
            flagged = code & 0x80 != 0
            type = code & 0x7F
        }

        // Types that take a reference-table slot when flagged; the slot is reserved before any
        // child is read, which is where CPython puts containers and code objects (scalars have
        // no children, so reserving first gives them the same index).
        var slot: Int?
        if flagged && MarshalReader.takesReferenceSlot[Int(type)] {
            traits.sawReferenceFlag = true
            guard references.count < 0x7FFF_FFFE else {
                throw MarshalFailure(offset: start, reason: "reference table too large")
            }
            slot = references.count
            references.append(nil)
        }

        let value: MarshalValue?
        switch type {
        case UInt8(ascii: "0"): value = nil
        case UInt8(ascii: "N"): value = MarshalValue.none
        case UInt8(ascii: "F"): value = .bool(false)
        case UInt8(ascii: "T"): value = .bool(true)
        case UInt8(ascii: "S"): value = .stopIteration
        case UInt8(ascii: "."): value = .ellipsis
        case UInt8(ascii: "i"): value = .int(Int64(try int32()))
        case UInt8(ascii: "I"): value = .int(try int64())
        case UInt8(ascii: "l"): value = try readLong()
        case UInt8(ascii: "f"): value = .float(try textDouble())
        case UInt8(ascii: "g"): value = .float(try binaryDouble())
        case UInt8(ascii: "x"):
            let re = try textDouble()
            value = .complex(real: re, imag: try textDouble())
        case UInt8(ascii: "y"):
            let re = try binaryDouble()
            value = .complex(real: re, imag: try binaryDouble())
        case UInt8(ascii: "s"):
            let n = try length(for: "bytes")
            value = .bytes(Array(try take(n, for: "bytes")))
        case UInt8(ascii: "t") where layout.isPython2:
            // CPython 2 interned str: bytes, remembered for `R`.
            let n = try length(for: "interned string")
            let v = MarshalValue.bytes(Array(try take(n, for: "interned string")))
            internedStrings.append(v)
            value = v
        case UInt8(ascii: "R") where layout.isPython2:
            let at = position
            let i = Int(try int32())
            guard i >= 0, i < internedStrings.count else {
                throw MarshalFailure(offset: at, reason: "string reference \(i) outside the \(internedStrings.count) interned strings")
            }
            value = internedStrings[i]
        case UInt8(ascii: "u"), UInt8(ascii: "t"):
            let n = try length(for: "str")
            value = .str(String(decoding: try take(n, for: "str"), as: UTF8.self))
        case UInt8(ascii: "a"), UInt8(ascii: "A"):
            traits.sawVersion4Type = true
            let n = try length(for: "ASCII str")
            value = .str(latin1String(try take(n, for: "ASCII str")))
        case UInt8(ascii: "z"), UInt8(ascii: "Z"):
            traits.sawVersion4Type = true
            let n = Int(try byte())
            value = .str(latin1String(try take(n, for: "short ASCII str")))
        case UInt8(ascii: "("):
            let n = try length(for: "tuple")
            value = .tuple(try readItems(n, of: "tuple"))
        case UInt8(ascii: ")"):
            traits.sawVersion4Type = true
            let n = Int(try byte())
            value = .tuple(try readItems(n, of: "tuple"))
        case UInt8(ascii: "["):
            let n = try length(for: "list")
            value = .list(try readItems(n, of: "list"))
        case UInt8(ascii: "<"):
            let n = try length(for: "set")
            value = .set(try readItems(n, of: "set"))
        case UInt8(ascii: ">"):
            let n = try length(for: "frozenset")
            value = .frozenset(try readItems(n, of: "frozenset"))
        case UInt8(ascii: "{"):
            var pairs: [(MarshalValue, MarshalValue)] = []
            while true {
                guard let key = try readOptionalObject() else { break }
                let v = try readObject(context: "a dict value")
                pairs.append((key, v))
            }
            value = .dict(pairs)
        case UInt8(ascii: ":") where !layout.isPython2:
            traits.sawSlice = true
            let start = try readObject(context: "a slice start")
            let stop = try readObject(context: "a slice stop")
            value = .slice(start, stop, try readObject(context: "a slice step"))
        case UInt8(ascii: "c"):
            value = .code(try readCode(at: start))
        case UInt8(ascii: "r") where !layout.isPython2:
            let at = position
            let i = Int(try int32())
            guard i >= 0, i < references.count else {
                throw MarshalFailure(offset: at, reason: "reference \(i) outside the \(references.count) remembered objects")
            }
            guard let v = references[i] else {
                throw MarshalFailure(offset: at, reason: "reference \(i) to an object that is still being read")
            }
            value = v
        default:
            let shown = (0x20..<0x7F).contains(code) ? "'\(Character(Unicode.Scalar(code)))'" : String(format: "0x%02X", code)
            throw MarshalFailure(offset: start, reason: "unknown object type \(shown)")
        }
        if let slot {
            guard let value else {
                throw MarshalFailure(offset: start, reason: "NULL object marked for the reference table")
            }
            references[slot] = value
        }
        return value
    }

    private mutating func readItems(_ n: Int, of what: String) throws(MarshalFailure) -> [MarshalValue] {
        var items: [MarshalValue] = []
        items.reserveCapacity(min(n, remaining))
        for _ in 0..<n { items.append(try readObject(context: "a \(what) item")) }
        return items
    }

    /// `l`: a signed 32-bit digit count, then base-2¹⁵ digits (16-bit, least significant first).
    private mutating func readLong() throws(MarshalFailure) -> MarshalValue {
        let at = position
        let n = Int(try int32())  // Int is 64-bit: -Int32.min does not overflow
        let count = abs(n)
        guard count <= remaining / 2 else {
            throw MarshalFailure(offset: at, reason: "int with \(count) digits exceeds the \(remaining) bytes left")
        }
        var digits: [UInt16] = []
        digits.reserveCapacity(count)
        for i in 0..<count {
            let dAt = position
            let s = try take(2, for: "an int digit")
            let d = UInt16(s[s.startIndex]) | UInt16(s[s.startIndex + 1]) << 8
            guard d < 0x8000 else { throw MarshalFailure(offset: dAt, reason: "int digit \(d) out of range") }
            if i == count - 1 && d == 0 {
                throw MarshalFailure(offset: dAt, reason: "unnormalized int (top digit is 0)")
            }
            digits.append(d)
        }
        if count <= 4 {  // ≤ 60 bits: fits Int64
            var v: Int64 = 0
            for d in digits.reversed() { v = v << 15 | Int64(d) }
            return .int(n < 0 ? -v : v)
        }
        return .long(negative: n < 0, digits: digits)
    }

    // MARK: Code objects

    private mutating func field(_ name: String) throws(MarshalFailure) -> Int {
        let at = position
        let v = Int(try int32())
        guard v >= 0 else { throw MarshalFailure(offset: at, reason: "\(name) is negative (\(v))") }
        return v
    }

    private mutating func bytesField(_ name: String) throws(MarshalFailure) -> [UInt8] {
        let at = position
        let v = try readObject(context: name)
        guard case let .bytes(b) = v else {
            throw MarshalFailure(offset: at, reason: "\(name): expected bytes, found \(v.typeName)")
        }
        return b
    }

    private func text(_ v: MarshalValue) -> String? {
        switch v {
        case let .str(s): return s
        case let .bytes(b) where layout.isPython2: return String(decoding: b, as: UTF8.self)
        default: return nil
        }
    }

    private mutating func stringField(_ name: String) throws(MarshalFailure) -> String {
        let at = position
        let v = try readObject(context: name)
        guard let s = text(v) else {
            throw MarshalFailure(offset: at, reason: "\(name): expected str, found \(v.typeName)")
        }
        return s
    }

    private mutating func stringTupleField(_ name: String) throws(MarshalFailure) -> [String] {
        let at = position
        let v = try readObject(context: name)
        guard case let .tuple(items) = v else {
            throw MarshalFailure(offset: at, reason: "\(name): expected a tuple of str, found \(v.typeName)")
        }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard let s = text(item) else {
                throw MarshalFailure(offset: at, reason: "\(name)[\(i)]: expected str, found \(item.typeName)")
            }
            out.append(s)
        }
        return out
    }

    private mutating func readCode(at start: Int) throws(MarshalFailure) -> MarshalCode {
        var c = MarshalCode(layout: layout)
        c.argcount = try field("co_argcount")
        switch layout {
        case .python2:
            c.nlocals = try field("co_nlocals")
        case .python30to37:
            c.kwonlyargcount = try field("co_kwonlyargcount")
            c.nlocals = try field("co_nlocals")
        case .python38to310:
            c.posonlyargcount = try field("co_posonlyargcount")
            c.kwonlyargcount = try field("co_kwonlyargcount")
            c.nlocals = try field("co_nlocals")
        case .python311plus:
            c.posonlyargcount = try field("co_posonlyargcount")
            c.kwonlyargcount = try field("co_kwonlyargcount")
        }
        c.stacksize = try field("co_stacksize")
        c.flags = try field("co_flags")
        for (name, v) in [("co_argcount", c.argcount), ("co_posonlyargcount", c.posonlyargcount),
                          ("co_kwonlyargcount", c.kwonlyargcount), ("co_nlocals", c.nlocals)] where v > 0xFFFF {
            throw MarshalFailure(offset: start, reason: "\(name) \(v) is implausibly large")
        }
        guard c.posonlyargcount <= c.argcount else {
            throw MarshalFailure(offset: start, reason: "co_posonlyargcount \(c.posonlyargcount) exceeds co_argcount \(c.argcount)")
        }
        let codeAt = position
        c.code = try bytesField("co_code")
        if layout.isWordcode && c.code.count % 2 != 0 {
            throw MarshalFailure(offset: codeAt, reason: "co_code has odd length \(c.code.count) (wordcode expected)")
        }
        let constsAt = position
        let consts = try readObject(context: "co_consts")
        guard case let .tuple(items) = consts else {
            throw MarshalFailure(offset: constsAt, reason: "co_consts: expected a tuple, found \(consts.typeName)")
        }
        c.consts = items
        c.names = try stringTupleField("co_names")
        let varsAt = position
        if layout == .python311plus {
            c.varnames = try stringTupleField("co_localsplusnames")
            let kindsAt = position
            c.localsKinds = try bytesField("co_localspluskinds")
            guard c.localsKinds.count == c.varnames.count else {
                throw MarshalFailure(offset: kindsAt, reason: "co_localspluskinds has \(c.localsKinds.count) entries for \(c.varnames.count) names")
            }
            c.freevars = zip(c.varnames, c.localsKinds).filter { $0.1 & 0x80 != 0 }.map(\.0)
            c.cellvars = zip(c.varnames, c.localsKinds).filter { $0.1 & 0x40 != 0 }.map(\.0)
        } else {
            c.varnames = try stringTupleField("co_varnames")
            c.freevars = try stringTupleField("co_freevars")
            c.cellvars = try stringTupleField("co_cellvars")
        }
        guard c.argcount + c.kwonlyargcount <= c.varnames.count else {
            throw MarshalFailure(offset: varsAt, reason: "\(c.argcount + c.kwonlyargcount) arguments but only \(c.varnames.count) local names")
        }
        c.filename = try stringField("co_filename")
        c.name = try stringField("co_name")
        if layout == .python311plus { c.qualname = try stringField("co_qualname") }
        c.firstlineno = try field("co_firstlineno")
        _ = try bytesField(layout == .python311plus ? "co_linetable" : "co_lnotab")
        if layout == .python311plus { _ = try bytesField("co_exceptiontable") }
        return c
    }
}

/// Decodes bytes as Latin-1 (one scalar per byte), as CPython does for its ASCII string types.
func latin1String<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    var s = String.UnicodeScalarView()
    for b in bytes { s.append(Unicode.Scalar(b)) }
    return String(s)
}

private func quoted(_ s: String) -> String { "\"" + s + "\"" }
