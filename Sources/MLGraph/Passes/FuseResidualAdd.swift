// MARK: residual add fusion (issue 12)

/// `fuse_residual_add`: folds an element-wise addition of two same-typed tensors into the
/// `conv2d` that produces one of them, as the convolution's `residual` (`ResidualAdd`), with the
/// activation that follows the addition (if any) fused after the sum.
///
/// Matches an `elementwise(.add)` or `binary(.add)` node with two distinct float32 inputs whose
/// static types equal its output's (no broadcasting), where one input is the only output of a
/// `conv2d` (one input, no `residual` yet) that nothing else reads and that is not a graph output.
/// When both inputs are such convolutions, the one later in node order is fused. The convolution
/// moves to the addition's place in the node list (its input was computed before it, and the other
/// operand before the addition), takes the other operand as its input 1 and writes the addition's
/// output tensor (same name and type); the addition and the convolution's old output disappear.
/// When the addition's output is read only by an `activation` (or `clip(0, b)`) node and is not a
/// graph output, that node is absorbed too (`ResidualAdd.activation`).
///
/// Graphs with a flexible-shape input (`FeatureDescription.shapeFlexibility`) are left alone: the
/// operands' types are compared at the default shapes only.
///
/// Values are those of the unfused graph: the reference kernel computes
/// residual.activation(activation(conv + bias) + r) in float32 in that order, as the unfused nodes
/// did; oneDNN runs it as eltwise, sum and eltwise post-ops. Idempotent. Runs after
/// `fuse_activation`, so conv → batch norm → ReLU → add → ReLU becomes one convolution (ResNet), and
/// conv → batch norm → add (MobileNetV2's linear bottleneck) one too.
public struct FuseResidualAdd: GraphPass {
    /// "fuse_residual_add".
    public var name: String { "fuse_residual_add" }

    public init() {}

    /// - Returns: whether at least one addition was fused (and removed).
    public func apply(to graph: inout Graph) -> Bool {
        // With flexible input shapes, two operands equal at the default shape may broadcast at
        // another allowed shape, which a fused residual cannot express: such graphs stay unfused.
        guard !graph.description.inputs.contains(where: { $0.shapeFlexibility != nil }) else { return false }
        var changed = false
        var i = 0
        while i < graph.nodes.count {
            // After a fusion the producer (before i) is gone, so index i holds the next node.
            if fuseOne(add: i, in: &graph) { changed = true } else { i += 1 }
        }
        return changed
    }

    private static func isAdd(_ n: Node) -> Bool {
        guard n.inputs.count == 2, n.outputs.count == 1, n.weights.isEmpty, n.blocks.isEmpty,
              n.inputs[0] != n.inputs[1] else { return false }
        switch n.op {
        case .elementwise(.add), .binary(.add): return true
        default: return false
        }
    }

    private func fuseOne(add i: Int, in graph: inout Graph) -> Bool {
        let add = graph.nodes[i]
        guard Self.isAdd(add), let type = graph.tensorTypes[add.outputs[0]], !type.isList,
              type.shape.allSatisfy({ $0 >= 0 }), graph.allFloat32(add.inputs + add.outputs),
              add.inputs.allSatisfy({ graph.tensorTypes[$0] == type })
        else { return false }
        let uses = TensorUses(graph)
        var producer: [String: Int] = [:]
        for p in 0..<i { for t in graph.nodes[p].outputs { producer[t] = p } }
        var best: (p: Int, slot: Int)?
        for slot in 0..<2 {
            let t = add.inputs[slot]
            guard let p = producer[t], uses.soleReader(of: t) == i else { continue }
            let conv = graph.nodes[p]
            guard case let .conv2d(a) = conv.op, a.residual == nil, conv.inputs.count == 1, conv.outputs == [t],
                  conv.blocks.isEmpty else { continue }
            if best == nil || p > best!.p { best = (p, slot) }
        }
        guard let (p, slot) = best, case var .conv2d(a) = graph.nodes[p].op else { return false }
        let convOutput = add.inputs[slot], residualInput = add.inputs[1 - slot]
        var output = add.outputs[0]
        var absorbed: Int?
        if let r = uses.soleReader(of: output), r > i, let f = FuseActivation.activation(of: graph.nodes[r]),
           graph.allFloat32(graph.nodes[r].outputs) {
            absorbed = r
            a.residual = ResidualAdd(activation: f)
            graph.tensorTypes.removeValue(forKey: output)
            output = graph.nodes[r].outputs[0]
        } else {
            a.residual = ResidualAdd(activation: nil)
        }
        var fused = graph.nodes[p]
        fused.op = .conv2d(a)
        fused.inputs = [fused.inputs[0], residualInput]
        fused.outputs = [output]
        graph.tensorTypes.removeValue(forKey: convOutput)
        graph.nodes[i] = fused
        if let r = absorbed { graph.nodes.remove(at: r) }  // r > i > p: remove the later index first
        graph.nodes.remove(at: p)
        return true
    }
}
