// Decoding and encoding of whole Core ML models (.mlmodel protobuf bytes).
import CCoreMLProto
import AtomicFile
import Foundation
import Diagnostics

extension Spec.Model {
    /// Decodes a serialized Core ML model (the contents of an `.mlmodel` file, or of
    /// `Data/com.apple.CoreML/model.mlmodel` inside an `.mlpackage`).
    ///
    /// Fields and layer types outside mlconv's schema are kept (see `unknownFields` on each
    /// struct) and listed in `unknownFieldWarnings` of the returned model.
    ///
    /// - Parameters:
    ///   - bytes: the protobuf bytes.
    ///   - fileName: used in error messages and nowhere else.
    /// - Throws: `CoreMLFormatError.notAModel` when the bytes are empty, truncated, corrupted, or
    ///   not a Core ML `Model` message (the error names the first problem and its byte offset).
    public static func decode(_ bytes: [UInt8], fileName: String = "<memory>") throws -> Spec.Model {
        try bytes.withUnsafeBytes { try decode(buffer: $0, fileName: fileName) }
    }

    /// Decodes a serialized Core ML model from `Data`. See `decode(_:fileName:)`.
    public static func decode(_ data: Data, fileName: String = "<memory>") throws -> Spec.Model {
        try data.withUnsafeBytes { try decode(buffer: $0, fileName: fileName) }
    }

    static func decode(buffer: UnsafeRawBufferPointer, fileName: String) throws -> Spec.Model {
        guard !buffer.isEmpty, let base = buffer.baseAddress else {
            throw CoreMLFormatError.notAModel(file: fileName, byteCount: 0, found: "an empty file (0 bytes)")
        }
        if let problem = WireScan.problem(buffer) {
            throw CoreMLFormatError.notAModel(file: fileName, byteCount: buffer.count, found: problem)
        }
        guard let msg = protobuf_c_message_unpack(ccoreml_model_descriptor(), nil, buffer.count,
                                                  base.assumingMemoryBound(to: UInt8.self)) else {
            throw CoreMLFormatError.notAModel(file: fileName, byteCount: buffer.count,
                                              found: WireScan.diagnose(buffer))
        }
        defer { protobuf_c_message_free_unpacked(msg, nil) }
        let ctx = DecodeContext()
        let reader = CReader(msg: UnsafeRawPointer(msg), ctx: ctx, path: "Model", wire: buffer)
        var model = try Spec.Model(reading: reader)
        if model.specificationVersion == 0 && model.description == nil, case .none = model.type {
            // Valid protobuf wire data, but nothing a Core ML model has.
            let fields = Set(reader.unknownFields.map(\.fieldNumber)).sorted().prefix(8)
            let what = WireScan.sniff(buffer) ?? "protobuf-shaped data without any Core ML Model field "
                + "(no specificationVersion, description or model type; top-level field numbers "
                + "\(fields.map(String.init).joined(separator: ", ")))"
            throw CoreMLFormatError.notAModel(file: fileName, byteCount: buffer.count,
                                              found: what + "; first bytes " + WireScan.preview(buffer))
        }
        reader.reportUnknownFields()
        model.unknownFieldWarnings = ctx.warnings
        return model
    }

    /// Serializes the model to protobuf bytes (what an `.mlmodel` file contains). Fields are
    /// written in field-number order; unknown fields kept from decoding follow the known fields
    /// of their message. `unknownFieldWarnings` is not written.
    ///
    /// - Throws: `CoreMLFormatError.cannotEncode` for values protobuf cannot carry (a string
    ///   with a NUL character, or `.other` with a kind that has a typed case).
    public func encode() throws -> [UInt8] {
        let arena = CArena()
        let desc = ccoreml_model_descriptor()
        let msg = arena.allocate(byteCount: Int(desc.pointee.sizeof_message))
        protobuf_c_message_init(desc, msg)
        try write(to: CWriter(msg: msg, arena: arena, path: "Model"))
        let cmsg = msg.assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(cmsg)
        guard size > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: size)
        let written = out.withUnsafeMutableBufferPointer { protobuf_c_message_pack(cmsg, $0.baseAddress!) }
        precondition(written == size, "protobuf-c packed \(written) bytes, expected \(size)")
        return out
    }

    /// Reads a model from an `.mlmodel` file or an `.mlpackage` directory (see `MLPackage`).
    ///
    /// - Throws: `CoreMLFormatError.unreadable` if the path cannot be read,
    ///   `.invalidPackage` for a malformed package, `.notAModel` for bytes that are not a model.
    public static func load(contentsOf path: String) throws -> Spec.Model {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw CoreMLFormatError.unreadable(file: path, reason: "no such file or directory")
        }
        if isDir.boolValue { return try MLPackage.read(at: path).model }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw CoreMLFormatError.unreadable(file: path, reason: "", cause: DiagnosticCause(error))
        }
        // MARK: errors (issue 13): --max-memory (the decoded message takes about the file's size)
        try MemoryLimit.check(bytes: data.count, for: "the Core ML model (\(data.count) bytes of protobuf, decoded in memory)", file: path)
        return try decode(data, fileName: path)
    }

    /// Writes `encode()` to `path` atomically (`AtomicFile`: temporary file, fsync, rename; no
    /// temporary file survives a failure, SIGINT/SIGTERM, or — after the next write — a kill -9).
    public func write(toFile path: String) throws {
        let bytes = try encode()
        do {
            try AtomicFile.write(bytes, to: path)
        } catch let error as AtomicFileError {
            throw CoreMLFormatError.unreadable(file: path, reason: "", cause: DiagnosticCause(error))
        }
    }

    /// The network of a `neuralNetwork`, `neuralNetworkClassifier` or `neuralNetworkRegressor`.
    public var neuralNetwork: Spec.NeuralNetwork? {
        switch type {
        case let .neuralNetwork(n): return n
        case let .neuralNetworkClassifier(c): return c.network
        case let .neuralNetworkRegressor(r): return r.network
        default: return nil
        }
    }

    /// The stages of a `pipeline`, `pipelineClassifier` or `pipelineRegressor` (empty otherwise).
    public var pipelineModels: [Spec.Model] {
        switch type {
        case let .pipeline(p): return p.models
        case let .pipelineClassifier(p): return p.pipeline?.models ?? []
        case let .pipelineRegressor(p): return p.pipeline?.models ?? []
        default: return []
        }
    }
}
