import MLGraph

/// The geometry of a channels-last window op with 1 or 3 spatial axes, as 3 spatial axes
/// (D, H, W): a 1-D op is D = H = 1 with a size-1 window, stride 1 and no padding on them.
struct WindowGeometry3D {
    var n = 0, c = 0
    var inSize = [1, 1, 1], outSize = [1, 1, 1]
    var kernel = [1, 1, 1], strides = [1, 1, 1], dilations = [1, 1, 1], padBefore = [0, 0, 0]

    /// From the input / output shapes [N, spatial…, C] and the per-axis attributes (one entry per
    /// spatial axis; `padding` resolved with `SpatialPadding.resolve`).
    init(input x: [Int], output y: [Int], kernel k: [Int], strides s: [Int], dilations d: [Int], padding: SpatialPadding) {
        let r = x.count - 2, off = 3 - r
        n = x[0]; c = x[r + 1]
        let pads = padding.resolve(input: Array(x[1...r]), kernel: k, strides: s, dilations: d)
        for i in 0..<r {
            inSize[off + i] = x[1 + i]; outSize[off + i] = y[1 + i]
            kernel[off + i] = k[i]; strides[off + i] = s[i]; dilations[off + i] = d[i]; padBefore[off + i] = pads[i].before
        }
    }

    /// Spatial positions of the input and output.
    var inPixels: Int { inSize[0] * inSize[1] * inSize[2] }
    var outPixels: Int { outSize[0] * outSize[1] * outSize[2] }
}

/// Reference `Op.conv1d` and `Op.conv3d`: x [N, spatial…, Cin] → y [N, out…, Cout] (channels
/// last), weight [Cout, Cin/groups, k…], optional bias [Cout], any strides, dilations, groups and
/// `SpatialPadding` (padded elements are zero), then the fused activation:
///
///     y[n, o…, oc] = act(bias[oc] + Σ_{k…, i} x[n, (o·s − before + k·d)…, g·Cg + i] · weight[oc, i, k…])
///
/// with g = oc / (Cout/groups), Cg = Cin/groups, out-of-range positions skipped. Written once for
/// three spatial axes (a 1-D op has D = H = 1). Accumulates in Double.
/// - Complexity: N·(Π out)·Cout·(Π k)·Cin/groups multiply-adds.
final class ReferenceConvND: Kernel {
    let g: WindowGeometry3D
    let cin, cout, groups: Int
    /// Weights repacked to [Cout, kD, kH, kW, Cin/groups] so the channel loop is contiguous.
    let weight: [Float]
    let bias: [Float]
    let activation: Activation?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let a: ConvNDAttributes
        switch ctx.node.op {
        case let .conv1d(v), let .conv3d(v): a = v
        default: return nil
        }
        return try ReferenceConvND(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: ConvNDAttributes) throws {
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        g = WindowGeometry3D(input: x, output: y, kernel: a.kernel, strides: a.strides, dilations: a.dilations, padding: a.padding)
        cin = g.c; cout = a.outputChannels; groups = a.groups
        let raw = try ctx.weightValues("weight")  // [Cout, Cg, k…] = [Cout, Cg, kD·kH·kW] in row-major order
        let cg = cin / groups, taps = g.kernel[0] * g.kernel[1] * g.kernel[2]
        var packed = [Float](repeating: 0, count: raw.count)
        for o in 0..<cout { for i in 0..<cg { for t in 0..<taps {
            packed[(o * taps + t) * cg + i] = raw[(o * cg + i) * taps + t]
        } } }
        weight = packed
        bias = ctx.optionalWeightValues("bias") ?? [Float](repeating: 0, count: cout)
        activation = a.activation
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let cg = cin / groups, coutG = cout / groups
        let (id, ih, iw) = (g.inSize[0], g.inSize[1], g.inSize[2])
        let (kd, kh, kw) = (g.kernel[0], g.kernel[1], g.kernel[2])
        var yi = 0
        for b in 0..<g.n { for od in 0..<g.outSize[0] { for oh in 0..<g.outSize[1] { for ow in 0..<g.outSize[2] {
            for oc in 0..<cout {
                let grp = oc / coutG
                var acc = Double(bias[oc])
                for zd in 0..<kd {
                    let pd = od * g.strides[0] - g.padBefore[0] + zd * g.dilations[0]
                    if pd < 0 || pd >= id { continue }
                    for zh in 0..<kh {
                        let ph = oh * g.strides[1] - g.padBefore[1] + zh * g.dilations[1]
                        if ph < 0 || ph >= ih { continue }
                        for zw in 0..<kw {
                            let pw = ow * g.strides[2] - g.padBefore[2] + zw * g.dilations[2]
                            if pw < 0 || pw >= iw { continue }
                            let xs = (((b * id + pd) * ih + ph) * iw + pw) * cin + grp * cg
                            let ws = (((oc * kd + zd) * kh + zh) * kw + zw) * cg
                            for i in 0..<cg { acc += Double(x[xs + i]) * Double(weight[ws + i]) }
                        }
                    }
                }
                y[yi] = Float(acc)
                yi += 1
            }
        } } } }
        applyActivation(activation, y, count: g.n * g.outPixels * cout)
    }
}

