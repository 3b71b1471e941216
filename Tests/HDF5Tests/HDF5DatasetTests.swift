import HDF5
import XCTest

/// Dataset shapes, element types and reads, from Fixtures/hdf5/types.h5.
final class HDF5DatasetTests: XCTestCase {
    private var file: HDF5File!

    override func setUpWithError() throws {
        file = try HDF5File(path: HDF5TestPaths.fixture("types.h5"))
    }

    override func tearDown() {
        file = nil
    }

    private func data(_ name: String) throws -> HDF5Dataset {
        try file.dataset(at: "/data/\(name)")
    }

    func testElementTypes() throws {
        let expected: [String: HDF5ElementType] = [
            "f16": .float16, "f32": .float32, "f64": .float64, "big_endian_f32": .float32,
            "i8": .int8, "i16": .int16, "i32": .int32, "i64": .int64,
            "u8": .uint8, "u16": .uint16, "u32": .uint32, "u64": .uint64,
            "strings_vlen": .variableLengthString, "strings_fixed": .fixedLengthString(byteCount: 4),
        ]
        for (name, type) in expected {
            XCTAssertEqual(try data(name).elementType, type, name)
        }
        XCTAssertTrue(try data("f16").elementType.isFloatingPoint)
        XCTAssertTrue(try data("u64").elementType.isInteger)
        XCTAssertTrue(try data("strings_vlen").elementType.isString)
        guard case .other = try data("bool").elementType else {
            return XCTFail("bool is an HDF5 enum")
        }
    }

    func testShapes() throws {
        XCTAssertEqual(try data("f16").shape, [2, 3])
        XCTAssertEqual(try data("f32").shape, [2, 3, 4])
        XCTAssertEqual(try data("f32").elementCount, 24)
        XCTAssertEqual(try data("scalar_f32").shape, [])
        XCTAssertEqual(try data("scalar_f32").elementCount, 1)
        XCTAssertTrue(try data("scalar_f32").dataDescription.isScalar)
        XCTAssertEqual(try data("empty_f32").shape, [0, 3])
        XCTAssertEqual(try data("empty_f32").elementCount, 0)
    }

    func testFloat32InCOrder() throws {
        let expected = (0..<24).map { Float($0) * 0.5 - 3 }
        XCTAssertEqual(try data("f32").readFloats(), expected)
        XCTAssertEqual(try data("f32").readFloats(expectingShape: [2, 3, 4]), expected)
        XCTAssertEqual(try data("big_endian_f32").readFloats(), [1, -2, 3.5])
        XCTAssertEqual(try data("scalar_f32").readFloats(), [7.5])
        XCTAssertEqual(try data("empty_f32").readFloats(), [])
    }

    func testFloat16ConvertedByLibhdf5() throws {
        XCTAssertEqual(try data("f16").readFloats(), [0, 0.5, -1.25, 2048, 65504, -0.0009765625])
        XCTAssertEqual(try data("f16").readDoubles(), [0, 0.5, -1.25, 2048, 65504, -0.0009765625])
    }

    func testFloat64ToFloatAndDouble() throws {
        XCTAssertEqual(try data("f64").readDoubles(), [1e-3, 1e300, -2.5])
        let floats = try data("f64").readFloats()
        XCTAssertEqual(floats[0], Float(1e-3))
        XCTAssertEqual(floats[2], -2.5)
        XCTAssertEqual(floats[1], .infinity,
                      "out of Float range")
    }

    func testIntegers() throws {
        XCTAssertEqual(try data("i8").readInt64s(), [-128, 0, 127])
        XCTAssertEqual(try data("i16").readInt64s(), [-32768, 1, 32767])
        XCTAssertEqual(try data("i32").readInt64s(), [-7, 8, 9, -10])
        XCTAssertEqual(try data("i64").readInt64s(), [-(1 << 40), 0, 1 << 40])
        XCTAssertEqual(try data("u8").readInt64s(), [0, 128, 255])
        XCTAssertEqual(try data("u16").readInt64s(), [0, 65535])
        XCTAssertEqual(try data("u32").readInt64s(), [0, 4_294_967_295])
        XCTAssertEqual(try data("u64").readInt64s(), [0, 12_345_678_901_234])
        XCTAssertEqual(try data("u8").readFloats(), [0, 128, 255])
        XCTAssertEqual(try data("i32").readDoubles(), [-7, 8, 9, -10])
    }

    func testStrings() throws {
        XCTAssertEqual(try data("strings_vlen").readStrings(), ["a", "b\u{e9}", ""])
        XCTAssertEqual(try data("strings_fixed").readStrings(), ["ab", "cdef"])
    }

    func testGzipChunkedDataset() throws {
        let gzip = try data("gzip_f32")
        XCTAssertEqual(gzip.shape, [4, 5])
        XCTAssertEqual(try gzip.readFloats(), (0..<20).map(Float.init))
    }

    func testReadIntoCallerBuffer() throws {
        let dataset = try data("f16")
        var values = [Float](repeating: -99, count: 6)
        try values.withUnsafeMutableBufferPointer { buffer in
            try dataset.read(into: buffer)
        }
        XCTAssertEqual(values, [0, 0.5, -1.25, 2048, 65504, -0.0009765625])
    }

    func testReadIntoWrongSizedBufferThrowsShapeMismatch() throws {
        let dataset = try data("f32")
        var values = [Float](repeating: -99, count: 23)
        let error = assertHDF5Error(.shapeMismatch) {
            try values.withUnsafeMutableBufferPointer { buffer in try dataset.read(into: buffer) }
        }
        XCTAssertTrue(error?.expected?.contains("24") ?? false, String(describing: error))
        XCTAssertTrue(error?.found?.contains("23") ?? false, String(describing: error))
        XCTAssertEqual(values, [Float](repeating: -99, count: 23), "nothing written")
    }

    func testExpectedShapeMismatch() throws {
        let error = assertHDF5Error(.shapeMismatch) {
            try data("f32").readFloats(expectingShape: [4, 3, 2])
        }
        XCTAssertEqual(error?.objectPath, "/data/f32")
        XCTAssertEqual(error?.expected, "shape [4, 3, 2]")
        XCTAssertEqual(error?.found, "float32 array of shape [2, 3, 4]")
    }

    func testTypeMismatches() throws {
        let error = assertHDF5Error(.typeMismatch) { try data("strings_vlen").readFloats() }
        XCTAssertTrue(error?.hint?.contains("readStrings") ?? false)
        assertHDF5Error(.typeMismatch) { try data("f32").readInt64s() }  // never truncates
        assertHDF5Error(.typeMismatch) { try data("f32").readStrings() }
        assertHDF5Error(.typeMismatch) { try data("bool").readFloats() }
        assertHDF5Error(.typeMismatch) { try data("strings_fixed").readDoubles() }
        var buffer = [Float](repeating: 0, count: 3)
        assertHDF5Error(.typeMismatch) {
            try buffer.withUnsafeMutableBufferPointer { try self.data("strings_vlen").read(into: $0) }
        }
    }
}
