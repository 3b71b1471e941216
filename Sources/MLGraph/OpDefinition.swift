/// A weight role of an op: the name under which a constant is attached to `Node.weights`, and how
/// weight compression treats it.
public struct WeightRole: Hashable, Sendable {
    /// The key in `Node.weights` ("weight", "bias", "gamma", …).
    public var name: String
    /// Per-channel axis of linear quantization (one scale per slice along it — the output-channel
    /// axis of Core ML's weight layout), or nil for one scale for the whole tensor.
    public var quantizationAxis: Int?
    /// Whether `mlconv quantize` compresses this role by default (coremltools compresses
    /// convolution / inner-product / embedding weights and biases, batch-norm statistics).
    public var quantizedByDefault: Bool

    public init(_ name: String, quantizationAxis: Int? = 0, quantizedByDefault: Bool = true) {
        self.name = name; self.quantizationAxis = quantizationAxis; self.quantizedByDefault = quantizedByDefault
    }
}

/// One function of an op kind whose attribute selects among several (activation, unary, binary,
/// elementwise, reduce, compare, logical): its name as MIL (or Keras, for activations) names it,
/// and an example node configuration, which `mlconv ops` uses to list the function and to ask
/// each kernel table whether it covers it.
public struct OpFunctionExample: Sendable {
    public var name: String
    public var op: Op
    /// Input types of the example (small float32 tensors, bool for logical ops).
    public var inputs: [TensorType]
    public init(_ name: String, _ op: Op, inputs: [TensorType]) { self.name = name; self.op = op; self.inputs = inputs }
}

/// Why Core ML's NeuralNetwork writer (`CoreMLExporter`: classic spec ≤ 3 layers, or rank-N
/// spec 4–5 layers when the graph needs them) cannot express an op, and what to do instead. An op defines one when the exporter has no
/// lowering for it; `ExportCoverageTests` checks that every kind is lowered or refused so.
public struct NeuralNetworkExportRefusal: Sendable, Hashable {
    public var reason: String
    public var suggestion: String
    public init(reason: String, suggestion: String) { self.reason = reason; self.suggestion = suggestion }

    /// Integer and bool tensors the writer cannot represent (its blobs are float; the rank-N
    /// writer holds integer and bool values as floats, so no op uses this any more).
    public static let integerTensors = NeuralNetworkExportRefusal(
        reason: "it produces or reads integer / bool tensors, which the classic (spec ≤ 3) NeuralNetwork layout cannot hold",
        suggestion: "Keep the op out of graphs exported to .mlmodel (run them with mlconv), or export an ML Program with coremltools.")
    /// Blocks, tensor lists and run-time shapes.
    public static let controlFlow = NeuralNetworkExportRefusal(
        reason: "it needs control flow, tensor lists or run-time shapes; the writer emits static NeuralNetwork layer graphs (classic or rank-N) without branch / loop layers",
        suggestion: "Run the model with mlconv (bundle or predict), or export an ML Program with coremltools.")
}

/// Everything the IR knows about one op kind, defined in one file under `Sources/MLGraph/Ops/`:
/// its correspondences in other formats, attribute validation, type and shape inference, and
/// weight roles. Kernels, converters and codecs live in their own modules, in tables keyed by
/// `OpKind` (see docs/ARCHITECTURE.md, "Where to add an op").
public protocol OpDefinition {
    /// The op kind this type defines.
    static var kind: OpKind { get }
    /// One line for `mlconv ops` and error messages: what the op computes.
    static var summary: String { get }
    /// MIL op names (coremltools `converters/mil/mil/ops/defs`) this op implements, or expresses
    /// with its attributes.
    static var milOps: [String] { get }
    /// ONNX operator names this op corresponds to.
    static var onnxOps: [String] { get }

