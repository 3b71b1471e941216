// AtomicFile: the one way mlconv replaces an output file.
//
// `AtomicFile.write(to:)` creates `<dir>/.<name>.mlconv-tmp-<pid>-<random>` (O_CREAT|O_EXCL,
// mode 0644 minus the umask), lets the caller write it, fsyncs it, renames it over the target and
// fsyncs the directory. Readers see the previous file or the complete new one, never a prefix.
// The temporary file is removed on any failure, and on SIGINT/SIGTERM (handlers installed once,
// on first use, which unlink every registered temporary file and then re-raise the signal with
// the previous disposition). A `kill -9` cannot be caught: the next write to the same target
// removes temporary files whose owning process no longer exists.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A system call of an atomic write failed. `path` is the target file.
public struct AtomicFileError: Error, Equatable, CustomStringConvertible {
    public enum Operation: String, Sendable {
        case createTemporary = "create a temporary file"
        case write = "write the temporary file"
        case sync = "flush (fsync) the temporary file"
        case close = "close the temporary file"
        case rename = "rename the temporary file into place"
    }
    /// The file that was to be written.
    public let path: String
    public let operation: Operation
    /// `errno` of the failed call.
    public let code: Int32

    public init(path: String, operation: Operation, code: Int32) {
        self.path = path; self.operation = operation; self.code = code
    }

    /// The directory the temporary file lives in.
    public var directory: String { AtomicFile.directory(of: path) }

    /// "cannot <operation> [in '<dir>']: <strerror>" — without the target path (callers whose
    /// error types carry the path separately use this).
    public var reason: String {
        let place = operation == .createTemporary ? " in '\(directory)'" : ""
        return "cannot \(operation.rawValue)\(place): \(String(cString: strerror(code)))"
    }

    public var description: String { "\(path): \(reason)" }
}

public enum AtomicFile {
    /// The marker in temporary file names: `.<name>.mlconv-tmp-<pid>-<random>`.
    public static let temporaryMarker = ".mlconv-tmp-"

