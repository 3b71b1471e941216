// ImageIOError: what went wrong reading or writing an image, for people.
import Diagnostics

/// An error from `ImageCodec`. Every case names the file (`path`; `"<memory>"` or the name
/// given to `ImageCodec.decode` for in-memory data); `description` says what was found and
/// what to do about it.
public enum ImageIOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read at all (missing, a directory, no permission). `reason` is the
    /// system's explanation, or empty when `cause` (the system's error, kept as a value, issue
    /// 13) says it.
    case unreadable(path: String, reason: String, cause: DiagnosticCause? = nil)
    /// The bytes are neither PNG nor JPEG (formats are recognised by their signature, not by
    /// the file name). `firstBytes` holds up to the first 16 bytes (empty for an empty file).
    case unrecognizedFormat(path: String, firstBytes: [UInt8])
    /// A PNG or JPEG (`format` is `"PNG"` or `"JPEG"`) that is truncated or corrupt; `message` is
    /// libpng's or libjpeg's own explanation.
    case corrupt(path: String, format: String, message: String)
    /// A valid PNG or JPEG variant that is not supported (e.g. 12-bit JPEG, a JPEG with 2 or 5
    /// colour components); `message` says which.
    case unsupported(path: String, format: String, message: String)
    /// The image is larger than the decoder accepts (more than 2^28 pixels) or memory ran out.
    case tooLarge(path: String, format: String, message: String)
    /// The image could not be written to `path`; `reason` is the system's explanation. Nothing
    /// is left behind (no partial file, no temporary file) and an existing file is untouched.
    /// `cause`: the `AtomicFileError`, kept as a value (issue 13); `reason` is then empty.
    case unwritable(path: String, reason: String, cause: DiagnosticCause? = nil)
    /// The image cannot be encoded as asked (e.g. a channel count PNG writing does not support).
    case invalidImage(reason: String)

    /// One or two sentences: the file, what was found (with the library's message or the
    /// leading bytes), and what to do about it.
    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        func detail(_ m: String, _ c: DiagnosticCause?) -> String {
            let d = includingCause ? c.appended(to: m) : m
            return d.isEmpty ? "" : ": " + d
        }
        switch self {
        case let .unreadable(path, reason, cause):
            return "cannot read image '\(path)'\(detail(reason, cause)). Check the path and its permissions."
        case let .unrecognizedFormat(path, bytes):
            return "'\(path)' is not a PNG or JPEG image: \(Self.describe(firstBytes: bytes)). "
                + "Only PNG and JPEG are supported; convert the image to PNG or JPEG "
                + "(e.g. with Pillow: Image.open(src).convert('RGB').save('out.png')) and try again."
        case let .corrupt(path, format, message):
            return "'\(path)' is a damaged \(format) file: \(libraryName(format)) says: \(message). "
                + "The file is truncated or corrupt; re-export or re-download it."
        case let .unsupported(path, format, message):
            return "'\(path)' is a \(format) variant this decoder does not support: \(message). "
                + "Re-save it as an 8-bit RGB or grayscale PNG or baseline JPEG."
        case let .tooLarge(path, format, message):
            return "'\(path)' (\(format)) is too large to decode: \(message). Downscale it first."
        case let .unwritable(path, reason, cause):
            return "cannot write image '\(path)'\(detail(reason, cause)). Check that the directory exists and is writable; "
                + "nothing was written."
        case let .invalidImage(reason):
            return "cannot encode the image: \(reason)."
        }
    }

    private func libraryName(_ format: String) -> String { format == "PNG" ? "libpng" : "libjpeg" }

    /// "its first bytes are 47 49 46 38 39 61 … ("GIF89a…"), which looks like a GIF image".
    static func describe(firstBytes bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "the file is empty (0 bytes)" }
        let hex = bytes.map { byte -> String in
            let s = String(byte, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: " ")
        let ascii = String(bytes.map { (0x20...0x7E).contains($0) ? Character(UnicodeScalar($0)) : "." })
        var text = "its first bytes are \(hex) (\"\(ascii)\")"
        if let guess = guessFormat(bytes) { text += ", which looks like \(guess)" }
        return text
    }

    /// A guess at what a non-PNG, non-JPEG file is, from its leading bytes.
    static func guessFormat(_ b: [UInt8]) -> String? {
        func starts(_ s: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + s.count && Array(b[offset..<(offset + s.count)]) == s
        }
        func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }
        if starts([0x89, 0x50, 0x4E, 0x47]) {
            return "a PNG whose 8-byte signature is damaged (e.g. line endings rewritten by a text-mode transfer)"
        }
        if starts([0xFF, 0xD8]) { return "a JPEG whose start marker is damaged" }
        if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return "a GIF image" }
        if starts(ascii("BM")) { return "a BMP image" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "a TIFF image" }
        if starts(ascii("RIFF")) && starts(ascii("WEBP"), at: 8) { return "a WebP image" }
        if starts(ascii("ftyp"), at: 4) {
            if starts(ascii("avif"), at: 8) { return "an AVIF image" }
            if starts(ascii("heic"), at: 8) || starts(ascii("heix"), at: 8) || starts(ascii("mif1"), at: 8) {
                return "a HEIF/HEIC image (as saved by iPhones)"
            }
            return "an ISO media file (MP4/MOV/HEIF family)"
        }
        if starts([0x00, 0x00, 0x01, 0x00]) { return "a Windows ICO icon" }
        if starts([0xFF, 0x0A]) || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) { return "a JPEG XL image" }
        if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) { return "a JPEG 2000 image" }
        if starts([0x93]) && starts(ascii("NUMPY"), at: 1) { return "a NumPy .npy array, not an image" }
        if starts([0x89]) && starts(ascii("HDF"), at: 1) { return "an HDF5 file (e.g. a Keras model), not an image" }
        if starts(ascii("PK")) { return "a ZIP archive, not an image" }
        if starts(ascii("%PDF")) { return "a PDF document" }
        if b.count >= 2 && b[0] == UInt8(ascii: "P") && (UInt8(ascii: "1")...UInt8(ascii: "7")).contains(b[1]) {
            return "a Netpbm (PNM/PPM/PGM) image"
        }
        let trimmed = b.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
        if let first = trimmed.first {
            if first == UInt8(ascii: "<") {
                return "HTML or XML text (an error web page or an SVG saved under an image name?)"
            }
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return "JSON text" }
        }
        if b.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return "plain text"
        }
        return nil
    }
}
