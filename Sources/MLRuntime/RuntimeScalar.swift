import MLGraph

/// A value in transit between element types, for MIL `cast` semantics: integers (and booleans as
/// 0/1) exactly, floating-point values as Double (exact for float32 and float16).
enum CastValue {
    case int(Int64)
    case float(Double)
}

/// The Swift storage type of each `ElementType`: Float (float32), Float16, Int32, Int64, and UInt8
/// for bool (0 or 1; any non-zero byte reads as true). Conversions follow MIL `cast`:
/// - float → int: truncation toward zero, saturating at the type's bounds; NaN → 0 (MIL and
///   NumPy leave these undefined);
/// - int64 → int32: two's-complement wrap (NumPy `astype`);
/// - int → float: round to nearest;
/// - anything → bool: value ≠ 0 (NaN → true, as NumPy); bool → number: 0 or 1.
protocol RuntimeScalar: Comparable, Sendable {
    static var elementType: ElementType { get }
    init(cast value: CastValue)
    var castValue: CastValue { get }
    /// True only for a floating-point NaN.
    var isNaNValue: Bool { get }
}

extension Float: RuntimeScalar {
    static var elementType: ElementType { .float32 }
    init(cast v: CastValue) {
        switch v { case let .int(i): self = Float(i); case let .float(d): self = Float(d) }
    }
    var castValue: CastValue { .float(Double(self)) }
    var isNaNValue: Bool { isNaN }
}

extension Float16: RuntimeScalar {
    static var elementType: ElementType { .float16 }
    init(cast v: CastValue) {
        switch v { case let .int(i): self = Float16(Float(i)); case let .float(d): self = Float16(d) }
    }
    var castValue: CastValue { .float(Double(self)) }
    var isNaNValue: Bool { isNaN }
}

/// Float → integer: truncation toward zero, saturating; NaN → 0.
@inline(__always)
func saturatingInteger<T: FixedWidthInteger>(_ d: Double, _: T.Type) -> T {
    if d.isNaN { return 0 }
    let t = d.rounded(.towardZero)
    if t >= Double(T.max) { return T.max }  // Double(Int64.max) is 2^63, itself out of range
    if t <= Double(T.min) { return T.min }
    return T(t)
}

extension Int32: RuntimeScalar {
    static var elementType: ElementType { .int32 }
    init(cast v: CastValue) {
        switch v { case let .int(i): self = Int32(truncatingIfNeeded: i); case let .float(d): self = saturatingInteger(d, Int32.self) }
    }
    var castValue: CastValue { .int(Int64(self)) }
    var isNaNValue: Bool { false }
}

extension Int64: RuntimeScalar {
    static var elementType: ElementType { .int64 }
    init(cast v: CastValue) {
        switch v { case let .int(i): self = i; case let .float(d): self = saturatingInteger(d, Int64.self) }
    }
    var castValue: CastValue { .int(self) }
    var isNaNValue: Bool { false }
}

/// Bool storage: one byte, 0 or 1.
extension UInt8: RuntimeScalar {
    static var elementType: ElementType { .bool }
    init(cast v: CastValue) {
        switch v { case let .int(i): self = i != 0 ? 1 : 0; case let .float(d): self = d != 0 ? 1 : 0 }
    }
    var castValue: CastValue { .int(self != 0 ? 1 : 0) }
    var isNaNValue: Bool { false }
}

/// Something run once per element type: `ElementType.dispatch` calls `visit` with the type's
/// Swift storage type, so a kernel writes one generic body for all element types.
protocol ElementTypeVisitor {
    associatedtype Result
    func visit<T: RuntimeScalar>(_ type: T.Type) -> Result
}

extension ElementType {
    /// Calls `visitor.visit` with this type's storage type (Float, Float16, Int32, Int64, UInt8).
    func dispatch<V: ElementTypeVisitor>(_ visitor: V) -> V.Result {
        switch self {
        case .float32: return visitor.visit(Float.self)
        case .float16: return visitor.visit(Float16.self)
        case .int32: return visitor.visit(Int32.self)
        case .int64: return visitor.visit(Int64.self)
        case .bool: return visitor.visit(UInt8.self)
        }
    }
}

// MARK: - Raw buffer access (typed kernels)

extension UnsafeRawPointer {
    /// Element `i` of a buffer of `T`s.
    @inline(__always) func element<T>(_ i: Int, as _: T.Type = T.self) -> T {
        load(fromByteOffset: i &* MemoryLayout<T>.stride, as: T.self)
    }
}

extension UnsafeMutableRawPointer {
    /// Stores `v` as element `i` of a buffer of `T`s.
    @inline(__always) func setElement<T>(_ i: Int, _ v: T) {
        storeBytes(of: v, toByteOffset: i &* MemoryLayout<T>.stride, as: T.self)
    }
}

/// Converts `count` elements of type `from` at `src` to type `to` at `dst` (MIL `cast`
/// semantics, see `RuntimeScalar`). `src` and `dst` must not overlap unless the types are equal.
func convertElements(_ src: UnsafeRawPointer, _ from: ElementType, _ dst: UnsafeMutableRawPointer, _ to: ElementType, count: Int) {
    if from == to {
        if UnsafeRawPointer(dst) != src { dst.copyMemory(from: src, byteCount: count * from.byteSize) }
        return
    }
    struct Outer: ElementTypeVisitor {
        let src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, to: ElementType, count: Int
        func visit<S: RuntimeScalar>(_: S.Type) { to.dispatch(ConvertInto<S>(src: src, dst: dst, count: count)) }
    }
    from.dispatch(Outer(src: src, dst: dst, to: to, count: count))
}

/// Second half of `convertElements`: source type `S` fixed, visits the destination type.
private struct ConvertInto<S: RuntimeScalar>: ElementTypeVisitor {
    let src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, count: Int
    func visit<D: RuntimeScalar>(_: D.Type) {
        for i in 0..<count { dst.setElement(i, D(cast: src.element(i, as: S.self).castValue)) }
    }
}
