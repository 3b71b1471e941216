#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AtomicFile
import Foundation
import Diagnostics
import MLGraph

/// Errors reading or writing NumPy `.npy` files. Each names the file (its path, or the name given
/// to `NPY.decode(_:name:)`).
public enum NPYError: Error, CustomStringConvertible, Equatable {
    /// The bytes do not start with the `.npy` magic string `\x93NUMPY`.
    case notNPY(file: String)
    /// Format version other than 1.0, 2.0 or 3.0.
    case unsupportedVersion(file: String, major: Int, minor: Int)
    /// The header dictionary cannot be parsed (the message says what is wrong).
    case malformedHeader(file: String, message: String)
    /// The file ends before the header or the data does.
    case truncated(file: String, expectedBytes: Int, foundBytes: Int)
    /// The dtype is not one of `<f4`, `<f8`, `<f2`, `<i4`, `<i8` (little-endian) or `|b1`.
    case unsupportedDType(file: String, dtype: String)
    /// The array is stored in Fortran (column-major) order; save it with C order
    /// (`np.ascontiguousarray`).
    case fortranOrder(file: String)
    /// The file could not be read or written. `cause`: the underlying error (a Foundation error,
    /// an `AtomicFileError`), kept as a value (issue 13).
    case io(file: String, message: String, cause: DiagnosticCause? = nil)

    /// The message, starting with the file name (and the underlying error's text).
    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        switch self {
        case let .notNPY(f): return "\(f): not a NumPy .npy file (missing the \\x93NUMPY magic)"
        case let .unsupportedVersion(f, major, minor): return "\(f): unsupported .npy format version \(major).\(minor) (1.0, 2.0, 3.0 are read)"
        case let .malformedHeader(f, m): return "\(f): malformed .npy header: \(m)"
        case let .truncated(f, e, found): return "\(f): truncated .npy file: needs \(e) bytes, has \(found)"
        case let .unsupportedDType(f, d): return "\(f): unsupported .npy dtype '\(d)'; supported: <f4, <f8, <f2, <i4, <i8 (little-endian), |b1"
        case let .fortranOrder(f): return "\(f): array is in Fortran order; save it in C order (np.ascontiguousarray)"
        case let .io(f, m, c): return "\(f): \(includingCause ? c.appended(to: m) : m)"
        }
    }
}

