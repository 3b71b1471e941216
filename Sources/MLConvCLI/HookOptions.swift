import Foundation
import KerasFrontend
import MLGraph
import MLRuntime

// The custom-layer hook options of the converting commands (`mlconv keras`): see docs/HOOKS.md.

/// `--custom-layer MATCH=ClassName` and `--lower MATCH=OP[:ARGS]` (repeatable), `--hooks FILE`.
let hookOptionSpec = OptionSpec(flags: ["--no-auto-lambda"], single: ["--hooks"], repeatable: ["--custom-layer", "--lower"])

/// The help lines of the hook options, to paste into a command's "Options:" text.
let hookOptionsHelp = """
  --lower MATCH=OP[:ARGS]    convert the layers MATCH selects to built-in ops; repeatable. MATCH:
                             a layer name, a glob on layer names (res_crop_*), a Lambda
                             function name (res_crop) or a Keras class name (ReflectionPadding2D).
                             OP: crop:TOP,BOTTOM,LEFT,RIGHT (pixels off each spatial border),
                             affine:SCALE,OFFSET (y = SCALE·x + OFFSET),
                             pad:reflect|edge|constant[=VALUE][:TOP,BOTTOM,LEFT,RIGHT] (no
                             borders: the layer's `padding` config), identity
  --custom-layer MATCH=CLASS convert the layers MATCH selects to a custom layer implemented by
                             CLASS at run time (built in: ResCropBlockLambda,
                             RescaleOutputLambda); repeatable
  --hooks FILE.json          hooks from a JSON file: the same plus parameters, descriptions,
                             output shapes, weights on/off (docs/HOOKS.md); flags win over it
  --no-auto-lambda           do not lower Lambda layers automatically (by default a Lambda whose
                             stored bytecode is a pure expression of its inputs — arithmetic,
                             slicing, K./tf./keras.ops functions the IR has — becomes IR ops;
                             hooks always win over it)
"""

extension OptionSpec {
    /// This spec with `other`'s flags, options, aliases added (the positional range is kept).
    func adding(_ other: OptionSpec) -> OptionSpec {
        var s = self
        s.flags.formUnion(other.flags)
        s.single.formUnion(other.single)
        s.repeatable.formUnion(other.repeatable)
        s.aliases.merge(other.aliases) { a, _ in a }
        return s
    }
}

/// The declarative hooks of `--custom-layer`, `--lower` and `--hooks`, flags first (in the
/// order given, `--custom-layer` before `--lower`), then the file's entries.
/// - Throws: `UsageError` for a malformed flag or the same MATCH given twice on the command line;
///   `CLIError` naming the hooks file and the problem.
func parseHookSpecs(_ args: ParsedArguments) throws -> [KerasHookSpec] {
    var specs: [KerasHookSpec] = []
    do {
        specs += try args.all("--custom-layer").map { try KerasHookSpec(customLayerFlag: $0) }
        specs += try args.all("--lower").map { try KerasHookSpec(lowerFlag: $0) }
    } catch let e as KerasHookSpecError {
        throw UsageError(e.message)
    }
    var seen: [String: String] = [:]
    for s in specs {
        let flag = s.commandLineFlag ?? s.description
        if let earlier = seen[s.match.text] {
            throw UsageError("'\(s.match.text)' is given two conversions: \(earlier) and \(flag); give one")
        }
        seen[s.match.text] = flag
    }
    if let path = args.value("--hooks") {
        _ = try existingFile(path, what: "--hooks")
        do { specs += try KerasHooksFile.load(contentsOf: URL(fileURLWithPath: path)) } catch let e as KerasHookSpecError {
            throw CLIError("--hooks: " + e.message)
        }
    }
    return specs
}

/// The `LayerHook`s for `KerasConversionOptions.hooks` from `--custom-layer`, `--lower` and
/// `--hooks` (see `parseHookSpecs`). Custom layers whose output shape is `auto` take it from the
/// class registered in `MLRuntime.CustomLayerRegistry` when there is one.
func parseHooks(_ args: ParsedArguments) throws -> [LayerHook] {
    // parseHookSpecs lists the flags' specs first, then the file's. A flag whose MATCH selects no
    // layer is an error (a typo); a hooks file may hold entries for several models.
    let specs = try parseHookSpecs(args)
    let flagCount = args.all("--lower").count + args.all("--custom-layer").count
    return Array(specs.prefix(flagCount)).layerHooks(runtimeShapes: runtimeCustomLayerShapes, requireMatch: true)
        + Array(specs.dropFirst(flagCount)).layerHooks(runtimeShapes: runtimeCustomLayerShapes)
}

/// Output shapes of a custom layer class registered in `CustomLayerRegistry`; nil when none is.
let runtimeCustomLayerShapes: KerasCustomLayerShapeFunction = { className, parameters, inputShapes in
    guard let type = CustomLayerRegistry.implementation(for: className) else { return nil }
    return try type.init(parameters: parameters).outputShapes(forInputShapes: inputShapes)
}

/// `KerasConversionOptions` with the hooks of `--custom-layer`, `--lower`, `--hooks` and the
/// `--no-auto-lambda` switch.
func parseKerasHookOptions(_ args: ParsedArguments) throws -> KerasConversionOptions {
    KerasConversionOptions(hooks: try parseHooks(args), autoLowerLambdas: !args.has("--no-auto-lambda"))
}

/// The specs of `--custom-layer`, `--lower`, `--hooks` for a Core ML model's custom layers
/// (`lowerCustomNodes`), with the number of leading ones given as flags (each must select a layer).
func coreMLHookSpecs(_ args: ParsedArguments) throws -> (specs: [KerasHookSpec], required: Int) {
    (try parseHookSpecs(args), args.all("--lower").count + args.all("--custom-layer").count)
}
