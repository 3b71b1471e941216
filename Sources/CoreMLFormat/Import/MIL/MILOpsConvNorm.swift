// MIL conv, conv_transpose (refused), pooling, linear, matmul, batch_norm, layer_norm,
// instance_norm, l2_norm, softmax. MIL's [N, C, spatial…] tensors run through the IR's
// channels-last conv and pooling ops between transposes.
import MLGraph

enum MILConvNormOps {
    /// MIL padding (`pad_type`, `pad`) for `d` spatial axes: (before, after) per axis, or nil for "same".
    static func padding(_ c: MILOpContext, spatial d: Int, input: [Int], kernel: [Int], strides: [Int], dilations: [Int])
        throws -> SpatialPadding {
        let type = try c.string("pad_type", default: "valid")
        switch type {
        case "valid": return .valid
        case "same": return .same
        case "custom":
            let pad = try c.ints("pad") ?? [Int](repeating: 0, count: 2 * d)
            guard pad.count == 2 * d, pad.allSatisfy({ $0 >= 0 }) else { throw LayerImportFailure("has pad \(pad); expected \(2 * d) non-negative values") }
            return .explicit(before: (0..<d).map { pad[2 * $0] }, after: (0..<d).map { pad[2 * $0 + 1] })
        case "same_lower":
            guard strides.count == d, dilations.count == d, kernel.count == d, input.count == d, strides.allSatisfy({ $0 > 0 }) else {
                throw LayerImportFailure("has strides \(strides); expected \(d) positive values")
            }
            // As "same", the odd element going before instead of after.
            var before: [Int] = [], after: [Int] = []
            for i in 0..<d {
                let out = (input[i] + strides[i] - 1) / strides[i]
                let eff = (kernel[i] - 1) * dilations[i] + 1
                let total = max((out - 1) * strides[i] + eff - input[i], 0)
                after.append(total / 2); before.append(total - total / 2)
            }
            return .explicit(before: before, after: after)
        default:
            throw LayerImportFailure("has pad_type '\(type)'; expected valid, same, same_lower or custom")
        }
    }

