import CHDF5

/// Reads the data of one open attribute or dataset: the code both share.
///
/// Owns copies of the object's file datatype and dataspace identifiers (closed by `close()`).
/// Every method must be called with the global lock held (`HDF5Library.enter()`).
struct DataReader {
    /// The stored (file) datatype.
    let typeID: hid_t
    /// The stored dataspace.
    let spaceID: hid_t
    /// Reads every element, converted to memory type `memoryType`, into `buffer`.
    let readAll: (_ memoryType: hid_t, _ buffer: UnsafeMutableRawPointer) -> herr_t
    /// The open attribute or dataset, and which of the two it is (for `HDF5Isolation`).
    let objectID: hid_t
    let isAttribute: Bool
    /// For error messages.
    let context: HDF5ErrorContext
    let description: HDF5DataDescription
    let typeClass: H5T_class_t

    /// Opens the reader of attribute `attribute` (an open attribute identifier).
    static func attribute(_ attribute: hid_t, context: HDF5ErrorContext) throws(HDF5Error)
        -> DataReader
    {
        let type = H5Aget_type(attribute)
        guard type >= 0 else {
            throw context.libraryError(.libraryFailure, "cannot read the datatype of \(context.subject)")
        }
        let space = H5Aget_space(attribute)
        guard space >= 0 else {
            let error = context.libraryError(.libraryFailure,
                                             "cannot read the dataspace of \(context.subject)")
            H5Tclose(type)
            throw error
        }
        return try DataReader(typeID: type, spaceID: space, objectID: attribute, isAttribute: true,
                              context: context) { memoryType, buffer in
            H5Aread(attribute, memoryType, buffer)
        }
    }

    /// Opens the reader of dataset `dataset` (an open dataset identifier).
    static func dataset(_ dataset: hid_t, context: HDF5ErrorContext) throws(HDF5Error)
        -> DataReader
    {
        let type = H5Dget_type(dataset)
        guard type >= 0 else {
            throw context.libraryError(.corruptFile, "cannot read the datatype of \(context.subject)",
                                       hint: HDF5Hint.corrupt)
        }
        let space = H5Dget_space(dataset)
        guard space >= 0 else {
            let error = context.libraryError(.corruptFile, "cannot read the dataspace of \(context.subject)",
                                             hint: HDF5Hint.corrupt)
            H5Tclose(type)
            throw error
        }
        return try DataReader(typeID: type, spaceID: space, objectID: dataset, isAttribute: false,
                              context: context) { memoryType, buffer in
            H5Dread(dataset, memoryType, mlconv_H5S_ALL(), mlconv_H5S_ALL(), mlconv_H5P_DEFAULT(),
                    buffer)
        }
    }

    /// Takes ownership of `typeID` and `spaceID` (closes them if it throws).
    private init(typeID: hid_t, spaceID: hid_t, objectID: hid_t, isAttribute: Bool, context: HDF5ErrorContext,
                 readAll: @escaping (hid_t, UnsafeMutableRawPointer) -> herr_t) throws(HDF5Error)
    {
        self.typeID = typeID
        self.spaceID = spaceID
        self.objectID = objectID
        self.isAttribute = isAttribute
        self.readAll = readAll
        self.context = context
        self.typeClass = H5Tget_class(typeID)
        do {
            self.description = try Self.describe(type: typeID, space: spaceID, context: context)
        } catch {
            H5Tclose(typeID)
            H5Sclose(spaceID)
            throw error
        }
    }

    /// Closes the datatype and dataspace identifiers.
    func close() {
        H5Tclose(typeID)
        H5Sclose(spaceID)
    }

    // MARK: Describing

    static func describe(type: hid_t, space: hid_t, context: HDF5ErrorContext)
        throws(HDF5Error) -> HDF5DataDescription
    {
        let elementType = elementType(of: type)
        let spaceClass = H5Sget_simple_extent_type(space)
        switch spaceClass {
        case H5S_SCALAR:
            return HDF5DataDescription(shape: [], elementType: elementType, isScalar: true)
        case H5S_NULL:
            return HDF5DataDescription(shape: [], elementType: elementType, isScalar: false,
                                       isNull: true)
        case H5S_SIMPLE:
            let rank = H5Sget_simple_extent_ndims(space)
            guard rank >= 0 else {
                throw context.libraryError(.corruptFile, "cannot read the rank of \(context.subject)",
                                           hint: HDF5Hint.corrupt)
            }
            var dims = [hsize_t](repeating: 0, count: Int(rank))
            if rank > 0 {
                guard H5Sget_simple_extent_dims(space, &dims, nil) >= 0 else {
                    throw context.libraryError(.corruptFile, "cannot read the shape of \(context.subject)",
                                               hint: HDF5Hint.corrupt)
                }
            }
            var shape: [Int] = []
            var count = 1
            for dim in dims {
                guard let extent = Int(exactly: dim) else {
                    throw context.error(.corruptFile,
                                        "\(context.subject) has a dimension of \(dim) elements",
                                        hint: HDF5Hint.corrupt)
                }
                let (product, overflow) = count.multipliedReportingOverflow(by: extent)
                guard !overflow else {
                    throw context.error(.corruptFile,
                                        "\(context.subject) has shape \(dims): too many elements",
                                        hint: HDF5Hint.corrupt)
                }
                count = product
                shape.append(extent)
            }
            return HDF5DataDescription(shape: shape, elementType: elementType, isScalar: false)
        default:
            throw context.libraryError(.corruptFile, "cannot read the dataspace of \(context.subject)",
                                       hint: HDF5Hint.corrupt)
        }
    }

