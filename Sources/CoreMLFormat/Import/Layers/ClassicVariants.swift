// Configurations of classic (v1) layers that need more than one IR op: bilinear resampling on
// any grid (resizeBilinear in every SamplingMode and to any size, upsample by fractional
// factors), dot with cosineSimilarity, reduce ARGMAX and LOGSUM, channel slices with a stride,
// L2 pooling. All work on the rank-5 importer's NHWC [N, H, W, C] / vector [N, C] blobs, so
// they serve both shape mappings.
import MLGraph

extension LayerImporter {
    // MARK: Bilinear resampling

    /// Grid points of NeuralNetwork.proto's `SamplingMode` for an axis of `x` input and `n` output
    /// samples (numpy.linspace forms of the proto comment): STRICT_ALIGN_ENDPOINTS linspace(0, X−1);
    /// ALIGN_ENDPOINTS the same, (X−1)/2 when N = 1; UPSAMPLE linspace(0, X − X/N) clamped to X−1;
    /// ROI_ALIGN spacing max(1, X−1)/N from half a spacing, clamped to X−1.
    static func samplingGrid(_ mode: Spec.SamplingMode.Method, x: Int, n: Int) throws -> [Double] {
        let xd = Double(x), nd = Double(n)
        func linspace(_ a: Double, _ b: Double) -> [Double] {
            n == 1 ? [a] : (0..<n).map { a + (b - a) * Double($0) / (nd - 1) }
        }
        switch mode {
        case .strictAlignEndpointsMode: return linspace(0, xd - 1)
        case .alignEndpointsMode: return n == 1 ? [(xd - 1) / 2] : linspace(0, xd - 1)
        case .upsampleMode: return linspace(0, xd - xd / nd).map { Swift.min(xd - 1, $0) }
        case .roiAlignMode:
            let spacing = Swift.max(1, xd - 1) / nd, start = 0.5 * spacing
            return linspace(start, start + (nd - 1) * spacing).map { Swift.min(xd - 1, $0) }
        default: throw LayerImportFailure("sampling mode \(mode.rawValue) is unknown")
        }
    }

    /// Grid points of UpsampleLayerParams' LinearUpsampleMode (proto comment), clamped to [0, X−1].
    static func upsampleGrid(_ mode: Spec.UpsampleLayerParams.LinearUpsampleMode, x: Int, n: Int) -> [Double] {
        let xd = Double(x), nd = Double(n)
        return (0..<n).map { i -> Double in
            let di = Double(i)
            let g: Double
            switch mode {
            case .alignCornersTrue: g = n == 1 ? 0 : di * (xd - 1) / (nd - 1)
            case .alignCornersFalse: g = di * (xd / nd) + 0.5 * (xd / nd) - 0.5
            default: g = n == 1 ? 0 : di * ((xd - xd / nd) / (nd - 1))
            }
            return Swift.min(xd - 1, Swift.max(0, g))
        }
    }

    /// The [N, X] matrix of linear interpolation at `grid` (each row: weight 1 − f at ⌊g⌋ and f at
    /// ⌊g⌋ + 1, clamped to X − 1).
    static func interpolationMatrix(_ grid: [Double], x: Int) -> [Float] {
        var m = [Float](repeating: 0, count: grid.count * x)
        for (i, g) in grid.enumerated() {
            let i0 = Swift.min(x - 1, Swift.max(0, Int(g.rounded(.down))))
            let i1 = Swift.min(i0 + 1, x - 1)
            let f = g - Double(i0)
            m[i * x + i0] += Float(1 - f)
            m[i * x + i1] += Float(f)
        }
        return m
    }

    /// Bilinear resampling of the NHWC blob `x0` at grid points `gridH` × `gridW` (separable: a
    /// matmul by the interpolation matrix along W, then along H, between transposes).
    func bilinearResample(_ x0: String, gridH: [Double], gridW: [Double], name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let d = b.chw(x)
        let (nh, nw) = (gridH.count, gridW.count)
        guard nh > 0, nw > 0, try Checked.product([nh, d.h], "H interpolation") > 0, try Checked.product([nw, d.w], "W interpolation") > 0 else {
            throw LayerImportFailure("resampling to [\(nh), \(nw)] is empty")
        }
        let aw = ConstantTensor(shape: [nw, d.w], floats: Self.interpolationMatrix(gridW, x: d.w))
        let ah = ConstantTensor(shape: [nh, d.h], floats: Self.interpolationMatrix(gridH, x: d.h))
        var t = try b.emit(name + "__w_last", .transpose(perm: [0, 1, 3, 2]), [x])  // [N, H, C, W]
        t = try b.emit(name + "__resample_w", .matmul(MatMulAttributes(transposeY: true)), [t], weights: ["y": aw])  // [N, H, C, W']
        t = try b.emit(name + "__h_last", .transpose(perm: [0, 3, 2, 1]), [t])  // [N, W', C, H]
        t = try b.emit(name + "__resample_h", .matmul(MatMulAttributes(transposeY: true)), [t], weights: ["y": ah])  // [N, W', C, H']
        return try b.emit(name, .transpose(perm: [0, 3, 1, 2]), [t], output: out)  // [N, H', W', C]
    }

