import Foundation
import Diagnostics
import CoreMLFormat
import KerasFrontend
import MLBundle
import MLGraph
import MLRuntime

/// `mlconv keras in.h5 [--config arch.json] -o out.mlbundle`
enum KerasCommand: Command {
    static let name = "keras"
    static let summary = "convert a Keras .h5 model to a compiled .mlbundle or a Core ML .mlmodel"
    static let help = """
    Usage: mlconv keras <model.h5> [--config arch.json] -o <out.mlbundle|out.mlmodel|out.mlpackage> [options]

    Converts a Keras HDF5 file (Keras 2.x / tf.keras or Keras 3 `model.save('x.h5')`, or a
    weights-only `save_weights` file together with the `model.to_json()` architecture) into a
    compiled .mlbundle that `mlconv predict` runs, or a Core ML .mlmodel (lowest
    specificationVersion its features need) that coremltools and Xcode read.

    Options:
      -o, --output PATH          output file (.mlbundle or .mlmodel), or an ML program package
                                 (.mlpackage directory); written atomically
      --target iOS15|iOS16|iOS17|iOS18   .mlpackage deployment target (default iOS15;
                                 specificationVersion 6…9, MIL opset CoreML5…CoreML8)
      --precision fp16|fp32      .mlpackage weight and compute precision (default fp16, as
                                 coremltools: inputs cast to fp16, outputs back to fp32)
      --config PATH              architecture JSON (model.to_json()) for a weights-only .h5
      --input-shape NAME=D1,D2…  fixed shape (without batch) for an input whose Keras shape has
                                 unknown dimensions; repeatable
      --class-labels FILE        one label per line: the model becomes a classifier
                                 (neuralNetworkClassifier in .mlmodel, a classify op with
                                 outputs classLabel and the probabilities dictionary in
                                 .mlpackage) and `predict` prints the
                                 top-5 labels with probabilities
      --input-name OLD=NEW       rename an input; repeatable
      --output-name OLD=NEW      rename an output; repeatable
      --image-input NAME         make input NAME an image (Core ML imageType); its pixels 0–255
                                 go through y = scale·pixel + bias[channel] first
      --image-scale S            that scale (default 1)
      --red-bias B, --green-bias B, --blue-bias B, --gray-bias B   those biases (default 0)
      --bgr                      the image input is BGR (default RGB; 1 channel is grayscale)
      --image-output NAME        make output NAME an image (RGB, or grayscale for 1 channel)
      --author TEXT, --license TEXT, --short-description TEXT
      --description NAME=TEXT    description of an input or output; repeatable
    \(flexibleShapeOptionsHelp)
    \(hookOptionsHelp)
    \(passOptionsHelp)
                                 For .mlbundle output the inference passes rewrite the stored
                                 graph (e.g. zero padding folded into the convolution after it);
                                 disabled ones are recorded in the bundle, so `mlconv predict`
                                 does not run them at load either. Not accepted for .mlmodel
                                 output, which keeps the layers as converted.

    Examples:
      mlconv keras Fixtures/demo/digits_cnn.h5 --class-labels Fixtures/demo/labels.txt -o digits.mlbundle
      mlconv keras style.h5 --lower res_crop=crop:2,2,2,2 --custom-layer rescale_output=RescaleOutputLambda -o style.mlbundle
    """
    static let spec = OptionSpec(
        flags: ["--bgr"],
        single: ["--output", "--config", "--class-labels", "--author", "--license", "--short-description",
                 "--image-scale", "--red-bias", "--green-bias", "--blue-bias", "--gray-bias",
                 "--target", "--precision"],
        repeatable: ["--input-shape", "--description", "--input-name", "--output-name", "--image-input", "--image-output"],
        aliases: ["-o": "--output"],
        positionalRange: 1...1).adding(hookOptionSpec).adding(passOptionSpec).adding(flexibleShapeOptionSpec)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let input = URL(fileURLWithPath: args.positional[0])
        let output = URL(fileURLWithPath: try args.required("--output"))
        try refuseDirectoryModel(input)
        let disabled = try disabledPasses(args)
        if !disabled.isEmpty, output.pathExtension.lowercased() != "mlbundle" {
            throw UsageError("--disable-pass applies to .mlbundle output (the inference passes rewrite the graph mlconv runs); a .mlmodel keeps the layers as converted")
        }
        var options = try parseKerasHookOptions(args)
        for (name, dims) in try args.pairs("--input-shape") {
            let shape = dims.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !shape.isEmpty, shape.count == dims.split(separator: ",").count else {
                throw UsageError("--input-shape takes NAME=D1,D2,… with whole numbers, found '\(name)=\(dims)'")
            }
            options.inputShapes[name] = shape
        }
        // MARK: flexible shapes (FlexibleShapeOptions.swift)
        let flexible = try flexibleShapeOptions(args)
        let architecture = args.value("--config").map { URL(fileURLWithPath: $0) }
        if !flexible.isEmpty {
            // The options are checked against the Keras config's inputs before converting.
            // (A file without architecture is refused by the conversion below.)
            let summary = try KerasInspector.inspect(input, architectureJSON: architecture)
            if summary.hasArchitecture {
                try validateFlexibleShapes(flexible, inputs: summary.inputs.map { ($0.name, $0.shape) },
                                           specs: Dictionary(try args.pairs("--flexible-shape"), uniquingKeysWith: { a, _ in a }))
            }
        }
        var converted: Graph?
        while converted == nil {
            do {
                converted = try KerasConverter(options: options).convert(modelAt: input, architectureJSON: architecture)
            } catch let e as KerasConversionError {
                // An input of unknown (None) dimensions with a flexible shape defaults to its smallest / first shape.
                guard case let .unknownInputShape(_, name, kerasShape) = e, options.inputShapes[name] == nil,
                      let flex = flexible.first(where: { $0.name == name }),
                      let shape = defaultKerasShape(for: flex.flexibility, kerasRank: kerasShape.count) else { throw e }
                options.inputShapes[name] = shape
            }
        }
        guard var graph = converted else { return 1 }
        try applyFlexibleShapes(flexible, to: &graph)
        try applyDescriptionOptions(args, to: &graph)
        try writeModel(graph, to: output, source: input.lastPathComponent, console: console,
                       passes: InferencePasses(run: true, disabled: disabled), mlProgram: try mlProgramOptions(args, output: output))
        return 0
    }
}

