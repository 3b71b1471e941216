// ImageCodec: PNG / JPEG decoding (libpng, libjpeg-turbo via CImageIO) and atomic PNG writing.
import CImageIO
import AtomicFile
import Foundation
import Diagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading PNG and JPEG files into `Image`s and writing `Image`s as PNG.
///
/// What decoding produces (always 8-bit, HWC, channels 1 or 3, RGB order):
/// - **PNG** (libpng): gray and gray+alpha → 1 channel; RGB, RGBA and palette → 3 channels RGB
///   (palette entries are expanded even if they are all gray). 16-bit samples keep their
///   high byte (`v >> 8`, as Pillow does for 16-bit RGB); 1/2/4-bit gray is scaled to 0–255.
///   **Alpha is dropped**, not composited (a transparent pixel keeps its stored colour; this
///   matches Pillow's `convert("RGB")` / `convert("L")`), and so is `tRNS` transparency.
///   `gAMA`, `sRGB`, `iCCP` and other colour chunks are ignored (values are used as stored, like
///   Pillow). Interlaced files are supported. Data after the image rows is not read, so a file
///   missing only its final chunks still decodes.
/// - **JPEG** (libjpeg-turbo, default ISLOW IDCT and fancy upsampling, which is what Pillow
///   uses: decoded pixels are identical to Pillow's): grayscale → 1 channel; YCbCr and RGB →
///   3 channels RGB; CMYK and YCCK → 3 channels RGB by Pillow's formula
///   `R = (255 − K) − C·(255 − K)/255` (Adobe-inverted data un-inverted first). Progressive
///   and arithmetic-coded files are supported; 12-bit and lossless JPEG are not. A file that ends
///   before its data does — even one missing only the final EOI marker, as libjpeg cannot tell
///   that apart from a cut inside the last scan — is an error (`.corrupt`), not a gray-padded
///   image.
/// - **EXIF orientation is ignored**: pixels come out in stored order, as Pillow's
///   `Image.open` gives them (call `ImageOps.exif_transpose` there to compare otherwise).
///
/// The format is recognised from the file's first bytes, never from its extension. Bad bytes
/// never crash: they throw `ImageIOError`.
public enum ImageCodec {
    /// A file format recognised by its signature.
    public enum Format: String, Sendable {
        /// PNG (Portable Network Graphics), decoded with libpng.
        case png = "PNG"
        /// JPEG (JFIF / Exif / Adobe), decoded with libjpeg-turbo.
        case jpeg = "JPEG"
    }

    /// The format of `data` by its signature (`89 50 4E 47 0D 0A 1A 0A` for PNG, `FF D8 FF` for
    /// JPEG), or nil.
    public static func format(of data: Data) -> Format? {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if data.count >= 8 && data.prefix(8).elementsEqual(png) { return .png }
        if data.count >= 3 && data.prefix(3).elementsEqual([0xFF, 0xD8, 0xFF]) { return .jpeg }
        return nil
    }

    /// Reads and decodes the PNG or JPEG file at `url` (see the type's documentation for the
    /// conversions applied).
    /// - Returns: an 8-bit image, 1 (gray) or 3 (RGB) channels, HWC.
    /// - Throws: `ImageIOError.unreadable` (missing file, directory, permissions),
    ///   `.unrecognizedFormat` (neither PNG nor JPEG), `.corrupt` (truncated or damaged),
    ///   `.unsupported` (e.g. 12-bit JPEG) or `.tooLarge`.
    public static func read(contentsOf url: URL) throws -> Image {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ImageIOError.unreadable(path: path, reason: "no such file")
        }
        if isDirectory.boolValue {
            throw ImageIOError.unreadable(path: path, reason: "it is a directory, not an image file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ImageIOError.unreadable(path: path, reason: "", cause: DiagnosticCause(error))
        }
        return try decode(data, path: path)
    }

