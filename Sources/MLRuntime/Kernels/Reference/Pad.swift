import MLGraph

/// Reference `Op.pad`, any rank: output axis d has before[d] + size[d] + after[d] elements; output
/// index j maps to input index j − before[d] when in range, else:
/// - `.constant`: the value `PadAttributes.value`;
/// - `.reflect`: mirrored without repeating the edge (−1 → 1, size → size − 2; pads < size);
/// - `.edge`: clamped to the nearest edge.
final class ReferencePad: Kernel {
    let outShape: [Int]
    let inStrides: [Int]
    /// Per axis, the input index for each output index, or −1 for a constant pad.
    let sources: [[Int]]
    let value: Float

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .pad(a) = ctx.node.op else { return nil }
        let inShape = ctx.inputTypes[0].shape
        let sources = inShape.indices.map { d -> [Int] in
            let size = inShape[d], before = a.pads[d][0]
            return (0..<(size + a.pads[d][0] + a.pads[d][1])).map { j -> Int in
                let i = j - before
                if i >= 0 && i < size { return i }
                switch a.mode {
                case .constant: return -1
                case .edge: return i < 0 ? 0 : size - 1
                case .reflect: return i < 0 ? -i : 2 * (size - 1) - i
                }
            }
        }
        return ReferencePad(outShape: ctx.outputTypes[0].shape, inStrides: rowMajorStrides(inShape), sources: sources, value: a.value)
    }

    private init(outShape: [Int], inStrides: [Int], sources: [[Int]], value: Float) {
        self.outShape = outShape; self.inStrides = inStrides; self.sources = sources; self.value = value
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        var it = Odometer(shape: outShape, strides: [])
        for o in 0..<outShape.reduce(1, *) {
            var offset = 0, inside = true
            for d in outShape.indices {
                let s = sources[d][it.index[d]]
                if s < 0 { inside = false; break }
                offset += s * inStrides[d]
            }
            y[o] = inside ? x[offset] : value
            it.advance()
        }
    }
}
