import MLGraph

/// Reference `Op.embedding` (Keras `Embedding`): indices x [N, L] → y [N, L, D] with weight
/// [D, vocab] (Core ML layout):
///
///     y[n, l, :] = weight[:, i]   where i = x[n, l] truncated toward zero (TF's float → int cast)
///
/// An index outside 0…vocab−1 (or NaN) gives a row of zeros — a documented divergence from
/// TF, which raises an error. Indices may be float32 (holding integers, as above), int32 or int64
/// (`TypedKernel`; integer indices are used as they are, no wrapping of negative ones).
final class ReferenceEmbedding: TypedKernel {
    let positions, dims, vocabulary: Int
    let indexType: ElementType
    /// The weight transposed to [vocab, D], so that each lookup copies one contiguous row.
    let table: [Float]

    /// The kernel for an `Op.embedding` node (nil for other ops).
    /// - Throws: `RuntimeError.kernelFailure` when the weight is missing or misshapen.
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .embedding(d) = ctx.node.op else { return nil }
        return try ReferenceEmbedding(ctx, d)
    }

    private init(_ ctx: KernelContext, _ d: Int) throws {
        guard let w = ctx.node.weights["weight"], w.shape.count == 2, w.shape[0] == d else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "embedding: missing weight 'weight' of shape (\(d), vocabulary size)")
        }
        dims = d
        indexType = ctx.inputTypes[0].elementType
        vocabulary = w.shape[1]
        positions = ctx.inputTypes[0].elementCount
        let values = w.floats()
        var t = [Float](repeating: 0, count: values.count)
        for o in 0..<d {
            for v in 0..<vocabulary { t[v * d + o] = values[o * vocabulary + v] }
        }
        table = t
    }

    func run(typedInputs: [UnsafeRawPointer], typedOutputs: [UnsafeMutableRawPointer]) {
        guard indexType.isInteger else {
            return run(inputs: [typedInputs[0].assumingMemoryBound(to: Float.self)],
                       outputs: [typedOutputs[0].assumingMemoryBound(to: Float.self)])
        }
        let y = typedOutputs[0].assumingMemoryBound(to: Float.self)
        table.withUnsafeBufferPointer { tp in
            for p in 0..<positions {
                let i = loadIndex(typedInputs[0], indexType, p)
                let dst = y + p * dims
                if i < 0 || i >= vocabulary { dst.update(repeating: 0, count: dims) } else {
                    dst.update(from: tp.baseAddress! + i * dims, count: dims)
                }
            }
        }
    }

    /// Float32 indices (see the type's documentation).
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        table.withUnsafeBufferPointer { tp in
            for p in 0..<positions {
                let dst = y + p * dims
                let v = x[p]
                // `Float(vocabulary)` bounds the value before the Int conversion (no trap on ±inf/huge).
                if v.isNaN || v <= -1 || v >= Float(vocabulary) {
                    dst.update(repeating: 0, count: dims)
                    continue
                }
                let i = Int(v)  // truncation toward zero, as tf.cast(float → int32)
                if i < 0 || i >= vocabulary {
                    dst.update(repeating: 0, count: dims)
                } else {
                    dst.update(from: tp.baseAddress! + i * dims, count: dims)
                }
            }
        }
    }
}
