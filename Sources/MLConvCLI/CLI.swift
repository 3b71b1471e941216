import Foundation
import MLConv
import Diagnostics

/// Where a command writes: standard output and standard error, replaceable in tests.
public final class Console {
    private let writeOut: (String) -> Void
    private let writeErr: (String) -> Void
    public init(out: @escaping (String) -> Void, err: @escaping (String) -> Void) {
        writeOut = out; writeErr = err
    }
    /// Writes to `output` and `error`. A failed write (EPIPE when the reader has gone, as in
    /// `mlconv inspect … | head`, once SIGPIPE is ignored; a full disk) is dropped, never a trap.
    public convenience init(output: FileHandle, error: FileHandle) {
        self.init(out: { s in try? output.write(contentsOf: Data(s.utf8)) },
                  err: { s in try? error.write(contentsOf: Data(s.utf8)) })
    }
    /// The process's stdout and stderr.
    public static let standard = Console(output: .standardOutput, error: .standardError)

    public func print(_ s: String = "") { writeOut(s + "\n") }
    public func error(_ s: String) { writeErr(s + "\n") }
}

/// One `mlconv` sub-command.
protocol Command {
    static var name: String { get }
    /// One line for `mlconv --help`.
    static var summary: String { get }
    /// Full help text (usage line, arguments, options, examples).
    static var help: String { get }
    static var spec: OptionSpec { get }
    /// Runs the command; returns the exit status. Throws for errors (exit 1) and usage errors (exit 2).
    static func run(_ args: ParsedArguments, console: Console) throws -> Int32
}

/// The mlconv command-line tool.
public enum MLConv {
    public static let version = mlconvVersion  // the library's (MLConv)

    static let commands: [Command.Type] = [
        KerasCommand.self, CompileCommand.self, InspectCommand.self, PredictCommand.self,
        QuantizeCommand.self, CompareCommand.self, OpsCommand.self, UpdateCommand.self,
    ]

    static var usage: String {
        var s = """
        mlconv \(version) — convert, compile, inspect and run Core ML / Keras models on Linux.

        Usage: mlconv <command> [options]

        Commands:

        """
        for c in commands { s += "  " + c.name.padding(toLength: 10, withPad: " ", startingAt: 0) + c.summary + "\n" }
        s += "\nRun `mlconv <command> --help` for a command's options."
        s += "\n\n" + GlobalOptions.help + "\n\n" + exitStatusHelp  // MARK: errors (issue 13)
        return s
    }

    /// Runs mlconv with `arguments` (without the program name). Returns the exit status:
    /// 0 success, else the error's `DiagnosticCategory.exitCode` (message on stderr, printed by
    /// `DiagnosticRenderer`): 1 input file, 2 usage, 3 numeric check failed, 4 unsupported
    /// model, 5 I/O, 6 resource limit, 70 internal.
    public static func main(_ rawArguments: [String], console: Console = .standard) -> Int32 {
        // MARK: errors (issue 13): global options (--max-memory)
        let arguments: [String]
        defer { MemoryLimit.set(nil) }  // the limit holds for this command only
        do { arguments = try GlobalOptions.apply(rawArguments) } catch {
            console.error("mlconv: error: \(error)\n\n" + usage)
            return 2
        }
        guard let first = arguments.first else { console.error(usage); return 2 }
        if first == "--help" || first == "-h" || first == "help" { console.print(usage); return 0 }
        if first == "--version" { console.print("mlconv \(version)"); return 0 }
        guard let command = commands.first(where: { $0.name == first }) else {
            console.error("mlconv: error: unknown command '\(first)'\n\n" + usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") { console.print(command.help); return 0 }
        do {
            let parsed = try parseArguments(rest, command.spec)
            return try command.run(parsed, console: console)
        } catch let e as UsageError {
            console.error("mlconv \(command.name): error: \(e.message)\nRun `mlconv \(command.name) --help` for its usage.")
            return 2
        } catch {
            console.error(DiagnosticRenderer.render(error, prefix: "mlconv \(command.name): "))
            return exitStatus(for: error)
        }
    }
}
