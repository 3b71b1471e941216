import Foundation
import MLConv

// MARK: output directories (--output-dir)

/// Makes sure `dir` is a writable directory, creating it (and its parents) when missing, before
/// any work is done, so a bad `--output-dir` is reported first and never as Foundation's raw
/// `NSCocoaErrorDomain` dump.
/// - Throws: `CLIError` "<option>: cannot write '<dir>': <reason>; nothing was written (check that
///   the directory exists and is writable)" — the reason is "it is a file, not a directory",
///   "it is not writable", or the system's reason (`strerror`) the directory cannot be created.
func prepareOutputDirectory(_ dir: URL, option: String) throws {
    func fail(_ reason: String) -> CLIError {
        CLIError("\(option): cannot write '\(dir.path)': \(reason); nothing was written (check that the directory exists and is writable)", category: .io)
    }
    let fm = FileManager.default
    var isDir: ObjCBool = false
    if fm.fileExists(atPath: dir.path, isDirectory: &isDir) {
        guard isDir.boolValue else { throw fail("it is a file, not a directory") }
        guard fm.isWritableFile(atPath: dir.path) else { throw fail("it is not writable") }
        return
    }
    // The nearest existing ancestor says why a directory cannot be made there (Foundation's
    // error for a file in the way is often only NSFileWriteUnknownError).
    var ancestor = dir.deletingLastPathComponent()
    while ancestor.path != "/", !fm.fileExists(atPath: ancestor.path) { ancestor = ancestor.deletingLastPathComponent() }
    if fm.fileExists(atPath: ancestor.path, isDirectory: &isDir) {
        guard isDir.boolValue else { throw fail("'\(ancestor.path)' is a file, not a directory") }
        guard fm.isWritableFile(atPath: ancestor.path) else { throw fail("'\(ancestor.path)' is not writable") }
    }
    do {
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
    } catch {
        throw fail(systemReason(error))
    }
}

/// The system's words for a Foundation file error (the POSIX error under an NSError when there
/// is one), never the NSError's description.
func systemReason(_ error: Error) -> String {
    let ns = error as NSError
    if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(posix.code)))
    }
    if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
    switch ns.code {
    case NSFileWriteFileExistsError: return "a file is in the way"
    case NSFileWriteNoPermissionError: return "permission denied"
    case NSFileWriteOutOfSpaceError: return "no space left on the device"
    case NSFileWriteVolumeReadOnlyError: return "the file system is read-only"
    default: return "the directory cannot be created (error \(ns.code))"
    }
}

/// For `mlconv keras`: a directory is refused with the message every other command gives.
func refuseDirectoryModel(_ url: URL) throws {
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue {
        throw MLModelError.notAModelFile(path: url.path, reason: ModelFileKind.directoryReason)
    }
}

extension FileHandle {
    /// The rest of the file or pipe; empty on an I/O error (never a trap, unlike
    /// `readDataToEndOfFile()`).
    func readToEndOrEmpty() -> Data { ((try? readToEnd()) ?? nil) ?? Data() }
}
