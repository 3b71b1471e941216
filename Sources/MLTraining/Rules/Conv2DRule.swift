// convolution (IR `conv2d`, NHWC activations, weights [Cout, Cin/groups, kH, kW]).
import MLGraph

/// Forward y[n, i, j, o] = b[o] + Σ_{c, p, q} x[n, i·sH + p·dH − top, j·sW + q·dW − left, g·Cg + c]·W[o, c, p, q]
/// (zero outside the input; g the group of o). Backward scatters dL/dy back along the same
/// index map for dL/dx and correlates dL/dy with x for dL/dW; dL/db = Σ dL/dy.
enum Conv2DRule: LayerRule {
    struct Geometry {
        var n, h, w, cin, cout, kh, kw, sh, sw, dh, dw, top, left, ho, wo, groups: Int
        var cinG: Int { cin / groups }
        var coutG: Int { cout / groups }
    }

    static func geometry(_ node: Node, _ x: TrainTensor, _ weights: [String: [Float]]) throws -> (Geometry, [Float]) {
        guard case let .conv2d(a) = node.op else { throw RuleFailure("is not a conv2d node") }
        guard a.residual == nil else {  // MARK: residual add fusion (issue 12)
            throw RuleFailure("has a fused residual add, which the training engine does not differentiate")
        }
        guard a.activation == nil || a.activation == .identity else {
            throw RuleFailure("has a fused activation, which the training engine does not differentiate")
        }
        guard x.shape.count == 4 else { throw RuleFailure("expects an NHWC input, found shape \(x.shape)") }
        guard let W = weights["weight"] else { throw RuleFailure("has no weight") }
        let (n, h, w, cin) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let groups = max(1, a.groups)
        let (kh, kw) = (a.kernel[0], a.kernel[1])
        let (sh, sw) = (a.strides[0], a.strides[1])
        let (dh, dw) = (a.dilations[0], a.dilations[1])
        guard cin % groups == 0, a.outputChannels % groups == 0 else {
            throw RuleFailure("channels \(cin) → \(a.outputChannels) are not divisible by \(groups) groups")
        }
        guard W.count == a.outputChannels * (cin / groups) * kh * kw else {
            throw RuleFailure("weight has \(W.count) values; [\(a.outputChannels), \(cin / groups), \(kh), \(kw)] expected")
        }
        let p = a.padding.resolve(inH: h, inW: w, kernel: (kh, kw), stride: (sh, sw), dilation: (dh, dw))
        let ho = (h + p.top + p.bottom - ((kh - 1) * dh + 1)) / sh + 1
        let wo = (w + p.left + p.right - ((kw - 1) * dw + 1)) / sw + 1
        guard ho > 0, wo > 0 else { throw RuleFailure("the output would be empty") }
        return (Geometry(n: n, h: h, w: w, cin: cin, cout: a.outputChannels, kh: kh, kw: kw, sh: sh, sw: sw, dh: dh, dw: dw,
                         top: p.top, left: p.left, ho: ho, wo: wo, groups: groups), W)
    }

    /// Calls `body(outIndex, inIndex, weightIndex)` for every product term of the convolution.
    @inline(__always)
    static func forEachTerm(_ g: Geometry, _ body: (Int, Int, Int) -> Void) {
        for n in 0..<g.n {
            for i in 0..<g.ho {
                for j in 0..<g.wo {
                    let outBase = ((n * g.ho + i) * g.wo + j) * g.cout
                    for p in 0..<g.kh {
                        let y = i * g.sh + p * g.dh - g.top
                        if y < 0 || y >= g.h { continue }
                        for q in 0..<g.kw {
                            let xx = j * g.sw + q * g.dw - g.left
                            if xx < 0 || xx >= g.w { continue }
                            let inBase = ((n * g.h + y) * g.w + xx) * g.cin
                            for o in 0..<g.cout {
                                let grp = o / g.coutG
                                for c in 0..<g.cinG {
                                    body(outBase + o, inBase + grp * g.cinG + c, ((o * g.cinG + c) * g.kh + p) * g.kw + q)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let (g, W) = try geometry(node, x, weights)
        var y = [Float](repeating: 0, count: g.n * g.ho * g.wo * g.cout)
        if let b = weights["bias"], b.count == g.cout {
            for k in 0..<(g.n * g.ho * g.wo) { for o in 0..<g.cout { y[k * g.cout + o] = b[o] } }
        }
        x.values.withUnsafeBufferPointer { xv in
            W.withUnsafeBufferPointer { wv in
                y.withUnsafeMutableBufferPointer { yv in
                    forEachTerm(g) { oi, ii, wi in yv[oi] += xv[ii] * wv[wi] }
                }
            }
        }
        return TrainTensor(shape: [g.n, g.ho, g.wo, g.cout], values: y)
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        let (g, W) = try geometry(node, x, weights)
        var result = Gradients(inputs: [nil])
        if needInputs.first == true {
            var gx = [Float](repeating: 0, count: x.count)
            gy.values.withUnsafeBufferPointer { gv in
                W.withUnsafeBufferPointer { wv in
                    gx.withUnsafeMutableBufferPointer { xv in
                        forEachTerm(g) { oi, ii, wi in xv[ii] += gv[oi] * wv[wi] }
                    }
                }
            }
            result.inputs[0] = TrainTensor(shape: x.shape, values: gx)
        }
        if needWeights {
            var gW = [Float](repeating: 0, count: W.count)
            gy.values.withUnsafeBufferPointer { gv in
                x.values.withUnsafeBufferPointer { xv in
                    gW.withUnsafeMutableBufferPointer { wv in
                        forEachTerm(g) { oi, ii, wi in wv[wi] += gv[oi] * xv[ii] }
                    }
                }
            }
            result.weights["weight"] = gW
            if weights["bias"] != nil {
                var gb = [Float](repeating: 0, count: g.cout)
                for k in 0..<(g.n * g.ho * g.wo) { for o in 0..<g.cout { gb[o] += gy.values[k * g.cout + o] } }
                result.weights["bias"] = gb
            }
        }
        return result
    }
}
