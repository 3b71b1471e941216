import MLGraph

// Reference kernels of Op.scatter, Op.scatterND, Op.scatterAlongAxis (MIL scatter, scatter_nd,
// scatter_along_axis): the output starts as a copy of data; each update is then combined with the
// value at its position (`ScatterMode`) one at a time, in row-major order of the updates, so
// duplicate indices accumulate and `update` keeps the last. Indices are int32 or int64; a negative
// index wraps once; an index out of range after wrapping is SKIPPED (its update is dropped): a
// kernel cannot report an error at run time, and MIL leaves the case undefined.

/// Element types a scatter can combine: float32, float16 (IEEE arithmetic), int32, int64
/// (wrapping arithmetic; division truncates toward zero, a zero divisor gives 0, min / −1 wraps).
protocol ScatterScalar: RuntimeScalar {
    static func combine(_ v: Self, _ u: Self, _ mode: ScatterMode) -> Self
}

extension ScatterScalar where Self: BinaryFloatingPoint {
    @inline(__always)
    static func combine(_ v: Self, _ u: Self, _ mode: ScatterMode) -> Self {
        switch mode {
        case .update: return u
        case .add: return v + u
        case .sub: return v - u
        case .mul: return v * u
        case .div: return v / u
        case .max: return v.isNaN || u.isNaN ? .nan : Swift.max(v, u)
        case .min: return v.isNaN || u.isNaN ? .nan : Swift.min(v, u)
        }
    }
}

extension ScatterScalar where Self: FixedWidthInteger {
    @inline(__always)
    static func combine(_ v: Self, _ u: Self, _ mode: ScatterMode) -> Self {
        switch mode {
        case .update: return u
        case .add: return v &+ u
        case .sub: return v &- u
        case .mul: return v &* u
        case .div: return u == 0 ? 0 : v.dividedReportingOverflow(by: u).partialValue
        case .max: return Swift.max(v, u)
        case .min: return Swift.min(v, u)
        }
    }
}

extension Float: ScatterScalar {}
extension Float16: ScatterScalar {}
extension Int32: ScatterScalar {}
extension Int64: ScatterScalar {}

/// Calls `body` with the `ScatterScalar` storage type of `t` (nil for bool, which shape inference refuses).
func withScatterScalar<R>(_ t: ElementType, _ body: (any ScatterScalar.Type) -> R) -> R? {
    switch t {
    case .float32: return body(Float.self)
    case .float16: return body(Float16.self)
    case .int32: return body(Int32.self)
    case .int64: return body(Int64.self)
    case .bool: return nil
    }
}

/// out[at] = combine(out[at], updates[from]) for elements of type T.
@inline(__always)
func scatterCombine<T: ScatterScalar>(_: T.Type, _ out: UnsafeMutableRawPointer, _ at: Int, _ updates: UnsafeRawPointer, _ from: Int,
                                      _ mode: ScatterMode) {
    let v = UnsafeRawPointer(out).element(at, as: T.self)
    out.setElement(at, T.combine(v, updates.element(from, as: T.self), mode))
}

/// Reference `Op.scatter`: out[o, wrap(indices[j]), i] ⊕= updates[o, j, i] (o: the axes before
/// `axis`, j: the indices' elements in row-major order, i: the axes after).
final class ReferenceScatter: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .scatter(a) = ctx.node.op else { return nil }
        let data = ctx.inputTypes[0]
        let s = splitAxis(data.shape, normalizedAxis(a.axis, rank: data.rank))
        let m = ctx.inputTypes[1].elementCount, it = ctx.inputTypes[1].elementType
        let bytes = data.elementCount * data.elementType.byteSize, mode = a.mode
        return withScatterScalar(data.elementType) { type -> Kernel in
            func body<T: ScatterScalar>(_ t: T.Type) -> Body {
                { ins, outs in
                    outs[0].copyMemory(from: ins[0], byteCount: bytes)
                    for o in 0..<s.outer {
                        for j in 0..<m {
                            guard let k = wrapIndex(loadIndex(ins[1], it, j), s.n) else { continue }
                            for i in 0..<s.inner {
                                scatterCombine(t, outs[0], (o * s.n + k) * s.inner + i, ins[2], (o * m + j) * s.inner + i, mode)
                            }
                        }
                    }
                }
            }
            return ReferenceScatter(body(type))
        }
    }
}

/// Reference `Op.scatterND`: for each index tuple t (the last axis of indices, K entries, in
/// row-major order), out[wrap(t₀), …, wrap(t_{K−1}), s…] ⊕= updates[t, s…]; a tuple with an
/// out-of-range entry is skipped.
final class ReferenceScatterND: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .scatterND(mode) = ctx.node.op else { return nil }
        let data = ctx.inputTypes[0], ind = ctx.inputTypes[1]
        let k = ind.shape.last ?? 1
        let tuples = ind.elementCount / Swift.max(k, 1)
        let strides = rowMajorStrides(data.shape)
        let slice = data.shape[k...].reduce(1, *)
        let it = ind.elementType, bytes = data.elementCount * data.elementType.byteSize
        return withScatterScalar(data.elementType) { type -> Kernel in
            func body<T: ScatterScalar>(_ t: T.Type) -> Body {
                { ins, outs in
                    outs[0].copyMemory(from: ins[0], byteCount: bytes)
                    for tu in 0..<tuples {
                        var offset = 0, valid = true
                        for d in 0..<k {
                            guard let i = wrapIndex(loadIndex(ins[1], it, tu * k + d), data.shape[d]) else { valid = false; break }
                            offset += i * strides[d]
                        }
                        guard valid else { continue }
                        for e in 0..<slice { scatterCombine(t, outs[0], offset + e, ins[2], tu * slice + e, mode) }
                    }
                }
            }
            return ReferenceScatterND(body(type))
        }
    }
}

/// Reference `Op.scatterAlongAxis`: out[i with the axis coordinate wrap(indices[i])] ⊕= updates[i],
/// i over the indices' shape in row-major order.
final class ReferenceScatterAlongAxis: ReferenceTypedKernel {
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .scatterAlongAxis(a) = ctx.node.op else { return nil }
        let data = ctx.inputTypes[0], ind = ctx.inputTypes[1]
        let axis = normalizedAxis(a.axis, rank: data.rank)
        var ds = rowMajorStrides(data.shape)
        let axisStride = ds[axis], n = data.shape[axis]
        ds[axis] = 0
        let it = ind.elementType, shape = ind.shape, count = ind.elementCount
        let bytes = data.elementCount * data.elementType.byteSize, mode = a.mode
        return withScatterScalar(data.elementType) { type -> Kernel in
            func body<T: ScatterScalar>(_ t: T.Type) -> Body {
                { ins, outs in
                    outs[0].copyMemory(from: ins[0], byteCount: bytes)
                    var odo = Odometer(shape: shape, strides: [ds])
                    for o in 0..<count {
                        if let k = wrapIndex(loadIndex(ins[1], it, o), n) {
                            scatterCombine(t, outs[0], odo.offsets[0] + k * axisStride, ins[2], o, mode)
                        }
                        odo.advance()
                    }
                }
            }
            return ReferenceScatterAlongAxis(body(type))
        }
    }
}
