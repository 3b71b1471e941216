// Shared pieces of the libFuzzer targets: the driver entry point and a scratch directory for
// readers that take a path (libhdf5, mmap'd bundles and weight files).
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                 _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// Runs libFuzzer with the process's arguments, calling `testOneInput` for every input.
public func runLibFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}

/// The input as bytes.
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A per-process directory on tmpfs (/dev/shm when present), emptied per input by `write`.
public enum Scratch {
    public static let directory: URL = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let dir = URL(fileURLWithPath: base).appendingPathComponent("mlconv-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Scratch.directory) }
        return dir
    }()

    /// Writes `bytes` to `name` (a path relative to the scratch directory) and returns its URL.
    public static func write(_ bytes: [UInt8], to name: String) -> URL {
        let url = directory.appendingPathComponent(name)
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: url.path, contents: Data(bytes))
        return url
    }
}

/// Splits a framed input: a 4-byte little-endian length, that many bytes, then the rest
/// (Scripts/fuzz_seeds.py writes seeds in this form). A short or overlong length gives the
/// whole input as the first part.
public func splitFramed(_ bytes: [UInt8]) -> (first: [UInt8], rest: [UInt8]) {
    guard bytes.count >= 4 else { return (bytes, []) }
    let n = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
    guard n <= bytes.count - 4 else { return (Array(bytes[4...]), []) }
    return (Array(bytes[4..<(4 + n)]), Array(bytes[(4 + n)...]))
}
