// Public types of the IR → Core ML `.mlmodel` writer: options, result, errors.
import MLGraph

/// Options of `CoreMLExporter` (the IR → Core ML `.mlmodel` writer).
///
/// Class labels and the probabilities output are not options: they come from the graph's
/// `ModelDescription.classLabels` / `probabilitiesOutput`, as do metadata and feature
/// descriptions.
public struct CoreMLExportOptions: Sendable, Hashable {
    /// Multi-array element type written for multi-array inputs and outputs.
    public enum ArrayDataType: String, Sendable, Hashable {
        /// `DOUBLE`: what coremltools' `NeuralNetworkBuilder` (and so its Keras converter) writes
        /// by default for every spec version. Core ML computes in float32/float16 regardless.
        case double
        /// `FLOAT32` (`NeuralNetworkBuilder(use_float_arraytype=True)`); valid from spec 1.
        case float32
    }

    /// Renames of graph inputs: IR input name → Core ML feature name. Unlisted inputs keep
    /// their IR name.
    public var inputNames: [String: String]
    /// Renames of graph outputs: IR output name → Core ML feature name (also the name of the
    /// blob that produces it). Unlisted outputs keep their IR name.
    public var outputNames: [String: String]
    /// Raises `specificationVersion` to at least this value (the writer otherwise chooses the
    /// lowest version the model's features need). Values below that lowest version are ignored.
    public var minimumSpecificationVersion: Int32?
    /// Name of the classifier's predicted-label output (`ModelDescription.predictedFeatureName`);
    /// used only when the graph has class labels. coremltools' default is "classLabel".
    public var predictedFeatureName: String
    /// Element type of multi-array inputs and outputs.
    public var arrayDataType: ArrayDataType
    /// Value recorded in the metadata's `userDefined["mlconv.converter"]`; nil writes nothing.
    public var converterTag: String?
    // MARK: rank-N export (issue 10)
    /// When the classic (RANK5) layers cannot express the graph, write an EXACT_ARRAY_MAPPING
    /// network of rank-N layers (specification 4, or 5 for iOS 14 layers) instead of failing.
    /// False keeps the writer to specification 1–3 classic networks.
    public var writesRankNLayers: Bool = true

    /// - Parameters: see the properties of the same names.
    public init(inputNames: [String: String] = [:], outputNames: [String: String] = [:],
                minimumSpecificationVersion: Int32? = nil, predictedFeatureName: String = "classLabel",
                arrayDataType: ArrayDataType = .double, converterTag: String? = "mlconv") {
        self.inputNames = inputNames
        self.outputNames = outputNames
        self.minimumSpecificationVersion = minimumSpecificationVersion
        self.predictedFeatureName = predictedFeatureName
        self.arrayDataType = arrayDataType
        self.converterTag = converterTag
    }
}

/// Why the exported model needs a given Core ML specification version.
public struct CoreMLSpecVersionReason: Sendable, Hashable, CustomStringConvertible {
    /// The specification version this feature needs (1 = iOS 11 … 4 = iOS 13).
    public var version: Int32
    /// The feature, naming the node where it comes from one, e.g.
    /// "fp16 weights (node 'conv1')".
    public var reason: String

    /// - Parameters: see the properties of the same names.
    public init(version: Int32, reason: String) {
        self.version = version
        self.reason = reason
    }

    /// "spec N: reason".
    public var description: String { "spec \(version): \(reason)" }
}

/// The result of `CoreMLExporter.export(_:options:)`: the model and how it was chosen.
public struct CoreMLExportResult: Sendable {
    /// The Core ML model (`neuralNetwork` or `neuralNetworkClassifier`).
    public var model: Spec.Model
    /// Every feature that raised the specification version above 1, in graph order (empty for a
    /// spec-1 model). `model.specificationVersion` is the largest of these (or the options'
    /// minimum).
    public var versionReasons: [CoreMLSpecVersionReason]
    /// Lowerings that changed the layer structure (one IR node → several Core ML layers) or
    /// dropped something harmless, one line each, for `--verbose` output.
    public var notes: [String]
}

/// The graph cannot be written as a Core ML neural network. Lists every offending node at once.
public struct CoreMLExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One node (or graph-level feature) the writer cannot express.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The IR node name, or "<graph>" / the input or output name for graph-level problems.
        public var node: String
        /// The IR op name (`Op.name`), or "input" / "output" / "graph".
        public var op: String
        /// What cannot be expressed, with the values involved.
        public var reason: String
        /// What would work instead (another IR form, an option, a later spec version).
        public var suggestion: String

        /// - Parameters: see the properties of the same names.
        public init(node: String, op: String, reason: String, suggestion: String) {
            self.node = node
            self.op = op
            self.reason = reason
            self.suggestion = suggestion
        }

        /// "node 'name' (op): reason. suggestion".
        public var description: String { "node '\(node)' (\(op)): \(reason). \(suggestion)" }
    }

    /// Every problem found, in graph order.
    public var problems: [Problem]

    /// - Parameter problems: the problems found (at least one).
    public init(problems: [Problem]) { self.problems = problems }

    /// A header line and one indented line per problem.
    public var description: String {
        "cannot write the graph as a Core ML neural network (\(problems.count) problem\(problems.count == 1 ? "" : "s")):\n"
            + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// One row of the writer's layer table: how an IR op is written and the lowest Core ML
/// specification version it needs (`CoreMLExporter.layerTable`).
public struct CoreMLLayerMapping: Sendable, Hashable {
    /// The IR op (and case), e.g. "conv2d", "activation(gelu approximate)".
    public var irOp: String
    /// The Core ML layer(s) written, e.g. "convolution + activation `<name>__activation__`".
    public var coreML: String
    /// Lowest `specificationVersion` this mapping needs.
    public var minimumSpecificationVersion: Int32
    /// Conditions and limitations.
    public var notes: String

    /// - Parameters: see the properties of the same names.
    public init(irOp: String, coreML: String, minimumSpecificationVersion: Int32, notes: String = "") {
        self.irOp = irOp
        self.coreML = coreML
        self.minimumSpecificationVersion = minimumSpecificationVersion
        self.notes = notes
    }
}
