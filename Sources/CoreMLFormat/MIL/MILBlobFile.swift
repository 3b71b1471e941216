// The ML program weight file (`weights/weight.bin`, Core ML's "blob storage v2"), read in place
// through mmap. Layout (little-endian), as coremltools' MILBlob StorageFormat describes it:
//
//   offset 0   storage header, 64 bytes: UInt32 count (number of blobs), UInt32 version (= 2),
//              then reserved bytes.
//   each blob  a 64-byte metadata record at a 64-byte-aligned offset (the offset a program's
//              `BlobFileValue.offset` names): UInt32 sentinel 0xDEADBEEF, UInt32 data type
//              (`MILBlobDataType`), UInt64 size of the data in bytes, UInt64 offset of the data
//              in the file, UInt64 padding in bits at the end of sub-byte data (read for
//              sub-byte types only: older writers leave garbage in this once-reserved field),
//              reserved bytes. The data follows, 64-byte aligned.
//
// Sub-byte data (int4, uint1 … uint6) packs elements LSB first: element i occupies bits
// [i·n, i·n + n) of the byte stream, bit 0 being the lowest bit of byte 0.
import Foundation
import Diagnostics
import MLGraph
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Element type of one blob (`MILBlob::Blob::BlobDataType`, stored as UInt32).
public enum MILBlobDataType: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case float16 = 1, float32 = 2, uint8 = 3, int8 = 4, bfloat16 = 5, int16 = 6, uint16 = 7
    case int4 = 8, uint1 = 9, uint2 = 10, uint4 = 11, uint3 = 12, uint6 = 13
    case int32 = 14, uint32 = 15, float8E4M3FN = 16, float8E5M2 = 17

    /// Bits per element.
    public var bitWidth: Int {
        switch self {
        case .float32, .int32, .uint32: return 32
        case .float16, .bfloat16, .int16, .uint16: return 16
        case .uint8, .int8, .float8E4M3FN, .float8E5M2: return 8
        case .int4, .uint4: return 4
        case .uint1: return 1
        case .uint2: return 2
        case .uint3: return 3
        case .uint6: return 6
        }
    }

    /// Whether elements are narrower than a byte (packed LSB first).
    public var isSubByte: Bool { bitWidth < 8 }
    /// Whether a sub-byte or 8-bit integer type is signed (two's complement).
    public var isSigned: Bool { self == .int4 || self == .int8 || self == .int16 || self == .int32 }

    /// The matching MIL tensor element type.
    public var milDataType: Spec.MILSpec.DataType {
        switch self {
        case .float16: return .float16
        case .float32: return .float32
        case .uint8: return .uint8
        case .int8: return .int8
        case .bfloat16: return .bfloat16
        case .int16: return .int16
        case .uint16: return .uint16
        case .int4: return .int4
        case .uint1: return .uint1
        case .uint2: return .uint2
        case .uint4: return .uint4
        case .uint3: return .uint3
        case .uint6: return .uint6
        case .int32: return .int32
        case .uint32: return .uint32
        case .float8E4M3FN: return .float8e4m3fn
        case .float8E5M2: return .float8e5m2
        }
    }

    /// The MIL name of the type (`fp16`, `int4`, `uint6`, …).
    public var description: String {
        switch self {
        case .float16: return "fp16"
        case .float32: return "fp32"
        case .bfloat16: return "bf16"
        case .float8E4M3FN: return "fp8e4m3fn"
        case .float8E5M2: return "fp8e5m2"
        case .uint8: return "uint8"
        case .int8: return "int8"
        case .int16: return "int16"
        case .uint16: return "uint16"
        case .int4: return "int4"
        case .uint1: return "uint1"
        case .uint2: return "uint2"
        case .uint4: return "uint4"
        case .uint3: return "uint3"
        case .uint6: return "uint6"
        case .int32: return "int32"
        case .uint32: return "uint32"
        }
    }
}

/// A problem with a weight blob file: every message names the file, the byte offset, what was
/// expected and what was found.
public enum MILBlobError: Error, Equatable, CustomStringConvertible {
    /// The file cannot be opened or mapped.
    case unreadable(file: String, reason: String)
    /// The file is not a blob storage file (too short for the header, or another version).
    case invalidHeader(file: String, expected: String, found: String)
    /// A metadata record is out of bounds, misaligned, or malformed.
    case invalidMetadata(file: String, offset: UInt64, expected: String, found: String)
    /// The blob does not hold what the program's type says.
    case typeMismatch(file: String, offset: UInt64, expected: String, found: String)

