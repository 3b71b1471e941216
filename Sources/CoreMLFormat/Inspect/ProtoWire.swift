// A small, lenient protobuf wire-format reader for the model kinds the codec keeps opaque
// (tree ensembles, GLMs, SVMs, ML programs, …), used only to describe them in reports.

/// The fields of one protobuf message, in wire order. Parsing stops quietly at the first
/// malformed field (a report must never fail because of an opaque part).
struct ProtoFields {
    struct Field {
        let number: UInt32
        let wireType: UInt8
        /// varint value, or the raw bits of fixed32/fixed64 fields.
        let scalar: UInt64
        /// payload of length-delimited fields.
        let bytes: ArraySlice<UInt8>
    }

    let fields: [Field]

    init(_ bytes: ArraySlice<UInt8>) {
        var out: [Field] = []
        var i = bytes.startIndex
        func varint() -> UInt64? {
            var v: UInt64 = 0, shift: UInt64 = 0
            while i < bytes.endIndex, shift < 64 {
                let b = bytes[i]; i += 1
                v |= UInt64(b & 0x7f) << shift
                if b & 0x80 == 0 { return v }
                shift += 7
            }
            return nil
        }
        while i < bytes.endIndex {
            guard let key = varint() else { break }
            let number = UInt32(truncatingIfNeeded: key >> 3), wt = UInt8(key & 7)
            guard number > 0 else { break }
            switch wt {
            case 0:
                guard let v = varint() else { fields = out; return }
                out.append(Field(number: number, wireType: 0, scalar: v, bytes: []))
            case 1:
                guard bytes.endIndex - i >= 8 else { fields = out; return }
                var v: UInt64 = 0
                for k in 0..<8 { v |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
                i += 8
                out.append(Field(number: number, wireType: 1, scalar: v, bytes: []))
            case 2:
                guard let n = varint(), n <= UInt64(bytes.endIndex - i) else { fields = out; return }
                let end = i + Int(n)
                out.append(Field(number: number, wireType: 2, scalar: 0, bytes: bytes[i..<end]))
                i = end
            case 5:
                guard bytes.endIndex - i >= 4 else { fields = out; return }
                var v: UInt64 = 0
                for k in 0..<4 { v |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
                i += 4
                out.append(Field(number: number, wireType: 5, scalar: v, bytes: []))
            default:
                fields = out
                return
            }
        }
        fields = out
    }

    /// The top-level fields kept by the codec for an `.other` model kind.
    init(unknown: Spec.UnknownFields) {
        var bytes: [UInt8] = []
        for f in unknown {
            var key = UInt64(f.fieldNumber) << 3 | UInt64(f.wireType.rawValue)
            repeat {
                let b = UInt8(key & 0x7f)
                key >>= 7
                bytes.append(key == 0 ? b : b | 0x80)
            } while key != 0
            bytes.append(contentsOf: f.data)
        }
        self.init(bytes[...])
    }

    func all(_ n: UInt32) -> [Field] { fields.filter { $0.number == n } }
    func has(_ n: UInt32) -> Bool { fields.contains { $0.number == n } }
    func count(_ n: UInt32) -> Int { fields.reduce(0) { $0 + ($1.number == n ? 1 : 0) } }

    func message(_ n: UInt32) -> ProtoFields? {
        fields.last { $0.number == n && $0.wireType == 2 }.map { ProtoFields($0.bytes) }
    }

    func messages(_ n: UInt32) -> [ProtoFields] {
        fields.filter { $0.number == n && $0.wireType == 2 }.map { ProtoFields($0.bytes) }
    }

    func string(_ n: UInt32) -> String? {
        fields.last { $0.number == n && $0.wireType == 2 }.map { String(decoding: $0.bytes, as: UTF8.self) }
    }

    func strings(_ n: UInt32) -> [String] {
        fields.filter { $0.number == n && $0.wireType == 2 }.map { String(decoding: $0.bytes, as: UTF8.self) }
    }

    func varint(_ n: UInt32) -> UInt64? { fields.last { $0.number == n && $0.wireType == 0 }?.scalar }

    func double(_ n: UInt32) -> Double? {
        fields.last { $0.number == n && $0.wireType == 1 }.map { Double(bitPattern: $0.scalar) }
    }

    /// Number of elements of a repeated scalar field, packed or not (`elementSize` 8 for
    /// double/fixed64, 4 for float/fixed32, 0 for varints).
    func repeatedCount(_ n: UInt32, elementSize: Int) -> Int {
        var c = 0
        for f in fields where f.number == n {
            if f.wireType == 2 {
                if elementSize > 0 { c += f.bytes.count / elementSize } else { c += f.bytes.reduce(0) { $0 + ($1 & 0x80 == 0 ? 1 : 0) } }
            } else {
                c += 1
            }
        }
        return c
    }

    /// Varint values of a repeated field, packed or not.
    func varints(_ n: UInt32) -> [UInt64] {
        var out: [UInt64] = []
        for f in fields where f.number == n {
            if f.wireType == 0 { out.append(f.scalar); continue }
            guard f.wireType == 2 else { continue }
            var v: UInt64 = 0, shift: UInt64 = 0
            for b in f.bytes {
                v |= UInt64(b & 0x7f) << shift
                if b & 0x80 == 0 { out.append(v); v = 0; shift = 0 } else { shift += 7 }
            }
        }
        return out
    }

    /// `map<string, V>` entries (key field 1, value field 2).
    func mapEntries(_ n: UInt32) -> [(key: String, value: ProtoFields)] {
        messages(n).map { ($0.string(1) ?? "", $0.message(2) ?? ProtoFields([])) }
    }

    /// A `ClassLabels` oneof: StringVector (field `stringField`, strings in field 1) or
    /// Int64Vector (`int64Field`, packed int64 in field 1).
    func classLabels(strings stringField: UInt32 = 100, int64s int64Field: UInt32 = 101) -> (kind: String, labels: [String])? {
        if let s = message(stringField) { return ("string", s.strings(1)) }
        if let v = message(int64Field) { return ("int64", v.varints(1).map { String(Int64(bitPattern: $0)) }) }
        return nil
    }
}
