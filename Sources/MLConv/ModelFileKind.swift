// Which reader a model file needs, from its content (moved here from the CLI so that the
// library and `mlconv` detect formats the same way).
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
            throw MLModelError.notAModelFile(path: url.path, reason: "is a directory; give a model file (.h5, .mlmodel, .mlbundle) or an .mlpackage")
        }
        guard let h = FileHandle(forReadingAtPath: url.path) else {
            throw MLModelError.unreadable(path: url.path, reason: String(cString: strerror(errno)))
        }
        defer { try? h.close() }
        let head = [UInt8](h.readData(ofLength: 8))
        if head == [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A] { return .keras }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .keras }  // ZIP: a Keras 3 .keras archive
        if head == Array("MLBUNDLE".utf8) { return .bundle }
        // Named as one format but not holding it: that format's reader says what the file looks like.
        switch url.pathExtension.lowercased() {
        case "mlbundle": return .bundle
        case "h5", "hdf5", "keras": return .keras
        default: break
        }
        // Anything else is tried as a Core ML protobuf; its decoder says what the file looks like.
        return .coreML
    }
}
