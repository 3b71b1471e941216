import CoreMLFormat
import Foundation
import KerasFrontend
import MLGraph
import MLRuntime

/// `mlconv ops [--json] [--kinds] [--coreml [--markdown]]`: the IR's op set, generated from the
/// registries; with `--coreml`, every Core ML NeuralNetwork layer type and its status.
enum OpsCommand: Command {
    static let name = "ops"
    static let summary = "list the IR's ops, their kernels and the Keras / Core ML / MIL names that map to them"
    static let help = """
    Usage: mlconv ops [--json] [--kinds]
           mlconv ops --coreml [--json | --markdown]

    Lists every op of mlconv's IR, generated from its registries (so it cannot drift): for each op
    the kernels that run it (reference — the specification, in plain Swift —, oneDNN, memcpy), the
    Keras layer classes and Core ML NeuralNetwork layer types that convert to its kind, and the MIL
    ops (coremltools) and ONNX operators it corresponds to. Op kinds whose attribute selects a function (activation,
    unary, binary, elementwise, reduce, compare, logical) are listed once per function, named as
    MIL names it, with the kernels that cover that function.

      --json    one JSON array, one object per op: name, kind, summary, kernels, keras, coreml,
                mil, onnx
      --kinds   one line (or object) per op kind instead of per function
      --coreml  every NeuralNetworkLayer type of NeuralNetwork.proto instead (from the importer's
                and the writer's tables): imported (to which IR op kinds), refused configurations,
                not imported (with the reason), and the IR ops the writer lowers to it. With
                --json: one object per type (name, fieldNumber, imported, irOps, limitations,
                refusal, exportedFrom); with --markdown: docs/COREML_LAYERS.md
      --mil     every MIL op of coremltools' iOS15–iOS18 opsets and whether ML programs using it
                are imported (from the MIL importer's op table), with the reason when not;
                with --json one object per op (op, imported, note)
    """
    static let spec = OptionSpec(flags: ["--json", "--kinds", "--coreml", "--markdown", "--mil"], positionalRange: 0...0)

    struct Entry: Encodable {
        var name: String
        var kind: String
        var summary: String
        var kernels: [String]
        var keras: [String]
        var coreml: [String]
        var mil: [String]
        var onnx: [String]
    }

    /// The entries, in `OpKind` declaration order.
    static func entries(perKind: Bool) -> [Entry] {
        var out: [Entry] = []
        for kind in OpKind.allCases {
            let d = kind.definition
            let keras = KerasLayerRegistry.classNames(producing: kind)
            let coreml = CoreMLLayerOps.layers(producing: kind)
            if perKind || d.functions.isEmpty {
                out.append(Entry(name: kind.rawValue, kind: kind.rawValue, summary: d.summary, kernels: KernelRegistry.kernelNames(for: kind),
                                 keras: keras, coreml: coreml, mil: d.milOps, onnx: d.onnxOps))
                continue
            }
            for f in d.functions {
                out.append(Entry(name: f.name, kind: kind.rawValue, summary: "\(d.summary): \(f.name)",
                                 kernels: KernelRegistry.kernels(covering: f.op, inputs: f.inputs), keras: keras, coreml: coreml,
                                 mil: d.milOps.contains(f.name) ? [f.name] : [], onnx: []))
            }
        }
        return out
    }

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        if args.has("--coreml") { return try coreML(args, console: console) }
        if args.has("--mil") { return try mil(args, console: console) }
        if args.has("--markdown") {
            console.error("mlconv ops: --markdown needs --coreml")
            return 2
        }
        let list = entries(perKind: args.has("--kinds"))
        if args.has("--json") {
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            console.print(String(decoding: try e.encode(list), as: UTF8.self))
            return 0
        }
        let kinds = Set(list.map(\.kind)).count
        console.print("\(list.count) ops in \(kinds) op kinds (kernels; Keras layers; Core ML layers; MIL and ONNX ops)")
        let labels = list.map { $0.name == $0.kind ? $0.name : "\($0.name) (\($0.kind))" }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (e, label) in zip(list, labels) {
            console.print(label.padding(toLength: width, withPad: " ", startingAt: 0) + e.kernels.joined(separator: ", "))
            if !e.keras.isEmpty { console.print("    keras:  " + e.keras.joined(separator: ", ")) }
            if !e.coreml.isEmpty { console.print("    coreml: " + e.coreml.joined(separator: ", ")) }
            if !e.mil.isEmpty { console.print("    mil:    " + e.mil.joined(separator: ", ")) }
            if !e.onnx.isEmpty { console.print("    onnx:   " + e.onnx.joined(separator: ", ")) }
        }
        return 0
    }
}

extension OpsCommand {
    /// `mlconv ops --coreml`: `CoreMLLayerCatalog`.
    static func coreML(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let list = CoreMLLayerCatalog.all()
        if args.has("--markdown") {
            console.print(String(CoreMLLayerCatalog.markdown(list).dropLast()))
            return 0
        }
        if args.has("--json") {
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            console.print(String(decoding: try e.encode(list), as: UTF8.self))
            return 0
        }
        console.print(CoreMLLayerCatalog.summary(list))
        let width = (list.map(\.name.count).max() ?? 0) + 2
        for l in list {
            let status = l.imported ? "imported → " + l.irOps.joined(separator: ", ") : "not imported: " + (l.refusal ?? "")
            console.print(l.name.padding(toLength: width, withPad: " ", startingAt: 0) + status)
            if let lim = l.limitations { console.print("    refused: " + lim) }
            if !l.exportedFrom.isEmpty { console.print("    written from: " + l.exportedFrom.joined(separator: "; ")) }
        }
        return 0
    }
}

// MARK: ML programs
extension OpsCommand {
    /// `mlconv ops --mil`: `MILOpTable.status`, generated from the MIL importer's table.
    static func mil(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let list = MILOpTable.status
        if args.has("--json") {
            let objects = list.map { ["op": $0.op, "imported": $0.supported, "note": $0.note] as [String: Any] }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
            console.print(String(decoding: data, as: UTF8.self))
            return 0
        }
        console.print("\(list.filter(\.supported).count) of \(list.count) MIL ops imported (ML programs: .mlpackage, mlProgram .mlmodel)")
        let width = (list.map(\.op.count).max() ?? 0) + 2
        for e in list {
            console.print(e.op.padding(toLength: width, withPad: " ", startingAt: 0) + (e.supported ? "imported" : "not imported: " + e.note))
        }
        return 0
    }
}
