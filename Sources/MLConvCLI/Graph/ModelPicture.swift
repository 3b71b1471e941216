// `mlconv inspect MODEL --graph out.svg|.dot|.png`: what each model format looks like as a graph.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLBundle
import MLConv
import MLGraph

/// One block of ops to draw: a model's layers, an ML program function's body, or a control-flow
/// block. The drawing does not care where it came from: `init(graph:)` makes one from mlconv's IR
/// (Keras, `.mlbundle`, Core ML neural networks); an ML program reader makes one per MIL function
/// (`ModelPicture.Function`), with `cond` / `while_loop` blocks as `Op.blocks`.
public struct BlockPicture: Sendable {
    /// One op (layer) of a block.
    public struct Op: Sendable {
        /// Layer / op name (may be empty for MIL ops without a name).
        public var name: String
        /// Layer type or op type in the source's terms ("convolution", "conv", "Dense", …).
        public var type: String
        /// Tensor names read, in order (tensors produced in the same block or block inputs).
        public var inputs: [String]
        /// Tensor names written, with their type as text (e.g. "float32[1×10]"; nil when unknown).
        public var outputs: [(name: String, type: String?)]
        /// How the op's weights are stored ("fp32", "fp16", "8-bit LUT", …), nil without weights.
        public var weightPrecision: String?
        /// Nested blocks with a label each ("then" / "else", "cond" / "body").
        public var blocks: [(label: String, block: BlockPicture)] = []

        public init(name: String, type: String, inputs: [String], outputs: [(name: String, type: String?)],
                    weightPrecision: String? = nil, blocks: [(label: String, block: BlockPicture)] = []) {
            self.name = name; self.type = type; self.inputs = inputs; self.outputs = outputs
            self.weightPrecision = weightPrecision; self.blocks = blocks
        }
    }

    /// Names the block binds (graph inputs, loop variables, branch operands), with types if known.
    public var inputs: [(name: String, type: String?)]
    public var ops: [Op]
    /// Names the block yields (graph outputs, a block's results).
    public var outputs: [String]

    public init(inputs: [(name: String, type: String?)], ops: [Op], outputs: [String]) {
        self.inputs = inputs; self.ops = ops; self.outputs = outputs
    }

    /// The ops of a graph (mlconv's IR): output types from `Graph.tensorTypes` (inside control-flow
    /// blocks from `Block.inferTypes`), weight precision from each weight's encoding, `cond`
    /// blocks labelled then / else and `whileLoop` blocks cond / body (docs/ARCHITECTURE.md).
    public init(graph g: Graph) {
        self.init(inputs: g.inputs.map { ($0.name, $0.type.description) },
                  ops: Self.ops(g.nodes, types: g.tensorTypes), outputs: g.outputs)
    }

    static func ops(_ nodes: [Node], types: [String: TensorType]) -> [Op] {
        nodes.map { n in
            let precisions = Set(n.weights.values.map { $0.encoding.description }).sorted()
            var op = Op(name: n.name, type: n.op.name, inputs: n.inputs,
                        outputs: n.outputs.map { ($0, types[$0]?.description) },
                        weightPrecision: precisions.isEmpty ? nil : precisions.joined(separator: " + "))
            let labels: [String]
            var blockInputTypes: [TensorType]? = nil
            switch n.op {
            case .cond:
                labels = ["then", "else"]
                let ins = n.inputs.dropFirst().map { types[$0] }
                if ins.allSatisfy({ $0 != nil }) { blockInputTypes = ins.compactMap { $0 } }
            case .whileLoop:
                labels = ["cond", "body"]
                let outs = n.outputs.map { types[$0] }
                if outs.allSatisfy({ $0 != nil }) { blockInputTypes = outs.compactMap { $0 } }
            default:
                labels = []
            }
            op.blocks = n.blocks.enumerated().map { i, b in
                let label = i < labels.count ? labels[i] : "block \(i)"
                // Block tensor types follow from what the owner binds; unknown when that fails.
                let inner = blockInputTypes.flatMap { try? b.inferTypes(inputs: $0, owner: n, label: label).types } ?? [:]
                return (label, BlockPicture(inputs: b.inputs.map { ($0, inner[$0]?.description) },
                                            ops: ops(b.nodes, types: inner), outputs: b.outputs))
            }
            return op
        }
    }
}

