import MLGraph

// Helpers shared by the reference kernels: weight access, fused activations, strided iteration.

extension KernelContext {
    /// The float32 values of weight `key` (dequantized copy).
    /// - Throws: `RuntimeError.kernelFailure` naming the node when the weight is absent.
    func weightValues(_ key: String) throws -> [Float] {
        guard let w = node.weights[key] else {
            throw RuntimeError.kernelFailure(node: node.name, message: "\(node.op.name): missing weight '\(key)'")
        }
        return w.floats()
    }

    /// The float32 values of weight `key`, or nil when the node has none.
    func optionalWeightValues(_ key: String) -> [Float]? { node.weights[key]?.floats() }
}

/// Applies `activation` in place to `count` values; nil or identity does nothing.
@inline(__always)
func applyActivation(_ activation: Activation?, _ p: UnsafeMutablePointer<Float>, count: Int) {
    guard let act = activation, !act.isIdentity else { return }
    for i in 0..<count { p[i] = act.apply(p[i]) }
}

/// Strides for reading an operand of `shape` while iterating `outShape` (NumPy broadcasting:
/// shapes aligned at the right, stride 0 on broadcast axes).
func broadcastStrides(_ shape: [Int], to outShape: [Int]) -> [Int] {
    let padded = [Int](repeating: 1, count: outShape.count - shape.count) + shape
    let s = rowMajorStrides(padded)
    return (0..<outShape.count).map { padded[$0] == 1 && outShape[$0] != 1 ? 0 : s[$0] }
}

/// Walks a shape in row-major order, keeping for each operand the element offset
/// Σ index[d]·strides[k][d].
struct Odometer {
    let shape: [Int]
    let strides: [[Int]]
    private(set) var index: [Int]
    private(set) var offsets: [Int]

    init(shape: [Int], strides: [[Int]], base: [Int]? = nil) {
        self.shape = shape; self.strides = strides
        index = [Int](repeating: 0, count: shape.count)
        offsets = base ?? [Int](repeating: 0, count: strides.count)
    }

    /// Moves to the next multi-index (wrapping to all zeros after the last).
    mutating func advance() {
        var d = shape.count - 1
        while d >= 0 {
            index[d] += 1
            for k in offsets.indices { offsets[k] += strides[k][d] }
            if index[d] < shape[d] { return }
            for k in offsets.indices { offsets[k] -= strides[k][d] * shape[d] }
            index[d] = 0
            d -= 1
        }
    }
}

/// Copies `count` floats unless source and destination are the same buffer (in-place aliasing).
@inline(__always)
func copyIfDistinct(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, count: Int) {
    if UnsafePointer(dst) != src { dst.update(from: src, count: count) }
}
