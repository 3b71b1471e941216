// The memory limit (issue 13, `mlconv --max-memory`): the most bytes one allocation that a file
// asks for may take. Readers check it before allocating what a file's header declares (HDF5
// weight datasets, .npy arrays, decoded image sizes, Core ML weight blobs, the runtime's memory
// plan arena), so a damaged or hostile file that claims a huge tensor fails with a typed error
// naming the file instead of the process being killed by the OOM killer.
import Foundation

/// A file asked for more memory than the limit allows. Category `.resourceLimit`.
public struct MemoryLimitExceeded: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file that asked (as given by the user), when known.
    public var file: String?
    /// What needed the memory ("dataset '/model_weights/dense/kernel' of 4294967296 float32 values").
    public var what: String
    /// Bytes asked for; nil when the product of the declared sizes overflows Int.
    public var requestedBytes: Int?
    /// The limit in bytes.
    public var limitBytes: Int

    public init(file: String?, what: String, requestedBytes: Int?, limitBytes: Int) {
        self.file = file; self.what = what; self.requestedBytes = requestedBytes; self.limitBytes = limitBytes
    }

    public var description: String {
        let asked = requestedBytes.map { MemoryLimit.format($0) } ?? "more than \(MemoryLimit.format(Int.max))"
        return (file.map { "'\($0)': " } ?? "") + "\(what) needs \(asked), more than the memory limit of \(MemoryLimit.format(limitBytes)); "
            + "raise it with --max-memory (e.g. --max-memory \(MemoryLimit.suggestion(for: requestedBytes))) if the file is trusted, "
            + "or check that the file is not damaged"
    }
}

extension MemoryLimitExceeded: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .resourceLimit }
    public var diagnosticFile: String? { file }
    public var diagnosticExpected: String? { "at most \(MemoryLimit.format(limitBytes)) (--max-memory)" }
    public var diagnosticFound: String? { requestedBytes.map { "\(MemoryLimit.format($0)) for \(what)" } ?? "an overflowing size for \(what)" }
}

/// The process-wide memory limit. Thread-safe.
public enum MemoryLimit {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var explicitLimit: Int?

    /// The default: half of the physical memory (`ProcessInfo.physicalMemory`), at least 256 MiB.
    public static var defaultLimit: Int {
        let half = ProcessInfo.processInfo.physicalMemory / 2
        return Swift.max(256 << 20, Int(clamping: half))
    }

    /// The limit in bytes: the one set with `set(_:)` (the CLI's `--max-memory`), else `defaultLimit`.
    public static var current: Int {
        lock.lock(); defer { lock.unlock() }
        return explicitLimit ?? defaultLimit
    }

    /// Sets the limit (nil: back to the default).
    public static func set(_ bytes: Int?) {
        lock.lock(); defer { lock.unlock() }
        explicitLimit = bytes
    }

    /// Runs `body` with the limit set to `bytes`, then restores the previous setting (tests).
    public static func with<T>(_ bytes: Int?, _ body: () throws -> T) rethrows -> T {
        lock.lock(); let previous = explicitLimit; explicitLimit = bytes; lock.unlock()
        defer { lock.lock(); explicitLimit = previous; lock.unlock() }
        return try body()
    }

    /// Throws `MemoryLimitExceeded` when `bytes` exceeds the limit.
    public static func check(bytes: Int, for what: @autoclosure () -> String, file: String?) throws(MemoryLimitExceeded) {
        let limit = current
        guard bytes <= limit else {
            throw MemoryLimitExceeded(file: file, what: what(), requestedBytes: bytes, limitBytes: limit)
        }
    }

    /// Throws when `count × elementSize` bytes overflow Int or exceed the limit; else returns the byte count.
    @discardableResult
    public static func check(count: Int, elementSize: Int, for what: @autoclosure () -> String, file: String?) throws(MemoryLimitExceeded) -> Int {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: elementSize)
        guard !overflow, count >= 0, elementSize >= 0 else {
            throw MemoryLimitExceeded(file: file, what: what(), requestedBytes: nil, limitBytes: current)
        }
        try check(bytes: bytes, for: what(), file: file)
        return bytes
    }

    /// Throws when the product of `dims` × `elementSize` overflows or exceeds the limit.
    @discardableResult
    public static func check(shape dims: [Int], elementSize: Int, for what: @autoclosure () -> String, file: String?) throws(MemoryLimitExceeded) -> Int {
        var count = 1
        for d in dims {
            let (p, o) = count.multipliedReportingOverflow(by: d)
            guard !o, d >= 0 else { throw MemoryLimitExceeded(file: file, what: what(), requestedBytes: nil, limitBytes: current) }
            count = p
        }
        return try check(count: count, elementSize: elementSize, for: what(), file: file)
    }

    /// Parses a size: a whole number of bytes with an optional binary suffix K, M, G, T
    /// (case-insensitive, optional trailing "B" or "iB": 512M, 4G, 4GiB, 1048576), or a
    /// percentage of the physical memory ("50%"). Returns nil for anything else, for zero and
    /// for values that overflow.
    public static func parse(_ text: String) -> Int? {
        var s = text.trimmingCharacters(in: .whitespaces).uppercased()
        if s.hasSuffix("%") {
            guard let p = Double(s.dropLast()), p > 0, p <= 100 else { return nil }
            let v = Double(ProcessInfo.processInfo.physicalMemory) * p / 100
            return v >= 1 && v < Double(Int.max) ? Int(v) : nil
        }
        if s.hasSuffix("IB") { s.removeLast(2) } else if s.hasSuffix("B") { s.removeLast() }
        var shift = 0
        switch s.last {
        case "K": shift = 10
        case "M": shift = 20
        case "G": shift = 30
        case "T": shift = 40
        default: break
        }
        if shift > 0 { s.removeLast() }
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(s), n > 0 else { return nil }
        let (v, o) = n.multipliedReportingOverflow(by: 1 << shift)
        return o ? nil : v
    }

    /// "512 MiB", "4.00 GiB", "100 B".
    public static func format(_ bytes: Int) -> String {
        let b = Double(bytes)
        if bytes >= 1 << 30 { return String(format: "%.2f GiB", b / Double(1 << 30)) }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", b / Double(1 << 20)) }
        if bytes >= 1 << 10 { return String(format: "%.1f KiB", b / Double(1 << 10)) }
        return "\(bytes) B"
    }

    /// A `--max-memory` value that would admit `bytes` (rounded up to whole MiB or GiB).
    static func suggestion(for bytes: Int?) -> String {
        guard let bytes else { return "8G" }
        if bytes >= 1 << 30 { return "\((bytes + (1 << 30) - 1) >> 30)G" }
        return "\(Swift.max(1, (bytes + (1 << 20) - 1) >> 20))M"
    }
}
