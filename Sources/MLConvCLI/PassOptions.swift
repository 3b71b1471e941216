import MLGraph

// `--disable-pass NAME` (repeatable) of `mlconv keras`, `compile` and `predict`: the inference
// passes (`PassPipeline.inference`) not to run. Where they run:
// - `keras` / `compile` writing an .mlbundle run the pipeline on the graph they store, minus the
//   disabled passes, and record the disabled names in the bundle's info section;
// - `predict` (and `compare`) load a model through `MLRuntime.Model`, which runs the pipeline at
//   load minus the names the bundle recorded and those given to `predict --disable-pass`.

/// `--disable-pass NAME`, repeatable.
let passOptionSpec = OptionSpec(repeatable: ["--disable-pass"])

/// The help lines of `--disable-pass`, with the known pass names.
let passOptionsHelp = """
  --disable-pass NAME        do not run inference pass NAME; repeatable. Passes, in order:
                             \(PassPipeline.inference.names.joined(separator: ", "))
"""

/// The names given to `--disable-pass`.
/// - Throws: `UsageError` for a name that is not a pass of `PassPipeline.inference`, listing the
///   known names.
func disabledPasses(_ args: ParsedArguments) throws -> Set<String> {
    let names = Set(args.all("--disable-pass"))
    do {
        try PassPipeline.inference.validate(disabling: names)
    } catch let GraphError.unknownPass(name, known) {
        throw UsageError("--disable-pass: unknown pass '\(name)'; the known passes are: \(known.joined(separator: ", "))")
    }
    return names
}

/// What `writeModel` does with the inference passes when it writes an .mlbundle.
struct InferencePasses {
    /// Run `PassPipeline.inference` (minus `disabled`) on the graph before storing it.
    var run: Bool
    /// Passes not to run; recorded in the bundle either way (so loading it keeps them off).
    var disabled: Set<String>

    /// Store the graph as given, recording nothing.
    static let none = InferencePasses(run: false, disabled: [])
}
