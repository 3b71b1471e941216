import Foundation
import KerasFrontend
import MLBundle
import MLGraph

/// `mlconv keras in.h5 [--config arch.json] -o out.mlbundle`
enum KerasCommand: Command {
    static let name = "keras"
    static let summary = "convert a Keras .h5 model to a compiled .mlbundle"
    static let help = """
    Usage: mlconv keras <model.h5> [--config arch.json] -o <out.mlbundle> [options]

    Converts a Keras HDF5 file (Keras 2.x / tf.keras or Keras 3 `model.save('x.h5')`, or a
    weights-only `save_weights` file together with the `model.to_json()` architecture) into a
    compiled .mlbundle that `mlconv predict` runs.

    Options:
      -o, --output PATH          output file (.mlbundle); written atomically
      --config PATH              architecture JSON (model.to_json()) for a weights-only .h5
      --input-shape NAME=D1,D2…  fixed shape (without batch) for an input whose Keras shape has
                                 unknown dimensions; repeatable
      --class-labels FILE        one label per line: the model becomes a classifier and
                                 `predict` prints the top-5 labels
      --author TEXT, --license TEXT, --short-description TEXT
      --description NAME=TEXT    description of an input or output; repeatable

    Example:
      mlconv keras Fixtures/demo/digits_cnn.h5 --class-labels Fixtures/demo/labels.txt -o digits.mlbundle
    """
    static let spec = OptionSpec(
        single: ["--output", "--config", "--class-labels", "--author", "--license", "--short-description"],
        repeatable: ["--input-shape", "--description"],
        aliases: ["-o": "--output"],
        positionalRange: 1...1)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let input = URL(fileURLWithPath: args.positional[0])
        let output = URL(fileURLWithPath: try args.required("--output"))
        var options = KerasConversionOptions()
        for (name, dims) in try args.pairs("--input-shape") {
            let shape = dims.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !shape.isEmpty, shape.count == dims.split(separator: ",").count else {
                throw UsageError("--input-shape takes NAME=D1,D2,… with whole numbers, found '\(name)=\(dims)'")
            }
            options.inputShapes[name] = shape
        }
        let converter = KerasConverter(options: options)
        var graph = try converter.convert(modelAt: input, architectureJSON: args.value("--config").map { URL(fileURLWithPath: $0) })
        try applyDescriptionOptions(args, to: &graph)
        try writeModel(graph, to: output, source: input.lastPathComponent, console: console)
        return 0
    }
}

/// Applies --class-labels, metadata and --description options shared by converting commands.
func applyDescriptionOptions(_ args: ParsedArguments, to graph: inout Graph) throws {
    if let path = args.value("--class-labels") {
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
func writeModel(_ graph: Graph, to output: URL, source: String, console: Console) throws {
    switch output.pathExtension.lowercased() {
    case "mlbundle":
        try BundleWriter.write(graph, to: output, producer: "mlconv \(MLConv.version)", source: source)
    default:
        throw CLIError("unsupported output extension '.\(output.pathExtension)' for '\(output.path)'; use .mlbundle")
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
    console.print("wrote \(output.path) (\(formatBytes(size)); \(graph.nodes.count) layers, \(graph.parameterCount) parameters) from \(source)")
    for i in graph.inputs { console.print("  input  \(i.name) \(formatShape(i.type.shape))") }
    for o in graph.outputs { console.print("  output \(o) \(graph.tensorTypes[o].map { formatShape($0.shape) } ?? "?")") }
}

/// An error of the CLI itself (bad file argument, incompatible options), printed as is.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

func formatBytes(_ n: Int) -> String {
    if n >= 1 << 20 { return String(format: "%.2f MB", Double(n) / 1_048_576) }
    if n >= 1 << 10 { return String(format: "%.1f KB", Double(n) / 1024) }
    return "\(n) B"
}
