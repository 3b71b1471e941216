import MLGraph

/// Reads a 1-D (before, after) spec: n → (n, n); (a, b) → (a, b).
func beforeAfter(_ ctx: KerasLayerContext, _ key: String, default def: Int) throws -> [Int] {
    guard let v = ctx.value(key) else { return [def, def] }
    if let n = v.int { return [n, n] }
    if let a = v.array, a.count == 2, let b = a[0].int, let e = a[1].int { return [b, e] }
    if let a = v.array, a.count == 1, let n = a[0].int { return [n, n] }
    throw ctx.invalid(key, expected: "an integer or a pair of integers")
}

/// `ZeroPadding1D(padding)` on [N, W, C] → pad (constant 0) on the steps axis.
struct ZeroPadding1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.pad] }
    var classNames: [String] { ["ZeroPadding1D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try Lowering1D.requireSequence(ctx)
        let p = try beforeAfter(ctx, "padding", default: 1)
        guard p.allSatisfy({ $0 >= 0 }) else { throw ctx.invalid("padding", expected: "non-negative integers") }
        return [Node(name: ctx.nodeName, op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], p, [0, 0]])),
                     inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `Cropping1D(cropping)` on [N, W, C] → crop on the steps axis.
struct Cropping1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.crop] }
    var classNames: [String] { ["Cropping1D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try Lowering1D.requireSequence(ctx)
        let c = try beforeAfter(ctx, "cropping", default: 1)
        guard c.allSatisfy({ $0 >= 0 }) else { throw ctx.invalid("cropping", expected: "non-negative integers") }
        return [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0], c, [0, 0]]), inputs: [ctx.inputs[0]], outputs: [ctx.outputNames[0]])]
    }
}

/// `UpSampling1D(size)` on [N, W, C] (each step repeated `size` times) → reshape [N, W, 1, C]
/// (`<name>__as_2d`) → upsample2d `<name>` nearest with scale [size, 1] → reshape [N, W·size, C].
struct UpSampling1DConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshape, .upsample2d] }
    var classNames: [String] { ["UpSampling1D"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        try Lowering1D.requireSequence(ctx)
        let size = try ctx.int("size", default: 2)
        guard size >= 1 else { throw ctx.invalid("size", expected: "a positive integer") }
        let (w, c) = (ctx.inputShape[1], ctx.inputShape[2])
        let x2d = ctx.nodeName + "__as_2d", up = ctx.nodeName + "__upsampled"
        return [Node(name: x2d, op: .reshape(targetShape: [w, 1, c]), inputs: [ctx.inputs[0]], outputs: [x2d]),
                Node(name: ctx.nodeName, op: .upsample2d(Upsample2DAttributes(scale: [size, 1], mode: .nearest)), inputs: [x2d], outputs: [up]),
                Node(name: ctx.nodeName + "__as_1d", op: .reshape(targetShape: [w * size, c]), inputs: [up], outputs: [ctx.outputNames[0]])]
    }
}
