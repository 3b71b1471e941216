// MARK: errors (issue 13): exit codes, the global --max-memory option, and the CLI's own
// error types in the one error model (module Diagnostics).
import Diagnostics
import Foundation

extension UsageError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { .usage }
}

extension CLIError: MLConvDiagnostic {
    var diagnosticCategory: DiagnosticCategory { category }
}

extension GraphDrawingError: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory {
        switch self {
        case .unsupportedExtension: return .usage
        case .dotNotFound: return .unsupportedModel
        case .dotFailed: return .io
        }
    }
}

/// The global options, accepted before the command or among its options.
enum GlobalOptions {
    static let help = """
        Global options (before or after the command):
          --max-memory SIZE   the most memory one allocation a file asks for may take (weights,
                              arrays, decoded images, the runtime's tensor arena); SIZE is bytes
                              with an optional K, M, G or T suffix (512M, 4G) or a percentage of
                              the physical memory (25%). Default: 50% of the physical memory.
                              Files asking for more fail with exit status 6 (resource-limit).
        """

    /// Removes the global options from `arguments` and applies them (`MemoryLimit.set`).
    /// Returns the remaining arguments.
    /// - Throws: `UsageError` for a missing or malformed value.
    static func apply(_ arguments: [String]) throws -> [String] {
        var rest: [String] = []
        var i = 0
        var limit: Int?
        while i < arguments.count {
            let a = arguments[i]
            i += 1
            if a == "--" { rest.append(contentsOf: arguments[(i - 1)...]); break }
            var value: String?
            if a == "--max-memory" {
                guard i < arguments.count else { throw UsageError("--max-memory needs a value (e.g. 512M, 4G, 25%)") }
                value = arguments[i]; i += 1
            } else if a.hasPrefix("--max-memory=") {
                value = String(a.dropFirst("--max-memory=".count))
            } else {
                rest.append(a); continue
            }
            guard let v = value, let bytes = MemoryLimit.parse(v) else {
                throw UsageError("--max-memory takes a size such as 512M, 4G or 25%, found '\(value ?? "")'")
            }
            guard limit == nil else { throw UsageError("--max-memory given twice") }
            limit = bytes
        }
        MemoryLimit.set(limit)
        return rest
    }
}

extension MLConv {
    /// The exit status of `error`: its category's code (see `DiagnosticCategory`).
    static func exitStatus(for error: any Error) -> Int32 {
        Diagnostic.category(of: error).exitCode
    }

    /// The "Exit status" section of `mlconv --help`.
    static var exitStatusHelp: String {
        var s = "Exit status:\n  0   success\n"
        for c in DiagnosticCategory.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            s += "  " + "\(c.rawValue)".padding(toLength: 4, withPad: " ", startingAt: 0)
                + c.name.padding(toLength: 22, withPad: " ", startingAt: 0) + c.meaning + "\n"
        }
        return s + "See docs/ERRORS.md."
    }
}
