// ML programs (`mlProgram` models, `.mlpackage` directories) → graph IR.
//
// Tensors keep MIL's shapes and axis order (NCHW for images, [T, B, C] for recurrent inputs); ops
// whose IR counterpart is channels-last (conv, pooling, upsampling, instance_norm) run between
// transposes (`MILOpContext.toChannelsLast` / `fromChannelsLast`), the rest map one to one.
// Constants (`const`, immediate bindings, blob-file values, `constexpr_*` results) are known at
// import: op parameters are read from them, and they become IR weights (fp16 blobs stay fp16,
// pointing into the mapped weight file) or `constant` nodes when an op reads them as tensors.
// Floats are float32 in the IR: a program typed fp16 runs in fp32 unless
// `MILImportOptions.roundFP16` is set, which rounds every fp16-typed op result to fp16
// (cast → fp16 → fp32), as a device computing in fp16 stores it. One file per op family
// (MILOps*.swift); `MILOpTable.mappers` is the table op name → mapper.
import Diagnostics
import Foundation
import MLGraph

/// Options of `MILImporter`.
public struct MILImportOptions: Sendable {
    /// The function to import (nil: "main", or the model description's default function).
    public var function: String?
    /// Round every value the program types fp16 to fp16 (`--precision fp16`), to reproduce a
    /// device that computes in fp16. Default false: fp16 programs run in exact fp32.
    public var roundFP16: Bool
    public init(function: String? = nil, roundFP16: Bool = false) { self.function = function; self.roundFP16 = roundFP16 }
}

/// Imports ML programs into the graph IR. The status of every MIL op: `MILOpTable`
/// (`mlconv ops --mil`, docs/ML_PROGRAMS.md).
public enum MILImporter {
    /// Imports the ML program of `model`.
    ///
    /// - Parameters:
    ///   - model: an `mlProgram` model (`Spec.Model.load(contentsOf:)`).
    ///   - fileName: the model's path, for messages.
    ///   - modelPath: the directory `@model_path` names (the package's `Data/com.apple.CoreML`);
    ///     nil for a bare `.mlmodel` (blob-file values are then refused).
    /// - Throws: `CoreMLImportError.unsupportedModelType` when the model is not an ML program,
    ///   `.invalidModel` for an inconsistent program (unknown function, missing values),
    ///   `.unsupportedLayers` listing every op mlconv cannot import (name, op type, reason).
    public static func importModel(_ model: Spec.Model, fileName: String, modelPath: String?,
                                   options: MILImportOptions = MILImportOptions()) throws -> CoreMLImportResult {
        guard model.kind == .mlProgram else {
            throw CoreMLImportError.unsupportedModelType(file: fileName, kind: model.kind?.name ?? "empty",
                                                         message: "MILImporter imports mlProgram models only")
        }
        let program: Spec.MILSpec.Program
        do {
            guard let p = try model.mlProgram(file: fileName) else {
                throw CoreMLImportError.invalidModel(file: fileName, message: "the model has no ML program")
            }
            program = p
        } catch let e as CoreMLFormatError {
            throw CoreMLImportError.invalidModel(file: fileName, message: "", cause: DiagnosticCause(e))
        }
        guard let desc = model.description else {
            throw CoreMLImportError.invalidModel(file: fileName, message: "the model has no description (inputs and outputs)")
        }
        let fname = options.function ?? (desc.defaultFunctionName.isEmpty ? "main" : desc.defaultFunctionName)
        guard let function = program.functions[fname] else {
            throw CoreMLImportError.invalidModel(file: fileName, message: "the program has no function '\(fname)'; it has "
                + program.functions.keys.sorted().joined(separator: ", ") + " (choose one with --function NAME)")
        }
        guard let block = function.blockSpecializations[function.opset] else {
            throw CoreMLImportError.invalidModel(file: fileName, message: "function '\(fname)' names opset '\(function.opset)' but has "
                + "blocks for \(function.blockSpecializations.keys.sorted())")
        }
        // Feature descriptions: a multifunction model describes each function separately.
        var inputsDesc = desc.input
        var outputsDesc = desc.output
        if let fd = desc.functions.first(where: { $0.name == fname }) {
            inputsDesc = fd.input
            outputsDesc = fd.output
        }
        let importer = MILGraphImporter(fileName: fileName, modelPath: modelPath, options: options)
        return try importer.run(function: function, block: block, functionName: fname, inputs: inputsDesc, outputs: outputsDesc,
                                model: model)
    }

