// A readable summary of a marshalled Python code object: what a Lambda layer's function is
// called, its arguments, the global names and constants it uses, and which CPython wrote it.

import Foundation

/// What can be read from a marshalled Python code object (`marshal.dumps(func.__code__)`)
/// without running Python.
///
/// ```swift
/// let s = try LambdaFunctionDecoder.decodeMarshalledCode(bytes)
/// s.name               // "res_crop"
/// s.argumentNames      // ["x"]
/// s.names              // ["tf", "pad"]: globals and attributes the body uses
/// s.constants          // ["None", "2", "-2"]
/// s.pythonVersionGuess // "3.11–3.12"
/// ```
public struct PythonCodeSummary: Hashable, Sendable, CustomStringConvertible {
    /// `co_name`: the function's name, `<lambda>` for a lambda expression.
    public var name: String
    /// `co_qualname` (CPython 3.11+ only): the dotted path, e.g. `make_scaler.<locals>.<lambda>`.
    public var qualname: String?
    /// The parameters in signature order: positional ones (positional-only first), then
    /// `*args` (with its star), keyword-only ones, then `**kwargs` (with its stars). A bare `*`
    /// separator is not listed; see `signature`.
    public var argumentNames: [String]
    /// How many of the leading `argumentNames` are positional-only (`co_posonlyargcount`).
    public var positionalOnlyCount: Int
    /// How many keyword-only parameters there are (`co_kwonlyargcount`).
    public var keywordOnlyCount: Int
    /// `co_names`: global names and attribute names the code uses, in first-use order
    /// (`["tf", "image", "resize"]` for `lambda x: tf.image.resize(x, …)`).
    public var names: [String]
    /// `co_consts` rendered like Python's `repr` (`None`, `2`, `127.5`, `'bilinear'`, `(64, 64)`,
    /// `frozenset({1, 2})`), except nested code objects, shown as `<code NAME>`. Each entry is
    /// capped at `PythonCodeSummary.constantReprLimit` characters (then ends in `...`).
    public var constants: [String]
    /// Variables the function closes over (`co_freevars`): a Keras closure's captured values
    /// are stored next to the code in the layer config.
    public var freeVariables: [String]
    /// Code objects among the constants: nested functions, lambdas and (before CPython 3.12)
    /// comprehensions.
    public var nestedCode: [PythonCodeSummary]
    /// `co_filename`: the file (or `<ipython-input-…>`, `<stdin>`) the function was compiled from.
    public var filename: String
    /// `co_firstlineno`: the line the definition starts on in `filename`.
    public var firstLineNumber: Int
    /// `co_flags` (CO_VARARGS 0x04, CO_VARKEYWORDS 0x08, CO_NESTED 0x10, CO_GENERATOR 0x20, …).
    public var flags: Int
    /// The CPython version(s) whose marshal layout and bytecode match: a layout range such as
    /// `"2.x"`, `"3.4–3.5"`, `"3.6–3.7"`, `"3.8–3.10"`, `"3.11+"`, narrowed by the bytecode where
    /// it tells (`"3.11"`, `"3.12"`, `"3.11–3.12"`, `"3.13"`, `"3.14+"`). The version is not
    /// stored in the data, so this is a guess.
    public var pythonVersionGuess: String

    /// The longest rendering of one constant in `constants`.
    public static let constantReprLimit = 4096

    /// Whether the code is a `lambda` expression rather than a `def`.
    public var isLambda: Bool { name == "<lambda>" }

