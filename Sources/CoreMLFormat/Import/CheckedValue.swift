// Checked conversions of integers read from a Core ML file (protobuf varints reach 2^64 - 1).
import MLGraph

/// Integers from a Core ML file converted to `Int` with their range checked, so a hostile value
/// (a varint ≥ 2^63, a product past 2^63) is a `LayerImportFailure` naming the field, the range
/// mlconv accepts and the value found — never a trap. The importer reports the failure against
/// the layer or feature; `CoreMLInspector` turns it into `CoreMLFormatError.invalidValue`.
enum Checked {
    /// `value` as an `Int` in `range` (by default a count: 0…`Node.maxCountAttribute`).
    static func int<T: BinaryInteger>(_ value: T, _ field: String,
                                      in range: ClosedRange<Int> = 0...Node.maxCountAttribute) throws -> Int {
        guard let v = Int(exactly: value), range.contains(v) else {
            throw LayerImportFailure("has \(field) \(value); expected \(range.lowerBound)…\(range.upperBound)")
        }
        return v
    }

    /// Each of `values` as an `Int` in `range`.
    static func ints<T: BinaryInteger>(_ values: [T], _ field: String,
                                       in range: ClosedRange<Int> = 0...Node.maxCountAttribute) throws -> [Int] {
        try values.map { v in
            guard let i = Int(exactly: v), range.contains(i) else {
                throw LayerImportFailure("has \(field) \(values); each must be in \(range.lowerBound)…\(range.upperBound), found \(v)")
            }
            return i
        }
    }

    /// The product of `factors` (each ≥ 0), at most `limit` (by default `TensorType.maxElementCount`).
    static func product(_ factors: [Int], _ field: String, limit: Int = TensorType.maxElementCount) throws -> Int {
        var p = 1
        for f in factors {
            let (r, overflow) = p.multipliedReportingOverflow(by: f)
            guard f >= 0, !overflow, r <= limit else {
                throw LayerImportFailure("has \(field) \(factors.map(String.init).joined(separator: "·")), a product "
                    + "past \(limit); expected at most \(limit)")
            }
            p = r
        }
        return p
    }

    /// The product of file values `factors`, each converted with `int` and the product checked.
    static func product<T: BinaryInteger>(of factors: [T], _ field: String, limit: Int = TensorType.maxElementCount) throws -> Int {
        try product(ints(factors, field, in: 0...limit), field, limit: limit)
    }

    /// A file value for a report: the `Int` when it fits, else the value itself (a UInt64 ≥ 2^63).
    static func display(_ value: UInt64) -> Any { Int(exactly: value).map { $0 as Any } ?? value }

    /// `value` as an index below `count`, or nil (for looking up enum names).
    static func index(_ value: UInt64, below count: Int) -> Int? { value < UInt64(count) ? Int(value) : nil }
}
