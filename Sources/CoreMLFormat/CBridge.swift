// Reflection-based bridge between protobuf-c's C structs (generated from our .proto files
// into CCoreMLProto) and the Swift `Spec` value types. Fields are addressed by their protobuf
// field number; the protobuf-c field descriptor supplies each field's offset in the C struct,
// so no Swift code depends on the generated struct layouts. Internal to CoreMLFormat.
import CCoreMLProto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Swift spec value that can be read from its protobuf-c message counterpart.
protocol CMessageDecodable {
    /// Reads the value from a decoded C message.
    init(reading r: CReader) throws
}

/// A Swift spec value that has a protobuf-c message counterpart, in both directions.
protocol CMessageCodable: CMessageDecodable {
    /// Fills a freshly initialised C message (all fields at their defaults).
    func write(to w: CWriter) throws
}

/// Marker: the type reports its own unknown fields (for example NeuralNetworkLayer, which
/// names unsupported layer types), so the generic report is skipped.
protocol ReportsOwnUnknownFields {}

/// Marker: readers of this type's messages get `CReader.wire` (the message's exact bytes), so
/// content kept verbatim below it (classical model kinds) keeps its original encoding.
protocol KeepsWireBytes {}

/// Collects warnings while one model is decoded, and owns the buffers `CReader.wire` points
/// into below the top level (freed when the decode ends).
final class DecodeContext {
    var warnings: [String] = []
    private var retained: [UnsafeMutablePointer<ProtobufCMessage>] = []

    func retain(_ m: UnsafeMutablePointer<ProtobufCMessage>) { retained.append(m) }

    deinit { for m in retained { protobuf_c_message_free_unpacked(m, nil) } }
}

private let oneofFlag = PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue

/// Read access to one decoded protobuf-c message.
struct CReader {
    let msg: UnsafeRawPointer
    let ctx: DecodeContext
    /// Where this message sits in the model, e.g. `Model.neuralNetwork.layers[3] "conv1"`.
    let path: String
    /// The message's exact wire bytes, when known: the decoded buffer for the root, and for
    /// `KeepsWireBytes` sub-messages the bytes of their field in the parent's wire bytes. Valid
    /// only while the decode runs. See WireBytes.swift.
    var wire: UnsafeRawBufferPointer? = nil

