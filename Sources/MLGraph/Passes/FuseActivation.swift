// MARK: inference passes (issue 12)

/// `fuse_activation`: moves an activation into the convolution, transposed convolution or dense
/// layer that produces its input, as the layer's fused `activation` attribute (which the oneDNN
/// kernels run as eltwise post-ops — `dnnlEltwiseChain`: relu, relu6 / clipped ReLU, leaky ReLU,
/// ELU, SELU, sigmoid, hard sigmoid, tanh, softplus, swish, GELU (erf and tanh forms), hard-swish,
/// mish, … — and the reference kernels apply with `Activation.apply` after the bias).
///
/// Matches a `conv2d`, `deconv2d` or `dense` node without a fused activation (nil or identity)
/// whose float32 output is not a graph output and is read only by one `activation` node, or by
/// one `clip(alpha: 0, beta: b)` with b > 0 (= `clippedReLU(maxValue: b)`, ReLU6 when b = 6).
/// The activation node is removed and the layer writes its output tensor (same name and type).
/// Every activation is fused: one oneDNN cannot express runs in place on the layer's output,
/// which is what the separate node did. The values are those of the unfused graph (the same
/// scalar definitions run in the same order); idempotent. Runs after
/// `fold_batchnorm_into_conv`, so conv → batch norm → ReLU becomes one convolution.
public struct FuseActivation: GraphPass {
    /// "fuse_activation".
    public var name: String { "fuse_activation" }

    public init() {}

    /// - Returns: whether at least one activation was fused (and removed).
    public func apply(to graph: inout Graph) -> Bool {
        var changed = false
        for p in graph.nodes.indices.reversed() where p < graph.nodes.count {
            if fuseOne(producer: p, in: &graph) { changed = true }
        }
        return changed
    }

    /// The activation equal to node `n`'s op, when it is one this pass fuses.
    static func activation(of n: Node) -> Activation? {
        guard n.inputs.count == 1, n.outputs.count == 1, n.weights.isEmpty, n.blocks.isEmpty else { return nil }
        switch n.op {
        case let .activation(f): return f
        case let .clip(alpha, beta) where alpha == 0 && beta > 0:
            return .clippedReLU(maxValue: beta, negativeSlope: 0, threshold: 0)
        default: return nil
        }
    }

    private func fuseOne(producer p: Int, in graph: inout Graph) -> Bool {
        let node = graph.nodes[p]
        guard node.outputs.count == 1, node.blocks.isEmpty else { return false }
        switch node.op {
        // A convolution with a fused residual applies `activation` before the sum: not the place
        // of an activation after it (that is `ResidualAdd.activation`, set by fuse_residual_add).
        case let .conv2d(a) where (a.activation?.isIdentity ?? true) && a.residual == nil: break
        case let .deconv2d(a) where a.activation?.isIdentity ?? true: break
        case let .dense(a) where a.activation?.isIdentity ?? true: break
        default: return false
        }
        let uses = TensorUses(graph)
        guard let r = uses.soleReader(of: node.outputs[0]), r > p, let f = Self.activation(of: graph.nodes[r]),
              graph.allFloat32([node.outputs[0], graph.nodes[r].outputs[0]])
        else { return false }
        switch node.op {
        case var .conv2d(a): a.activation = f; graph.nodes[p].op = .conv2d(a)
        case var .deconv2d(a): a.activation = f; graph.nodes[p].op = .deconv2d(a)
        case var .dense(a): a.activation = f; graph.nodes[p].op = .dense(a)
        default: return false
        }
        graph.absorb(r, into: p)
        return true
    }
}