    /// Checks attribute values (array lengths, signs, magnitudes) so that shape inference and
    /// kernels can index them and no size computation overflows, whatever a file contained.
    /// Runs before `inferOutputTypes`. - Throws: `GraphError.invalidNode` (use `node.fail`).
    static func checkAttributes(of node: Node) throws

    /// The output types for input types `inputs`; also checks the weights' shapes.
    /// Inputs are already known to have valid shapes. - Throws: `GraphError.invalidNode`.
    static func inferOutputTypes(of node: Node, inputs: [TensorType]) throws -> [TensorType]

    /// The op's attributes by stable name, for the explicit graph encoding (docs/BUNDLE_FORMAT.md).
    /// Called only with an op of this kind.
    static func encodeAttributes(of op: Op) -> [String: AttributeValue]

    /// The op of this kind with the attributes `attributes` (written by `encodeAttributes`).
    /// - Throws: `GraphError.invalidAttribute` for a missing or mistyped attribute.
    static func decodeOp(from attributes: AttributeReader) throws -> Op

    /// Why the Core ML NeuralNetwork writer cannot express this op (nil when it lowers it).
    static var neuralNetworkExportRefusal: NeuralNetworkExportRefusal? { get }

    /// For op kinds whose attribute selects a function: one example per function (else empty).
    static var functions: [OpFunctionExample] { get }

    /// Every weight role a node of this kind may carry (none for ops without weights); a node
    /// need not carry all of them (optional biases, a single direction).
    static var weightRoles: [WeightRole] { get }

    /// Whether `inferOutputTypes` handles inputs with unknown dimensions and tensor lists itself
    /// (control flow, list ops, `shape`). Default false: such inputs are refused (lists) or go
    /// through `Node.inferOutputTypes`' probing of unknown dimensions.
    static var acceptsDynamicTypes: Bool { get }
}

extension OpDefinition {
    public static var onnxOps: [String] { [] }
    public static var functions: [OpFunctionExample] { [] }
    public static var neuralNetworkExportRefusal: NeuralNetworkExportRefusal? { nil }
    public static func checkAttributes(of node: Node) throws {}
    public static var weightRoles: [WeightRole] { [] }
    public static var acceptsDynamicTypes: Bool { false }
}

// MARK: - Helpers for op definitions (checked arithmetic, uniform messages)

extension Node {
    /// Largest window attribute (kernel, stride, dilation, scale) and padding / pad / crop amount.
    public static let maxWindowAttribute = 1 << 20
    /// Largest count attribute (channels, groups, units, repeats).
    public static let maxCountAttribute = 1 << 24
    /// Largest rank of a tensor an op may produce or name in an attribute.
    public static let maxRank = 32

    /// A `GraphError.invalidNode` naming this node and its op.
    public func fail(_ message: String) -> GraphError {
        GraphError.invalidNode(node: name, op: op.name, message: message)
    }

    func expectInputs(_ ins: [TensorType], _ n: Int) throws {
        guard ins.count == n else { throw fail("expects \(n) input(s), found \(ins.count)") }
    }

    func expectInputs(_ ins: [TensorType], atLeast n: Int) throws {
        guard ins.count >= n else { throw fail("expects at least \(n) input(s), found \(ins.count)") }
    }

    func expectRank(_ t: TensorType, _ r: Int, _ what: String = "input") throws {
        guard t.rank == r else { throw fail("expects a rank-\(r) \(what), found shape \(formatShape(t.shape))") }
    }

    /// Checks that weight `key` exists (unless `optional`) and has `shape` (when given).
    func expectWeight(_ key: String, shape: [Int]?, optional: Bool = false) throws {
        guard let w = weights[key] else {
            if optional { return }
            throw fail("missing weight '\(key)'" + (shape.map { " of shape \(formatShape($0))" } ?? ""))
        }
        if let shape, w.shape != shape {
            throw fail("weight '\(key)' should have shape \(formatShape(shape)), found \(formatShape(w.shape))")
        }
    }