    /// The functions of an ML program model (for `--function`), sorted; empty for other models.
    public static func functionNames(_ model: Spec.Model) -> [String] {
        ((try? model.mlProgram()) ?? nil).map { $0.functions.keys.sorted() } ?? []
    }
}

/// The state of one import.
final class MILGraphImporter {
    /// The builder of the block being imported (the function's, or a nested block's).
    var b: ImportBuilder
    let options: MILImportOptions
    let blobs: MILBlobResolver
    /// MIL name → value (one scope: MIL names are unique in a program's function).
    var values: [String: MILValue] = [:]
    /// MIL name → the `constant` node output emitted for it (constants read as tensors), in the
    /// block being imported.
    var constantNodes: [String: String] = [:]
    /// The enclosing blocks of the block being imported (MILOpsControlFlow.swift), innermost last.
    var outerFrames: [MILFrame] = []
    /// Outer tensors read by the block being imported: (name in the enclosing block, name here).
    var captures: [(outer: String, inner: String)] = []
    /// State inputs (iOS 18 stateful programs), in function order, and the IR tensor holding
    /// each state's current value (MILOpsState.swift).
    var stateNames: [String] = []
    var stateValues: [String: String] = [:]
    /// The outputs of the program's `classify` op, if any (MILOpsMoreA.swift).
    var classifier: MILClassifier?
    /// Op types met and not mapped (for the summary of unsupported ops).
    var problems: [CoreMLImportError.LayerProblem] { b.problems }

    init(fileName: String, modelPath: String?, options: MILImportOptions) {
        b = ImportBuilder(fileName: fileName)
        b.exact = true
        self.options = options
        blobs = MILBlobResolver(modelPath: modelPath, fileName: fileName)
    }

    func run(function: Spec.MILSpec.Function, block: Spec.MILSpec.Block, functionName: String,
             inputs: [Spec.FeatureDescription], outputs: [Spec.FeatureDescription], model: Spec.Model) throws -> CoreMLImportResult {
        let fileName = b.fileName
        var irDesc = ModelDescription()
        irDesc.metadata = CoreMLImporter.metadata(model.description?.metadata, model: model)
        irDesc.metadata.userDefined["mlconv.mlProgram.function"] = functionName
        if options.roundFP16 { irDesc.metadata.userDefined["mlconv.precision"] = "fp16 (fp16-typed values rounded)" }

        // Inputs.
        for input in function.inputs {
            do {
                try importInput(input, features: inputs, description: &irDesc)
            } catch let e as LayerImportFailure {
                throw CoreMLImportError.invalidModel(file: fileName, message: "input '\(input.name)': \(e.reason)")
            }
        }
        // Operations.
        importBlock(block)
        if !b.problems.isEmpty { throw CoreMLImportError.unsupportedLayers(file: fileName, problems: b.problems) }

        // Outputs: the block's outputs, named as the description names them (in that order).
        var outNames: [String] = []
        let order = outputs.isEmpty ? block.outputs : outputs.map(\.name)
        for name in order {
            // MARK: milopsa — classify's label output is not an IR tensor (as for NeuralNetwork classifiers).
            if let cl = classifier, name == cl.labelOutput {
                irDesc.metadata.userDefined["mlconv.classLabelOutput"] = name
                continue
            }
            guard block.outputs.contains(name) || values[name] != nil else {
                throw CoreMLImportError.invalidModel(file: fileName, message: "output '\(name)' is not produced by function '\(functionName)' "
                    + "(block outputs: \(block.outputs.joined(separator: ", ")))")
            }
            do {
                outNames.append(try outputTensor(name))
            } catch let e as LayerImportFailure {
                throw CoreMLImportError.invalidModel(file: fileName, message: "output '\(name)': \(e.reason)")
            }
            let f = outputs.first { $0.name == name }
            irDesc.outputs.append(FeatureDescription(name: name, shortDescription: f?.shortDescription ?? ""))
        }
        // States: each one's value after the program is an extra output (MILOpsState.swift).
        for state in stateNames {
            do {
                let out = try stateOutput(state)
                outNames.append(out)
                irDesc.metadata.userDefined[MILStates.metadataPrefix + state] = out
            } catch let e as LayerImportFailure {
                throw CoreMLImportError.invalidModel(file: fileName, message: "state '\(state)': \(e.reason)")
            }
        }
        if let cl = classifier {
            irDesc.classLabels = cl.labels
            if outNames.contains(cl.probabilitiesOutput) { irDesc.probabilitiesOutput = cl.probabilitiesOutput }
            if cl.int64Labels { irDesc.metadata.userDefined["mlconv.classLabelType"] = "int64" }
        }
        var graph = Graph(inputs: b.inputs, outputs: outNames, nodes: b.nodes, tensorTypes: b.types, description: irDesc)
        do {
            try graph.inferShapesAndVerify()  // MARK: graph verifier: a layered error when inference fails
        } catch {
            if let m = (error as? GraphError)?.memoryLimitExceeded(file: fileName) { throw m }  // MARK: graph verifier: keeps .resourceLimit
            throw CoreMLImportError.invalidModel(file: fileName, message: "the imported graph does not verify", cause: DiagnosticCause(error))
        }
        return CoreMLImportResult(graph: graph, warnings: b.warnings)
    }

