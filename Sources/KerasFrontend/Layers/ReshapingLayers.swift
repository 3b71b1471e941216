import MLGraph

/// Reads a 2-D "pair of pairs" spec: n → ((n,n),(n,n)); (a,b) → ((a,a),(b,b)); ((t,b),(l,r)).
func pairOfPairs(_ ctx: KerasLayerContext, _ key: String, default def: Int) throws -> [[Int]] {
    guard let v = ctx.value(key) else { return [[def, def], [def, def]] }
    if let n = v.int { return [[n, n], [n, n]] }
    if let a = v.array, a.count == 2 {
        if let h = a[0].int, let w = a[1].int { return [[h, h], [w, w]] }
        if let h = a[0].array?.compactMap(\.int), let w = a[1].array?.compactMap(\.int), h.count == 2, w.count == 2 { return [h, w] }
    }
    throw ctx.invalid(key, expected: "an integer, a pair, or a pair of pairs")
}

/// `ZeroPadding2D(padding)` → pad (constant 0) on H and W.
struct ZeroPadding2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.pad] }
    var classNames: [String] { ["ZeroPadding2D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let p = try pairOfPairs(ctx, "padding", default: 1)
        return [Node(name: ctx.nodeName, op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], p[0], p[1], [0, 0]])),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `Cropping2D(cropping)` → crop on H and W.
struct Cropping2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.crop] }
    var classNames: [String] { ["Cropping2D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let c = try pairOfPairs(ctx, "cropping", default: 0)
        return [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0], c[0], c[1], [0, 0]]), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `UpSampling2D(size, interpolation)`: nearest, or bilinear with half-pixel centres
/// (tf.keras ≥ 2.3 / Keras 3 use `tf.image.resize`; standalone Keras < 2.3 used TF1's
/// `resize_bilinear`, i.e. asymmetric).
struct UpSampling2DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.upsample2d] }
    var classNames: [String] { ["UpSampling2D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        try requireRank(ctx, 4)
        let size = try ctx.ints("size", count: 2, default: [2, 2])
        let mode: UpsampleMode
        switch try ctx.string("interpolation", default: "nearest") {
        case "nearest": mode = .nearest
        case "bilinear":
            let v = ctx.kerasVersion
            mode = (!v.isUnknown && v < KerasVersion("2.3.0")) ? .bilinearAsymmetric : .bilinearHalfPixel
        case let other:
            throw ctx.unsupported("interpolation '\(other)' is not supported", hint: "use interpolation='nearest' or 'bilinear'")
        }
        return [Node(name: ctx.nodeName, op: .upsample2d(Upsample2DAttributes(scale: size, mode: mode)),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `Flatten` → reshape to [N, ∏rest]. Row-major over NHWC, which is Keras' order, so no channel
/// permutation is needed (the IR is channels-last).
struct FlattenConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshape] }
    var classNames: [String] { ["Flatten"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try ctx.requireChannelsLast()
        let n = ctx.inputShape.dropFirst().reduce(1, *)
        return [Node(name: ctx.nodeName, op: .reshape(targetShape: [n]), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `Reshape(target_shape)` (−1 allowed) → reshape.
struct ReshapeConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshape] }
    var classNames: [String] { ["Reshape"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard let t = ctx.value("target_shape")?.array, t.allSatisfy({ $0.int != nil }) else {
            throw ctx.invalid("target_shape", expected: "a list of integers")
        }
        return [Node(name: ctx.nodeName, op: .reshape(targetShape: t.map { $0.int! }), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `Permute(dims)` (1-based, batch excluded) → transpose with perm [0] + dims.
struct PermuteConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.transpose] }
    var classNames: [String] { ["Permute"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard let d = ctx.value("dims")?.array, d.allSatisfy({ $0.int != nil }) else {
            throw ctx.invalid("dims", expected: "a list of integers")
        }
        let perm = [0] + d.map { $0.int! }
        guard perm.sorted() == Array(0..<ctx.inputShape.count) else {
            throw ctx.invalid("dims", expected: "a permutation of 1…\(ctx.inputShape.count - 1)")
        }
        return [Node(name: ctx.nodeName, op: .transpose(perm: perm), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `RepeatVector(n)`: [N, D] → [N, n, D].
struct RepeatVectorConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.repeatVector] }
    var classNames: [String] { ["RepeatVector"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        [Node(name: ctx.nodeName, op: .repeatVector(n: try ctx.int("n")), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}
