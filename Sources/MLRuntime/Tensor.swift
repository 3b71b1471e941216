import MLGraph

/// A dense array with a shape and an element type, row-major (C order): the values that go in and
/// out of `Model.prediction(from:)` (Core ML's `MLMultiArray`).
///
/// Element types: float32 (the default, and the only one of arrays built from `scalars`), float16,
/// int32, int64 and bool (`ElementType`). `scalars` is always available as a float32 view: the
/// values themselves for float32; for other types each value converted to Float (exact for float16,
/// bool, and integers up to 2^24 in magnitude). Typed values are read with `int32s`, `int64s`,
/// `float16s`, `bools` or `withUnsafeBytes`.
///
/// Layout: the last axis varies fastest; the element at multi-index (i₀, …, iₖ) is
/// `scalars[Σ iⱼ·stridesⱼ]`. Model tensors use the IR layout, channels-last with batch first
/// (images are [1, H, W, C]). A shape `[]` is a scalar holding one value.
public struct NDArray: Equatable, Sendable, CustomStringConvertible {
    /// Dimensions, each ≥ 0.
    public let shape: [Int]
    /// The element type of the values (float32 for arrays built from floats).
    public let elementType: ElementType
    /// The values, row-major, as float32 (see the type's documentation for non-float32 arrays);
    /// `scalars.count` is always the product of `shape`.
    public private(set) var scalars: [Float]
    /// The values of a non-float32 array: little-endian bytes, `byteSize` per element (empty for
    /// float32, whose values are `scalars`).
    private var storage: [UInt8]

    /// Wraps float32 `scalars` with `shape`.
    /// - Throws: `RuntimeError.invalidArray` when a dimension is negative or `scalars.count`
    ///   differs from the product of `shape`.
    public init(shape: [Int], scalars: [Float]) throws {
        guard shape.allSatisfy({ $0 >= 0 }) else {
            throw RuntimeError.invalidArray(shape: shape, elementCount: scalars.count, message: "dimensions must be non-negative")
        }
        let n = shape.reduce(1, *)
        guard n == scalars.count else {
            throw RuntimeError.invalidArray(shape: shape, elementCount: scalars.count,
                                            message: "the shape needs \(n) values")
        }
        self.shape = shape
        self.elementType = .float32
        self.scalars = scalars
        self.storage = []
    }

    /// An array of `shape` filled with `value` (float32).
    /// - Precondition: every dimension is non-negative.
    public init(shape: [Int], repeating value: Float = 0) {
        precondition(shape.allSatisfy { $0 >= 0 }, "NDArray: negative dimension in \(shape)")
        self.shape = shape
        self.elementType = .float32
        self.scalars = [Float](repeating: value, count: shape.reduce(1, *))
        self.storage = []
    }

    /// An array of `elementType` from its raw little-endian bytes (`elementType.byteSize` per
    /// element, row-major; bool: one byte, non-zero is true).
    /// - Throws: `RuntimeError.invalidArray` when a dimension is negative or `bytes.count` is not
    ///   the element count times the element size.
    public init(shape: [Int], elementType: ElementType, bytes: [UInt8]) throws {
        guard shape.allSatisfy({ $0 >= 0 }) else {
            throw RuntimeError.invalidArray(shape: shape, elementCount: bytes.count / elementType.byteSize, message: "dimensions must be non-negative")
        }
        let n = shape.reduce(1, *)
        guard bytes.count == n * elementType.byteSize else {
            throw RuntimeError.invalidArray(shape: shape, elementCount: bytes.count / elementType.byteSize,
                                            message: "the shape needs \(n) \(elementType) values (\(n * elementType.byteSize) bytes), found \(bytes.count) bytes")
        }
        self.shape = shape
        self.elementType = elementType
        if elementType == .float32 {
            var f = [Float](repeating: 0, count: n)
            f.withUnsafeMutableBytes { dst in bytes.withUnsafeBytes { dst.copyMemory(from: $0) } }
            self.scalars = f
            self.storage = []
        } else {
            var b = bytes
            if elementType == .bool { for i in b.indices where b[i] > 1 { b[i] = 1 } }
            self.storage = b
            self.scalars = [Float](repeating: 0, count: n)
            self.scalars.withUnsafeMutableBytes { dst in
                b.withUnsafeBytes { src in
                    if let d = dst.baseAddress, let s = src.baseAddress { convertElements(s, elementType, d, .float32, count: n) }
                }
            }
        }
    }

