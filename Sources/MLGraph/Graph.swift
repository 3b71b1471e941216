/// One node of the graph: an op applied to named input tensors, producing named output tensors,
/// with its constants (weights) by role name ("weight", "bias", "gamma", …; see each `Op` case).
public struct Node: Hashable, Sendable {
    /// Unique node name (the source layer's name, e.g. the Keras layer name).
    public var name: String
    public var op: Op
    public var inputs: [String]
    public var outputs: [String]
    public var weights: [String: ConstantTensor]
    /// Nested blocks the op owns (control flow: `Op.cond`'s two branches, `Op.whileLoop`'s
    /// condition and body); empty for every other op. See `Block`.
    public var blocks: [Block]

    public init(name: String, op: Op, inputs: [String], outputs: [String], weights: [String: ConstantTensor] = [:],
                blocks: [Block] = []) {
        self.name = name; self.op = op; self.inputs = inputs; self.outputs = outputs; self.weights = weights
        self.blocks = blocks
    }

    public static func == (a: Node, b: Node) -> Bool {
        a.name == b.name && a.op == b.op && a.inputs == b.inputs && a.outputs == b.outputs
            && a.weights.keys.sorted() == b.weights.keys.sorted()
            && a.weights.allSatisfy { k, v in b.weights[k].map { $0 === v || ($0.shape == v.shape && $0.encoding == v.encoding && $0.floats() == v.floats()) } ?? false }
            && a.blocks == b.blocks
    }

    public func hash(into h: inout Hasher) { h.combine(name); h.combine(op) }
}

/// A named graph input with its static type.
public struct ValueInfo: Codable, Hashable, Sendable {
    public var name: String
    public var type: TensorType
    public init(name: String, type: TensorType) { self.name = name; self.type = type }
}

/// Colour layout of an image feature (Core ML `ImageFeatureType.ColorSpace`).
public enum ImageColorSpace: String, Codable, Hashable, Sendable { case rgb = "RGB", bgr = "BGR", grayscale = "GRAYSCALE" }

/// An image input or output (Core ML `imageType`): the tensor is [1, height, width, channels]
/// (channels 3 for RGB/BGR, 1 for grayscale) in the IR's NHWC layout, values 0–255 before the
/// preprocessing y = scale·x + bias[channel] (Core ML `NeuralNetworkImageScaler`).
public struct ImageFeature: Codable, Hashable, Sendable {
    public var width: Int
    public var height: Int
    public var colorSpace: ImageColorSpace
    public var scale: Float
    /// Per-channel biases in the image's channel order (R,G,B / B,G,R / gray).
    public var bias: [Float]
    public init(width: Int, height: Int, colorSpace: ImageColorSpace, scale: Float = 1, bias: [Float] = []) {
        self.width = width; self.height = height; self.colorSpace = colorSpace; self.scale = scale; self.bias = bias
    }
}

/// Describes a model input or output for users (Core ML `FeatureDescription`).
public struct FeatureDescription: Codable, Hashable, Sendable {
    public var name: String
    public var shortDescription: String
    /// Set when the feature is an image (Core ML imageType) rather than a multi-array.
    public var image: ImageFeature?
    // MARK: flexible shapes
    /// Other shapes a graph input accepts besides its default shape (Core ML `shapeRange` /
    /// `enumeratedShapes`, image size ranges / enumerated sizes), in the input's IR layout; nil
    /// for a fixed shape and for outputs. See `ShapeFlexibility`, docs/FLEXIBLE_SHAPES.md.
    public var shapeFlexibility: ShapeFlexibility?
    public init(name: String, shortDescription: String = "", image: ImageFeature? = nil, shapeFlexibility: ShapeFlexibility? = nil) {
        self.name = name; self.shortDescription = shortDescription; self.image = image
        self.shapeFlexibility = shapeFlexibility
    }
}

/// Model metadata (Core ML `Metadata`).
public struct ModelMetadata: Codable, Hashable, Sendable {
    public var author: String = ""
    public var license: String = ""
    public var shortDescription: String = ""
    public var versionString: String = ""
    /// Free-form key/value pairs (Core ML `userDefined`); the converters record their source
    /// here, e.g. "mlconv.source" = "Keras 2.15.0 (tensorflow)".
    public var userDefined: [String: String] = [:]
    public init() {}
}

/// What users see of a model: feature descriptions, metadata, and classifier labels.
public struct ModelDescription: Codable, Hashable, Sendable {
    public var inputs: [FeatureDescription] = []
    public var outputs: [FeatureDescription] = []
    public var metadata = ModelMetadata()
    /// Class labels when the model is a classifier (output `classLabelOutput` then holds the
    /// probabilities output name).
    public var classLabels: [String]? = nil
    public var probabilitiesOutput: String? = nil
    public init() {}
}

/// The typed graph IR shared by every frontend (Keras, Core ML), pass and backend (bundle,
/// `.mlmodel`). Nodes are kept in topological order; `tensorTypes` holds the inferred static type
/// of every tensor (fill it with `inferShapes()`), checked by `verify()`.
public struct Graph: Sendable {
    public var inputs: [ValueInfo]
    /// Names of the output tensors, in model order.
    public var outputs: [String]
    public var nodes: [Node]
    public var tensorTypes: [String: TensorType]
    public var description: ModelDescription

    public init(inputs: [ValueInfo], outputs: [String], nodes: [Node],
                tensorTypes: [String: TensorType] = [:], description: ModelDescription = ModelDescription()) {
        self.inputs = inputs; self.outputs = outputs; self.nodes = nodes
        self.tensorTypes = tensorTypes; self.description = description
        for i in inputs { self.tensorTypes[i.name] = i.type }
    }

    /// Total number of weight values (parameters); a constant shared by several nodes (a Keras
    /// layer called twice) counts once.
    public var parameterCount: Int {
        var seen = Set<ObjectIdentifier>()
        var n = 0
        for node in allNodes {
            for w in node.weights.values where seen.insert(ObjectIdentifier(w)).inserted { n += w.elementCount }
        }
        return n
    }

    /// Node count per op name, e.g. ["conv2d": 16, "batchNorm": 15] (nodes inside blocks included).
    public var opCounts: [String: Int] {
        var c: [String: Int] = [:]
        for n in allNodes { c[n.op.name, default: 0] += 1 }
        return c
    }

    /// Every node: the graph's, then, depth first, those of the blocks each owns (`Node.blocks`).
    public var allNodes: [Node] {
        var out: [Node] = []
        func visit(_ nodes: [Node]) {
            for n in nodes {
                out.append(n)
                for b in n.blocks { visit(b.nodes) }
            }
        }
        visit(nodes)
        return out
    }

    /// The node producing `tensor`, if any.
    public func producer(of tensor: String) -> Node? { nodes.first { $0.outputs.contains(tensor) } }
}
