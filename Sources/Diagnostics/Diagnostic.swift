// Diagnostics: the one error model of mlconv (issue 13).
//
// Every error type of the package adopts `MLConvDiagnostic`: besides its `description` (one
// sentence, kept stable), it says which file, where in it (layer, node, op, feature, …), what was
// expected, what was found, what to do, which errors caused it (kept as values, not flattened into
// strings), and which exit-code category it belongs to. `Diagnostic` is the value snapshot of any
// error (conforming or not) and `DiagnosticRenderer` prints it the same way everywhere: the CLI's
// stderr, `MLConv`'s `diagnosticMessage(for:)` and the C ABI's last-error message.
// This module depends on nothing (Foundation only for NSError classification), so every module
// can see it.
import Foundation

/// The exit-code category of an error: what kind of failure it is, for scripts that call
/// `mlconv` and for callers of the library. `rawValue` is the process exit status.
///
/// The numbers keep the statuses mlconv used before the categories existed: 1 for a bad input
/// file (most errors were about the input), 2 for usage (as getopt tools and argparse do), 3 for
/// `compare --min-snr`. 70 for internal errors is sysexits.h's EX_SOFTWARE.
public enum DiagnosticCategory: Int32, CaseIterable, Sendable, CustomStringConvertible {
    /// An input file is missing, unreadable, not of the expected kind, truncated or damaged.
    case inputFile = 1
    /// The command line is wrong: unknown command or option, missing or malformed value.
    case usage = 2
    /// A numeric check failed: `compare --min-snr` found an output below the threshold.
    case numericCheckFailed = 3
    /// The file is valid but uses a layer, op, feature or configuration mlconv does not handle.
    case unsupportedModel = 4
    /// Writing an output failed: unwritable directory, disk full, rename failure.
    case io = 5
    /// A file asks for more memory than `--max-memory` allows.
    case resourceLimit = 6
    /// A bug in mlconv (an invariant broke, a kernel failed). Please report it.
    case `internal` = 70

    /// The exit status of the process.
    public var exitCode: Int32 { rawValue }

    /// The name used in `mlconv --help` and docs/ERRORS.md.
    public var name: String {
        switch self {
        case .inputFile: return "input-file"
        case .usage: return "usage"
        case .numericCheckFailed: return "numeric-check-failed"
        case .unsupportedModel: return "unsupported-model"
        case .io: return "io"
        case .resourceLimit: return "resource-limit"
        case .internal: return "internal"
        }
    }

    /// One line saying what the category means.
    public var meaning: String {
        switch self {
        case .inputFile: return "an input file is missing, unreadable, of the wrong kind, truncated or damaged"
        case .usage: return "bad command line (unknown command or option, missing or malformed value)"
        case .numericCheckFailed: return "a numeric check failed (compare --min-snr, an fp16 overflow, a diverged update)"
        case .unsupportedModel: return "the model uses a layer, op or feature mlconv does not support"
        case .io: return "writing an output failed (unwritable directory, disk full)"
        case .resourceLimit: return "a file asks for more memory than --max-memory allows"
        case .internal: return "internal error (a bug in mlconv; please report it)"
        }
    }

    public var description: String { name }
}

/// Where in a model a failure is: a Keras layer, a graph node, a MIL op, a feature (model
/// input or output), a tensor, a weight, an object inside a container file, an option.
public struct DiagnosticLocation: Equatable, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case layer, node, op, feature, tensor, weight, object, attribute, option, function, input, output
    }
    public var kind: Kind
    public var name: String
    public init(_ kind: Kind, _ name: String) { self.kind = kind; self.name = name }
    /// "layer 'conv1'".
    public var description: String { "\(kind.rawValue) '\(name)'" }
}

