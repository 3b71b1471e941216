// The on-disk cache of compiled models: `.mlbundle` files named by the source's content hash
// (XXH64 of the file's bytes, or of an .mlpackage's paths and bytes), written atomically by
// `BundleWriter`, one directory per mlconv version (a new mlconv converts again).
import Diagnostics
import Foundation
import MLBundle

package enum ModelCache {
    /// The cache entry for `source` under `directory`: `<version>/<stem>-<hash>.mlbundle`.
    package static func entry(for source: URL, in directory: URL) throws -> URL {
        let hash = try contentHash(source)
        let stem = source.deletingPathExtension().lastPathComponent
            .map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        let name = String(stem.prefix(64)) + "-" + String(format: "%016llx", hash) + ".mlbundle"
        return directory.appendingPathComponent("mlconv-\(mlconvVersion)", isDirectory: true).appendingPathComponent(name)
    }

    /// Creates the entry's directory.
    package static func prepare(_ entry: URL) throws {
        let dir = entry.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw MLModelError.cacheUnavailable(directory: dir.path, reason: "cannot create it", cause: DiagnosticCause(error))
        }
    }

    /// XXH64 of a file's bytes; for a directory (an .mlpackage), of each regular file's relative
    /// path and bytes in sorted path order.
    package static func contentHash(_ url: URL) throws -> UInt64 {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir) else {
            throw MLModelError.fileNotFound(path: url.path, cwd: nil)
        }
        var h = XXH64()
        if !isDir.boolValue {
            try hashFile(url, into: &h)
            return h.finalize()
        }
        let base = url.standardizedFileURL.path
        var files: [String] = []
        if let e = FileManager.default.enumerator(atPath: base) {
            while let rel = e.nextObject() as? String {
                var d: ObjCBool = false
                if FileManager.default.fileExists(atPath: base + "/" + rel, isDirectory: &d), !d.boolValue { files.append(rel) }
            }
        }
        for rel in files.sorted() {
            h.update(Array(rel.utf8) + [0])
            try hashFile(URL(fileURLWithPath: base + "/" + rel), into: &h)
        }
        return h.finalize()
    }

    private static func hashFile(_ url: URL, into h: inout XXH64) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw MLModelError.unreadable(path: url.path, reason: "", cause: DiagnosticCause(error))
        }
        data.withUnsafeBytes { h.update($0) }
    }
}
