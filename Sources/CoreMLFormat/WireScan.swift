// Explains why bytes are not a Core ML model: protobuf-c only says "failed", so on failure we
// walk the protobuf wire format ourselves, guided by the same descriptors, and report the first
// problem with its byte offset and message path.
import CCoreMLProto

enum WireScan {
    /// Deepest message nesting accepted (real models need < 20; this bounds protobuf-c's
    /// recursion on hostile input).
    static let maxDepth = 100

    /// The first reason why `bytes` cannot be a Core ML model (a known non-model file type, or a
    /// wire-format problem with its byte offset and message path); nil when the wire structure
    /// is sound. Runs before protobuf-c sees the bytes.
    static func problem(_ bytes: UnsafeRawBufferPointer) -> String? {
        if bytes.isEmpty { return "an empty file (0 bytes)" }
        if let kind = sniff(bytes) { return kind + "; first bytes " + preview(bytes) }
        var scanner = Scanner(bytes: bytes)
        return scanner.scan(ccoreml_model_descriptor(), 0, bytes.count, "Model", depth: 0)
    }

    /// The first wire-format problem of `bytes` read as a `message` (offsets relative to
    /// `bytes`, fields named under `path`); nil when the wire structure is sound.
    static func problem(_ bytes: UnsafeRawBufferPointer, message: UnsafePointer<ProtobufCMessageDescriptor>,
                        path: String) -> String? {
        var scanner = Scanner(bytes: bytes)
        return scanner.scan(message, 0, bytes.count, path, depth: 0)
    }

    /// A human-readable description of why protobuf-c rejected `bytes`.
    static func diagnose(_ bytes: UnsafeRawBufferPointer) -> String {
        problem(bytes) ?? ("data whose wire structure looks valid but that protobuf-c rejected (an "
            + "invalid packed field or nested message); first bytes " + preview(bytes))
    }

    /// Recognises common non-model files by their first bytes.
    static func sniff(_ b: UnsafeRawBufferPointer) -> String? {
        func starts(_ s: [UInt8]) -> Bool { b.count >= s.count && zip(b, s).allSatisfy { $0 == $1 } }
        if starts(Array("version https://git-lfs".utf8)) {
            return "a Git LFS pointer file, not the model itself (fetch it with `git lfs pull`)"
        }
        if starts([0x50, 0x4b, 0x03, 0x04]) { return "a ZIP archive (unzip it first; it may hold an .mlpackage)" }
        if starts([0x89, 0x48, 0x44, 0x46]) { return "an HDF5 file (a Keras .h5 model? use the Keras converter)" }
        if starts(Array("book".utf8)) { return "a macOS alias/bookmark file ('book' header), not the model it points to" }
        if starts(Array("bplist".utf8)) { return "a binary property list" }
        if starts([0x7b]) || starts([0xef, 0xbb, 0xbf, 0x7b]) { return "JSON text (a Manifest.json or a Keras architecture file?)" }
        if starts(Array("<?xml".utf8)) || starts(Array("<!DOCTYPE".utf8)) || starts(Array("<html".utf8)) {
            return "XML/HTML text (a download error page?)"
        }
        return nil
    }

