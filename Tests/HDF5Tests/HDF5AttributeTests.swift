import Foundation
import HDF5
import XCTest

/// Attributes of every flavour, from Fixtures/hdf5/types.h5 (see Scripts/make_hdf5_fixtures.py).
final class HDF5AttributeTests: XCTestCase {
    private var file: HDF5File!

    override func setUpWithError() throws {
        file = try HDF5File(path: HDF5TestPaths.fixture("types.h5"))
    }

    override func tearDown() {
        file = nil
    }

    func testAttributeNamesAreSortedByName() throws {
        let names = try file.attributeNames()
        XCTAssertEqual(names, names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        XCTAssertTrue(names.contains("vlen_json"))
        XCTAssertEqual(names.count, 24)
        XCTAssertTrue(try file.hasAttribute("fixed_str"))
        XCTAssertFalse(try file.hasAttribute("no_such_attribute"))
    }

    func testMissingAttributeIsNil() throws {
        XCTAssertNil(try file.stringAttribute("no_such_attribute"))
        XCTAssertNil(try file.stringArrayAttribute("no_such_attribute"))
        XCTAssertNil(try file.integerAttribute("no_such_attribute"))
        XCTAssertNil(try file.doubleAttribute("no_such_attribute"))
        XCTAssertNil(try file.attribute(named: "no_such_attribute"))
        XCTAssertNil(try file.attributeDescription("no_such_attribute"))
    }

    func testFixedLengthStrings() throws {
        XCTAssertEqual(try file.stringAttribute("fixed_str"), "hello")  // full, no NUL
        XCTAssertEqual(try file.stringAttribute("fixed_str_nullterm"), "abc")
        XCTAssertEqual(try file.stringAttribute("fixed_str_spacepad"), "abc")
        XCTAssertEqual(try file.stringAttribute("fixed_str_padded"), "hi")
        XCTAssertEqual(try file.stringAttribute("fixed_utf8"), "d\u{e9}j\u{e0}")
        XCTAssertEqual(try file.stringAttribute("fixed_big"), String(repeating: "x", count: 1499) + "!")
        XCTAssertEqual(try file.attributeDescription("fixed_str"),
                       HDF5DataDescription(shape: [], elementType: .fixedLengthString(byteCount: 5),
                                           isScalar: true))
    }

    func testVariableLengthStrings() throws {
        XCTAssertEqual(try file.stringAttribute("vlen_str_utf8"), "h\u{e9}llo w\u{f6}rld \u{2713}")
        XCTAssertEqual(try file.stringAttribute("vlen_bytes"), #"{"class_name": "Sequential"}"#)
        let json = try XCTUnwrap(try file.stringAttribute("vlen_json"))
        XCTAssertGreaterThan(json.utf8.count, 2000)
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        XCTAssertEqual(object?["class_name"] as? String, "Functional")
        XCTAssertEqual(try file.attributeDescription("vlen_json")?.elementType, .variableLengthString)
    }

    func testStringArrays() throws {
        XCTAssertEqual(try file.stringArrayAttribute("fixed_str_array"),
                       ["input_1", "conv2d_1", "batch_normalization_1"])
        XCTAssertEqual(try file.attributeDescription("fixed_str_array"),
                       HDF5DataDescription(shape: [3], elementType: .fixedLengthString(byteCount: 22),
                                           isScalar: false))
        XCTAssertEqual(try file.stringArrayAttribute("vlen_str_array"), ["alpha", "b\u{e9}ta", ""])
        XCTAssertEqual(try file.stringArrayAttribute("vlen_str_array_2d"), ["a", "b", "c", "d"])
        XCTAssertEqual(try file.attributeDescription("vlen_str_array_2d")?.shape, [2, 2])
        // A scalar string is a one-element list; a one-element list is one string.
        XCTAssertEqual(try file.stringArrayAttribute("vlen_bytes"), [#"{"class_name": "Sequential"}"#])
        XCTAssertEqual(try file.stringAttribute("one_string_array"), "only")
        // Keras' empty weight_names: an empty float64 array.
        XCTAssertEqual(try file.stringArrayAttribute("empty_float64_array"), [])
        XCTAssertEqual(try file.stringArrayAttribute("null_float64"), [])
    }

    func testIntegers() throws {
        XCTAssertEqual(try file.integerAttribute("int32_scalar"), -42)
        XCTAssertEqual(try file.integerAttribute("uint8_scalar"), 200)
        XCTAssertEqual(try file.integerAttribute("int64_one"), 1 << 40)
        XCTAssertEqual(try file.integerArrayAttribute("int8_array"), [1, -2, 3])
        XCTAssertEqual(try file.integerArrayAttribute("uint16_array"), [0, 65535])
        XCTAssertEqual(try file.integerArrayAttribute("int32_scalar"), [-42])
        XCTAssertEqual(try file.integerArrayAttribute("empty_float64_array"), [])
        XCTAssertEqual(try file.attributeDescription("uint16_array")?.elementType, .uint16)
    }

    func testDoubles() throws {
        XCTAssertEqual(try file.doubleAttribute("float64_scalar"), 3.25)
        XCTAssertEqual(try file.doubleAttribute("float16_scalar"), 0.5)
        XCTAssertEqual(try file.doubleAttribute("int32_scalar"), -42)
        XCTAssertEqual(try file.doubleArrayAttribute("float32_array"), [1.5, -2.5])
        XCTAssertEqual(try file.doubleArrayAttribute("int8_array"), [1, -2, 3])
        XCTAssertEqual(try file.doubleArrayAttribute("empty_float64_array"), [])
        XCTAssertEqual(try file.attributeDescription("float16_scalar")?.elementType, .float16)
    }

    func testGenericValues() throws {
        XCTAssertEqual(try file.attribute(named: "fixed_str"), .string("hello"))
        XCTAssertEqual(try file.attribute(named: "vlen_str_array"), .strings(["alpha", "b\u{e9}ta", ""]))
        XCTAssertEqual(try file.attribute(named: "one_string_array"), .strings(["only"]))
        XCTAssertEqual(try file.attribute(named: "int32_scalar"), .integer(-42))
        XCTAssertEqual(try file.attribute(named: "int8_array"), .integers([1, -2, 3]))
        XCTAssertEqual(try file.attribute(named: "float64_scalar"), .double(3.25))
        XCTAssertEqual(try file.attribute(named: "float32_array"), .doubles([1.5, -2.5]))
        XCTAssertEqual(try file.attribute(named: "empty_float64_array"), .doubles([]))
        XCTAssertEqual(try file.attribute(named: "null_float64"), .doubles([]))
        guard case .unsupported(let description)? = try file.attribute(named: "bool_scalar") else {
            return XCTFail("a bool (HDF5 enum) is unsupported")
        }
        XCTAssertTrue(description.isScalar)
        XCTAssertFalse(description.elementType.isInteger)
    }

    func testNullAndEmptyDescriptions() throws {
        let null = try XCTUnwrap(try file.attributeDescription("null_float64"))
        XCTAssertTrue(null.isNull)
        XCTAssertEqual(null.elementCount, 0)
        XCTAssertEqual(null.elementType, .float64)
        let empty = try XCTUnwrap(try file.attributeDescription("empty_float64_array"))
        XCTAssertEqual(empty.shape, [0])
        XCTAssertEqual(empty.elementCount, 0)
        XCTAssertFalse(empty.isNull)
    }

    func testTypeMismatchesNameTheAttributeAndWhatWasFound() throws {
        let error = assertHDF5Error(.typeMismatch) { try file.stringAttribute("int8_array") }
        XCTAssertEqual(error?.attribute, "int8_array")
        XCTAssertEqual(error?.objectPath, "/")
        XCTAssertEqual(error?.found, "int8 array of shape [3]")
        XCTAssertNotNil(error?.expected)
        assertHDF5Error(.typeMismatch) { try file.stringAttribute("vlen_str_array") }  // 3 strings
        assertHDF5Error(.typeMismatch) { try file.stringArrayAttribute("float32_array") }
        assertHDF5Error(.typeMismatch) { try file.integerAttribute("float64_scalar") }  // no truncation
        assertHDF5Error(.typeMismatch) { try file.integerAttribute("int8_array") }
        assertHDF5Error(.typeMismatch) { try file.integerArrayAttribute("float32_array") }
        assertHDF5Error(.typeMismatch) { try file.doubleAttribute("fixed_str") }
        assertHDF5Error(.typeMismatch) { try file.doubleArrayAttribute("vlen_str_array") }
        assertHDF5Error(.typeMismatch) { try file.stringAttribute("bool_scalar") }
    }

    func testAttributesOfGroupsAndDatasets() throws {
        let leaf = try file.dataset(at: "nested/level1/level2/leaf")
        XCTAssertEqual(try leaf.attributeNames(), ["note"])
        XCTAssertEqual(try leaf.stringAttribute("note"), "deep")
        let gzip = try file.dataset(at: "/data/gzip_f32")
        XCTAssertEqual(try gzip.stringAttribute("units"), "m/s")
        XCTAssertEqual(try gzip.doubleAttribute("scale"), 2.0)
        XCTAssertEqual(try file.group(at: "order").attributeNames(), [])
    }
}
