// Flexible input shapes (Core ML 2+, specificationVersion 3: `ArrayFeatureType.shapeRange` /
// `enumeratedShapes`, `ImageFeatureType.imageSizeRange` / `enumeratedSizes`) in the IR's layout.
// See docs/FLEXIBLE_SHAPES.md.
import Diagnostics

/// An interval of sizes one dimension may take (Core ML `SizeRange`): `lowerBound...upperBound`,
/// with `upperBound == -1` (`DimensionRange.unbounded`) meaning no upper bound.
public struct DimensionRange: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The `upperBound` of a range without an upper bound (Core ML writes −1).
    public static let unbounded = -1
    /// Smallest allowed size, ≥ 1.
    public var lowerBound: Int
    /// Largest allowed size (≥ `lowerBound`), or −1 for no upper bound.
    public var upperBound: Int

    public init(lowerBound: Int, upperBound: Int) {
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// The range holding `size` only.
    public static func fixed(_ size: Int) -> DimensionRange { DimensionRange(lowerBound: size, upperBound: size) }

    /// Whether the range has a single size.
    public var isFixed: Bool { lowerBound == upperBound }

    public func contains(_ size: Int) -> Bool {
        size >= lowerBound && (upperBound == DimensionRange.unbounded || size <= upperBound)
    }

    /// "224", "1...∞", "32...512".
    public var description: String {
        if isFixed { return "\(lowerBound)" }
        return "\(lowerBound)...\(upperBound == DimensionRange.unbounded ? "∞" : "\(upperBound)")"
    }
}

/// The shapes a model input accepts besides its default shape (the shape of its `ValueInfo`),
/// in the IR layout of that input (the graph input's own shape: e.g. [1, H, W, C] for an image,
/// [1, C, H, W] for a Core ML rank-5 multi-array [C, H, W], Core ML's own shape under
/// EXACT_ARRAY_MAPPING). Source: Core ML's `FeatureTypes.proto` (`ShapeFlexibility`,
/// `SizeFlexibility`).
public enum ShapeFlexibility: Hashable, Sendable, CustomStringConvertible {
    /// One range per dimension (Core ML `shapeRange`, image `imageSizeRange`).
    case ranges([DimensionRange])
    /// A list of allowed shapes (Core ML `enumeratedShapes`, image `enumeratedSizes`).
    case enumerated([[Int]])

    /// Most enumerated shapes a flexibility may list (a bound on what a file can make us store).
    public static let maximumEnumeratedShapes = 4096

    /// Rank of the shapes this flexibility describes (nil for an empty enumeration).
    public var rank: Int? {
        switch self {
        case let .ranges(r): return r.count
        case let .enumerated(s): return s.first?.count
        }
    }

    /// Whether `shape` is one of the allowed shapes.
    public func allows(_ shape: [Int]) -> Bool {
        switch self {
        case let .ranges(r): return r.count == shape.count && zip(r, shape).allSatisfy { $0.contains($1) }
        case let .enumerated(s): return s.contains(shape)
        }
    }

