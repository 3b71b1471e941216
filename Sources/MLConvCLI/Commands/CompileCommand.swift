import CoreMLFormat
import KerasFrontend
import Foundation
import MLConv
import MLGraph
import MLPrediction

/// `mlconv compile model.mlmodel -o model.mlbundle` (what Xcode's Core ML compiler does).
enum CompileCommand: Command {
    static let name = "compile"
    static let summary = "compile a Core ML .mlmodel (or .mlpackage) into a .mlbundle"
    static let help = """
    Usage: mlconv compile <model.mlmodel|model.mlpackage> -o <out.mlbundle> [--disable-pass NAME …]

    Compiles a Core ML neural network (neuralNetwork, classifier or regressor) into mlconv's
    runtime bundle, as Xcode compiles .mlmodel into .mlmodelc. Multi-array inputs and outputs keep
    Core ML's shapes (e.g. [C, H, W]); image inputs take [H, W, C] pixels 0–255 and apply the
    model's preprocessing. Weights stay in their stored precision (fp16, n-bit).

    The inference passes rewrite the stored graph (e.g. a zero padding layer folded into the
    convolution after it); passes disabled here are recorded in the bundle, so `mlconv predict`
    does not run them at load either.

    Options:
      -o, --output PATH          output .mlbundle, written atomically
      --lower MATCH=OP[:ARGS]    lower the custom layers (CustomLayerParams) MATCH selects to built-in
                                 ops, so no runtime class is needed; repeatable. MATCH: a layer name,
                                 a glob on layer names or the layer's className (Swish). OP: an
                                 activation (swish, relu, sigmoid, tanh, gelu, …), affine:SCALE,OFFSET,
                                 crop:T,B,L,R, pad:reflect|edge|constant[=V][:T,B,L,R], identity
                                 (docs/HOOKS.md); e.g. --lower Swish=swish
      --custom-layer MATCH=CLASS run the custom layers MATCH selects with runtime class CLASS
      --hooks FILE.json          the same from a hooks file (docs/HOOKS.md); flags win over it
    \(passOptionsHelp)
    ML programs (.mlpackage, mlProgram .mlmodel):
    \(milOptionsHelp)
    """
    static let spec = OptionSpec(single: ["--output"], aliases: ["-o": "--output"], positionalRange: 1...1).adding(passOptionSpec)
        .adding(OptionSpec(single: ["--hooks"], repeatable: ["--custom-layer", "--lower"])).adding(milOptionSpec)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let input = URL(fileURLWithPath: args.positional[0])
        let output = URL(fileURLWithPath: try args.required("--output"))
        let disabled = try disabledPasses(args)
        guard output.pathExtension.lowercased() == "mlbundle" else {
            throw UsageError("compile writes an .mlbundle; got '\(output.path)'")
        }
        switch try ModelFileKind.detect(input) {
        case .coreML: break
        case .keras: throw CLIError("'\(input.path)' is a Keras file, not a Core ML model; convert it with `mlconv keras \(input.lastPathComponent) -o \(output.lastPathComponent)`")
        case .bundle: throw CLIError("'\(input.path)' is already a compiled .mlbundle; run it with `mlconv predict` or look at it with `mlconv inspect`")
        }
        // Classical models and pipelines are not graphs: they run from the .mlmodel itself.
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: input.path, isDirectory: &isDir), !isDir.boolValue,
           let spec = try? Spec.Model.load(contentsOf: input.path), let kind = spec.kind, !tensorPathKinds.contains(kind) {
            if (try? CoreMLModelLoader.load(spec, context: ModelLoadContext(name: input.lastPathComponent, threadCount: 1))) != nil {
                throw CLIError("\(input.lastPathComponent): a \(kind) model is not a neural network, so there is nothing to compile into an .mlbundle; "
                    + "mlconv runs it from the .mlmodel itself: `mlconv predict \(input.lastPathComponent) --input NAME=VALUE …` "
                    + "(or --inputs rows.json|rows.csv); `mlconv inspect` lists its inputs", category: .unsupportedModel)
            }
        }
        let graph = try loadGraphAndDisabledPasses(input, coreMLHooks: try coreMLHookSpecs(args), milOptions: try milImportOptions(args)).graph
        try writeModel(graph, to: output, source: input.lastPathComponent, console: console,
                       passes: InferencePasses(run: true, disabled: disabled))
        return 0
    }
}