/// Applies the options shared by converting commands, in order: renames, image inputs/outputs,
/// class labels, metadata and descriptions.
func applyDescriptionOptions(_ args: ParsedArguments, to graph: inout Graph) throws {
    for (old, new) in try args.pairs("--input-name") {
        guard graph.inputs.contains(where: { $0.name == old }) else {
            throw CLIError("--input-name: the model has no input '\(old)'; its inputs are \(graph.inputs.map(\.name).joined(separator: ", "))")
        }
        try graph.renameTensor(old, to: new)
    }
    for (old, new) in try args.pairs("--output-name") {
        guard graph.outputs.contains(old) else {
            throw CLIError("--output-name: the model has no output '\(old)'; its outputs are \(graph.outputs.joined(separator: ", "))")
        }
        try graph.renameTensor(old, to: new)
    }
    let biasOptions = ["--red-bias", "--green-bias", "--blue-bias", "--gray-bias", "--image-scale"]
    if args.all("--image-input").isEmpty, let used = biasOptions.first(where: { args.value($0) != nil }) ?? (args.has("--bgr") ? "--bgr" : nil) {
        throw UsageError("\(used) applies to an image input: add --image-input NAME")
    }
    for name in args.all("--image-input") {
        guard let input = graph.inputs.first(where: { $0.name == name }) else {
            throw CLIError("--image-input: the model has no input '\(name)'; its inputs are \(graph.inputs.map(\.name).joined(separator: ", "))")
        }
        let s = input.type.shape
        guard s.count == 4, s[3] == 1 || s[3] == 3 else {
            throw CLIError("--image-input \(name): the input has shape \(formatShape(s)); an image input needs (1, height, width, 1 or 3)")
        }
        let space: ImageColorSpace = s[3] == 1 ? .grayscale : args.has("--bgr") ? .bgr : .rgb
        let r = try args.float("--red-bias") ?? 0, g = try args.float("--green-bias") ?? 0, b = try args.float("--blue-bias") ?? 0
        let bias: [Float] = space == .grayscale ? [try args.float("--gray-bias") ?? 0] : space == .bgr ? [b, g, r] : [r, g, b]
        try graph.markImageInput(name, feature: ImageFeature(width: s[2], height: s[1], colorSpace: space,
                                                               scale: try args.float("--image-scale") ?? 1, bias: bias))
    }
    for name in args.all("--image-output") {
        try graph.markImageOutput(name, colorSpace: args.has("--bgr") && graph.tensorTypes[name]?.shape.last == 3 ? .bgr : nil)
    }
    if let path = args.value("--class-labels") {
        _ = try existingFile(path, what: "--class-labels")
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw CLIError("cannot read class labels file '\(path)': \(error.localizedDescription)")
        }
        let labels = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard graph.outputs.count >= 1, let probs = graph.outputs.first, let t = graph.tensorTypes[probs] else {
            throw CLIError("--class-labels needs a model with an output")
        }
        let classes = t.shape.last ?? 0
        guard labels.count == classes else {
            throw CLIError("'\(path)' has \(labels.count) labels, but output '\(probs)' has \(classes) classes (shape \(formatShape(t.shape))); give one label per class, one per line")
        }
        graph.description.classLabels = labels
        graph.description.probabilitiesOutput = probs
    }
    if let v = args.value("--author") { graph.description.metadata.author = v }
    if let v = args.value("--license") { graph.description.metadata.license = v }
    if let v = args.value("--short-description") { graph.description.metadata.shortDescription = v }
    for (name, text) in try args.pairs("--description") {
        if let i = graph.description.inputs.firstIndex(where: { $0.name == name }) {
            graph.description.inputs[i].shortDescription = text
        } else if let i = graph.description.outputs.firstIndex(where: { $0.name == name }) {
            graph.description.outputs[i].shortDescription = text
        } else if graph.inputs.contains(where: { $0.name == name }) {
            graph.description.inputs.append(FeatureDescription(name: name, shortDescription: text))
        } else if graph.outputs.contains(name) {
            graph.description.outputs.append(FeatureDescription(name: name, shortDescription: text))
        } else {
            throw CLIError("--description names '\(name)', which is neither an input (\(graph.inputs.map(\.name).joined(separator: ", "))) nor an output (\(graph.outputs.joined(separator: ", "))) of the model")
        }
    }
}