/// Reader and writer of NumPy `.npy` files (format versions 1.0, 2.0 and 3.0, C order).
///
/// Reading accepts little-endian `<f4` (float32), `<f2` (float16), `<i4` (int32), `<i8` (int64)
/// and `|b1` (bool), giving an `NDArray` of that element type, and `<f8` (float64), converted to
/// float32 (`=` native order is read as little-endian; the runtime only targets little-endian
/// machines). Writing produces version 1.0 (2.0 when the header exceeds 65535 bytes) in the
/// array's element type (`<f4`, `<f2`, `<i4`, `<i8`, `|b1`), the header padded to a multiple of 64
/// bytes.
public enum NPY {
    static let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]  // \x93NUMPY

    /// Reads the array in the `.npy` file at `url`.
    /// - Throws: `NPYError` naming the file: `.io` if unreadable, else as `decode(_:name:)`.
    public static func read(contentsOf url: URL) throws -> NDArray {
        let data: Data
        do { data = try Data(contentsOf: url, options: .mappedIfSafe) } catch {
            throw NPYError.io(file: url.path, message: "cannot read", cause: DiagnosticCause(error))
        }
        return try decode(data, name: url.path)
    }

    /// Decodes `.npy` bytes; `name` is used in error messages.
    /// - Throws: `NPYError.notNPY`, `.unsupportedVersion`, `.malformedHeader`, `.truncated`
    ///   (header or data shorter than declared), `.unsupportedDType`, `.fortranOrder`.
    public static func decode(_ data: Data, name: String) throws -> NDArray {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> NDArray in
            guard raw.count >= 8, Array(raw[0..<6]) == magic else {
                if raw.count < 8 && raw.count > 0 && Array(raw[0..<min(6, raw.count)]) == Array(magic.prefix(min(6, raw.count))) {
                    throw NPYError.truncated(file: name, expectedBytes: 10, foundBytes: raw.count)
                }
                throw NPYError.notNPY(file: name)
            }
            let major = Int(raw[6]), minor = Int(raw[7])
            let headerLength: Int, headerStart: Int
            switch major {
            case 1:
                headerStart = 10
                guard raw.count >= headerStart else { throw NPYError.truncated(file: name, expectedBytes: headerStart, foundBytes: raw.count) }
                headerLength = Int(raw[8]) | Int(raw[9]) << 8
            case 2, 3:
                headerStart = 12
                guard raw.count >= headerStart else { throw NPYError.truncated(file: name, expectedBytes: headerStart, foundBytes: raw.count) }
                headerLength = (0..<4).reduce(0) { $0 | Int(raw[8 + $1]) << (8 * $1) }
            default:
                throw NPYError.unsupportedVersion(file: name, major: major, minor: minor)
            }
            guard minor == 0 else { throw NPYError.unsupportedVersion(file: name, major: major, minor: minor) }
            let dataStart = headerStart + headerLength
            guard raw.count >= dataStart else {
                throw NPYError.truncated(file: name, expectedBytes: dataStart, foundBytes: raw.count)
            }
            // Version 1/2 headers are latin-1, version 3 UTF-8; the dictionary itself is ASCII.
            let headerBytes = UnsafeRawBufferPointer(rebasing: raw[headerStart..<dataStart])
            let header = String(decoding: headerBytes, as: UTF8.self)
            let (descr, fortran, shape) = try parseHeader(header, name: name)
            guard !fortran else { throw NPYError.fortranOrder(file: name) }
            var count = 1
            for d in shape {
                let (p, o) = count.multipliedReportingOverflow(by: d)
                guard !o, p <= TensorType.maxElementCount else { throw NPYError.malformedHeader(file: name, message: "shape \(shape) has too many elements") }
                count = p
            }
            let (type, byteSize) = try elementType(for: descr, name: name)
            let needed = dataStart + count * byteSize
            guard raw.count >= needed else {
                throw NPYError.truncated(file: name, expectedBytes: needed, foundBytes: raw.count)
            }
            // MARK: errors (issue 13): --max-memory before the array is copied out of the file
            try MemoryLimit.check(count: count, elementSize: byteSize, for: "the array of shape \(shape) (\(descr))", file: name)
            let body = UnsafeRawBufferPointer(rebasing: raw[dataStart..<needed])
            if byteSize == 8 && type == .float32 {  // <f8, converted to float32
                let scalars = (0..<count).map { Float(Double(bitPattern: UInt64(littleEndian: body.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)))) }
                return try NDArray(shape: shape, scalars: scalars)
            }
            return try NDArray(shape: shape, elementType: type, bytes: Array(body))
        }
    }

    /// Encodes `array` as `.npy` bytes (version 1.0, C order) in its element type: `<f4`, `<f2`,
    /// `<i4`, `<i8` or `|b1`.
    public static func encode(_ array: NDArray) -> Data {
        let shapeText: String
        switch array.shape.count {
        case 0: shapeText = "()"
        case 1: shapeText = "(\(array.shape[0]),)"
        default: shapeText = "(" + array.shape.map(String.init).joined(separator: ", ") + ")"
        }
        var dict = "{'descr': '\(descr(array.elementType))', 'fortran_order': False, 'shape': \(shapeText), }"
        // Pad with spaces so that magic + version + length + header (ending in \n) is a multiple
        // of 64 bytes, as NumPy does.
        let version2 = dict.utf8.count + 1 + 10 > 65535
        let prefix = version2 ? 12 : 10
        let total = prefix + dict.utf8.count + 1
        dict += String(repeating: " ", count: (64 - total % 64) % 64) + "\n"
        var out = Data(magic)
        let len = dict.utf8.count
        if version2 {
            out.append(contentsOf: [2, 0])
            out.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: len >> (8 * $0)) })
        } else {
            out.append(contentsOf: [1, 0, UInt8(len & 0xFF), UInt8(len >> 8)])
        }
        out.append(contentsOf: Array(dict.utf8))
        // The runtime targets little-endian machines only: the bytes are written as they are.
        array.withUnsafeBytes { out.append(contentsOf: $0) }
        return out
    }

    /// Writes `array` to `url` as `.npy` (see `encode(_:)`), atomically (`AtomicFile`): readers
    /// see the previous file or the complete new one, never a partial file.
    /// - Throws: `NPYError.io` naming the file when it cannot be written.
    public static func write(_ array: NDArray, to url: URL) throws {
        do {
            try AtomicFile.write(encode(array), to: url.path)
        } catch let error as AtomicFileError {
            throw NPYError.io(file: url.path, message: "cannot write", cause: DiagnosticCause(error))
        }
    }

    // MARK: - Header parsing

    /// Parses `{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }` (keys in any order).
    static func parseHeader(_ header: String, name: String) throws -> (descr: String, fortran: Bool, shape: [Int]) {
        let fail = { (m: String) in NPYError.malformedHeader(file: name, message: m) }
        let text = header.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{"), text.hasSuffix("}") else { throw fail("the header is not a dictionary: \(text.prefix(80))") }

        func value(of key: String) throws -> Substring {
            guard let k = text.range(of: "'\(key)'") ?? text.range(of: "\"\(key)\"") else { throw fail("no '\(key)' key") }
            guard let colon = text[k.upperBound...].firstIndex(of: ":") else { throw fail("no value for '\(key)'") }
            return text[text.index(after: colon)...].drop { $0 == " " }
        }

        let d = try value(of: "descr")
        guard let q = d.first, q == "'" || q == "\"", let end = d.dropFirst().firstIndex(of: q) else {
            throw fail("'descr' is not a string (structured dtypes are not supported)")
        }
        let descr = String(d[d.index(after: d.startIndex)..<end])

        let f = try value(of: "fortran_order")
        let fortran: Bool
        if f.hasPrefix("True") { fortran = true } else if f.hasPrefix("False") { fortran = false } else {
            throw fail("'fortran_order' is neither True nor False")
        }

        let s = try value(of: "shape")
        guard s.first == "(", let close = s.firstIndex(of: ")") else { throw fail("'shape' is not a tuple") }
        var shape: [Int] = []
        for part in s[s.index(after: s.startIndex)..<close].split(separator: ",") {
            let t = part.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "L", with: "")
            if t.isEmpty { continue }
            guard let v = Int(t), v >= 0 else { throw fail("shape entry '\(t)' is not a non-negative integer") }
            shape.append(v)
        }
        return (descr, fortran, shape)
    }

    /// The `.npy` dtype string of `type`.
    static func descr(_ type: ElementType) -> String {
        switch type {
        case .float32: return "<f4"
        case .float16: return "<f2"
        case .int32: return "<i4"
        case .int64: return "<i8"
        case .bool: return "|b1"
        }
    }

    /// The element type an `.npy` dtype is read as, and the dtype's size in bytes (`<f8` is read
    /// as float32, 8 bytes per stored value).
    static func elementType(for descr: String, name: String) throws -> (ElementType, Int) {
        var d = Substring(descr)
        if d == "|b1" || d == "b1" || d == "?" { return (.bool, 1) }
        if d.first == "<" || d.first == "=" { d = d.dropFirst() } else if d.first == "|" || d.first == ">" {
            throw NPYError.unsupportedDType(file: name, dtype: descr)
        }
        switch d {
        case "f4": return (.float32, 4)
        case "f8": return (.float32, 8)
        case "f2": return (.float16, 2)
        case "i4": return (.int32, 4)
        case "i8": return (.int64, 8)
        default: throw NPYError.unsupportedDType(file: name, dtype: descr)
        }
    }
}
