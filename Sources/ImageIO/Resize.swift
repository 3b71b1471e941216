// Resizing: Pillow-compatible bilinear resampling and Vision-style crop-and-scale modes.

/// How `Image.resized(to:height:mode:)` fits an image to a target size, after Apple Vision's
/// `VNImageCropAndScaleOption` (`centerCrop`, `scaleFit`, `scaleFill`).
public enum ImageCropMode: String, Sendable, CaseIterable {
    /// Scale keeping the aspect ratio so that the image covers the target, cropping the
    /// centre (Vision `.centerCrop`). Implemented as: crop the centred source rectangle with the
    /// target's aspect ratio (the full short side; the long side `round(short · aspect)`,
    /// offset `⌊(long − cropped) / 2⌋`, whole pixels), then resize it to the target. For a square
    /// target this is exactly Pillow's
    /// `img.crop(((w-h)//2, 0, (w-h)//2 + h, h)).resize((n, n), Image.BILINEAR)` for a
    /// landscape image (and the transposed form for portrait).
    case center
    /// Scale keeping the aspect ratio so that the whole image fits inside the target, then pad
    /// with zeros (black) to the target, centred (Vision `.scaleFit`, letterboxing). The scaled
    /// size is `round(side · scale)` on the non-limiting side; the padding before is
    /// `⌊(target − scaled) / 2⌋` (any odd pixel goes after).
    case fit
    /// Stretch to the target size, ignoring the aspect ratio (Vision `.scaleFill`).
    case fill
}

extension Image {
    /// This image resized to `width` × `height` pixels.
    ///
    /// Resampling is bilinear with antialiasing, bit-for-bit like Pillow's
    /// `Image.resize(size, Image.BILINEAR)` of Pillow 13 (without `reducing_gap`): a triangle
    /// filter whose support grows with the downscale factor (so downscaling averages every source
    /// pixel), separable, 8-bit intermediate image, 22-bit fixed-point weights, Pillow's choice
    /// of pass order (results of Pillow ≤ 12, which always filtered rows first, can differ by 1).
    /// Upscaling is plain bilinear interpolation with pixel centres aligned
    /// (`align_corners = false`) and edge pixels clamped.
    /// - Parameters:
    ///   - width: target columns, ≥ 1.
    ///   - height: target rows, ≥ 1.
    ///   - mode: how to reconcile differing aspect ratios (`.fill` = stretch).
    /// - Returns: an image of exactly `width` × `height` with the same channel count.
    /// - Precondition: `width` and `height` are positive.
    public func resized(to width: Int, height: Int, mode: ImageCropMode = .fill) -> Image {
        precondition(width > 0 && height > 0, "resized: target size \(width)x\(height) must be positive")
        switch mode {
        case .fill:
            return resampled(width: width, height: height)
        case .center:
            // Compare aspect ratios exactly in integers: self.width/self.height vs width/height.
            if self.width * height > self.height * width {
                // Wider than the target: keep the full height, crop columns.
                let cropWidth = min(max(Int((Double(self.height) * Double(width) / Double(height)).rounded()), 1), self.width)
                let x0 = (self.width - cropWidth) / 2
                return cropped(x: x0, y: 0, width: cropWidth, height: self.height)
                    .resampled(width: width, height: height)
            } else if self.width * height < self.height * width {
                // Taller than the target: keep the full width, crop rows.
                let cropHeight = min(max(Int((Double(self.width) * Double(height) / Double(width)).rounded()), 1), self.height)
                let y0 = (self.height - cropHeight) / 2
                return cropped(x: 0, y: y0, width: self.width, height: cropHeight)
                    .resampled(width: width, height: height)
            }
            return resampled(width: width, height: height)
        case .fit:
            var scaledWidth = width, scaledHeight = height
            if self.width * height > self.height * width {
                scaledHeight = min(max(Int((Double(self.height) * Double(width) / Double(self.width)).rounded()), 1), height)
            } else if self.width * height < self.height * width {
                scaledWidth = min(max(Int((Double(self.width) * Double(height) / Double(self.height)).rounded()), 1), width)
            }
            let scaled = resampled(width: scaledWidth, height: scaledHeight)
            if scaledWidth == width && scaledHeight == height { return scaled }
            return scaled.padded(toWidth: width, height: height,
                                 x: (width - scaledWidth) / 2, y: (height - scaledHeight) / 2)
        }
    }

    /// The `width` × `height` rectangle whose top-left pixel is (`x`, `y`).
    /// - Precondition: the rectangle is non-empty and inside the image.
    public func cropped(x: Int, y: Int, width: Int, height: Int) -> Image {
        precondition(width > 0 && height > 0 && x >= 0 && y >= 0 && x + width <= self.width && y + height <= self.height,
                     "cropped: rectangle (\(x), \(y), \(width)x\(height)) outside \(self.width)x\(self.height)")
        if x == 0 && y == 0 && width == self.width && height == self.height { return self }
        var out = [UInt8]()
        out.reserveCapacity(width * height * channels)
        for row in y..<(y + height) {
            let start = (row * self.width + x) * channels
            out.append(contentsOf: pixels[start..<(start + width * channels)])
        }
        return Image(width: width, height: height, channels: channels, pixels: out)
    }

