/// Weight layout helpers: Keras stores kernels channels-last (Conv2D HWIO), the IR wants the
/// Core ML layouts documented on each `Op` case.
enum WeightLayout {
    /// Transposes a row-major tensor: output axis i is input axis `perm[i]`.
    static func transpose(_ v: [Float], shape: [Int], perm: [Int]) -> [Float] {
        precondition(perm.count == shape.count && v.count == shape.reduce(1, *))
        let rank = shape.count
        var inStrides = [Int](repeating: 1, count: rank)
        for i in stride(from: rank - 2, through: 0, by: -1) { inStrides[i] = inStrides[i + 1] * shape[i + 1] }
        let outShape = perm.map { shape[$0] }
        let strides = perm.map { inStrides[$0] }
        var out = [Float](repeating: 0, count: v.count)
        var idx = [Int](repeating: 0, count: rank)
        var src = 0
        for o in 0..<v.count {
            out[o] = v[src]
            // Increment the output index (last axis fastest), updating the source offset.
            var a = rank - 1
            while a >= 0 {
                idx[a] += 1
                src += strides[a]
                if idx[a] < outShape[a] { break }
                src -= strides[a] * outShape[a]
                idx[a] = 0
                a -= 1
            }
        }
        return out
    }

    /// Keras Conv2D kernel (kH, kW, Cin/g, Cout) → IR conv2d weight [Cout, Cin/g, kH, kW].
    static func conv2DKernel(_ v: [Float], kerasShape s: [Int]) -> [Float] { transpose(v, shape: s, perm: [3, 2, 0, 1]) }

    /// Keras DepthwiseConv2D kernel (kH, kW, Cin, M) → IR grouped conv2d weight [Cin·M, 1, kH, kW]
    /// (output channel c·M + m, TensorFlow's depthwise order).
    static func depthwiseKernel(_ v: [Float], kerasShape s: [Int]) -> [Float] { transpose(v, shape: s, perm: [2, 3, 0, 1]) }

    /// Keras Conv2DTranspose kernel (kH, kW, Cout, Cin) → IR deconv2d weight [Cin, Cout, kH, kW].
    static func deconv2DKernel(_ v: [Float], kerasShape s: [Int]) -> [Float] { transpose(v, shape: s, perm: [3, 2, 0, 1]) }

    /// Keras Dense kernel (Cin, Cout) → IR dense weight [Cout, Cin].
    static func denseKernel(_ v: [Float], kerasShape s: [Int]) -> [Float] { transpose(v, shape: s, perm: [1, 0]) }
}