    /// An int32 array. - Throws: `RuntimeError.invalidArray` as `init(shape:scalars:)`.
    public init(shape: [Int], int32s: [Int32]) throws { try self.init(shape: shape, typed: int32s) }
    /// An int64 array. - Throws: `RuntimeError.invalidArray` as `init(shape:scalars:)`.
    public init(shape: [Int], int64s: [Int64]) throws { try self.init(shape: shape, typed: int64s) }
    /// A float16 array. - Throws: `RuntimeError.invalidArray` as `init(shape:scalars:)`.
    public init(shape: [Int], float16s: [Float16]) throws { try self.init(shape: shape, typed: float16s) }
    /// A bool array. - Throws: `RuntimeError.invalidArray` as `init(shape:scalars:)`.
    public init(shape: [Int], bools: [Bool]) throws { try self.init(shape: shape, typed: bools.map { UInt8($0 ? 1 : 0) }) }

    init<T: RuntimeScalar>(shape: [Int], typed values: [T]) throws {
        try NDArray.check(shape, count: values.count)
        let bytes = values.withUnsafeBytes { Array($0) }
        try self.init(shape: shape, elementType: T.elementType, bytes: bytes)
    }

    private static func check(_ shape: [Int], count: Int) throws {
        guard shape.allSatisfy({ $0 >= 0 }) else {
            throw RuntimeError.invalidArray(shape: shape, elementCount: count, message: "dimensions must be non-negative")
        }
        let n = shape.reduce(1, *)
        guard n == count else {
            throw RuntimeError.invalidArray(shape: shape, elementCount: count, message: "the shape needs \(n) values")
        }
    }

    /// Number of elements (product of `shape`; 1 for a scalar).
    public var count: Int { scalars.count }
    /// Number of axes (0 for a scalar).
    public var rank: Int { shape.count }
    /// Row-major strides in elements.
    public var strides: [Int] { rowMajorStrides(shape) }

    /// The element at a full multi-index (one index per axis), as float32. Setting converts the
    /// value to the array's element type (MIL `cast` semantics: truncation toward zero for
    /// integers, ≠ 0 for bool).
    /// - Precondition: `indices.count == rank` and each index is within its dimension.
    public subscript(indices: Int...) -> Float {
        get { scalars[flatIndex(indices)] }
        set {
            let i = flatIndex(indices)
            scalars[i] = newValue
            if elementType != .float32 { resync(from: i, count: 1) }
        }
    }

    /// The same values with another shape of equal element count (same element type).
    /// - Throws: `RuntimeError.invalidArray` when the element counts differ.
    public func reshaped(_ newShape: [Int]) throws -> NDArray {
        if elementType == .float32 { return try NDArray(shape: newShape, scalars: scalars) }
        try NDArray.check(newShape, count: count)
        return try NDArray(shape: newShape, elementType: elementType, bytes: storage)
    }

    /// The values converted to `type` (MIL `cast` semantics, see `RuntimeScalar`); self when the
    /// type is already `type`.
    public func converted(to type: ElementType) -> NDArray {
        if type == elementType { return self }
        var bytes = [UInt8](repeating: 0, count: count * type.byteSize)
        withUnsafeBytes { src in
            bytes.withUnsafeMutableBytes { dst in
                if let s = src.baseAddress, let d = dst.baseAddress { convertElements(s, elementType, d, type, count: count) }
            }
        }
        // The byte count matches the shape by construction.
        return (try? NDArray(shape: shape, elementType: type, bytes: bytes)) ?? NDArray(shape: shape)
    }

