// Recovers a Keras `Lambda` layer's Python function (its name, and for marshalled bytecode a
// readable summary) from the layer's serialized config, without running Python and without
// executing anything stored in the config.
//
// The forms of `config["function"]` Keras has written:
// - Keras 1 / 2 / tf.keras, `function_type: "lambda"`: `[code, defaults, closure]` (or just
//   `code`) where `code` is base64 of `marshal.dumps(func.__code__)`; Keras 1 and Keras ≤ 2.0
//   stored the marshal bytes as text (`bytes.decode("raw_unicode_escape")`) instead of base64.
// - Keras 1 / 2 / tf.keras, `function_type: "function"`: the function's name, with `module`.
// - Keras 3: `{"class_name": "function", "config": "res_crop", "module": …, "registered_name": …}`
//   for a named function (a registered one is `"package>name"`), or
//   `{"class_name": "__lambda__", "config": {"code": …, "defaults": …, "closure": …}}` for a
//   lambda (the generic Keras 3 serializer writes `{"value": [code, defaults, closure]}`).

import Foundation

/// Why a Lambda layer's function could not be recovered.
public enum LambdaDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The config has no `function` entry.
    case missingFunction
    /// A config entry has an unexpected JSON type: field path, what was expected, what was found.
    case unexpectedFieldType(field: String, expected: String, found: String)
    /// `function_type` (or a Keras 3 `class_name`) names a form this decoder does not know.
    case unsupportedFunctionForm(String)
    /// The stored code text is neither base64 nor the Keras 1 `raw_unicode_escape` text.
    case undecodableCodeText(String)
    /// The marshal data is not a CPython code object in any known layout: for each layout tried
    /// ("3.11+", "3.8–3.10", "3.0–3.7", "2.x"), where and why it failed.
    case unrecognizedCodeLayout(attempts: [String])

    /// One line naming what was malformed.
    public var description: String {
        switch self {
        case .missingFunction:
            return "Lambda config has no 'function' entry"
        case let .unexpectedFieldType(field, expected, found):
            return "Lambda config '\(field)' should be \(expected) but is \(found)"
        case let .unsupportedFunctionForm(form):
            return "Lambda function stored in an unsupported form: \(form)"
        case let .undecodableCodeText(why):
            return "Lambda function code is not decodable: \(why)"
        case let .unrecognizedCodeLayout(attempts):
            return "Lambda function bytecode is not a marshalled CPython 2.x–3.14 code object ("
                + attempts.joined(separator: "; ") + ")"
        }
    }
}

/// A Keras 3 reference to a Lambda function.
public enum Keras3Function: Hashable, Sendable {
    /// A named function saved by reference (`class_name: "function"`). `name` is the Python
    /// name; `registeredName` is the `register_keras_serializable` key ("MyPkg>scale") when the
    /// stored name was one.
    case function(module: String?, name: String, registeredName: String?)
    /// A lambda saved as marshalled bytecode (`class_name: "__lambda__"`).
    case lambda(PythonCodeSummary)
}

/// What was recovered about a Lambda layer's Python function.
public struct LambdaFunctionInfo: Hashable, Sendable, CustomStringConvertible {
    /// Where the function came from in the config.
    public enum Source: Hashable, Sendable {
        /// Marshalled bytecode (Keras 1 / 2 / tf.keras `function_type: "lambda"`), decoded.
        case marshal(PythonCodeSummary)
        /// Saved by name (`function_type: "function"`): the Python module, if recorded, and name.
        case moduleFunction(module: String?, name: String)
        /// A Keras 3 function reference or lambda.
        case keras3(Keras3Function)
    }

    /// The Python function's name: `res_crop`, `rescale_output`, or `<lambda>` for a lambda.
    public var functionName: String
    /// How the function was stored, with what could be read from it.
    public var source: Source
    /// Readable renderings of the stored default argument values (`["1.0"]`), if any were stored.
    public var defaults: [String]?
    /// Readable renderings of the stored closure cell values (`["True"]`), if any were stored.
    public var closure: [String]?

