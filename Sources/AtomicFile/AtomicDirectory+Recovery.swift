// MARK: errors (issue 13): kill -9 between AtomicDirectory's two renames.
//
// Replacing an existing directory takes two renames (old aside, new into place); a process killed
// between them leaves no directory at the target and the previous one under
// `.<name>.mlconv-old-<pid>-<random>`. The next write to the target puts that set-aside
// directory back first (instead of only deleting it as stale), so the previous output is not lost.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

extension AtomicDirectory {
    /// When nothing exists at `path` and a set-aside directory of a dead process exists next to
    /// it, renames that directory back to `path`. Best effort. Returns the name restored.
    @discardableResult
    public static func restoreSetAside(for path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) != 0, errno == ENOENT else { return nil }
        let dir = AtomicFile.directory(of: path)
        let name = (path as NSString).lastPathComponent
        let prefix = ".\(name)\(setAsideMarker)"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return nil }
        for entry in entries.sorted() where entry.hasPrefix(prefix) {
            let rest = entry.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            if rename((dir as NSString).appendingPathComponent(entry), path) == 0 { return entry }
        }
        return nil
    }
}