    /// Writes `bytes` to `path` atomically (see the module comment).
    /// - Throws: `AtomicFileError`.
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String) throws {
        try write(to: path) { fd in try writeAll(fd, bytes, path: path) }
    }

    /// Writes `data` to `path` atomically.
    public static func write(_ data: Data, to path: String) throws {
        try data.withUnsafeBytes { try write($0, to: path) }
    }

    /// Writes `bytes` to `path` atomically.
    public static func write(_ bytes: [UInt8], to path: String) throws {
        try bytes.withUnsafeBytes { try write($0, to: path) }
    }

    /// Streaming form: `body` receives the descriptor of the temporary file (opened write-only,
    /// close-on-exec) and writes it; it must not close it. Errors thrown by `body` are rethrown
    /// unchanged after the temporary file is removed; the helper's own failures are
    /// `AtomicFileError`.
    public static func write(to path: String, _ body: (Int32) throws -> Void) throws {
        installSignalHandlersOnce()
        let dir = directory(of: path)
        let name = (path as NSString).lastPathComponent
        removeStaleTemporaries(in: dir, name: name)

        var tmp = ""
        var fd: Int32 = -1
        for attempt in 0..<100 {
            let token = String(UInt64.random(in: 0 ... .max), radix: 36)
            tmp = (dir as NSString).appendingPathComponent(".\(name)\(temporaryMarker)\(getpid())-\(token)")
            // Registered before it exists, so that a signal arriving right after open() still
            // removes it (unlinking a path that does not exist is harmless).
            let slot = Registry.register(tmp)
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                defer { Registry.unregister(slot) }
                return try finish(fd: fd, tmp: tmp, path: path, dir: dir, body)
            }
            let e = errno
            Registry.unregister(slot)
            if e != EEXIST || attempt == 99 {
                throw AtomicFileError(path: path, operation: .createTemporary, code: e)
            }
        }
    }

    private static func finish(fd: Int32, tmp: String, path: String, dir: String,
                               _ body: (Int32) throws -> Void) throws {
        var isOpen = true
        var committed = false
        defer {
            if isOpen { _ = close(fd) }
            if !committed { _ = unlink(tmp) }
        }
        try body(fd)
        if fsync(fd) != 0 { throw AtomicFileError(path: path, operation: .sync, code: errno) }
        isOpen = false
        if close(fd) != 0 { throw AtomicFileError(path: path, operation: .close, code: errno) }
        if rename(tmp, path) != 0 { throw AtomicFileError(path: path, operation: .rename, code: errno) }
        committed = true
        // Make the rename itself durable (best effort: some file systems refuse fsync on a directory).
        let dfd = open(dir, O_RDONLY | O_CLOEXEC)
        if dfd >= 0 { _ = fsync(dfd); _ = close(dfd) }
    }

    /// Writes all of `bytes` to `fd`, retrying on EINTR and short writes.
    /// - Throws: `AtomicFileError(operation: .write)` naming `path`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        guard var p = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = systemWrite(fd, p, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw AtomicFileError(path: path, operation: .write, code: errno)
            }
            p += n; left -= n
        }
    }

    /// The directory part of `path` ("." when there is none).
    static func directory(of path: String) -> String {
        let dir = (path as NSString).deletingLastPathComponent
        return dir.isEmpty ? "." : dir
    }

    // MARK: - Stale temporary files (kill -9)

    /// Removes `<dir>/.<name>.mlconv-tmp-<pid>-*` whose process no longer exists. Best effort.
    /// Returns the names removed.
    @discardableResult
    static func removeStaleTemporaries(in dir: String, name: String) -> [String] {
        let prefix = ".\(name)\(temporaryMarker)"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        var removed: [String] = []
        for entry in entries where entry.hasPrefix(prefix) {
            let rest = entry.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }  // alive, or not ours to judge
            if unlink((dir as NSString).appendingPathComponent(entry)) == 0 { removed.append(entry) }
        }
        return removed
    }

    // MARK: - Signals

    /// Unlinks every registered temporary file. Async-signal-safe (no allocation, no locks).
    static func removeRegisteredTemporaries() {
        for i in 0..<Registry.capacity {
            if let p = Registry.slots[i] { _ = unlink(p) }
        }
    }

    /// Whether the temporary file `path` is currently registered for signal cleanup (tests).
    static func isRegistered(_ path: String) -> Bool {
        Registry.lock.lock(); defer { Registry.lock.unlock() }
        return (0..<Registry.capacity).contains { Registry.slots[$0].map { String(cString: $0) } == path }
    }

    private static let handlersInstalled: Bool = {
        for sig in [SIGINT, SIGTERM] {
            var previous = sigaction()
            guard sigaction(sig, nil, &previous) == 0 else { continue }
            // A process started with the signal ignored (nohup, background jobs) keeps ignoring it.
            if let h = previous.__sigaction_handler.sa_handler,
               unsafeBitCast(h, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            previousActions[Int(sig)] = previous
            var action = sigaction()
            action.__sigaction_handler.sa_handler = atomicFileSignalHandler
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(sig, &action, nil)
        }
        return true
    }()

    static func installSignalHandlersOnce() { _ = handlersInstalled }
}

private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, p, n)
    #else
    return Darwin.write(fd, p, n)
    #endif
}

/// The previous dispositions, indexed by signal number; written once before the handler is
/// installed, only read afterwards.
nonisolated(unsafe) private let previousActions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)

private func atomicFileSignalHandler(_ sig: Int32) {
    AtomicFile.removeRegisteredTemporaries()
    // Restore what was there before (usually SIG_DFL) and re-deliver: the process then dies of
    // the signal (exit status 128+n in shells) or the previous handler runs.
    var previous = previousActions[Int(sig)]
    _ = sigaction(sig, &previous, nil)
    _ = raise(sig)
}

/// Fixed table of C strings read by the signal handler. Slots are filled and emptied under a
/// lock by writers; the handler only reads pointers. A freed string is never reachable from a
/// slot: the slot is cleared before the string is freed.
private enum Registry {
    static let capacity = 256
    nonisolated(unsafe) static let slots: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let p = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
        p.initialize(repeating: nil, count: capacity)
        return p
    }()
    static let lock = NSLock()

    /// Returns the slot index, or -1 when the table is full (the file is then not cleaned up on
    /// a signal, but still on failure and by the next run's stale-file sweep).
    static func register(_ path: String) -> Int {
        _ = slots
        lock.lock(); defer { lock.unlock() }
        for i in 0..<capacity where slots[i] == nil {
            slots[i] = strdup(path)
            return i
        }
        return -1
    }

    static func unregister(_ slot: Int) {
        guard slot >= 0 else { return }
        lock.lock(); defer { lock.unlock() }
        let p = slots[slot]
        slots[slot] = nil
        free(p)
    }
}