    /// The decoded code, when the function was stored as bytecode.
    public var code: PythonCodeSummary? {
        switch source {
        case let .marshal(s), let .keras3(.lambda(s)): return s
        case .moduleFunction, .keras3(.function): return nil
        }
    }

    /// One line for error messages, e.g.
    /// "Python function res_crop(x) from make_real_style_transfer.py:31, CPython 3.11–3.12
    /// (marshalled bytecode); constants 2, -2",
    /// "anonymous Python lambda (x) from <ipython-input-8-88bc5b7c396b>:2, CPython 3.6–3.7
    /// (marshalled bytecode); uses K, mean; constants 1, ('axis', 'keepdims'); closes over keepdims=True",
    /// "Python function numpy.absolute (saved by name)",
    /// "Python function res_crop (Keras 3 reference, module builtins)".
    public var summary: String {
        switch source {
        case let .marshal(s):
            return LambdaFunctionInfo.describe(s, how: "marshalled bytecode", defaults: defaults, closure: closure)
        case let .keras3(.lambda(s)):
            return LambdaFunctionInfo.describe(s, how: "Keras 3 __lambda__ bytecode", defaults: defaults, closure: closure)
        case let .moduleFunction(module, name):
            let full = module.map { "\($0).\(name)" } ?? name
            return "Python function \(full) (saved by name)"
        case let .keras3(.function(module, name, registered)):
            var s = "Python function \(name) (Keras 3 reference"
            if let registered { s += ", registered as \(registered)" }
            if let module { s += ", module \(module)" }
            return s + ")"
        }
    }

    /// Same as `summary`.
    public var description: String { summary }

    private static func describe(_ s: PythonCodeSummary, how: String, defaults: [String]?, closure: [String]?) -> String {
        var text = (s.isLambda ? "anonymous Python lambda " : "Python function \(s.name)") + s.signature
        text += " from \(s.filename.isEmpty ? "?" : s.filename):\(s.firstLineNumber)"
        text += ", CPython \(s.pythonVersionGuess) (\(how))"
        if !s.names.isEmpty { text += "; uses " + PythonCodeSummary.abbreviate(s.names, max: 6) }
        let consts = s.constants.filter { $0 != "None" && !$0.hasPrefix("<code ") }
        if !consts.isEmpty {
            text += "; constants " + PythonCodeSummary.abbreviate(consts.map { PythonCodeSummary.clip($0, 40) }, max: 6)
        }
        if let defaults, !defaults.isEmpty { text += "; defaults " + PythonCodeSummary.abbreviate(defaults, max: 4) }
        if !s.freeVariables.isEmpty {
            var c = "; closes over " + s.freeVariables.joined(separator: ", ")
            if let closure, closure.count == s.freeVariables.count {
                c = "; closes over " + zip(s.freeVariables, closure).map { "\($0)=\(PythonCodeSummary.clip($1, 30))" }
                    .joined(separator: ", ")
            }
            text += c
        }
        return text
    }
}

