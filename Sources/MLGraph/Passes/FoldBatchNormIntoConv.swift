// MARK: inference passes (issue 12)

/// `fold_batchnorm_into_conv`: folds an inference batch norm into the convolution, transposed
/// convolution or dense layer that produces its input (ONNX Runtime's Conv+BatchNormalization
/// fusion; coremltools' `fuse_conv_batchnorm`).
///
/// Matches a `conv2d` (any groups, so depthwise too), `deconv2d` or `dense` node without a fused
/// activation (nil or identity) whose float32 output is read only by one `batchNorm` on the
/// last (channel) axis, and is not a graph output. Core ML `scale` and `bias` layers with
/// per-channel parameters import as such batch norms (mean 0, variance 1, ε 0), so they fold too.
/// With s = gamma/√(variance + ε) per output channel, the layer's weights become s·W (scaled
/// along the output-channel axis: axis 0 of conv2d [Cout, Cin/g, kH, kW] and dense [Cout, Cin];
/// for deconv2d [Cin, Cout/g, kH, kW], the output channel of element [ci, j] is
/// (ci / (Cin/g))·(Cout/g) + j) and its bias s·(b − mean) + beta (b = 0 when absent). The batch
/// norm is removed and the layer writes the batch norm's output tensor (same name and type).
///
/// Not folded: a layer whose weight is stored compressed (fp16, linear or look-up table: folding
/// would store it as float32 and lose the compression), a batch norm with variance + ε ≤ 0 or
/// non-finite parameters, statistics of the wrong length. Equal to the unfused graph up to
/// float32 rounding; idempotent.
public struct FoldBatchNormIntoConv: GraphPass {
    /// "fold_batchnorm_into_conv".
    public var name: String { "fold_batchnorm_into_conv" }

    public init() {}

    /// - Returns: whether at least one batch norm was folded (and removed).
    public func apply(to graph: inout Graph) -> Bool {
        var changed = false
        var i = 0
        while i < graph.nodes.count {
            if foldOne(producer: i, in: &graph) { changed = true } else { i += 1 }
        }
        return changed
    }

    /// Folds the batch norm after node `p`, if the pattern matches; the node stays at index `p`.
    private func foldOne(producer p: Int, in graph: inout Graph) -> Bool {
        let node = graph.nodes[p]
        guard node.outputs.count == 1, node.inputs.count == 1, node.blocks.isEmpty,
              let weight = node.weights["weight"], case .float32 = weight.encoding else { return false }
        let cout: Int
        switch node.op {
        case let .conv2d(a) where a.activation?.isIdentity ?? true: cout = a.outputChannels
        case let .deconv2d(a) where a.activation?.isIdentity ?? true: cout = a.outputChannels
        case let .dense(a) where a.activation?.isIdentity ?? true: cout = a.outputChannels
        default: return false
        }
        let uses = TensorUses(graph)
        guard let b = uses.soleReader(of: node.outputs[0]), b > p else { return false }
        let bn = graph.nodes[b]
        guard case let .batchNorm(attr) = bn.op, bn.inputs.count == 1, bn.outputs.count == 1,
              let type = graph.tensorTypes[node.outputs[0]], graph.allFloat32([node.outputs[0], bn.outputs[0]]),
              attr.axis == type.rank - 1, type.shape.last == cout,
              let mean = bn.weights["mean"]?.floats(), let variance = bn.weights["variance"]?.floats(),
              mean.count == cout, variance.count == cout
        else { return false }
        let gamma = bn.weights["gamma"]?.floats() ?? [Float](repeating: 1, count: cout)
        let beta = bn.weights["beta"]?.floats() ?? [Float](repeating: 0, count: cout)
        let oldBias = node.weights["bias"]?.floats() ?? [Float](repeating: 0, count: cout)
        guard gamma.count == cout, beta.count == cout, oldBias.count == cout else { return false }
        var scale = [Float](repeating: 0, count: cout), bias = scale
        for c in 0..<cout {
            let d = variance[c] + attr.epsilon
            guard d > 0, d.isFinite, gamma[c].isFinite, beta[c].isFinite, mean[c].isFinite else { return false }
            scale[c] = gamma[c] / d.squareRoot()
            bias[c] = scale[c] * (oldBias[c] - mean[c]) + beta[c]
        }
        var w = weight.floats()
        guard weight.shape.count >= 2, !w.isEmpty else { return false }
        if case let .deconv2d(a) = node.op {
            // [Cin, Cout/g, kH, kW]
            let cin = weight.shape[0], perGroupOut = weight.shape[1]
            guard a.groups >= 1, cin % a.groups == 0, perGroupOut * a.groups == cout, w.count % (cin * perGroupOut) == 0
            else { return false }
            let inner = w.count / (cin * perGroupOut), cinPerGroup = cin / a.groups
            for ci in 0..<cin {
                for j in 0..<perGroupOut {
                    let s = scale[(ci / cinPerGroup) * perGroupOut + j], base = (ci * perGroupOut + j) * inner
                    for k in 0..<inner { w[base + k] *= s }
                }
            }
        } else {
            guard weight.shape[0] == cout, w.count % cout == 0 else { return false }
            let inner = w.count / cout
            for o in 0..<cout { for k in 0..<inner { w[o * inner + k] *= scale[o] } }
        }
        graph.nodes[p].weights["weight"] = ConstantTensor(shape: weight.shape, floats: w)
        graph.nodes[p].weights["bias"] = ConstantTensor(shape: [cout], floats: bias)
        graph.absorb(b, into: p)
        return true
    }
}
