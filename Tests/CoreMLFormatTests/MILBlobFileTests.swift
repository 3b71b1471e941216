// MILBlobFile: the weight file coremltools' own writer produced (Fixtures/mlprogram_blob, by
// Scripts/make_mlprogram_fixtures.py) read back value for value, and malformed files refused
// with typed errors naming the offset.
@testable import CoreMLFormat
import Foundation
import MLGraph
import TestSupport
import XCTest

final class MILBlobFileTests: XCTestCase {
    private struct Entry: Decodable { var dtype: String; var offset: UInt64; var values: [Double] }

    private func values(_ b: MILBlob) -> [Double] {
        let n = b.bytes.count
        switch b.dataType {
        case .float16: return (0..<n / 2).map { Double(Float(Float16(bitPattern: b.bytes.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self)))) }
        case .float32: return (0..<n / 4).map { Double(b.bytes.loadUnaligned(fromByteOffset: 4 * $0, as: Float.self)) }
        case .int8: return b.bytes.map { Double(Int8(bitPattern: $0)) }
        case .uint8: return b.bytes.map(Double.init)
        default:
            return (unpackLSBFirst(b.bytes, bits: b.dataType.bitWidth, count: b.elementCount, signed: b.dataType.isSigned) ?? []).map(Double.init)
        }
    }

    func testReadsWhatCoremltoolsWrote() throws {
        let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_blob")
        let entries = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: dir.appendingPathComponent("blobs.json")))
        let file = try MILBlobFile(path: dir.appendingPathComponent("weight.bin").path)
        XCTAssertEqual(Int(file.count), entries.count)
        XCTAssertEqual(file.version, 2)
        for e in entries {
            let b = try file.blob(at: e.offset)
            XCTAssertEqual("\(b.dataType)", e.dtype)
            XCTAssertEqual(b.dataOffset % 64, 0)
            XCTAssertEqual(b.elementCount, e.values.count, e.dtype)
            XCTAssertEqual(values(b), e.values, e.dtype)
            XCTAssertNoThrow(try file.blob(at: e.offset, expecting: b.dataType, elementCount: e.values.count))
        }
        // The fp16 blob is served without a copy.
        let fp16 = try file.blob(at: entries[0].offset)
        XCTAssertEqual(file.storage(of: fp16).baseAddress, fp16.bytes.baseAddress)
    }

    // MARK: malformed files

    /// A file of one fp32 blob [1, 2] (header, metadata at 64, data at 128), then `edit`.
    private func craft(_ edit: (inout [UInt8]) -> Void = { _ in }) throws -> MILBlobFile {
        var bytes = [UInt8](repeating: 0, count: 136)
        func put32(_ v: UInt32, _ at: Int) { withUnsafeBytes(of: v.littleEndian) { for (i, x) in $0.enumerated() { bytes[at + i] = x } } }
        func put64(_ v: UInt64, _ at: Int) { withUnsafeBytes(of: v.littleEndian) { for (i, x) in $0.enumerated() { bytes[at + i] = x } } }
        put32(1, 0); put32(2, 4)
        put32(0xDEAD_BEEF, 64); put32(2, 68); put64(8, 72); put64(128, 80)
        withUnsafeBytes(of: Float(1)) { for (i, x) in $0.enumerated() { bytes[128 + i] = x } }
        withUnsafeBytes(of: Float(2)) { for (i, x) in $0.enumerated() { bytes[132 + i] = x } }
        edit(&bytes)
        return try MILBlobFile(bytes: bytes, name: "crafted.bin")
    }

    private func expectMetadataError(_ file: MILBlobFile, at offset: UInt64 = 64, contains text: String,
                                     line: UInt = #line) {
        XCTAssertThrowsError(try file.blob(at: offset), line: line) { error in
            guard case let MILBlobError.invalidMetadata(_, o, expected, found) = error else { return XCTFail("\(error)", line: line) }
            XCTAssertEqual(o, offset, line: line)
            XCTAssertTrue((expected + " " + found).contains(text), "\(error)", line: line)
            XCTAssertTrue("\(error)".hasPrefix("crafted.bin: blob at offset"), "\(error)", line: line)
        }
    }

    func testCraftedFileReads() throws {
        let b = try craft().blob(at: 64)
        XCTAssertEqual(b.dataType, .float32)
        XCTAssertEqual(values(b), [1, 2])
    }

    func testMalformedFilesAreTypedErrors() throws {
        XCTAssertThrowsError(try MILBlobFile(bytes: [1, 0, 0, 0], name: "short.bin")) { e in
            guard case MILBlobError.invalidHeader = e else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try craft { $0[4] = 1 }) { e in  // version 1
            guard case let MILBlobError.invalidHeader(_, _, found) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(found.contains("version 1"))
        }
        XCTAssertThrowsError(try craft { $0[0] = 0xFF; $0[1] = 0xFF }) { e in  // more blobs than fit
            guard case MILBlobError.invalidHeader = e else { return XCTFail("\(e)") }
        }
        expectMetadataError(try craft { $0[64] = 0 }, contains: "0xDEADBEEF")
        expectMetadataError(try craft { $0[68] = 99 }, contains: "99")
        expectMetadataError(try craft { $0[72] = 200 }, contains: "past the end")  // size 200 from 128
        expectMetadataError(try craft { $0[87] = 0x80 }, contains: "past the end")  // data offset ≥ 2^63
        expectMetadataError(try craft { $0[80] = 64 }, contains: "after the metadata")  // data overlaps its record
        expectMetadataError(try craft { $0[72] = 6 }, contains: "whole number")  // 6 bytes of fp32
        expectMetadataError(try craft { $0[68] = 11; $0[88] = 9 }, contains: "padding")  // uint4, 9 padding bits
        let f = try craft()
        expectMetadataError(f, at: 65, contains: "aligned")
        expectMetadataError(f, at: 0, contains: "aligned")
        expectMetadataError(f, at: 128, contains: "past the end")  // a record that does not fit
        expectMetadataError(f, at: UInt64.max - 63, contains: "past the end")
        XCTAssertThrowsError(try f.blob(at: 64, expecting: .float16, elementCount: 4)) { e in
            guard case MILBlobError.typeMismatch = e else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try f.blob(at: 64, expecting: .float32, elementCount: 3)) { e in
            guard case MILBlobError.typeMismatch = e else { return XCTFail("\(e)") }
        }
    }

    func testSubByteUnpacking() {
        // coremltools packs LSB first: uint4 [1, 2, 3] is 0x21 0x03, uint3 [1, 2, 3, 4, 5] is 0xD1 0x58.
        XCTAssertEqual([UInt8]([0x21, 0x03]).withUnsafeBytes { unpackLSBFirst($0, bits: 4, count: 3) }, [1, 2, 3])
        XCTAssertEqual([UInt8]([0xD1, 0x58]).withUnsafeBytes { unpackLSBFirst($0, bits: 3, count: 5) }, [1, 2, 3, 4, 5])
        XCTAssertEqual([UInt8]([0xF8]).withUnsafeBytes { unpackLSBFirst($0, bits: 4, count: 2, signed: true) }, [-8, -1])
        XCTAssertNil([UInt8]([0xFF]).withUnsafeBytes { unpackLSBFirst($0, bits: 6, count: 2) })
        XCTAssertNil([UInt8]([]).withUnsafeBytes { unpackLSBFirst($0, bits: 1, count: Int.max) })
    }
}