    /// Two integers in `min…maxWindowAttribute` (kernel, strides, dilations, scales).
    func checkPair(_ v: [Int], _ what: String, min: Int = 1) throws {
        let w = Node.maxWindowAttribute
        guard v.count == 2, v.allSatisfy({ $0 >= min && $0 <= w }) else {
            throw fail("\(what) must be two integers in \(min)…\(w), found \(v)")
        }
    }

    /// `count` integers in `min…maxWindowAttribute`.
    func checkWindow(_ v: [Int], count: Int, _ what: String, min: Int = 1) throws {
        let w = Node.maxWindowAttribute
        guard v.count == count, v.allSatisfy({ $0 >= min && $0 <= w }) else {
            throw fail("\(what) must be \(count) integers in \(min)…\(w), found \(v)")
        }
    }

    func checkPadding(_ p: PaddingMode) throws {
        let w = Node.maxWindowAttribute
        if case let .explicit(t, b, l, r) = p, ![t, b, l, r].allSatisfy({ $0 >= 0 && $0 <= w }) {
            throw fail("explicit padding must be in 0…\(w), found \([t, b, l, r])")
        }
    }

    func checkCount(_ v: Int, _ what: String) throws {
        guard v >= 1, v <= Node.maxCountAttribute else {
            throw fail("\(what) must be in 1…\(Node.maxCountAttribute), found \(v)")
        }
    }

    /// [before, after] pairs in 0…maxWindowAttribute, at most `maxRank` of them.
    func checkAmounts(_ v: [[Int]], _ what: String) throws {
        let w = Node.maxWindowAttribute
        guard v.count <= Node.maxRank, v.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0 >= 0 && $0 <= w } }) else {
            throw fail("\(what) must be [before, after] pairs in 0…\(w), found \(v)")
        }
    }

    /// A finite float attribute.
    func checkFinite(_ v: Float, _ what: String) throws {
        guard v.isFinite else { throw fail("\(what) must be finite, found \(v)") }
    }

    /// Resolves a possibly negative axis (NumPy / MIL convention: −1 is the last axis) against `rank`.
    func resolveAxis(_ axis: Int, rank: Int, _ what: String = "axis") throws -> Int {
        guard axis >= -rank, axis < rank else {
            throw fail("\(what) \(axis) is out of range for rank \(rank) (valid: \(-rank)…\(rank - 1))")
        }
        return axis < 0 ? axis + rank : axis
    }

    /// Each axis of `axes` resolved against `rank` (negative counts from the end), in the given
    /// order. - Throws: when an axis is out of range or named twice.
    func resolveAxes(_ axes: [Int], rank: Int, _ what: String = "axes") throws -> [Int] {
        var out: [Int] = []
        for a in axes {
            let r = try resolveAxis(a, rank: rank, "\(what) entry")
            guard !out.contains(r) else { throw fail("\(what) \(axes) name axis \(r) twice (rank \(rank))") }
            out.append(r)
        }
        return out
    }

    /// At most `maxRank` axes, each within ±maxRank (the rank itself is checked at inference).
    func checkAxisList(_ axes: [Int], _ what: String = "axes") throws {
        guard axes.count <= Node.maxRank, axes.allSatisfy({ $0 >= -Node.maxRank && $0 < Node.maxRank }) else {
            throw fail("\(what) must be at most \(Node.maxRank) integers in \(-Node.maxRank)…\(Node.maxRank - 1), found \(axes)")
        }
    }

    /// The NumPy broadcast of `ins`' shapes. - Throws: when they do not broadcast.
    func broadcastAll(_ ins: [TensorType]) throws -> [Int] {
        var shape = ins.first?.shape ?? []
        for t in ins.dropFirst() {
            guard let b = broadcastShapes(shape, t.shape) else {
                throw fail("input shapes \(ins.map { formatShape($0.shape) }.joined(separator: ", ")) do not broadcast")
            }
            shape = b
        }
        return shape
    }
}
