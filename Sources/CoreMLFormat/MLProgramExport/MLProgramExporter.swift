// IR → ML program (`mlProgram` model, MIL) writer: `mlconv keras model.h5 -o Model.mlpackage`.
//
// The program has one function, `main`, whose opset follows the deployment target (iOS15 →
// CoreML5 … iOS18 → CoreML8) and whose ops carry their MIL names. The IR is channels-last; MIL's
// spatial ops (`conv`, pools, `batch_norm`, `upsample_*`) are channels-first, so the writer keeps
// up to two forms of each rank-4 tensor — the IR's NHWC and an NCHW twin — and emits `transpose`
// only where an op needs the form that does not exist yet (elementwise ops run in whichever
// form their input has, so conv → batch-norm → relu6 → conv chains stay NCHW, as coremltools'
// transpose optimisation leaves them). fp16 precision is coremltools' compute_precision
// FLOAT16: float inputs cast to fp16 first, fp16 weights and intermediates, outputs cast back to
// fp32 under the output's name.
import MLGraph

/// Options of `MLProgramExporter`.
public struct MLProgramExportOptions: Sendable {
    /// Deployment target (coremltools `minimum_deployment_target`).
    public enum Target: String, CaseIterable, Sendable {
        case iOS15, iOS16, iOS17, iOS18

        /// The model's `specificationVersion`: iOS15 → 6, iOS16 → 7, iOS17 → 8, iOS18 → 9.
        public var specificationVersion: Int32 {
            switch self { case .iOS15: return 6; case .iOS16: return 7; case .iOS17: return 8; case .iOS18: return 9 }
        }

        /// The MIL opset name of the `main` function (CoreML5 … CoreML8).
        public var opset: String {
            switch self { case .iOS15: return "CoreML5"; case .iOS16: return "CoreML6"; case .iOS17: return "CoreML7"; case .iOS18: return "CoreML8" }
        }

        /// Parses "iOS15" … "iOS18" (case-insensitive).
        public init?(name: String) {
            guard let t = Target.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else { return nil }
            self = t
        }
    }

    /// Precision of weights and intermediate tensors (coremltools `compute_precision`).
    public enum Precision: String, CaseIterable, Sendable { case float16 = "fp16", float32 = "fp32" }

    public var target: Target
    public var precision: Precision
    /// Recorded in the metadata as `userDefined["mlconv.converter"]` when set.
    public var converterTag: String?

    /// coremltools' defaults: iOS15, fp16.
    public init(target: Target = .iOS15, precision: Precision = .float16, converterTag: String? = nil) {
        self.target = target; self.precision = precision; self.converterTag = converterTag
    }
}

/// A written ML program: the model spec (type `mlProgram`) and its weight file.
public struct MLProgramExportResult: Sendable {
    public var model: Spec.Model
    public var weights: MILBlobWriter
    /// Renamed features and other facts worth telling the user.
    public var notes: [String]
}

public enum MLProgramExporter {
    /// The MIL variable / feature name the writer gives IR tensor `name`: characters outside
    /// [A-Za-z0-9_] become `_`, and a leading digit gets a `_` prefix.
    public static func featureName(for name: String) -> String { MILProgramBuilder.sanitize(name) }

    /// Converts `graph` to an ML program.
    ///
    /// - Throws: `MLProgramExportError.unsupportedOp` for the first node without a MIL lowering
    ///   (naming node, op and why), `.invalidGraph` for inconsistent graphs (missing tensor
    ///   types, non-static shapes), `GraphError` from shape inference.
    public static func export(_ graph: Graph, options: MLProgramExportOptions = MLProgramExportOptions()) throws -> MLProgramExportResult {
        var g = graph
        try g.inferShapes()
        var session = MILExportSession(graph: g, options: options)
        return try session.run()
    }

