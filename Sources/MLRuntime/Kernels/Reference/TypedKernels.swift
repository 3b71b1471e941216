import MLGraph

// Reference kernels of the typed ops (Op.cast … Op.topk): plain loops over raw buffers, generic
// over the element type through `ElementTypeVisitor` (RuntimeScalar.swift). Each is a
// `TypedKernel`; integer indices are int32 or int64, bool is one byte (non-zero = true, written
// as 1). Out-of-range indices never trap: gathers write zeros, oneHot writes off values.

/// A typed kernel running a closure built at load for the node's element types. Subclasses only
/// name the op (profiles print the kernel type).
class ReferenceTypedKernel: TypedKernel {
    typealias Body = ([UnsafeRawPointer], [UnsafeMutableRawPointer]) -> Void
    let body: Body
    init(_ body: @escaping Body) { self.body = body }
    func run(typedInputs: [UnsafeRawPointer], typedOutputs: [UnsafeMutableRawPointer]) { body(typedInputs, typedOutputs) }
}

/// Integer index `i` of an int32 / int64 buffer (other types read as 0; shape inference admits
/// only int32 and int64 indices).
@inline(__always)
func loadIndex(_ p: UnsafeRawPointer, _ t: ElementType, _ i: Int) -> Int {
    switch t {
    case .int32: return Int(p.element(i, as: Int32.self))
    case .int64: return Int(p.element(i, as: Int64.self))
    default: return 0
    }
}

/// `i` wrapped once if negative (MIL / NumPy: −1 is the last), or nil when outside 0..<n.
@inline(__always)
func wrapIndex(_ i: Int, _ n: Int) -> Int? {
    let j = i < 0 ? i &+ n : i
    return j >= 0 && j < n ? j : nil
}

/// Products of the dimensions before, at, and after `axis`.
func splitAxis(_ shape: [Int], _ axis: Int) -> (outer: Int, n: Int, inner: Int) {
    (shape[..<axis].reduce(1, *), shape[axis], shape[(axis + 1)...].reduce(1, *))
}

/// Resolves a possibly negative axis already validated by shape inference.
func normalizedAxis(_ axis: Int, rank: Int) -> Int { axis < 0 ? axis + rank : axis }

// MARK: - cast

/// Reference `Op.cast`: MIL `cast` semantics (`RuntimeScalar`): float → int truncates toward
/// zero and saturates (NaN → 0), int64 → int32 wraps, anything → bool is ≠ 0.
final class ReferenceCast: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .cast(to) = ctx.node.op else { return nil }
        let from = ctx.inputTypes[0].elementType, n = ctx.inputTypes[0].elementCount
        return ReferenceCast { ins, outs in convertElements(ins[0], from, outs[0], to, count: n) }
    }
}

// MARK: - argmax / argmin

/// Reference `Op.argmax` / `Op.argmin`: int32 index of the largest / smallest value along the
/// axis; ties → the first index; a NaN wins (the first NaN), as NumPy.
final class ReferenceArgReduce: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        let a: ArgReduceAttributes, isMax: Bool
        switch ctx.node.op {
        case let .argmax(x): a = x; isMax = true
        case let .argmin(x): a = x; isMax = false
        default: return nil
        }
        let s = splitAxis(ctx.inputTypes[0].shape, normalizedAxis(a.axis, rank: ctx.inputTypes[0].rank))
        struct V: ElementTypeVisitor {
            let outer: Int, n: Int, inner: Int, isMax: Bool
            func visit<T: RuntimeScalar>(_: T.Type) -> Body {
                let (outer, n, inner, isMax) = (outer, n, inner, isMax)
                return { ins, outs in
                    let x = ins[0], y = outs[0]
                    for o in 0..<outer {
                        for i in 0..<inner {
                            let base = o * n * inner + i
                            var best = 0
                            var bv: T = x.element(base)
                            if !bv.isNaNValue {
                                for j in 1..<Swift.max(n, 1) {
                                    let v: T = x.element(base + j * inner)
                                    if v.isNaNValue { best = j; break }
                                    if isMax ? v > bv : v < bv { bv = v; best = j }
                                }
                            }
                            y.setElement(o * inner + i, Int32(truncatingIfNeeded: best))
                        }
                    }
                }
            }
        }
        return ReferenceArgReduce(ctx.inputTypes[0].elementType.dispatch(V(outer: s.outer, n: s.n, inner: s.inner, isMax: isMax)))
    }
}

// MARK: - compare, logical, select

