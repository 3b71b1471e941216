// The ML program weight file (`weights/weight.bin`), as coremltools' MIL blob storage writer
// lays it out (storage format version 2; mlmodel/src/MILBlob/Blob/StorageFormat.hpp):
//
//   offset 0   storage header, 64 bytes: UInt32 count, UInt32 version (= 2), 7 × UInt64 zero
//   then per blob, each part starting at a multiple of 64 bytes (zero bytes fill the gaps):
//     metadata, 64 bytes: UInt32 sentinel 0xDEADBEEF, UInt32 data type, UInt64 size in bytes,
//                         UInt64 data offset (= metadata offset + 64), UInt64 padding bits,
//                         4 × UInt64 zero
//     data, `size in bytes` bytes
//   All integers little-endian. The file ends right after the last blob's data.
//
// A MIL `BlobFileValue` names the blob by the offset of its METADATA (what `append` returns).
// Sub-byte types (int4, uint1/2/3/4/6) are packed as one little-endian bit stream: element i
// occupies bits [i·w, i·w + w) counting from bit 0 of byte 0, so for 4-bit values the first
// element is the low nibble; `padding bits` = unused high bits of the last byte.

import AtomicFile
import Diagnostics

/// Builds the bytes of a MIL blob storage file (`weight.bin`) in memory.
///
/// ```swift
/// var blobs = MILBlobWriter()
/// let offset = blobs.append(float32: weights)      // → BlobFileValue(fileName: "@model_path/weights/weight.bin", offset: offset)
/// try blobs.write(toFile: "…/weights/weight.bin")
/// ```
public struct MILBlobWriter: Sendable {
    /// The blob data type codes of the storage format (`BlobDataType`; values only ever added).
    public enum DataType: UInt32, CaseIterable, Sendable {
        case float16 = 1, float32 = 2, uint8 = 3, int8 = 4, bfloat16 = 5, int16 = 6, uint16 = 7
        case int4 = 8, uint1 = 9, uint2 = 10, uint4 = 11, uint3 = 12, uint6 = 13
        case int32 = 14, uint32 = 15, float8E4M3FN = 16, float8E5M2 = 17

        /// Bits per element.
        public var bitWidth: Int {
            switch self {
            case .uint1: return 1
            case .uint2: return 2
            case .uint3: return 3
            case .int4, .uint4: return 4
            case .uint6: return 6
            case .uint8, .int8, .float8E4M3FN, .float8E5M2: return 8
            case .float16, .bfloat16, .int16, .uint16: return 16
            case .float32, .int32, .uint32: return 32
            }
        }

        /// Whether elements are narrower than a byte (packed, with `padding bits`).
        public var isSubByte: Bool { bitWidth < 8 }

        /// The range of integer values a sub-byte or 8-bit integer type holds.
        public var integerRange: ClosedRange<Int>? {
            switch self {
            case .int4: return -8 ... 7
            case .int8: return -128 ... 127
            case .uint1, .uint2, .uint3, .uint4, .uint6, .uint8: return 0 ... (1 << bitWidth) - 1
            default: return nil
            }
        }
    }

    /// The storage format alignment of every metadata record and blob (bytes).
    public static let alignment = 64
    /// The value of a metadata record's first four bytes.
    public static let sentinel: UInt32 = 0xDEAD_BEEF
    /// The storage format version written in the header.
    public static let version: UInt32 = 2

    /// The file bytes so far (always a complete, valid file: the header's count is kept current).
    public private(set) var bytes: [UInt8]
    /// Number of blobs appended.
    public private(set) var count: Int = 0

    public init() {
        bytes = [UInt8](repeating: 0, count: Self.alignment)
        storeHeader()
    }

    // MARK: Appending

    /// Appends a blob of already-encoded `data` (`elementCount` elements of `type`; sub-byte types
    /// packed as described in the file comment) and returns the offset of its metadata record —
    /// the `offset` of the MIL `BlobFileValue` that refers to it.
    ///
    /// - Throws: `MLProgramExportError.unsupportedBlobDataType` when `data.count` is not the packed
    ///   size of `elementCount` elements.
    @discardableResult
    public mutating func append(encoded data: [UInt8], type: DataType, elementCount: Int) throws -> UInt64 {
        let (bits, overflow) = elementCount.multipliedReportingOverflow(by: type.bitWidth)
        guard elementCount >= 0, !overflow, data.count == (bits + 7) / 8 else {
            throw MLProgramExportError.unsupportedBlobDataType(
                "\(type)", reason: "needs \(elementCount) elements in \(overflow ? "an impossible number of" : String((bits + 7) / 8)) bytes, given \(data.count) bytes")
        }
        let padding = type.isSubByte ? (8 - bits % 8) % 8 : 0
        return appendBlob(data, type: type, paddingBits: padding)
    }

    /// Appends float32 values (little-endian IEEE 754) and returns the metadata offset.
    @discardableResult
    public mutating func append(float32 values: [Float]) -> UInt64 {
        var data = [UInt8](); data.reserveCapacity(values.count * 4)
        for v in values { appendLE(v.bitPattern, to: &data) }
        return appendBlob(data, type: .float32, paddingBits: 0)
    }

