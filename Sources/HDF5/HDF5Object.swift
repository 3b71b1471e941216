import CHDF5

/// A group or dataset of an open `HDF5File`: what both share, chiefly attribute reading.
///
/// Keeps its file open while alive; closes its own libhdf5 identifier when released. Safe to use
/// from any thread (see `HDF5File`).
///
/// Attribute readers return `nil` when the attribute does not exist and throw `HDF5Error` when
/// it exists but cannot be read as asked (`.typeMismatch`, with the stored type and shape in
/// `found`) or libhdf5 fails.
public class HDF5Object: @unchecked Sendable, CustomStringConvertible {
    let file: OpenFile
    let id: hid_t
    /// The absolute path of the object inside its file, such as `"/model_weights/conv2d"`;
    /// `"/"` for the root group.
    public let path: String

    init(file: OpenFile, id: hid_t, path: String) {
        self.file = file
        self.id = id
        self.path = path
    }

    deinit {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        H5Oclose(id)
    }

    /// The path of the file the object belongs to, as given to `HDF5File(path:)`.
    public var filePath: String { file.path }

    /// The last component of `path` (`"kernel:0"`); `"/"` for the root group.
    public var name: String {
        path == "/" ? "/" : String(path[path.index(after: path.lastIndex(of: "/")!)...])
    }

    /// For example `HDF5Group /model_weights in model.h5`.
    public var description: String { "\(type(of: self)) \(path) in \(file.path)" }

    var errorContext: HDF5ErrorContext {
        HDF5ErrorContext(file: file.path, objectPath: path, attribute: nil)
    }

    // MARK: Attributes

    /// The names of the object's attributes, in increasing byte-wise name order.
    ///
    /// - Throws: `HDF5Error` (`.libraryFailure`) if libhdf5 cannot list them.
    public func attributeNames() throws(HDF5Error) -> [String] {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        final class Names { var values: [String] = [] }
        let names = Names()
        var position: hsize_t = 0
        let status = H5Aiterate2(id, H5_INDEX_NAME, H5_ITER_INC, &position, { _, name, _, context in
            guard let name, let context else { return -1 }
            Unmanaged<Names>.fromOpaque(context).takeUnretainedValue()
                .values.append(String(cString: name))
            return 0
        }, Unmanaged.passUnretained(names).toOpaque())
        withExtendedLifetime(names) {}
        guard status >= 0 else {
            throw errorContext.libraryError(.libraryFailure, "cannot list the attributes of '\(path)'")
        }
        return names.values
    }

    /// Whether the object has an attribute called `name`.
    ///
    /// - Throws: `HDF5Error` (`.libraryFailure`) if libhdf5 cannot tell.
    public func hasAttribute(_ name: String) throws(HDF5Error) -> Bool {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        return try attributeExists(name)
    }

    /// The element type and shape of attribute `name`, or `nil` if there is no such attribute.
    ///
    /// - Throws: `HDF5Error` if libhdf5 cannot open the attribute or read its type.
    public func attributeDescription(_ name: String) throws(HDF5Error) -> HDF5DataDescription? {
        try withAttribute(name) { reader throws(HDF5Error) in reader.description }
    }

    /// Attribute `name` as its most natural `HDF5Value` (see `HDF5Value` for the mapping), or
    /// `nil` if there is no such attribute. Types this module does not read give
    /// `.unsupported(description)` rather than an error.
    ///
    /// - Throws: `HDF5Error` (`.readFailed`, `.libraryFailure`) if libhdf5 fails.
    public func attribute(named name: String) throws(HDF5Error) -> HDF5Value? {
        try withAttribute(name) { reader throws(HDF5Error) in try reader.readValue() }
    }

    /// Attribute `name` as one string, or `nil` if there is no such attribute.
    ///
    /// Reads scalar strings, fixed-length (NumPy `S<n>`, NUL- or space-padded) or variable-length
    /// (h5py `str` or `bytes`), ASCII or UTF-8, of any size (Keras' `model_config` JSON is tens of
    /// KB), and one-element string arrays.
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` if the attribute is not a string or holds several
    ///   strings; `.readFailed` if libhdf5 fails.
    public func stringAttribute(_ name: String) throws(HDF5Error) -> String? {
        try withAttribute(name) { reader throws(HDF5Error) in
            if reader.isString, reader.description.elementCount == 1 {
                return try reader.readStrings()[0]
            }
            throw reader.context.error(.typeMismatch, "\(reader.context.subject) is not one string",
                                       expected: "a string (scalar or one-element array)",
                                       found: reader.description.description)
        }
    }

    /// Attribute `name` as a list of strings (flattened in C order), or `nil` if there is no such
    /// attribute.
    ///
    /// Reads arrays of fixed-length strings (Keras 2.0 writes `layer_names` and `weight_names` as
    /// NumPy `|S<n>` arrays), arrays of variable-length strings (newer writers) and a scalar
    /// string (as a one-element list). An attribute with no elements of any type gives `[]`: Keras
    /// writes the `weight_names` of a layer without weights as an empty `float64` array.
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` if the attribute is a non-empty non-string;
    ///   `.readFailed` if libhdf5 fails.
    public func stringArrayAttribute(_ name: String) throws(HDF5Error) -> [String]? {
        try withAttribute(name) { reader throws(HDF5Error) in
            if reader.description.elementCount == 0 { return [] }
            if reader.isString { return try reader.readStrings() }
            throw reader.context.error(.typeMismatch,
                                       "\(reader.context.subject) is not a list of strings",
                                       expected: "an array of strings (fixed or variable length)",
                                       found: reader.description.description)
        }
    }

