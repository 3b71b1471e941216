// Feature values from text (command-line `--input NAME=VALUE` values and CSV cells), typed by the
// model description, and CSV batches (`mlconv predict --inputs data.csv`, `--output-csv`).
import CoreMLFormat
import Foundation
import MLRuntime

public enum FeatureText {
    /// Converts a text value to the declared feature type: Int64 / Double parse the number
    /// (`nan`, `inf` accepted for Double), String takes the text as is; MultiArray takes a JSON
    /// list (`[1, 2, 3]`, nested for higher ranks), numbers separated by commas or spaces, or the
    /// path of a `.npy` file; Dictionary a JSON object; Sequence a JSON list; Image the path of a
    /// PNG or JPEG file. Without a declared type: a number is a Double, anything else a String.
    /// - Throws: `FeatureError.invalidValue` naming the feature, the expected type and the text.
    public static func value(_ text: String, type: Spec.FeatureType?, feature: String, model: String) throws -> FeatureValue {
        let t = text.trimmingCharacters(in: .whitespaces)
        func bad(_ expected: String) -> FeatureError {
            .invalidValue(model: model, feature: feature, reason: "expected \(expected), found '\(t.count > 40 ? String(t.prefix(40)) + "…" : t)'")
        }
        switch type?.kind {
        case .int64?:
            if let i = Int64(t) { return .int64(i) }
            if let d = Double(t), let i = Int64(exactly: d) { return .int64(i) }
            throw bad("an integer (Int64)")
        case .double?:
            guard let d = Double(t) else { throw bad("a number (Double)") }
            return .double(d)
        case .string?:
            return .string(text)
        case .multiArray?:
            if t.lowercased().hasSuffix(".npy") {
                let a = try NPY.read(contentsOf: URL(fileURLWithPath: t))
                return try FeatureJSON.value(nest(a.scalars.map(Double.init), shape: a.shape), type: type, feature: feature, model: model)
            }
            if t.hasPrefix("[") { return try FeatureJSON.value(try json(t, bad), type: type, feature: feature, model: model) }
            let parts = t.split(whereSeparator: { $0 == "," || $0 == " " || $0 == ";" })
            var values: [Double] = []
            for p in parts {
                guard let d = Double(p) else { throw bad("numbers separated by commas or spaces, a JSON list, or a .npy file") }
                values.append(d)
            }
            return try FeatureJSON.value(values, type: type, feature: feature, model: model)
        case .dictionary?, .sequence?:
            return try FeatureJSON.value(try json(t, bad), type: type, feature: feature, model: model)
        case .image?:
            return try FeatureJSON.value(t, type: type, feature: feature, model: model)
        default:
            if let d = Double(t) { return .double(d) }
            return .string(text)
        }
    }

    private static func json(_ t: String, _ bad: (String) -> FeatureError) throws -> Any {
        guard let v = try? JSONSerialization.jsonObject(with: Data(t.utf8), options: [.fragmentsAllowed]) else {
            throw bad("JSON (a list or an object)")
        }
        return v
    }

    private static func nest(_ values: [Double], shape: [Int]) -> Any {
        guard shape.count > 1 else { return values }
        let inner = shape.dropFirst().reduce(1, *)
        guard inner > 0 else { return [Any]() }
        return stride(from: 0, to: values.count, by: inner).map {
            nest(Array(values[$0..<min($0 + inner, values.count)]), shape: Array(shape.dropFirst()))
        }
    }
}