    /// "[1, 1...∞, 224, 224]" or "enumerated [[1, 3, 224, 224], [1, 3, 299, 299]]".
    public var description: String {
        switch self {
        case let .ranges(r): return "[" + r.map(\.description).joined(separator: ", ") + "]"
        case let .enumerated(s):
            return "enumerated [" + s.map { "[" + $0.map(String.init).joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
        }
    }

    /// Why this flexibility cannot describe an input of default shape `defaultShape`, or nil:
    /// every range needs 1 ≤ lowerBound ≤ upperBound (or upperBound −1) and rank = the default's
    /// rank; enumerated shapes need the default's rank, positive dimensions, at most 2⁴⁰
    /// elements, and there are at most `maximumEnumeratedShapes` of them. The default shape need
    /// not be listed (it is always accepted).
    public func problem(defaultShape: [Int]) -> String? {
        switch self {
        case let .ranges(r):
            guard r.count == defaultShape.count else {
                return "\(r.count) ranges for an input of rank \(defaultShape.count)"
            }
            for (i, d) in r.enumerated() {
                guard d.lowerBound >= 1, d.lowerBound <= TensorType.maxElementCount else {
                    return "dimension \(i): lower bound \(d.lowerBound) is not in 1...2^40"
                }
                guard d.upperBound == DimensionRange.unbounded || d.upperBound >= d.lowerBound else {
                    return "dimension \(i): upper bound \(d.upperBound) is below the lower bound \(d.lowerBound) (−1 means unbounded)"
                }
            }
            let lows = TensorType(r.map(\.lowerBound), .float32)
            if let p = lows.shapeProblem { return "the smallest allowed shape: \(p)" }
        case let .enumerated(s):
            guard !s.isEmpty else { return "no enumerated shape" }
            guard s.count <= ShapeFlexibility.maximumEnumeratedShapes else {
                return "\(s.count) enumerated shapes; at most \(ShapeFlexibility.maximumEnumeratedShapes) are supported"
            }
            for shape in s {
                guard shape.count == defaultShape.count else {
                    return "enumerated shape \(formatShape(shape)) has rank \(shape.count); the input has rank \(defaultShape.count)"
                }
                guard shape.allSatisfy({ $0 >= 1 }), TensorType(shape, .float32).shapeProblem == nil else {
                    return "enumerated shape \(formatShape(shape)) needs positive dimensions and at most 2^40 elements"
                }
            }
        }
        return nil
    }

    /// A few allowed shapes that exercise the flexibility, for checking a graph by shape
    /// inference: for ranges, the smallest shape, the default (when allowed) with each flexible
    /// dimension one larger (when allowed), and the largest shape when every range is bounded;
    /// for an enumeration, every shape. Shapes equal to `defaultShape` are left out.
    public func representativeShapes(defaultShape: [Int]) -> [[Int]] {
        var out: [[Int]] = []
        func add(_ s: [Int]) { if s != defaultShape, allows(s), !out.contains(s) { out.append(s) } }
        switch self {
        case let .enumerated(s): s.forEach(add)
        case let .ranges(r):
            add(r.map(\.lowerBound))
            if r.count == defaultShape.count {
                add(zip(r, defaultShape).map { $0.isFixed ? $1 : $1 + 1 })
            }
            if r.allSatisfy({ $0.upperBound != DimensionRange.unbounded }) { add(r.map(\.upperBound)) }
        }
        return out
    }
}

// The bundle's JSON: {"ranges": [{"lowerBound": 1, "upperBound": -1}, …]} or
// {"enumerated": [[1, 224, 224, 3], …]} (docs/BUNDLE_FORMAT.md §5.1).
extension ShapeFlexibility: Codable {
    private enum CodingKeys: String, CodingKey { case ranges, enumerated }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let r = try c.decodeIfPresent([DimensionRange].self, forKey: .ranges) {
            self = .ranges(r)
        } else if let s = try c.decodeIfPresent([[Int]].self, forKey: .enumerated) {
            self = .enumerated(s)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath,
                debugDescription: "a shape flexibility needs the key \"ranges\" or \"enumerated\""))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case let .ranges(r): try c.encode(r, forKey: .ranges)
        case let .enumerated(s): try c.encode(s, forKey: .enumerated)
        }
    }
}

extension Graph {
    /// The flexibility of graph input `name` (`FeatureDescription.shapeFlexibility`), or nil.
    public func shapeFlexibility(ofInput name: String) -> ShapeFlexibility? {
        description.inputs.first { $0.name == name }?.shapeFlexibility
    }

