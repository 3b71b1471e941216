// The MIL weight-file writer against coremltools' own blob storage writer
// (Fixtures/mlprogram_export/blob_reference.*, Scripts/make_mlprogram_blob_fixture.py), and the
// .mlpackage directory writer.
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

final class MLProgramExportBlobTests: XCTestCase {
    private struct Reference: Decodable {
        struct Blob: Decodable { let type: String; let values: [Int]; let offset: UInt64 }
        let blobs: [Blob]
    }

    private func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_export/\(name)"))
    }

    func testMatchesCoremltoolsBlobWriterByteForByte() throws {
        let ref = try JSONDecoder().decode(Reference.self, from: fixture("blob_reference.json"))
        let expected = [UInt8](try fixture("blob_reference.bin"))
        var w = MILBlobWriter()
        for blob in ref.blobs {
            let offset: UInt64
            switch blob.type {
            case "float32": offset = w.append(float32: blob.values.map { Float(bitPattern: UInt32($0)) })
            case "float16": offset = w.append(float16Bits: blob.values.map { UInt16($0) })
            case "int32": offset = w.append(int32: blob.values.map { Int32($0) })
            case "int8": offset = try w.append(integers: blob.values, as: .int8)
            case "uint8": offset = w.append(uint8: blob.values.map { UInt8($0) })
            default:
                let type = try XCTUnwrap(MILBlobWriter.DataType.allCases.first { "\($0)" == blob.type }, blob.type)
                offset = try w.append(integers: blob.values, as: type)
            }
            XCTAssertEqual(offset, blob.offset, blob.type)
        }
        XCTAssertEqual(w.count, ref.blobs.count)
        XCTAssertEqual(w.bytes.count, expected.count)
        if let i = zip(w.bytes, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            XCTFail("first differing byte at \(i): \(w.bytes[i]) vs coremltools \(expected[i])")
        }
    }

    func testSubBytePaddingAndBitOrder() throws {
        var w = MILBlobWriter()
        let off = try w.append(integers: [1, 2, 3], as: .uint3)  // 9 bits → 2 bytes, 7 padding bits
        let meta = Int(off)
        XCTAssertEqual(Array(w.bytes[meta ..< meta + 4]), [0xEF, 0xBE, 0xAD, 0xDE])
        XCTAssertEqual(w.bytes[meta + 4], 12)  // uint3
        XCTAssertEqual(w.bytes[meta + 8], 2)   // size in bytes
        XCTAssertEqual(w.bytes[meta + 24], 7)  // padding bits
        // 1 | 2<<3 | 3<<6 = 0b1101_0001 (low byte), then the high bit of 3 in byte 1.
        XCTAssertEqual(Array(w.bytes[meta + 64 ..< meta + 66]), [0xD1, 0x00])
        XCTAssertEqual(try MILBlobWriter.pack([-8, 7], as: .int4), [0x78])
    }

    func testRefusesOutOfRangeValuesAndNonIntegerTypes() {
        var w = MILBlobWriter()
        XCTAssertThrowsError(try w.append(integers: [0, 8], as: .int4)) { error in
            XCTAssertEqual(error as? MLProgramExportError,
                           .blobValueOutOfRange(dataType: "int4", index: 1, value: 8, range: -8 ... 7))
        }
        XCTAssertThrowsError(try w.append(integers: [1], as: .float32))
        XCTAssertThrowsError(try w.append(encoded: [1, 2], type: .uint4, elementCount: 5))
        XCTAssertEqual(w.count, 0)
        XCTAssertEqual(w.bytes.count, 64)
    }

    func testPackageLayoutAndManifest() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let path = dir.appendingPathComponent("M.mlpackage").path
        var w = MILBlobWriter()
        w.append(float32: [1, 2, 3])
        let model = Spec.Model(specificationVersion: 6)
        try MLPackageWriter.write(model: model, weights: w, to: path)
        let pkg = try MLPackage.read(at: path)
        XCTAssertEqual(pkg.model.specificationVersion, 6)
        XCTAssertEqual(pkg.weightsPath.map { URL(fileURLWithPath: $0).lastPathComponent }, "weights")
        let bin = try Data(contentsOf: URL(fileURLWithPath: path + "/Data/com.apple.CoreML/weights/weight.bin"))
        XCTAssertEqual([UInt8](bin), w.bytes)
        // Replacing keeps one package and no temporaries.
        try MLPackageWriter.write(model: Spec.Model(specificationVersion: 7), weights: nil, to: path)
        XCTAssertEqual(try MLPackage.read(at: path).model.specificationVersion, 7)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "/Data/com.apple.CoreML/weights"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["M.mlpackage"])
    }
}
