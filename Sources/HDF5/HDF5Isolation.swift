// MARK: errors (issue 13): libhdf5 is run on a file in a child process before it runs in ours.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHDF5
import Diagnostics
import Foundation

/// Runs libhdf5 over a whole file in a child process before mlconv opens the file in its own
/// (`CHDF5/probe.h`). libhdf5 1.10 can crash, abort or loop for ever inside the library on a
/// damaged or hostile file; in the child that costs a typed error instead of the process.
///
/// The child opens the file, visits every object once and reads every attribute and every
/// dataset (up to `MemoryLimit.current` bytes each) with the memory types mlconv's readers use.
/// It costs one `fork` and a second read of the file (about 10 ms for the 6.7 MB style-transfer
/// network); a file's verdict is kept for as long as its size and modification time (and the memory
/// limit) stay the same.
///
/// Variable-length strings are then read only in a child forked at the moment of each read
/// (`readVariableLengthStrings(of:memoryType:count:)`), whose strings come back through a pipe.
///
/// Settings (read once, from the environment):
/// - `MLCONV_HDF5_IN_PROCESS=1` turns the child off (a trusted file, or a platform without `fork`);
/// - `MLCONV_HDF5_PROBE_TIMEOUT=S`: the child's time limit in seconds (default 60).
public enum HDF5Isolation {
    /// Whether files are read in a child process first.
    public static var isEnabled: Bool {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        return settings.enabled
    }

    /// The child's time limit, in seconds.
    public static var timeLimit: Double {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        return settings.timeLimit
    }

    /// Changes the settings for the rest of the process (tests; embedding programs) and forgets
    /// the verdicts already reached. `nil` keeps a setting.
    public static func configure(enabled: Bool? = nil, timeLimit: Double? = nil) {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        if let enabled { settings.enabled = enabled }
        settings.probesWholeFiles = true
        if let timeLimit, let limit = clampedLimit(timeLimit) { settings.timeLimit = limit }
        verdicts.removeAll()
    }

    /// A usable time limit: finite, 0 s to one week (nil for NaN).
    private static func clampedLimit(_ seconds: Double) -> Double? {
        seconds.isNaN ? nil : min(max(0, seconds), 7 * 24 * 3600)
    }

    private struct Settings {
        var enabled: Bool
        var timeLimit: Double
        /// Whether whole files are probed when opened (tests turn this off alone, to reach the
        /// per-read child with a file the file-wide probe would refuse).
        var probesWholeFiles = true
    }

    /// Tests: turns the file-wide probe on or off while leaving the per-read child of
    /// variable-length reads as `isEnabled` says; `configure` turns it back on.
    static func setProbesWholeFiles(_ on: Bool) {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        settings.probesWholeFiles = on
        verdicts.removeAll()
    }

    /// Used with the HDF5 lock held.
    nonisolated(unsafe) private static var settings: Settings = {
        let environment = ProcessInfo.processInfo.environment
        let enabled = environment["MLCONV_HDF5_IN_PROCESS"].map { $0 != "1" && $0.lowercased() != "true" } ?? true
        let limit = environment["MLCONV_HDF5_PROBE_TIMEOUT"].flatMap(Double.init).flatMap(clampedLimit) ?? 60
        return Settings(enabled: enabled, timeLimit: limit)
    }()

    /// Files already probed (path, size, modification time, memory limit) → the failure found, if any. Used
    /// with the HDF5 lock held.
    nonisolated(unsafe) private static var verdicts: [String: HDF5Error?] = [:]

    /// Probes the file at `path` (see the type's documentation). Call with the HDF5 lock held.
    ///
    /// - Throws: `HDF5Error` `.corruptFile` when libhdf5 crashed, aborted, or did not finish
    ///   within `timeLimit` on the file in the child.
    static func check(path: String) throws(HDF5Error) {
        guard settings.enabled, settings.probesWholeFiles else { return }
        // The memory limit is part of the key: a verdict of "over the limit" holds for that limit only.
        guard let file = fileVersionKey(path) else { return }
        let key = file + "\u{0}\(MemoryLimit.current)"
        if let known = verdicts[key] {
            if let known { throw known }
            return
        }
        let failure = probe(name: path, image: nil, globalHeapProblem: { GlobalHeapCheck.problem(inFileAt: path) })
        if verdicts.count >= 256 { verdicts.removeAll() }  // bounded for long-running processes
        verdicts[key] = failure
        if let failure { throw failure }
    }

