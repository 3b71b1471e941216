// JSON ↔ feature values, typed by a model description (batch inputs of `mlconv predict --inputs
// batch.json`, `--output-json`, fixtures). A JSON value becomes the feature type the description
// declares: numbers → Double or Int64, strings → String (or a number when the feature is numeric
// and the string spells one, as CSV cells do), nested lists → MultiArray (or Sequence), objects →
// Dictionary, a string naming a PNG/JPEG file → Image.
import CoreMLFormat
import Diagnostics
import Foundation
import ImageIO
import MLRuntime

public enum FeatureJSON {
    /// Parses a batch: a JSON list of objects (feature name → value), or one object (a batch of 1).
    /// Keys that name no input of the description are ignored (as Core ML ignores extra features).
    /// - Throws: `FeatureError.invalidValue` naming the row and feature when a value does not fit
    ///   the declared type; `FeatureError.invalidValue(feature: "<json>")` for malformed JSON.
    public static func rows(from data: Data, description: Spec.ModelDescription?, model: String) throws -> [FeatureProvider] {
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) } catch {
            throw FeatureError.invalidValue(model: model, feature: "<json>",
                                            reason: "not valid JSON; give a list of objects, feature name → value",
                                            cause: DiagnosticCause(error))
        }
        let objects: [Any]
        if let list = json as? [Any] { objects = list } else if json is [String: Any] { objects = [json] } else {
            throw FeatureError.invalidValue(model: model, feature: "<json>",
                                            reason: "expected a list of objects (feature name → value), found \(jsonTypeName(json))")
        }
        var rows: [FeatureProvider] = []
        rows.reserveCapacity(objects.count)
        for (i, o) in objects.enumerated() {
            // Rows are numbered from 1, as CSV data rows are.
            guard let obj = o as? [String: Any] else {
                throw FeatureError.invalidValue(model: model, feature: "<row \(i + 1)>",
                                                reason: "expected an object (feature name → value), found \(jsonTypeName(o))")
            }
            rows.append(try provider(obj, description: description, model: "\(model) row \(i + 1)"))
        }
        return rows
    }

    /// One row: each key that names a described input (or every key, without a description).
    public static func provider(_ object: [String: Any], description: Spec.ModelDescription?, model: String) throws -> FeatureProvider {
        var p: FeatureProvider = [:]
        if let inputs = description?.input, !inputs.isEmpty {
            for input in inputs {
                guard let v = object[input.name] else { continue }
                if v is NSNull, input.type?.isOptional == true { continue }
                p[input.name] = try value(v, type: input.type, feature: input.name, model: model)
            }
        } else {
            for (k, v) in object { p[k] = try value(v, type: nil, feature: k, model: model) }
        }
        return p
    }

    /// Converts one JSON value (as `JSONSerialization` returns it) to the declared feature type
    /// (inferred from the JSON when `type` is nil: number → Double, string → String, list →
    /// MultiArray, object → string-keyed Dictionary).
    public static func value(_ json: Any, type: Spec.FeatureType?, feature: String, model: String) throws -> FeatureValue {
        func bad(_ expected: String) -> FeatureError {
            .invalidValue(model: model, feature: feature, reason: "expected \(expected), found \(jsonTypeName(json)) \(preview(json))")
        }
        switch type?.kind {
        case .int64?:
            if let s = json as? String, let i = Int64(s.trimmingCharacters(in: .whitespaces)) { return .int64(i) }
            guard let d = number(json), let i = Int64(exactly: d) else { throw bad("an integer (Int64)") }
            return .int64(i)
        case .double?:
            if json is NSNull { return .double(.nan) }
            if let s = json as? String, let d = Double(s.trimmingCharacters(in: .whitespaces)) { return .double(d) }
            guard let d = number(json) else { throw bad("a number (Double)") }
            return .double(d)
        case .string?:
            guard let s = json as? String else { throw bad("a string") }
            return .string(s)
        case let .multiArray(t)?:
            let dt = MultiArray.DataType(t.dataType) ?? .float64
            var shape: [Int] = []
            var values: [Double] = []
            try flatten(json, depth: 0, shape: &shape, values: &values, bad: bad)
            let declared = t.shape.compactMap { Int(exactly: $0) }
            if declared.count == t.shape.count, !declared.isEmpty, declared.reduce(1, { $0 &* $1 }) == values.count,
               shape.count <= 1 || shape == declared {
                shape = declared
            }
            if shape.isEmpty { shape = [1] }
            return .multiArray(try MultiArray(shape: shape, dataType: dt, values: values))
        case let .dictionary(t)?:
            guard let obj = json as? [String: Any] else { throw bad("an object (key → number)") }
            if t.keyType == .int64 {
                var d: [Int64: Double] = [:]
                for (k, v) in obj {
                    guard let key = Int64(k), let x = number(v) else { throw bad("an object with integer keys and number values") }
                    d[key] = x
                }
                return .dictionary(.int64Keys(d))
            }
            var d: [String: Double] = [:]
            for (k, v) in obj {
                guard let x = number(v) else { throw bad("an object with number values") }
                d[k] = x
            }
            return .dictionary(.stringKeys(d))
        case let .sequence(t)?:
            guard let list = json as? [Any] else { throw bad("a list") }
            if t.elementType == .string {
                let s = list.compactMap { $0 as? String }
                guard s.count == list.count else { throw bad("a list of strings") }
                return .sequence(.string(s))
            }
            var out: [Int64] = []
            for v in list {
                guard let d = number(v), let i = Int64(exactly: d) else { throw bad("a list of integers") }
                out.append(i)
            }
            return .sequence(.int64(out))
        case let .image(t)?:
            guard let path = json as? String else { throw bad("the path of a PNG or JPEG file") }
            return .image(try FeatureImage(contentsOf: URL(fileURLWithPath: path), fittedTo: t, crop: .center,
                                           feature: feature, model: model))
        default:
            if let s = json as? String { return .string(s) }
            if let d = number(json) { return .double(d) }
            if json is [Any] { return try value(json, type: .init(.multiArray(.init(shape: [], dataType: .double))), feature: feature, model: model) }
            if json is [String: Any] { return try value(json, type: .init(.dictionary(.init(keyType: .string))), feature: feature, model: model) }
            throw bad("a number, string, list or object")
        }
    }

    // MARK: output

    /// The JSON form of a feature value: numbers, strings, nested lists for multiArrays (by shape),
    /// objects for dictionaries (int64 keys written as decimal strings, as JSON requires), lists
    /// for sequences, `{"width", "height", "colorSpace", "pixels": [[[…]]]}` for images.
    /// Non-finite doubles become `null` (JSON has no NaN / infinity).
    public static func jsonObject(_ v: FeatureValue) -> Any {
        switch v {
        case let .int64(i): return NSNumber(value: i)
        case let .double(d): return finite(d)
        case let .string(s): return s
        case let .multiArray(a):
            if a.shape.isEmpty { return a.values.first.map(finite) ?? NSNull() }
            var index = 0
            func nest(_ dim: Int) -> Any {
                if dim == a.shape.count - 1 {
                    let n = a.shape[dim]
                    defer { index += n }
                    return a.values[index..<index + n].map { a.dataType == .int32 ? NSNumber(value: Int64($0)) : finite($0) }
                }
                return (0..<a.shape[dim]).map { _ in nest(dim + 1) }
            }
            return nest(0)
        case let .dictionary(.stringKeys(d)): return d.mapValues(finite)
        case let .dictionary(.int64Keys(d)):
            var o: [String: Any] = [:]
            for (k, x) in d { o[String(k)] = finite(x) }
            return o
        case let .sequence(.int64(s)): return s.map { NSNumber(value: $0) }
        case let .sequence(.string(s)): return s
        case let .image(img):
            var rows: [[[Int]]] = []
            for y in 0..<img.height {
                rows.append((0..<img.width).map { x in
                    (0..<img.channels).map { Int(img.pixels[(y * img.width + x) * img.channels + $0]) }
                })
            }
            return ["width": img.width, "height": img.height, "colorSpace": img.colorSpace.rawValue, "pixels": rows]
        }
    }

    /// A JSON list of objects (one per row, keys sorted), as `--output-json` writes it.
    public static func encode(_ rows: [FeatureProvider]) throws -> Data {
        let list = rows.map { row in row.mapValues(jsonObject) }
        return try JSONSerialization.data(withJSONObject: list, options: [.sortedKeys, .prettyPrinted])
    }

    // MARK: helpers

    static func number(_ v: Any) -> Double? {
        if v is Bool, let b = v as? Bool { return b ? 1 : 0 }
        if let n = v as? NSNumber, !(v is String) { return n.doubleValue }
        return nil
    }

    private static func finite(_ d: Double) -> Any { d.isFinite ? NSNumber(value: d) : NSNull() }

    private static func flatten(_ v: Any, depth: Int, shape: inout [Int], values: inout [Double],
                                bad: (String) -> FeatureError) throws {
        if let list = v as? [Any] {
            guard depth < 32 else { throw bad("an array of rank ≤ 32") }
            if shape.count == depth { shape.append(list.count) } else if shape.count < depth || shape[depth] != list.count {
                throw bad("a rectangular nested list (all rows of equal length)")
            }
            for x in list { try flatten(x, depth: depth + 1, shape: &shape, values: &values, bad: bad) }
        } else if v is NSNull {
            guard shape.count == depth else { throw bad("a rectangular nested list of numbers") }
            values.append(.nan)
        } else if let d = number(v) {
            guard shape.count == depth else { throw bad("a rectangular nested list of numbers") }
            values.append(d)
        } else if let s = v as? String, let d = Double(s) {
            guard shape.count == depth else { throw bad("a rectangular nested list of numbers") }
            values.append(d)
        } else {
            throw bad("a number or a nested list of numbers")
        }
    }

    static func jsonTypeName(_ v: Any) -> String {
        if v is NSNull { return "null" }
        if v is String { return "a string" }
        if v is [Any] { return "a list" }
        if v is [String: Any] { return "an object" }
        if number(v) != nil { return "a number" }
        return "\(type(of: v))"
    }

    private static func preview(_ v: Any) -> String {
        let s: String
        if let str = v as? String { s = "\"\(str)\"" } else if let d = number(v) { s = "\(d)" } else { return "" }
        return s.count > 40 ? String(s.prefix(40)) + "…" : s
    }
}

