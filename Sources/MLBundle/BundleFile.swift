import Foundation
import Diagnostics
import MLGraph
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only, private memory mapping of a whole file; unmapped when the last reference goes
/// (the `BundleFile`, and every `ByteStorage` borrowed from it, hold one).
final class MappedFile: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    /// Maps `size` (> 0) bytes of `fd` with PROT_READ, MAP_PRIVATE.
    init(fd: Int32, size: Int, file: String) throws {
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw BundleError.cannotOpen(file: file, reason: "mmap failed: \(String(cString: strerror(errno)))")
        }
        bytes = UnsafeRawBufferPointer(start: p, count: size)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count) }
}

/// An `.mlbundle` opened for inference: the file is memory-mapped (PROT_READ, MAP_PRIVATE) and
/// every constant of `graph` points into the mapping, without copying. The mapping stays alive
/// as long as this object or any of the graph's constants does.
///
/// Loading checks the header, the version, the size, the checksum (unless `verifyChecksum` is
/// false), the section table, every weight location (in bounds, 64-byte aligned, the size its
/// shape and encoding need), and verifies the graph; any failure throws `BundleError`, never
/// traps, whatever the bytes. The file must not be modified in place while mapped (the writer
/// never does: it replaces files by `rename`).
public final class BundleFile: @unchecked Sendable {
    public let url: URL
    /// The model: topologically ordered nodes, resolved `tensorTypes`, description and metadata.
    public let graph: Graph
    /// Format version the file was written in (its major version is `BundleFormat.currentVersion.major`).
    public let formatVersion: BundleFormatVersion
    /// The tool that wrote the file, e.g. "mlconv 0.1.0".
    public let producer: String
    /// What the model was compiled from, e.g. "keras:model.h5" ("" when not recorded).
    public let source: String
    /// Inference passes the writer disabled (`mlconv keras/compile --disable-pass`), which
    /// loaders should keep disabled (`Model.Configuration.disabledPasses`); empty when none.
    public let disabledPasses: Set<String>
    /// The file's size in bytes.
    public let fileSize: Int
    /// The XXH64 checksum stored in the file's trailer.
    public let checksum: UInt64
    /// Whether `checksum` was compared with the file's contents when loading.
    public let checksumVerified: Bool

    private let mapping: MappedFile
    private let weightRange: Range<Int>