/// Reference `Op.pool1d` and `Op.pool3d`: x [N, spatial…, C] → y [N, out…, C] over windows with
/// strides and `SpatialPadding`. Padded elements are ignored (as `Op.pool2d`): max is over the
/// in-range elements; average is their sum divided by their count. A window with no in-range
/// element (possible only with large explicit padding) gives 0. Max propagates NaN. Average sums
/// in Double. Written once for three spatial axes (a 1-D op has D = H = 1).
final class ReferencePoolND: Kernel {
    let kind: PoolKind
    let g: WindowGeometry3D

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let a: PoolNDAttributes
        switch ctx.node.op {
        case let .pool1d(v), let .pool3d(v): a = v
        default: return nil
        }
        return ReferencePoolND(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: PoolNDAttributes) {
        kind = a.kind
        g = WindowGeometry3D(input: ctx.inputTypes[0].shape, output: ctx.outputTypes[0].shape, kernel: a.kernel,
                             strides: a.strides, dilations: a.kernel.map { _ in 1 }, padding: a.padding)
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0], c = g.c
        /// The in-range input range of window `o` on spatial axis `i`.
        func range(_ i: Int, _ o: Int) -> Range<Int> {
            let start = o * g.strides[i] - g.padBefore[i]
            let lo = Swift.max(start, 0), hi = Swift.min(start + g.kernel[i], g.inSize[i])
            return lo < hi ? lo..<hi : 0..<0
        }
        var yi = 0
        for b in 0..<g.n { for od in 0..<g.outSize[0] { for oh in 0..<g.outSize[1] { for ow in 0..<g.outSize[2] {
            let rd = range(0, od), rh = range(1, oh), rw = range(2, ow)
            let count = rd.count * rh.count * rw.count
            for ch in 0..<c {
                var result: Float = 0
                if count > 0 {
                    var m = -Float.infinity, sum = 0.0
                    for pd in rd { for ph in rh { for pw in rw {
                        let v = x[(((b * g.inSize[0] + pd) * g.inSize[1] + ph) * g.inSize[2] + pw) * c + ch]
                        if v > m || v.isNaN && !m.isNaN { m = v }
                        sum += Double(v)
                    } } }
                    result = kind == .max ? m : Float(sum / Double(count))
                }
                y[yi] = result
                yi += 1
            }
        } } } }
    }
}