    /// Calls `body` with the values' raw little-endian bytes (`elementType.byteSize` per element).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        elementType == .float32 ? try scalars.withUnsafeBytes(body) : try storage.withUnsafeBytes(body)
    }

    /// The values as int32 (converted with MIL `cast` semantics when the array is another type).
    public var int32s: [Int32] { typedValues() }
    /// The values as int64 (converted with MIL `cast` semantics when the array is another type).
    public var int64s: [Int64] { typedValues() }
    /// The values as float16 (rounded when the array is another type).
    public var float16s: [Float16] { typedValues() }
    /// The values as booleans (value ≠ 0 when the array is another type).
    public var bools: [Bool] { (typedValues() as [UInt8]).map { $0 != 0 } }

    func typedValues<T: RuntimeScalar>() -> [T] {
        let c = converted(to: T.elementType)
        return c.withUnsafeBytes { raw in (0..<count).map { raw.baseAddress!.element($0, as: T.self) } }
    }

    /// Calls `body` with the float32 values for in-place modification (the count cannot change);
    /// for a non-float32 array the modified values are then converted back to its element type.
    public mutating func withUnsafeMutableBufferPointer<R>(_ body: (inout UnsafeMutableBufferPointer<Float>) throws -> R) rethrows -> R {
        defer { if elementType != .float32 { resync(from: 0, count: count) } }
        return try scalars.withUnsafeMutableBufferPointer(body)
    }

    /// Calls `body` with the float32 values (see `scalars`).
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try scalars.withUnsafeBufferPointer(body)
    }

    /// Re-encodes `storage` (and re-reads `scalars`) for elements `from..<from+count` after the
    /// float view was modified.
    private mutating func resync(from: Int, count: Int) {
        guard count > 0 else { return }
        let t = elementType, size = t.byteSize
        scalars.withUnsafeBytes { src in
            storage.withUnsafeMutableBytes { dst in
                convertElements(src.baseAddress! + from * 4, .float32, dst.baseAddress! + from * size, t, count: count)
            }
        }
        storage.withUnsafeBytes { src in
            scalars.withUnsafeMutableBytes { dst in
                convertElements(src.baseAddress! + from * size, t, dst.baseAddress! + from * 4, .float32, count: count)
            }
        }
    }

    /// `NDArray(1, 3)[1.0, 2.0, 3.0]` (float32) or `NDArray<int32>(1, 3)[1, 2, 3]`, at most 8
    /// values shown.
    public var description: String {
        let head: String
        switch elementType {
        case .float32, .float16: head = scalars.prefix(8).map { "\($0)" }.joined(separator: ", ")
        case .bool: head = bools.prefix(8).map { "\($0)" }.joined(separator: ", ")
        case .int32, .int64: head = int64s.prefix(8).map { "\($0)" }.joined(separator: ", ")
        }
        let type = elementType == .float32 ? "" : "<\(elementType)>"
        return "NDArray\(type)\(formatShape(shape))[\(head)\(scalars.count > 8 ? ", …" : "")]"
    }

    private func flatIndex(_ indices: [Int]) -> Int {
        precondition(indices.count == shape.count, "NDArray: \(indices.count) indices for rank \(shape.count)")
        var flat = 0
        for (i, d) in zip(indices, shape) {
            precondition(i >= 0 && i < d, "NDArray: index \(indices) out of range for shape \(shape)")
            flat = flat * d + i
        }
        return flat
    }
}

/// A read-only view of a float32 tensor inside the runtime's memory (custom layer inputs):
/// `count` values at `baseAddress`, row-major with `shape` in the IR layout (channels-last, batch
/// first: images are [N, H, W, C]). Valid only during the call it is passed to.
public struct NDArrayView {
    /// Dimensions, batch first.
    public let shape: [Int]
    /// First value; `count` values follow.
    public let baseAddress: UnsafePointer<Float>

    /// Views `shape.reduce(1, *)` values at `baseAddress` (not copied, not owned).
    public init(shape: [Int], baseAddress: UnsafePointer<Float>) {
        self.shape = shape; self.baseAddress = baseAddress
    }

    /// Number of elements (product of `shape`).
    public var count: Int { shape.reduce(1, *) }
    /// Row-major strides in elements.
    public var strides: [Int] { rowMajorStrides(shape) }
    /// The values as a buffer of `count` elements.
    public var buffer: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: baseAddress, count: count) }
    /// Element at flat (row-major) index `i`.
    public subscript(i: Int) -> Float { baseAddress[i] }
    /// A copy as an `NDArray`.
    public func toNDArray() -> NDArray { try! NDArray(shape: shape, scalars: Array(buffer)) }
}

/// A writable view of a float32 tensor inside the runtime's memory (custom layer outputs); same
/// layout as `NDArrayView`. Its contents are undefined on entry: write every element.
public struct NDArrayMutableView {
    /// Dimensions, batch first.
    public let shape: [Int]
    /// First value; `count` values follow.
    public let baseAddress: UnsafeMutablePointer<Float>

    /// Views `shape.reduce(1, *)` values at `baseAddress` (not copied, not owned).
    public init(shape: [Int], baseAddress: UnsafeMutablePointer<Float>) {
        self.shape = shape; self.baseAddress = baseAddress
    }

    /// Number of elements (product of `shape`).
    public var count: Int { shape.reduce(1, *) }
    /// Row-major strides in elements.
    public var strides: [Int] { rowMajorStrides(shape) }
    /// The values as a writable buffer of `count` elements.
    public var buffer: UnsafeMutableBufferPointer<Float> { UnsafeMutableBufferPointer(start: baseAddress, count: count) }
    /// Element at flat (row-major) index `i`. Setting through a `let` view is allowed: the view
    /// does not own the memory.
    public subscript(i: Int) -> Float {
        get { baseAddress[i] }
        nonmutating set { baseAddress[i] = newValue }
    }
}

/// Row-major strides (in elements) of `shape`: the last axis has stride 1.
func rowMajorStrides(_ shape: [Int]) -> [Int] {
    var s = [Int](repeating: 1, count: shape.count)
    var acc = 1
    for i in stride(from: shape.count - 1, through: 0, by: -1) {
        s[i] = acc
        acc *= shape[i]
    }
    return s
}