    static func conv(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let xs = c.shape(x)
        let d = xs.count - 2
        guard (1...3).contains(d) else { throw LayerImportFailure("convolves a rank-\(xs.count) input; mlconv supports 1-D, 2-D and 3-D conv") }
        guard let w = try c.constant("weight") else { throw LayerImportFailure("has no weight") }
        guard w.shape.count == d + 2 else { throw LayerImportFailure("has a weight of shape \(w.shape) for \(d)-D convolution") }
        let cout = w.shape[0]
        let kernel = Array(w.shape[2...])
        let strides = try c.ints("strides") ?? [Int](repeating: 1, count: d)
        let dilations = try c.ints("dilations") ?? [Int](repeating: 1, count: d)
        let groups = try c.int("groups", default: 1)
        guard strides.count == d, dilations.count == d else { throw LayerImportFailure("has strides \(strides) / dilations \(dilations) for \(d) spatial axes") }
        let pad = try padding(c, spatial: d, input: Array(xs[2...]), kernel: kernel, strides: strides, dilations: dilations)
        var weights = ["weight": try w.constantTensor()]
        if let bias = try c.constant("bias") { weights["bias"] = try bias.constantTensor(shape: [cout]) }
        let xl = try c.toChannelsLast(x)
        let op: Op
        if d == 2 {
            let p = pad.paddingMode2D
            op = .conv2d(Conv2DAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: p, groups: groups, outputChannels: cout))
        } else {
            let a = ConvNDAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: pad, groups: groups, outputChannels: cout)
            op = d == 1 ? .conv1d(a) : .conv3d(a)
        }
        let y = try c.helper("channels_last", op, [xl], weights: weights)
        return [try c.fromChannelsLast(y)]
    }

    static func pool(_ kind: PoolKind) -> MILOpMapper {
        { c in
            let x = try c.tensor("x")
            let xs = c.shape(x)
            let d = xs.count - 2
            guard (1...3).contains(d) else { throw LayerImportFailure("pools a rank-\(xs.count) input") }
            guard let kernel = try c.ints("kernel_sizes"), kernel.count == d else { throw LayerImportFailure("has no kernel_sizes for \(d) spatial axes") }
            let strides = try c.ints("strides") ?? [Int](repeating: 1, count: d)
            guard strides.count == d, strides.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("has strides \(strides); expected \(d) positive values") }
            let pad = try padding(c, spatial: d, input: Array(xs[2...]), kernel: kernel, strides: strides,
                                  dilations: [Int](repeating: 1, count: d))
            if kind == .average, !(try c.bool("exclude_padding_from_average", default: false)) {
                let padded: Bool
                switch pad {
                case .valid: padded = false
                case let .explicit(before, after): padded = (before + after).contains { $0 != 0 }
                case .same: padded = zip(xs[2...], zip(kernel, strides)).contains { n, ks in n % ks.1 != 0 || ks.0 > ks.1 }
                }
                if padded {
                    throw LayerImportFailure("averages padding elements (exclude_padding_from_average false with padding); mlconv's average "
                        + "pooling excludes padding")
                }
            }
            let xl = try c.toChannelsLast(x)
            let op: Op
            if d == 2 {
                let p = pad.paddingMode2D
                op = .pool2d(Pool2DAttributes(kind: kind, kernel: kernel, strides: strides, padding: p))
            } else {
                let a = PoolNDAttributes(kind: kind, kernel: kernel, strides: strides, padding: pad)
                op = d == 1 ? .pool1d(a) : .pool3d(a)
            }
            let y = try c.helper("channels_last", op, [xl])
            return [try c.fromChannelsLast(y)]
        }
    }

    static var mappers: [String: MILOpMapper] {
        var m: [String: MILOpMapper] = [:]
        m["conv"] = conv
        m["max_pool"] = pool(.max)
        m["avg_pool"] = pool(.average)
        m["linear"] = { c in
            guard let w = try c.constant("weight"), w.shape.count == 2 else { throw LayerImportFailure("needs a constant rank-2 weight") }
            var weights = ["weight": try w.constantTensor()]
            if let bias = try c.constant("bias") { weights["bias"] = try bias.constantTensor(shape: [w.shape[0]]) }
            return [try c.emit(.dense(DenseAttributes(outputChannels: w.shape[0])), [try c.tensor("x")], weights: weights)]
        }
        m["matmul"] = { c in
            let a = MatMulAttributes(transposeX: try c.bool("transpose_x", default: false), transposeY: try c.bool("transpose_y", default: false))
            return [try c.emit(.matmul(a), [try c.tensor("x"), try c.tensor("y")])]
        }
        m["batch_norm"] = { c in
            let x = try c.tensor("x")
            guard c.rank(x) >= 2 else { throw LayerImportFailure("normalises a rank-\(c.rank(x)) input; expected [N, C, …]") }
            let ch = c.shape(x)[1]
            func weight(_ p: String, _ fill: Float) throws -> ConstantTensor {
                try c.constant(p)?.constantTensor(shape: [ch]) ?? ConstantTensor(shape: [ch], floats: [Float](repeating: fill, count: ch))
            }
            let weights = ["mean": try weight("mean", 0), "variance": try weight("variance", 1), "gamma": try weight("gamma", 1),
                           "beta": try weight("beta", 0)]
            return [try c.emit(.batchNorm(BatchNormAttributes(axis: 1, epsilon: try c.float("epsilon", default: 1e-5))), [x], weights: weights)]
        }
        m["layer_norm"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            let axes = try (try c.ints("axes") ?? Array(0..<r)).map { try c.axis($0, rank: r) }
            var weights: [String: ConstantTensor] = [:]
            let normShape = axes.sorted().map { c.shape(x)[$0] }
            if let g = try c.constant("gamma") { weights["gamma"] = try g.constantTensor(shape: normShape) }
            if let be = try c.constant("beta") { weights["beta"] = try be.constantTensor(shape: normShape) }
            return [try c.emit(.layerNorm(LayerNormAttributes(axes: axes, epsilon: try c.float("epsilon", default: 1e-5))), [x], weights: weights)]
        }
        m["instance_norm"] = { c in
            let x = try c.tensor("x")
            guard c.rank(x) >= 3 else { throw LayerImportFailure("normalises a rank-\(c.rank(x)) input; expected [N, C, spatial…]") }
            let ch = c.shape(x)[1]
            var weights: [String: ConstantTensor] = [:]
            if let g = try c.constant("gamma") { weights["gamma"] = try g.constantTensor(shape: [ch]) }
            if let be = try c.constant("beta") { weights["beta"] = try be.constantTensor(shape: [ch]) }
            let y = try c.helper("channels_last", .instanceNorm(epsilon: try c.float("epsilon", default: 1e-5)), [try c.toChannelsLast(x)], weights: weights)
            return [try c.fromChannelsLast(y)]
        }
        m["l2_norm"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            let axes = try (try c.ints("axes") ?? Array(max(0, r - 3)..<r)).map { try c.axis($0, rank: r) }
            return [try c.emit(.l2Norm(L2NormAttributes(axes: axes, epsilon: try c.float("epsilon", default: 1e-6))), [x])]
        }
        m["softmax"] = { c in [try c.emit(.softmax(axis: try c.int("axis", default: -1)), [try c.tensor("x")])] }
        return m
    }
}