    // MARK: Inputs and outputs

    func importInput(_ input: Spec.MILSpec.NamedValueType, features: [Spec.FeatureDescription], description: inout ModelDescription) throws {
        guard let t = try MILTypes.tensorType(input.type), !t.isList else {
            throw LayerImportFailure("is not a tensor or a state")
        }
        if case .stateType? = input.type?.type {
            try importState(input.name, t)
            return
        }
        guard let elem = t.irElementType else { throw LayerImportFailure("has element type \(MILTypes.name(t.dataType))") }
        let feature = features.first { $0.name == input.name }
        var shape = t.shape ?? []
        if shape.contains(where: { $0 < 0 }) || t.shape == nil {
            // Flexible shapes: the description's default shape.
            if case let .multiArray(a)? = feature?.type?.kind, !a.shape.isEmpty {
                shape = try a.shape.map { try Checked.int($0, "input dimension", in: 1...Node.maxCountAttribute) }
            } else {
                throw LayerImportFailure("has dimensions known only at run time and no default shape in the model description")
            }
        }
        if case let .image(img)? = feature?.type?.kind {
            let cs: ImageColorSpace
            switch img.colorSpace {
            case .rgb: cs = .rgb
            case .bgr: cs = .bgr
            case .grayscale, .grayscaleFloat16: cs = .grayscale
            default: throw LayerImportFailure("is an image with colour space \(img.colorSpace)")
            }
            let c = cs == .grayscale ? 1 : 3
            guard shape.count == 4, shape[1] == c else {
                throw LayerImportFailure("is an image input whose program type is \(shape); expected [1, \(c), H, W]")
            }
            let (h, w) = (shape[2], shape[3])
            b.addInput(input.name, [shape[0], h, w, c])
            let nchw = try b.emit(input.name + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [input.name])
            values[input.name] = .tensor(nchw)
            description.inputs.append(FeatureDescription(name: input.name, shortDescription: feature?.shortDescription ?? "",
                                                         image: ImageFeature(width: w, height: h, colorSpace: cs)))
            return
        }
        b.inputs.append(ValueInfo(name: input.name, type: TensorType(shape, elem)))
        b.types[input.name] = TensorType(shape, elem)
        values[input.name] = .tensor(input.name)
        description.inputs.append(FeatureDescription(name: input.name, shortDescription: feature?.shortDescription ?? ""))
        if t.dataType == .float16 && options.roundFP16 {
            // The graph input keeps its name; the program reads the rounded copy.
            values[input.name] = .tensor(try roundToFP16(input.name, name: input.name + "__rounded"))
        }
    }