    /// Appends IEEE 754 binary16 values given by their bit patterns and returns the metadata offset.
    @discardableResult
    public mutating func append(float16Bits values: [UInt16]) -> UInt64 {
        var data = [UInt8](); data.reserveCapacity(values.count * 2)
        for v in values { appendLE(v, to: &data) }
        return appendBlob(data, type: .float16, paddingBits: 0)
    }

    /// Appends int8 values and returns the metadata offset.
    @discardableResult
    public mutating func append(int8 values: [Int8]) -> UInt64 {
        appendBlob(values.map { UInt8(bitPattern: $0) }, type: .int8, paddingBits: 0)
    }

    /// Appends uint8 values and returns the metadata offset.
    @discardableResult
    public mutating func append(uint8 values: [UInt8]) -> UInt64 {
        appendBlob(values, type: .uint8, paddingBits: 0)
    }

    /// Appends int32 values (little-endian) and returns the metadata offset.
    @discardableResult
    public mutating func append(int32 values: [Int32]) -> UInt64 {
        var data = [UInt8](); data.reserveCapacity(values.count * 4)
        for v in values { appendLE(UInt32(bitPattern: v), to: &data) }
        return appendBlob(data, type: .int32, paddingBits: 0)
    }

    /// Packs integer `values` as `type` (int4, uint1, uint2, uint3, uint4, uint6, int8 or uint8)
    /// and appends them; returns the metadata offset.
    ///
    /// - Throws: `MLProgramExportError.blobValueOutOfRange` naming the first value outside the
    ///   type's range; `.unsupportedBlobDataType` for a type that is not an integer type of at
    ///   most 8 bits.
    @discardableResult
    public mutating func append(integers values: [Int], as type: DataType) throws -> UInt64 {
        let packed = try Self.pack(values, as: type)
        let bits = values.count * type.bitWidth
        return appendBlob(packed, type: type, paddingBits: type.isSubByte ? (8 - bits % 8) % 8 : 0)
    }

    /// Packs integers as `type` into bytes (see the file comment for the bit order).
    ///
    /// - Throws: as `append(integers:as:)`.
    public static func pack(_ values: [Int], as type: DataType) throws -> [UInt8] {
        guard let range = type.integerRange else {
            throw MLProgramExportError.unsupportedBlobDataType(
                "\(type)", reason: "is not an integer type of at most 8 bits (int4, uint1–uint6, int8, uint8)")
        }
        let w = type.bitWidth
        let mask = (1 << w) - 1
        var out = [UInt8](repeating: 0, count: (values.count * w + 7) / 8)
        for (i, v) in values.enumerated() {
            guard range.contains(v) else {
                throw MLProgramExportError.blobValueOutOfRange(dataType: "\(type)", index: i, value: v, range: range)
            }
            let field = v & mask  // two's complement for int4/int8
            let start = i * w
            let byte = start / 8, shift = start % 8
            out[byte] |= UInt8(truncatingIfNeeded: field << shift)
            if shift + w > 8 { out[byte + 1] |= UInt8(truncatingIfNeeded: field >> (8 - shift)) }
        }
        return out
    }

    // MARK: Output

    /// Writes the file atomically (`AtomicFile`).
    /// - Throws: `MLProgramExportError.cannotWrite`.
    public func write(toFile path: String) throws {
        do { try AtomicFile.write(bytes, to: path) } catch let e as AtomicFileError {
            throw MLProgramExportError.cannotWrite(path: path, reason: "", cause: DiagnosticCause(e))
        }
    }

    // MARK: Layout

    private mutating func appendBlob(_ data: [UInt8], type: DataType, paddingBits: Int) -> UInt64 {
        padToAlignment()
        let metadataOffset = bytes.count
        let dataOffset = metadataOffset + Self.alignment
        var meta = [UInt8](); meta.reserveCapacity(Self.alignment)
        appendLE(Self.sentinel, to: &meta)
        appendLE(type.rawValue, to: &meta)
        appendLE(UInt64(data.count), to: &meta)
        appendLE(UInt64(dataOffset), to: &meta)
        appendLE(UInt64(paddingBits), to: &meta)
        meta += [UInt8](repeating: 0, count: Self.alignment - meta.count)  // reserved_1…4
        bytes += meta
        bytes += data
        count += 1
        storeHeader()
        return UInt64(metadataOffset)
    }

    private mutating func padToAlignment() {
        let rem = bytes.count % Self.alignment
        if rem != 0 { bytes += [UInt8](repeating: 0, count: Self.alignment - rem) }
    }

    private mutating func storeHeader() {
        var header = [UInt8]()
        appendLE(UInt32(truncatingIfNeeded: count), to: &header)
        appendLE(Self.version, to: &header)
        bytes.replaceSubrange(0 ..< header.count, with: header)
    }
}

@inline(__always)
private func appendLE<T: FixedWidthInteger>(_ v: T, to out: inout [UInt8]) {
    withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
}
