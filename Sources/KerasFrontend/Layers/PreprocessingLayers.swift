import MLGraph

/// `Normalization` (preprocessing, adapted statistics): y = (x − mean)/max(√variance, 1e-7)
/// per index of the kept `axis` (default −1; null = one mean for everything), or with
/// `invert=True` y = mean + x·max(√variance, 1e-7), as Keras' `Normalization.call` (1e-7 is
/// `backend.epsilon()`). Mean and variance are the layer's weights (`adapt`), or its `mean` /
/// `variance` config values when given.
struct NormalizationPreprocessingConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.binary] }
    var classNames: [String] { ["Normalization"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        let given = layer.config["mean"].map { !$0.isNull } ?? false
        return given ? [] : ["mean", "variance", "count"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let shape = ctx.inputShape, rank = shape.count
        let keep: [Int]
        if let a = ctx.config["axis"], a.isNull { keep = [] } else { keep = try ctx.axisList("axis", rank: rank, default: [-1]) }
        guard !keep.contains(0) else { throw ctx.invalid("axis", expected: "axes other than the batch axis") }
        let statShape = keep.map { shape[$0] }
        guard let n = checkedProduct(statShape) else { throw ctx.invalid("axis", expected: "axes of a sane size") }
        var bshape = Array(repeating: 1, count: rank)
        for a in keep { bshape[a] = shape[a] }
        let mean: [Float], variance: [Float]
        if weightRoles(ctx.layer, version: ctx.kerasVersion).isEmpty {
            func given(_ key: String) throws -> [Float] {
                guard let v = try ctx.floatValues(key) else { throw ctx.invalid(key, expected: "a number or a list of numbers") }
                if v.count == 1 { return Array(repeating: v[0], count: n) }
                guard v.count == n else { throw ctx.invalid(key, expected: "1 or \(n) values (the kept axes \(formatShape(statShape)))") }
                return v
            }
            mean = try given("mean"); variance = try given("variance")
        } else {
            // Keras stores the statistics in the kept axes' shape (tf.keras: possibly with the
            // broadcast shape's ones); read them as n values either way.
            let ms = try ctx.storedShape("mean"), vs = try ctx.storedShape("variance")
            guard checkedProduct(ms) == n, checkedProduct(vs) == n else {
                throw KerasConversionError.weightShapeMismatch(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className, weight: "mean/variance",
                                                               expected: statShape, found: checkedProduct(ms) == n ? vs : ms,
                                                               hint: "the architecture and the weights disagree: pass the architecture that belongs to this weights file")
            }
            mean = try ctx.weight("mean", shape: ms); variance = try ctx.weight("variance", shape: vs)
        }
        let eps: Float = 1e-7
        let denom = variance.map { Swift.max($0.squareRoot(), eps) }
        let invert = try ctx.bool("invert", default: false)
        var chain = KerasNodeChain(ctx)
        let m = ConstantTensor(shape: bshape, floats: mean), d = ConstantTensor(shape: bshape, floats: denom)
        if invert {
            let scaled = chain.binary("scaled", .mul, ctx.inputs[0], constant: d)
            _ = chain.binary("shifted", .add, scaled, constant: m)
        } else {
            let centered = chain.binary("centered", .sub, ctx.inputs[0], constant: m)
            _ = chain.binary("scaled", .realDiv, centered, constant: d)
        }
        return chain.finish(output: ctx.outputNames[0])
    }
}

/// The centered crop box of Keras' `crop_to_aspect_ratio` / `smart_resize` for an H×W image
/// and a target th×tw: (top, left, height, width), computed in float32 and truncated as Keras.
func kerasAspectCrop(height: Int, width: Int, targetHeight th: Int, targetWidth tw: Int) -> (top: Int, left: Int, height: Int, width: Int) {
    let ch = Swift.max(Swift.min(height, Int(Float(width * th) / Float(tw))), 1)
    let cw = Swift.max(Swift.min(width, Int(Float(height * tw) / Float(th))), 1)
    return (Int(Float(height - ch) / 2), Int(Float(width - cw) / 2), ch, cw)
}

/// Appends [crop to the centered box of the target's aspect ratio] + resize to th×tw.
func appendSmartResize(_ chain: inout KerasNodeChain, _ input: String, shape: [Int], th: Int, tw: Int,
                       method: ResizeMethod, cropToAspect: Bool) -> String {
    var x = input
    var (h, w) = (shape[1], shape[2])
    if cropToAspect {
        let box = kerasAspectCrop(height: h, width: w, targetHeight: th, targetWidth: tw)
        if box.height != h || box.width != w {
            x = chain.add("aspect_crop", .crop(crops: [[0, 0], [box.top, h - box.top - box.height], [box.left, w - box.left - box.width], [0, 0]]), [x])
            (h, w) = (box.height, box.width)
        }
    }
    if h != th || w != tw {
        x = chain.add("resize", .resize(ResizeAttributes(method: method, samplingMode: .halfPixel, size: [th, tw])), [x])
    }
    return x
}

/// `Resizing(height, width, interpolation, crop_to_aspect_ratio)` on [N, H, W, C]: TensorFlow's
/// `tf.image.resize` (half-pixel centers, no antialiasing) with "bilinear" or "nearest",
/// after the centered crop of the target aspect ratio when `crop_to_aspect_ratio`.
struct ResizingConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.crop, .resize, .identity] }
    var classNames: [String] { ["Resizing"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        guard ctx.inputShape.count == 4 else { throw ctx.unsupported("expects images [N, H, W, C], found \(formatShape(ctx.inputShape))", hint: "check the model") }
        let th = try ctx.int("height"), tw = try ctx.int("width")
        guard th > 0, tw > 0, th <= 1 << 16, tw <= 1 << 16 else { throw ctx.invalid("height", expected: "positive sizes up to 65536") }
        let interp = try ctx.string("interpolation", default: "bilinear")
        let method: ResizeMethod
        switch interp {
        case "bilinear": method = .bilinear
        case "nearest": method = .nearest
        default:
            throw ctx.unsupported("interpolation '\(interp)' is not supported (bilinear and nearest are)", hint: "re-save the model with interpolation='bilinear' or 'nearest'")
        }
        if try ctx.bool("pad_to_aspect_ratio", default: false) {
            throw ctx.unsupported("pad_to_aspect_ratio=True is not supported", hint: "use crop_to_aspect_ratio, or pad the images before the model")
        }
        if try ctx.bool("antialias", default: false), th < ctx.inputShape[1] || tw < ctx.inputShape[2] {
            throw ctx.unsupported("antialias=True when downscaling is not supported", hint: "re-save the model with antialias=False")
        }
        var chain = KerasNodeChain(ctx)
        let y = appendSmartResize(&chain, ctx.inputs[0], shape: ctx.inputShape, th: th, tw: tw, method: method,
                                  cropToAspect: try ctx.bool("crop_to_aspect_ratio", default: false))
        if y == ctx.inputs[0] { return [] }
        return chain.finish(output: ctx.outputNames[0])
    }
}