/// Reference `Op.compare`: NumPy broadcasting, IEEE comparisons (NaN: only not_equal is true);
/// output bool.
final class ReferenceCompare: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .compare(f) = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        let strides = ctx.inputTypes.map { broadcastStrides($0.shape, to: out) }
        struct V: ElementTypeVisitor {
            let f: CompareFunction, out: [Int], strides: [[Int]]
            func visit<T: RuntimeScalar>(_: T.Type) -> Body {
                let (f, out, strides) = (f, out, strides)
                return { ins, outs in
                    var it = Odometer(shape: out, strides: strides)
                    for o in 0..<out.reduce(1, *) {
                        let a: T = ins[0].element(it.offsets[0]), b: T = ins[1].element(it.offsets[1])
                        let r: Bool
                        switch f {
                        case .equal: r = a == b
                        case .notEqual: r = a != b
                        case .less: r = a < b
                        case .lessEqual: r = a <= b
                        case .greater: r = a > b
                        case .greaterEqual: r = a >= b
                        }
                        outs[0].setElement(o, UInt8(r ? 1 : 0))
                        it.advance()
                    }
                }
            }
        }
        return ReferenceCompare(ctx.inputTypes[0].elementType.dispatch(V(f: f, out: out, strides: strides)))
    }
}

/// Reference `Op.logical`: bool inputs (non-zero = true), NumPy broadcasting; output 0 or 1.
final class ReferenceLogical: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .logical(f) = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        let strides = ctx.inputTypes.map { broadcastStrides($0.shape, to: out) }
        return ReferenceLogical { ins, outs in
            var it = Odometer(shape: out, strides: strides)
            for o in 0..<out.reduce(1, *) {
                let a = ins[0].element(it.offsets[0], as: UInt8.self) != 0
                let r: Bool
                switch f {
                case .not: r = !a
                case .and: r = a && ins[1].element(it.offsets[1], as: UInt8.self) != 0
                case .or: r = a || ins[1].element(it.offsets[1], as: UInt8.self) != 0
                case .xor: r = a != (ins[1].element(it.offsets[1], as: UInt8.self) != 0)
                }
                outs[0].setElement(o, UInt8(r ? 1 : 0))
                it.advance()
            }
        }
    }
}

/// Reference `Op.select`: cond (bool, non-zero = true) ? a : b with NumPy broadcasting of all three.
final class ReferenceSelect: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .select = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        let strides = ctx.inputTypes.map { broadcastStrides($0.shape, to: out) }
        let size = ctx.outputTypes[0].elementType.byteSize
        return ReferenceSelect { ins, outs in
            var it = Odometer(shape: out, strides: strides)
            for o in 0..<out.reduce(1, *) {
                let c = ins[0].element(it.offsets[0], as: UInt8.self) != 0
                let src = c ? ins[1] + it.offsets[1] * size : ins[2] + it.offsets[2] * size
                (outs[0] + o * size).copyMemory(from: src, byteCount: size)
                it.advance()
            }
        }
    }
}

// MARK: - gathers

/// Reference `Op.gather`: out[o, j…, i] = x[o, wrap(indices[j…]), i]; an index outside
/// −n…n−1 gives zeros.
final class ReferenceGather: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .gather(axis) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0]
        let s = splitAxis(x.shape, normalizedAxis(axis, rank: x.rank))
        let m = ctx.inputTypes[1].elementCount, it = ctx.inputTypes[1].elementType
        let block = s.inner * x.elementType.byteSize
        return ReferenceGather { ins, outs in
            for o in 0..<s.outer {
                for j in 0..<m {
                    let dst = outs[0] + (o * m + j) * block
                    if let k = wrapIndex(loadIndex(ins[1], it, j), s.n) {
                        dst.copyMemory(from: ins[0] + (o * s.n + k) * block, byteCount: block)
                    } else {
                        dst.initializeMemory(as: UInt8.self, repeating: 0, count: block)
                    }
                }
            }
        }
    }
}

/// Reference `Op.gatherND`: for each index tuple t (the last axis of indices, K entries),
/// out[t] = x[wrap(t₀), …, wrap(t_{K−1})] (a slice of x's remaining axes); out of range: zeros.
final class ReferenceGatherND: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case .gatherND = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0], ind = ctx.inputTypes[1]
        let k = ind.shape.last ?? 1
        let tuples = ind.elementCount / Swift.max(k, 1)
        let xStrides = rowMajorStrides(x.shape)
        let size = x.elementType.byteSize
        let slice = x.shape[k...].reduce(1, *) * size
        let it = ind.elementType
        return ReferenceGatherND { ins, outs in
            for t in 0..<tuples {
                var offset = 0, valid = true
                for d in 0..<k {
                    guard let i = wrapIndex(loadIndex(ins[1], it, t * k + d), x.shape[d]) else { valid = false; break }
                    offset += i * xStrides[d]
                }
                let dst = outs[0] + t * slice
                if valid { dst.copyMemory(from: ins[0] + offset * size, byteCount: slice) } else {
                    dst.initializeMemory(as: UInt8.self, repeating: 0, count: slice)
                }
            }
        }
    }
}