    var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        msg.load(as: ProtobufCMessage.self).descriptor
    }

    var messageName: String { String(cString: descriptor.pointee.name) }

    fileprivate func field(_ id: UInt32, _ type: ProtobufCType, repeated: Bool) -> ProtobufCFieldDescriptor {
        fieldDescriptor(descriptor, id, type, repeated: repeated)
    }

    /// The field number of the active member of the oneof that contains field `member`, or 0.
    func oneofCase(_ member: UInt32) -> UInt32 {
        guard let f = protobuf_c_message_descriptor_get_field(descriptor, member),
              f.pointee.flags & oneofFlag != 0 else {
            preconditionFailure("mlconv schema/code mismatch: \(messageName) field \(member) is not in a oneof")
        }
        return msg.load(fromByteOffset: Int(f.pointee.quantifier_offset), as: UInt32.self)
    }

    private func active(_ f: ProtobufCFieldDescriptor) -> Bool {
        f.flags & oneofFlag == 0
            || msg.load(fromByteOffset: Int(f.quantifier_offset), as: UInt32.self) == f.id
    }

    // MARK: scalars (proto3 defaults when absent)

    func bool(_ id: UInt32) -> Bool {
        let f = field(id, PROTOBUF_C_TYPE_BOOL, repeated: false)
        return active(f) && msg.load(fromByteOffset: Int(f.offset), as: Int32.self) != 0
    }
    func int32(_ id: UInt32) -> Int32 {
        let f = field(id, PROTOBUF_C_TYPE_INT32, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: Int32.self) : 0
    }
    func int64(_ id: UInt32) -> Int64 {
        let f = field(id, PROTOBUF_C_TYPE_INT64, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: Int64.self) : 0
    }
    func uint32(_ id: UInt32) -> UInt32 {
        let f = field(id, PROTOBUF_C_TYPE_UINT32, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: UInt32.self) : 0
    }
    func uint64(_ id: UInt32) -> UInt64 {
        let f = field(id, PROTOBUF_C_TYPE_UINT64, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: UInt64.self) : 0
    }
    func float(_ id: UInt32) -> Float {
        let f = field(id, PROTOBUF_C_TYPE_FLOAT, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: Float.self) : 0
    }
    func double(_ id: UInt32) -> Double {
        let f = field(id, PROTOBUF_C_TYPE_DOUBLE, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: Double.self) : 0
    }
    /// Raw enum value (proto3 enums are open: values outside the schema are kept).
    func enumValue(_ id: UInt32) -> Int32 {
        let f = field(id, PROTOBUF_C_TYPE_ENUM, repeated: false)
        return active(f) ? msg.load(fromByteOffset: Int(f.offset), as: Int32.self) : 0
    }
    func string(_ id: UInt32) -> String {
        let f = field(id, PROTOBUF_C_TYPE_STRING, repeated: false)
        guard active(f), let p = msg.load(fromByteOffset: Int(f.offset), as: UnsafePointer<CChar>?.self) else {
            return ""
        }
        return String(cString: p)
    }
    func bytes(_ id: UInt32) -> [UInt8] {
        let f = field(id, PROTOBUF_C_TYPE_BYTES, repeated: false)
        guard active(f) else { return [] }
        let b = msg.load(fromByteOffset: Int(f.offset), as: ProtobufCBinaryData.self)
        guard b.len > 0, let d = b.data else { return [] }
        return Array(UnsafeBufferPointer(start: d, count: b.len))
    }

    // MARK: repeated

    private func repeated(_ id: UInt32, _ type: ProtobufCType) -> (ProtobufCFieldDescriptor, Int, UnsafeRawPointer?) {
        let f = field(id, type, repeated: true)
        let n = msg.load(fromByteOffset: Int(f.quantifier_offset), as: Int.self)
        let p = msg.load(fromByteOffset: Int(f.offset), as: UnsafeRawPointer?.self)
        return (f, n, p)
    }
    private func scalars<T>(_ id: UInt32, _ type: ProtobufCType, _: T.Type) -> [T] {
        let (_, n, p) = repeated(id, type)
        guard n > 0, let p else { return [] }
        return Array(UnsafeBufferPointer(start: p.assumingMemoryBound(to: T.self), count: n))
    }
    func floats(_ id: UInt32) -> [Float] { scalars(id, PROTOBUF_C_TYPE_FLOAT, Float.self) }
    func doubles(_ id: UInt32) -> [Double] { scalars(id, PROTOBUF_C_TYPE_DOUBLE, Double.self) }
    func int64s(_ id: UInt32) -> [Int64] { scalars(id, PROTOBUF_C_TYPE_INT64, Int64.self) }
    func uint64s(_ id: UInt32) -> [UInt64] { scalars(id, PROTOBUF_C_TYPE_UINT64, UInt64.self) }
    func bools(_ id: UInt32) -> [Bool] { scalars(id, PROTOBUF_C_TYPE_BOOL, Int32.self).map { $0 != 0 } }
    func int32s(_ id: UInt32) -> [Int32] { scalars(id, PROTOBUF_C_TYPE_INT32, Int32.self) }
    func uint32s(_ id: UInt32) -> [UInt32] { scalars(id, PROTOBUF_C_TYPE_UINT32, UInt32.self) }
    /// Raw values of a repeated enum field (values outside the schema are kept).
    func enumValues(_ id: UInt32) -> [Int32] { scalars(id, PROTOBUF_C_TYPE_ENUM, Int32.self) }

    /// A proto3 `map<k, v>` field (a repeated entry message with key = 1, value = 2). A key that
    /// occurs twice keeps its last value, as protobuf's merge semantics say.
    func map<K: Hashable, V>(_ id: UInt32, key: (CReader) -> K, value: (CReader) -> V) -> [K: V] {
        let (f, n, p) = repeated(id, PROTOBUF_C_TYPE_MESSAGE)
        guard n > 0, let p else { return [:] }
        let ptrs = p.assumingMemoryBound(to: UnsafeRawPointer?.self)
        var out: [K: V] = [:]
        out.reserveCapacity(n)
        for i in 0..<n {
            guard let m = ptrs[i] else { continue }
            let r = CReader(msg: m, ctx: ctx, path: fieldPath(f) + "[\(i)]")
            r.reportUnknownFields()
            out[key(r)] = value(r)
        }
        return out
    }
    /// A `map<string, Message>` field (ML programs' functions, attributes, op inputs). A key that
    /// occurs twice keeps its last value; an entry without a value decodes as the default message.
    func messageMap<V: CMessageDecodable>(_ id: UInt32, as _: V.Type = V.self) throws -> [String: V] {
        let (f, n, p) = repeated(id, PROTOBUF_C_TYPE_MESSAGE)
        guard n > 0, let p else { return [:] }
        let ptrs = p.assumingMemoryBound(to: UnsafeRawPointer?.self)
        var out: [String: V] = [:]
        out.reserveCapacity(n)
        for i in 0..<n {
            guard let m = ptrs[i] else { continue }
            let entry = CReader(msg: m, ctx: ctx, path: fieldPath(f) + "[\(i)]")
            entry.reportUnknownFields()
            let key = entry.string(1)
            let named = entry.renamed(fieldPath(f) + "[\"\(key)\"]")
            if let v = try named.message(2, as: V.self) {
                out[key] = v
            } else {
                out[key] = try V(reading: CReader.emptyMessage(of: entry, field: 2, ctx: ctx, path: named.path))
            }
        }
        return out
    }

    /// A reader over a default-initialised message of field `id`'s type (a map entry whose value
    /// is absent reads as the default value).
    static func emptyMessage(of r: CReader, field id: UInt32, ctx: DecodeContext, path: String) throws -> CReader {
        let f = fieldDescriptor(r.descriptor, id, PROTOBUF_C_TYPE_MESSAGE, repeated: false)
        let desc = f.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        // Packing nothing and unpacking it yields a message at its defaults, owned by ctx.
        guard let m = protobuf_c_message_unpack(desc, nil, 0, nil) else {
            throw CoreMLFormatError.invalidValue(file: path, what: path, message: "protobuf-c could not create an empty message")
        }
        ctx.retain(m)
        return CReader(msg: UnsafeRawPointer(m), ctx: ctx, path: path)
    }

    func strings(_ id: UInt32) -> [String] {
        scalars(id, PROTOBUF_C_TYPE_STRING, UnsafePointer<CChar>?.self).map { $0.map { String(cString: $0) } ?? "" }
    }

    // MARK: messages

    func fieldPath(_ f: ProtobufCFieldDescriptor) -> String { path + "." + String(cString: f.name) }

    /// Decodes the sub-message in field `id`; nil when absent (or another oneof member is set).
    func message<T: CMessageDecodable>(_ id: UInt32, as _: T.Type = T.self) throws -> T? {
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE, repeated: false)
        guard active(f), let p = msg.load(fromByteOffset: Int(f.offset), as: UnsafeRawPointer?.self) else {
            return nil
        }
        var wire: UnsafeRawBufferPointer?
        if T.self is KeepsWireBytes.Type, let all = wireOccurrences(id), all.count == 1 { wire = all[0] }
        return try child(p, path: fieldPath(f), wire: wire)
    }

    /// Decodes a repeated message field (warnings name each element by its index).
    func messages<T: CMessageDecodable>(_ id: UInt32, as _: T.Type = T.self) throws -> [T] {
        let (f, n, p) = repeated(id, PROTOBUF_C_TYPE_MESSAGE)
        guard n > 0, let p else { return [] }
        let ptrs = p.assumingMemoryBound(to: UnsafeRawPointer?.self)
        var wires: [UnsafeRawBufferPointer]?
        if T.self is KeepsWireBytes.Type, let all = wireOccurrences(id), all.count == n { wires = all }
        var out: [T] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            guard let m = ptrs[i] else { continue }
            out.append(try child(m, path: fieldPath(f) + "[\(i)]", wire: wires?[i]))
        }
        return out
    }

    /// Unknown fields of the (otherwise empty) sub-message in field `id`, for model kinds that
    /// mlconv recognises by name only. nil when the field is absent.
    func opaqueMessage(_ id: UInt32) -> Spec.UnknownFields? {
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE, repeated: false)
        guard active(f), let p = msg.load(fromByteOffset: Int(f.offset), as: UnsafeRawPointer?.self) else {
            return nil
        }
        return CReader(msg: p, ctx: ctx, path: fieldPath(f)).unknownFields
    }

    /// A reader for the sub-message in field `id` (its unknown fields are reported); nil when
    /// absent. For small parameter messages that map to labelled enum payloads.
    func sub(_ id: UInt32) -> CReader? {
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE, repeated: false)
        guard active(f), let p = msg.load(fromByteOffset: Int(f.offset), as: UnsafeRawPointer?.self) else {
            return nil
        }
        let r = CReader(msg: p, ctx: ctx, path: fieldPath(f))
        r.reportUnknownFields()
        return r
    }

    /// The same message under another path (to add a layer name to warnings).
    func renamed(_ newPath: String) -> CReader { CReader(msg: msg, ctx: ctx, path: newPath) }

    func child<T: CMessageDecodable>(_ p: UnsafeRawPointer, path: String,
                                     wire: UnsafeRawBufferPointer? = nil) throws -> T {
        let r = CReader(msg: p, ctx: ctx, path: path, wire: wire)
        if !(T.self is ReportsOwnUnknownFields.Type) { r.reportUnknownFields() }
        return try T(reading: r)
    }

    // MARK: unknown fields

    var unknownFields: Spec.UnknownFields {
        let base = msg.load(as: ProtobufCMessage.self)
        guard base.n_unknown_fields > 0, let u = base.unknown_fields else { return [] }
        return (0..<Int(base.n_unknown_fields)).map { i in
            let f = u[i]
            let data = f.len > 0 && f.data != nil ? Array(UnsafeBufferPointer(start: f.data, count: f.len)) : []
            return Spec.UnknownField(fieldNumber: f.tag,
                                     wireType: Spec.WireType(rawValue: UInt8(truncatingIfNeeded: f.wire_type.rawValue)) ?? .lengthDelimited,
                                     data: data)
        }
    }

    /// Records one warning listing this message's unknown fields (if any), except `except`.
    func reportUnknownFields(except: Set<UInt32> = [], context: String? = nil) {
        let fields = unknownFields.filter { !except.contains($0.fieldNumber) }
        guard !fields.isEmpty else { return }
        ctx.warnings.append("\(context ?? path) (\(messageName)): "
            + Spec.describeUnknown(fields)
            + " not in mlconv's Core ML schema; kept verbatim for re-encoding but not interpreted")
    }
}

