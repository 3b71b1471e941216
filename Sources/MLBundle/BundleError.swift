import Diagnostics
import MLGraph

/// A file format recognised when a file is not an `.mlbundle`, to tell the user what to do.
public enum RecognizedFormat: String, Sendable, Equatable {
    /// HDF5 (signature `\x89HDF\r\n\x1a\n`): a Keras .h5 model.
    case hdf5
    /// A protobuf message shaped like Core ML's `Model` (field 1 varint, field 2 bytes): a .mlmodel.
    case coreMLModel
    /// A ZIP archive (a Keras 3 .keras file, or a zipped model).
    case zip
    /// JSON text (e.g. a Keras model architecture, model.to_json()).
    case json
    /// A directory (e.g. a Core ML .mlpackage or compiled .mlmodelc).
    case directory
    /// Nothing recognised.
    case unknown
}

/// Errors reading or writing an `.mlbundle`. Every message names the file and says what to do.
public enum BundleError: Error, CustomStringConvertible, Equatable {
    /// The file could not be opened, inspected or mapped (`reason` is the system's message).
    case cannotOpen(file: String, reason: String)
    /// The file does not start with the bundle magic; `looksLike` says what it seems to be and
    /// `firstBytes` holds (up to) its first 16 bytes.
    case notABundle(file: String, looksLike: RecognizedFormat, firstBytes: [UInt8])
    /// The file is shorter than its header says (or than a header).
    case truncated(file: String, expectedBytes: Int, foundBytes: Int)
    /// Checksum mismatch, a section or weight location out of bounds or misaligned, invalid
    /// JSON, or a graph that is not valid. `cause`: the underlying error (the `GraphError` of a
    /// model section that does not verify), kept as a value (issue 13).
    case corrupted(file: String, reason: String, cause: DiagnosticCause? = nil)
    /// Written by a newer mlconv, in a format major version this build cannot read.
    case newerVersion(file: String, found: BundleFormatVersion, supported: BundleFormatVersion)
    /// `BundleWriter.write` refused the graph: it does not verify. Nothing was written.
    case invalidGraph(file: String, underlying: GraphError)
    /// Writing failed (no directory, no permission, disk full…). Nothing was written. `cause`:
    /// the underlying error (`AtomicFileError`, an encoding error), kept as a value (issue 13);
    /// `reason` is then empty or says what was being done.
    case writeFailed(file: String, reason: String, cause: DiagnosticCause? = nil)

    private static let recompile = "re-create it from its source model with `mlconv keras` or `mlconv compile`"

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause` (the renderer prints
    /// the cause on a "caused by:" line of its own).
    func text(includingCause: Bool) -> String {
        func detail(_ m: String, _ c: DiagnosticCause?) -> String { includingCause ? c.appended(to: m) : m }
        switch self {
        case let .cannotOpen(file, reason):
            return "cannot open \(file): \(reason); check the path and its permissions"
        case let .notABundle(file, looksLike, firstBytes):
            let head = "\(file) is not an .mlbundle"
            switch looksLike {
            case .hdf5:
                return "\(head): this is an HDF5 file (a Keras .h5 model?): convert it with `mlconv keras`"
            case .coreMLModel:
                return "\(head): this is a Core ML .mlmodel (protobuf): compile it with `mlconv compile`"
            case .zip:
                return "\(head): this is a ZIP archive (a Keras 3 .keras file?): convert the model with `mlconv keras` (save it as .h5 if needed), or compile a .mlmodel with `mlconv compile`"
            case .json:
                return "\(head): this is JSON text (a Keras model architecture?): convert the model with `mlconv keras`"
            case .directory:
                return "\(head): it is a directory (a Core ML .mlpackage or .mlmodelc?): pass the path of a .mlbundle file, made by `mlconv keras` or `mlconv compile`"
            case .unknown:
                let hex = firstBytes.map { String($0, radix: 16).leftPad(2) }.joined(separator: " ")
                return "\(head): it does not start with \"MLBUNDLE\" (first bytes: \(hex.isEmpty ? "none" : hex)): pass a file made by `mlconv keras` or `mlconv compile`"
            }
        case let .truncated(file, expected, found):
            return "\(file) is truncated: expected \(expected) bytes, found \(found) (an incomplete copy or download?): copy it again, or \(Self.recompile)"
        case let .corrupted(file, reason, cause):
            let d = detail(reason, cause)
            return "\(file) is corrupted\(d.isEmpty ? "" : ": " + d): \(Self.recompile) (or copy it again)"
        case let .newerVersion(file, found, supported):
            return "\(file) uses .mlbundle format \(found), but this mlconv reads format \(supported.major).x only: upgrade mlconv, or re-create the bundle with this mlconv (`mlconv keras` or `mlconv compile`)"
        case let .invalidGraph(file, underlying):
            return "cannot write \(file): the graph does not verify\(includingCause ? ": \(underlying)" : ""); nothing was written (fix the converter or pass that produced the graph)"
        case let .writeFailed(file, reason, cause):
            let d = detail(reason, cause)
            return "cannot write \(file)\(d.isEmpty ? "" : ": " + d); nothing was written (check that the directory exists and is writable, and that the disk has free space)"
        }
    }
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}

/// Guesses what a non-bundle file is from its first bytes.
func recognizeFormat(_ head: UnsafeRawBufferPointer) -> RecognizedFormat {
    let b = Array(head.prefix(64))
    if b.starts(with: [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]) { return .hdf5 }
    if b.starts(with: [0x50, 0x4B, 0x03, 0x04]) || b.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .zip }
    if looksLikeCoreMLProtobuf(b) { return .coreMLModel }
    if let first = b.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }), first == UInt8(ascii: "{") {
        return .json
    }
    return .unknown
}

/// Core ML `Model`: field 1 `specificationVersion` (varint, tag 0x08) then field 2 `description`
/// (length-delimited, tag 0x12), as every writer (coremltools, ours) emits them. Also accepts a
/// message that starts directly with a known length-delimited field (description, or a model type).
func looksLikeCoreMLProtobuf(_ b: [UInt8]) -> Bool {
    var i = 0
    func varint() -> UInt64? {
        var v: UInt64 = 0, shift: UInt64 = 0
        while i < b.count, shift < 64 {
            let byte = b[i]; i += 1
            v |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return v }
            shift += 7
        }
        return nil
    }
    guard let tag = varint() else { return false }
    if tag == 0x08 {
        guard let spec = varint(), spec >= 1, spec <= 100 else { return false }
        guard i < b.count else { return true }
        guard let next = varint() else { return false }
        // Next: a length-delimited field (wire type 2) with a plausible field number.
        return next & 7 == 2 && (next >> 3) >= 2 && (next >> 3) <= 10_000
    }
    return false
}