/// Recovers Lambda layer functions from Keras configs.
///
/// ```swift
/// let info = try LambdaFunctionDecoder.decode(config: layerConfig, kerasVersion: "2.21.0")
/// info.functionName   // "res_crop"
/// info.summary        // "Python function res_crop(x) from make_real_style_transfer.py:31, CPython 3.11–3.12 …"
/// ```
public enum LambdaFunctionDecoder {
    /// Decodes the function of a `Lambda` layer.
    ///
    /// - Parameters:
    ///   - config: the layer's `config` object (the layer object itself, with `class_name:
    ///     "Lambda"` and a `config` inside, is accepted too), as `JSONSerialization` gives it.
    ///   - kerasVersion: the file's `keras_version` attribute ("2.0.9", "2.2.4-tf", "3.15.1"),
    ///     used to try the likely CPython layouts first; nil when unknown.
    /// - Throws: `LambdaDecodingError` naming what is malformed; never traps on any input.
    public static func decode(config: [String: Any], kerasVersion: String?) throws(LambdaDecodingError) -> LambdaFunctionInfo {
        var config = config
        if config["class_name"] as? String == "Lambda", let inner = config["config"] as? [String: Any] {
            config = inner
        }
        guard let function = config["function"], !(function is NSNull) else { throw .missingFunction }
        let functionType = config["function_type"] as? String
        let module = config["module"] as? String

        if let list = function as? [Any] {
            // [code, defaults, closure]
            guard let code = list.first as? String else {
                throw .unexpectedFieldType(field: "function[0]", expected: "a string of marshalled code",
                                           found: jsonTypeName(list.first))
            }
            let summary = try decodeSerializedCode(code, kerasVersion: kerasVersion)
            return LambdaFunctionInfo(functionName: summary.name, source: .marshal(summary),
                                      defaults: list.count > 1 ? reprList(list[1]) : nil,
                                      closure: list.count > 2 ? reprList(list[2]) : nil)
        }
        if let text = function as? String {
            switch functionType {
            case "function":
                return LambdaFunctionInfo(functionName: text, source: .moduleFunction(module: module, name: text))
            case "lambda":
                let summary = try decodeSerializedCode(text, kerasVersion: kerasVersion)
                return LambdaFunctionInfo(functionName: summary.name, source: .marshal(summary))
            case nil:
                // No function_type: bytecode if it decodes, else a plain name.
                do {
                    let summary = try decodeSerializedCode(text, kerasVersion: kerasVersion)
                    return LambdaFunctionInfo(functionName: summary.name, source: .marshal(summary))
                } catch {
                    if isIdentifierPath(text) {
                        return LambdaFunctionInfo(functionName: text, source: .moduleFunction(module: module, name: text))
                    }
                    throw error
                }
            case let other?:
                throw .unsupportedFunctionForm("function_type \"\(other)\"")
            }
        }
        if let object = function as? [String: Any] {
            return try decodeObject(object, legacyModule: functionType == nil ? nil : module,
                                    isLegacy: functionType != nil, kerasVersion: kerasVersion)
        }
        throw .unexpectedFieldType(field: "function", expected: "a string, a list or an object",
                                   found: jsonTypeName(function))
    }

