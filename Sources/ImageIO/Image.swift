// Image: an 8-bit gray or RGB raster in memory, with colour conversions and float views.

/// An 8-bit image in memory: gray (1 channel) or colour (3 channels).
///
/// Layout: `pixels` is row-major, channel-interleaved **HWC** with no row padding: the value of
/// channel `c` of the pixel in column `x`, row `y` (row 0 at the top) is
/// `pixels[(y * width + x) * channels + c]`. Values are 0–255.
///
/// The image does not record the order of its colour channels. Decoders (`ImageCodec`) always
/// produce **RGB**, and every API treats 3 channels as RGB unless it says otherwise; use
/// `converted(to: .bgr)` to get BGR order for a model that wants it.
public struct Image: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels (columns), ≥ 1.
    public let width: Int
    /// Height in pixels (rows), ≥ 1.
    public let height: Int
    /// Channels per pixel: 1 (gray) or 3 (RGB, or BGR after `converted(to: .bgr)`).
    public let channels: Int
    /// `height * width * channels` samples, HWC, 0–255.
    public let pixels: [UInt8]

    /// Wraps existing pixels.
    /// - Parameters:
    ///   - width: columns, ≥ 1.
    ///   - height: rows, ≥ 1.
    ///   - channels: 1 (gray) or 3 (RGB).
    ///   - pixels: `height * width * channels` bytes, HWC (see the type's documentation).
    /// - Precondition: the sizes are positive, `channels` is 1 or 3 and `pixels.count` matches.
    ///   (Decoded images always satisfy this; check model outputs before wrapping them.)
    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "Image: size \(width)x\(height) must be positive")
        precondition(channels == 1 || channels == 3, "Image: \(channels) channels (only 1 = gray or 3 = RGB)")
        precondition(pixels.count == width * height * channels,
                     "Image: \(pixels.count) bytes for \(width)x\(height)x\(channels) (HWC) = \(width * height * channels)")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// A `width` × `height` image with every sample set to `value` (0 = black).
    /// - Precondition: as for `init(width:height:channels:pixels:)`.
    public init(width: Int, height: Int, channels: Int, filledWith value: UInt8 = 0) {
        precondition(width > 0 && height > 0, "Image: size \(width)x\(height) must be positive")
        self.init(width: width, height: height, channels: channels,
                  pixels: [UInt8](repeating: value, count: width * height * channels))
    }

    /// The sample of `channel` at column `x`, row `y` (0-based, row 0 at the top).
    /// - Precondition: the indices are in range.
    public subscript(x: Int, y: Int, channel: Int) -> UInt8 {
        precondition(x >= 0 && x < width && y >= 0 && y < height && channel >= 0 && channel < channels,
                     "Image: index (x \(x), y \(y), c \(channel)) out of range for \(width)x\(height)x\(channels)")
        return pixels[(y * width + x) * channels + channel]
    }

    /// A short summary, e.g. `Image(320x240, 3 channels)` (not the pixels).
    public var description: String { "Image(\(width)x\(height), \(channels) channel\(channels == 1 ? "" : "s"))" }
}

/// Target colour layout for `Image.converted(to:)`.
public enum ImageColorSpace: String, Sendable, CaseIterable {
    /// 3 channels, red, green, blue.
    case rgb
    /// 3 channels, blue, green, red (channels 0 and 2 of RGB swapped).
    case bgr
    /// 1 channel, ITU-R 601 luma.
    case grayscale
}

extension Image {
    /// This image in another channel layout.
    ///
    /// - `.grayscale`: a 3-channel image (taken as RGB) becomes ITU-R 601-2 luma
    ///   L = 0.299 R + 0.587 G + 0.114 B, computed exactly as Pillow's `convert("L")`:
    ///   `(R·19595 + G·38470 + B·7471 + 32768) >> 16` (16-bit fixed point, rounded). A gray
    ///   image is returned unchanged.
    /// - `.rgb`: a gray image is replicated into 3 equal channels; a 3-channel image is
    ///   returned unchanged (it is assumed to be RGB already).
    /// - `.bgr`: a gray image is replicated into 3 channels; a 3-channel image has channels 0
    ///   and 2 swapped. The image does not know its order, so converting twice swaps back.
    public func converted(to colorSpace: ImageColorSpace) -> Image {
        switch (colorSpace, channels) {
        case (.grayscale, 1), (.rgb, 3):
            return self
        case (.grayscale, _):
            var out = [UInt8](repeating: 0, count: width * height)
            pixels.withUnsafeBufferPointer { src in
                for i in 0..<out.count {
                    let r = UInt32(src[3 * i]), g = UInt32(src[3 * i + 1]), b = UInt32(src[3 * i + 2])
                    out[i] = UInt8((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16)
                }
            }
            return Image(width: width, height: height, channels: 1, pixels: out)
        case (.rgb, _), (.bgr, 1):
            var out = [UInt8](repeating: 0, count: width * height * 3)
            for i in 0..<(width * height) {
                let v = pixels[i]
                out[3 * i] = v
                out[3 * i + 1] = v
                out[3 * i + 2] = v
            }
            return Image(width: width, height: height, channels: 3, pixels: out)
        case (.bgr, _):
            var out = pixels
            for i in 0..<(width * height) {
                out.swapAt(3 * i, 3 * i + 2)
            }
            return Image(width: width, height: height, channels: 3, pixels: out)
        }
    }

    /// The pixels as floats, HWC (same order as `pixels`), each `Float(value) * scale + bias[c]`.
    ///
    /// This is Core ML's image preprocessing (`scale` = imageScale, `bias` = per-channel biases
    /// in the image's own channel order). With the defaults the values are 0–255.
    /// - Parameters:
    ///   - scale: multiplies every sample.
    ///   - bias: empty (no bias), one value (added to every channel) or `channels` values.
    /// - Precondition: `bias.count` is 0, 1 or `channels`.
    public func floatHWC(scale: Float = 1, bias: [Float] = []) -> [Float] {
        precondition(bias.isEmpty || bias.count == 1 || bias.count == channels,
                     "floatHWC: \(bias.count) biases for \(channels) channels (need 0, 1 or \(channels))")
        let perChannel: [Float] = bias.isEmpty ? [Float](repeating: 0, count: channels)
            : bias.count == 1 ? [Float](repeating: bias[0], count: channels) : bias
        var out = [Float](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var i = 0
                while i < src.count {
                    for c in 0..<channels {
                        dst[i + c] = Float(src[i + c]) * scale + perChannel[c]
                    }
                    i += channels
                }
            }
        }
        return out
    }

    /// An image from float samples, HWC, nominally 0–255 (e.g. a model's image output).
    ///
    /// Each value is clamped to 0…255 and rounded to the nearest integer, **ties to even**
    /// (like NumPy's `rint`: 0.5 → 0, 1.5 → 2, 254.5 → 254); NaN becomes 0.
    /// Scale the values to 0–255 first if the model produces 0–1.
    /// - Precondition: `floatHWC.count == height * width * channels`, sizes positive,
    ///   `channels` 1 or 3.
    public init(floatHWC values: [Float], width: Int, height: Int, channels: Int) {
        precondition(width > 0 && height > 0, "Image: size \(width)x\(height) must be positive")
        precondition(values.count == width * height * channels,
                     "Image(floatHWC:): \(values.count) values for \(width)x\(height)x\(channels) (HWC)")
        let bytes = values.map { v -> UInt8 in
            guard !v.isNaN else { return 0 }
            return UInt8(min(max(v, 0), 255).rounded(.toNearestOrEven))
        }
        self.init(width: width, height: height, channels: channels, pixels: bytes)
    }
}