/// Builds the DOT picture of a model file: every layer / op with its type, output type and weight
/// precision; pipelines as nested clusters (one per stage); models without layers as one node
/// naming their kind; ML program functions and control-flow blocks as clusters.
public enum ModelPicture {
    /// An ML program function to draw.
    public struct Function: Sendable {
        public var name: String
        public var opset: String
        public var block: BlockPicture
        public init(name: String, opset: String, block: BlockPicture) {
            self.name = name; self.opset = opset; self.block = block
        }
    }

    /// Reads the functions of an ML program (top level or a pipeline stage) as op graphs; nil
    /// when the program cannot be read that way. When not set (or it returns nil) a program is
    /// drawn from what `mlconv inspect` reports: each function with its op counts by type.
    /// Set once at start-up by whoever reads MIL.
    nonisolated(unsafe) public static var programReader: (@Sendable (Spec.Model, _ fileURL: URL) throws -> [Function]?)? = nil

    /// The picture of the model at `url` (.h5 / .keras, .mlmodel, .mlpackage, .mlbundle).
    /// - Throws: the format's typed error when the file cannot be read (as `mlconv inspect`).
    static func document(for url: URL, kerasOptions: KerasConversionOptions = .init()) throws -> DotDocument {
        var doc = DotDocument(title: url.lastPathComponent)
        switch try ModelFileKind.detect(url) {
        case .keras:
            let g = try KerasConverter(options: kerasOptions).convert(modelAt: url)
            doc.title += " (Keras)"
            drawTopLevel(BlockPicture(graph: g), in: &doc)
        case .bundle:
            let b = try BundleFile(contentsOf: url)
            doc.title += " (mlbundle)"
            drawTopLevel(BlockPicture(graph: b.graph), in: &doc)
        case .coreML:
            let report = try CoreMLInspector.report(for: url)
            let model: Spec.Model
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue {
                model = try MLPackage.read(at: url.path).model
            } else {
                model = try Spec.Model.load(contentsOf: url.path)
            }
            doc.title += " (\(report.modelType))"
            var sources: [String: String] = [:]
            for f in features(report.jsonObject["inputs"]) {
                sources[f.name] = doc.addNode([f.name, f.type], style: .feature)
            }
            let produced = drawCoreML(model, report: report.jsonObject, url: url, sources: sources, in: nil, doc: &doc)
            for f in features(report.jsonObject["outputs"]) {
                let id = doc.addNode([f.name, f.type], style: .feature)
                if let p = produced[f.name] { doc.addEdge(from: p, to: id) }
            }
        }
        return doc
    }

    // MARK: Blocks

    /// A graph with its inputs and outputs as feature nodes at the top level.
    static func drawTopLevel(_ block: BlockPicture, in doc: inout DotDocument) {
        var sources: [String: String] = [:]
        for i in block.inputs { sources[i.name] = doc.addNode([i.name] + (i.type.map { [$0] } ?? []), style: .feature) }
        let produced = draw(block, sources: sources, in: nil, doc: &doc)
        var types: [String: String] = [:]
        for op in block.ops { for o in op.outputs { types[o.name] = o.type } }
        for i in block.inputs { types[i.name] = i.type }
        for o in block.outputs {
            let id = doc.addNode([o] + (types[o].map { [$0] } ?? []), style: .feature)
            if let p = produced[o] { doc.addEdge(from: p, to: id) }
        }
    }