    /// The parameter list as Python would print it, without defaults: `(x)`,
    /// `(a, b, /, c, *rest, d, **options)`, `(x, *, axis)`.
    public var signature: String {
        // Python names never start with "*", so the prefixes mark *args / **kwargs.
        var parts: [String] = []
        var positional = argumentNames.filter { !$0.hasPrefix("*") }
        let kwonly = Array(positional.suffix(min(keywordOnlyCount, positional.count)))
        positional.removeLast(kwonly.count)
        for (i, p) in positional.enumerated() {
            parts.append(p)
            if i + 1 == positionalOnlyCount { parts.append("/") }
        }
        if let star = argumentNames.first(where: { $0.hasPrefix("*") && !$0.hasPrefix("**") }) {
            parts.append(star)
        } else if !kwonly.isEmpty {
            parts.append("*")
        }
        parts += kwonly
        if let kw = argumentNames.first(where: { $0.hasPrefix("**") }) { parts.append(kw) }
        return "(" + parts.joined(separator: ", ") + ")"
    }

    /// One line, e.g. "lambda(x) from model.py:1, CPython 3.11; uses tf, image, resize; constants
    /// (64, 64), 'bilinear', ('method',)" (`None` and nested code are left out of the constants).
    public var description: String {
        var s = (isLambda ? "lambda" : name) + signature
        s += " from \(filename.isEmpty ? "?" : filename):\(firstLineNumber), CPython \(pythonVersionGuess)"
        if !names.isEmpty { s += "; uses " + PythonCodeSummary.abbreviate(names, max: 6) }
        let shown = constants.filter { $0 != "None" && !$0.hasPrefix("<code ") }
        if !shown.isEmpty {
            s += "; constants " + PythonCodeSummary.abbreviate(shown.map { PythonCodeSummary.clip($0, 40) }, max: 6)
        }
        if !freeVariables.isEmpty { s += "; closes over " + freeVariables.joined(separator: ", ") }
        return s
    }

    static func abbreviate(_ items: [String], max: Int) -> String {
        items.count <= max ? items.joined(separator: ", ")
            : items.prefix(max).joined(separator: ", ") + ", … (\(items.count) in all)"
    }

    static func clip(_ s: String, _ n: Int) -> String {
        s.count <= n ? s : String(s.prefix(n - 3)) + "..."
    }
}

// MARK: - Building summaries

extension PythonCodeSummary {
    /// Summarises a code object read with `traits` (which the version guess also uses).
    init(_ code: MarshalCode, traits: MarshalStreamTraits, depth: Int = 0) {
        name = code.name
        qualname = code.qualname
        positionalOnlyCount = code.posonlyargcount
        keywordOnlyCount = code.kwonlyargcount
        names = code.names
        filename = code.filename
        firstLineNumber = code.firstlineno
        flags = code.flags
        freeVariables = code.freevars
        constants = code.consts.map { PythonRepr.repr($0, limit: PythonCodeSummary.constantReprLimit) }
        argumentNames = PythonCodeSummary.arguments(of: code)
        pythonVersionGuess = PythonVersionGuess.guess(code, traits: traits)
        var nested: [PythonCodeSummary] = []
        if depth < MarshalReader.maxDepth {
            for case let .code(inner) in code.consts {
                nested.append(PythonCodeSummary(inner, traits: traits, depth: depth + 1))
            }
        }
        nestedCode = nested
    }

    /// Parameters in signature order from co_varnames (co_localsplusnames in 3.11+, whose first
    /// entries are the parameters too): argcount positional, kwonlyargcount keyword-only, then
    /// the `*args` and `**kwargs` names when CO_VARARGS / CO_VARKEYWORDS are set.
    static func arguments(of code: MarshalCode) -> [String] {
        let v = code.varnames
        let n = min(code.argcount, v.count)
        let k = min(code.kwonlyargcount, v.count - n)
        var out = Array(v[0..<n])
        var i = n + k
        if code.flags & 0x04 != 0, i < v.count {
            out.append("*" + v[i])
            i += 1
        }
        out += v[n..<(n + k)]
        if code.flags & 0x08 != 0, i < v.count { out.append("**" + v[i]) }
        return out
    }
}

// MARK: - Python version guess

