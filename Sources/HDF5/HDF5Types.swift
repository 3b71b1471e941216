/// The element type of a dataset or attribute, as stored in the file.
///
/// Byte order is not part of it: libhdf5 converts on read. Numeric types other than the listed
/// ones (bfloat16, 128-bit floats, ...) are `.other` yet still readable with the float readers;
/// compound, enum (h5py stores `bool` as an enum), opaque, array, reference and variable-length
/// sequence types are `.other` and unreadable by this module.
public enum HDF5ElementType: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// IEEE 754 binary16 (NumPy `float16`).
    case float16
    /// IEEE 754 binary32 (NumPy `float32`).
    case float32
    /// IEEE 754 binary64 (NumPy `float64`).
    case float64
    /// Signed two's-complement integers of 8, 16, 32 and 64 bits.
    case int8, int16, int32, int64
    /// Unsigned integers of 8, 16, 32 and 64 bits.
    case uint8, uint16, uint32, uint64
    /// A fixed-length string of `byteCount` bytes per element (NumPy `S<n>`, such as the
    /// `layer_names` of Keras 2.0), padded with NULs or spaces.
    case fixedLengthString(byteCount: Int)
    /// A variable-length string (h5py's `str` and `bytes` attributes, Keras 2.1+ string lists).
    case variableLengthString
    /// Any other type; the text describes it (`"enum"`, `"compound"`, `"bfloat16"`, ...).
    case other(String)

    /// `true` for `float16`, `float32`, `float64`.
    public var isFloatingPoint: Bool {
        switch self {
        case .float16, .float32, .float64: return true
        default: return false
        }
    }

    /// `true` for the signed and unsigned integer cases.
    public var isInteger: Bool {
        switch self {
        case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64: return true
        default: return false
        }
    }

    /// `true` for both string cases.
    public var isString: Bool {
        switch self {
        case .fixedLengthString, .variableLengthString: return true
        default: return false
        }
    }

    /// NumPy-like name: `float32`, `uint8`, `string(S22)`, `string(vlen)`, or the `.other` text.
    public var description: String {
        switch self {
        case .float16: return "float16"
        case .float32: return "float32"
        case .float64: return "float64"
        case .int8: return "int8"
        case .int16: return "int16"
        case .int32: return "int32"
        case .int64: return "int64"
        case .uint8: return "uint8"
        case .uint16: return "uint16"
        case .uint32: return "uint32"
        case .uint64: return "uint64"
        case .fixedLengthString(let count): return "string(S\(count))"
        case .variableLengthString: return "string(vlen)"
        case .other(let text): return text
        }
    }
}

/// The element type and dataspace (shape) of a dataset or attribute.
public struct HDF5DataDescription: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The extent of each dimension, slowest-varying first (C / NumPy order); `[]` for a scalar
    /// and for an empty (null) dataspace.
    public let shape: [Int]
    /// The stored element type.
    public let elementType: HDF5ElementType
    /// `true` for a scalar dataspace (one element, `shape == []`).
    public let isScalar: Bool
    /// The number of elements: the product of `shape`; 1 for a scalar, 0 for a null dataspace
    /// (h5py's `h5py.Empty`) and for any shape with a zero extent.
    public let elementCount: Int

    /// Makes a description; `elementCount` is derived from the other fields.
    public init(shape: [Int], elementType: HDF5ElementType, isScalar: Bool, isNull: Bool = false) {
        self.shape = shape
        self.elementType = elementType
        self.isScalar = isScalar
        if isNull {
            elementCount = 0
        } else {
            elementCount = shape.reduce(1, *)
        }
    }

    /// `true` for a null dataspace (no shape, no elements).
    public var isNull: Bool { !isScalar && shape.isEmpty }

    /// For example `float32 array of shape [9, 9, 3, 64]`, `string(vlen) scalar`,
    /// `float64 null (empty)`.
    public var description: String {
        if isScalar { return "\(elementType) scalar" }
        if isNull { return "\(elementType) null (empty)" }
        return "\(elementType) array of shape \(shape)"
    }
}

/// The value of an attribute, read with the most natural Swift type.
///
/// Scalars (HDF5 scalar dataspace) become the singular cases, arrays of any rank (even of one
/// element) the plural ones, flattened in C order. Integers of every width are widened to
/// `Int64` (a `uint64` above `Int64.max` is clamped by libhdf5's conversion), floats of every
/// width to `Double`, strings of every kind (fixed or variable length, ASCII or UTF-8) to `String`
/// (a fixed-length string ends at its first NUL; space padding is trimmed; invalid UTF-8 is
/// repaired with U+FFFD). A null dataspace becomes an empty array of its type.
public enum HDF5Value: Equatable, Sendable, CustomStringConvertible {
    /// A scalar string attribute (fixed or variable length).
    case string(String)
    /// A string array attribute of any rank, flattened in C order.
    case strings([String])
    /// A scalar integer attribute of any width and signedness.
    case integer(Int64)
    /// An integer array attribute of any rank, flattened in C order.
    case integers([Int64])
    /// A scalar float attribute (16, 32 or 64 bit).
    case double(Double)
    /// A float array attribute of any rank, flattened in C order (Keras' empty `weight_names`
    /// is `.doubles([])`).
    case doubles([Double])
    /// A type this module does not read (compound, enum, opaque, ...); the description says what
    /// it is.
    case unsupported(HDF5DataDescription)

    /// For example `string "2.0.6"`, `integers [1, -2, 3]`.
    public var description: String {
        switch self {
        case .string(let value): return "string \(value.debugDescription)"
        case .strings(let values): return "strings \(values)"
        case .integer(let value): return "integer \(value)"
        case .integers(let values): return "integers \(values)"
        case .double(let value): return "double \(value)"
        case .doubles(let values): return "doubles \(values)"
        case .unsupported(let description): return "unsupported \(description)"
        }
    }
}

/// What a path inside a file resolves to.
public enum HDF5ObjectKind: String, Equatable, Hashable, Sendable {
    /// A group (a folder of links).
    case group
    /// A dataset (an n-dimensional array).
    case dataset
    /// A committed (named) datatype.
    case namedDatatype
    /// Anything else, including a soft or external link that does not resolve.
    case other
}

/// The order in which the links of a group are listed.
public enum HDF5LinkOrder: Sendable {
    /// By name, increasing byte-wise (`conv2d_10` before `conv2d_2`): h5py's default order.
    case name
    /// By creation, for groups that track it (h5py's `track_order=True`); by name otherwise.
    case creation
}

/// One link of a group: its name and what it resolves to.
public struct HDF5Child: Equatable, Hashable, Sendable {
    /// The link's name inside its group (no `/`).
    public let name: String
    /// What the link resolves to; `.other` for a dangling soft link or an external link.
    public let kind: HDF5ObjectKind

    /// Makes a child record (for comparisons in tests; the module makes them when listing).
    public init(name: String, kind: HDF5ObjectKind) {
        self.name = name
        self.kind = kind
    }
}

/// Which object of a file a path reaches (its libhdf5 object token or header address): equal for
/// every path to the same object, so a walk can visit each group once.
public struct HDF5ObjectIdentity: Hashable, Sendable {
    /// First 8 bytes of the token.
    public let high: UInt64
    /// Last 8 bytes of the token (0 for libhdf5 1.10 addresses).
    public let low: UInt64
}
