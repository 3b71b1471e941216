import MLGraph

/// Reference `Op.dense` (Keras `Dense`): x [..., Cin] (rank ≥ 2) → y [..., Cout], weight
/// [Cout, Cin], optional bias [Cout]; every leading position is one row:
///
///     y[r, o] = act(bias[o] + Σ_i x[r, i] · weight[o, i])
///
/// Accumulates in Double.
/// - Complexity: rows·Cin·Cout multiply-adds.
final class ReferenceDense: Kernel {
    let rows, cin, cout: Int
    let weight: [Float]
    let bias: [Float]
    let activation: Activation?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .dense(a) = ctx.node.op else { return nil }
        return try ReferenceDense(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: DenseAttributes) throws {
        cin = ctx.inputTypes[0].shape.last!
        cout = a.outputChannels
        rows = ctx.inputTypes[0].elementCount / Swift.max(cin, 1)
        weight = try ctx.weightValues("weight")
        bias = ctx.optionalWeightValues("bias") ?? [Float](repeating: 0, count: cout)
        activation = a.activation
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for r in 0..<rows {
            for o in 0..<cout {
                var acc = Double(bias[o])
                for i in 0..<cin { acc += Double(x[r * cin + i]) * Double(weight[o * cin + i]) }
                y[r * cout + o] = Float(acc)
            }
        }
        applyActivation(activation, y, count: rows * cout)
    }
}
