import MLGraph

/// Version of the `.mlbundle` file format (not of mlconv). See docs/BUNDLE_FORMAT.md § Versioning.
///
/// A reader accepts every file of its own major version, whatever the minor (minor versions only
/// add things older readers can ignore), and refuses a newer major version.
public struct BundleFormatVersion: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var major: UInt16
    public var minor: UInt16
    public init(major: UInt16, minor: UInt16) { self.major = major; self.minor = minor }
    public var description: String { "\(major).\(minor)" }
    public static func < (a: Self, b: Self) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
}

/// Constants of the `.mlbundle` format, specified in docs/BUNDLE_FORMAT.md.
public enum BundleFormat {
    /// The version this build writes for a graph without 2.1 encodings (`compressedWeightsVersion`
    /// otherwise). It reads every file whose major version is this one or 1
    /// (format 1.x files hold the legacy graph layout, `GraphEncoding.legacy`).
    public static let currentVersion = BundleFormatVersion(major: 2, minor: 0)
    // MARK: compressed ML program weights
    /// The newest version this build reads and writes: 2.1 adds the compressed weight encodings
    /// `blockwise`, `palettized` and `sparse` (docs/BUNDLE_FORMAT.md §5.3). A writer writes 2.1
    /// only for a graph that holds one of them (`version(forEncodings:)`), so that a graph
    /// readable by a 2.0 reader stays a 2.0 file, byte for byte.
    public static let compressedWeightsVersion = BundleFormatVersion(major: 2, minor: 1)

    /// The version a file holding constants of `encodings` is written in: the oldest whose
    /// readers know every encoding (`currentVersion`, or `compressedWeightsVersion`).
    public static func version(forEncodings encodings: [WeightEncoding]) -> BundleFormatVersion {
        encodings.contains { $0.isFormat21Encoding } ? compressedWeightsVersion : currentVersion
    }

    /// Oldest major version this build reads.
    public static let oldestReadableMajorVersion: UInt16 = 1
    /// The 8 bytes a bundle starts with: ASCII "MLBUNDLE".
    public static let magic: [UInt8] = Array("MLBUNDLE".utf8)
    /// Conventional file extension.
    public static let fileExtension = "mlbundle"
    /// Alignment, in the file and therefore in memory once mapped, of the weight section and of
    /// every constant inside it.
    public static let weightAlignment = 64
    /// Size of the fixed header that precedes the section table.
    public static let fixedHeaderSize = 32
    /// Size of one section-table entry.
    public static let sectionEntrySize = 24
    /// Size of the trailer (the checksum) that ends the file.
    public static let trailerSize = 8
    /// Smallest possible file: fixed header, no section, trailer.
    static let minimumFileSize = fixedHeaderSize + trailerSize
    /// More section-table entries than this is treated as corruption.
    static let maximumSectionCount = 4096
    /// Flags bits 0–15 mark features a reader must understand (it refuses a file with an unknown
    /// one); bits 16–31 mark optional features a reader may ignore. Version 1.0 defines none.
    static let requiredFlagsMask: UInt32 = 0x0000_FFFF
    static let knownRequiredFlags: UInt32 = 0
}

/// Kinds of sections in the section table. Readers ignore kinds they do not know (a later minor
/// version may add some); 1.0 files hold exactly one of each kind below.
enum SectionKind: UInt32, CaseIterable {
    /// UTF-8 JSON `BundleInfo`: producer and source.
    case info = 1
    /// UTF-8 JSON of the `MLGraph.Graph`, constants as `WeightLocation`s into the weight section.
    case model = 2
    /// Raw constant bytes, 64-byte aligned.
    case weights = 3

    var name: String {
        switch self {
        case .info: return "info"
        case .model: return "model"
        case .weights: return "weights"
        }
    }
}

/// The info section: who wrote the bundle, and from what.
struct BundleInfo: Codable, Equatable {
    /// E.g. "mlconv 0.1.0".
    var producer: String
    /// What the model was compiled from, e.g. "keras:model.h5" ("" when unknown).
    var source: String
    /// Inference passes (`PassPipeline.inference`) the writer was told not to run, sorted; absent
    /// (nil) when none, so bundles without disabled passes keep their bytes.
    var disabledPasses: [String]? = nil
}

struct SectionEntry: Equatable {
    var kind: UInt32
    var offset: UInt64
    var length: UInt64
}

/// The fixed header and the section table, as laid out at the start of the file.
struct BundleHeader: Equatable {
    var version: BundleFormatVersion
    var flags: UInt32
    var fileSize: UInt64
    var sections: [SectionEntry]

    var byteCount: Int { BundleFormat.fixedHeaderSize + sections.count * BundleFormat.sectionEntrySize }

    /// Serializes header + section table (little-endian).
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(byteCount)
        out += BundleFormat.magic
        out.appendLE(version.major)
        out.appendLE(version.minor)
        out.appendLE(flags)
        out.appendLE(fileSize)
        out.appendLE(UInt32(sections.count))
        out.appendLE(UInt32(0))  // reserved
        for s in sections {
            out.appendLE(s.kind)
            out.appendLE(UInt32(0))  // reserved
            out.appendLE(s.offset)
            out.appendLE(s.length)
        }
        return out
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ v: T) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    /// Little-endian integer at `offset` (caller checks bounds).
    func readLE<T: FixedWidthInteger>(_ offset: Int, as: T.Type = T.self) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

@inline(__always) func alignUp(_ n: Int, _ a: Int) -> Int { (n + a - 1) / a * a }
