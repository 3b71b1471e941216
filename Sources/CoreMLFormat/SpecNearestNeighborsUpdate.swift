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
    /// vector grow, every other field is kept. The new content is protobuf-c's encoding of the
    /// merged message (Core ML's semantics: the samples and labels are parallel lists).
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
        // The additions as a message of their own: index.floatSamples and the label vector.
        let arena = CArena()
        let add = arena.allocate(byteCount: Int(desc.pointee.sizeof_message))
        protobuf_c_message_init(desc, add)
        let w = CWriter(msg: add, arena: arena, path: "kNearestNeighborsClassifier")
        try w.sub(1) { index in try index.set(2, messages: samples.map(FloatVectorMessage.init)) }
        switch labels {
        case let .strings(s): try w.sub(100) { try $0.set(1, strings: s) }
        case let .int64s(v): w.sub(101) { $0.set(1, int64s: v) }
        }
        let addBytes = Self.pack(add)
        // Concatenated messages merge (repeated fields append); protobuf-c unpacks the merge and
        // packs it canonically.
        let merged = WireBytes.join(content) + addBytes
        let packed: [UInt8] = try merged.withUnsafeBytes { buf in
            guard let m = protobuf_c_message_unpack(desc, nil, buf.count, buf.baseAddress?.assumingMemoryBound(to: UInt8.self)) else {
                throw CoreMLFormatError.invalidValue(file: file, what: what, message: "the model's kNN content does not decode")
            }
            defer { protobuf_c_message_free_unpacked(m, nil) }
            return Self.pack(UnsafeMutableRawPointer(m))
        }
        guard let fields = packed.withUnsafeBytes({ WireBytes.split($0) }) else {
            throw CoreMLFormatError.invalidValue(file: file, what: what, message: "the merged kNN content does not re-split")
        }
        type = .other(kind: kind, content: fields)
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