/// What every mlconv error says about itself. All members but `diagnosticCategory` have
/// defaults (nothing known), so adopting the protocol is one extension per type.
public protocol MLConvDiagnostic: Error {
    /// The exit-code category.
    var diagnosticCategory: DiagnosticCategory { get }
    /// One sentence saying what failed. Default: `String(describing: self)` (the `description`).
    var diagnosticSummary: String { get }
    /// The file the failure concerns (as given by the user), if any.
    var diagnosticFile: String? { get }
    /// Where inside it (layer, node, op, feature, …).
    var diagnosticLocation: DiagnosticLocation? { get }
    /// What was expected.
    var diagnosticExpected: String? { get }
    /// What was found instead.
    var diagnosticFound: String? { get }
    /// What to do about it.
    var diagnosticHint: String? { get }
    /// The errors that caused this one, outermost first (kept as values).
    var diagnosticCauses: [any Error] { get }
}

public extension MLConvDiagnostic {
    var diagnosticSummary: String { String(describing: self) }
    var diagnosticFile: String? { nil }
    var diagnosticLocation: DiagnosticLocation? { nil }
    var diagnosticExpected: String? { nil }
    var diagnosticFound: String? { nil }
    var diagnosticHint: String? { nil }
    var diagnosticCauses: [any Error] { [] }
}

/// The value snapshot of an error: the fields of `MLConvDiagnostic` with the causes converted
/// recursively. Built from any error: non-conforming ones are classified by `Diagnostic.category(of:)`.
public struct Diagnostic: Equatable, Sendable, CustomStringConvertible {
    public var category: DiagnosticCategory
    public var summary: String
    public var file: String?
    public var location: DiagnosticLocation?
    public var expected: String?
    public var found: String?
    public var hint: String?
    public var causes: [Diagnostic]
    /// The Swift type name of the error it was made from ("KerasConversionError").
    public var errorType: String

    public init(category: DiagnosticCategory, summary: String, file: String? = nil, location: DiagnosticLocation? = nil,
                expected: String? = nil, found: String? = nil, hint: String? = nil, causes: [Diagnostic] = [],
                errorType: String = "Diagnostic") {
        self.category = category; self.summary = summary; self.file = file; self.location = location
        self.expected = expected; self.found = found; self.hint = hint; self.causes = causes; self.errorType = errorType
    }

    /// Snapshot of `error` (causes to a depth of 16, which no real chain reaches).
    public init(_ error: any Error) { self.init(error, depth: 0) }

    private init(_ error: any Error, depth: Int) {
        if let d = error as? Diagnostic { self = d; return }
        errorType = String(describing: type(of: error))
        if let d = error as? any MLConvDiagnostic {
            category = d.diagnosticCategory
            summary = d.diagnosticSummary
            file = d.diagnosticFile; location = d.diagnosticLocation
            expected = d.diagnosticExpected; found = d.diagnosticFound; hint = d.diagnosticHint
            causes = depth < 16 ? d.diagnosticCauses.map { Diagnostic($0, depth: depth + 1) } : []
        } else {
            category = Diagnostic.category(of: error)
            summary = Diagnostic.summary(of: error)
            causes = []
        }
    }

    /// The category of any error: its own for `MLConvDiagnostic`s; for Foundation errors, a
    /// missing or unreadable file is `.inputFile`, other file-system errors are `.io`; anything
    /// else is `.internal` (an error type that has not adopted the protocol).
    public static func category(of error: any Error) -> DiagnosticCategory {
        if let d = error as? Diagnostic { return d.category }
        if let d = error as? any MLConvDiagnostic { return d.diagnosticCategory }
        let ns = error as NSError
        if ns.domain == NSCocoaErrorDomain {
            switch ns.code {
            case NSFileNoSuchFileError, NSFileReadNoSuchFileError, NSFileReadNoPermissionError,
                 NSFileReadCorruptFileError, NSFileReadUnknownError, NSFileReadInvalidFileNameError,
                 NSFileReadTooLargeError, NSFileReadUnknownStringEncodingError, NSFileReadInapplicableStringEncodingError:
                return .inputFile
            case NSFileWriteUnknownError, NSFileWriteNoPermissionError, NSFileWriteInvalidFileNameError,
                 NSFileWriteOutOfSpaceError, NSFileWriteVolumeReadOnlyError, NSFileWriteFileExistsError,
                 NSFileWriteInapplicableStringEncodingError:
                return .io
            case NSPropertyListReadCorruptError, NSCoderReadCorruptError, 3840 /* JSON */:
                return .inputFile
            default: return .internal
            }
        }
        if ns.domain == NSPOSIXErrorDomain { return ns.code == Int(ENOENT) ? .inputFile : .io }
        if error is DecodingError { return .inputFile }
        return .internal
    }

