/// A command-line usage error: printed with the command's usage, exit status 2.
public struct UsageError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Declares the options of one command: flags without values, options with one value
/// (repeatable ones collect every occurrence), and how many positional arguments it takes.
struct OptionSpec {
    var flags: Set<String> = []
    var single: Set<String> = []
    var repeatable: Set<String> = []
    /// Short aliases, e.g. "-o" → "--output".
    var aliases: [String: String] = [:]
    var positionalRange: ClosedRange<Int> = 0...0
    // MARK: flags with an optional value
    /// Flags that also take a value when the next argument (or `=value`) is one of the listed
    /// words, e.g. `--linear int8` of `quantize`; the flag is set either way and the value is
    /// read with `ParsedArguments.value(flag)`.
    var optionalValues: [String: Set<String>] = [:]
}

/// Parsed arguments of one command.
struct ParsedArguments {
    var positional: [String] = []
    var flags: Set<String> = []
    var values: [String: [String]] = [:]

    func has(_ flag: String) -> Bool { flags.contains(flag) }
    func value(_ option: String) -> String? { values[option]?.last }
    func all(_ option: String) -> [String] { values[option] ?? [] }

    func int(_ option: String) throws -> Int? {
        guard let v = value(option) else { return nil }
        guard let i = Int(v) else { throw UsageError("\(option) takes a whole number, found '\(v)'") }
        return i
    }

    func float(_ option: String) throws -> Float? {
        guard let v = value(option) else { return nil }
        guard let f = Float(v) else { throw UsageError("\(option) takes a number, found '\(v)'") }
        return f
    }

    func required(_ option: String) throws -> String {
        guard let v = value(option) else { throw UsageError("missing required option \(option)") }
        return v
    }

    /// Parses `NAME=VALUE` pairs of a repeatable option.
    func pairs(_ option: String) throws -> [(String, String)] {
        try all(option).map { s in
            guard let eq = s.firstIndex(of: "="), eq != s.startIndex else {
                throw UsageError("\(option) takes NAME=VALUE, found '\(s)'")
            }
            return (String(s[..<eq]), String(s[s.index(after: eq)...]))
        }
    }
}

/// Parses `args` (without the command name) against `spec`. Accepts `--opt value` and `--opt=value`.
func parseArguments(_ args: [String], _ spec: OptionSpec) throws -> ParsedArguments {
    var out = ParsedArguments()
    var i = 0
    var onlyPositional = false
    while i < args.count {
        var a = args[i]
        i += 1
        if onlyPositional || !a.hasPrefix("-") || a == "-" {
            out.positional.append(a)
            continue
        }
        if a == "--" { onlyPositional = true; continue }
        var inlineValue: String? = nil
        if a.hasPrefix("--"), let eq = a.firstIndex(of: "=") {
            inlineValue = String(a[a.index(after: eq)...])
            a = String(a[..<eq])
        }
        if let long = spec.aliases[a] { a = long }
        if spec.flags.contains(a), let words = spec.optionalValues[a] {
            out.flags.insert(a)
            if let inlineValue {
                guard words.contains(inlineValue) else { throw UsageError("\(a) takes one of \(words.sorted().joined(separator: ", ")), found '\(inlineValue)'") }
                out.values[a, default: []].append(inlineValue)
            } else if i < args.count, words.contains(args[i]) {
                out.values[a, default: []].append(args[i])
                i += 1
            }
        } else if spec.flags.contains(a) {
            guard inlineValue == nil else { throw UsageError("\(a) takes no value") }
            out.flags.insert(a)
        } else if spec.single.contains(a) || spec.repeatable.contains(a) {
            let v: String
            if let inlineValue { v = inlineValue } else {
                guard i < args.count else { throw UsageError("\(a) needs a value") }
                v = args[i]; i += 1
            }
            if spec.single.contains(a), out.values[a] != nil { throw UsageError("\(a) given twice") }
            out.values[a, default: []].append(v)
        } else {
            throw UsageError("unknown option \(a)")
        }
    }
    guard spec.positionalRange.contains(out.positional.count) else {
        let r = spec.positionalRange
        let want = r.lowerBound == r.upperBound ? "\(r.lowerBound)" : "\(r.lowerBound)–\(r.upperBound)"
        throw UsageError("expected \(want) file argument(s), found \(out.positional.count)"
            + (out.positional.isEmpty ? "" : ": " + out.positional.joined(separator: " ")))
    }
    return out
}