    /// Decodes PNG or JPEG bytes held in memory (see `read(contentsOf:)`).
    /// - Parameters:
    ///   - data: the whole file.
    ///   - path: the name used in error messages.
    /// - Throws: `ImageIOError` as `read(contentsOf:)`, except `.unreadable`.
    public static func decode(_ data: Data, path: String = "<memory>") throws -> Image {
        guard let format = format(of: data) else {
            throw ImageIOError.unrecognizedFormat(path: path, firstBytes: Array(data.prefix(16)))
        }
        cimg_set_max_bytes(MemoryLimit.current)  // MARK: errors (issue 13): --max-memory
        var image = cimg_image()
        var message = [CChar](repeating: 0, count: 512)
        let status: cimg_status = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return message.withUnsafeMutableBufferPointer { text in
                switch format {
                case .png: return cimg_png_decode(bytes.baseAddress, bytes.count, &image, text.baseAddress, text.count)
                case .jpeg: return cimg_jpeg_decode(bytes.baseAddress, bytes.count, &image, text.baseAddress, text.count)
                }
            }
        }
        defer { cimg_free(image.pixels) }
        let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard status == CIMG_OK, let pixels = image.pixels else {
            throw error(status, path: path, format: format.rawValue, message: text)
        }
        let count = Int(image.width) * Int(image.height) * Int(image.channels)
        return Image(width: Int(image.width), height: Int(image.height), channels: Int(image.channels),
                     pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
    }

    /// `image` encoded as an 8-bit, non-interlaced PNG (gray for 1 channel, RGB for 3; no gamma
    /// or colour-profile chunks, so viewers and Pillow read back exactly `image.pixels`).
    /// - Throws: `ImageIOError.invalidImage` if libpng rejects the image, `.tooLarge` if memory
    ///   runs out.
    public static func encodePNG(_ image: Image) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var message = [CChar](repeating: 0, count: 512)
        let status: cimg_status = image.pixels.withUnsafeBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { text in
                cimg_png_encode(pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.channels),
                                &output, &size, text.baseAddress, text.count)
            }
        }
        defer { cimg_free(output) }
        let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard status == CIMG_OK, let output else {
            if status == CIMG_ERR_NOMEM {
                throw ImageIOError.tooLarge(path: "<memory>", format: "PNG", message: text)
            }
            throw ImageIOError.invalidImage(reason: "PNG encoding of \(image) failed: \(text)")
        }
        return Data(bytes: output, count: size)
    }

    /// Writes `image` as a PNG file (see `encodePNG`), atomically (`AtomicFile`): the bytes go to a
    /// temporary file in the same directory (`.<name>.mlconv-tmp-<pid>-<random>`), which is flushed and then renamed over
    /// `url`. Readers see either the old file or the complete new one; on any failure the
    /// temporary file is removed and an existing file at `url` is left untouched.
    /// - Throws: `ImageIOError.unwritable` (directory missing or read-only, `url` is a
    ///   directory, disk full), or the errors of `encodePNG`.
    public static func writePNG(_ image: Image, to url: URL) throws {
        let data = try encodePNG(image)
        do {
            try AtomicFile.write(data, to: url.path)
        } catch let error as AtomicFileError {
            throw ImageIOError.unwritable(path: url.path, reason: "", cause: DiagnosticCause(error))
        }
    }

    /// The linked library versions, e.g. "libpng 1.6.39, libjpeg 62 (libjpeg-turbo 2.1.5)".
    public static var libraryVersions: String { String(cString: cimg_library_versions()) }

    // MARK: - Private

    private static func error(_ status: cimg_status, path: String, format: String, message: String) -> ImageIOError {
        switch status {
        case CIMG_ERR_UNSUPPORTED: return .unsupported(path: path, format: format, message: message)
        case CIMG_ERR_TOO_LARGE, CIMG_ERR_NOMEM: return .tooLarge(path: path, format: format, message: message)
        default: return .corrupt(path: path, format: format, message: message.isEmpty ? "unknown error" : message)
        }
    }
}
