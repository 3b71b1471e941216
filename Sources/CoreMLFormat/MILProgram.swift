// ML programs (the `mlProgram` model kind, Model field 502): typed access to the MIL program a
// model keeps verbatim, and the way back. The message types themselves are generated from
// proto/MIL.proto into Generated/MIL.swift (`Spec.MILSpec.*`).
import CCoreMLProto

extension Spec {
    /// Namespace of the ML program messages (`CoreML.Specification.MILSpec`, MIL.proto):
    /// `Program`, `Function`, `Block`, `Operation`, `Argument`, `NamedValueType`, `ValueType`,
    /// `TensorType`, `ListType`, `TupleType`, `DictionaryType`, `StateType`, `Dimension`,
    /// `Value`, `TensorValue`, `TupleValue`, `ListValue`, `DictionaryValue`, `DataType`.
    public enum MILSpec {
        /// Fields outside mlconv's schema, as everywhere in `Spec`.
        public typealias UnknownFields = Spec.UnknownFields
    }
}

extension Spec.MILSpec {
    /// The protobuf-c descriptor of `Program` (the message type of Model field 502).
    static let programDescriptor: UnsafePointer<ProtobufCMessageDescriptor> = {
        guard let f = protobuf_c_message_descriptor_get_field(ccoreml_model_descriptor(), Spec.ModelKind.mlProgram.rawValue),
              let d = f.pointee.descriptor?.assumingMemoryBound(to: ProtobufCMessageDescriptor.self) else {
            preconditionFailure("mlconv schema/code mismatch: Model field 502 must be the MILSpec.Program message")
        }
        return d
    }()
}

extension Spec.MILSpec.Program {
    /// Decodes a serialized `Program` message.
    ///
    /// - Parameters:
    ///   - bytes: the message bytes (what `Model.mlProgram` holds).
    ///   - file: names the model in errors.
    /// - Returns: the program and the decode warnings (fields outside mlconv's schema, by path).
    /// - Throws: `CoreMLFormatError.invalidValue` naming the first wire-format problem (byte
    ///   offset, field) when the bytes are not a valid `Program` message.
    public static func decode(_ bytes: [UInt8], file: String = "<model>") throws -> (program: Spec.MILSpec.Program, warnings: [String]) {
        let desc = Spec.MILSpec.programDescriptor
        return try bytes.withUnsafeBytes { buf in
            if let problem = WireScan.problem(buf, message: desc, path: "mlProgram") {
                throw CoreMLFormatError.invalidValue(
                    file: file, what: "ML program (Model.mlProgram)",
                    message: "content (\(buf.count) bytes) is not a valid MILSpec.Program message: \(problem)")
            }
            guard !buf.isEmpty, let base = buf.baseAddress else { return (Spec.MILSpec.Program(), []) }
            guard let msg = protobuf_c_message_unpack(desc, nil, buf.count, base.assumingMemoryBound(to: UInt8.self)) else {
                throw CoreMLFormatError.invalidValue(
                    file: file, what: "ML program (Model.mlProgram)",
                    message: "content (\(buf.count) bytes) is not a valid MILSpec.Program message: protobuf-c "
                        + "rejected it (a packed repeated field whose length is not a whole number of elements?)")
            }
            defer { protobuf_c_message_free_unpacked(msg, nil) }
            let ctx = DecodeContext()
            let r = CReader(msg: UnsafeRawPointer(msg), ctx: ctx, path: "mlProgram")
            r.reportUnknownFields()
            let program = try Spec.MILSpec.Program(reading: r)
            return (program, ctx.warnings)
        }
    }

    /// Serializes the program (map entries in ascending key order).
    ///
    /// - Throws: `CoreMLFormatError.cannotEncode` for a string that contains NUL.
    public func encode() throws -> [UInt8] {
        let arena = CArena()
        let desc = Spec.MILSpec.programDescriptor
        let msg = arena.allocate(byteCount: Int(desc.pointee.sizeof_message))
        protobuf_c_message_init(desc, msg)
        try write(to: CWriter(msg: msg, arena: arena, path: "mlProgram"))
        let cmsg = msg.assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(cmsg)
        guard size > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: size)
        let written = out.withUnsafeMutableBufferPointer { protobuf_c_message_pack(cmsg, $0.baseAddress!) }
        return Array(out.prefix(written))
    }
}

extension Spec.Model {
    /// The ML program of an `mlProgram` model, decoded from the content the model keeps
    /// verbatim (`Spec.ModelType.other(kind: .mlProgram, …)`); nil for every other model kind.
    /// Blob-file values (`Value.blobFileValue`) name a file relative to the package
    /// (`@model_path/weights/weight.bin`); read them with `MILBlobFile`.
    ///
    /// - Parameter file: names the model in errors.
    /// - Throws: `CoreMLFormatError.invalidValue` when the content is not a valid `Program`.
    public func mlProgram(file: String = "<model>") throws -> Spec.MILSpec.Program? {
        guard case let .other(kind, content) = type, kind == .mlProgram else { return nil }
        return try Spec.MILSpec.Program.decode(WireBytes.join(content), file: file).program
    }

    /// Makes this an `mlProgram` model holding `program` (the description and
    /// specificationVersion are left as they are; ML programs need specificationVersion ≥ 5).
    ///
    /// - Throws: `CoreMLFormatError.cannotEncode` when the program cannot be serialized.
    public mutating func setMLProgram(_ program: Spec.MILSpec.Program) throws {
        let bytes = try program.encode()
        guard let fields = bytes.withUnsafeBytes({ WireBytes.split($0) }) else {
            throw CoreMLFormatError.cannotEncode(what: "Model.mlProgram", reason: "protobuf-c could not re-read the encoded program")
        }
        type = .other(kind: .mlProgram, content: fields)
    }
}
