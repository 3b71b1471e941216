import AtomicFile
import Diagnostics
import Foundation
import MLGraph
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `.mlbundle` files (format: docs/BUNDLE_FORMAT.md).
public enum BundleWriter {
    /// Verifies `graph`, then writes it as a bundle at `url`, atomically: the bytes go to a
    /// temporary file in the same directory, which is flushed to disk and renamed over `url`. On
    /// any failure nothing is left behind (an existing file at `url` is kept unchanged).
    ///
    /// Constants are stored once each (a `ConstantTensor` object used by several nodes is stored
    /// once), in their own encoding, 64-byte aligned. The output is deterministic: the same graph,
    /// producer and source give the same bytes.
    ///
    /// - Parameters:
    ///   - producer: the writing tool and its version, e.g. "mlconv 0.1.0".
    ///   - source: what the model was compiled from, e.g. "keras:model.h5" (may be empty).
    ///   - disabledPasses: inference passes that were disabled when the graph was written
    ///     (`mlconv keras/compile --disable-pass`), recorded so that loading the bundle does not
    ///     run them either (`BundleFile.disabledPasses`). Not checked against any pipeline here.
    /// - Throws: `BundleError.invalidGraph` (the graph does not verify, or has no recorded type
    ///   for some tensor), `BundleError.writeFailed`.
    public static func write(_ graph: Graph, to url: URL, producer: String, source: String = "",
                             disabledPasses: Set<String> = []) throws {
        try write(graph, to: url, producer: producer, source: source, disabledPasses: disabledPasses, faultInjection: nil)
    }

    /// `faultInjection` (tests only) is called with the number of bytes written so far after each
    /// write to the temporary file; throwing from it simulates an I/O failure.
    static func write(_ graph: Graph, to url: URL, producer: String, source: String, disabledPasses: Set<String> = [],
                      faultInjection: ((Int) throws -> Void)?) throws {
        let file = url.path
        do {
            try graph.checkBundleLimits()
            try graph.verify()
        } catch let e as GraphError {
            throw BundleError.invalidGraph(file: file, underlying: e)
        }
        let contents = try BundleContents(graph: graph, producer: producer, source: source,
                                          disabledPasses: disabledPasses, file: file)
        try writeAtomically(to: url) { sink in
            sink.faultInjection = faultInjection
            try contents.write(to: &sink)
        }
    }

    /// Serializes to memory (tests, small models).
    static func serialize(_ graph: Graph, producer: String, source: String = "") throws -> [UInt8] {
        let contents = try BundleContents(graph: graph, producer: producer, source: source, file: "<memory>")
        var sink = ByteSink(fd: -1)
        sink.collect = []
        try contents.write(to: &sink)
        return sink.collect!
    }
}

/// Assigns every constant a 64-byte aligned place in the weight section as the graph is encoded.
/// Constants whose storage is the same bytes (the same `ConstantTensor`, or constants that borrow
/// the same region, as after loading a bundle) share one place.
final class WeightSectionArchiver: ConstantArchiver {
    private struct Key: Hashable { let address: UnsafeRawPointer; let count: Int }
    private(set) var entries: [(tensor: ConstantTensor, offset: Int)] = []
    private var locations: [Key: WeightLocation] = [:]
    private(set) var size = 0

    func archive(_ tensor: ConstantTensor) throws -> WeightLocation {
        let count = tensor.encodedByteCount
        precondition(tensor.storage.count >= count, "ConstantTensor invariant: storage holds the encoded bytes")
        // `entries` keeps every archived tensor, hence its storage address, alive.
        let key = Key(address: tensor.storage.baseAddress, count: count)
        if let l = locations[key] { return l }
        let loc = WeightLocation(offset: size, byteCount: count)
        entries.append((tensor, size))
        locations[key] = loc
        size = alignUp(size + count, BundleFormat.weightAlignment)
        return loc
    }
}

/// JSON settings shared by the writer and the reader (documented in BUNDLE_FORMAT.md).
enum BundleJSON {
    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return e
    }

    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return d
    }

    /// A decoder for the model section of a file of `version`: format 1 files hold the legacy
    /// graph layout, format 2 files the explicit one (`GraphEncoding`).
    static func decoder(for version: BundleFormatVersion) -> JSONDecoder {
        let d = decoder()
        d.userInfo[.graphEncoding] = version.major < 2 ? GraphEncoding.legacy : GraphEncoding.explicit
        return d
    }
}

/// Everything that goes into the file, laid out: header, info, model, padding, weights, trailer.
struct BundleContents {
    let header: BundleHeader
    let info: [UInt8]
    let model: [UInt8]
    let weightOffset: Int
    let weights: [(tensor: ConstantTensor, offset: Int)]
    let weightSize: Int

