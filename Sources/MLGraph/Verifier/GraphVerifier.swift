// The graph verifier (issue 13, "one trust boundary"): the checks every reader runs on the graph it
// built (Keras, Core ML NeuralNetwork, ML program, bundle) before the runtime and the kernels see
// it, in layers — as TFLite's verifier and the bundle reader check a model: first its structure,
// then the names it references, then element types, shapes and sizes. Each layer may assume the
// earlier ones passed, so no check indexes, multiplies or recurses on unchecked values.
// `Graph.verify()` is the entry point (Verifier.swift); one file per layer (Verify*.swift).
import Diagnostics

/// Verifies a `Graph` layer by layer; the first failure is thrown as
/// `GraphError.verificationFailed` naming the layer, the node / op / tensor / weight, and the
/// expected and found values. See docs/ERRORS.md, "The graph verifier".
public enum GraphVerifier {
    /// The layers, in the order they run.
    public enum Layer: String, CaseIterable, Sendable, Comparable {
        /// Unique node names, every node has outputs, each tensor produced once, nodes in
        /// topological order, graph inputs declared once, graph outputs produced; control-flow
        /// blocks the same (recursively, at most `Node.maxBlockNesting` levels, only on `cond` and
        /// `whileLoop`).
        case structure
        /// Every name resolves: each node input is a graph input or the output of a node (blocks
        /// are closed: a block input or an output of its own nodes); the feature descriptions and
        /// `probabilitiesOutput` name real inputs and outputs. (Weights are held by value in
        /// their node, `Node.weights`, so no weight name can dangle; an op's required weight
        /// roles are checked by its shape rule, in `shapes`.)
        case references
        /// Element types: each recorded tensor type (`Graph.tensorTypes`) has the element type
        /// and list-ness its producer gives; each weight's encoding fits its shape (bits 1…8, a
        /// look-up table of 2^bits entries, one linear scale or one per channel of a valid axis,
        /// compressed block grids dividing the shape) and its storage is aligned for its element
        /// type (float32: 4 bytes, float16: 2).
        case types
        /// Ranks at most `Node.maxRank`; dimensions positive or `TensorType.unknown` (−1) for
        /// tensors, non-negative for weights; every op's shape rule accepts its inputs, attributes
        /// and weights, and the shape it gives equals the recorded one.
        case shapes
        /// Element counts (at most `TensorType.maxElementCount`) and byte sizes computed with
        /// checked arithmetic; each weight's storage holds exactly the bytes its shape and
        /// encoding need; the largest tensor, and the weight bytes this process holds in memory
        /// (not those mapped from a file), within `MemoryLimit.current`.
        case sizes

        public static func < (a: Layer, b: Layer) -> Bool {
            (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0)
        }
    }

    /// Runs every layer on `graph`, in order.
    /// - Throws: `GraphError.verificationFailed` for the first failure.
    public static func verify(_ graph: Graph) throws {
        try verify(graph, through: .sizes)
    }

    /// Runs the layers from `structure` through `last`, in order (each assumes the earlier ones).
    /// - Throws: `GraphError.verificationFailed` for the first failure.
    public static func verify(_ graph: Graph, through last: Layer) throws {
        var run = VerifierRun(graph: graph)
        for layer in Layer.allCases where layer <= last {
            switch layer {
            case .structure: try checkStructure(run)
            case .references: try checkReferences(run)
            case .types: try checkTypes(&run)
            case .shapes: try checkShapes(&run)
            case .sizes: try checkSizes(&run)
            }
        }
    }
}

/// Why the verifier refused a graph: the layer, where, what was expected and found.
public struct GraphVerificationFailure: Equatable, Sendable, CustomStringConvertible {
    public var layer: GraphVerifier.Layer
    /// The node concerned (for a weight, its node), if any.
    public var node: String?
    /// The op of `node` (`Op.name`).
    public var op: String?
    /// The tensor concerned, if any.
    public var tensor: String?
    /// The weight's role in `node.weights` ("weight", "bias", …), if a weight is concerned.
    public var weight: String?
    /// One sentence naming what is wrong (it names the node / tensor / weight itself).
    public var message: String
    public var expected: String?
    public var found: String?
    /// The error underneath: an op's shape rule (`GraphError.invalidNode`), or the memory limit.
    public var cause: GraphVerificationCause?

    public init(layer: GraphVerifier.Layer, node: String? = nil, op: String? = nil, tensor: String? = nil, weight: String? = nil,
                message: String, expected: String? = nil, found: String? = nil, cause: GraphVerificationCause? = nil) {
        self.layer = layer; self.node = node; self.op = op; self.tensor = tensor; self.weight = weight
        self.message = message; self.expected = expected; self.found = found; self.cause = cause
    }

