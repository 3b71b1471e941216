// AtomicDirectory: the directory form of AtomicFile, for outputs that are directories
// (`.mlpackage`).
//
// `AtomicDirectory.write(to:)` creates `<parent>/.<name>.mlconv-tmp-<pid>-<random>/` (mode 0755
// minus the umask), lets the caller fill it, fsyncs every regular file and directory in it, and
// moves it into place:
// - no target yet: one rename(2);
// - a target exists: the old directory is first renamed aside to
//   `.<name>.mlconv-old-<pid>-<random>`, the new one renamed into place, and the old one removed.
//   Between those two renames the target name is briefly absent (a directory cannot be replaced
//   by rename(2) while it has entries); a failure of the second rename moves the old one back.
// The temporary directory is removed on any failure. A killed process (signals included: a
// signal handler cannot remove a directory tree safely) leaves its temporary directory behind;
// the next write to the same target removes temporary and set-aside directories whose owning
// process no longer exists.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

public enum AtomicDirectory {
    /// The marker in set-aside names of a replaced directory: `.<name>.mlconv-old-<pid>-<random>`.
    public static let setAsideMarker = ".mlconv-old-"

    /// Creates a temporary directory next to `path`, calls `body` with its path, then moves it
    /// into place as `path` (see the file comment). `body` writes whatever the directory holds,
    /// with ordinary file APIs (the files need not be written through `AtomicFile`: the whole
    /// tree becomes visible at once).
    ///
    /// - Throws: errors thrown by `body`, unchanged, after the temporary directory is removed;
    ///   `AtomicFileError` (`.createTemporary`, `.sync`, `.rename`) for the helper's own calls.
    ///   When `path` exists and is not a directory, `AtomicFileError(.rename, ENOTDIR)`.
    public static func write(to path: String, _ body: (String) throws -> Void) throws {
        let dir = AtomicFile.directory(of: path)
        let name = (path as NSString).lastPathComponent
        restoreSetAside(for: path)  // MARK: errors (issue 13): a kill -9 between the two renames
        removeStaleDirectories(in: dir, name: name)

        var tmp = ""
        var created = false
        for attempt in 0..<100 {
            let token = String(UInt64.random(in: 0 ... .max), radix: 36)
            tmp = (dir as NSString).appendingPathComponent(".\(name)\(AtomicFile.temporaryMarker)\(getpid())-\(token)")
            if mkdir(tmp, 0o755) == 0 { created = true; break }
            let e = errno
            if e != EEXIST || attempt == 99 {
                throw AtomicFileError(path: path, operation: .createTemporary, code: e)
            }
        }
        guard created else { throw AtomicFileError(path: path, operation: .createTemporary, code: EEXIST) }
        var committed = false
        defer { if !committed { try? FileManager.default.removeItem(atPath: tmp) } }

        try body(tmp)
        try syncTree(tmp, target: path)

        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                throw AtomicFileError(path: path, operation: .rename, code: ENOTDIR)
            }
            let token = String(UInt64.random(in: 0 ... .max), radix: 36)
            let aside = (dir as NSString).appendingPathComponent(".\(name)\(setAsideMarker)\(getpid())-\(token)")
            if rename(path, aside) != 0 { throw AtomicFileError(path: path, operation: .rename, code: errno) }
            if rename(tmp, path) != 0 {
                let e = errno
                _ = rename(aside, path)  // put the previous package back
                throw AtomicFileError(path: path, operation: .rename, code: e)
            }
            committed = true
            try? FileManager.default.removeItem(atPath: aside)
        } else {
            if rename(tmp, path) != 0 { throw AtomicFileError(path: path, operation: .rename, code: errno) }
            committed = true
        }
        let dfd = open(dir, O_RDONLY | O_CLOEXEC)
        if dfd >= 0 { _ = fsync(dfd); _ = close(dfd) }
    }

    /// fsyncs every regular file and directory under `root` (the root last).
    static func syncTree(_ root: String, target: String) throws {
        let fm = FileManager.default
        var paths: [String] = []
        if let walker = fm.enumerator(atPath: root) {
            for case let rel as String in walker { paths.append((root as NSString).appendingPathComponent(rel)) }
        }
        paths.append(root)
        for p in paths {
            var st = stat()
            guard lstat(p, &st) == 0 else { continue }
            let kind = st.st_mode & S_IFMT
            guard kind == S_IFREG || kind == S_IFDIR else { continue }
            let fd = open(p, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw AtomicFileError(path: target, operation: .sync, code: errno) }
            // Directories on some file systems refuse fsync (EINVAL); files must not.
            if fsync(fd) != 0 && kind == S_IFREG {
                let e = errno
                _ = close(fd)
                throw AtomicFileError(path: target, operation: .sync, code: e)
            }
            _ = close(fd)
        }
    }

    /// Removes `<dir>/.<name>.mlconv-tmp-<pid>-*` and `.<name>.mlconv-old-<pid>-*` directories
    /// whose process no longer exists. Best effort. Returns the names removed.
    @discardableResult
    static func removeStaleDirectories(in dir: String, name: String) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        var removed: [String] = []
        for marker in [AtomicFile.temporaryMarker, setAsideMarker] {
            let prefix = ".\(name)\(marker)"
            for entry in entries where entry.hasPrefix(prefix) {
                let rest = entry.dropFirst(prefix.count)
                guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
                guard kill(pid, 0) != 0, errno == ESRCH else { continue }
                let full = (dir as NSString).appendingPathComponent(entry)
                if (try? FileManager.default.removeItem(atPath: full)) != nil { removed.append(entry) }
            }
        }
        return removed
    }
}
