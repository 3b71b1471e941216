import MLGraph

/// Reference `Op.einsum` by explicit index loops: the output labels (in output order) then the
/// summed labels span the iteration space; for each output element,
///
///     y[o] = Σ_s  Π_k x_k[the operand's labels taken from (o, s)]
///
/// accumulated in Double (a label repeated within an operand reads its diagonal: the axes'
/// strides add up). Float32 only.
final class ReferenceEinsum: Kernel {
    let outCount: Int, inner: Int, dims: [Int], strides: [[Int]]

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .einsum(equation) = ctx.node.op else { return nil }
        guard case let .success(e) = EinsumEquation.parse(equation),
              case let .success(sizes) = e.labelSizes(ctx.inputTypes.map(\.shape)) else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "einsum: invalid equation \"\(equation.prefix(80))\" for its inputs")
        }
        let summed = (0..<e.labelCount).filter { !e.output.contains($0) }
        let labels = e.output + summed
        // Per operand: the element stride of each label (sum over the axes carrying it).
        let strides = zip(e.operands, ctx.inputTypes).map { operand, t -> [Int] in
            let axisStrides = rowMajorStrides(t.shape)
            var perLabel = [Int](repeating: 0, count: e.labelCount)
            for (axis, l) in operand.enumerated() { perLabel[l] += axisStrides[axis] }
            return labels.map { perLabel[$0] }
        }
        return ReferenceEinsum(outCount: ctx.outputTypes[0].elementCount, inner: summed.map { sizes[$0] }.reduce(1, *),
                               dims: labels.map { sizes[$0] }, strides: strides)
    }

    private init(outCount: Int, inner: Int, dims: [Int], strides: [[Int]]) {
        self.outCount = outCount; self.inner = inner; self.dims = dims; self.strides = strides
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        var it = Odometer(shape: dims, strides: strides)
        let two = inputs.count == 2
        for o in 0..<outCount {
            var acc = 0.0
            for _ in 0..<inner {
                var p = Double(inputs[0][it.offsets[0]])
                if two { p *= Double(inputs[1][it.offsets[1]]) }
                acc += p
                it.advance()
            }
            outputs[0][o] = Float(acc)
        }
    }
}
