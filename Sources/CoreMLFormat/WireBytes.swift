// Exact wire bytes of the content mlconv keeps verbatim (the `Spec.ModelType.other` model kinds).
//
// Since mlconv's schema declares the classical model kinds in full, protobuf-c parses their
// fields into C structs; re-packing those would give protobuf-c's canonical encoding, which is
// not always the original bytes (map entries with default values, for one). So a model's
// `.other` content is cut from the original bytes instead: protobuf-c unpacks the enclosing
// message's bytes with the descriptor of an empty message (`Identity`), which leaves every field
// an unknown field holding its exact bytes. `CReader.wire` carries a message's bytes down the
// `KeepsWireBytes` path (Model → pipeline → Model …).
import CCoreMLProto

enum WireBytes {
    /// The descriptor of `CoreML.Specification.Identity` (field 900 of `Model`), which has no
    /// fields: unpacking any message with it keeps every field as an unknown field.
    static let emptyDescriptor: UnsafePointer<ProtobufCMessageDescriptor> = {
        guard let f = protobuf_c_message_descriptor_get_field(ccoreml_model_descriptor(), 900),
              let d = f.pointee.descriptor?.assumingMemoryBound(to: ProtobufCMessageDescriptor.self),
              d.pointee.n_fields == 0 else {
            preconditionFailure("mlconv schema/code mismatch: Model field 900 must be the empty Identity message")
        }
        return d
    }()

    /// Byte count of the length varint at the start of a length-delimited unknown field's data.
    static func lengthPrefixCount(_ data: UnsafePointer<UInt8>, _ len: Int) -> Int {
        var i = 0
        while i < len, data[i] & 0x80 != 0 { i += 1 }
        return min(i + 1, len)
    }

    /// Every top-level field of `bytes` (a protobuf message) as an unknown field, in wire order;
    /// nil when protobuf-c rejects the bytes.
    static func split(_ bytes: UnsafeRawBufferPointer) -> Spec.UnknownFields? {
        if bytes.isEmpty { return [] }
        guard let base = bytes.baseAddress else { return nil }
        guard let m = protobuf_c_message_unpack(emptyDescriptor, nil, bytes.count,
                                                base.assumingMemoryBound(to: UInt8.self)) else { return nil }
        defer { protobuf_c_message_free_unpacked(m, nil) }
        return CReader(msg: UnsafeRawPointer(m), ctx: DecodeContext(), path: "").unknownFields
    }

    /// Packs `fields` as the content of one message (keys followed by the kept bytes).
    static func join(_ fields: Spec.UnknownFields) -> [UInt8] {
        let arena = CArena()
        let msg = arena.allocate(byteCount: Int(emptyDescriptor.pointee.sizeof_message))
        protobuf_c_message_init(emptyDescriptor, msg)
        CWriter(msg: msg, arena: arena, path: "").setUnknownFields(fields)
        let cmsg = msg.assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(cmsg)
        guard size > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: size)
        let written = out.withUnsafeMutableBufferPointer { protobuf_c_message_pack(cmsg, $0.baseAddress!) }
        return Array(out.prefix(written))
    }
}

extension CReader {
    /// The payloads (without key and length) of every length-delimited occurrence of field `id`
    /// in this message's wire bytes, in wire order; nil when the wire bytes are not known.
    /// The buffers stay valid until the decode ends (`DecodeContext` owns them).
    func wireOccurrences(_ id: UInt32) -> [UnsafeRawBufferPointer]? {
        guard let wire, let base = wire.baseAddress, !wire.isEmpty else { return wire == nil ? nil : [] }
        guard let m = protobuf_c_message_unpack(WireBytes.emptyDescriptor, nil, wire.count,
                                                base.assumingMemoryBound(to: UInt8.self)) else { return nil }
        ctx.retain(m)
        let n = Int(m.pointee.n_unknown_fields)
        guard n > 0, let u = m.pointee.unknown_fields else { return [] }
        var out: [UnsafeRawBufferPointer] = []
        for i in 0..<n where u[i].tag == id && u[i].wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED {
            guard let d = u[i].data else { out.append(UnsafeRawBufferPointer(start: nil, count: 0)); continue }
            let skip = WireBytes.lengthPrefixCount(d, u[i].len)
            out.append(UnsafeRawBufferPointer(start: d + skip, count: u[i].len - skip))
        }
        return out
    }

    /// The content of sub-message field `id` as unknown fields, byte-for-byte as in the input
    /// when the wire bytes are known (several occurrences are concatenated, which protobuf reads
    /// as one merged message); otherwise protobuf-c's re-encoding of the parsed sub-message.
    /// nil when the field is absent.
    func verbatimContent(_ id: UInt32) -> Spec.UnknownFields? {
        if let all = wireOccurrences(id), !all.isEmpty {
            var out: Spec.UnknownFields = []
            var ok = true
            for payload in all {
                guard let fields = WireBytes.split(payload) else { ok = false; break }
                out += fields
            }
            if ok { return out }
        }
        guard let f = protobuf_c_message_descriptor_get_field(descriptor, id),
              f.pointee.type == PROTOBUF_C_TYPE_MESSAGE, f.pointee.label != PROTOBUF_C_LABEL_REPEATED else {
            return nil
        }
        if f.pointee.flags & PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue != 0,
           msg.load(fromByteOffset: Int(f.pointee.quantifier_offset), as: UInt32.self) != id {
            return nil
        }
        guard let sub = msg.load(fromByteOffset: Int(f.pointee.offset), as: UnsafeRawPointer?.self) else { return nil }
        let cmsg = sub.assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(cmsg)
        guard size > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: size)
        let written = bytes.withUnsafeMutableBufferPointer { protobuf_c_message_pack(cmsg, $0.baseAddress!) }
        return bytes.prefix(written).withUnsafeBytes { WireBytes.split($0) } ?? []
    }
}
