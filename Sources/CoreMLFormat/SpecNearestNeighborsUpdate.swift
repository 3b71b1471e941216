// Appending examples to a k-nearest-neighbours classifier (the on-device update of
// `kNearestNeighborsClassifier`, whose content the model keeps verbatim).
import CCoreMLProto

extension Spec.Model {
    /// The labels of samples appended to a k-nearest-neighbours classifier; their type must be
    /// the model's (`stringClassLabels` or `int64ClassLabels`).
    public enum NearestNeighborLabels: Equatable, Sendable {
        case strings([String])
        case int64s([Int64])
        public var count: Int {
            switch self {
            case let .strings(s): return s.count
            case let .int64s(v): return v.count
            }
        }
    }

    /// Appends `samples` (each `numberOfDimensions` floats) and their `labels` to this
    /// `kNearestNeighborsClassifier`: its `nearestNeighborsIndex.floatSamples` and class-label
    /// vector grow (Core ML's semantics: the samples and labels are parallel lists); every other
    /// field keeps its original bytes.
    ///
    /// - Throws: `CoreMLFormatError.invalidValue` when the model is not a kNN classifier, its
    ///   content does not decode, the label type differs from the model's, a sample has the wrong
    ///   dimension, or `samples` and `labels` differ in count.
    public mutating func appendNearestNeighborSamples(_ samples: [[Float]], labels: NearestNeighborLabels,
                                                      file: String = "<model>") throws {
        let what = "kNearestNeighborsClassifier update"
        let labelTypeName: String
        if case .strings = labels { labelTypeName = "strings" } else { labelTypeName = "int64 values" }
        guard case let .other(kind, content) = type, kind == .kNearestNeighborsClassifier,
              case let .kNearestNeighborsClassifier(knn)? = try classicalParameters(file: file) else {
            throw CoreMLFormatError.invalidValue(file: file, what: what, message: "the model is a \(self.kind?.name ?? "model without type"), not a kNearestNeighborsClassifier")
        }
        guard samples.count == labels.count else {
            throw CoreMLFormatError.invalidValue(file: file, what: what, message: "\(samples.count) samples but \(labels.count) labels")
        }
        let dims = Int(knn.nearestNeighborsIndex?.numberOfDimensions ?? 0)
        if let bad = samples.firstIndex(where: { $0.count != dims }) {
            throw CoreMLFormatError.invalidValue(file: file, what: what,
                message: "sample \(bad) has \(samples[bad].count) values; the index has \(dims) dimensions")
        }
        switch (knn.classLabels, labels) {
        case (.stringClassLabels?, .strings), (.int64ClassLabels?, .int64s): break
        case (nil, .strings) where knn.nearestNeighborsIndex?.floatSamples.isEmpty ?? true: break
        case (nil, .int64s) where knn.nearestNeighborsIndex?.floatSamples.isEmpty ?? true: break
        default:
            throw CoreMLFormatError.invalidValue(file: file, what: what,
                message: "the new labels are \(labelTypeName) but the model's class labels are of another type")
        }
        guard let f = protobuf_c_message_descriptor_get_field(ccoreml_model_descriptor(), kind.rawValue),
              let d = f.pointee.descriptor else {
            preconditionFailure("mlconv schema/code mismatch: Model field 404 must be KNearestNeighborsClassifier")
        }
        let desc = d.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        func sub(_ parent: UnsafePointer<ProtobufCMessageDescriptor>, _ id: UInt32) -> UnsafePointer<ProtobufCMessageDescriptor> {
            guard let f = protobuf_c_message_descriptor_get_field(parent, id), let d = f.pointee.descriptor else {
                preconditionFailure("mlconv schema/code mismatch: kNN field \(id)")
            }
            return d.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        }
        // The new entries, encoded by protobuf-c as fields of the messages they extend: floatSamples
        // of NearestNeighborsIndex, vector of the label vector. A repeated field's entries may
        // follow the existing ones anywhere in the message, so appending them to the kept bytes of
        // each message extends the lists and leaves every other field (numberOfDimensions, index
        // type, distance) byte-for-byte as it was.
        let labelField: UInt32
        let labelEntries: Spec.UnknownFields
        switch labels {
        case let .strings(s):
            labelField = 100
            labelEntries = try Self.encodeFields(sub(desc, 100)) { try $0.set(1, strings: s) }
        case let .int64s(v):
            labelField = 101
            labelEntries = try Self.encodeFields(sub(desc, 101)) { $0.set(1, int64s: v) }
        }
        let sampleEntries = try Self.encodeFields(sub(desc, 1)) { try $0.set(2, messages: samples.map(FloatVectorMessage.init)) }
        func payloadFields(_ id: UInt32) throws -> Spec.UnknownFields {
            var out: Spec.UnknownFields = []
            for field in content where field.fieldNumber == id && field.wireType == .lengthDelimited {
                guard let parts = Array(field.data.suffix(field.payloadByteCount)).withUnsafeBytes({ WireBytes.split($0) }) else {
                    throw CoreMLFormatError.invalidValue(file: file, what: what, message: "field \(id) of the kNN content does not decode")
                }
                out += parts
            }
            return out
        }
        let indexFields = try payloadFields(1) + sampleEntries
        let labelFields = try payloadFields(labelField) + labelEntries
        // The two rebuilt fields with their keys and lengths (protobuf-c packs them).
        let rebuilt = try Self.encodeFields(desc) { w in
            w.set(1, opaque: indexFields)
            w.set(labelField, opaque: labelFields)
        }
        var fields: Spec.UnknownFields = []
        var placed = false
        for field in content {
            if field.fieldNumber == 1 || field.fieldNumber == labelField {
                if !placed { fields += rebuilt; placed = true }
                continue
            }
            fields.append(field)
        }
        if !placed { fields += rebuilt }
        type = .other(kind: kind, content: fields)
    }

    /// The fields `body` sets on an empty message of `desc`, as protobuf-c encodes them.
    private static func encodeFields(_ desc: UnsafePointer<ProtobufCMessageDescriptor>,
                                     _ body: (CWriter) throws -> Void) throws -> Spec.UnknownFields {
        let arena = CArena()
        let msg = arena.allocate(byteCount: Int(desc.pointee.sizeof_message))
        protobuf_c_message_init(desc, msg)
        try body(CWriter(msg: msg, arena: arena, path: String(cString: desc.pointee.name)))
        let bytes = pack(msg)
        return bytes.withUnsafeBytes { WireBytes.split($0) } ?? []
    }

    private static func pack(_ msg: UnsafeMutableRawPointer) -> [UInt8] {
        let cmsg = msg.assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(cmsg)
        guard size > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: size)
        let n = out.withUnsafeMutableBufferPointer { protobuf_c_message_pack(cmsg, $0.baseAddress!) }
        return Array(out.prefix(n))
    }
}

/// `FloatVector` for the encoder.
private struct FloatVectorMessage: CMessageCodable {
    var values: [Float]
    init(_ values: [Float]) { self.values = values }
    init(reading r: CReader) throws { values = r.floats(1) }
    func write(to w: CWriter) throws { w.set(1, floats: values) }
}
