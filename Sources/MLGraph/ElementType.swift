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
public struct TensorType: Hashable, Sendable, CustomStringConvertible {
    /// The dimensions; `TensorType.unknown` (−1) marks a dimension known only at prediction time
    /// (docs/ARCHITECTURE.md, "Control flow and dynamic shapes"). For a list, the element shape.
    public var shape: [Int]
    public var elementType: ElementType
    /// Whether the value is a tensor list (MIL `List`): a run-time sequence of tensors, each of
    /// element type `elementType` and shape `shape` (unknown dimensions allowed), of a length
    /// known only at prediction time. Only the list ops, `cond` and `whileLoop` take or give lists.
    public var isList: Bool

    /// The dimension value meaning "known at prediction time".
    public static let unknown = -1

    public init(_ shape: [Int], _ elementType: ElementType = .float32) {
        self.shape = shape
        self.elementType = elementType
        self.isList = false
    }

    /// The type of a tensor list whose elements have `elementShape` (unknown dimensions allowed)
    /// and `elementType`.
    public static func list(elementShape: [Int], _ elementType: ElementType = .float32) -> TensorType {
        var t = TensorType(elementShape, elementType)
        t.isList = true
        return t
    }

    public var rank: Int { shape.count }
    /// Number of elements (product of the dimensions; 1 for a scalar). Meaningful only when
    /// `isFullyKnown`.
    public var elementCount: Int { shape.reduce(1, *) }
    /// Whether every dimension is known and the value is a tensor (not a list).
    public var isFullyKnown: Bool { !isList && !shape.contains(TensorType.unknown) }

    public var description: String {
        (isList ? "list<" : "") + "\(elementType)[" + shape.map { $0 == TensorType.unknown ? "?" : String($0) }.joined(separator: "×") + "]"
            + (isList ? ">" : "")
    }
}

extension TensorType: Codable {
    private enum CodingKeys: String, CodingKey { case shape, elementType, list }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        shape = try c.decode([Int].self, forKey: .shape)
        elementType = try c.decode(ElementType.self, forKey: .elementType)
        isList = try c.decodeIfPresent(Bool.self, forKey: .list) ?? false
    }
    /// `list` is written only for lists, so tensor types encode as before.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(elementType, forKey: .elementType)
        try c.encode(shape, forKey: .shape)
        if isList { try c.encode(true, forKey: .list) }
    }
}

/// Formats a shape as `(1, 8, 8, 3)` for messages.
public func formatShape(_ shape: [Int]) -> String {
    "(" + shape.map(String.init).joined(separator: ", ") + ")"
}
