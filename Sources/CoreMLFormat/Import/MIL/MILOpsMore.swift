// More MIL ops: conv_transpose, resizing (upsample_bilinear, resize_bilinear,
// resize_nearest_neighbor), prelu, clamped_relu, softplus_parametric, threshold,
// local_response_norm, reduce_log_sum, einsum, argsort, topk, cumsum, one_hot, range_1d / fill /
// fill_like (constant or shaped), flatten2d, reverse, reverse_sequence, sliding_windows,
// band_part, crop, scatter, scatter_along_axis, scatter_nd, gather_nd.
import MLGraph

enum MILMoreOps {
    static func convTranspose(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let xs = c.shape(x)
        let d = xs.count - 2
        guard (1...3).contains(d) else { throw LayerImportFailure("transposes a rank-\(xs.count) convolution") }
        let w = try c.requiredConstant("weight")
        guard w.shape.count == d + 2 else { throw LayerImportFailure("has a weight of shape \(w.shape)") }
        let groups = try c.int("groups", default: 1)
        let cout = w.shape[1] * groups
        let kernel = Array(w.shape[2...])
        let strides = try c.ints("strides") ?? [Int](repeating: 1, count: d)
        let dilations = try c.ints("dilations") ?? [Int](repeating: 1, count: d)
        let type = try c.string("pad_type", default: "valid")
        var pad: SpatialPadding
        switch type {
        case "valid": pad = .valid
        case "same": pad = .same
        case "custom":
            let p = try c.ints("pad") ?? [Int](repeating: 0, count: 2 * d)
            guard p.count == 2 * d else { throw LayerImportFailure("has pad \(p)") }
            pad = .explicit(before: (0..<d).map { p[2 * $0] }, after: (0..<d).map { p[2 * $0 + 1] })
        default: throw LayerImportFailure("has pad_type '\(type)'")
        }
        // An output_shape larger than the computed size is output padding at the end.
        var outPad = [Int](repeating: 0, count: d)
        if let declared = try c.outputType()?.shape, declared.count == d + 2, declared.allSatisfy({ $0 > 0 }) {
            for i in 0..<d {
                let full = (xs[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
                let computed: Int
                switch pad {
                case .valid: computed = full
                case .same: computed = xs[2 + i] * strides[i]
                case let .explicit(b, a): computed = full - b[i] - a[i]
                }
                outPad[i] = max(0, declared[2 + i] - computed)
            }
        }
        var weights = ["weight": try w.constantTensor()]
        if let bias = try c.constant("bias") { weights["bias"] = try bias.constantTensor(shape: [cout]) }
        let op: Op
        if d == 2 {
            let p = pad.paddingMode2D
            op = .deconv2d(Deconv2DAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: p, outputPadding: outPad,
                                              groups: groups, outputChannels: cout))
        } else {
            let a = DeconvNDAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: pad, outputPadding: outPad,
                                       groups: groups, outputChannels: cout)
            op = d == 1 ? .deconv1d(a) : .deconv3d(a)
        }
        let y = try c.helper("channels_last", op, [try c.toChannelsLast(x)], weights: weights)
        return [try c.fromChannelsLast(y)]
    }

    static func resize(_ c: MILOpContext, method: ResizeMethod, mode: ResizeSamplingMode, size: [Int]?, scale: [Float]?) throws -> [MILValue] {
        let x = try c.tensor("x")
        guard c.rank(x) == 4 else { throw LayerImportFailure("resizes a rank-\(c.rank(x)) input; mlconv supports [N, C, H, W]") }
        let y = try c.helper("channels_last", .resize(ResizeAttributes(method: method, samplingMode: mode, size: size, scale: scale)),
                             [try c.toChannelsLast(x)])
        return [try c.fromChannelsLast(y)]
    }

    static func samplingMode(_ name: String) throws -> ResizeSamplingMode {
        switch name {
        case "DEFAULT": return .asymmetric
        case "STRICT_ALIGN_CORNERS": return .strictAlignCorners
        case "ALIGN_CORNERS": return .alignCorners
        case "UNALIGN_CORNERS": return .halfPixel
        default: throw LayerImportFailure("has sampling_mode '\(name)'; mlconv supports DEFAULT, STRICT_ALIGN_CORNERS, ALIGN_CORNERS, UNALIGN_CORNERS")
        }
    }

    static func scatterMode(_ c: MILOpContext) throws -> ScatterMode {
        let m = try c.string("mode", default: "add")
        guard let mode = ScatterMode(rawValue: m) else { throw LayerImportFailure("has scatter mode '\(m)'") }
        return mode
    }