    /// The sentence of an error that does not adopt `MLConvDiagnostic`: Foundation's file and
    /// POSIX errors give their `localizedDescription` ("The file “w.json” couldn’t be opened
    /// because there is no such file."), which says more than their `description` (a domain
    /// and code); anything else its `description`.
    static func summary(of error: any Error) -> String {
        let ns = error as NSError
        if ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain { return ns.localizedDescription }
        return String(describing: error)
    }

    public var description: String { summary }
}

extension Diagnostic: MLConvDiagnostic {
    public var diagnosticCategory: DiagnosticCategory { category }
    public var diagnosticSummary: String { summary }
    public var diagnosticFile: String? { file }
    public var diagnosticLocation: DiagnosticLocation? { location }
    public var diagnosticExpected: String? { expected }
    public var diagnosticFound: String? { found }
    public var diagnosticHint: String? { hint }
    public var diagnosticCauses: [any Error] { causes }
}

/// Prints diagnostics the same way everywhere:
///
/// ```text
/// <prefix>error: <summary>
///   file: model.h5
///   at: layer 'conv1'
///   expected: …
///   found: …
///   hint: …
///   caused by: <summary of the cause>
///     file: …
/// ```
///
/// A field is printed only when the error knows it and the summary does not already say it
/// (the summary contains the value, or a line with that label: the `description`s written
/// before this module already name file, layer, expected and found, and stay as they were).
public enum DiagnosticRenderer {
    /// Renders `error` (see the type comment). `prefix` goes before "error: " ("mlconv keras: ").
    public static func render(_ error: any Error, prefix: String = "") -> String {
        render(Diagnostic(error), prefix: prefix)
    }

    public static func render(_ d: Diagnostic, prefix: String = "") -> String {
        var lines = ["\(prefix)error: \(d.summary)"]
        appendFields(d, indent: "  ", to: &lines)
        return lines.joined(separator: "\n")
    }

    /// The message without the "error: " line prefix (for API and C ABI messages).
    public static func message(_ error: any Error) -> String {
        let d = Diagnostic(error)
        var lines = [d.summary]
        appendFields(d, indent: "  ", to: &lines)
        return lines.joined(separator: "\n")
    }

    private static func appendFields(_ d: Diagnostic, indent: String, to lines: inout [String]) {
        func has(_ label: String) -> Bool {
            d.summary.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label + ":") }
        }
        func add(_ label: String, _ value: String?, skipIfMentioned: String? = nil) {
            guard let value, !value.isEmpty, !has(label) else { return }
            if let m = skipIfMentioned ?? Optional(value), d.summary.contains(m) { return }
            lines.append("\(indent)\(label): \(value)")
        }
        add("file", d.file)
        add("at", d.location?.description, skipIfMentioned: d.location.map { "'\($0.name)'" })
        add("expected", d.expected)
        add("found", d.found)
        add("hint", d.hint)
        for c in d.causes {
            let sub = c.summary.split(separator: "\n", omittingEmptySubsequences: false)
            lines.append("\(indent)caused by: \(sub.first.map(String.init) ?? "")")
            for extra in sub.dropFirst() { lines.append("\(indent)  \(extra)") }
            appendFields(c, indent: indent + "  ", to: &lines)
        }
    }
}
