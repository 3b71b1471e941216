import Foundation
@testable import MLRuntime
import TestSupport
import XCTest

final class NPYTests: XCTestCase {
    /// A .npy file built by hand: magic, version, little-endian header length, header, body.
    func npy(_ header: String, major: UInt8 = 1, body: [UInt8]) -> Data {
        var d = Data([0x93] + Array("NUMPY".utf8) + [major, 0])
        let h = Array(header.utf8)
        if major == 1 {
            d.append(contentsOf: [UInt8(h.count & 0xFF), UInt8(h.count >> 8)])
        } else {
            d.append(contentsOf: (0..<4).map { UInt8((h.count >> (8 * $0)) & 0xFF) })
        }
        d.append(contentsOf: h)
        d.append(contentsOf: body)
        return d
    }

    func bytes<T>(_ values: [T]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }  // x86_64: little-endian

    func expectError(_ expected: NPYError, _ data: Data, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try NPY.decode(data, name: "t.npy"), file: file, line: line) { e in
            XCTAssertEqual(e as? NPYError, expected, file: file, line: line)
        }
    }

    func testRoundTripThroughAFile() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let url = dir.appendingPathComponent("a.npy")
        let a = try NDArray(shape: [2, 1, 3], scalars: [1, -2.5, .infinity, 0, 1e-30, 3])
        try NPY.write(a, to: url)
        XCTAssertEqual(try NPY.read(contentsOf: url), a)
        // Overwrite atomically; no temporary file is left behind.
        let b = try NDArray(shape: [4], scalars: [.nan, 1, 2, 3])
        try NPY.write(b, to: url)
        let back = try NPY.read(contentsOf: url)
        XCTAssertEqual(back.shape, [4])
        XCTAssertEqual(maxAbsDiff(back.scalars, b.scalars), 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["a.npy"])
    }

    func testEncodedHeaderIsNumPyStyle() throws {
        for shape in [[], [3], [1, 320, 320, 3]] {
            let data = NPY.encode(NDArray(shape: shape))
            let len = Int(data[8]) | Int(data[9]) << 8
            XCTAssertEqual((10 + len) % 64, 0)
            let header = String(decoding: data[10..<(10 + len)], as: UTF8.self)
            XCTAssertTrue(header.hasSuffix("\n"))
            let shapeText = shape.isEmpty ? "()" : shape.count == 1 ? "(3,)" : "(1, 320, 320, 3)"
            XCTAssertTrue(header.hasPrefix("{'descr': '<f4', 'fortran_order': False, 'shape': \(shapeText), }"), header)
            XCTAssertEqual(data.count, 10 + len + 4 * shape.reduce(1, *))
            XCTAssertEqual(try NPY.decode(data, name: "x").shape, shape)
        }
    }

    func testReadsOtherDTypesAndVersions() throws {
        let h = { (d: String, s: String) in "{'descr': '\(d)', 'fortran_order': False, 'shape': \(s), }\n" }
        XCTAssertEqual(try NPY.decode(npy(h("<f8", "(2,)"), body: bytes([1.5, -2.25] as [Double])), name: "f8").scalars, [1.5, -2.25])
        XCTAssertEqual(try NPY.decode(npy(h("<i4", "(3,)"), body: bytes([7, -8, 0] as [Int32])), name: "i4").scalars, [7, -8, 0])
        XCTAssertEqual(try NPY.decode(npy(h("<i8", "(1, 2)"), body: bytes([1 << 40, -3] as [Int64])), name: "i8").scalars, [Float(1 << 40), -3])
        // float16: 0x3C00 = 1, 0xC000 = −2, 0x3800 = 0.5.
        XCTAssertEqual(try NPY.decode(npy(h("<f2", "(3,)"), body: bytes([0x3C00, 0xC000, 0x3800] as [UInt16])), name: "f2").scalars, [1, -2, 0.5])
        // Versions 2.0 and 3.0 have a 4-byte header length; keys may come in any order.
        let v2 = npy("{'shape': (2, 1), 'fortran_order': False, 'descr': '<f4'}\n", major: 2, body: bytes([3, 4] as [Float]))
        XCTAssertEqual(try NPY.decode(v2, name: "v2"), try NDArray(shape: [2, 1], scalars: [3, 4]))
        let v3 = npy(h("<f4", "()"), major: 3, body: bytes([9] as [Float]))
        XCTAssertEqual(try NPY.decode(v3, name: "v3"), try NDArray(shape: [], scalars: [9]))
    }

    func testMalformedFiles() {
        let h = { (d: String, f: String, s: String) in "{'descr': '\(d)', 'fortran_order': \(f), 'shape': \(s), }\n" }
        expectError(.notNPY(file: "t.npy"), Data("hello, world".utf8))
        expectError(.notNPY(file: "t.npy"), Data())
        expectError(.truncated(file: "t.npy", expectedBytes: 10, foundBytes: 6), Data([0x93] + Array("NUMPY".utf8)))
        // Header length beyond the end of the file.
        var short = npy(h("<f4", "False", "(1,)"), body: [])
        short = short.prefix(30)
        expectError(.truncated(file: "t.npy", expectedBytes: 10 + h("<f4", "False", "(1,)").utf8.count, foundBytes: 30), short)
        // Data shorter than the shape needs: 3 floats declared, 2 present.
        let header = h("<f4", "False", "(3,)")
        expectError(.truncated(file: "t.npy", expectedBytes: 10 + header.utf8.count + 12, foundBytes: 10 + header.utf8.count + 8),
                    npy(header, body: bytes([1, 2] as [Float])))
        expectError(.unsupportedDType(file: "t.npy", dtype: ">f4"), npy(h(">f4", "False", "(1,)"), body: [0, 0, 0, 0]))
        expectError(.unsupportedDType(file: "t.npy", dtype: "<u2"), npy(h("<u2", "False", "(1,)"), body: [0, 0]))
        expectError(.unsupportedDType(file: "t.npy", dtype: "|u1"), npy(h("|u1", "False", "(1,)"), body: [0]))  // |b1 is read since bool tensors
        expectError(.fortranOrder(file: "t.npy"), npy(h("<f4", "True", "(2, 2)"), body: [UInt8](repeating: 0, count: 16)))
        expectError(.unsupportedVersion(file: "t.npy", major: 4, minor: 0), npy(h("<f4", "False", "(1,)"), major: 4, body: []))
        XCTAssertThrowsError(try NPY.decode(npy("{'descr': '<f4', 'fortran_order': False}\n", body: []), name: "t.npy")) { e in
            guard case let .malformedHeader(file, message)? = e as? NPYError else { return XCTFail("\(e)") }
            XCTAssertEqual(file, "t.npy"); XCTAssertTrue(message.contains("shape"), message)
        }
        XCTAssertThrowsError(try NPY.decode(npy(h("<f4", "False", "(2, x)"), body: []), name: "t.npy")) { e in
            guard case .malformedHeader? = e as? NPYError else { return XCTFail("\(e)") }
        }
    }

    func testFileErrorsNameTheFile() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let missing = dir.appendingPathComponent("missing.npy")
        XCTAssertThrowsError(try NPY.read(contentsOf: missing)) { e in
            guard case let .io(file, _, _)? = e as? NPYError else { return XCTFail("\(e)") }
            XCTAssertEqual(file, missing.path)
        }
        let noDir = dir.appendingPathComponent("no/such/dir/out.npy")
        XCTAssertThrowsError(try NPY.write(NDArray(shape: [1]), to: noDir)) { e in
            guard case let .io(file, _, _)? = e as? NPYError else { return XCTFail("\(e)") }
            XCTAssertEqual(file, noDir.path)
        }
        let text = dir.appendingPathComponent("text.npy")
        try Data("not numpy".utf8).write(to: text)
        XCTAssertThrowsError(try NPY.read(contentsOf: text)) { e in XCTAssertEqual(e as? NPYError, .notNPY(file: text.path)) }
    }

    func testReadsTheSharedReferenceImage() throws {
        let url = try TestPaths.sharedFile("models/reference/london_big-ben_320.npy")
        let a = try NPY.read(contentsOf: url)
        XCTAssertEqual(a.shape, [1, 320, 320, 3])
        XCTAssertGreaterThanOrEqual(a.scalars.min()!, 0)
        XCTAssertLessThanOrEqual(a.scalars.max()!, 255)
        XCTAssertGreaterThan(a.scalars.max()! - a.scalars.min()!, 100)  // a real photo, not a constant
    }
}