/// Narrows the CPython version from the code layout, the marshal features used and a few
/// version-specific opcodes.
enum PythonVersionGuess {
    static func guess(_ code: MarshalCode, traits: MarshalStreamTraits) -> String {
        switch code.layout {
        case .python2:
            return "2.x"
        case .python30to37:
            // Before 3.6 instructions are 1 or 3 bytes and the code ends with RETURN_VALUE (83);
            // from 3.6 (wordcode) it ends with RETURN_VALUE and its zero argument byte.
            let b = code.code
            let atLeast34 = traits.sawReferenceFlag || traits.sawVersion4Type
            if b.last == 83 { return atLeast34 ? "3.4–3.5" : "3.0–3.5" }
            if b.count >= 2, b.count % 2 == 0, b[b.count - 2] == 83, b.last == 0 { return "3.6–3.7" }
            return atLeast34 ? "3.4–3.7" : "3.0–3.7"
        case .python38to310:
            return "3.8–3.10"
        case .python311plus:
            if traits.sawSlice { return "3.14+" }
            return guess311plus(code)
        }
    }

    /// CPython 3.11 and 3.12 start a function with RESUME = 151, after at most a few set-up
    /// instructions (MAKE_CELL 135, COPY_FREE_VARS 149, and RETURN_GENERATOR 75 + POP_TOP 1 for
    /// generators and coroutines); 3.13 uses RESUME = 149 (set-up: MAKE_CELL 94,
    /// COPY_FREE_VARS 62, RETURN_GENERATOR 35, POP_TOP 32).
    /// Between 3.11 and 3.12: LOAD_METHOD (160) and PRECALL (166) exist only in 3.11;
    /// RETURN_CONST (121), LOAD_SUPER_ATTR (141) and LOAD_FAST_AND_CLEAR (143) only in 3.12.
    /// Inline cache words (opcode 0) are zero in marshalled code, so a plain 2-byte walk sees
    /// every real opcode.
    static func guess311plus(_ code: MarshalCode) -> String {
        let ops = stride(from: 0, to: code.code.count - 1, by: 2).lazy.map { code.code[$0] }.filter { $0 != 0 }
        func resumes(_ resume: UInt8, after setup: Set<UInt8>) -> Bool {
            ops.prefix(8).first { !setup.contains($0) } == resume
        }
        if resumes(151, after: [135, 149, 75, 1]) {
            var all = Set<UInt8>()
            collectOpcodes(code, into: &all, depth: 0)
            let is311 = !all.isDisjoint(with: [160, 166])
            let is312 = !all.isDisjoint(with: [121, 141, 143])
            if is311 && !is312 { return "3.11" }
            if is312 && !is311 { return "3.12" }
            return "3.11–3.12"
        }
        if resumes(149, after: [94, 62, 35, 32]) { return "3.13" }
        return "3.11+"
    }

    private static func collectOpcodes(_ code: MarshalCode, into ops: inout Set<UInt8>, depth: Int) {
        for i in stride(from: 0, to: code.code.count - 1, by: 2) where code.code[i] != 0 {
            ops.insert(code.code[i])
        }
        guard depth < MarshalReader.maxDepth else { return }
        for case let .code(inner) in code.consts { collectOpcodes(inner, into: &ops, depth: depth + 1) }
    }
}

// MARK: - Python repr

/// Renders marshal values the way Python's `repr` does (code objects as `<code NAME>`).
enum PythonRepr {
    /// `repr(v)`, cut at `limit` characters (then ending in `...`). Every step of the walk
    /// writes at least one character, so shared sub-objects cannot make it blow up.
    static func repr(_ v: MarshalValue, limit: Int) -> String {
        var out = ""
        var budget = limit
        write(v, &out, &budget)
        if budget < 0 {
            out = String(out.prefix(max(limit - 3, 0))) + "..."
        }
        return out
    }

    private static func emit(_ s: String, _ out: inout String, _ budget: inout Int) {
        guard budget >= 0 else { return }
        out += s
        budget -= s.count
    }

