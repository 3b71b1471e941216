import Diagnostics
import Foundation
import MLGraph

/// A hooks file (`mlconv keras … --hooks hooks.json`): the declarative hooks of docs/HOOKS.md.
///
/// ```json
/// {"hooks": [
///   {"match": "res_crop", "lower": "crop:2,2,2,2"},
///   {"match": "rescale_output",
///    "customLayer": {"className": "RescaleOutputLambda", "description": "(x + 1) * 127.5",
///                    "parameters": {"scale": 127.5, "offset": 127.5}, "weights": false, "outputShape": "same"}},
///   {"class": "ReflectionPadding2D", "lower": "pad:reflect"}
/// ]}
/// ```
///
/// Each entry has exactly one selector — `match` (like the command line: name, glob, function or
/// class), `name`, `glob`, `function` or `class` — and exactly one of `lower` (the `--lower` OP
/// text) or `customLayer` (`className` required; `description`, `parameters`, `weights`,
/// `outputShape` optional). An entry may carry a `comment`. A bare list of entries is accepted
/// too. Unknown keys are errors, so typos do not go unnoticed.
public enum KerasHooksFile {
    /// Reads and parses the hooks file at `url`.
    /// - Throws: `KerasHookSpecError` naming the file, the entry (and line for JSON syntax
    ///   errors) and the problem.
    public static func load(contentsOf url: URL) throws -> [KerasHookSpec] {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw KerasHookSpecError("\(url.path): cannot read the hooks file", cause: error)
        }
        return try parse([UInt8](data), file: url.path)
    }

    /// Parses hooks-file JSON text; `file` names it in errors.
    public static func parse(_ text: String, file: String = "hooks.json") throws -> [KerasHookSpec] {
        try parse(Array(text.utf8), file: file)
    }

    static func parse(_ bytes: [UInt8], file: String) throws -> [KerasHookSpec] {
        let json: KerasJSON
        do { json = try KerasJSON.parse(bytes: bytes) } catch let e as KerasJSONError {
            let (line, column) = lineAndColumn(bytes, offset: e.offset)
            throw KerasHookSpecError("\(file):\(line):\(column): not valid JSON: \(e.message)")
        }
        let entries: [KerasJSON]
        if let a = json.array {
            entries = a
        } else if let o = json.object {
            let unknown = o.keys.filter { !["hooks", "comment", "version"].contains($0) }.sorted()
            guard unknown.isEmpty else {
                throw KerasHookSpecError("\(file): unknown top-level key\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")); expected {\"hooks\": [ … ]}")
            }
            if let v = o["version"], v.int != 1 {
                throw KerasHookSpecError("\(file): unsupported \"version\" \(v); this mlconv reads version 1")
            }
            guard let a = o["hooks"]?.array else {
                throw KerasHookSpecError("\(file): expected {\"hooks\": [ … ]} with a list of hooks, found \(o["hooks"].map { "\"hooks\": \(kind($0))" } ?? "no \"hooks\" key")")
            }
            entries = a
        } else {
            throw KerasHookSpecError("\(file): expected {\"hooks\": [ … ]}, found \(kind(json))")
        }
        return try entries.enumerated().map { i, e in
            do { return try entry(e) } catch let err as KerasHookSpecError {
                let label = e["match"]?.string ?? e["name"]?.string ?? e["glob"]?.string ?? e["function"]?.string ?? e["class"]?.string
                throw KerasHookSpecError("\(file): hooks[\(i)]\(label.map { " (\($0))" } ?? ""): \(err.message)")
            }
        }
    }

    private static func entry(_ e: KerasJSON) throws -> KerasHookSpec {
        guard let o = e.object else { throw KerasHookSpecError("expected an object, found \(kind(e))") }
        let selectors = ["match", "name", "glob", "function", "class"]
        let allowed = Set(selectors + ["lower", "customLayer", "comment"])
        let unknown = o.keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw KerasHookSpecError("unknown key\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")) (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
        let given = selectors.filter { o[$0] != nil }
        guard given.count == 1, let key = given.first else {
            throw KerasHookSpecError(given.isEmpty ? "no selector: give one of \(selectors.map { "\"\($0)\"" }.joined(separator: ", "))"
                                                   : "several selectors (\(given.joined(separator: ", "))): give exactly one")
        }
        guard let text = o[key]?.string, !text.isEmpty else { throw KerasHookSpecError("\"\(key)\" must be a non-empty string, found \(kind(o[key]!))") }
        let match: KerasHookMatch
        switch key {
        case "name": match = .name(text)
        case "glob": match = .glob(text)
        case "function": match = .function(text)
        case "class": match = .className(text)
        default: match = .any(text)
        }
        switch (o["lower"], o["customLayer"]) {
        case let (l?, nil):
            guard let s = l.string else { throw KerasHookSpecError("\"lower\" must be a string such as \"crop:2,2,2,2\", found \(kind(l))") }
            return KerasHookSpec(match: match, action: .lower(try KerasLowering(parsing: s)))
        case let (nil, c?):
            return KerasHookSpec(match: match, action: .customLayer(try customLayer(c)))
        case (nil, nil):
            throw KerasHookSpecError("no action: give \"lower\" (e.g. \"crop:2,2,2,2\") or \"customLayer\" ({\"className\": …})")
        default:
            throw KerasHookSpecError("both \"lower\" and \"customLayer\": give one")
        }
    }

    private static func customLayer(_ c: KerasJSON) throws -> KerasCustomLayerSpec {
        if let name = c.string { return try customLayer(.object(["className": .string(name)])) }
        guard let o = c.object else { throw KerasHookSpecError("\"customLayer\" must be an object or a class name, found \(kind(c))") }
        let allowed: Set = ["className", "description", "parameters", "weights", "outputShape", "comment"]
        let unknown = o.keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw KerasHookSpecError("customLayer: unknown key\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")) (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
        guard let cls = o["className"]?.string, !cls.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw KerasHookSpecError("customLayer needs \"className\", a non-empty string (the runtime implementation's class)")
        }
        var spec = KerasCustomLayerSpec(className: cls)
        if let d = o["description"] {
            guard let s = d.string else { throw KerasHookSpecError("customLayer.description must be a string, found \(kind(d))") }
            spec.description = s
        }
        if let w = o["weights"] {
            guard let b = w.bool else { throw KerasHookSpecError("customLayer.weights must be true or false, found \(kind(w))") }
            spec.includeWeights = b
        }
        if let p = o["parameters"] {
            guard let po = p.object else { throw KerasHookSpecError("customLayer.parameters must be an object of name: value, found \(kind(p))") }
            for (k, v) in po { spec.parameters[k] = try parameter(v, name: k) }
        }
        if let s = o["outputShape"] {
            if let t = s.string {
                spec.outputShape = try KerasOutputShapeRule(parsing: t)
            } else if let a = s.array {
                let lists: [KerasJSON] = a.allSatisfy({ $0.array != nil }) && !a.isEmpty ? a : [s]
                let shapes = lists.map { $0.array?.map(\.int) ?? [] }
                guard shapes.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ($0 ?? 0) > 0 } }) else {
                    throw KerasHookSpecError("customLayer.outputShape \(s) must be positive whole numbers without the batch dimension, e.g. [96, 96, 64] (or a list of such lists, one per output)")
                }
                spec.outputShape = .explicit(shapes.map { $0.map { $0! } })
            } else {
                throw KerasHookSpecError("customLayer.outputShape must be \"auto\", \"same\", \"crop:T,B,L,R\", \"pad:T,B,L,R\" or a list of dimensions, found \(kind(s))")
            }
        }
        return spec
    }

    private static func parameter(_ v: KerasJSON, name: String) throws -> CustomParameterValue {
        switch v {
        case let .bool(b): return .bool(b)
        case let .string(s): return .string(s)
        case let .number(d):
            if let i = v.int { return Int32(exactly: i).map { .int($0) } ?? .long(Int64(i)) }
            return .double(d)
        case let .object(o) where o.count == 1:
            let (type, x) = o.first!
            switch (type, x) {
            case let ("double", .number(d)): return .double(d)
            case ("int", _): if let i = x.int, let i32 = Int32(exactly: i) { return .int(i32) }
            case ("long", _): if let i = x.int { return .long(Int64(i)) }
            case let ("string", .string(s)): return .string(s)
            case let ("bool", .bool(b)): return .bool(b)
            default: break
            }
        default: break
        }
        throw KerasHookSpecError("customLayer.parameters.\(name): \(v) is not a parameter value; use a number (whole numbers are int, others double), a string, true/false, or {\"double\": N}, {\"int\": N}, {\"long\": N}")
    }

    private static func kind(_ v: KerasJSON) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "a list"
        case .object: return "an object"
        }
    }

    private static func lineAndColumn(_ bytes: [UInt8], offset: Int) -> (Int, Int) {
        var line = 1, column = 1
        for b in bytes.prefix(max(0, offset)) {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return (line, column)
    }
}