    /// The whole mapped file (read-only).
    public var mappedBytes: UnsafeRawBufferPointer { mapping.bytes }
    /// The weight section inside the mapping (64-byte aligned).
    public var weightSection: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: mapping.bytes[weightRange]) }

    /// Bytes of constants per encoding (`WeightEncoding.description`: "fp32", "fp16",
    /// "4-bit linear", "3-bit LUT", …), each stored constant counted once, padding excluded.
    public var weightByteCountsByEncoding: [String: Int] {
        var seen = Set<UnsafeRawPointer>()
        var out: [String: Int] = [:]
        for node in graph.nodes {
            for w in node.weights.values where w.encodedByteCount > 0 && seen.insert(w.storage.baseAddress).inserted {
                out[w.encoding.description, default: 0] += w.encodedByteCount
            }
        }
        return out
    }

    /// Maps and decodes the bundle at `url`.
    /// - Parameter verifyChecksum: compare the XXH64 checksum with the contents (reads the whole
    ///   file once). Without it, damaged weight bytes go unnoticed (damaged structure still
    ///   throws).
    /// - Throws: `BundleError`.
    public init(contentsOf url: URL, verifyChecksum: Bool = true) throws {
        let file = url.path
        self.url = url
        self.checksumVerified = verifyChecksum

        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BundleError.cannotOpen(file: file, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw BundleError.cannotOpen(file: file, reason: String(cString: strerror(errno))) }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw BundleError.notABundle(file: file, looksLike: .directory, firstBytes: []) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw BundleError.cannotOpen(file: file, reason: "not a regular file") }
        let size = Int(st.st_size)
        guard size > 0 else { throw BundleError.truncated(file: file, expectedBytes: BundleFormat.minimumFileSize, foundBytes: 0) }
        mapping = try MappedFile(fd: fd, size: size, file: file)
        let b = mapping.bytes
        fileSize = size

        // Magic.
        let m = Swift.min(8, size)
        guard b.prefix(m).elementsEqual(BundleFormat.magic.prefix(m)) else {
            throw BundleError.notABundle(file: file, looksLike: recognizeFormat(b), firstBytes: Array(b.prefix(16)))
        }
        guard size >= BundleFormat.fixedHeaderSize else {
            throw BundleError.truncated(file: file, expectedBytes: BundleFormat.minimumFileSize, foundBytes: size)
        }
        // Version, before anything a newer major version may lay out differently.
        let version = BundleFormatVersion(major: b.readLE(8), minor: b.readLE(10))
        if version.major > BundleFormat.currentVersion.major {
            throw BundleError.newerVersion(file: file, found: version, supported: BundleFormat.currentVersion)
        }
        guard version.major >= BundleFormat.oldestReadableMajorVersion else {
            throw BundleError.corrupted(file: file, reason: "format version \(version) does not exist (this mlconv writes \(BundleFormat.currentVersion))")
        }
        formatVersion = version
        // Size.
        let declared = b.readLE(16, as: UInt64.self)
        guard declared <= UInt64(size) else {
            throw BundleError.truncated(file: file, expectedBytes: declared > UInt64(Int.max) ? Int.max : Int(declared), foundBytes: size)
        }
        guard declared == UInt64(size) else {
            throw BundleError.corrupted(file: file, reason: "the header records \(declared) bytes but the file has \(size)")
        }
        guard size >= BundleFormat.minimumFileSize else {
            throw BundleError.truncated(file: file, expectedBytes: BundleFormat.minimumFileSize, foundBytes: size)
        }
        // Checksum: XXH64 of every byte before the trailer.
        let contentEnd = size - BundleFormat.trailerSize
        checksum = b.readLE(contentEnd, as: UInt64.self)
        if verifyChecksum {
            let computed = XXH64.hash(UnsafeRawBufferPointer(rebasing: b[0..<contentEnd]))
            guard computed == checksum else {
                throw BundleError.corrupted(file: file, reason: "checksum mismatch (stored \(hex(checksum)), computed \(hex(computed))): the file was damaged or modified after it was written")
            }
        }
        // Flags.
        let flags: UInt32 = b.readLE(12)
        let unknownRequired = flags & BundleFormat.requiredFlagsMask & ~BundleFormat.knownRequiredFlags
        guard unknownRequired == 0 else {
            throw BundleError.corrupted(file: file, reason: "it requires features unknown to this mlconv (flags \(hex(UInt64(unknownRequired)))); if it was written by a newer mlconv, upgrade mlconv")
        }
        // Section table.
        let sectionCount = Int(b.readLE(24, as: UInt32.self))
        let tableEnd = BundleFormat.fixedHeaderSize + sectionCount * BundleFormat.sectionEntrySize
        guard sectionCount <= BundleFormat.maximumSectionCount, tableEnd <= contentEnd else {
            throw BundleError.corrupted(file: file, reason: "the section table (\(sectionCount) entries) runs past the end of the file")
        }
        var found: [SectionKind: Range<Int>] = [:]
        for i in 0..<sectionCount {
            let e = BundleFormat.fixedHeaderSize + i * BundleFormat.sectionEntrySize
            let kindValue: UInt32 = b.readLE(e)
            let offset: UInt64 = b.readLE(e + 8), length: UInt64 = b.readLE(e + 16)
            guard let kind = SectionKind(rawValue: kindValue) else { continue }  // a later minor version's
            guard offset >= UInt64(tableEnd), offset <= UInt64(contentEnd), length <= UInt64(contentEnd) - offset else {
                throw BundleError.corrupted(file: file, reason: "the \(kind.name) section (offset \(offset), \(length) bytes) lies outside the file's contents (bytes \(tableEnd)..<\(contentEnd))")
            }
            guard found[kind] == nil else {
                throw BundleError.corrupted(file: file, reason: "the section table lists two \(kind.name) sections")
            }
            found[kind] = Int(offset)..<Int(offset + length)
        }
        for kind in SectionKind.allCases where found[kind] == nil {
            throw BundleError.corrupted(file: file, reason: "it has no \(kind.name) section")
        }
        let ranges = found.sorted { $0.value.lowerBound < $1.value.lowerBound }
        for (x, y) in zip(ranges, ranges.dropFirst()) where x.value.overlaps(y.value) {
            throw BundleError.corrupted(file: file, reason: "the \(x.key.name) and \(y.key.name) sections overlap")
        }
        let weights = found[.weights]!
        guard weights.lowerBound % BundleFormat.weightAlignment == 0 else {
            throw BundleError.corrupted(file: file, reason: "the weight section starts at offset \(weights.lowerBound), which is not \(BundleFormat.weightAlignment)-byte aligned")
        }
        weightRange = weights

        // Info.
        let infoBytes = BundleFile.data(b, found[.info]!)
        let info: BundleInfo
        do {
            info = try BundleJSON.decoder().decode(BundleInfo.self, from: infoBytes)
        } catch {
            throw BundleError.corrupted(file: file, reason: "the info section is not valid: \(describeDecodingError(error))")
        }
        producer = info.producer
        source = info.source
        disabledPasses = Set(info.disabledPasses ?? [])

        // Model.
        do {
            graph = try BundleFile.decodeGraph(BundleFile.data(b, found[.model]!), weights: UnsafeRawBufferPointer(rebasing: b[weights]),
                                               owner: mapping, file: file, version: version)
        } catch let BundleError.corrupted(file, reason, cause) where version > BundleFormat.compressedWeightsVersion {
            // A newer minor version may use ops, encodings or fields this build does not know.
            throw BundleError.corrupted(file: file, reason: reason + " (the file is format \(version), newer than this mlconv's \(BundleFormat.compressedWeightsVersion): it may use features this mlconv does not know; upgrade mlconv)", cause: cause)
        }
    }

    /// The bytes of `range` as `Data`, without copying (valid while the mapping is).
    private static func data(_ b: UnsafeRawBufferPointer, _ range: Range<Int>) -> Data {
        guard !range.isEmpty else { return Data() }
        return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: b.baseAddress! + range.lowerBound), count: range.count, deallocator: .none)
    }

    /// Decodes the model section: first a light pass that checks every constant's shape, encoding
    /// and location (so `ConstantTensor` never sees out-of-range values), then the graph, whose
    /// constants borrow the weight bytes; then checks and verifies the graph.
    static func decodeGraph(_ json: Data, weights: UnsafeRawBufferPointer, owner: AnyObject, file: String,
                            version: BundleFormatVersion = BundleFormat.currentVersion) throws -> Graph {
        do {
            let probeDecoder = BundleJSON.decoder(for: version)
            let probe = try probeDecoder.decode(ProbeGraph.self, from: json)
            for node in probe.nodes {
                for (key, c) in node.weights ?? [:] {
                    let what = "weight '\(key)' of node '\(node.name)'"
                    try ConstantTensor.checkBundleLimits(shape: c.shape, encoding: c.encoding, what: what)
                    guard let loc = c.location else { continue }
                    try checkLocation(loc, in: weights, file: file, what: what)
                    let need = c.encoding.byteCount(forElements: c.shape.reduce(1, *))
                    guard loc.byteCount == need else {
                        throw BundleError.corrupted(file: file, reason: "\(what) has \(loc.byteCount) bytes, but shape \(formatShape(c.shape)) in \(c.encoding) needs \(need)")
                    }
                }
            }
            let decoder = BundleJSON.decoder(for: version)
            decoder.userInfo[.constantUnarchiver] = WeightSectionUnarchiver(weights: weights, owner: owner, file: file)
            let graph = try decoder.decode(Graph.self, from: json)
            try graph.checkBundleLimits()
            try graph.verify()
            return graph
        } catch let e as BundleError {
            throw e
        } catch let e as GraphError {
            if let m = e.memoryLimitExceeded(file: file) { throw m }  // MARK: graph verifier: keeps .resourceLimit
            throw BundleError.corrupted(file: file, reason: "the model section does not hold a valid graph", cause: DiagnosticCause(e))
        } catch {
            throw BundleError.corrupted(file: file, reason: "the model section is not valid: \(describeDecodingError(error))")
        }
    }

    static func checkLocation(_ loc: WeightLocation, in weights: UnsafeRawBufferPointer, file: String, what: String) throws {
        guard loc.offset >= 0, loc.byteCount >= 0, loc.offset <= weights.count, loc.byteCount <= weights.count - loc.offset else {
            throw BundleError.corrupted(file: file, reason: "\(what) (offset \(loc.offset), \(loc.byteCount) bytes) lies outside the \(weights.count)-byte weight section")
        }
        guard loc.offset % BundleFormat.weightAlignment == 0 else {
            throw BundleError.corrupted(file: file, reason: "\(what) at offset \(loc.offset) is not \(BundleFormat.weightAlignment)-byte aligned")
        }
    }
}

