import CHDF5
import Foundation

/// Process-wide access to libhdf5.
///
/// Debian's `libhdf5_serial` must be treated as not thread-safe, so every call into libhdf5 made
/// by this module (including the `H5?close` calls of deinitializers) runs while holding one global
/// recursive lock. Usage, at the top of every entry point:
///
/// ```swift
/// HDF5Library.enter(); defer { HDF5Library.leave() }
/// ```
///
/// The lock is recursive so that an object released while the lock is held (its deinit closes
/// its libhdf5 identifier) cannot deadlock.
enum HDF5Library {
    private static let lock = NSRecursiveLock()

    /// Takes the global lock and silences libhdf5's automatic error printing for this thread
    /// (a per-thread setting in thread-safe builds, hence done on every entry).
    static func enter() {
        lock.lock()
        mlconv_silence_error_printing()
    }

    /// Releases the global lock taken by `enter()`.
    static func leave() {
        lock.unlock()
    }

    /// The runtime libhdf5 version, such as `"1.10.8"`.
    static let version: String = {
        enter(); defer { leave() }
        var major: UInt32 = 0, minor: UInt32 = 0, release: UInt32 = 0
        guard mlconv_library_version(&major, &minor, &release) >= 0 else { return "unknown" }
        return "\(major).\(minor).\(release)"
    }()

    /// One record of libhdf5's error stack, as copied during the walk.
    private struct RawRecord {
        var major: hid_t
        var minor: hid_t
        var function: String
        var detail: String
    }

    private final class RecordBox {
        var records: [RawRecord] = []
    }

    /// The current thread's libhdf5 error stack as text, outermost call first, then clears the
    /// stack. Call it with the lock held, right after the failing call (any other libhdf5 call
    /// in between may clear the stack).
    static func takeErrorStack() -> [String] {
        let box = RecordBox()
        // Copy the records first: H5Eget_msg is an API function that clears the stack, so it
        // must not run inside the walk.
        _ = H5Ewalk2(mlconv_H5E_DEFAULT(), H5E_WALK_DOWNWARD, { _, record, context in
            guard let record, let context else { return 0 }
            let box = Unmanaged<RecordBox>.fromOpaque(context).takeUnretainedValue()
            let error = record.pointee
            box.records.append(RawRecord(
                major: error.maj_num,
                minor: error.min_num,
                function: error.func_name.map { String(cString: $0) } ?? "?",
                detail: error.desc.map { String(cString: $0) } ?? ""))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        withExtendedLifetime(box) {}
        let lines = box.records.map {
            formatErrorRecord(function: $0.function, detail: $0.detail, major: message($0.major), minor: message($0.minor))
        }
        mlconv_clear_error_stack()
        return lines
    }

    /// One libhdf5 error record as mlconv shows it: "function(): detail (major: minor)", the parts
    /// that are empty left out. Used for the stack taken in process and for the one a probe child
    /// sends (`HDF5Isolation`).
    static func formatErrorRecord(function: String, detail: String, major: String, minor: String) -> String {
        var line = "\(function)()"
        if !detail.isEmpty { line += ": \(detail)" }
        switch (major.isEmpty, minor.isEmpty) {
        case (false, false): line += " (\(major): \(minor))"
        case (false, true): line += " (\(major))"
        case (true, false): line += " (\(minor))"
        case (true, true): break
        }
        return line
    }

    /// The text of one libhdf5 error message class (major or minor), or "" if unknown.
    private static func message(_ id: hid_t) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = H5Eget_msg(id, nil, &buffer, buffer.count)
        guard length > 0 else { return "" }
        return String(decoding: buffer.prefix(min(Int(length), buffer.count - 1)).map { UInt8(bitPattern: $0) },
                      as: UTF8.self)
    }
}

/// Where a failure happened; makes `HDF5Error`s.
struct HDF5ErrorContext {
    var file: String
    var objectPath: String?
    var attribute: String?

    /// An error without libhdf5 stack (a check made by this module).
    func error(_ kind: HDF5Error.Kind, _ summary: String, expected: String? = nil,
               found: String? = nil, hint: String? = nil, cause: (any Error)? = nil) -> HDF5Error {
        HDF5Error(kind: kind, file: file, objectPath: objectPath, attribute: attribute,
                  summary: summary, expected: expected, found: found, libraryStack: [],
                  hint: hint, cause: cause)
    }

    /// An error carrying libhdf5's current error stack (which it clears). Call with the lock
    /// held, right after the failing libhdf5 call.
    func libraryError(_ kind: HDF5Error.Kind, _ summary: String, expected: String? = nil,
                      found: String? = nil, hint: String? = nil) -> HDF5Error {
        HDF5Error(kind: kind, file: file, objectPath: objectPath, attribute: attribute,
                  summary: summary, expected: expected, found: found,
                  libraryStack: HDF5Library.takeErrorStack(), hint: hint)
    }

    /// What failed, for summaries: `attribute 'x' of '/a' in 'f.h5'`, `'/a' in 'f.h5'` or
    /// `'f.h5'`.
    var subject: String {
        switch (objectPath, attribute) {
        case let (path?, name?): return "attribute '\(name)' of '\(path)' in '\(file)'"
        case let (path?, nil): return "'\(path)' in '\(file)'"
        case let (nil, name?): return "attribute '\(name)' in '\(file)'"
        case (nil, nil): return "'\(file)'"
        }
    }

    /// The same context for attribute `name` of the same object.
    func attribute(_ name: String) -> HDF5ErrorContext {
        HDF5ErrorContext(file: file, objectPath: objectPath, attribute: name)
    }
}