    init(graph: Graph, producer: String, source: String, disabledPasses: Set<String> = [], file: String) throws {
        let archiver = WeightSectionArchiver()
        let encoder = BundleJSON.encoder()
        encoder.userInfo[.constantArchiver] = archiver
        do {
            model = Array(try encoder.encode(graph))
            info = Array(try BundleJSON.encoder().encode(BundleInfo(producer: producer, source: source,
                                                                      disabledPasses: disabledPasses.isEmpty ? nil : disabledPasses.sorted())))
        } catch {
            throw BundleError.writeFailed(file: file, reason: "cannot encode the graph as JSON", cause: DiagnosticCause(error))
        }
        weights = archiver.entries
        weightSize = archiver.size
        let tableEnd = BundleFormat.fixedHeaderSize + 3 * BundleFormat.sectionEntrySize
        let infoOffset = tableEnd
        let modelOffset = infoOffset + info.count
        weightOffset = alignUp(modelOffset + model.count, BundleFormat.weightAlignment)
        let fileSize = weightOffset + weightSize + BundleFormat.trailerSize
        header = BundleHeader(
            version: BundleFormat.version(forEncodings: archiver.entries.map(\.tensor.encoding)), flags: 0, fileSize: UInt64(fileSize),
            sections: [
                SectionEntry(kind: SectionKind.info.rawValue, offset: UInt64(infoOffset), length: UInt64(info.count)),
                SectionEntry(kind: SectionKind.model.rawValue, offset: UInt64(modelOffset), length: UInt64(model.count)),
                SectionEntry(kind: SectionKind.weights.rawValue, offset: UInt64(weightOffset), length: UInt64(weightSize)),
            ])
    }

    func write(to sink: inout ByteSink) throws {
        try sink.write(header.serialized())
        try sink.write(info)
        try sink.write(model)
        try sink.writeZeros(weightOffset - sink.position)
        for (tensor, offset) in weights {
            try sink.writeZeros(weightOffset + offset - sink.position)
            try sink.write(UnsafeRawBufferPointer(start: tensor.storage.baseAddress, count: tensor.encodedByteCount))
        }
        try sink.writeZeros(weightOffset + weightSize - sink.position)
        precondition(sink.position == Int(header.fileSize) - BundleFormat.trailerSize, "bundle layout mismatch")
        var trailer: [UInt8] = []
        trailer.appendLE(sink.hasher.finalize())
        try sink.write(trailer)
        try sink.flush()
    }
}

/// Buffered writer to a file descriptor (or to memory) that hashes everything it writes.
struct ByteSink {
    let fd: Int32
    var hasher = XXH64()
    var position = 0
    var buffer: [UInt8] = []
    var collect: [UInt8]?
    var faultInjection: ((Int) throws -> Void)?
    static let bufferSize = 1 << 20

    init(fd: Int32) { self.fd = fd; buffer.reserveCapacity(ByteSink.bufferSize) }

    mutating func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        hasher.update(bytes)
        position += bytes.count
        if collect != nil { collect!.append(contentsOf: bytes); return }
        if buffer.count + bytes.count <= ByteSink.bufferSize {
            buffer.append(contentsOf: bytes)
        } else {
            try flush()
            try writeAll(bytes)  // large constants go straight from their storage to the file
        }
    }

    mutating func writeZeros(_ n: Int) throws {
        precondition(n >= 0, "bundle layout goes backwards")
        if n > 0 { try write([UInt8](repeating: 0, count: n)) }
    }

    mutating func flush() throws {
        guard collect == nil, !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private var written = 0
    private mutating func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var p = bytes.baseAddress!, left = bytes.count
        while left > 0 {
            let n = systemWrite(fd, p, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw IOFailure(errno: errno, operation: "write")
            }
            p += n; left -= n; written += n
        }
        try faultInjection?(written)
    }
}

struct IOFailure: Error, CustomStringConvertible {
    let message: String
    init(errno e: Int32, operation: String) { message = "\(operation): \(String(cString: strerror(e)))" }
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Writes `url` through `AtomicFile` (temporary file, fsync, rename, directory fsync; the
/// temporary file is removed on any failure and on SIGINT/SIGTERM), mapping every failure to
/// `BundleError.writeFailed` naming the file.
func writeAtomically(to url: URL, _ body: (inout ByteSink) throws -> Void) throws {
    let file = url.path
    do {
        try AtomicFile.write(to: file) { fd in
            var sink = ByteSink(fd: fd)
            try body(&sink)
        }
    } catch let e as BundleError {
        throw e
    } catch let e as AtomicFileError {
        throw BundleError.writeFailed(file: file, reason: "", cause: DiagnosticCause(e))
    } catch {
        throw BundleError.writeFailed(file: file, reason: "", cause: DiagnosticCause(error))
    }
}

private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, p, n)
    #else
    return Darwin.write(fd, p, n)
    #endif
}