    /// The IR tensor named `name` holding MIL value `name` (an identity when the value is bound
    /// to another tensor, a constant node for a constant).
    func outputTensor(_ name: String) throws -> String {
        switch values[name] {
        case let .tensor(t)?:
            guard b.types[t] != nil else { throw LayerImportFailure("is a value of a nested block, not of the function") }
            if t == name { return t }
            if b.types[name] != nil { b.renameTensor(name, to: b.freshTensorName(name + "__shadowed")) }
            return try b.emit(name, .identity, [t], output: name)
        case let .constant(c)?:
            return try b.emit(name, .constant, [], output: name, weights: ["value": c.constantTensor()])
        default:
            throw LayerImportFailure("has no value")
        }
    }

    /// x rounded to fp16 and back (`--precision fp16`); the result is named `name`.
    func roundToFP16(_ x: String, name: String) throws -> String {
        var src = x
        if x == name {
            src = b.freshTensorName(name + "__fp32")
            b.renameTensor(x, to: src)
            for (k, v) in values { if case .tensor(x) = v { values[k] = .tensor(src) } }
        }
        let half = try b.emit(name + "__fp16", .cast(to: .float16), [src])
        return try b.emit(name + "__round", .cast(to: .float32), [half], output: name)
    }

    // MARK: Blocks

    func importBlock(_ block: Spec.MILSpec.Block) {
        for op in block.operations {
            let ctx = MILOpContext(op: op, importer: self)
            do {
                try importOp(ctx)
            } catch let e as LayerImportFailure {
                b.problems.append(.init(layer: ctx.name, type: op.type, reason: e.ownReason, cause: e.cause?.error))
                for o in op.outputs { values[o.name] = MILValue.none }
            } catch {
                b.problems.append(.init(layer: ctx.name, type: op.type, reason: "", cause: error))
                for o in op.outputs { values[o.name] = MILValue.none }
            }
        }
    }

    func importOp(_ ctx: MILOpContext) throws {
        let op = ctx.op
        // An op reading a value that failed to import is skipped (its problem is already listed).
        for (_, arg) in op.inputs {
            for binding in arg.arguments {
                if case let .name(n)? = binding.binding, case MILValue.none? = values[n] {
                    throw LayerImportFailure("reads '\(n)', which could not be imported")
                }
            }
        }
        guard let mapper = MILOpTable.mappers[op.type] else {
            throw LayerImportFailure(MILOpTable.refusals[op.type] ?? "the MIL op '\(op.type)' is not supported by mlconv (see `mlconv ops --mil`)")
        }
        let results = try mapper(ctx)
        guard results.count == op.outputs.count else {
            throw LayerImportFailure("internal error: the importer produced \(results.count) values for \(op.outputs.count) outputs; please report it")
        }
        for (o, v) in zip(op.outputs, results) {
            var value = v
            if options.roundFP16, case let .tensor(t) = v, let tt = try MILTypes.tensorType(o.type), tt.dataType == .float16, !tt.isList,
               b.types[t]?.elementType == .float32 {
                value = .tensor(try roundToFP16(t, name: o.name))
            }
            values[o.name] = value
        }
    }

    // MARK: Constants as tensors

    /// The IR tensor for MIL name `name` (a `constant` node for constants, cast to the MIL
    /// element type when it is not a float).
    func tensor(named name: String, value: MILValue) throws -> String {
        switch value {
        case let .tensor(t): return try resolve(t)
        case let .constant(c):
            if let t = constantNodes[name] { return t }
            let t = try constantTensorNode(c, base: name)
            constantNodes[name] = t
            return t
        case .none:
            throw LayerImportFailure("reads '\(name)', which has no value")
        }
    }

    func constantTensorNode(_ c: MILConst, base: String) throws -> String {
        let t = try b.emit(b.freshNodeName(base + "__const"), .constant, [], weights: ["value": c.constantTensor()])
        if let e = MILTypes.irElementType(c.dataType), e != .float32 {
            return try b.emit(base + "__cast", .cast(to: e), [t])
        }
        return t
    }
}
