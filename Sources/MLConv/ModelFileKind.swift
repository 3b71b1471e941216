// Which reader a model file needs, from its content (moved here from the CLI so that the
// library and `mlconv` detect formats the same way).
import Diagnostics
import Foundation

/// The model formats mlconv reads, from the file's first bytes (or an `.mlpackage` directory).
package enum ModelFileKind: Sendable {
    case keras, bundle, coreML

    /// - Throws: `MLModelError.fileNotFound`, `.notAModelFile` (a directory that is not a
    ///   package), `.unreadable`.
    package static func detect(_ url: URL) throws -> ModelFileKind {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir) else {
            let cwd = FileManager.default.currentDirectoryPath
            throw MLModelError.fileNotFound(path: url.path, cwd: url.relativePath.hasPrefix("/") ? nil : cwd)
        }
        if isDir.boolValue {
            if url.pathExtension.lowercased() == "mlpackage"
                || FileManager.default.fileExists(atPath: url.appendingPathComponent("Manifest.json").path) { return .coreML }
            throw MLModelError.notAModelFile(path: url.path, reason: directoryReason)
        }
        guard let h = FileHandle(forReadingAtPath: url.path) else {
            throw MLModelError.unreadable(path: url.path, reason: String(cString: strerror(errno)))
        }
        defer { try? h.close() }
        // `read(upToCount:)` throws on an I/O error where `readData(ofLength:)` traps.
        let head: [UInt8]
        do { head = [UInt8](try h.read(upToCount: 8) ?? Data()) } catch {
            throw MLModelError.unreadable(path: url.path, reason: "", cause: DiagnosticCause(error))
        }
        if head == [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A] { return .keras }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .keras }  // ZIP: a Keras 3 .keras archive
        if head == Array("MLBUNDLE".utf8) { return .bundle }
        // Named as one format but not holding it: that format's reader says what the file looks like.
        switch url.pathExtension.lowercased() {
        case "mlbundle": return .bundle
        case "h5", "hdf5", "keras": return .keras
        case "mlmodel": return .coreML  // its decoder says what the file looks like
        default: break
        }
        // MARK: unknown extensions
        if head.starts(with: numpyMagic) {
            throw MLModelError.notAModelFile(path: url.path, reason: numpyReason)
        }
        // A Core ML `Model` message under another name: its first field is `specificationVersion`
        // (field 1, varint: tag byte 0x08) or, when that is 0 and omitted, `description`
        // (field 2, length-delimited: tag byte 0x12).
        if let first = head.first, first == 0x08 || first == 0x12 { return .coreML }
        throw MLModelError.notAModelFile(path: url.path, reason: unknownTypeReason(url))
    }

    /// The reason given for a directory that is not an `.mlpackage` (shared by every command).
    package static let directoryReason = "is a directory; give a model file (.h5, .mlmodel, .mlbundle) or an .mlpackage"

    /// The first bytes of a NumPy `.npy` file (`\x93NUMPY`, NumPy's format spec `numpy.lib.format`).
    package static let numpyMagic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]

    /// The reason given for a NumPy array passed as a model.
    package static let numpyReason = "is a NumPy array (.npy), not a model; give a model file (.h5, .keras, .mlmodel, .mlpackage or .mlbundle) — .npy files are inputs, e.g. `mlconv predict MODEL --input NAME=FILE.npy`"

    /// The reason given for a file whose extension and first bytes name no format mlconv reads.
    package static func unknownTypeReason(_ url: URL) -> String {
        let ext = url.pathExtension.isEmpty ? "(no extension)" : "'.\(url.pathExtension)'"
        return "is of unknown model type \(ext); give .h5, .keras, .mlmodel, .mlpackage or .mlbundle"
    }
}
