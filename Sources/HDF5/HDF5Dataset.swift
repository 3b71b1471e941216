import CHDF5

/// A dataset of an open `HDF5File`: an n-dimensional array of one element type, such as a Keras
/// kernel `conv2d_1/conv2d_1/kernel:0` of shape `[9, 9, 3, 64]` (height, width, input channels,
/// output channels) and type `float32`.
///
/// Readers return all elements flattened in C (row-major) order: the last dimension varies
/// fastest. Numeric readers convert with libhdf5's own conversion (float16 and float64 to `Float`,
/// integers to floats, ...), reading straight into the destination memory.
public final class HDF5Dataset: HDF5Object, @unchecked Sendable {
    /// The element type and dataspace, read when the dataset was opened.
    public let dataDescription: HDF5DataDescription

    init(file: OpenFile, id: hid_t, path: String, dataDescription: HDF5DataDescription) {
        self.dataDescription = dataDescription
        super.init(file: file, id: id, path: path)
    }

    /// The extent of each dimension, slowest-varying first; `[]` for a scalar dataset.
    public var shape: [Int] { dataDescription.shape }

    /// The stored element type.
    public var elementType: HDF5ElementType { dataDescription.elementType }

    /// The number of elements (the product of `shape`; 1 for a scalar, 0 for an empty dataset).
    public var elementCount: Int { dataDescription.elementCount }

    // MARK: Numeric reads

    /// All elements as `Float`, in C order (`elementCount` values).
    ///
    /// float16 and float64 are converted by libhdf5 (float64 values beyond `Float`'s range
    /// become ±infinity, NaN stays NaN); integers are converted exactly up to 2^24.
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` for non-numeric datasets (strings, compounds...);
    ///   `.readFailed` if libhdf5 cannot read the data (damaged file, missing filter).
    public func readFloats() throws(HDF5Error) -> [Float] {
        try read(as: Float.self, memoryType: mlconv_H5T_NATIVE_FLOAT(), allowFloats: true)
    }

    /// All elements as `Float` after checking the dataset's shape is `expectedShape` (for
    /// example a Keras kernel's `[kh, kw, cin, cout]`).
    ///
    /// - Throws: `HDF5Error` `.shapeMismatch` (naming both shapes) when the shape differs, else
    ///   as `readFloats()`.
    public func readFloats(expectingShape expectedShape: [Int]) throws(HDF5Error) -> [Float] {
        guard shape == expectedShape else {
            throw errorContext.error(.shapeMismatch,
                                     "dataset '\(path)' in '\(file.path)' has shape \(shape), not \(expectedShape)",
                                     expected: "shape \(expectedShape)",
                                     found: dataDescription.description)
        }
        return try readFloats()
    }

    /// Reads all elements as `Float`, in C order, into `buffer`, which must have exactly
    /// `elementCount` elements. Converts like `readFloats()` without an intermediate copy.
    ///
    /// - Throws: `HDF5Error` `.shapeMismatch` when `buffer.count != elementCount` (nothing is
    ///   written); else as `readFloats()` (the buffer's contents are then unspecified).
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(HDF5Error) {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let reader = try openReader()
        defer { reader.close() }
        try requireNumeric(reader, allowFloats: true, requested: "Float")
        if let failure = reader.readNumeric(memoryType: mlconv_H5T_NATIVE_FLOAT(), into: buffer) {
            throw failure
        }
    }

    /// All elements as `Double`, in C order. Floats of every width and integers are converted by
    /// libhdf5 (exactly, except integers beyond 2^53).
    ///
    /// - Throws: as `readFloats()`.
    public func readDoubles() throws(HDF5Error) -> [Double] {
        try read(as: Double.self, memoryType: mlconv_H5T_NATIVE_DOUBLE(), allowFloats: true)
    }

    /// All elements as `Int64`, in C order, for integer datasets of any width and signedness
    /// (`uint64` values above `Int64.max` are clamped by libhdf5).
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` for float datasets (use `readFloats()` or
    ///   `readDoubles()`; floats are never silently truncated) and non-numeric ones;
    ///   `.readFailed` if libhdf5 cannot read the data.
    public func readInt64s() throws(HDF5Error) -> [Int64] {
        try read(as: Int64.self, memoryType: mlconv_H5T_NATIVE_INT64(), allowFloats: false)
    }

    // MARK: String reads

    /// All elements as strings, in C order, for fixed-length (NUL- or space-padded) and
    /// variable-length string datasets, ASCII or UTF-8 (invalid UTF-8 is repaired with U+FFFD).
    ///
    /// - Throws: `HDF5Error` `.typeMismatch` for non-string datasets; `.readFailed` if libhdf5
    ///   cannot read the data.
    public func readStrings() throws(HDF5Error) -> [String] {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let reader = try openReader()
        defer { reader.close() }
        guard reader.isString else {
            throw errorContext.error(.typeMismatch,
                                     "dataset '\(path)' in '\(file.path)' does not hold strings",
                                     expected: "string data", found: dataDescription.description)
        }
        return try reader.readStrings()
    }

    // MARK: Internals

    /// Lock held.
    private func openReader() throws(HDF5Error) -> DataReader {
        try DataReader.dataset(id, context: errorContext)
    }

    private func requireNumeric(_ reader: DataReader, allowFloats: Bool, requested: String)
        throws(HDF5Error)
    {
        let ok = reader.typeClass == H5T_INTEGER || (allowFloats && reader.typeClass == H5T_FLOAT)
        guard ok else {
            let what = allowFloats ? "numeric (float or integer) data" : "integer data"
            var hint: String?
            if reader.isString {
                hint = "this dataset holds strings: use readStrings()"
            } else if reader.typeClass == H5T_FLOAT {
                hint = "this dataset holds floats: use readFloats() or readDoubles()"
            }
            throw errorContext.error(.typeMismatch,
                                     "dataset '\(path)' in '\(file.path)' cannot be read as \(requested)",
                                     expected: what, found: reader.description.description,
                                     hint: hint)
        }
    }

    private func read<T>(as type: T.Type, memoryType: @autoclosure () -> hid_t,
                         allowFloats: Bool) throws(HDF5Error) -> [T]
    {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let reader = try openReader()
        defer { reader.close() }
        try requireNumeric(reader, allowFloats: allowFloats, requested: "\(T.self)")
        return try reader.readNumericArray(memoryType: memoryType(), as: T.self)
    }
}
