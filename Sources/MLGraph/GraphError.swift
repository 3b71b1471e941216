import Diagnostics

/// Errors from building, inferring or verifying a graph. Every message names the node (and op),
/// the expected and found values, and what to do.
public enum GraphError: Error, CustomStringConvertible, Equatable {
    /// A node is inconsistent (wrong input count, missing weight, bad attribute, shape mismatch).
    case invalidNode(node: String, op: String, message: String)
    /// A tensor is used before it is produced, produced twice, or never produced.
    case invalidTopology(String)
    /// A constant's bytes do not match its shape and encoding.
    case invalidConstant(String)
    /// An op's stored attribute is missing or has the wrong type (decoding a graph).
    case invalidAttribute(op: String, attribute: String, expected: String, found: String)
    /// A graph pass left a graph that does not verify (a bug in the pass). `cause`: the
    /// verifier's `GraphError`, kept as a value (issue 13); `message` is then empty.
    case passProducedInvalidGraph(pass: String, message: String, cause: DiagnosticCause? = nil)
    /// A pass name (e.g. from `--disable-pass`) that the pipeline does not have.
    case unknownPass(name: String, known: [String])
    /// Two passes of one `PassPipeline` share a name.
    case duplicatePassName(String)
    // MARK: graph verifier (issue 13)
    /// `Graph.verify()` refused the graph: the layer, where, expected and found (`GraphVerifier`).
    case verificationFailed(GraphVerificationFailure)

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        switch self {
        case let .invalidNode(node, op, message): return "node '\(node)' (\(op)): \(message)"
        case let .invalidTopology(m): return "invalid graph: \(m)"
        case let .invalidConstant(m): return "invalid constant: \(m)"
        case let .invalidAttribute(op, attribute, expected, found):
            return "op '\(op)': attribute '\(attribute)' should be \(expected), found \(found); the file is damaged or was written by another mlconv version"
        case let .passProducedInvalidGraph(pass, m, cause):
            let d = includingCause ? cause.appended(to: m) : m
            return "graph pass '\(pass)' produced an invalid graph\(d.isEmpty ? "" : ": " + d). This is a bug in the pass: disable it with --disable-pass \(pass) (Model.Configuration.disabledPasses in code) and report it with the model"
        case let .unknownPass(name, known):
            return "unknown graph pass '\(name)'; the known passes are: \(known.joined(separator: ", "))"
        case let .duplicatePassName(name):
            return "two passes of the pipeline are named '\(name)'; give each pass a unique name"
        case let .verificationFailed(f): return f.description
        }
    }
}
