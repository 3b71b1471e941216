// Typed access to a neural network's on-device training settings (NetworkUpdateParameters),
// which the network keeps verbatim (`Spec.NeuralNetwork.updateParams`).
import CCoreMLProto

extension Spec.NeuralNetwork {
    /// The decoded `updateParams` (loss layers, optimizer, epochs, shuffle, seed; types generated
    /// by Scripts/gen-swift-spec into Generated/NetworkUpdate.swift); nil when the network has none.
    ///
    /// - Parameter file: names the model in errors.
    /// - Throws: `CoreMLFormatError.invalidValue` when the kept content is not a valid
    ///   `NetworkUpdateParameters` message.
    public func updateParameters(file: String = "<model>") throws -> Spec.NetworkUpdateParameters? {
        guard let content = updateParams else { return nil }
        let bytes = WireBytes.join(content)
        let desc = Self.updateParametersDescriptor
        return try bytes.withUnsafeBytes { buf -> Spec.NetworkUpdateParameters in
            if buf.isEmpty { return Spec.NetworkUpdateParameters() }
            if let problem = WireScan.problem(buf, message: desc, path: "updateParams") {
                throw CoreMLFormatError.invalidValue(file: file, what: "neural network updateParams",
                                                     message: "is not a valid NetworkUpdateParameters message: \(problem)")
            }
            guard let msg = protobuf_c_message_unpack(desc, nil, buf.count, buf.baseAddress?.assumingMemoryBound(to: UInt8.self)) else {
                throw CoreMLFormatError.invalidValue(file: file, what: "neural network updateParams",
                                                     message: "is not a valid NetworkUpdateParameters message (protobuf-c rejected it)")
            }
            defer { protobuf_c_message_free_unpacked(msg, nil) }
            return try Spec.NetworkUpdateParameters(reading: CReader(msg: UnsafeRawPointer(msg), ctx: DecodeContext(),
                                                                     path: "updateParams"))
        }
    }

    /// Replaces `updateParams` with `parameters`, encoded by protobuf-c (field by field, through
    /// the generated encoders of Generated/NetworkUpdate.swift). Only call it to change the update
    /// parameters: a network read from a file otherwise keeps their original bytes.
    ///
    /// - Throws: `CoreMLFormatError.cannotEncode` when a name holds a NUL character.
    public mutating func setUpdateParameters(_ parameters: Spec.NetworkUpdateParameters) throws {
        let desc = Self.updateParametersDescriptor
        let arena = CArena()
        let msg = arena.allocate(byteCount: Int(desc.pointee.sizeof_message))
        protobuf_c_message_init(desc, msg)
        try parameters.write(to: CWriter(msg: msg, arena: arena, path: "updateParams"))
        let cmsg = msg.assumingMemoryBound(to: ProtobufCMessage.self)
        var bytes = [UInt8](repeating: 0, count: protobuf_c_message_get_packed_size(cmsg))
        let n = bytes.withUnsafeMutableBufferPointer { buf -> Int in
            guard let base = buf.baseAddress else { return 0 }
            return protobuf_c_message_pack(cmsg, base)
        }
        // Our own encoding of a message protobuf-c just packed: it always splits into fields.
        updateParams = Array(bytes.prefix(n)).withUnsafeBytes { WireBytes.split($0) } ?? []
    }

    /// `NeuralNetwork.updateParams`' message descriptor (NetworkUpdateParameters).
    private static var updateParametersDescriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        guard let nn = protobuf_c_message_descriptor_get_field(ccoreml_model_descriptor(), 500)?.pointee.descriptor,
              let f = protobuf_c_message_descriptor_get_field(nn.assumingMemoryBound(to: ProtobufCMessageDescriptor.self), 10),
              let d = f.pointee.descriptor else {
            preconditionFailure("mlconv schema/code mismatch: NeuralNetwork field 10 must be NetworkUpdateParameters")
        }
        return d.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
    }
}