    /// Attribute `name` as one integer, or `nil` if there is no such attribute. Reads scalar or
    /// one-element integer attributes of any width and signedness (a value out of `Int`'s range
    /// is clamped by libhdf5).
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` if the attribute is not one integer (floats are not
    ///   truncated: use `doubleAttribute(_:)`); `.readFailed` if libhdf5 fails.
    public func integerAttribute(_ name: String) throws(HDF5Error) -> Int? {
        try withAttribute(name) { reader throws(HDF5Error) in
            if reader.typeClass == H5T_INTEGER, reader.description.elementCount == 1 {
                return Int(try reader.readNumericArray(memoryType: mlconv_H5T_NATIVE_INT64(),
                                                       as: Int64.self)[0])
            }
            throw reader.context.error(.typeMismatch, "\(reader.context.subject) is not one integer",
                                       expected: "an integer (scalar or one-element array)",
                                       found: reader.description.description)
        }
    }

    /// Attribute `name` as a list of integers (flattened in C order), or `nil` if there is no
    /// such attribute. A scalar gives a one-element list; an attribute with no elements, `[]`.
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` if the attribute holds non-integers;
    ///   `.readFailed` if libhdf5 fails.
    public func integerArrayAttribute(_ name: String) throws(HDF5Error) -> [Int]? {
        try withAttribute(name) { reader throws(HDF5Error) in
            if reader.description.elementCount == 0 { return [] }
            if reader.typeClass == H5T_INTEGER {
                return try reader.readNumericArray(memoryType: mlconv_H5T_NATIVE_INT64(),
                                                   as: Int64.self).map { Int($0) }
            }
            throw reader.context.error(.typeMismatch,
                                       "\(reader.context.subject) is not a list of integers",
                                       expected: "an array of integers",
                                       found: reader.description.description)
        }
    }

    /// Attribute `name` as one number, or `nil` if there is no such attribute. Reads scalar or
    /// one-element float (16, 32, 64 bit) and integer attributes, converted by libhdf5.
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` if the attribute is not one number; `.readFailed`
    ///   if libhdf5 fails.
    public func doubleAttribute(_ name: String) throws(HDF5Error) -> Double? {
        try withAttribute(name) { reader throws(HDF5Error) in
            if reader.isNumeric, reader.description.elementCount == 1 {
                return try reader.readNumericArray(memoryType: mlconv_H5T_NATIVE_DOUBLE(),
                                                   as: Double.self)[0]
            }
            throw reader.context.error(.typeMismatch, "\(reader.context.subject) is not one number",
                                       expected: "a number (scalar or one-element array)",
                                       found: reader.description.description)
        }
    }

    /// Attribute `name` as a list of numbers (flattened in C order), or `nil` if there is no such
    /// attribute. Floats and integers are converted by libhdf5; a scalar gives a one-element
    /// list; an attribute with no elements, `[]`.
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` if the attribute holds non-numbers; `.readFailed`
    ///   if libhdf5 fails.
    public func doubleArrayAttribute(_ name: String) throws(HDF5Error) -> [Double]? {
        try withAttribute(name) { reader throws(HDF5Error) in
            if reader.description.elementCount == 0 { return [] }
            if reader.isNumeric {
                return try reader.readNumericArray(memoryType: mlconv_H5T_NATIVE_DOUBLE(),
                                                   as: Double.self)
            }
            throw reader.context.error(.typeMismatch,
                                       "\(reader.context.subject) is not a list of numbers",
                                       expected: "an array of numbers",
                                       found: reader.description.description)
        }
    }

    // MARK: Internals

    /// Lock held.
    private func attributeExists(_ name: String) throws(HDF5Error) -> Bool {
        let exists = name.withCString { H5Aexists(id, $0) }
        guard exists >= 0 else {
            throw errorContext.attribute(name).libraryError(
                .libraryFailure, "cannot check whether '\(path)' has attribute '\(name)'")
        }
        return exists > 0
    }

    /// Runs `body` with a reader of attribute `name`, under the lock; `nil` if no such attribute.
    private func withAttribute<T>(_ name: String,
                                  _ body: (DataReader) throws(HDF5Error) -> T)
        throws(HDF5Error) -> T?
    {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        guard try attributeExists(name) else { return nil }
        let context = errorContext.attribute(name)
        let attribute = name.withCString { H5Aopen(id, $0, mlconv_H5P_DEFAULT()) }
        guard attribute >= 0 else {
            throw context.libraryError(.libraryFailure,
                                       "cannot open attribute '\(name)' of '\(path)'")
        }
        defer { H5Aclose(attribute) }
        let reader = try DataReader.attribute(attribute, context: context)
        defer { reader.close() }
        return try body(reader)
    }
}

/// Path arithmetic inside a file.
enum HDF5Path {
    /// `path` made absolute against `base` (an absolute path) and normalized: repeated and
    /// trailing slashes and `.` components removed. An empty `path` is `base`.
    static func resolve(_ path: String, against base: String) -> String {
        let joined = path.hasPrefix("/") ? path : base + "/" + path
        let components = joined.split(separator: "/", omittingEmptySubsequences: true)
            .filter { $0 != "." }
        return "/" + components.joined(separator: "/")
    }

    /// The components of an absolute normalized path (`[]` for `/`).
    static func components(_ absolute: String) -> [Substring] {
        absolute.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// The parent of an absolute normalized path (`/` for `/` itself).
    static func parent(_ absolute: String) -> String {
        let parts = components(absolute)
        return "/" + parts.dropLast().joined(separator: "/")
    }
}
