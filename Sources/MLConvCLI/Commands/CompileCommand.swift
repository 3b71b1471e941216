import Foundation

/// `mlconv compile model.mlmodel -o model.mlbundle` (what Xcode's Core ML compiler does).
enum CompileCommand: Command {
    static let name = "compile"
    static let summary = "compile a Core ML .mlmodel into a .mlbundle"
    static let help = """
    Usage: mlconv compile <model.mlmodel> -o <out.mlbundle>

    Compiles a Core ML neural-network model into mlconv's runtime bundle.
    """
    static let spec = OptionSpec(single: ["--output"], aliases: ["-o": "--output"], positionalRange: 1...1)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        throw CLIError("reading .mlmodel files is not available in this build yet (tracked by the Core ML .mlmodel issue); convert the Keras source with `mlconv keras` instead")
    }
}