/// `CenterCrop(height, width)` on [N, H, W, C]: the centered window (start ⌊(H − h)/2⌋); when
/// the image is smaller than the target on an axis, Keras' `smart_resize` (centered crop of
/// the target aspect ratio, then a bilinear resize).
struct CenterCropConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.crop, .resize] }
    var classNames: [String] { ["CenterCrop"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        let s = ctx.inputShape
        guard s.count == 4 else { throw ctx.unsupported("expects images [N, H, W, C], found \(formatShape(s))", hint: "check the model") }
        let th = try ctx.int("height"), tw = try ctx.int("width")
        guard th > 0, tw > 0, th <= 1 << 16, tw <= 1 << 16 else { throw ctx.invalid("height", expected: "positive sizes up to 65536") }
        let (hd, wd) = (s[1] - th, s[2] - tw)
        if hd >= 0, wd >= 0 {
            if hd == 0, wd == 0 { return [] }
            let (top, left) = (hd / 2, wd / 2)
            return [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0], [top, hd - top], [left, wd - left], [0, 0]]),
                         inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
        }
        var chain = KerasNodeChain(ctx)
        _ = appendSmartResize(&chain, ctx.inputs[0], shape: s, th: th, tw: tw, method: .bilinear, cropToAspect: true)
        return chain.finish(output: ctx.outputNames[0])
    }
}

/// Keras `Identity` (keras.layers.Identity): no node, the output is the input.
struct KerasIdentityConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.identity] }
    var classNames: [String] { ["Identity"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] { [] }
}
