import MLGraph

// Reference kernels of the shape and data-movement ops (issue 9). They only move values (except
// cumsum), so they are correct for any element type stored in the float32 buffers.

/// Reference `Op.squeeze` and `Op.expandDims`: size-1 axes do not change the row-major order, so
/// the output is the input's values.
final class ReferenceRankChange: Kernel {
    let count: Int
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        switch ctx.node.op {
        case .squeeze, .expandDims: return ReferenceRankChange(count: ctx.outputTypes[0].elementCount)
        default: return nil
        }
    }
    private init(count: Int) { self.count = count }
    var supportsInPlace: Bool { true }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        copyIfDistinct(inputs[0], outputs[0], count: count)
    }
}

/// Reference `Op.stack`: for each index of the axes before the new axis, the inputs' blocks (the
/// values of the remaining axes) one after another.
final class ReferenceStack: Kernel {
    let outer: Int, block: Int
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .stack(axis) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        let a = axis < 0 ? axis + s.count + 1 : axis
        return ReferenceStack(outer: s[..<a].reduce(1, *), block: s[a...].reduce(1, *))
    }
    private init(outer: Int, block: Int) { self.outer = outer; self.block = block }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        var y = outputs[0]
        for o in 0..<outer {
            for x in inputs { y.update(from: x + o * block, count: block); y += block }
        }
    }
}

/// Reference `Op.split`: output k receives, for each index of the axes before `axis`, its
/// consecutive run of the axis (sizes[k]·inner values).
final class ReferenceSplit: Kernel {
    let outer: Int, axisSize: Int, inner: Int, sizes: [Int]
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .split(a) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        let axis = a.axis < 0 ? a.axis + s.count : a.axis
        return ReferenceSplit(outer: s[..<axis].reduce(1, *), axisSize: s[axis], inner: s[(axis + 1)...].reduce(1, *),
                              sizes: ctx.outputTypes.map { $0.shape[axis] })
    }
    private init(outer: Int, axisSize: Int, inner: Int, sizes: [Int]) {
        self.outer = outer; self.axisSize = axisSize; self.inner = inner; self.sizes = sizes
    }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0]
        var first = 0
        for (k, size) in sizes.enumerated() {
            for o in 0..<outer {
                outputs[k].advanced(by: o * size * inner).update(from: x + (o * axisSize + first) * inner, count: size * inner)
            }
            first += size
        }
    }
}

/// Reference strided slice (`Op.sliceByIndex`, `Op.sliceBySize`): output element (j₀, …) reads
/// x at Σ (start[d] + j[d]·step[d])·inStride[d] over every input axis (squeezed axes have one index).
final class ReferenceSlice: Kernel {
    let counts: [Int], strides: [Int], base: Int
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let shape = ctx.inputTypes[0].shape
        let inStrides = rowMajorStrides(shape)
        let axes: [(start: Int, step: Int, count: Int)]
        switch ctx.node.op {
        case let .sliceByIndex(a):
            guard let r = a.resolve(shape) else { return nil }
            axes = r.map { ($0.start, $0.step, $0.count) }
        case let .sliceBySize(begin, size):
            axes = shape.indices.map { d in
                let s0 = begin[d] < 0 ? begin[d] + shape[d] : begin[d]
                return (s0, 1, size[d] == -1 ? shape[d] - s0 : size[d])
            }
        default: return nil
        }
        return ReferenceSlice(counts: axes.map(\.count), strides: zip(axes, inStrides).map { $0.step * $1 },
                              base: zip(axes, inStrides).map { $0.start * $1 }.reduce(0, +))
    }
    private init(counts: [Int], strides: [Int], base: Int) { self.counts = counts; self.strides = strides; self.base = base }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var it = Odometer(shape: counts, strides: [strides], base: [base])
        for o in 0..<counts.reduce(1, *) {
            y[o] = x[it.offsets[0]]
            it.advance()
        }
    }
}

/// Reference `Op.tile` (NumPy `tile`): output index j reads input index j[d] mod inShape[d] on
/// every axis (shapes padded with leading 1s to the output rank).
final class ReferenceTile: Kernel {
    let outShape: [Int], inShape: [Int], inStrides: [Int]
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .tile = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        let s = Array(repeating: 1, count: out.count - ctx.inputTypes[0].rank) + ctx.inputTypes[0].shape
        return ReferenceTile(outShape: out, inShape: s, inStrides: rowMajorStrides(s))
    }
    private init(outShape: [Int], inShape: [Int], inStrides: [Int]) { self.outShape = outShape; self.inShape = inShape; self.inStrides = inStrides }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var it = Odometer(shape: outShape, strides: [])
        for o in 0..<outShape.reduce(1, *) {
            var off = 0
            for d in outShape.indices { off += (it.index[d] % inShape[d]) * inStrides[d] }
            y[o] = x[off]
            it.advance()
        }
    }
}

/// Reference `Op.bandPart`: y[..., m, n] = x[..., m, n] when (lower < 0 or m − n ≤ lower) and
/// (upper < 0 or n − m ≤ upper), else 0.
final class ReferenceBandPart: Kernel {
    let batch: Int, rows: Int, cols: Int, lower: Int, upper: Int
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .bandPart(lower, upper) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        return ReferenceBandPart(batch: s.dropLast(2).reduce(1, *), rows: s[s.count - 2], cols: s[s.count - 1], lower: lower, upper: upper)
    }
    private init(batch: Int, rows: Int, cols: Int, lower: Int, upper: Int) {
        self.batch = batch; self.rows = rows; self.cols = cols; self.lower = lower; self.upper = upper
    }
    var supportsInPlace: Bool { true }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var o = 0
        for _ in 0..<batch {
            for m in 0..<rows {
                for n in 0..<cols {
                    let keep = (lower < 0 || m - n <= lower) && (upper < 0 || n - m <= upper)
                    y[o] = keep ? x[o] : 0
                    o += 1
                }
            }
        }
    }
}

