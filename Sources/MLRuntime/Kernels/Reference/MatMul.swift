import MLGraph

/// Reference `Op.matmul` (MIL `matmul`): for every index b of the broadcast batch shape,
///
///     y[b, i, j] = Σ_k X[b, i, k] · W[b, k, j]
///
/// with X = x (last two axes swapped when transposeX; a rank-1 x is one row [1, K]) and W the
/// second operand — input 1, or the weight "y" — (swapped when transposeY; a rank-1 one is one
/// column [K, 1]); a batch axis of size 1 in one operand is read for every index of the other.
/// Accumulates in Double. - Complexity: batch·M·N·K multiply-adds.
final class ReferenceMatMul: Kernel {
    let g: MatMulGeometry
    /// Element strides of (row i, col k) in x's storage and (row k, col j) in w's.
    let xi: Int, xk: Int, wk: Int, wj: Int
    let xBatchStrides: [Int], wBatchStrides: [Int]
    let constant: [Float]?

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .matmul(a) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0].shape
        let constant = ctx.inputTypes.count == 1 ? try ctx.weightValues("y") : nil
        let w = ctx.inputTypes.count == 2 ? ctx.inputTypes[1].shape : ctx.node.weights["y"]?.shape ?? []
        guard case let .success(g) = MatMulGeometry.make(x: x, y: w, transposeX: a.transposeX, transposeY: a.transposeY) else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "matmul: shapes \(formatShape(x)) and \(formatShape(w)) do not multiply")
        }
        return ReferenceMatMul(g, transposeX: a.transposeX, transposeW: a.transposeY && w.count > 1, constant: constant)
    }

    private init(_ g: MatMulGeometry, transposeX: Bool, transposeW: Bool, constant: [Float]?) {
        self.g = g
        (xi, xk) = transposeX ? (1, g.m) : (g.k, 1)
        (wk, wj) = transposeW ? (1, g.k) : (g.n, 1)
        func batchStrides(_ s: [Int], _ matrix: Int) -> [Int] {
            broadcastStrides(s, to: g.batch).map { $0 * matrix }
        }
        xBatchStrides = batchStrides(g.xBatch, g.m * g.k)
        wBatchStrides = batchStrides(g.yBatch, g.k * g.n)
        self.constant = constant
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        if let constant {
            constant.withUnsafeBufferPointer { compute(inputs[0], $0.baseAddress!, outputs[0]) }
        } else {
            compute(inputs[0], inputs[1], outputs[0])
        }
    }

    private func compute(_ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
        var it = Odometer(shape: g.batch, strides: [xBatchStrides, wBatchStrides])
        var o = 0
        for _ in 0..<g.batch.reduce(1, *) {
            let xb = x + it.offsets[0], wb = w + it.offsets[1]
            for i in 0..<g.m {
                for j in 0..<g.n {
                    var acc = 0.0
                    for k in 0..<g.k { acc += Double(xb[i * xi + k * xk]) * Double(wb[k * wk + j * wj]) }
                    y[o] = Float(acc)
                    o += 1
                }
            }
            it.advance()
        }
    }
}

/// Reference `Op.constant`: copies the weight "value" (dequantized once at load) to the output.
final class ReferenceConstant: Kernel {
    let value: [Float]

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .constant = ctx.node.op else { return nil }
        return ReferenceConstant(value: try ctx.weightValues("value"))
    }

    private init(value: [Float]) { self.value = value }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        value.withUnsafeBufferPointer { outputs[0].update(from: $0.baseAddress!, count: $0.count) }
    }
}