/// Reference `Op.deconv3d` (transposed convolution, Keras `Conv3DTranspose`): x [N, D, H, W, Cin]
/// → y [N, D', H', W', Cout], weight [Cin, Cout/groups, kD, kH, kW], optional bias [Cout]. Every
/// input element scatters into the full (uncropped) output:
///
///     full[n, (i·s + k·d)…, g·Og + o] += x[n, i…, c] · weight[c, o, k…]
///
/// for c in group g (Cin/groups channels each), o in 0..<Og = Cout/groups; the output is the
/// window of `DeconvNDAttributes.outputSize` elements per axis starting at
/// `DeconvNDAttributes.cropOrigin` (elements beyond the full output are 0). Then + bias and the
/// fused activation. Computed as a gather (for each output element, the input elements that reach
/// it), as `ReferenceDeconv2D`; accumulates in Double.
final class ReferenceDeconv3D: Kernel {
    let n, cin, cout, groups: Int
    let inSize: [Int], outSize: [Int], kernel: [Int], strides: [Int], dilations: [Int], origin: [Int]
    let weight: [Float]  // [Cin, Cout/groups, kD, kH, kW]
    let bias: [Float]
    let activation: Activation?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        switch ctx.node.op {
        case let .deconv3d(a), let .deconv1d(a): return try ReferenceDeconv3D(ctx, a)
        default: return nil
        }
    }

    /// A 1-D node runs as a 3-D one with depth and height 1 (its weight [Cin, Cout/g, k] has the
    /// bytes of [Cin, Cout/g, 1, 1, k]).
    private init(_ ctx: KernelContext, _ a: DeconvNDAttributes) throws {
        let x = ctx.inputTypes[0].shape, y = ctx.outputTypes[0].shape
        let r = x.count - 2, lift = 3 - r  // spatial rank; axes of size 1 put in front
        func three(_ v: [Int], _ fill: Int) -> [Int] { Array(repeating: fill, count: lift) + v }
        n = x[0]; cin = x[r + 1]; cout = y[r + 1]; groups = a.groups
        inSize = three(Array(x[1...r]), 1); outSize = three(Array(y[1...r]), 1)
        kernel = three(a.kernel, 1); strides = three(a.strides, 1); dilations = three(a.dilations, 1)
        origin = three((0..<r).map { a.cropOrigin(x[1 + $0], axis: $0) }, 0)
        weight = try ctx.weightValues("weight")
        bias = ctx.optionalWeightValues("bias") ?? [Float](repeating: 0, count: cout)
        activation = a.activation
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let cg = cin / groups, og = cout / groups
        /// The input index reaching full-output position `f` through tap `k` on axis `i`, or nil.
        func source(_ f: Int, _ k: Int, _ i: Int) -> Int? {
            let t = f - k * dilations[i]
            guard t >= 0, t % strides[i] == 0, t / strides[i] < inSize[i] else { return nil }
            return t / strides[i]
        }
        var yi = 0
        for b in 0..<n { for od in 0..<outSize[0] { for oh in 0..<outSize[1] { for ow in 0..<outSize[2] {
            for oc in 0..<cout {
                let g = oc / og, o = oc % og
                var acc = Double(bias[oc])
                for kd in 0..<kernel[0] {
                    guard let id = source(od + origin[0], kd, 0) else { continue }
                    for kh in 0..<kernel[1] {
                        guard let ih = source(oh + origin[1], kh, 1) else { continue }
                        for kw in 0..<kernel[2] {
                            guard let iw = source(ow + origin[2], kw, 2) else { continue }
                            let xs = (((b * inSize[0] + id) * inSize[1] + ih) * inSize[2] + iw) * cin
                            for i in 0..<cg {
                                let c = g * cg + i
                                let wi = (((c * og + o) * kernel[0] + kd) * kernel[1] + kh) * kernel[2] + kw
                                acc += Double(x[xs + c]) * Double(weight[wi])
                            }
                        }
                    }
                }
                y[yi] = Float(acc)
                yi += 1
            }
        } } } }
        applyActivation(activation, y, count: n * outSize.reduce(1, *) * cout)
    }
}