    static func elementType(of type: hid_t) -> HDF5ElementType {
        let size = H5Tget_size(type)
        switch H5Tget_class(type) {
        case H5T_FLOAT:
            var signPosition = 0, exponentPosition = 0, exponentSize = 0
            var mantissaPosition = 0, mantissaSize = 0
            let hasFields = H5Tget_fields(type, &signPosition, &exponentPosition, &exponentSize,
                                          &mantissaPosition, &mantissaSize) >= 0
            switch (size, exponentSize, mantissaSize) {
            case (2, 5, 10): return .float16
            case (4, 8, 23): return .float32
            case (8, 11, 52): return .float64
            case (2, 8, 7): return .other("bfloat16")
            default:
                return .other(hasFields
                    ? "float(\(size * 8) bits: \(exponentSize)-bit exponent, \(mantissaSize)-bit mantissa)"
                    : "float(\(size * 8) bits)")
            }
        case H5T_INTEGER:
            let signed = H5Tget_sign(type) == H5T_SGN_2
            switch (size, signed) {
            case (1, true): return .int8
            case (2, true): return .int16
            case (4, true): return .int32
            case (8, true): return .int64
            case (1, false): return .uint8
            case (2, false): return .uint16
            case (4, false): return .uint32
            case (8, false): return .uint64
            default: return .other("\(signed ? "int" : "uint")(\(size * 8) bits)")
            }
        case H5T_STRING:
            if H5Tis_variable_str(type) > 0 { return .variableLengthString }
            return .fixedLengthString(byteCount: size)
        case H5T_ENUM: return .other("enum (h5py bool?)")
        case H5T_COMPOUND: return .other("compound")
        case H5T_OPAQUE: return .other("opaque")
        case H5T_ARRAY: return .other("array")
        case H5T_VLEN: return .other("variable-length sequence")
        case H5T_REFERENCE: return .other("reference")
        case H5T_BITFIELD: return .other("bitfield")
        case H5T_TIME: return .other("time")
        default: return .other("unknown type")
        }
    }

    // MARK: Reading

    var isNumeric: Bool { typeClass == H5T_FLOAT || typeClass == H5T_INTEGER }
    var isString: Bool { typeClass == H5T_STRING }

    /// Reads all elements converted by libhdf5 to `memoryType` (a native numeric type whose
    /// size is `MemoryLayout<T>.stride`) into `buffer`, which must hold exactly
    /// `description.elementCount` elements. Returns the error instead of throwing, for use in
    /// non-throwing closures.
    func readNumeric<T>(memoryType: hid_t, into buffer: UnsafeMutableBufferPointer<T>)
        -> HDF5Error?
    {
        guard buffer.count == description.elementCount else {
            return context.error(
                .shapeMismatch,
                "the destination buffer for \(context.subject) does not hold exactly one "
                    + "element per stored element",
                expected: "a buffer of \(description.elementCount) elements (\(description))",
                found: "a buffer of \(buffer.count) elements")
        }
        guard description.elementCount > 0, let base = buffer.baseAddress else { return nil }
        guard readAll(memoryType, UnsafeMutableRawPointer(base)) >= 0 else {
            return context.libraryError(.readFailed, "libhdf5 could not read the data of \(context.subject)",
                                        found: description.description,
                                        hint: HDF5Hint.readFailed)
        }
        return nil
    }