/// CSV batches (RFC 4180: comma-separated, fields quoted with `"` where they hold commas, quotes
/// or line breaks, `""` for a quote inside a quoted field; CRLF or LF line ends).
public enum FeatureCSV {
    /// Parses a CSV whose first row names the features; each further row is one input row. A
    /// cell is converted by `FeatureText.value` to the declared type; an empty cell leaves the
    /// feature out (a Double feature gets NaN, the missing value of Core ML's trees and imputers).
    /// Columns that name no described input are ignored.
    /// - Throws: `FeatureError.invalidValue` naming the row (1-based line of data) and column.
    public static func rows(from text: String, description: Spec.ModelDescription?, model: String) throws -> [FeatureProvider] {
        let records = try parse(text, model: model)
        guard let header = records.first else { return [] }
        let types = Dictionary((description?.input ?? []).map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
        let described = !(description?.input.isEmpty ?? true)
        var rows: [FeatureProvider] = []
        rows.reserveCapacity(records.count - 1)
        for (r, record) in records.dropFirst().enumerated() {
            if record.count == 1, record[0].isEmpty { continue }  // blank line
            guard record.count == header.count else {
                throw FeatureError.invalidValue(model: "\(model) row \(r + 1)", feature: "<csv>",
                                                reason: "\(record.count) cells for \(header.count) header columns")
            }
            var p: FeatureProvider = [:]
            for (name, cell) in zip(header, record) {
                guard !described || types[name] != nil else { continue }
                let type = types[name] ?? nil
                if cell.isEmpty {
                    if case .double? = type?.kind { p[name] = .double(.nan) }
                    continue
                }
                p[name] = try FeatureText.value(cell, type: type, feature: name, model: "\(model) row \(r + 1)")
            }
            rows.append(p)
        }
        return rows
    }

    /// Writes rows as CSV, one column per output in `outputs` order: scalars as text; a
    /// dictionary as one column per key (`name[key]`, keys in first-seen order); a multiArray as
    /// one column per element (`name[i]`, row-major); sequences as JSON text.
    public static func encode(_ rows: [FeatureProvider], outputs: [String]) -> String {
        var columns: [(header: String, cell: (FeatureProvider) -> String)] = []
        for name in outputs {
            let values = rows.compactMap { $0[name] }
            switch values.first {
            case .dictionary?:
                var keys: [String] = []
                var seen = Set<String>()
                for v in values {
                    for k in dictKeys(v) where seen.insert(k).inserted { keys.append(k) }
                }
                for k in keys {
                    columns.append(("\(name)[\(k)]", { row in
                        switch row[name] {
                        case let .dictionary(.stringKeys(d))?: return d[k].map(format) ?? ""
                        case let .dictionary(.int64Keys(d))?: return Int64(k).flatMap { d[$0] }.map(format) ?? ""
                        default: return ""
                        }
                    }))
                }
            case .multiArray?:
                let n = values.map { if case let .multiArray(a) = $0 { return a.count }; return 0 }.max() ?? 0
                for i in 0..<n {
                    columns.append(("\(name)[\(i)]", { row in
                        if case let .multiArray(a)? = row[name], i < a.count { return format(a.values[i]) }
                        return ""
                    }))
                }
            default:
                columns.append((name, { row in row[name].map(text) ?? "" }))
            }
        }
        var out = columns.map { quote($0.header) }.joined(separator: ",") + "\n"
        for row in rows {
            out += columns.map { quote($0.cell(row)) }.joined(separator: ",") + "\n"
        }
        return out
    }

    private static func dictKeys(_ v: FeatureValue) -> [String] {
        switch v {
        case let .dictionary(.stringKeys(d)): return d.keys.sorted()
        case let .dictionary(.int64Keys(d)): return d.keys.sorted().map { String($0) }
        default: return []
        }
    }

    static func format(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    private static func text(_ v: FeatureValue) -> String {
        switch v {
        case let .int64(i): return String(i)
        case let .double(d): return format(d)
        case let .string(s): return s
        default:
            let o = FeatureJSON.jsonObject(v)
            guard JSONSerialization.isValidJSONObject([o]),
                  let data = try? JSONSerialization.data(withJSONObject: [o], options: [.sortedKeys]),
                  let s = String(data: data, encoding: .utf8) else { return "" }
            return String(s.dropFirst().dropLast())
        }
    }

    private static func quote(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// RFC 4180 records.
    static func parse(_ text: String, model: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var inQuotes = false
        var afterQuote = false
        var line = 1
        var it = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func next() -> Unicode.Scalar? {
            if let p = pending { pending = nil; return p }
            return it.next()
        }
        while let c = next() {
            if inQuotes {
                if c == "\"" {
                    if let n = next() {
                        if n == "\"" { field.unicodeScalars.append("\"") } else { inQuotes = false; afterQuote = true; pending = n }
                    } else { inQuotes = false; afterQuote = true }
                } else {
                    if c == "\n" { line += 1 }
                    field.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case ",":
                record.append(field); field = ""; afterQuote = false
            case "\r":
                continue
            case "\n":
                record.append(field); field = ""; afterQuote = false
                records.append(record); record = []
                line += 1
            case "\"" where field.isEmpty && !afterQuote:
                inQuotes = true
            default:
                if afterQuote {
                    throw FeatureError.invalidValue(model: model, feature: "<csv line \(line)>",
                                                    reason: "text after a closing quote; quote the whole field and double quotes inside it")
                }
                field.unicodeScalars.append(c)
            }
        }
        if inQuotes {
            throw FeatureError.invalidValue(model: model, feature: "<csv line \(line)>", reason: "a quoted field is not closed")
        }
        if !field.isEmpty || !record.isEmpty || afterQuote { record.append(field); records.append(record) }
        return records
    }
}