    /// Converts `graph` and writes the `.mlpackage` at `path` atomically (`MLPackageWriter`).
    ///
    /// - Throws: as `export`, and `MLProgramExportError.cannotWrite`.
    @discardableResult
    public static func write(_ graph: Graph, to path: String, options: MLProgramExportOptions = MLProgramExportOptions()) throws -> MLProgramExportResult {
        let result = try export(graph, options: options)
        try MLPackageWriter.write(model: result.model, weights: result.weights.count > 0 ? result.weights : nil, to: path)
        return result
    }
}

/// One export's state. Internal.
struct MILExportSession {
    let graph: Graph
    let options: MLProgramExportOptions
    let types: [String: TensorType]
    var b = MILProgramBuilder()
    /// IR tensor → variable holding it in the IR's layout.
    var irVar: [String: String] = [:]
    /// Rank-4 IR tensor → variable holding it as NCHW.
    var nchwVar: [String: String] = [:]
    let compute: MILScalar
    var notes: [String] = []
    /// Output tensor → final (feature) name.
    var finalName: [String: String] = [:]

    init(graph: Graph, options: MLProgramExportOptions) {
        self.graph = graph; self.options = options; self.types = graph.tensorTypes
        compute = options.precision == .float16 ? .float16 : .float32
    }

    // MARK: Types

    func irType(_ t: String) throws -> TensorType {
        guard let ty = types[t] else {
            throw MLProgramExportError.invalidGraph(what: "tensor '\(t)'", expected: "an inferred type", found: "none")
        }
        guard !ty.isList, ty.shape.allSatisfy({ $0 >= 0 }) else {
            throw MLProgramExportError.invalidGraph(what: "tensor '\(t)'", expected: "a tensor with a static shape",
                                                    found: "\(ty) (give fixed input shapes, e.g. --input-shape)")
        }
        return ty
    }

    func scalar(_ e: ElementType, node: String) throws -> MILScalar {
        switch e {
        case .float32, .float16: return compute
        case .int32: return .int32
        case .bool: return .bool
        case .int64:
            throw MLProgramExportError.unsupportedOp(node: node, op: "int64 tensor", reason: "ML programs compute integers as int32; cast to int32 first")
        }
    }

    func milType(_ t: String, nchw: Bool = false, node: String) throws -> Spec.MILSpec.ValueType {
        let ty = try irType(t)
        return MILProgramBuilder.tensorType(try scalar(ty.elementType, node: node), nchw ? Self.toNCHW(ty.shape) : ty.shape)
    }

    static func toNCHW(_ s: [Int]) -> [Int] { s.count == 4 ? [s[0], s[3], s[1], s[2]] : s }

    // MARK: Variables

    /// The variable holding `t` in the IR layout, transposing its NCHW twin if that is all there is.
    mutating func value(_ t: String, node: String) throws -> String {
        if let v = irVar[t] { return v }
        guard let src = nchwVar[t] else {
            throw MLProgramExportError.invalidGraph(what: "node '\(node)'", expected: "input '\(t)' computed before it", found: "no producer yet (nodes out of order?)")
        }
        let name = varName(t)
        b.op("transpose", name: name, inputs: [("x", [src]), ("perm", [b.constInts(name + "_perm_0", [0, 2, 3, 1])])],
             outputs: [(name, try milType(t, node: node))])
        irVar[t] = name
        return name
    }

    /// The variable holding rank-4 `t` as NCHW, transposing the IR form if needed.
    mutating func nchw(_ t: String, node: String) throws -> String {
        if let v = nchwVar[t] { return v }
        let src = try value(t, node: node)
        guard try irType(t).rank == 4 else {
            throw MLProgramExportError.invalidGraph(what: "node '\(node)'", expected: "a rank-4 NHWC input '\(t)'", found: "\(try irType(t))")
        }
        let name = b.fresh(MILProgramBuilder.sanitize(t) + "_nchw" + suffix)
        b.op("transpose", name: name, inputs: [("x", [src]), ("perm", [b.constInts(name + "_perm_0", [0, 3, 1, 2])])],
             outputs: [(name, try milType(t, nchw: true, node: node))])
        nchwVar[t] = name
        return name
    }

    var suffix: String { compute == .float16 ? "_cast_fp16" : "" }