    static func preview(_ b: UnsafeRawBufferPointer) -> String {
        let head = Array(b.prefix(16))
        let hex = head.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined(separator: " ")
        let ascii = String(head.map { (0x20..<0x7f).contains($0) ? Character(UnicodeScalar($0)) : "." })
        return "[\(hex)] \"\(ascii)\""
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer

        func varint(_ pos: inout Int, _ end: Int) -> UInt64? {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while pos < end {
                let byte = bytes[pos]
                pos += 1
                if shift < 64 { v |= UInt64(byte & 0x7f) << shift }
                if byte & 0x80 == 0 { return v }
                shift += 7
                if shift >= 70 { return nil }
            }
            return nil
        }

        static func expectedWireTypes(_ f: ProtobufCFieldDescriptor) -> Set<UInt64> {
            let t = f.type
            var element: UInt64
            if t == PROTOBUF_C_TYPE_STRING || t == PROTOBUF_C_TYPE_BYTES || t == PROTOBUF_C_TYPE_MESSAGE {
                element = 2
            } else if t == PROTOBUF_C_TYPE_FLOAT || t == PROTOBUF_C_TYPE_FIXED32 || t == PROTOBUF_C_TYPE_SFIXED32 {
                element = 5
            } else if t == PROTOBUF_C_TYPE_DOUBLE || t == PROTOBUF_C_TYPE_FIXED64 || t == PROTOBUF_C_TYPE_SFIXED64 {
                element = 1
            } else {
                element = 0
            }
            return f.label == PROTOBUF_C_LABEL_REPEATED ? [element, 2] : [element]
        }

        static let wireNames: [UInt64: String] = [0: "varint", 1: "fixed64", 2: "length-delimited",
                                                  3: "start-group", 4: "end-group", 5: "fixed32"]

        mutating func scan(_ desc: UnsafePointer<ProtobufCMessageDescriptor>, _ start: Int, _ end: Int,
                           _ path: String, depth: Int) -> String? {
            if depth > WireScan.maxDepth {
                return "messages nested more than \(WireScan.maxDepth) deep at byte offset \(start) (\(path))"
            }
            var pos = start
            while pos < end {
                let keyAt = pos
                guard let key = varint(&pos, end) else {
                    return "a truncated field key at byte offset \(keyAt) inside \(path) (file truncated?)"
                }
                let number = key >> 3
                let wire = key & 7
                if number == 0 || number > 536_870_911 {
                    return "an invalid field number \(number) at byte offset \(keyAt) inside \(path) "
                        + "(bytes \(WireScan.preview(UnsafeRawBufferPointer(rebasing: bytes[keyAt..<min(end, keyAt + 16)]))))"
                }
                let field = protobuf_c_message_descriptor_get_field(desc, UInt32(number))?.pointee
                let name = field.map { path + "." + String(cString: $0.name) } ?? "\(path) field \(number)"
                if let field, !Self.expectedWireTypes(field).contains(wire) {
                    return "\(name) (field \(number)) at byte offset \(keyAt) has wire type "
                        + "\(Self.wireNames[wire] ?? String(wire)) but the Core ML schema declares "
                        + Self.expectedWireTypes(field).sorted().map { Self.wireNames[$0]! }.joined(separator: " or ")
                }
                switch wire {
                case 0:
                    guard varint(&pos, end) != nil else {
                        return "a truncated varint for \(name) at byte offset \(keyAt) (file truncated?)"
                    }
                case 1, 5:
                    let size = wire == 1 ? 8 : 4
                    guard end - pos >= size else {
                        return "\(name) at byte offset \(keyAt) needs \(size) bytes but only \(end - pos) remain (file truncated?)"
                    }
                    pos += size
                case 2:
                    let lenAt = pos
                    guard let len = varint(&pos, end) else {
                        return "a truncated length for \(name) at byte offset \(lenAt) (file truncated?)"
                    }
                    guard len <= UInt64(end - pos) else {
                        return "\(name) at byte offset \(keyAt) declares \(len) bytes but only \(end - pos) remain "
                            + "in \(path == "Model" ? "the file" : path) (file truncated or corrupted)"
                    }
                    let subEnd = pos + Int(len)
                    if let field, field.type == PROTOBUF_C_TYPE_MESSAGE, let sub = field.descriptor {
                        let subDesc = sub.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                        if let problem = scan(subDesc, pos, subEnd, name, depth: depth + 1) { return problem }
                    }
                    pos = subEnd
                default:
                    return "wire type \(Self.wireNames[wire] ?? String(wire)) (\(wire)) for \(name) at byte offset "
                        + "\(keyAt), which Core ML files never use"
                }
            }
            return nil
        }
    }
}