/// Points constants at the mapped weight section.
final class WeightSectionUnarchiver: ConstantUnarchiver {
    let weights: UnsafeRawBufferPointer
    let owner: AnyObject
    let file: String
    init(weights: UnsafeRawBufferPointer, owner: AnyObject, file: String) {
        self.weights = weights; self.owner = owner; self.file = file
    }

    func storage(at location: WeightLocation) throws -> ByteStorage {
        try BundleFile.checkLocation(location, in: weights, file: file, what: "a constant")
        return ByteStorage(borrowing: weights.baseAddress! + location.offset, count: location.byteCount, owner: owner,
                           readOnlyFileMapping: true)
    }
}

/// The parts of the model JSON that must be checked before `ConstantTensor`s are built.
private struct ProbeGraph: Decodable {
    struct Node: Decodable {
        var name: String
        var weights: [String: ConstantHeader]?
    }
    var nodes: [Node]
}

func hex(_ v: UInt64) -> String { "0x" + String(v, radix: 16).leftPad(16) }

/// A one-line account of a decoding error: what and where (coding path).
func describeDecodingError(_ error: Error) -> String {
    func path(_ c: DecodingError.Context) -> String {
        let p = c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return p.isEmpty ? "" : " at \(p)"
    }
    func underlying(_ c: DecodingError.Context) -> String {
        c.underlyingError.map { " (\($0))" } ?? ""
    }
    switch error {
    case let DecodingError.dataCorrupted(c): return c.debugDescription + path(c) + underlying(c)
    case let DecodingError.keyNotFound(k, c): return "missing key '\(k.stringValue)'" + path(c)
    case let DecodingError.typeMismatch(t, c): return "expected \(t)" + path(c) + ": " + c.debugDescription
    case let DecodingError.valueNotFound(t, c): return "missing \(t) value" + path(c)
    default: return "\(error)"
    }
}