    /// Draws the ops of `block` into `cluster`. `sources` gives the node that produces each name
    /// the block reads from outside; names read but not found get an input node of their own.
    /// Returns the producing node of every tensor the block makes (by name).
    @discardableResult
    static func draw(_ block: BlockPicture, sources: [String: String], in cluster: DotDocument.Cluster?,
                     doc: inout DotDocument) -> [String: String] {
        var producer = sources
        for op in block.ops {
            var lines: [String] = []
            if !op.name.isEmpty && op.name != op.type { lines.append(op.name) }
            lines.append(op.type)
            for o in op.outputs {
                let t = o.type ?? "?"
                lines.append(op.outputs.count == 1 ? "→ \(t)" : "→ \(o.name): \(t)")
            }
            if let p = op.weightPrecision { lines.append("weights: \(p)") }
            let id = doc.addNode(lines, style: .op, in: cluster)
            for name in op.inputs {
                if producer[name] == nil { producer[name] = doc.addNode([name], style: .port, in: cluster) }
                if let from = producer[name] { doc.addEdge(from: from, to: id) }
            }
            for (label, inner) in op.blocks {
                let c = doc.addCluster("\(op.name.isEmpty ? op.type : op.name): \(label)", in: cluster)
                var innerSources: [String: String] = [:]
                if !inner.inputs.isEmpty {
                    let portID = doc.addNode(["\(label) inputs"] + inner.inputs.map { "\($0.name): \($0.type ?? "?")" }, style: .port, in: c)
                    doc.addEdge(from: id, to: portID, label: label)
                    for i in inner.inputs { innerSources[i.name] = portID }
                }
                let made = draw(inner, sources: innerSources, in: c, doc: &doc)
                let yieldID = doc.addNode(["\(label) yields"] + inner.outputs, style: .port, in: c)
                for name in Set(inner.outputs).sorted() { if let p = made[name] { doc.addEdge(from: p, to: yieldID) } }
            }
            for o in op.outputs { producer[o.name] = id }
        }
        return producer
    }

    // MARK: Core ML models

    struct Feature { var name: String; var type: String }

    static func features(_ any: Any?) -> [Feature] {
        ((any as? [[String: Any]]) ?? []).map { f in
            Feature(name: f["name"] as? String ?? "?", type: f["typeDescription"] as? String ?? f["type"] as? String ?? "")
        }
    }