    /// A fresh name for the IR-layout variable of `t` (the feature name itself for fp32 outputs).
    mutating func varName(_ t: String) -> String {
        if let f = finalName[t], compute == .float32 || !(types[t]?.elementType.isFloat ?? true),
           graph.description.outputs.first(where: { $0.name == t })?.image == nil, !b.isDefined(f) {
            b.markDefined(f)
            return f
        }
        return b.fresh(MILProgramBuilder.sanitize(t) + ((types[t]?.elementType.isFloat ?? false) ? suffix : ""))
    }

    mutating func nchwName(_ t: String) -> String { b.fresh(MILProgramBuilder.sanitize(t) + "_nchw" + suffix) }

    /// Whether to compute an elementwise op on `inputs` channels-first: every input is rank 4
    /// with the same shape and has an NCHW twin.
    func preferNCHW(_ inputs: [String]) -> Bool {
        guard let s = types[inputs.first ?? ""]?.shape, s.count == 4 else { return false }
        return inputs.allSatisfy { nchwVar[$0] != nil && types[$0]?.shape == s }
    }

    // MARK: Run

    mutating func run() throws -> MLProgramExportResult {
        // MARK: classifier (MLProgramExporter+Classifier.swift)
        let probabilities = try classifierProbabilities()
        if probabilities != nil, !b.reserve(Self.classLabelName) { throw MLProgramExportError.invalidGraph(what: "classifier", expected: "a free name for the label output", found: "'classLabel' used twice") }
        // Feature names: reserved first, so no internal variable takes them.
        var inputs: [Spec.MILSpec.NamedValueType] = []
        var descInputs: [Spec.FeatureDescription] = []
        for i in graph.inputs {
            let name = MILProgramBuilder.sanitize(i.name)
            guard name != Self.classLabelName || probabilities == nil, b.reserve(name) else {
                throw MLProgramExportError.invalidGraph(what: "input '\(i.name)'", expected: "a unique feature name", found: "'\(name)' twice after replacing characters MIL names cannot hold")
            }
            if name != i.name { notes.append("input '\(i.name)' is named '\(name)' (MIL names hold letters, digits and _)") }
            let ty = try irType(i.name)
            let fd = graph.description.inputs.first { $0.name == i.name }
            if let image = fd?.image {
                let shape = [1, image.colorSpace == .grayscale ? 1 : 3, image.height, image.width]
                inputs.append(.init(name: name, type: MILProgramBuilder.tensorType(.float32, shape)))
                descInputs.append(Spec.FeatureDescription(name: name, shortDescription: fd?.shortDescription ?? "", type: Spec.FeatureType(.image(Spec.ImageFeatureType(
                    width: Int64(image.width), height: Int64(image.height), colorSpace: ExportWriter.colorSpace(image.colorSpace))))))
                nchwVar[i.name] = compute == .float16 ? castInput(name, shape: shape) : name
                continue
            }
            let s: MILScalar
            switch ty.elementType {
            case .float32, .float16: s = .float32
            case .int32: s = .int32
            default:
                throw MLProgramExportError.unsupportedOp(node: i.name, op: "input", reason: "inputs of element type \(ty.elementType) are not written; use float32 or int32")
            }
            inputs.append(.init(name: name, type: MILProgramBuilder.tensorType(s, ty.shape)))
            descInputs.append(Spec.FeatureDescription(name: name, shortDescription: fd?.shortDescription ?? "", type: Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(
                shape: ty.shape.map(Int64.init), dataType: s == .int32 ? .int32 : .float32)))))
            irVar[i.name] = (s == .float32 && compute == .float16) ? castInput(name, shape: ty.shape) : name
        }
        for o in graph.outputs {
            let name = MILProgramBuilder.sanitize(o)
            if finalName[o] != nil {
                notes.append("output '\(o)' is listed twice; written once (ML program outputs are unique)")
                continue
            }
            if irVar[o] != nil || nchwVar[o] != nil {
                throw MLProgramExportError.unsupportedOp(node: o, op: "output", reason: "the output is a graph input; insert an identity node")
            }
            guard name != Self.classLabelName || probabilities == nil, b.reserve(name) else {
                throw MLProgramExportError.invalidGraph(what: "output '\(o)'", expected: "a unique feature name", found: "'\(name)' already used")
            }
            if name != o { notes.append("output '\(o)' is named '\(name)' (MIL names hold letters, digits and _)") }
            finalName[o] = name
            if o == probabilities { b.markDefined(name) }  // the classify op's dictionary output, not a tensor variable
        }

        for node in graph.nodes { try lower(node) }

        var outputs: [String] = []
        var descOutputs: [Spec.FeatureDescription] = []
        for o in graph.outputs {
            guard let final = finalName[o], !outputs.contains(final) else { continue }
            if o == probabilities {
                let (outs, features) = try emitClassify(o, final: final)
                outputs.insert(contentsOf: outs, at: 0); descOutputs.insert(contentsOf: features, at: 0)
                continue
            }
            let ty = try irType(o)
            let fd = graph.description.outputs.first { $0.name == o }
            let src = fd?.image != nil ? try nchw(o, node: "output") : try value(o, node: "output")
            let shape = fd?.image != nil ? Self.toNCHW(ty.shape) : ty.shape
            let isFloat = ty.elementType.isFloat
            if src != final {
                if compute == .float16 && isFloat {
                    b.op("cast", name: final, inputs: [("x", [src]), ("dtype", [b.constString(src + "_to_fp32_dtype_0", "fp32")])],
                         outputs: [(final, MILProgramBuilder.tensorType(.float32, shape))])
                } else {
                    b.op("identity", name: final, inputs: [("x", [src])],
                         outputs: [(final, MILProgramBuilder.tensorType(try scalar(ty.elementType, node: o), shape))])
                }
            }
            outputs.append(final)
            let type: Spec.FeatureType
            if let image = fd?.image {
                type = Spec.FeatureType(.image(Spec.ImageFeatureType(width: Int64(image.width), height: Int64(image.height),
                                                                     colorSpace: ExportWriter.colorSpace(image.colorSpace))))
            } else {
                type = Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(shape: ty.shape.map(Int64.init),
                                                                          dataType: isFloat ? .float32 : .int32)))
            }
            descOutputs.append(Spec.FeatureDescription(name: final, shortDescription: fd?.shortDescription ?? "", type: type))
        }

        let block = Spec.MILSpec.Block(outputs: outputs, operations: b.operations)
        let function = Spec.MILSpec.Function(inputs: inputs, opset: options.target.opset,
                                             blockSpecializations: [options.target.opset: block])
        let program = Spec.MILSpec.Program(version: 1, functions: ["main": function])
        let d = graph.description
        var metadata = Spec.Metadata(shortDescription: d.metadata.shortDescription, versionString: d.metadata.versionString,
                                     author: d.metadata.author, license: d.metadata.license)
        var user = d.metadata.userDefined
        if let tag = options.converterTag { user["mlconv.converter"] = tag }
        metadata.userDefined = user.keys.sorted().map { Spec.StringPair(key: $0, value: user[$0] ?? "") }
        var model = Spec.Model(specificationVersion: options.target.specificationVersion,
                               description: Spec.ModelDescription(input: descInputs, output: descOutputs, metadata: metadata))
        if probabilities != nil, let p = descOutputs.dropFirst().first?.name {
            model.description?.predictedFeatureName = Self.classLabelName
            model.description?.predictedProbabilitiesName = p
        }
        try model.setMLProgram(program)
        return MLProgramExportResult(model: model, weights: b.blobs, notes: notes)
    }

    mutating func castInput(_ name: String, shape: [Int]) -> String {
        let v = b.fresh(name + "_to_fp16")
        b.op("cast", name: v, inputs: [("x", [name]), ("dtype", [b.constString(v + "_dtype_0", "fp16")])],
             outputs: [(v, MILProgramBuilder.tensorType(.float16, shape))])
        return v
    }
}

extension ElementType {
    var isFloat: Bool { self == .float32 || self == .float16 }
}