    /// This image placed at (`x`, `y`) on a zero (black) canvas of `width` × `height`.
    private func padded(toWidth width: Int, height: Int, x: Int, y: Int) -> Image {
        var out = [UInt8](repeating: 0, count: width * height * channels)
        let rowBytes = self.width * channels
        for row in 0..<self.height {
            let dst = ((row + y) * width + x) * channels
            out.replaceSubrange(dst..<(dst + rowBytes), with: pixels[(row * rowBytes)..<((row + 1) * rowBytes)])
        }
        return Image(width: width, height: height, channels: channels, pixels: out)
    }

    /// Pillow's two-pass bilinear resampling (see `resized`).
    ///
    /// Pass order as Pillow 13 (`ImagingResampleInner`): the vertical pass runs first when the
    /// height shrinks by more than twice as many pixels as the width does, otherwise the
    /// horizontal pass runs first. (Pillow ≤ 12 always ran the horizontal pass first; because the
    /// intermediate image is rounded to 8 bits, the two orders can differ by 1 level.)
    private func resampled(width: Int, height: Int) -> Image {
        let shrinkY = self.height - height, shrinkX = self.width - width
        let verticalFirst = shrinkY > 0 && shrinkY > shrinkX * 2
        var current = self
        func horizontal() {
            if width != current.width {
                current = current.resampledPass(BilinearCoefficients(inSize: current.width, outSize: width), horizontal: true)
            }
        }
        func vertical() {
            if height != current.height {
                current = current.resampledPass(BilinearCoefficients(inSize: current.height, outSize: height), horizontal: false)
            }
        }
        if verticalFirst {
            vertical()
            horizontal()
        } else {
            horizontal()
            vertical()
        }
        return current
    }

    /// One separable pass: along rows (`horizontal`) or columns.
    private func resampledPass(_ k: BilinearCoefficients, horizontal: Bool) -> Image {
        let outWidth = horizontal ? k.outSize : width
        let outHeight = horizontal ? height : k.outSize
        let c = channels
        var out = [UInt8](repeating: 0, count: outWidth * outHeight * c)
        // Step between neighbouring source samples along the filtered axis, and between lines.
        let tapStride = horizontal ? c : width * c
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                k.weights.withUnsafeBufferPointer { weights in
                    for o in 0..<k.outSize {
                        let first = k.first[o], count = k.count[o], w0 = o * k.stride
                        let lines = horizontal ? outHeight : outWidth
                        for line in 0..<lines {
                            // Source offset of tap 0 and destination offset for this (o, line).
                            let srcBase: Int, dstBase: Int
                            if horizontal {
                                srcBase = (line * width + first) * c
                                dstBase = (line * outWidth + o) * c
                            } else {
                                srcBase = (first * width + line) * c
                                dstBase = (o * outWidth + line) * c
                            }
                            for ch in 0..<c {
                                var sum: Int = 1 << (BilinearCoefficients.precisionBits - 1)
                                var s = srcBase + ch
                                for t in 0..<count {
                                    sum += Int(src[s]) * Int(weights[w0 + t])
                                    s += tapStride
                                }
                                let v = sum >> BilinearCoefficients.precisionBits
                                dst[dstBase + ch] = UInt8(clamping: v)
                            }
                        }
                    }
                }
            }
        }
        return Image(width: outWidth, height: outHeight, channels: c, pixels: out)
    }
}

/// Pillow's `precompute_coeffs` + `normalize_coeffs_8bpc` for the bilinear (triangle) filter,
/// support 1 scaled by max(1, in/out). Weights are fixed point with `precisionBits` fraction bits.
struct BilinearCoefficients {
    static let precisionBits = 32 - 8 - 2

    let outSize: Int
    /// First source index of each output sample.
    var first: [Int] = []
    /// Number of taps of each output sample.
    var count: [Int] = []
    /// Weights, `stride` per output sample (only the first `count[o]` used).
    var weights: [Int32] = []
    let stride: Int

    init(inSize: Int, outSize: Int) {
        self.outSize = outSize
        let scale = Double(inSize) / Double(outSize)
        let filterScale = max(scale, 1)
        let support = 1.0 * filterScale
        stride = Int(support.rounded(.up)) * 2 + 1
        weights = [Int32](repeating: 0, count: outSize * stride)
        first.reserveCapacity(outSize)
        count.reserveCapacity(outSize)
        let inverse = 1.0 / filterScale
        let one = Double(1 << Self.precisionBits)
        var taps = [Double](repeating: 0, count: stride + 2)
        for o in 0..<outSize {
            let center = (Double(o) + 0.5) * scale
            // C's (int) conversion truncates toward zero, as does Swift's Int(Double).
            let xmin = max(Int(center - support + 0.5), 0)
            let n = min(max(min(Int(center + support + 0.5), inSize) - xmin, 0), stride)
            var total = 0.0
            for t in 0..<n {
                var x = (Double(t + xmin) - center + 0.5) * inverse
                if x < 0 { x = -x }
                let w = x < 1 ? 1 - x : 0
                taps[t] = w
                total += w
            }
            for t in 0..<n {
                let w = total != 0 ? taps[t] / total : taps[t]
                weights[o * stride + t] = w < 0 ? Int32(-0.5 + w * one) : Int32(0.5 + w * one)
            }
            first.append(xmin)
            count.append(n)
        }
    }
}