    // MARK: dot with cosineSimilarity

    /// (a·b) / (‖a‖·‖b‖) of two [C] vectors (DotProductLayerParams).
    func cosineSimilarity(_ ins: [String], name: String, out: String) throws -> String {
        let v = try ins.enumerated().map { try b.toVector($1, base: "\(name)__in\($0)") }
        let dot = try b.emit(name + "__dot", .matmul(MatMulAttributes(transposeY: true)), v)
        let norms = try v.enumerated().map {
            try b.emit("\(name)__sumsq\($0)", .reduce(ReduceAttributes(function: .sumSquare, axes: [1], keepDims: true)), [$1])
        }
        let prod = try b.emit(name + "__norms", .elementwise(.multiply), norms)
        let inv = try b.emit(name + "__rnorm", .unary(UnaryAttributes(.rsqrt)), [prod])
        return try b.emit(name, .elementwise(.multiply), [dot, inv], output: out)
    }

    // MARK: reduce ARGMAX / LOGSUM

    /// reduce ARGMAX (index along the one reduced axis, as float, the axis kept with size 1) and
    /// LOGSUM (Σ log(x + ε)); other modes go to `reduce`.
    func classicReduceExtra(_ p: Spec.ReduceLayerParams, _ x0: String, name: String, out: String) throws -> String? {
        guard let axes = Self.reduceAxes(p.axis) else { return nil }
        switch p.mode {
        case .argmax:
            guard axes.count == 1 else { throw LayerImportFailure("reduce ARGMAX takes a single axis (C, H or W), found \(p.axis.rawValue)") }
            let x = try b.toNHWC(x0, base: name)
            let i = try b.emit(name + "__argmax", .argmax(ArgReduceAttributes(axis: axes[0], keepDims: true)), [x])
            return try b.emit(name, .cast(to: .float32), [i], output: out)
        case .logsum:
            let x = try b.toNHWC(x0, base: name)
            let eps = p.epsilon == 0 ? Float(1e-6) : p.epsilon
            let l = try b.emit(name + "__log", .unary(UnaryAttributes(.log, epsilon: eps)), [x])
            return try b.emit(name, .reduce(ReduceAttributes(function: .sum, axes: axes, keepDims: true)), [l], output: out)
        default: return nil
        }
    }

    // MARK: strided channel slice

    /// Every stride-th channel of [start, end) (SliceLayerParams on C with stride > 1).
    func stridedChannelSlice(_ x0: String, start: Int, end: Int, stride: Int, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let a = SliceByIndexAttributes(begin: [0, 0, 0, start], end: [0, 0, 0, end], stride: [1, 1, 1, stride],
                                       beginMask: [true, true, true, false], endMask: [true, true, true, false])
        return try b.emit(name, .sliceByIndex(a), [x], output: out)
    }

    // MARK: L2 pooling

    /// L2 pooling: sqrt(Σ x²) over each window (padding counts as zeros): x² → zero padding →
    /// valid average pooling × window size → sqrt.
    func l2Pooling(_ x: String, kernel k: [Int], strides s: [Int], padding: PaddingMode, global: Bool, name: String, out: String) throws -> String {
        let d = b.chw(x)
        let sq = try b.emit(name + "__square", .unary(UnaryAttributes(.power, alpha: 2)), [x])
        if global {
            let m = try b.emit(name + "__mean", .globalPool2d(kind: .average, keepDims: false), [sq])
            let sum = try b.emit(name + "__sum", .activation(.linear(alpha: Float(d.h * d.w), beta: 0)), [m])
            return try b.emit(name, .unary(UnaryAttributes(.sqrt)), [sum], output: out)
        }
        var input = sq
        let r = padding.resolve(inH: d.h, inW: d.w, kernel: (k[0], k[1]), stride: (s[0], s[1]), dilation: (1, 1))
        if r != (0, 0, 0, 0) {
            input = try b.emit(name + "__pad", .pad(PadAttributes(mode: .constant, pads: [[0, 0], [r.top, r.bottom], [r.left, r.right], [0, 0]])), [sq])
        }
        let m = try b.emit(name + "__mean", .pool2d(Pool2DAttributes(kind: .average, kernel: k, strides: s, padding: .valid)), [input])
        let sum = try b.emit(name + "__sum", .activation(.linear(alpha: Float(k[0] * k[1]), beta: 0)), [m])
        return try b.emit(name, .unary(UnaryAttributes(.sqrt)), [sum], output: out)
    }
}
