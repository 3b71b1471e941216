// Image feature values from PNG/JPEG files or raw pixels, fitted to an image input as Vision's
// crop-and-scale options do (Core ML's `MLFeatureValue(imageAt:constraint:options:)`).
import Foundation
import ImageIO
import MLPrediction

extension FeatureValue {
    /// An image value read from a PNG or JPEG file, fitted to `constraint`'s size with
    /// `cropAndScale` and converted to its colour space (Core ML's
    /// `MLFeatureValue(imageAt:constraint:options:)` with `.cropAndScale`).
    /// - Throws: `ImageCodecError` naming the file (unreadable, not PNG/JPEG, damaged),
    ///   `MLModelError.invalidImage` for a constraint with a zero size.
    public static func image(contentsOf url: URL, constraint: MLImageConstraint,
                             cropAndScale: ImageCropAndScale = .centerCrop) throws -> FeatureValue {
        let decoded = try ImageCodec.read(contentsOf: url)
        let rgb = decoded.converted(to: decoded.channels == 1 ? .grayscale : .rgb)
        let img = try FeatureImage(width: rgb.width, height: rgb.height, colorSpace: rgb.channels == 1 ? .grayscale : .rgb, pixels: rgb.pixels)
        return .image(try img.fitted(to: constraint, cropAndScale: cropAndScale, feature: url.lastPathComponent))
    }

    /// An image value from interleaved 8-bit pixels (`height × width × channels`, row-major,
    /// channels in `colorSpace`'s order), fitted to `constraint` as `image(contentsOf:...)`.
    /// - Throws: `FeatureError.shapeMismatch` when `pixels` does not hold `width × height ×
    ///   channels` bytes, `MLModelError.invalidImage` for a constraint with a zero size.
    public static func image(pixels: [UInt8], width: Int, height: Int, colorSpace: FeatureImage.ColorSpace,
                             constraint: MLImageConstraint, cropAndScale: ImageCropAndScale = .centerCrop) throws -> FeatureValue {
        let img = try FeatureImage(width: width, height: height, colorSpace: colorSpace, pixels: pixels)
        return .image(try img.fitted(to: constraint, cropAndScale: cropAndScale, feature: "pixels"))
    }
}

extension MLModel {
    /// An image value for the image input `input`, read from a PNG or JPEG file and fitted to
    /// the input's size and colour space with `cropAndScale` (default:
    /// `configuration.imageCropAndScale`).
    /// - Throws: `MLModelError.unknownFeature`, `.typeMismatch` when `input` is not an image
    ///   input, `ImageCodecError` for the file.
    public func imageFeature(contentsOf url: URL, for input: String, cropAndScale: ImageCropAndScale? = nil) throws -> FeatureValue {
        try FeatureValue.image(contentsOf: url, constraint: imageConstraint(of: input),
                               cropAndScale: cropAndScale ?? configuration.imageCropAndScale)
    }

    /// An image value for `input` from interleaved 8-bit pixels (see
    /// `FeatureValue.image(pixels:width:height:colorSpace:constraint:cropAndScale:)`).
    public func imageFeature(pixels: [UInt8], width: Int, height: Int, colorSpace: FeatureImage.ColorSpace,
                             for input: String, cropAndScale: ImageCropAndScale? = nil) throws -> FeatureValue {
        try FeatureValue.image(pixels: pixels, width: width, height: height, colorSpace: colorSpace,
                               constraint: imageConstraint(of: input), cropAndScale: cropAndScale ?? configuration.imageCropAndScale)
    }

    /// The image constraint of input `input`: its description's, or, for an NHWC input with 1 or
    /// 3 channels and no image description (a Keras model), its height, width and gray / RGB.
    func imageConstraint(of input: String) throws -> MLImageConstraint {
        guard let d = modelDescription.inputDescriptionsByName[input] else {
            throw MLModelError.unknownFeature(name: input, inputs: modelDescription.inputs.map(\.name))
        }
        if let c = d.imageConstraint { return c }
        if let s = d.multiArrayConstraint?.shape, s.count == 4, s[1] > 0, s[2] > 0, s[3] == 1 || s[3] == 3 {
            return MLImageConstraint(pixelsWide: s[2], pixelsHigh: s[1], colorSpace: s[3] == 1 ? .grayscale : .rgb,
                                     sizeConstraint: .unspecified)
        }
        throw MLModelError.typeMismatch(feature: input, expected: "an image input (or an NHWC input with 1 or 3 channels)",
                                        found: "\(d.type.rawValue) \(d.multiArrayConstraint.map { "\($0.shape)" } ?? "")")
    }
}