    public var description: String {
        switch self {
        case let .unreadable(file, reason):
            return "\(file): cannot read the ML program weight file: \(reason)"
        case let .invalidHeader(file, expected, found):
            return "\(file): not an ML program weight file: expected \(expected), found \(found). "
                + "The file may be truncated or not be a Core ML weight.bin; re-export the model."
        case let .invalidMetadata(file, offset, expected, found):
            return "\(file): blob at offset \(offset): expected \(expected), found \(found). "
                + "The weight file does not match the program (truncated or corrupted); re-export the model."
        case let .typeMismatch(file, offset, expected, found):
            return "\(file): blob at offset \(offset): the program expects \(expected), the blob holds \(found). "
                + "The weight file belongs to another model version; re-export the model."
        }
    }
}

/// One blob of a weight file: its element type and its bytes, pointing into the mapping.
public struct MILBlob: @unchecked Sendable {
    public let dataType: MILBlobDataType
    /// Offset of the metadata record (what `BlobFileValue.offset` says).
    public let metadataOffset: UInt64
    /// Offset of the data in the file.
    public let dataOffset: UInt64
    /// The data bytes, inside the mapping (`file` keeps it alive while this blob lives).
    public let bytes: UnsafeRawBufferPointer
    /// The file the blob was read from.
    public let file: MILBlobFile
    /// Unused bits at the end of sub-byte data.
    public let paddingBits: Int

    /// Number of elements the bytes hold (for sub-byte types: whole bytes × 8 − padding, / bits).
    public var elementCount: Int {
        (bytes.count * 8 - paddingBits) / dataType.bitWidth
    }
}

/// A memory-mapped ML program weight file. Thread-safe (read-only); the mapping lives as long as
/// this object, and `storage(of:)` keeps it alive for the constants that point into it.
public final class MILBlobFile: @unchecked Sendable {
    /// The file path (for messages).
    public let path: String
    /// Number of blobs the header announces.
    public let count: UInt32
    /// The header's version (always 2 for files mlconv accepts).
    public let version: UInt32
    /// The whole file.
    public let bytes: UnsafeRawBufferPointer
    private let mapping: UnsafeMutableRawPointer?
    private let mappedLength: Int

    /// The sentinel that opens every metadata record.
    public static let sentinel: UInt32 = 0xDEAD_BEEF
    /// Header and metadata records are this many bytes; records and data are aligned to it.
    public static let alignment = 64