    private static func sequence(_ items: [MarshalValue], open: String, close: String, singleComma: Bool,
                                 _ out: inout String, _ budget: inout Int) {
        emit(open, &out, &budget)
        for (i, item) in items.enumerated() {
            guard budget >= 0 else { return }
            if i > 0 { emit(", ", &out, &budget) }
            write(item, &out, &budget)
        }
        if singleComma && items.count == 1 { emit(",", &out, &budget) }
        emit(close, &out, &budget)
    }

    private static func write(_ v: MarshalValue, _ out: inout String, _ budget: inout Int) {
        guard budget >= 0 else { return }
        switch v {
        case .none: emit("None", &out, &budget)
        case let .bool(b): emit(b ? "True" : "False", &out, &budget)
        case .stopIteration: emit("StopIteration", &out, &budget)
        case .ellipsis: emit("Ellipsis", &out, &budget)
        case let .int(i): emit(String(i), &out, &budget)
        case let .long(negative, digits): emit(longRepr(negative: negative, digits: digits), &out, &budget)
        case let .float(d): emit(floatRepr(d), &out, &budget)
        case let .complex(re, im): emit(complexRepr(re, im), &out, &budget)
        case let .bytes(b): emit(bytesRepr(b), &out, &budget)
        case let .str(s): emit(strRepr(s), &out, &budget)
        case let .tuple(items): sequence(items, open: "(", close: ")", singleComma: true, &out, &budget)
        case let .list(items): sequence(items, open: "[", close: "]", singleComma: false, &out, &budget)
        case let .set(items):
            if items.isEmpty { emit("set()", &out, &budget) } else {
                sequence(items, open: "{", close: "}", singleComma: false, &out, &budget)
            }
        case let .frozenset(items):
            if items.isEmpty { emit("frozenset()", &out, &budget) } else {
                sequence(items, open: "frozenset({", close: "})", singleComma: false, &out, &budget)
            }
        case let .dict(pairs):
            emit("{", &out, &budget)
            for (i, (k, x)) in pairs.enumerated() {
                guard budget >= 0 else { return }
                if i > 0 { emit(", ", &out, &budget) }
                write(k, &out, &budget)
                emit(": ", &out, &budget)
                write(x, &out, &budget)
            }
            emit("}", &out, &budget)
        case let .slice(a, b, c):
            sequence([a, b, c], open: "slice(", close: ")", singleComma: false, &out, &budget)
        case let .code(code): emit("<code \(code.name)>", &out, &budget)
        }
    }

    /// Decimal text of a base-2¹⁵ integer; very long ones (> 300 digits, ~1350 decimal
    /// digits) are described rather than converted.
    static func longRepr(negative: Bool, digits: [UInt16]) -> String {
        guard digits.count <= 300 else { return "<int of \(digits.count * 15) bits>" }
        var limbs = digits.map { UInt32($0) }  // most significant last
        var groups: [UInt32] = []               // base 10⁴, least significant first
        while !limbs.isEmpty {
            var rem: UInt32 = 0
            for i in stride(from: limbs.count - 1, through: 0, by: -1) {
                let cur = rem << 15 | limbs[i]
                limbs[i] = cur / 10_000
                rem = cur % 10_000
            }
            groups.append(rem)
            while let last = limbs.last, last == 0 { limbs.removeLast() }
        }
        var s = String(groups.last ?? 0)
        for g in groups.dropLast().reversed() {
            let t = String(g)
            s += String(repeating: "0", count: 4 - t.count) + t
        }
        return (negative && s != "0" ? "-" : "") + s
    }