    /// Draws one Core ML model (recursing into pipeline stages) from its inspector report `json`
    /// and its spec (imported for tensor types when it is a neural network).
    static func drawCoreML(_ model: Spec.Model, report json: [String: Any], url: URL, sources: [String: String],
                           in cluster: DotDocument.Cluster?, doc: inout DotDocument) -> [String: String] {
        let kind = json["modelType"] as? String ?? "none"
        if let p = json["pipeline"] as? [String: Any] {
            let stageModels: [Spec.Model]
            switch model.type {
            case let .pipeline(p): stageModels = p.models
            case let .pipelineClassifier(p): stageModels = p.pipeline?.models ?? []
            case let .pipelineRegressor(p): stageModels = p.pipeline?.models ?? []
            default: stageModels = []
            }
            var available = sources
            for (i, stage) in ((p["stages"] as? [[String: Any]]) ?? []).enumerated() {
                let name = stage["name"] as? String
                let c = doc.addCluster("stage \(i)\(name.map { " '\($0)'" } ?? ""): \(stage["modelType"] as? String ?? "none")", in: cluster)
                let made = drawCoreML(i < stageModels.count ? stageModels[i] : Spec.Model(), report: stage, url: url,
                                      sources: available, in: c, doc: &doc)
                for f in features(stage["outputs"]) { if let p = made[f.name] { available[f.name] = p } }
            }
            return available
        }
        if let nn = json["neuralNetwork"] as? [String: Any] {
            // Types of the layer outputs from mlconv's import of the network, when it imports.
            let g = try? CoreMLImporter.graph(from: model, fileName: url.lastPathComponent)
            let types = g?.tensorTypes ?? [:]
            // Core ML keeps branch / loop bodies inside the layer; mlconv's import has them as
            // cond / whileLoop blocks, so such networks are drawn from the import.
            if let g, g.nodes.contains(where: { !$0.blocks.isEmpty }) {
                var made = draw(BlockPicture(graph: g), sources: sources, in: cluster, doc: &doc)
                doc.addNode(["drawn from mlconv's import: branch / loop layers as cond / whileLoop blocks"], style: .note, in: cluster)
                for f in features(json["outputs"]) where made[f.name] == nil { made[f.name] = sources[f.name] }
                return made
            }
            let ops = ((nn["layers"] as? [[String: Any]]) ?? []).map { l -> BlockPicture.Op in
                let outs = (l["outputs"] as? [String]) ?? []
                return BlockPicture.Op(name: l["name"] as? String ?? "", type: l["type"] as? String ?? "?",
                                       inputs: (l["inputs"] as? [String]) ?? [],
                                       outputs: outs.map { ($0, types[$0]?.description) },
                                       weightPrecision: l["precision"] as? String)
            }
            let block = BlockPicture(inputs: [], ops: ops, outputs: features(json["outputs"]).map(\.name))
            var made = draw(block, sources: sources, in: cluster, doc: &doc)
            if g == nil { doc.addNode(["output types not shown: mlconv does not import this network"], style: .note, in: cluster) }
            // Outputs a network passes through unchanged keep their producer.
            for f in features(json["outputs"]) where made[f.name] == nil { made[f.name] = sources[f.name] }
            return made
        }
        if kind == "mlProgram" {
            let functions = (try? programReader?(model, url)) ?? nil
            if let functions {
                var made: [String: String] = [:]
                for f in functions {
                    let c = doc.addCluster("function \(f.name)" + (f.opset.isEmpty ? "" : " (\(f.opset))"), in: cluster)
                    made.merge(draw(f.block, sources: sources, in: c, doc: &doc)) { a, _ in a }
                }
                return made
            }
            return drawProgramSummary(json, sources: sources, in: cluster, doc: &doc)
        }
        // A model without layers: one node with its kind and what inspect reads of it.
        var lines = [kind]
        if let labels = json["classLabels"] as? [String: Any], let n = labels["count"] as? Int {
            lines.append("\(n) class labels")
        }
        let id = doc.addNode(lines, style: .model, in: cluster)
        for f in features(json["inputs"]) { if let s = sources[f.name] { doc.addEdge(from: s, to: id, label: f.name) } }
        var made: [String: String] = [:]
        for f in features(json["outputs"]) { made[f.name] = id }
        return made
    }

    /// An ML program drawn from the inspector's summary: one cluster per function holding one
    /// node per op type with its count (the op-by-op graph needs `programReader`).
    static func drawProgramSummary(_ json: [String: Any], sources: [String: String], in cluster: DotDocument.Cluster?,
                                   doc: inout DotDocument) -> [String: String] {
        let functions = ((json["details"] as? [String: Any])?["functions"] as? [[String: Any]]) ?? []
        var made: [String: String] = [:]
        for f in functions {
            let name = f["name"] as? String ?? "?"
            let opset = f["opset"] as? String ?? ""
            let c = doc.addCluster("function \(name)" + (opset.isEmpty ? "" : " (\(opset))"), in: cluster)
            let total = f["operationCount"] as? Int ?? 0
            let head = doc.addNode(["\(name): \(total) operations", "op-by-op graph not available: counts by type"], style: .note, in: c)
            for i in (f["inputs"] as? [String]) ?? [] { if let s = sources[i] { doc.addEdge(from: s, to: head) } }
            let ops = ((f["operations"] as? [String: Int]) ?? [:]).sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            let last = doc.addNode(["operations by type"] + ops.map { "\($0.key) × \($0.value)" }, style: .op, in: c)
            doc.addEdge(from: head, to: last)
            for o in features(json["outputs"]) where made[o.name] == nil { made[o.name] = last }
        }
        return made
    }
}
