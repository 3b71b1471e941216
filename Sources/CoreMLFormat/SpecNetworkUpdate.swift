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
        guard let nn = protobuf_c_message_descriptor_get_field(ccoreml_model_descriptor(), 500)?.pointee.descriptor,
              let f = protobuf_c_message_descriptor_get_field(nn.assumingMemoryBound(to: ProtobufCMessageDescriptor.self), 10),
              let d = f.pointee.descriptor else {
            preconditionFailure("mlconv schema/code mismatch: NeuralNetwork field 10 must be NetworkUpdateParameters")
        }
        let desc = d.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
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
}