    /// Decodes the function of a `Lambda` layer given its config as JSON text.
    public static func decode(configJSON: String, kerasVersion: String?) throws(LambdaDecodingError) -> LambdaFunctionInfo {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(configJSON.utf8), options: [.fragmentsAllowed])
        } catch {
            throw .unexpectedFieldType(field: "config", expected: "JSON", found: "text that does not parse")
        }
        guard let object = parsed as? [String: Any] else {
            throw .unexpectedFieldType(field: "config", expected: "a JSON object", found: jsonTypeName(parsed))
        }
        return try decode(config: object, kerasVersion: kerasVersion)
    }

    /// Decodes raw `marshal.dumps(code)` bytes into a summary.
    ///
    /// The CPython version is not stored, so each known code-object layout is tried (the likely
    /// ones for `kerasVersion` first) and the first that reads the whole data consistently wins.
    public static func decodeMarshalledCode(_ bytes: [UInt8], kerasVersion: String? = nil) throws(LambdaDecodingError) -> PythonCodeSummary {
        var attempts: [String] = []
        for layout in layoutOrder(firstByte: bytes.first, kerasVersion: kerasVersion) {
            var reader = MarshalReader(bytes: bytes, layout: layout)
            do {
                let code = try reader.readTopLevelCode()
                return PythonCodeSummary(code, traits: reader.traits)
            } catch {
                attempts.append("\(layout.rawValue): at byte \(error.offset), \(error.reason)")
            }
        }
        throw .unrecognizedCodeLayout(attempts: attempts)
    }

    /// The marshal bytes of a stored code string: base64 (whitespace ignored), or else the
    /// Keras 1 / early Keras 2 text form, `marshal_bytes.decode("raw_unicode_escape")`, which is
    /// reversed here (characters up to U+00FF are bytes, others become `\uXXXX` / `\UXXXXXXXX`).
    public static func marshalBytes(fromStoredCode text: String) throws(LambdaDecodingError) -> [UInt8] {
        let compact = text.filter { !$0.isWhitespace }
        if !compact.isEmpty, compact.count % 4 == 0,
           compact.unicodeScalars.allSatisfy({ isBase64Scalar($0) }),
           let data = Data(base64Encoded: compact) {
            let bytes = [UInt8](data)
            // A code object starts with 'c' (0x63), flagged (0xE3) in CPython ≥ 3.4.
            if let first = bytes.first, first & 0x7F == 0x63 { return bytes }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.unicodeScalars.count)
        for u in text.unicodeScalars {
            if u.value <= 0xFF {
                bytes.append(UInt8(u.value))
            } else if u.value <= 0xFFFF {
                bytes += Array(String(format: "\\u%04x", u.value).utf8)
            } else {
                bytes += Array(String(format: "\\U%08x", u.value).utf8)
            }
        }
        guard let first = bytes.first, first & 0x7F == 0x63 else {
            let head = text.prefix(12)
            throw .undecodableCodeText("neither base64 of a code object nor marshal text (starts \(String(reflecting: String(head))))")
        }
        return bytes
    }

    // MARK: - Internals

    private static func decodeSerializedCode(_ text: String, kerasVersion: String?) throws(LambdaDecodingError) -> PythonCodeSummary {
        try decodeMarshalledCode(try marshalBytes(fromStoredCode: text), kerasVersion: kerasVersion)
    }

    private static func decodeObject(_ object: [String: Any], legacyModule: String?, isLegacy: Bool,
                                     kerasVersion: String?) throws(LambdaDecodingError) -> LambdaFunctionInfo {
        let className = object["class_name"] as? String
        switch className {
        case "__lambda__":
            guard let inner = object["config"] as? [String: Any] else {
                throw .unexpectedFieldType(field: "function.config", expected: "an object",
                                           found: jsonTypeName(object["config"]))
            }
            var code: Any? = inner["code"]
            var defaults: Any? = inner["defaults"]
            var closure: Any? = inner["closure"]
            if code == nil, let value = inner["value"] as? [Any] {  // generic serializer
                code = value.first
                defaults = value.count > 1 ? value[1] : nil
                closure = value.count > 2 ? value[2] : nil
            }
            guard let codeText = code as? String else {
                throw .unexpectedFieldType(field: "function.config.code", expected: "a string of marshalled code",
                                           found: jsonTypeName(code))
            }
            let summary = try decodeSerializedCode(codeText, kerasVersion: kerasVersion)
            return LambdaFunctionInfo(functionName: summary.name, source: .keras3(.lambda(summary)),
                                      defaults: reprList(defaults), closure: reprList(closure))
        case "function", nil:
            guard let stored = object["config"] as? String, !stored.isEmpty else {
                throw .unexpectedFieldType(field: "function.config", expected: "the function name",
                                           found: jsonTypeName(object["config"]))
            }
            let module = object["module"] as? String ?? legacyModule
            var name = stored
            var registered: String?
            if let gt = stored.lastIndex(of: ">") {  // "package>name" from register_keras_serializable
                name = String(stored[stored.index(after: gt)...])
                registered = stored
            } else if let r = object["registered_name"] as? String, r.contains(">") {
                registered = r
            }
            if isLegacy {
                return LambdaFunctionInfo(functionName: name, source: .moduleFunction(module: module, name: name))
            }
            return LambdaFunctionInfo(functionName: name,
                                      source: .keras3(.function(module: module, name: name, registeredName: registered)))
        case let other?:
            throw .unsupportedFunctionForm("Keras 3 class_name \"\(other)\"")
        }
    }

    /// Layouts to try: by the Keras version when known (Keras 1 and 2.0–2.3 ran on CPython 2.7–3.7,
    /// later ones on 3.6+), else by FLAG_REF on the first byte (set only by CPython ≥ 3.4).
    static func layoutOrder(firstByte: UInt8?, kerasVersion: String?) -> [PythonCodeLayout] {
        let newestFirst: [PythonCodeLayout] = [.python311plus, .python38to310, .python30to37, .python2]
        let oldestFirst: [PythonCodeLayout] = [.python2, .python30to37, .python38to310, .python311plus]
        if let v = kerasVersion {
            let parts = v.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            let major = parts.first ?? 0, minor = parts.count > 1 ? parts[1] : 0
            if major == 1 { return oldestFirst }
            if major == 2 && minor <= 3 { return [.python30to37, .python2, .python38to310, .python311plus] }
            if major >= 2 { return newestFirst }
        }
        if let b = firstByte, b & 0x80 != 0 { return newestFirst }
        return oldestFirst
    }

    private static func isBase64Scalar(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2B, 0x2F, 0x3D: return true
        default: return false
        }
    }

    /// Whether `s` looks like a (dotted) Python identifier.
    private static func isIdentifierPath(_ s: String) -> Bool {
        !s.isEmpty && s.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            guard let f = part.unicodeScalars.first, f == "_" || f.properties.isXIDStart else { return false }
            return part.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isXIDContinue }
        }
    }

    /// JSON type names for error messages.
    static func jsonTypeName(_ v: Any?) -> String {
        switch v {
        case nil: return "missing"
        case is NSNull: return "null"
        case is String: return "a string"
        case is [Any]: return "a list"
        case is [String: Any]: return "an object"
        case is Bool: return "a boolean"
        case is NSNumber, is Int, is Double: return "a number"
        default: return "a \(type(of: v!))"
        }
    }

    /// Python-style reprs of a JSON list (`defaults` / `closure`); nil for null or absent.
    static func reprList(_ v: Any?) -> [String]? {
        guard let list = v as? [Any] else { return nil }
        return list.map { jsonRepr($0, depth: 0) }
    }

    /// A Python-style rendering of a JSON value as Keras wrote it (numbers, strings, lists…).
    static func jsonRepr(_ v: Any, depth: Int) -> String {
        guard depth < 20 else { return "..." }
        switch v {
        case is NSNull: return "None"
        case let s as String: return PythonRepr.strRepr(s)
        case let b as Bool where !(type(of: v) is NSNumber.Type): return b ? "True" : "False"
        case let i as Int where !(type(of: v) is NSNumber.Type): return String(i)
        case let d as Double where !(type(of: v) is NSNumber.Type): return PythonRepr.floatRepr(d)
        case let n as NSNumber:
            if isBoolean(n) { return n.boolValue ? "True" : "False" }
            if isIntegerNumber(n) { return n.stringValue }
            return PythonRepr.floatRepr(n.doubleValue)
        case let list as [Any]:
            return "[" + list.prefix(50).map { jsonRepr($0, depth: depth + 1) }.joined(separator: ", ")
                + (list.count > 50 ? ", ...]" : "]")
        case let object as [String: Any]:
            return "{" + object.keys.sorted().prefix(50).map { "\(PythonRepr.strRepr($0)): \(jsonRepr(object[$0]!, depth: depth + 1))" }
                .joined(separator: ", ") + "}"
        default:
            return String(describing: v)
        }
    }

    private static func isBoolean(_ n: NSNumber) -> Bool {
        // JSONSerialization gives true/false as boolean NSNumbers, objCType "c" (it makes no
        // other char-typed numbers).
        String(cString: n.objCType) == "c"
    }

    private static func isIntegerNumber(_ n: NSNumber) -> Bool {
        ["C", "s", "S", "i", "I", "l", "L", "q", "Q"].contains(String(cString: n.objCType))
    }
}