    static var mappers: [String: MILOpMapper] {
        var m: [String: MILOpMapper] = [:]
        m["conv_transpose"] = convTranspose
        m["upsample_bilinear"] = { c in
            let sh = try c.float("scale_factor_height", default: 1), sw = try c.float("scale_factor_width", default: 1)
            let mode: ResizeSamplingMode = try c.bool("align_corners", default: true) ? .alignCorners : .halfPixel
            return try resize(c, method: .bilinear, mode: mode, size: nil, scale: [sh, sw])
        }
        m["resize_bilinear"] = { c in
            let size = [try c.int("target_size_height", default: 1), try c.int("target_size_width", default: 1)]
            return try resize(c, method: .bilinear, mode: try samplingMode(try c.string("sampling_mode", default: "DEFAULT")), size: size, scale: nil)
        }
        m["resize_nearest_neighbor"] = { c in
            let size = [try c.int("target_size_height", default: 1), try c.int("target_size_width", default: 1)]
            return try resize(c, method: .nearest, mode: .asymmetric, size: size, scale: nil)
        }
        m["prelu"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            guard r >= 2 else { throw LayerImportFailure("has a rank-\(r) input; prelu needs [N, C, …]") }
            let alpha = try c.requiredConstant("alpha")
            let ch = c.shape(x)[1]
            guard alpha.elementCount == ch else { throw LayerImportFailure("has \(alpha.elementCount) alphas for \(ch) channels") }
            return [try c.emit(.prelu, [x], weights: ["alpha": try alpha.constantTensor(shape: [ch] + [Int](repeating: 1, count: r - 2))])]
        }
        m["clamped_relu"] = { c in
            [try c.emit(.activation(.clippedReLU(maxValue: try c.float("beta", default: 6), negativeSlope: try c.float("alpha", default: 0), threshold: 0)),
                        [try c.tensor("x")])]
        }
        m["softplus_parametric"] = { c in
            let a = try c.requiredConstant("alpha").floats(), be = try c.requiredConstant("beta").floats()
            guard let a0 = a.first, let b0 = be.first, a.allSatisfy({ $0 == a0 }), be.allSatisfy({ $0 == b0 }) else {
                throw LayerImportFailure("has per-channel alpha / beta, which mlconv's parametric softplus does not support")
            }
            return [try c.emit(.activation(.parametricSoftplus(alpha: a0, beta: b0)), [try c.tensor("x")])]
        }
        m["threshold"] = { c in [try c.emit(.unary(UnaryAttributes(.threshold, alpha: try c.float("alpha"))), [try c.tensor("x")])] }
        m["local_response_norm"] = { c in
            let x = try c.tensor("x")
            let a = LocalResponseNormAttributes(size: try c.int("size"), alpha: try c.float("alpha", default: 1e-4),
                                                beta: try c.float("beta", default: 0.75), k: try c.float("k", default: 1))
            let y = try c.helper("channels_last", .localResponseNorm(a), [try c.toChannelsLast(x)])
            return [try c.fromChannelsLast(y)]
        }
        m["reduce_log_sum"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            let axes = try (try c.ints("axes") ?? Array(0..<r)).map { try c.axis($0, rank: r) }
            let s = try c.helper("sum", .reduce(ReduceAttributes(function: .sum, axes: axes, keepDims: try c.bool("keep_dims", default: false))), [x])
            return [try c.emit(.unary(UnaryAttributes(.log, epsilon: 0)), [s])]
        }
        m["einsum"] = { c in [try c.emit(.einsum(equation: try c.string("equation")), try c.tensors("values"))] }
        m["argsort"] = { c in
            [try c.emit(.argsort(axis: try c.int("axis", default: -1), ascending: try c.bool("ascending", default: false)), [try c.tensor("x")])]
        }
        m["topk"] = { c in
            if !(try c.bool("sort", default: true)) { throw LayerImportFailure("asks for unsorted top-k, which mlconv does not support") }
            let a = TopKAttributes(k: try c.int("k", default: 1), axis: try c.int("axis", default: -1), ascending: try c.bool("ascending", default: false))
            let outs = try c.b.emitMulti(c.name, .topk(a), [try c.tensor("x")], outputs: [c.outputName(0), c.name + "__indices"])
            if c.op.outputs.count == 1 { return [.tensor(outs[0])] }
            return [.tensor(outs[0]), try c.emit(.identity, [outs[1]], output: 1)]
        }
        m["cumsum"] = { c in
            let a = CumsumAttributes(axis: try c.int("axis", default: 0), exclusive: try c.bool("exclusive", default: false),
                                     reverse: try c.bool("reverse", default: false))
            return [try c.emit(.cumsum(a), [try c.tensor("x")])]
        }
        m["one_hot"] = { c in
            let a = OneHotAttributes(depth: try c.int("one_hot_vector_size"), axis: try c.int("axis", default: -1),
                                     onValue: try c.float("on_value", default: 1), offValue: try c.float("off_value", default: 0))
            return [try c.emit(.oneHot(a), [try c.tensor("indices")])]
        }
        m["range_1d"] = { c in
            let start = try c.requiredConstant("start").doubles(), end = try c.requiredConstant("end").doubles(),
                step = try c.requiredConstant("step").doubles()
            guard let s = start.first, let e = end.first, let st = step.first, st != 0 else { throw LayerImportFailure("has a zero or missing step") }
            let count = ((e - s) / st).rounded(.up)
            guard count.isFinite, count <= Double(TensorType.maxElementCount) else { throw LayerImportFailure("makes a range of \(count) values") }
            let n = max(0, Int(count))
            let t = try c.outputType()?.dataType ?? .int32
            return [.constant(MILConst(shape: [n], dataType: t, numbers: (0..<n).map { s + Double($0) * st }))]
        }
        m["fill"] = { c in
            guard let shape = try c.ints("shape") else { throw LayerImportFailure("needs a shape known at import") }
            let n = try Checked.product(shape, "fill shape")
            let v = try c.requiredConstant("value")
            return [.constant(MILConst(shape: shape, dataType: v.dataType, numbers: [Double](repeating: v.doubles().first ?? 0, count: n)))]
        }
        m["fill_like"] = { c in
            let ref = try c.tensor("ref_tensor")
            let s = c.shape(ref)
            guard s.allSatisfy({ $0 >= 0 }) else { throw LayerImportFailure("fills a shape known only at run time") }
            let v = try c.float("value", default: 0)
            return [.constant(MILConst(shape: s, dataType: try c.outputType()?.dataType ?? .float32,
                                       numbers: [Double](repeating: Double(v), count: s.reduce(1, *))))]
        }
        m["flatten2d"] = { c in
            let x = try c.tensor("x")
            let s = c.shape(x)
            let axis = try c.axis(try c.int("axis", default: 1), rank: s.count + 1)
            return [try c.emit(.reshapeND(shape: [s.prefix(axis).reduce(1, *), s.dropFirst(axis).reduce(1, *)]), [x])]
        }
        m["reverse"] = { c in [try c.emit(.reverse(axes: try c.ints("axes") ?? []), [try c.tensor("x")])] }
        m["reverse_sequence"] = { c in
            [try c.emit(.reverseSequence(seqAxis: try c.int("seq_axis", default: 0), batchAxis: try c.int("batch_axis", default: 0)),
                        [try c.tensor("x"), try c.tensor("lengths")])]
        }
        m["sliding_windows"] = { c in
            [try c.emit(.slidingWindows(SlidingWindowsAttributes(axis: try c.int("axis"), size: try c.int("size"), stride: try c.int("stride", default: 1))),
                        [try c.tensor("x")])]
        }
        m["band_part"] = { c in
            [try c.emit(.bandPart(lower: try c.int("lower", default: -1), upper: try c.int("upper", default: -1)), [try c.tensor("x")])]
        }
        m["crop"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            guard r >= 2, let h = try c.ints("crop_height"), let w = try c.ints("crop_width"), h.count == 2, w.count == 2 else {
                throw LayerImportFailure("needs crop_height and crop_width of two values each")
            }
            return [try c.emit(.crop(crops: [[Int]](repeating: [0, 0], count: r - 2) + [h, w]), [x])]
        }
        m["scatter"] = { c in
            [try c.emit(.scatter(ScatterAttributes(axis: try c.int("axis", default: 0), mode: try scatterMode(c))),
                        [try c.tensor("data"), try c.tensor("indices"), try c.tensor("updates")])]
        }
        m["scatter_along_axis"] = { c in
            [try c.emit(.scatterAlongAxis(ScatterAttributes(axis: try c.int("axis", default: 0), mode: try scatterMode(c))),
                        [try c.tensor("data"), try c.tensor("indices"), try c.tensor("updates")])]
        }
        m["scatter_nd"] = { c in
            [try c.emit(.scatterND(mode: try scatterMode(c)), [try c.tensor("data"), try c.tensor("indices"), try c.tensor("updates")])]
        }
        return m
    }
}