extension Spec {
    /// "field 7 (varint), field 12 ×3 (length-delimited, 96 bytes)"
    static func describeUnknown(_ fields: UnknownFields) -> String {
        var order: [UInt32] = []
        var groups: [UInt32: (WireType, Int, Int)] = [:]
        for f in fields {
            if let g = groups[f.fieldNumber] {
                groups[f.fieldNumber] = (g.0, g.1 + 1, g.2 + f.payloadByteCount)
            } else {
                order.append(f.fieldNumber)
                groups[f.fieldNumber] = (f.wireType, 1, f.payloadByteCount)
            }
        }
        let parts = order.map { n -> String in
            let (w, count, bytes) = groups[n]!
            let times = count > 1 ? " ×\(count)" : ""
            let size = w == .lengthDelimited ? ", \(bytes) bytes" : ""
            return "field \(n)\(times) (\(w)\(size))"
        }
        return (parts.count == 1 ? "unknown " : "unknown fields: ") + parts.joined(separator: ", ") + (parts.count == 1 ? " is" : " are")
    }
}

fileprivate func fieldDescriptor(_ desc: UnsafePointer<ProtobufCMessageDescriptor>, _ id: UInt32,
                                 _ type: ProtobufCType, repeated: Bool) -> ProtobufCFieldDescriptor {
    guard let f = protobuf_c_message_descriptor_get_field(desc, id) else {
        preconditionFailure("mlconv schema/code mismatch: \(String(cString: desc.pointee.name)) has no field \(id)")
    }
    let fd = f.pointee
    precondition(fd.type == type && (fd.label == PROTOBUF_C_LABEL_REPEATED) == repeated,
                 "mlconv schema/code mismatch: \(String(cString: desc.pointee.name)).\(String(cString: fd.name)) (field \(id)) has another type")
    return fd
}