extension FeatureImage {
    /// This image at the constraint's size (Vision-style crop and scale, Pillow-exact bilinear
    /// resampling) and in its colour space. Unchanged when it already fits.
    package func fitted(to c: MLImageConstraint, cropAndScale: ImageCropAndScale, feature: String) throws -> FeatureImage {
        let target: FeatureImage.ColorSpace = c.colorSpace == .bgr ? .bgr : c.colorSpace == .rgb ? .rgb : .grayscale
        // An image of the default size or of a size the model's flexibility allows is kept as is.
        let keepsSize = c.allows(width: width, height: height)
        if keepsSize, colorSpace == target { return self }
        guard c.pixelsWide > 0, c.pixelsHigh > 0 else {
            throw MLModelError.invalidImage(feature: feature, reason: "the model's image size is \(c.pixelsWide)×\(c.pixelsHigh); it needs a positive size")
        }
        guard width > 0, height > 0 else {
            throw MLModelError.invalidImage(feature: feature, reason: "the image is \(width)×\(height) pixels; give a non-empty image")
        }
        var image = Image(width: width, height: height, channels: channels, pixels: pixels)
        if colorSpace == .bgr { image = image.converted(to: .bgr) }  // BGR → RGB (a swap)
        // Colour first, then size (as `mlconv predict` has always done: gray is taken before resampling).
        switch target {
        case .rgb: image = image.converted(to: .rgb)
        case .bgr: image = image.converted(to: .rgb).converted(to: .bgr)
        case .grayscale: image = image.converted(to: .grayscale)
        }
        if !keepsSize {
            image = image.resized(to: c.pixelsWide, height: c.pixelsHigh, mode: cropAndScale.mode)
        }
        return try FeatureImage(width: image.width, height: image.height, colorSpace: target, pixels: image.pixels)
    }
}

// MARK: - Image files as graph input tensors (the CLI's `--input NAME=photo.jpg`)

import MLGraph
import MLRuntime

package enum ImageInputTensor {
    /// The image at `url` as the tensor of graph input `name`: decoded, converted to the input's
    /// colour space, fitted to its size with `crop`, as raw 0–255 values `[1, H, W, C]` (the
    /// graph applies the model's preprocessing). The input is an image input, or an NHWC input
    /// with 1 or 3 channels (gray / RGB).
    /// - Throws: `RuntimeError.unknownInput`, `MLModelError.typeMismatch` for an input that is
    ///   not an image, `ImageCodecError` for the file.
    package static func read(contentsOf url: URL, input name: String, graph: Graph, crop: ImageCropMode) throws -> NDArray {
        guard let input = graph.inputs.first(where: { $0.name == name }) else {
            throw RuntimeError.unknownInput(name: name, expected: graph.inputs.map(\.name))
        }
        let shape = input.type.shape
        let feature = graph.description.inputs.first { $0.name == name }?.image
        let width: Int, height: Int, space: ImageIO.ImageColorSpace
        if let f = feature {
            width = f.width; height = f.height
            space = f.colorSpace == .bgr ? .bgr : f.colorSpace == .grayscale ? .grayscale : .rgb
        } else if shape.count == 4, shape[3] == 1 || shape[3] == 3 {
            height = shape[1]; width = shape[2]; space = shape[3] == 1 ? .grayscale : .rgb
        } else {
            throw MLModelError.notAnImageInput(feature: name, shape: shape)
        }
        guard width > 0, height > 0 else {
            throw MLModelError.invalidImage(feature: name, reason: "the model's image size is \(width)×\(height); it needs a positive size")
        }
        var image = try ImageCodec.read(contentsOf: url).converted(to: space)
        // Flexible shapes: an image of an allowed size is kept as is; others are resized to the default size.
        let allowed = graph.shapeFlexibility(ofInput: name)?.allows([1, image.height, image.width, image.channels]) ?? false
        if !allowed { image = image.resized(to: width, height: height, mode: crop) }
        return try NDArray(shape: [1, image.height, image.width, image.channels], scalars: image.floatHWC())
    }
}