/// Reference `Op.cumsum`: along the axis, y[i] = Σ x[j] for j ≤ i (j < i exclusive; j ≥ i,
/// resp. j > i, reverse), accumulated in Double in walking order.
final class ReferenceCumsum: Kernel {
    let outer: Int, n: Int, inner: Int, exclusive: Bool, reverse: Bool
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .cumsum(a) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape
        let axis = a.axis < 0 ? a.axis + s.count : a.axis
        return ReferenceCumsum(outer: s[..<axis].reduce(1, *), n: s[axis], inner: s[(axis + 1)...].reduce(1, *),
                               exclusive: a.exclusive, reverse: a.reverse)
    }
    private init(outer: Int, n: Int, inner: Int, exclusive: Bool, reverse: Bool) {
        self.outer = outer; self.n = n; self.inner = inner; self.exclusive = exclusive; self.reverse = reverse
    }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for o in 0..<outer {
            for c in 0..<inner {
                var acc = 0.0
                for step in 0..<n {
                    let i = reverse ? n - 1 - step : step
                    let at = (o * n + i) * inner + c
                    let v = Double(x[at])
                    if exclusive { y[at] = Float(acc); acc += v } else { acc += v; y[at] = Float(acc) }
                }
            }
        }
    }
}

/// Reference `Op.spaceToDepth` / `Op.depthToSpace` (NHWC, DCR): with block b and C the channels of
/// the deep side, deep[n, h, w, (i·b + j)·C + c] = shallow[n, h·b + i, w·b + j, c].
final class ReferenceSpaceDepth: Kernel {
    /// Shape of the deep side [N, H, W, C·b²] and its channel count per block C.
    let n: Int, h: Int, w: Int, c: Int, b: Int, toDepth: Bool
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let deep: [Int], b: Int, toDepth: Bool
        switch ctx.node.op {
        case let .spaceToDepth(bs): (deep, b, toDepth) = (ctx.outputTypes[0].shape, bs, true)
        case let .depthToSpace(bs): (deep, b, toDepth) = (ctx.inputTypes[0].shape, bs, false)
        default: return nil
        }
        return ReferenceSpaceDepth(n: deep[0], h: deep[1], w: deep[2], c: deep[3] / (b * b), b: b, toDepth: toDepth)
    }
    private init(n: Int, h: Int, w: Int, c: Int, b: Int, toDepth: Bool) {
        self.n = n; self.h = h; self.w = w; self.c = c; self.b = b; self.toDepth = toDepth
    }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let sw = w * b  // shallow width
        for nn in 0..<n { for hh in 0..<h { for ww in 0..<w { for i in 0..<b { for j in 0..<b { for cc in 0..<c {
            let deep = ((nn * h + hh) * w + ww) * (c * b * b) + (i * b + j) * c + cc
            let shallow = ((nn * h * b + hh * b + i) * sw + ww * b + j) * c + cc
            if toDepth { y[deep] = x[shallow] } else { y[shallow] = x[deep] }
        } } } } } }
    }
}

/// Reference `Op.resize` on [N, H, W, C]: nearest reads input row/column
/// `ResizeSamplingMode.nearestIndex`; bilinear interpolates between floor(g) and floor(g) + 1
/// (clamped) at the coordinates g = `ResizeSamplingMode.coordinate` of each axis.
final class ReferenceResize: Kernel {
    struct Tap { let i0: Int, i1: Int, f: Double }
    let n: Int, inH: Int, inW: Int, c: Int
    let rows: [Tap], cols: [Tap]

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .resize(a) = ctx.node.op else { return nil }
        let s = ctx.inputTypes[0].shape, o = ctx.outputTypes[0].shape
        func taps(_ inSize: Int, _ outSize: Int) -> [Tap] {
            (0..<outSize).map { i in
                if a.method == .nearest {
                    let k = a.samplingMode.nearestIndex(i, inSize: inSize, outSize: outSize)
                    return Tap(i0: k, i1: k, f: 0)
                }
                let g = a.samplingMode.coordinate(i, inSize: inSize, outSize: outSize)
                let i0 = Int(g.rounded(.down))
                return Tap(i0: i0, i1: Swift.min(i0 + 1, inSize - 1), f: g - Double(i0))
            }
        }
        return ReferenceResize(n: s[0], inH: s[1], inW: s[2], c: s[3], rows: taps(s[1], o[1]), cols: taps(s[2], o[2]))
    }
    private init(n: Int, inH: Int, inW: Int, c: Int, rows: [Tap], cols: [Tap]) {
        self.n = n; self.inH = inH; self.inW = inW; self.c = c; self.rows = rows; self.cols = cols
    }
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0]
        var y = outputs[0]
        for nn in 0..<n {
            for r in rows {
                for q in cols {
                    func at(_ i: Int, _ j: Int, _ ch: Int) -> Double { Double(x[((nn * inH + i) * inW + j) * c + ch]) }
                    for ch in 0..<c {
                        let top = at(r.i0, q.i0, ch) * (1 - q.f) + at(r.i0, q.i1, ch) * q.f
                        let bottom = at(r.i1, q.i0, ch) * (1 - q.f) + at(r.i1, q.i1, ch) * q.f
                        y.pointee = Float(top * (1 - r.f) + bottom * r.f)
                        y += 1
                    }
                }
            }
        }
    }
}
