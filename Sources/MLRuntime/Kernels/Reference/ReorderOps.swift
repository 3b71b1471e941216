import MLGraph

// Reference kernels of Op.reverse, Op.reverseSequence, Op.argsort, Op.slidingWindows: typed
// kernels (any element type; elements copied as bytes, or compared through `RuntimeScalar`).

/// Reference `Op.reverse`: out[i] = x[i with i_d → n_d − 1 − i_d on each reversed axis d].
final class ReferenceReverse: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .reverse(axes) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0], shape = x.shape
        let reversed = axes.isEmpty ? Array(0..<x.rank) : axes.map { normalizedAxis($0, rank: x.rank) }
        var strides = rowMajorStrides(shape), base = 0
        for d in Set(reversed) {
            base += (shape[d] - 1) * strides[d]
            strides[d] = -strides[d]
        }
        let size = x.elementType.byteSize, count = x.elementCount
        return ReferenceReverse { [strides, base] ins, outs in
            var it = Odometer(shape: shape, strides: [strides], base: [base])
            for o in 0..<count {
                (outs[0] + o * size).copyMemory(from: ins[0] + it.offsets[0] * size, byteCount: size)
                it.advance()
            }
        }
    }
}

/// Reference `Op.reverseSequence`: for each element at position t along the sequence axis and b
/// along the batch axis, with L = lengths[b] clamped to 0…n: out[…, t, …] = x[…, L − 1 − t, …]
/// when t < L, else x[…, t, …] (TF `reverse_sequence`; TF rejects L > n, here it is clamped).
final class ReferenceReverseSequence: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .reverseSequence(seqAxis, batchAxis) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0], shape = x.shape
        let s = normalizedAxis(seqAxis, rank: x.rank), b = normalizedAxis(batchAxis, rank: x.rank)
        let seqStride = rowMajorStrides(shape)[s], n = shape[s], lt = ctx.inputTypes[1].elementType
        let size = x.elementType.byteSize, count = x.elementCount
        return ReferenceReverseSequence { ins, outs in
            var it = Odometer(shape: shape, strides: [])
            for o in 0..<count {
                let l = Swift.min(Swift.max(loadIndex(ins[1], lt, it.index[b]), 0), n)
                let t = it.index[s]
                let src = t < l ? o + (l - 1 - 2 * t) * seqStride : o
                (outs[0] + o * size).copyMemory(from: ins[0] + src * size, byteCount: size)
                it.advance()
            }
        }
    }
}

/// Reference `Op.argsort`: per slice along the axis, the positions ordered by value — descending
/// unless `ascending` — with ties by lower position first (stable) and NaN above +∞ (as `topk`);
/// written as int32.
final class ReferenceArgsort: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .argsort(axis, ascending) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0]
        let s = splitAxis(x.shape, normalizedAxis(axis, rank: x.rank))
        struct V: ElementTypeVisitor {
            let outer: Int, n: Int, inner: Int, ascending: Bool
            func visit<T: RuntimeScalar>(_: T.Type) -> Body {
                let (outer, n, inner, ascending) = (outer, n, inner, ascending)
                return { ins, outs in
                    var order = [Int](repeating: 0, count: n)
                    var vals = [T]()
                    vals.reserveCapacity(n)
                    for o in 0..<outer {
                        for i in 0..<inner {
                            let base = o * n * inner + i
                            vals.removeAll(keepingCapacity: true)
                            for j in 0..<n { vals.append(ins[0].element(base + j * inner)) }
                            sortPositions(&order, by: vals, ascending: ascending)
                            for j in 0..<n { outs[0].setElement(base + j * inner, Int32(truncatingIfNeeded: order[j])) }
                        }
                    }
                }
            }
        }
        return ReferenceArgsort(x.elementType.dispatch(V(outer: s.outer, n: s.n, inner: s.inner, ascending: ascending)))
    }
}

/// Reference `Op.slidingWindows`: out[o, w, j, i] = x[o, w·stride + j, i] (o: the axes before
/// `axis`, i: the axes after).
final class ReferenceSlidingWindows: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .slidingWindows(a) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0]
        let s = splitAxis(x.shape, normalizedAxis(a.axis, rank: x.rank))
        let windows = (s.n - a.size) / a.stride + 1, size = a.size, stride = a.stride
        let block = s.inner * x.elementType.byteSize
        return ReferenceSlidingWindows { ins, outs in
            var at = 0
            for o in 0..<s.outer {
                for w in 0..<windows {
                    for j in 0..<size {
                        (outs[0] + at).copyMemory(from: ins[0] + (o * s.n + w * stride + j) * block, byteCount: block)
                        at += block
                    }
                }
            }
        }
    }
}