    /// Maps `path` and checks its header.
    ///
    /// - Throws: `MILBlobError.unreadable` if the file cannot be opened or mapped,
    ///   `.invalidHeader` if it is shorter than 64 bytes or its version is not 2.
    /// - Parameter name: how messages name the file (default: `path`).
    public init(path: String, name: String? = nil) throws {
        self.path = name ?? path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw MILBlobError.unreadable(file: self.path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw MILBlobError.unreadable(file: self.path, reason: String(cString: strerror(errno))) }
        let size = Int(st.st_size)
        guard size >= Self.alignment else {
            throw MILBlobError.invalidHeader(file: self.path, expected: "a 64-byte header", found: "\(size) bytes in all")
        }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
            throw MILBlobError.unreadable(file: self.path, reason: "mmap failed: " + String(cString: strerror(errno)))
        }
        mapping = p
        mappedLength = size
        bytes = UnsafeRawBufferPointer(start: p, count: size)
        count = bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian
        version = bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        guard version == 2 else {
            throw MILBlobError.invalidHeader(file: self.path, expected: "version 2 in the header", found: "version \(version)")
        }
        // Every blob needs at least its 64-byte record after the header.
        guard UInt64(count) <= UInt64(size / Self.alignment) else {
            throw MILBlobError.invalidHeader(file: self.path, expected: "at most \(size / Self.alignment - 1) blobs in \(size) bytes",
                                             found: "a count of \(count)")
        }
    }

    /// Wraps bytes already in memory (tests, packages read from archives). They are copied.
    public convenience init(bytes data: [UInt8], name: String) throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-blob-\(UUID().uuidString).bin")
        try Data(data).write(to: tmp)
        defer { try? FileManager.default.removeItem(at: tmp) }
        try self.init(path: tmp.path, name: name)
    }

    deinit {
        if let mapping { munmap(mapping, mappedLength) }
    }

    /// The blob whose metadata record starts at `offset`, every field validated: alignment,
    /// sentinel, data type, data range inside the file, padding smaller than one byte.
    ///
    /// - Throws: `MILBlobError.invalidMetadata` naming the offset and the problem.
    public func blob(at offset: UInt64) throws -> MILBlob {
        func bad(_ expected: String, _ found: String) -> MILBlobError {
            .invalidMetadata(file: path, offset: offset, expected: expected, found: found)
        }
        let size = UInt64(bytes.count)
        guard offset >= UInt64(Self.alignment), offset % UInt64(Self.alignment) == 0 else {
            throw bad("a 64-byte-aligned metadata offset after the header", "offset \(offset)")
        }
        guard offset <= size, size - offset >= UInt64(Self.alignment) else {
            throw bad("a 64-byte metadata record inside the file (\(size) bytes)", "a record past the end")
        }
        let o = Int(offset)
        let sentinel = bytes.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian
        guard sentinel == Self.sentinel else {
            throw bad("the sentinel 0xDEADBEEF", "0x" + String(sentinel, radix: 16, uppercase: true))
        }
        let rawType = bytes.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self).littleEndian
        guard let type = MILBlobDataType(rawValue: rawType) else {
            throw bad("a blob data type 1…17", "\(rawType)")
        }
        let byteCount = bytes.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self).littleEndian
        let dataOffset = bytes.loadUnaligned(fromByteOffset: o + 16, as: UInt64.self).littleEndian
        // The padding field was reserved (and is not zeroed by every writer, e.g. coremltools 7)
        // before sub-byte types existed: it is read for sub-byte blobs only.
        let padding = type.isSubByte ? bytes.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self).littleEndian : 0
        guard dataOffset >= offset + UInt64(Self.alignment) else {
            throw bad("data after the metadata record (offset ≥ \(offset + 64))", "data offset \(dataOffset)")
        }
        guard dataOffset <= size, byteCount <= size - dataOffset else {
            throw bad("\(byteCount) data bytes at offset \(dataOffset) inside the file (\(size) bytes)", "they run past the end")
        }
        guard padding < 8 else {
            throw bad("fewer than 8 padding bits", "\(padding) padding bits for \(type) data")
        }
        guard type.isSubByte || byteCount % UInt64(type.bitWidth / 8) == 0 else {
            throw bad("a whole number of \(type) elements", "\(byteCount) bytes")
        }
        guard byteCount > 0 || padding == 0 else { throw bad("padding only after data", "\(padding) bits of padding in an empty blob") }
        return MILBlob(dataType: type, metadataOffset: offset, dataOffset: dataOffset,
                       bytes: UnsafeRawBufferPointer(rebasing: bytes[Int(dataOffset)..<Int(dataOffset + byteCount)]),
                       file: self, paddingBits: Int(padding))
    }

    /// The blob at `offset`, checked to hold exactly `elementCount` elements of `expected`.
    ///
    /// - Throws: `MILBlobError.typeMismatch` when the type or element count differ.
    public func blob(at offset: UInt64, expecting expected: MILBlobDataType, elementCount: Int) throws -> MILBlob {
        let b = try blob(at: offset)
        guard b.dataType == expected else {
            throw MILBlobError.typeMismatch(file: path, offset: offset, expected: "\(expected)", found: "\(b.dataType)")
        }
        // Sub-byte writers may round up to whole bytes without recording the padding.
        let fits = b.dataType.isSubByte
            ? b.bytes.count == (elementCount * b.dataType.bitWidth + 7) / 8
            : b.elementCount == elementCount
        guard fits else {
            throw MILBlobError.typeMismatch(file: path, offset: offset, expected: "\(elementCount) \(expected) elements",
                                            found: "\(b.bytes.count) bytes (\(b.elementCount) elements)")
        }
        // MARK: errors (issue 13): --max-memory before the constant is expanded to float32
        try MemoryLimit.check(count: elementCount, elementSize: 4,
                              for: "the weight blob at offset \(offset) (\(elementCount) \(expected) elements, as float32)", file: path)
        return b
    }

    /// Storage for a constant that points into the mapping without copying; it keeps this file
    /// mapped while it lives.
    public func storage(of blob: MILBlob) -> ByteStorage {
        ByteStorage(borrowing: blob.bytes.baseAddress ?? UnsafeRawPointer(bytes.baseAddress!), count: blob.bytes.count, owner: self,
                    readOnlyFileMapping: true)
    }
}

/// Unpacks `count` codes of `bits` (1…8) bits each, packed LSB first as ML program blobs and
/// `constexpr_*` immediate values store them. Signed codes (int4) are sign-extended.
///
/// - Returns: nil when `bytes` holds fewer than `count · bits` bits.
public func unpackLSBFirst(_ bytes: UnsafeRawBufferPointer, bits: Int, count: Int, signed: Bool = false) -> [Int32]? {
    guard bits >= 1, bits <= 8, count >= 0 else { return nil }
    let (totalBits, overflow) = count.multipliedReportingOverflow(by: bits)
    guard !overflow, totalBits <= bytes.count * 8 else { return nil }
    var out = [Int32](repeating: 0, count: count)
    let mask = (1 << bits) - 1
    var bitPos = 0
    for i in 0..<count {
        var v = 0
        var got = 0
        while got < bits {
            let byte = Int(bytes[bitPos >> 3])
            let shift = bitPos & 7
            let take = min(bits - got, 8 - shift)
            v |= ((byte >> shift) & ((1 << take) - 1)) << got
            got += take
            bitPos += take
        }
        v &= mask
        if signed, v & (1 << (bits - 1)) != 0 { v -= 1 << bits }
        out[i] = Int32(v)
    }
    return out
}