/// Writes `graph` as the format the output path's extension names, then prints a summary.
/// For an .mlbundle, first runs the inference passes as `passes` says (printing which changed the
/// graph) and records the disabled ones in the bundle; `passes` is ignored for .mlmodel.
func writeModel(_ original: Graph, to output: URL, source: String, console: Console, passes: InferencePasses = .none,
                mlProgram: MLProgramExportOptions = MLProgramExportOptions()) throws {
    var graph = original
    var writtenInputShapes: [String: String] = [:]
    switch output.pathExtension.lowercased() {
    case "mlbundle":
        if passes.run {
            let changed = try PassPipeline.inference.withConstantEvaluator(ReferenceConstantEvaluator.evaluate)
                .run(on: &graph, disabling: passes.disabled)
            if !changed.isEmpty {
                console.print("inference passes applied: \(changed.joined(separator: ", ")) (\(original.nodes.count) → \(graph.nodes.count) layers)")
            }
        }
        if !passes.disabled.isEmpty {
            console.print("inference passes disabled (recorded in the bundle): \(passes.disabled.sorted().joined(separator: ", "))")
        }
        try BundleWriter.write(graph, to: output, producer: "mlconv \(MLConv.version)", source: source,
                               disabledPasses: passes.disabled)
        var unknown: [String: [String]] = [:]
        for n in graph.nodes {
            if case let .custom(a) = n.op, CustomLayerRegistry.implementation(for: a.className) == nil { unknown[a.className, default: []].append(n.name) }
        }
        for (cls, layers) in unknown.sorted(by: { $0.key < $1.key }) {
            console.error("mlconv: warning: custom layer class '\(cls)' (layer(s) \(layers.joined(separator: ", "))) has no implementation in mlconv's runtime: `mlconv predict` will fail until one is registered (CustomLayerRegistry.register) — or convert with --lower instead")
        }
    case "mlmodel":
        var options = CoreMLExportOptions()
        options.converterTag = "mlconv \(MLConv.version)"
        let result = try CoreMLExporter.export(graph, options: options)
        try result.model.write(toFile: output.path)
        // The summary shows a multi-array input as written (Core ML order, e.g. [C, H, W]).
        for f in result.model.description?.input ?? [] {
            if case let .multiArray(a)? = f.type?.kind, !a.shape.isEmpty {
                writtenInputShapes[f.name] = formatShape(a.shape.map { Int($0) }) + " (as written in the .mlmodel)"
            }
        }
        console.print("Core ML specificationVersion \(result.model.specificationVersion)"
            + (result.versionReasons.isEmpty ? "" : " (" + result.versionReasons.map(\.description).joined(separator: "; ") + ")"))
    // MARK: ML programs
    case "mlpackage":
        var options = mlProgram
        options.converterTag = "mlconv \(MLConv.version)"
        let result = try MLProgramExporter.write(graph, to: output.path, options: options)
        for note in result.notes { console.print("note: \(note)") }
        console.print("ML program: specificationVersion \(result.model.specificationVersion), opset \(options.target.opset), "
            + "\(options.precision.rawValue), \(result.weights.count) weight blob(s)")
    default:
        throw CLIError("unsupported output extension '.\(output.pathExtension)' for '\(output.path)'; use .mlbundle, .mlmodel or .mlpackage", category: .usage)
    }
    let size = output.pathExtension.lowercased() == "mlpackage" ? directorySize(output.path)
        : (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
    console.print("wrote \(output.path) (\(formatBytes(size)); \(graph.nodes.count) layers, \(graph.parameterCount) parameters) from \(source)")
    for i in graph.inputs { console.print("  input  \(i.name) \(writtenInputShapes[i.name] ?? formatShape(i.type.shape))") }
    for o in graph.outputs { console.print("  output \(o) \(graph.tensorTypes[o].map { formatShape($0.shape) } ?? "?")") }
}

/// An error of the CLI itself (bad file argument, incompatible options), printed as is.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    /// The exit-code category (issue 13); most CLI errors are about a file argument.
    var category: DiagnosticCategory = .inputFile
    init(_ message: String) { description = message }
    init(_ message: String, category: DiagnosticCategory) { description = message; self.category = category }
}

func formatBytes(_ n: Int) -> String {
    if n >= 1 << 20 { return String(format: "%.2f MB", Double(n) / 1_048_576) }
    if n >= 1 << 10 { return String(format: "%.1f KB", Double(n) / 1024) }
    return "\(n) B"
}
