import Foundation

/// What can be read cheaply about a `Lambda` layer's Python function from its config, without
/// running Python: the function's name and the file it was defined in.
///
/// - Keras 3: `function` is `{"class_name": "function", "config": "res_crop", "module": …}` for a
///   named function, or `{"class_name": "__lambda__", "config": {"code": <base64 marshal>}}`.
/// - Keras 1/2: `function` is the name (with `function_type: "function"` and `module`) or
///   `[<base64 marshal>, defaults, closure]` (`function_type: "lambda"`).
///
/// Marshalled code objects are not decoded: the names are picked from the marshal stream's
/// strings (the source file name, then the function name), which works for CPython 2.7–3.13.
public struct KerasLambdaInfo: Hashable, Sendable, CustomStringConvertible {
    /// The Python function's name (`res_crop`, `<lambda>` for an anonymous lambda), if visible.
    public var functionName: String?
    /// The Python module of a named function (`__main__`, `builtins`), if recorded.
    public var module: String?
    /// The source file the code was compiled from (`make_model.py`, `<stdin>`), if visible.
    public var sourceFile: String?
    /// Whether the function is marshalled bytecode (a lambda or closure) rather than a name.
    public var isBytecode: Bool
    /// The base64 marshal text when `isBytecode` (for a later bytecode-recovery hook).
    public var bytecodeBase64: String?

    /// Reads the info of a `Lambda` layer; nil for other classes.
    public init?(layer: KerasLayerConfig) {
        guard layer.className == "Lambda" else { return nil }
        let f = layer.config["function"]
        functionName = nil; module = layer.config["module"]?.string; sourceFile = nil
        isBytecode = false; bytecodeBase64 = nil
        if let s = f?.string {
            if layer.config["function_type"]?.string == "lambda" { decode(s) } else { functionName = s }
        } else if let a = f?.array, let code = a.first?.string {
            decode(code)
        } else if let o = f {
            if let name = o["config"]?.string {
                functionName = name; module = o["module"]?.string ?? module
            } else if let code = o["config"]?["code"]?.string {
                decode(code)
            }
        }
    }

    private mutating func decode(_ base64: String) {
        isBytecode = true
        bytecodeBase64 = base64
        let cleaned = base64.filter { !$0.isWhitespace }
        let bytes: [UInt8]
        if let data = Data(base64Encoded: cleaned) {
            bytes = Array(data)
        } else if base64.unicodeScalars.allSatisfy({ $0.value < 256 }) {
            // Keras 1 stored the marshal bytes as Latin-1 characters, not base64.
            bytes = base64.unicodeScalars.map { UInt8($0.value) }
            bytecodeBase64 = Data(bytes).base64EncodedString()
        } else {
            return
        }
        let names = KerasLambdaInfo.marshalNames(bytes)
        sourceFile = names.file
        functionName = names.function
    }

    /// Finds the source file name and the following function name among the strings of a
    /// marshalled code object.
    static func marshalNames(_ b: [UInt8]) -> (file: String?, function: String?) {
        struct Str { var start: Int; var end: Int; var text: String }
        var strs: [Str] = []
        func printable(_ s: ArraySlice<UInt8>) -> Bool { s.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        var i = 0
        while i < b.count {
            let t = b[i] & 0x7F
            if t == UInt8(ascii: "z") || t == UInt8(ascii: "Z"), i + 1 < b.count {
                let n = Int(b[i + 1])
                if n > 0, i + 2 + n <= b.count, printable(b[(i + 2)..<(i + 2 + n)]) {
                    strs.append(Str(start: i, end: i + 2 + n, text: String(decoding: b[(i + 2)..<(i + 2 + n)], as: UTF8.self)))
                }
            } else if [UInt8(ascii: "s"), UInt8(ascii: "t"), UInt8(ascii: "u"), UInt8(ascii: "a"), UInt8(ascii: "A")].contains(t),
                      i + 5 <= b.count {
                let n = Int(b[i + 1]) | Int(b[i + 2]) << 8 | Int(b[i + 3]) << 16 | Int(b[i + 4]) << 24
                if n > 0, n < 4096, i + 5 + n <= b.count, printable(b[(i + 5)..<(i + 5 + n)]) {
                    strs.append(Str(start: i, end: i + 5 + n, text: String(decoding: b[(i + 5)..<(i + 5 + n)], as: UTF8.self)))
                }
            }
            i += 1
        }
        func isFile(_ s: String) -> Bool {
            s.hasSuffix(".py") || (s.hasPrefix("<") && s.hasSuffix(">") && s != "<lambda>" && s != "<module>"
                && !s.hasPrefix("<genexpr") && !s.hasPrefix("<listcomp"))
        }
        guard let fi = strs.firstIndex(where: { isFile($0.text) }) else { return (nil, nil) }
        let file = strs[fi].text
        // The function name is the string that starts right after the file name (CPython 3),
        // possibly after a back-reference ('r' + 4 bytes) in CPython 2 streams.
        let end = strs[fi].end
        if let next = strs.first(where: { $0.start == end }) ?? strs.first(where: { $0.start > end && $0.start <= end + 5 }) {
            return (file, next.text)
        }
        return (file, nil)
    }

    /// "function res_crop (defined in make_model.py)", "an anonymous lambda (…)", or "function ?".
    public var description: String {
        var s: String
        if let f = functionName {
            s = f == "<lambda>" ? "an anonymous Python lambda" : "Python function \(f)"
        } else {
            s = "a Python function whose name is not recorded"
        }
        var whence: [String] = []
        if let file = sourceFile { whence.append("defined in \(file)") }
        if let m = module, m != "builtins", !isBytecode { whence.append("module \(m)") }
        if isBytecode { whence.append("stored as marshalled bytecode") }
        if !whence.isEmpty { s += " (" + whence.joined(separator: ", ") + ")" }
        return s
    }
}