    /// "invalid graph (structure check): two nodes are named 'a'".
    public var description: String { "invalid graph (\(layer.rawValue) check): \(message)" }

    /// Where, for diagnostics: the weight, else the node, else the tensor.
    public var location: DiagnosticLocation? {
        if let weight, let node { return DiagnosticLocation(.weight, "\(node).\(weight)") }
        if let node { return DiagnosticLocation(.node, node) }
        if let tensor { return DiagnosticLocation(.tensor, tensor) }
        return nil
    }
}

/// The error under a verifier failure, kept as a value.
public indirect enum GraphVerificationCause: Equatable, Sendable {
    /// An op's shape rule refused the node (`GraphError.invalidNode`, `.invalidTopology` from a block).
    case graph(GraphError)
    /// A tensor or the resident weights exceed `MemoryLimit.current`.
    case memoryLimit(MemoryLimitExceeded)

    public var error: any Error {
        switch self {
        case let .graph(e): return e
        case let .memoryLimit(e): return e
        }
    }
}

extension GraphError {
    /// The memory-limit error under a verifier failure, with `file` filled in (readers rethrow it
    /// so that the failure keeps its `.resourceLimit` category); nil for any other error.
    public func memoryLimitExceeded(file: String?) -> MemoryLimitExceeded? {
        guard case let .verificationFailed(f) = self, case var .memoryLimit(m)? = f.cause else { return nil }
        if m.file == nil { m.file = file }
        return m
    }
}

/// State shared by the layers of one verification: the tensor types inferred from the inputs,
/// computed once (by `types`) and read by `shapes` and `sizes`.
struct VerifierRun {
    let graph: Graph
    var inference: LenientInference?

    init(graph: Graph) { self.graph = graph }

    mutating func inferred() -> LenientInference {
        if let inference { return inference }
        let i = LenientInference(graph)
        inference = i
        return i
    }
}

/// Node-by-node type inference that records where it stops instead of throwing, so that each
/// layer can report the failure that belongs to it. It runs only after `structure` and
/// `references` passed (every input name resolves to an earlier tensor).
struct LenientInference {
    enum Stop {
        /// The node's shape rule threw.
        case ruleFailed(node: Int, error: any Error)
        /// The rule gave a different number of outputs than the node names.
        case outputCount(node: Int, given: Int)
        /// The node reads a tensor whose type is unusable (`TensorType.shapeProblem`); inference
        /// stops there (shapes or sizes name the tensor).
        case unusableInput(node: Int, tensor: String)
        /// A weight of the node (or of a node in its blocks) has an unusable shape
        /// (`GraphVerifier.weightShapeProblem`); inference stops there (shapes or sizes name it).
        case unusableWeight(node: Int)
    }
    /// Types of the graph inputs (as declared) and of every node output inferred before `stop`.
    var types: [String: TensorType] = [:]
    /// Index of the producing node of each inferred output.
    var producer: [String: Int] = [:]
    /// Where inference stopped, nil when every node was inferred.
    var stop: Stop?

    init(_ graph: Graph) {
        for i in graph.inputs { types[i.name] = i.type }
        for (k, node) in graph.nodes.enumerated() {
            guard !GraphVerifier.hasUnusableWeight(node) else { stop = .unusableWeight(node: k); return }
            var ins: [TensorType] = []
            for name in node.inputs {
                guard let t = types[name] else { stop = .unusableInput(node: k, tensor: name); return }
                guard t.shapeProblem == nil else { stop = .unusableInput(node: k, tensor: name); return }
                ins.append(t)
            }
            let outs: [TensorType]
            do { outs = try node.inferOutputTypes(ins) } catch { stop = .ruleFailed(node: k, error: error); return }
            guard outs.count == node.outputs.count else { stop = .outputCount(node: k, given: outs.count); return }
            for (name, t) in zip(node.outputs, outs) { types[name] = t; producer[name] = k }
        }
    }
}

extension GraphVerificationFailure {
    /// A failure naming `node` (and its op).
    static func at(_ layer: GraphVerifier.Layer, node: Node, tensor: String? = nil, weight: String? = nil, _ message: String,
                   expected: String? = nil, found: String? = nil, cause: GraphVerificationCause? = nil) -> GraphError {
        .verificationFailed(GraphVerificationFailure(layer: layer, node: node.name, op: node.op.name, tensor: tensor, weight: weight,
                                                     message: message, expected: expected, found: found, cause: cause))
    }

    /// A failure naming a tensor (or nothing) but no node.
    static func at(_ layer: GraphVerifier.Layer, tensor: String?, _ message: String,
                   expected: String? = nil, found: String? = nil, cause: GraphVerificationCause? = nil) -> GraphError {
        .verificationFailed(GraphVerificationFailure(layer: layer, tensor: tensor, message: message,
                                                     expected: expected, found: found, cause: cause))
    }
}