    /// Checks every input's flexibility against its default shape (`ShapeFlexibility.problem`)
    /// and that it describes a graph input.
    /// - Throws: `GraphError.invalidTopology` naming the input and the problem.
    public func validateShapeFlexibility() throws {
        for f in description.inputs {
            guard let flex = f.shapeFlexibility else { continue }
            guard let input = inputs.first(where: { $0.name == f.name }) else {
                throw GraphError.invalidTopology("feature '\(f.name)' has a flexible shape but is not a graph input")
            }
            if let p = flex.problem(defaultShape: input.type.shape) {
                throw GraphError.invalidTopology("input '\(f.name)' (default shape \(formatShape(input.type.shape))) has an invalid flexible shape \(flex): \(p)")
            }
        }
    }

    /// This graph with its inputs set to `shapes` (by input name; others keep their shape) and
    /// every tensor re-typed by `inferShapes()`: the graph a flexible-shape input resolves to.
    /// - Throws: `GraphError` naming the node whose shape rule refuses the new shapes.
    public func resolvingInputShapes(_ shapes: [String: [Int]]) throws -> Graph {
        var g = self
        for i in g.inputs.indices {
            guard let s = shapes[g.inputs[i].name] else { continue }
            g.inputs[i].type.shape = s
        }
        try g.inferShapes()
        return g
    }
}

/// A graph cannot take a flexible shape its input declares: at an allowed `shape` of `input`,
/// node `node` (the source layer, e.g. the Keras layer name) refuses its input shapes.
public struct FlexibleShapeError: Error, CustomStringConvertible, Equatable, Sendable {
    public var input: String
    public var flexibility: ShapeFlexibility
    /// The allowed input shape that fails (IR layout, batch first).
    public var shape: [Int]
    /// The node (layer) that refuses it, and its op; "" when the failure names no node.
    public var node: String
    public var op: String
    /// The shape rule's message.
    public var reason: String
    /// The underlying error when the refusal names no node (kept as a value, issue 13).
    public var cause: DiagnosticCause?

    public init(input: String, flexibility: ShapeFlexibility, shape: [Int], node: String, op: String, reason: String,
                cause: (any Error)? = nil) {
        self.input = input; self.flexibility = flexibility; self.shape = shape
        self.node = node; self.op = op; self.reason = reason; self.cause = cause.map(DiagnosticCause.init)
    }

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        let at = node.isEmpty ? "the graph" : "layer '\(node)' (\(op))"
        let detail = includingCause ? cause.appended(to: reason) : reason
        return "input '\(input)' is declared with the flexible shape \(flexibility), but \(at) cannot take the allowed shape "
            + "\(formatShape(shape))\(detail.isEmpty ? "" : ": " + detail). Keep the dimensions that layer depends on fixed (e.g. the spatial size before a "
            + "Flatten + Dense, or a Reshape to a fixed shape), or drop the flexibility."
    }
}

extension Graph {
    /// Checks by shape inference that every flexible input's representative shapes
    /// (`ShapeFlexibility.representativeShapes`) go through the graph, one input at a time
    /// (the others at their default shapes). A check, not a proof: unbounded ranges are tried at
    /// their lower bound and one above the default.
    /// - Throws: `GraphError` for an invalid flexibility (`validateShapeFlexibility`);
    ///   `FlexibleShapeError` naming the input, the shape and the refusing layer.
    public func checkFlexibleShapes() throws {
        try validateShapeFlexibility()
        for input in inputs {
            guard let flex = shapeFlexibility(ofInput: input.name) else { continue }
            for shape in flex.representativeShapes(defaultShape: input.type.shape) {
                do {
                    _ = try resolvingInputShapes([input.name: shape])
                } catch let GraphError.invalidNode(node, op, message) {
                    throw FlexibleShapeError(input: input.name, flexibility: flex, shape: shape, node: node, op: op, reason: message)
                } catch {
                    throw FlexibleShapeError(input: input.name, flexibility: flex, shape: shape, node: "", op: "", reason: "", cause: error)
                }
            }
        }
    }
}