    /// Python's `repr(float)`: shortest round-trip digits, fixed notation for exponents from
    /// -4 to 15, scientific (`1e+16`, `1.234e-05`) otherwise; `inf`, `nan`. With `addDotZero`
    /// false (complex parts) integral values print without `.0`.
    static func floatRepr(_ d: Double, addDotZero: Bool = true) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        // Swift's description gives the same shortest round-trip digits; re-lay them out.
        var text = d.magnitude.description
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...]) ?? 0
            text = String(text[..<e])
        }
        let pointIndex = text.firstIndex(of: ".").map { text.distance(from: text.startIndex, to: $0) } ?? text.count
        var digits = Array(text.filter { $0 != "." })
        var decpt = pointIndex + exponent  // value = 0.digits × 10^decpt
        while let f = digits.first, f == "0" { digits.removeFirst(); decpt -= 1 }
        while let l = digits.last, l == "0" { digits.removeLast() }
        let sign = d.sign == .minus ? "-" : ""
        if digits.isEmpty { return sign + (addDotZero ? "0.0" : "0") }
        let ds = String(digits)
        if decpt <= -4 || decpt > 16 {
            var m = String(ds.prefix(1))
            if ds.count > 1 { m += "." + ds.dropFirst() }
            let e = decpt - 1
            let eText = String(abs(e))
            return sign + m + "e" + (e < 0 ? "-" : "+") + (eText.count < 2 ? "0" : "") + eText
        }
        if decpt <= 0 { return sign + "0." + String(repeating: "0", count: -decpt) + ds }
        if decpt >= ds.count {
            return sign + ds + String(repeating: "0", count: decpt - ds.count) + (addDotZero ? ".0" : "")
        }
        return sign + ds.prefix(decpt) + "." + ds.dropFirst(decpt)
    }

    /// Python's `repr(complex)`: `3j`, `(1+2j)`, `(-1.5-0.25j)`.
    static func complexRepr(_ re: Double, _ im: Double) -> String {
        let imText = floatRepr(im, addDotZero: false)
        if re == 0 && re.sign == .plus { return imText + "j" }
        let signed = imText.hasPrefix("-") ? imText : "+" + imText
        return "(" + floatRepr(re, addDotZero: false) + signed + "j)"
    }

    /// Python's quote choice: single quotes unless the text has `'` and no `"`.
    private static func quote(hasSingle: Bool, hasDouble: Bool) -> Character {
        hasSingle && !hasDouble ? "\"" : "'"
    }

    /// Python's `repr(str)`.
    static func strRepr(_ s: String) -> String {
        let q = quote(hasSingle: s.contains("'"), hasDouble: s.contains("\""))
        var out = String(q)
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default:
                if Character(u) == q {
                    out += "\\" + String(q)
                } else if u.value < 0x20 || u.value == 0x7F {
                    out += String(format: "\\x%02x", u.value)
                } else if u.value < 0x7F || isPrintable(u) {
                    out.unicodeScalars.append(u)
                } else if u.value <= 0xFF {
                    out += String(format: "\\x%02x", u.value)
                } else if u.value <= 0xFFFF {
                    out += String(format: "\\u%04x", u.value)
                } else {
                    out += String(format: "\\U%08x", u.value)
                }
            }
        }
        out.append(q)
        return out
    }

    /// Python's `str.isprintable` for one non-ASCII character: not a control, format,
    /// surrogate, private-use, unassigned, or separator character.
    private static func isPrintable(_ u: Unicode.Scalar) -> Bool {
        switch u.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned,
             .lineSeparator, .paragraphSeparator, .spaceSeparator:
            return false
        default:
            return true
        }
    }

    /// Python's `repr(bytes)`.
    static func bytesRepr(_ b: [UInt8]) -> String {
        let q = quote(hasSingle: b.contains(0x27), hasDouble: b.contains(0x22))
        var out = "b" + String(q)
        for c in b {
            switch c {
            case 0x5C: out += "\\\\"
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            default:
                if c == q.asciiValue {
                    out += "\\" + String(q)
                } else if c < 0x20 || c >= 0x7F {
                    out += String(format: "\\x%02x", c)
                } else {
                    out.unicodeScalars.append(Unicode.Scalar(c))
                }
            }
        }
        out.append(q)
        return out
    }
}
