// MARK: errors (issue 13): nested causes kept as values.
//
// An error that wraps another one (a Keras conversion error caused by an `HDF5Error`, a runtime
// kernel failure caused by a `GraphError`, an unreadable file caused by a Foundation error)
// stores the underlying error as a `DiagnosticCause` instead of pasting its text into a message
// string, and lists it in `diagnosticCauses`. The renderer prints it on a "caused by:" line with
// its own file, location, expected, found and hint.
import Foundation

/// An underlying error stored inside another error (as an enum associated value or a stored
/// property). A wrapper rather than a bare `any Error` so that the errors holding one stay
/// `Equatable` and `Hashable`: two causes are equal when their `Diagnostic` snapshots are
/// (same type name, category, summary, fields and causes).
public struct DiagnosticCause: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The underlying error, as thrown.
    public let error: any Error

    /// Keeps `error`.
    public init(_ error: any Error) {
        self.error = error
    }

    /// The one-sentence text of the cause as `Diagnostic` sees it: the `diagnosticSummary` of
    /// an `MLConvDiagnostic`, the `localizedDescription` of a Foundation file or POSIX error,
    /// else `String(describing:)`. Used by the wrapping errors' `description`, which keeps the
    /// text it always had.
    public var text: String { Diagnostic(error).summary }

    /// `text`.
    public var description: String { text }

    public static func == (a: DiagnosticCause, b: DiagnosticCause) -> Bool {
        Diagnostic(a.error) == Diagnostic(b.error)
    }

    public func hash(into hasher: inout Hasher) {
        let d = Diagnostic(error)
        hasher.combine(d.errorType)
        hasher.combine(d.summary)
    }
}

public extension Optional where Wrapped == DiagnosticCause {
    /// ": <cause text>" when there is a cause, else "" — for `description`s that append the
    /// cause's text after their own sentence.
    var suffix: String { map { ": " + $0.text } ?? "" }
    /// The cause as a one-element `diagnosticCauses` list ([] when nil).
    var asCauses: [any Error] { map { [$0.error] } ?? [] }
    /// `own`, then ": " and the cause's text when there is a cause; the cause's text alone when
    /// `own` is empty.
    func appended(to own: String) -> String {
        guard let c = self else { return own }
        return own.isEmpty ? c.text : own + ": " + c.text
    }
}