/// Owns every C allocation made while one model is encoded; frees them all on deinit.
final class CArena {
    private var blocks: [UnsafeMutableRawPointer] = []

    func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        guard let p = calloc(1, max(byteCount, 1)) else { fatalError("out of memory") }
        blocks.append(p)
        return p
    }

    func copy<T>(_ values: [T]) -> UnsafeMutableRawPointer {
        let p = allocate(byteCount: MemoryLayout<T>.stride * values.count)
        values.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return p
    }

    func cString(_ s: String, what: @autoclosure () -> String) throws -> UnsafeMutablePointer<CChar> {
        let utf8 = Array(s.utf8)
        if utf8.contains(0) {
            throw CoreMLFormatError.cannotEncode(what: what(), reason: "the string contains a NUL character")
        }
        let p = allocate(byteCount: utf8.count + 1)
        utf8.withUnsafeBytes { if $0.count > 0 { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        return p.assumingMemoryBound(to: CChar.self)
    }

    deinit { for b in blocks { free(b) } }
}

/// Write access to one C message under construction (initialised to proto3 defaults).
struct CWriter {
    let msg: UnsafeMutableRawPointer
    let arena: CArena
    let path: String

    var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        msg.load(as: ProtobufCMessage.self).descriptor
    }

    private func field(_ id: UInt32, _ type: ProtobufCType, repeated: Bool = false) -> ProtobufCFieldDescriptor {
        fieldDescriptor(descriptor, id, type, repeated: repeated)
    }

    private func markOneof(_ f: ProtobufCFieldDescriptor) {
        if f.flags & oneofFlag != 0 {
            msg.storeBytes(of: f.id, toByteOffset: Int(f.quantifier_offset), as: UInt32.self)
        }
    }

    private func store<T>(_ id: UInt32, _ type: ProtobufCType, _ value: T) {
        let f = field(id, type)
        msg.storeBytes(of: value, toByteOffset: Int(f.offset), as: T.self)
        markOneof(f)
    }

    func set(_ id: UInt32, bool v: Bool) { store(id, PROTOBUF_C_TYPE_BOOL, Int32(v ? 1 : 0)) }
    func set(_ id: UInt32, int32 v: Int32) { store(id, PROTOBUF_C_TYPE_INT32, v) }
    func set(_ id: UInt32, int64 v: Int64) { store(id, PROTOBUF_C_TYPE_INT64, v) }
    func set(_ id: UInt32, uint32 v: UInt32) { store(id, PROTOBUF_C_TYPE_UINT32, v) }
    func set(_ id: UInt32, uint64 v: UInt64) { store(id, PROTOBUF_C_TYPE_UINT64, v) }
    func set(_ id: UInt32, float v: Float) { store(id, PROTOBUF_C_TYPE_FLOAT, v) }
    func set(_ id: UInt32, double v: Double) { store(id, PROTOBUF_C_TYPE_DOUBLE, v) }
    func set(_ id: UInt32, enum v: Int32) { store(id, PROTOBUF_C_TYPE_ENUM, v) }

    func set(_ id: UInt32, string v: String) throws {
        let f = field(id, PROTOBUF_C_TYPE_STRING)
        if v.isEmpty && f.flags & oneofFlag == 0 { return }  // keep protobuf-c's shared empty string
        let p = try arena.cString(v, what: path + "." + String(cString: f.name))
        msg.storeBytes(of: UnsafePointer(p), toByteOffset: Int(f.offset), as: UnsafePointer<CChar>?.self)
        markOneof(f)
    }

    func set(_ id: UInt32, bytes v: [UInt8]) {
        let f = field(id, PROTOBUF_C_TYPE_BYTES)
        if v.isEmpty && f.flags & oneofFlag == 0 { return }
        let p = v.isEmpty ? nil : arena.copy(v).assumingMemoryBound(to: UInt8.self)
        msg.storeBytes(of: ProtobufCBinaryData(len: v.count, data: p), toByteOffset: Int(f.offset),
                       as: ProtobufCBinaryData.self)
        markOneof(f)
    }

    // MARK: repeated

    private func setArray<T>(_ id: UInt32, _ type: ProtobufCType, _ values: [T]) {
        guard !values.isEmpty else { return }
        let f = field(id, type, repeated: true)
        msg.storeBytes(of: values.count, toByteOffset: Int(f.quantifier_offset), as: Int.self)
        msg.storeBytes(of: UnsafeRawPointer(arena.copy(values)), toByteOffset: Int(f.offset), as: UnsafeRawPointer?.self)
    }
    func set(_ id: UInt32, floats v: [Float]) { setArray(id, PROTOBUF_C_TYPE_FLOAT, v) }
    func set(_ id: UInt32, doubles v: [Double]) { setArray(id, PROTOBUF_C_TYPE_DOUBLE, v) }
    func set(_ id: UInt32, int64s v: [Int64]) { setArray(id, PROTOBUF_C_TYPE_INT64, v) }
    func set(_ id: UInt32, uint64s v: [UInt64]) { setArray(id, PROTOBUF_C_TYPE_UINT64, v) }
    func set(_ id: UInt32, bools v: [Bool]) { setArray(id, PROTOBUF_C_TYPE_BOOL, v.map { Int32($0 ? 1 : 0) }) }
    func set(_ id: UInt32, int32s v: [Int32]) { setArray(id, PROTOBUF_C_TYPE_INT32, v) }
    func set(_ id: UInt32, uint32s v: [UInt32]) { setArray(id, PROTOBUF_C_TYPE_UINT32, v) }
    /// Raw values of a repeated enum field.
    func set(_ id: UInt32, enumValues v: [Int32]) { setArray(id, PROTOBUF_C_TYPE_ENUM, v) }
    func set(_ id: UInt32, strings v: [String]) throws {
        let f = field(id, PROTOBUF_C_TYPE_STRING, repeated: true)
        let ptrs = try v.enumerated().map { i, s -> UnsafePointer<CChar>? in
            UnsafePointer(try arena.cString(s, what: path + "." + String(cString: f.name) + "[\(i)]"))
        }
        setArray(id, PROTOBUF_C_TYPE_STRING, ptrs)
    }

    // MARK: messages

    private func newChild(_ f: ProtobufCFieldDescriptor) -> UnsafeMutableRawPointer {
        let desc = f.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        let p = arena.allocate(byteCount: Int(desc.pointee.sizeof_message))
        protobuf_c_message_init(desc, p)
        return p
    }

    func set<T: CMessageCodable>(_ id: UInt32, message v: T?) throws {
        guard let v else { return }
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE)
        let p = newChild(f)
        try v.write(to: CWriter(msg: p, arena: arena, path: path + "." + String(cString: f.name)))
        msg.storeBytes(of: UnsafeRawPointer(p), toByteOffset: Int(f.offset), as: UnsafeRawPointer?.self)
        markOneof(f)
    }

    func set<T: CMessageCodable>(_ id: UInt32, messages v: [T]) throws {
        guard !v.isEmpty else { return }
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE, repeated: true)
        var ptrs: [UnsafeRawPointer?] = []
        ptrs.reserveCapacity(v.count)
        for (i, e) in v.enumerated() {
            let p = newChild(f)
            try e.write(to: CWriter(msg: p, arena: arena, path: path + "." + String(cString: f.name) + "[\(i)]"))
            ptrs.append(UnsafeRawPointer(p))
        }
        setArray(id, PROTOBUF_C_TYPE_MESSAGE, ptrs)
    }

    /// Sets a `map<string, Message>` field; entries are written in ascending key order, so the
    /// encoding of a dictionary is deterministic.
    func set<V: CMessageCodable>(_ id: UInt32, messageMap v: [String: V]) throws {
        guard !v.isEmpty else { return }
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE, repeated: true)
        var ptrs: [UnsafeRawPointer?] = []
        ptrs.reserveCapacity(v.count)
        for key in v.keys.sorted() {
            guard let value = v[key] else { continue }
            let p = newChild(f)
            let entry = CWriter(msg: p, arena: arena, path: path + "." + String(cString: f.name) + "[\"\(key)\"]")
            // Keys are written even when empty: protobuf-c omits empty proto3 strings anyway.
            try entry.set(1, string: key)
            try entry.set(2, message: value)
            ptrs.append(UnsafeRawPointer(p))
        }
        setArray(id, PROTOBUF_C_TYPE_MESSAGE, ptrs)
    }

    /// Sets field `id` to a new sub-message filled by `body` (for labelled enum payloads).
    /// Sets field `id` to a new empty sub-message (a parameterless oneof member).
    func sub(_ id: UInt32) { sub(id) { _ in } }

    func sub(_ id: UInt32, _ body: (CWriter) throws -> Void) rethrows {
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE)
        let p = newChild(f)
        try body(CWriter(msg: p, arena: arena, path: path + "." + String(cString: f.name)))
        msg.storeBytes(of: UnsafeRawPointer(p), toByteOffset: Int(f.offset), as: UnsafeRawPointer?.self)
        markOneof(f)
    }

    /// Sets field `id` to an otherwise empty message carrying `content` as unknown fields.
    func set(_ id: UInt32, opaque content: Spec.UnknownFields) {
        let f = field(id, PROTOBUF_C_TYPE_MESSAGE)
        let p = newChild(f)
        CWriter(msg: p, arena: arena, path: path).setUnknownFields(content)
        msg.storeBytes(of: UnsafeRawPointer(p), toByteOffset: Int(f.offset), as: UnsafeRawPointer?.self)
        markOneof(f)
    }

    func setUnknownFields(_ fields: Spec.UnknownFields) {
        guard !fields.isEmpty else { return }
        let arr = arena.allocate(byteCount: MemoryLayout<ProtobufCMessageUnknownField>.stride * fields.count)
            .bindMemory(to: ProtobufCMessageUnknownField.self, capacity: fields.count)
        for (i, u) in fields.enumerated() {
            let data = u.data.isEmpty ? nil : arena.copy(u.data).assumingMemoryBound(to: UInt8.self)
            arr[i] = ProtobufCMessageUnknownField(tag: u.fieldNumber,
                                                  wire_type: ProtobufCWireType(rawValue: UInt32(u.wireType.rawValue)),
                                                  len: u.data.count, data: data)
        }
        let base = msg.assumingMemoryBound(to: ProtobufCMessage.self)
        base.pointee.n_unknown_fields = UInt32(fields.count)
        base.pointee.unknown_fields = arr
    }
}