    /// All elements converted to `T` through libhdf5's conversion to `memoryType`.
    func readNumericArray<T>(memoryType: hid_t, as: T.Type) throws(HDF5Error) -> [T] {
        let count = description.elementCount
        try checkMemoryLimit(elementSize: MemoryLayout<T>.stride, what: "the \(count) values")  // MARK: errors (issue 13)
        var failure: HDF5Error?
        let values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            failure = readNumeric(memoryType: memoryType, into: buffer)
            initialized = failure == nil ? count : 0
        }
        if let failure { throw failure }
        return values
    }

    /// All elements as strings (fixed or variable length), in C order.
    func readStrings() throws(HDF5Error) -> [String] {
        let count = description.elementCount
        guard count > 0 else { return [] }
        if H5Tis_variable_str(typeID) > 0 {
            return try readVariableLengthStrings(count: count)
        }
        return try readFixedLengthStrings(count: count)
    }

    private func readVariableLengthStrings(count: Int) throws(HDF5Error) -> [String] {
        let memoryType = H5Tcopy(mlconv_H5T_C_S1())
        guard memoryType >= 0 else {
            throw context.libraryError(.libraryFailure, "cannot make a string memory type")
        }
        defer { H5Tclose(memoryType) }
        H5Tset_size(memoryType, mlconv_H5T_VARIABLE())
        H5Tset_cset(memoryType, H5Tget_cset(typeID))
        try checkMemoryLimit(elementSize: MemoryLayout<UnsafeMutablePointer<CChar>?>.stride, what: "the \(count) strings")  // MARK: errors (issue 13)
        // MARK: errors (issue 13): libhdf5 reads variable-length data in a child process only
        if let strings = try HDF5Isolation.readVariableLengthStrings(of: self, memoryType: memoryType, count: count) {
            return strings
        }
        try checkGlobalHeap()  // MARK: errors (issue 13): libhdf5 guard (GlobalHeapCheck), in process
        var pointers = [UnsafeMutablePointer<CChar>?](repeating: nil, count: count)
        let status = pointers.withUnsafeMutableBytes { raw in
            readAll(memoryType, raw.baseAddress!)
        }
        guard status >= 0 else {
            throw context.libraryError(.readFailed, "libhdf5 could not read the strings of \(context.subject)",
                                       found: description.description,
                                       hint: HDF5Hint.readFailed)
        }
        let strings = pointers.map { pointer in pointer.map { String(cString: $0) } ?? "" }
        pointers.withUnsafeMutableBytes { raw in
            _ = mlconv_reclaim_vlen(memoryType, spaceID, raw.baseAddress!)
        }
        return strings
    }

    private func readFixedLengthStrings(count: Int) throws(HDF5Error) -> [String] {
        let size = H5Tget_size(typeID)
        guard size > 0 else { return [String](repeating: "", count: count) }
        let (total, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow else {
            throw context.error(.corruptFile, "the strings of \(context.subject) are too large",
                                found: description.description,
                                hint: HDF5Hint.corrupt)
        }
        try checkMemoryLimit(elementSize: size, what: "the \(count) strings")  // MARK: errors (issue 13)
        let memoryType = H5Tcopy(typeID)
        guard memoryType >= 0 else {
            throw context.libraryError(.libraryFailure, "cannot make a string memory type")
        }
        defer { H5Tclose(memoryType) }
        let padding = H5Tget_strpad(typeID)
        var bytes = [UInt8](repeating: 0, count: total)
        let status = bytes.withUnsafeMutableBytes { raw in readAll(memoryType, raw.baseAddress!) }
        guard status >= 0 else {
            throw context.libraryError(.readFailed, "libhdf5 could not read the strings of \(context.subject)",
                                       found: description.description,
                                       hint: HDF5Hint.readFailed)
        }
        var strings: [String] = []
        strings.reserveCapacity(count)
        for index in 0..<count {
            var element = bytes[(index * size)..<((index + 1) * size)]
            if let nul = element.firstIndex(of: 0) {
                element = element[..<nul]
            }
            if padding == H5T_STR_SPACEPAD {
                while let last = element.last, last == 0x20 { element = element.dropLast() }
            }
            strings.append(String(decoding: element, as: UTF8.self))
        }
        return strings
    }

    /// The data as the most natural `HDF5Value` (see `HDF5Value`).
    func readValue() throws(HDF5Error) -> HDF5Value {
        let scalar = description.isScalar
        switch typeClass {
        case H5T_STRING:
            let strings = try readStrings()
            return scalar ? .string(strings.first ?? "") : .strings(strings)
        case H5T_INTEGER:
            let values = try readNumericArray(memoryType: mlconv_H5T_NATIVE_INT64(), as: Int64.self)
            return scalar ? .integer(values.first ?? 0) : .integers(values)
        case H5T_FLOAT:
            let values = try readNumericArray(memoryType: mlconv_H5T_NATIVE_DOUBLE(),
                                              as: Double.self)
            return scalar ? .double(values.first ?? 0) : .doubles(values)
        default:
            return .unsupported(description)
        }
    }
}