    /// Probes an in-memory file image (see `HDF5File(image:name:)`); `name` is for messages.
    /// Call with the HDF5 lock held. Image verdicts are not kept.
    static func check(image: [UInt8], name: String) throws(HDF5Error) {
        guard settings.enabled, settings.probesWholeFiles else { return }
        let failure = image.withUnsafeBytes { raw in
            probe(name: name, image: raw, globalHeapProblem: { GlobalHeapCheck.problem(in: raw) })
        }
        if let failure { throw failure }
    }

    /// Reads the `count` variable-length strings (memory type `memoryType`) of the reader's
    /// attribute or dataset in a child process and returns them (`mlconv_read_vlen_strings_isolated`);
    /// nil when isolation is off or no child could be started (the caller then reads in process).
    ///
    /// The file-wide probe ran when the file was opened, in a process laid out differently.
    /// libhdf5 1.10 follows a damaged global heap reference (an object index past its
    /// collection's table) into whatever memory lies there, and copies a heap object's recorded
    /// size whatever the reference's length: reads whose outcome, a crash or a silent overflow,
    /// depends on the process. Here they happen in the child; only the strings cross over. Costs
    /// one `fork` per variable-length read (Keras' `model_config`, `keras_version`, `backend`, ...).
    /// Call with the HDF5 lock held.
    ///
    /// - Throws: `HDF5Error` `.readFailed` with libhdf5's error stack when it refused the read;
    ///   `.corruptFile` when the child crashed, aborted or ran past `timeLimit`;
    ///   `.memoryLimitExceeded` when libhdf5 needed more than `--max-memory`.
    static func readVariableLengthStrings(of reader: DataReader, memoryType: hid_t, count: Int) throws(HDF5Error) -> [String]? {
        guard settings.enabled else { return nil }
        let milliseconds = Int64((settings.timeLimit * 1000).rounded())
        let maxBytes = UInt64(max(0, MemoryLimit.current))
        var detail: Int32 = 0
        var bytes: UnsafeMutablePointer<CChar>? = nil
        var size = 0
        let outcome = mlconv_read_vlen_strings_isolated(reader.objectID, reader.isAttribute ? 1 : 0, memoryType,
                                                        count, maxBytes, milliseconds, &detail, &bytes, &size)
        defer { free(bytes) }
        let context = reader.context
        if outcome == MLCONV_PROBE_NOT_RUN { return nil }
        let entries = decodeEntries(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : size))
        if outcome == MLCONV_PROBE_EXITED && detail == MLCONV_PROBE_EXIT_READ_FAILED {
            throw HDF5Error(kind: .readFailed, file: context.file, objectPath: context.objectPath, attribute: context.attribute,
                            summary: "libhdf5 could not read the strings of \(context.subject)",
                            found: reader.description.description,
                            libraryStack: errorStack(fromEntries: entries ?? []),
                            hint: HDF5Hint.readFailed)
        }
        if let refusal = failure(outcome: outcome, detail: detail, name: context.file,
                                 what: "the variable-length strings of \(context.subject)",
                                 globalHeapProblem: { GlobalHeapCheck.problem(inFileAt: context.file) }) {
            var located = refusal
            located.objectPath = context.objectPath
            located.attribute = context.attribute
            throw located
        }
        guard let entries, entries.count == count else {
            throw context.error(.corruptFile, "the child process reading the strings of \(context.subject) sent a damaged reply",
                                expected: "\(count) strings", found: "\(size) bytes", hint: HDF5Hint.corrupt)
        }
        return entries.map { $0 ?? "" }
    }

    /// The error stack a child sent (`mlconv_probe_write_error_stack`: function, detail, major and
    /// minor text per record), formatted as `HDF5Library.takeErrorStack` formats one in process.
    static func errorStack(fromEntries entries: [String?]) -> [String] {
        stride(from: 0, to: entries.count - entries.count % 4, by: 4).map { i in
            HDF5Library.formatErrorRecord(function: entries[i] ?? "?", detail: entries[i + 1] ?? "",
                                          major: entries[i + 2] ?? "", minor: entries[i + 3] ?? "")
        }
    }

    /// The entries of a child's reply: each an 8-byte length (native order; all ones for a NULL
    /// string, nil here) and that many bytes of UTF-8 (invalid sequences repaired with U+FFFD).
    /// nil when the reply is cut short.
    static func decodeEntries(_ reply: UnsafeRawBufferPointer) -> [String?]? {
        var entries: [String?] = []
        var at = 0
        while at < reply.count {
            guard reply.count - at >= 8 else { return nil }
            let length = reply.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            at += 8
            if length == UInt64.max { entries.append(nil); continue }
            guard length <= UInt64(reply.count - at) else { return nil }
            let text = UnsafeRawBufferPointer(rebasing: reply[at..<(at + Int(length))])
            entries.append(String(decoding: text, as: UTF8.self))
            at += Int(length)
        }
        return entries
    }

    private static func probe(name: String, image: UnsafeRawBufferPointer?,
                              globalHeapProblem: () -> String?) -> HDF5Error? {
        let milliseconds = Int64((settings.timeLimit * 1000).rounded())
        let maxBytes = UInt64(max(0, MemoryLimit.current))
        var detail: Int32 = 0
        let outcome = name.withCString { cName in
            mlconv_probe_file_isolated(cName, image?.baseAddress, image?.count ?? 0, maxBytes, milliseconds, &detail)
        }
        return failure(outcome: outcome, detail: detail, name: name, what: "'\(name)'", globalHeapProblem: globalHeapProblem)
    }

    /// The error for a probe's outcome (nil when the child finished or could not be started);
    /// `what` names what libhdf5 read: the file, or one attribute's strings.
    private static func failure(outcome: mlconv_probe_outcome, detail: Int32, name: String, what read: String,
                                globalHeapProblem: () -> String?) -> HDF5Error? {
        let what: String
        switch outcome {
        case MLCONV_PROBE_OK, MLCONV_PROBE_NOT_RUN:
            // NOT_RUN: no child (fork refused); the file is read in process, as with the setting off.
            return nil
        case MLCONV_PROBE_SIGNALED:
            what = "libhdf5 crashed (\(signalName(detail))) reading \(read) in a separate process"
        case MLCONV_PROBE_EXITED:
            what = "libhdf5 failed reading \(read) in a separate process (it ended with status \(detail): an abort or a memory error)"
        case MLCONV_PROBE_TOO_MUCH_MEMORY:
            return HDF5Error(kind: .memoryLimitExceeded, file: name,
                             summary: "libhdf5 needed more memory than the limit allows to read \(read) "
                                 + "(tried in a separate process); mlconv did not read it in its own process",
                             expected: "at most \(MemoryLimit.format(MemoryLimit.current)) (--max-memory)",
                             found: "an allocation by libhdf5 that failed under the limit, or grew the child process past it "
                                 + "(its peak resident set: \(detail) MiB)",
                             hint: "a damaged variable-length string or dataset can claim gigabytes; if the file is trusted, "
                                 + "raise the limit with --max-memory")
        case MLCONV_PROBE_TIMED_OUT:
            what = "libhdf5 did not finish reading \(read) within \(formatSeconds(settings.timeLimit)) in a separate process (a damaged file makes it loop)"
        default:
            what = "libhdf5 could not be run on \(read) in a separate process (outcome \(outcome.rawValue))"
        }
        return HDF5Error(kind: .corruptFile, file: name,
                         summary: what + "; mlconv did not read it in its own process",
                         expected: "a file libhdf5 reads to the end",
                         found: globalHeapProblem() ?? (outcome == MLCONV_PROBE_TIMED_OUT
                             ? "still reading after \(formatSeconds(settings.timeLimit))" : "the child process ended abnormally"),
                         libraryStack: [],
                         hint: HDF5Hint.corrupt + ". If the file is trusted and only slow to read, raise the limit "
                             + "with MLCONV_HDF5_PROBE_TIMEOUT=SECONDS (docs/RELIABILITY.md)")
    }

    private static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV, a segmentation fault"
        case SIGBUS: return "SIGBUS"
        case SIGABRT: return "SIGABRT, an abort"
        case SIGFPE: return "SIGFPE"
        case SIGILL: return "SIGILL"
        case SIGKILL: return "SIGKILL"
        default: return "signal \(signal)"
        }
    }

    private static func formatSeconds(_ seconds: Double) -> String {
        String(format: "%g s", seconds)
    }
}
