/// `fuse_pad_into_conv`: folds zero padding into the convolutions that read it (ONNX Runtime's
/// pad→conv fusion).
///
/// A `pad` node in `.constant` mode with value 0 that pads only H and W of an NHWC tensor, is not
/// a graph output, and whose every consumer is a `conv2d` with `.valid` or `.explicit` padding
/// (reading it as its data input only), is removed and its amounts are added to those
/// convolutions' explicit padding. Keras `ZeroPadding2D` before a 'valid' convolution (the
/// style-transfer network) is the case. The result computes the same values (zero padding inside
/// the convolution equals an explicit zero-padded copy) without materialising the padded tensor;
/// every graph input and output, and every remaining tensor's type, is unchanged. Idempotent.
public struct FusePadIntoConv: GraphPass {
    /// "fuse_pad_into_conv".
    public var name: String { "fuse_pad_into_conv" }

    public init() {}

    /// - Returns: whether at least one pad node was fused (and removed).
    public func apply(to graph: inout Graph) -> Bool {
        let nodes = graph.nodes
        let outputSet = Set(graph.outputs)
        var consumers: [String: [Int]] = [:]
        for (i, n) in nodes.enumerated() { for t in n.inputs { consumers[t, default: []].append(i) } }
        var removed = Set<Int>()
        for (i, n) in nodes.enumerated() {
            guard case let .pad(p) = n.op, p.mode == .constant, p.value == 0, p.pads.count == 4,
                  p.pads[0] == [0, 0], p.pads[3] == [0, 0], p.pads[1].count == 2, p.pads[2].count == 2,
                  n.inputs.count == 1, n.outputs.count == 1,
                  !outputSet.contains(n.outputs[0]), let users = consumers[n.outputs[0]], !users.isEmpty
            else { continue }
            let fusable = users.allSatisfy { u in
                guard case let .conv2d(a) = nodes[u].op, nodes[u].inputs.first == n.outputs[0],
                      nodes[u].inputs.dropFirst().allSatisfy({ $0 != n.outputs[0] }) else { return false }
                if case .same = a.padding { return false }
                return true
            }
            guard fusable else { continue }
            for u in users {
                guard case var .conv2d(a) = graph.nodes[u].op else { continue }
                let old = a.padding.resolve(inH: 1, inW: 1, kernel: (1, 1), stride: (1, 1), dilation: (1, 1))
                a.padding = .explicit(top: old.top + p.pads[1][0], bottom: old.bottom + p.pads[1][1],
                                      left: old.left + p.pads[2][0], right: old.right + p.pads[2][1])
                graph.nodes[u].op = .conv2d(a)
                graph.nodes[u].inputs[0] = n.inputs[0]
            }
            removed.insert(i)
            graph.tensorTypes.removeValue(forKey: n.outputs[0])
        }
        guard !removed.isEmpty else { return false }
        graph.nodes = graph.nodes.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        return true
    }
}

extension Graph {
    /// The graph with `FusePadIntoConv` (`fuse_pad_into_conv`) applied: zero padding of H and W
    /// folded into the `.valid` / `.explicit` convolutions that read it. Kept for callers that
    /// want this one rewrite; `PassPipeline.inference` runs it with the other inference passes.
    /// - Returns: the rewritten graph; every remaining tensor's type is unchanged.
    public func fusingZeroPaddingIntoConvolutions() -> Graph {
        var g = self
        _ = FusePadIntoConv().apply(to: &g)
        return g
    }
}
