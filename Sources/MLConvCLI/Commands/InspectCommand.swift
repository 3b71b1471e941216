import Foundation
import MLPrediction
import CoreMLFormat
import KerasFrontend
import MLBundle
import MLGraph

/// `mlconv inspect <file.h5|file.mlbundle> [--json]`
enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "show a model's inputs, outputs, metadata and layers"
    static let help = """
    Usage: mlconv inspect <model.h5|model.mlmodel|model.mlpackage|model.mlbundle> [--json] [--no-auto-lambda]

    Prints the model's inputs and outputs (name, type, shape / image size and colour space,
    description), metadata, layer count by type, parameter count and weight precision. For Core ML
    files also the model type, specificationVersion, class label count and custom layer classes
    (other model types — pipelines, trees, GLM, SVM, kNN, ML programs — show their type, inputs,
    outputs and metadata). For Keras files also the Keras version and backend, and for each Lambda
    layer the Python expression recovered from its stored bytecode (lowered to IR ops unless
    --no-auto-lambda).
    --json prints the same as one JSON object.
    """
    static let spec = OptionSpec(flags: ["--json", "--no-auto-lambda"], positionalRange: 1...1)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let url = URL(fileURLWithPath: args.positional[0])
        var report: [String: Any]
        var text: String? = nil
        switch try ModelFileKind.detect(url) {
        case .keras:
            report = try kerasReport(url, autoLowerLambdas: !args.has("--no-auto-lambda"))
        case .bundle:
            let b = try BundleFile(contentsOf: url)
            var r = graphReport(b.graph)
            r["format"] = "mlbundle"
            r["formatVersion"] = b.formatVersion.description
            r["producer"] = b.producer
            if !b.disabledPasses.isEmpty { r["disabledPasses"] = b.disabledPasses.sorted().joined(separator: ", ") }
            report = r
        case .coreML:
            let r = try CoreMLInspector.report(for: url, runCheck: runCheck)
            report = r.jsonObject
            text = r.text
            // MARK: ML programs: the program as MIL text
            if let program = try? Spec.Model.load(contentsOf: url.path).mlProgram(file: url.lastPathComponent) {
                let mil = program.milText()
                var j = report
                j["milText"] = mil
                report = j
                text = (text ?? "") + "\n\nMIL program:\n" + mil
            }
        }
        if args.has("--json") {
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
            console.print(String(decoding: data, as: UTF8.self))
        } else {
            console.print(text ?? renderText(report))
        }
        return 0
    }
}

func kerasReport(_ url: URL, autoLowerLambdas: Bool = true) throws -> [String: Any] {
    let s = try KerasInspector.inspect(url, options: KerasConversionOptions(autoLowerLambdas: autoLowerLambdas))
    return s.jsonObject
}

/// A JSON-ready description of a graph: features, metadata, op counts, parameters, weight bytes.
func graphReport(_ g: Graph) -> [String: Any] {
    var weightBytes: [String: Int] = [:]
    var layers: [[String: Any]] = []
    for n in g.nodes {
        var l: [String: Any] = ["name": n.name, "type": n.op.name]
        if !n.weights.isEmpty {
            l["weights"] = n.weights.keys.sorted().map { k -> [String: Any] in
                let w = n.weights[k]!
                return ["name": k, "shape": w.shape, "storage": w.encoding.description]
            }
        }
        layers.append(l)
        for w in n.weights.values { weightBytes[w.encoding.description, default: 0] += w.encodedByteCount }
    }
    func feature(_ name: String, _ t: TensorType?, _ d: FeatureDescription?) -> [String: Any] {
        var f: [String: Any] = ["name": name, "shape": t?.shape ?? [], "type": t?.elementType.rawValue ?? "?"]
        if let d, !d.shortDescription.isEmpty { f["description"] = d.shortDescription }
        if let img = d?.image { f["image"] = ["width": img.width, "height": img.height, "colorSpace": img.colorSpace.rawValue] }
        return f
    }
    let md = g.description.metadata
    var r: [String: Any] = [
        "inputs": g.inputs.map { i in feature(i.name, i.type, g.description.inputs.first { $0.name == i.name }) },
        "outputs": g.outputs.map { o in feature(o, g.tensorTypes[o], g.description.outputs.first { $0.name == o }) },
        "layerCounts": g.opCounts,
        "layerCount": g.nodes.count,
        "parameterCount": g.parameterCount,
        "weightBytes": weightBytes,
        "layers": layers,
        "metadata": ["author": md.author, "license": md.license, "shortDescription": md.shortDescription,
                     "version": md.versionString, "userDefined": md.userDefined],
    ]
    if let labels = g.description.classLabels { r["classLabelCount"] = labels.count }
    return r
}

