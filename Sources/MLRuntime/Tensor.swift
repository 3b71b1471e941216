import MLGraph

/// A dense float32 array with a shape, row-major (C order): the values that go in and out of
/// `Model.prediction(from:)` (Core ML's `MLMultiArray`, float32 only).
///
/// Layout: the last axis varies fastest; the element at multi-index (i₀, …, iₖ) is
/// `scalars[Σ iⱼ·stridesⱼ]`. Model tensors use the IR layout, channels-last with batch first
/// (images are [1, H, W, C]). A shape `[]` is a scalar holding one value.
public struct NDArray: Equatable, Sendable, CustomStringConvertible {
    /// Dimensions, each ≥ 0.
    public let shape: [Int]
    /// The values, row-major; `scalars.count` is always the product of `shape`.
    public private(set) var scalars: [Float]

    /// Wraps `scalars` with `shape`.
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
        self.scalars = scalars
    }

    /// An array of `shape` filled with `value`.
    /// - Precondition: every dimension is non-negative.
    public init(shape: [Int], repeating value: Float = 0) {
        precondition(shape.allSatisfy { $0 >= 0 }, "NDArray: negative dimension in \(shape)")
        self.shape = shape
        self.scalars = [Float](repeating: value, count: shape.reduce(1, *))
    }

    /// Number of elements (product of `shape`; 1 for a scalar).
    public var count: Int { scalars.count }
    /// Number of axes (0 for a scalar).
    public var rank: Int { shape.count }
    /// Row-major strides in elements.
    public var strides: [Int] { rowMajorStrides(shape) }

    /// The element at a full multi-index (one index per axis).
    /// - Precondition: `indices.count == rank` and each index is within its dimension.
    public subscript(indices: Int...) -> Float {
        get { scalars[flatIndex(indices)] }
        set { scalars[flatIndex(indices)] = newValue }
    }

    /// The same values with another shape of equal element count.
    /// - Throws: `RuntimeError.invalidArray` when the element counts differ.
    public func reshaped(_ newShape: [Int]) throws -> NDArray {
        try NDArray(shape: newShape, scalars: scalars)
    }

    /// Calls `body` with the values for in-place modification (the count cannot change).
    public mutating func withUnsafeMutableBufferPointer<R>(_ body: (inout UnsafeMutableBufferPointer<Float>) throws -> R) rethrows -> R {
        try scalars.withUnsafeMutableBufferPointer(body)
    }

    /// Calls `body` with the values.
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try scalars.withUnsafeBufferPointer(body)
    }

    /// `NDArray(1, 3)[1.0, 2.0, 3.0]`, at most 8 values shown.
    public var description: String {
        let head = scalars.prefix(8).map { "\($0)" }.joined(separator: ", ")
        return "NDArray\(formatShape(shape))[\(head)\(scalars.count > 8 ? ", …" : "")]"
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
