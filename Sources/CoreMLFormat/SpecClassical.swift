// Typed access to the classical (non neural network) model kinds. A decoded model keeps their
// content verbatim (`Spec.ModelType.other(kind:content:)`, re-encoded byte-for-byte); this
// decodes that content with protobuf-c and the generated readers of Generated/*.swift.
import CCoreMLProto

extension Spec.Model {
    /// The typed parameters of a classical model kind (GLM, SVM, tree ensemble, kNN,
    /// item-similarity recommender, one-hot encoder, imputer, feature/dict vectorizer, scaler,
    /// categorical mapping, normalizer, array feature extractor, non-maximum suppression,
    /// identity, Bayesian probit regressor, class-confidence thresholding), decoded from the
    /// content this model keeps verbatim. Pipeline stages are models too: call this on each of
    /// `pipelineModels`.
    ///
    /// - Parameter file: names the model in errors (e.g. its path and pipeline stage).
    /// - Returns: nil when the model's kind is not a classical one (neural networks, pipelines,
    ///   ML programs, Apple-proprietary kinds, no kind).
    /// - Throws: `CoreMLFormatError.invalidValue` naming the model kind and the first wire-format
    ///   problem (byte offset, field) when the content is not a valid message of that kind.
    public func classicalParameters(file: String = "<model>") throws -> Spec.ClassicalParameters? {
        guard case let .other(kind, content) = type, Spec.ClassicalParameters.kinds.contains(kind) else {
            return nil
        }
        return try Spec.ClassicalParameters.decode(kind: kind, content: content, file: file)
    }
}

extension Spec.ClassicalParameters {
    /// Decodes the content (the model's `Model.Type` member message, as kept in
    /// `Spec.ModelType.other`) of a classical model kind.
    ///
    /// - Throws: `CoreMLFormatError.invalidValue` when `kind` is not a classical kind or the
    ///   content is not a valid message of that kind.
    public static func decode(kind: Spec.ModelKind, content: Spec.UnknownFields,
                              file: String = "<model>") throws -> Spec.ClassicalParameters {
        try decode(kind: kind, bytes: WireBytes.join(content), file: file)
    }

    /// Decodes the serialized message of a classical model kind (e.g. the bytes of a
    /// `TreeEnsembleClassifier` message). See `decode(kind:content:file:)`.
    public static func decode(kind: Spec.ModelKind, bytes: [UInt8],
                              file: String = "<model>") throws -> Spec.ClassicalParameters {
        let what = "model kind \(kind.name) (Model field \(kind.rawValue))"
        guard kinds.contains(kind),
              let f = protobuf_c_message_descriptor_get_field(ccoreml_model_descriptor(), kind.rawValue),
              let d = f.pointee.descriptor else {
            throw CoreMLFormatError.invalidValue(
                file: file, what: what,
                message: "is not a classical model kind; expected one of "
                    + kinds.map(\.name).joined(separator: ", "))
        }
        let desc = d.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        let typeName = String(cString: desc.pointee.name)
        return try bytes.withUnsafeBytes { buf -> Spec.ClassicalParameters in
            if let problem = WireScan.problem(buf, message: desc, path: kind.name) {
                throw CoreMLFormatError.invalidValue(
                    file: file, what: what,
                    message: "content (\(buf.count) bytes) is not a valid \(typeName) message: \(problem)")
            }
            let base = buf.baseAddress?.assumingMemoryBound(to: UInt8.self)
            guard let msg = protobuf_c_message_unpack(desc, nil, buf.count, base) else {
                throw CoreMLFormatError.invalidValue(
                    file: file, what: what,
                    message: "content (\(buf.count) bytes) is not a valid \(typeName) message: protobuf-c "
                        + "rejected it (a packed repeated field whose length is not a whole number of elements?)")
            }
            defer { protobuf_c_message_free_unpacked(msg, nil) }
            let r = CReader(msg: UnsafeRawPointer(msg), ctx: DecodeContext(), path: kind.name)
            guard let value = try read(kind: kind, r) else {
                throw CoreMLFormatError.invalidValue(file: file, what: what, message: "has no generated reader")
            }
            return value
        }
    }
}
