/// Element type of a runtime tensor (activations). Weights have their own `WeightEncoding`.
public enum ElementType: String, Codable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case float32
    case float16
    case int32
    case int64
    /// Boolean, one byte per element: 0 is false, 1 is true (kernels write only 0 or 1 and read
    /// any non-zero byte as true).
    case bool

    /// Size of one element in bytes.
    public var byteSize: Int {
        switch self {
        case .float32, .int32: return 4
        case .float16: return 2
        case .int64: return 8
        case .bool: return 1
        }
    }

    /// Whether the type is a floating-point type (float32, float16).
    public var isFloatingPoint: Bool { self == .float32 || self == .float16 }
    /// Whether the type is an integer type (int32, int64).
    public var isInteger: Bool { self == .int32 || self == .int64 }

    /// The MIL dtype name (`fp32`, `fp16`, `int32`, `int64`, `bool`), as MIL `cast` spells it.
    public var milName: String {
        switch self {
        case .float32: return "fp32"
        case .float16: return "fp16"
        case .int32: return "int32"
        case .int64: return "int64"
        case .bool: return "bool"
        }
    }

    /// The type with MIL dtype name `name` (see `milName`), or nil.
    public init?(milName name: String) {
        guard let t = ElementType.allCases.first(where: { $0.milName == name }) else { return nil }
        self = t
    }

    public var description: String { rawValue }
}

/// The static type of a tensor in the graph: a concrete shape and an element type.
///
/// Layout convention of the IR (see docs/ARCHITECTURE.md): activations are **channels-last with a
/// leading batch dimension**, as in Keras: rank 4 is NHWC, rank 3 is NWC (batch, steps, features),
/// rank 2 is NC. The batch dimension is concrete (1 unless the user compiles for another size).
public struct TensorType: Codable, Hashable, Sendable, CustomStringConvertible {
    public var shape: [Int]
    public var elementType: ElementType

    public init(_ shape: [Int], _ elementType: ElementType = .float32) {
        self.shape = shape
        self.elementType = elementType
    }

    public var rank: Int { shape.count }
    /// Number of elements (product of the dimensions; 1 for a scalar).
    public var elementCount: Int { shape.reduce(1, *) }

    public var description: String {
        "\(elementType)[" + shape.map(String.init).joined(separator: "×") + "]"
    }
}

/// Formats a shape as `(1, 8, 8, 3)` for messages.
public func formatShape(_ shape: [Int]) -> String {
    "(" + shape.map(String.init).joined(separator: ", ") + ")"
}