/// Reference `Op.gatherAlongAxis`: out[i] = x[i with the axis coordinate replaced by
/// wrap(indices[i])]; out of range: zero.
final class ReferenceGatherAlongAxis: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .gatherAlongAxis(axis) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0], ind = ctx.inputTypes[1]
        let a = normalizedAxis(axis, rank: x.rank)
        var xs = rowMajorStrides(x.shape)
        let axisStride = xs[a], n = x.shape[a]
        xs[a] = 0
        let size = x.elementType.byteSize, it = ind.elementType
        let out = ind.shape
        return ReferenceGatherAlongAxis { ins, outs in
            var odo = Odometer(shape: out, strides: [xs])
            for o in 0..<out.reduce(1, *) {
                let dst = outs[0] + o * size
                if let k = wrapIndex(loadIndex(ins[1], it, o), n) {
                    dst.copyMemory(from: ins[0] + (odo.offsets[0] + k * axisStride) * size, byteCount: size)
                } else {
                    dst.initializeMemory(as: UInt8.self, repeating: 0, count: size)
                }
                odo.advance()
            }
        }
    }
}

// MARK: - oneHot, range1d, fill

/// Reference `Op.oneHot`: out[o, d, i] = on if indices[o, i] == d else off (float32); negative or
/// too large indices give all off values (TF / MIL one_hot).
final class ReferenceOneHot: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .oneHot(a) = ctx.node.op else { return nil }
        let ind = ctx.inputTypes[0]
        let axis = normalizedAxis(a.axis, rank: ind.rank + 1)
        let outer = ind.shape[..<axis].reduce(1, *), inner = ind.shape[axis...].reduce(1, *)
        let it = ind.elementType, depth = a.depth
        return ReferenceOneHot { ins, outs in
            for o in 0..<outer {
                for i in 0..<inner {
                    let v = loadIndex(ins[0], it, o * inner + i)
                    for d in 0..<depth { outs[0].setElement((o * depth + d) * inner + i, v == d ? a.onValue : a.offValue) }
                }
            }
        }
    }
}

/// Reference `Op.range1d`: value i is start + i·step computed in Double, then rounded to float32
/// (or exact for int32).
final class ReferenceRange1D: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .range1d(a) = ctx.node.op else { return nil }
        let n = ctx.outputTypes[0].elementCount
        let start = Double(a.start), step = Double(a.step), int = a.elementType == .int32
        return ReferenceRange1D { _, outs in
            for i in 0..<n {
                let v = start + Double(i) * step
                if int { outs[0].setElement(i, Int32(v)) } else { outs[0].setElement(i, Float(v)) }
            }
        }
    }
}

/// Reference `Op.fill`: every element is `value` converted to the element type (`cast` semantics).
final class ReferenceFill: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .fill(a) = ctx.node.op else { return nil }
        let n = ctx.outputTypes[0].elementCount, t = a.elementType, size = t.byteSize
        var v = a.value
        var one = [UInt8](repeating: 0, count: size)
        one.withUnsafeMutableBytes { dst in withUnsafeBytes(of: &v) { src in convertElements(src.baseAddress!, .float32, dst.baseAddress!, t, count: 1) } }
        return ReferenceFill { _, outs in
            one.withUnsafeBytes { src in
                for i in 0..<n { (outs[0] + i * size).copyMemory(from: src.baseAddress!, byteCount: size) }
            }
        }
    }
}

// MARK: - topk

/// Sets `order` to the positions 0..<vals.count sorted by value — descending unless `ascending` —
/// ties by lower position first (stable), NaN above +∞ and NaNs equal: the order of `topk` and
/// `argsort`.
func sortPositions<T: RuntimeScalar>(_ order: inout [Int], by vals: [T], ascending: Bool) {
    /// a above b in the order.
    func above(_ a: T, _ b: T) -> Bool {
        if a.isNaNValue { return !b.isNaNValue }
        if b.isNaNValue { return false }
        return a > b
    }
    order = Array(vals.indices)
    order.sort { p, q in
        let (vp, vq) = (vals[p], vals[q])
        if ascending ? above(vq, vp) : above(vp, vq) { return true }
        if ascending ? above(vp, vq) : above(vq, vp) { return false }
        return p < q
    }
}

/// Reference `Op.topk`: per slice along the axis, the positions sorted by value (descending, or
/// ascending when `ascending`), ties by lower index first, NaN ordered above +∞; the first k
/// values (input type) and positions (int32).
final class ReferenceTopK: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .topk(a) = ctx.node.op else { return nil }
        let x = ctx.inputTypes[0]
        let s = splitAxis(x.shape, normalizedAxis(a.axis, rank: x.rank))
        struct V: ElementTypeVisitor {
            let outer: Int, n: Int, inner: Int, k: Int, ascending: Bool
            func visit<T: RuntimeScalar>(_: T.Type) -> Body {
                let (outer, n, inner, k, ascending) = (outer, n, inner, k, ascending)
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
                            for j in 0..<k {
                                let at = (o * k + j) * inner + i
                                outs[0].setElement(at, vals[order[j]])
                                outs[1].setElement(at, Int32(truncatingIfNeeded: order[j]))
                            }
                        }
                    }
                }
            }
        }
        return ReferenceTopK(x.elementType.dispatch(V(outer: s.outer, n: s.n, inner: s.inner, k: a.k, ascending: a.ascending)))
    }
}