/// Human-readable rendering of a report made by `graphReport` / `KerasModelSummary.jsonObject`.
func renderText(_ r: [String: Any]) -> String {
    var lines: [String] = []
    func shape(_ any: Any?) -> String { ((any as? [Int]) ?? []).map(String.init).joined(separator: "×") }
    for key in ["format", "formatVersion", "producer", "disabledPasses", "kerasVersion", "backend", "modelClass", "weightsOnly",
                "conversionError"] {
        if let v = r[key] { lines.append("\(key): \(v)") }
    }
    for (title, key) in [("Inputs", "inputs"), ("Outputs", "outputs")] {
        lines.append("\(title):")
        for f in (r[key] as? [[String: Any]]) ?? [] {
            var s = "  \(f["name"] ?? "?")  \(f["type"] ?? "")[\(shape(f["shape"]))]"
            if let img = f["image"] as? [String: Any] { s += "  image \(img["colorSpace"] ?? "") \(img["width"] ?? "")×\(img["height"] ?? "")" }
            if let d = f["description"] { s += "  — \(d)" }
            lines.append(s)
        }
    }
    if let md = r["metadata"] as? [String: Any] {
        for k in ["author", "license", "shortDescription", "version"] {
            if let v = md[k] as? String, !v.isEmpty { lines.append("\(k): \(v)") }
        }
        for (k, v) in ((md["userDefined"] as? [String: String]) ?? [:]).sorted(by: { $0.key < $1.key }) { lines.append("\(k): \(v)") }
    }
    if let n = r["classLabelCount"] { lines.append("class labels: \(n)") }
    if let n = r["parameterCount"] { lines.append("parameters: \(n)") }
    if let wb = r["weightBytes"] as? [String: Int], !wb.isEmpty {
        lines.append("weight bytes: " + wb.sorted { $0.key < $1.key }.map { "\($0.key) \(formatBytes($0.value))" }.joined(separator: ", "))
    }
    if let lambdas = r["lambdas"] as? [[String: Any]] {
        lines.append("Lambda layers (\(lambdas.count)):")
        for l in lambdas {
            var s = "  \(l["name"] ?? "?"): \(l["expression"] ?? "expression not recovered")"
            if l["autoLowered"] as? Bool == true { s += "  [lowered to IR]" }
            if let n = l["note"] { s += "  (\(n))" }
            lines.append(s)
        }
    }
    if let counts = r["layerCounts"] as? [String: Int] {
        lines.append("layers (\(r["layerCount"] ?? counts.values.reduce(0, +))):")
        for (k, v) in counts.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            lines.append("  \(k) × \(v)")
        }
    }
    return lines.joined(separator: "\n")
}

/// Whether `mlconv predict` runs a Core ML (sub-)model: loads it with the runtime's own loaders
/// (`CoreMLModelLoader`), so `inspect` says exactly what `predict` will do. Neural networks keep
/// the inspector's importer-based statement.
let runCheck: CoreMLInspector.RunCheck = { model in
    guard let kind = model.kind, !tensorPathKinds.contains(kind) else { return nil }
    do {
        _ = try CoreMLModelLoader.load(model, context: ModelLoadContext(name: kind.description, threadCount: 1))
        return (true, "runs with `mlconv predict` (typed --input values or --inputs JSON/CSV batches)")
    } catch {
        return (false, "\(error)")
    }
}