extension FeatureImage {
    /// Reads a PNG or JPEG file and fits it to an image feature's declared size and colour space
    /// (`crop` as Apple's Vision: center crop, fit, or fill); an image of a size the feature's
    /// `sizeFlexibility` allows keeps its size.
    /// - Throws: `ImageIOError` for unreadable files; `FeatureError.invalidValue` for a declared
    ///   size out of range.
    public init(contentsOf url: URL, fittedTo t: Spec.ImageFeatureType, crop: ImageCropMode,
                feature: String, model: String) throws {
        var img = try ImageCodec.read(contentsOf: url)
        guard let w = Int(exactly: t.width), let h = Int(exactly: t.height), w >= 0, h >= 0, w <= 1 << 15, h <= 1 << 15 else {
            throw FeatureError.invalidValue(model: model, feature: feature, reason: "declared image size \(t.width)×\(t.height) is out of range")
        }
        // An image of a size the feature's flexibility allows is kept as is (flexible shapes).
        if w > 0, h > 0, (img.width != w || img.height != h), !t.allowsSize(width: img.width, height: img.height) {
            img = img.resized(to: w, height: h, mode: crop)
        }
        let space: ColorSpace
        switch t.colorSpace {
        case .grayscale, .grayscaleFloat16: space = .grayscale; img = img.converted(to: .grayscale)
        case .bgr: space = .bgr; img = img.converted(to: .bgr)
        default: space = .rgb; img = img.converted(to: .rgb)
        }
        try self.init(width: img.width, height: img.height, colorSpace: space, pixels: img.pixels)
    }
}
