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

    public var description: String {
        switch self {
        case let .invalidNode(node, op, message): return "node '\(node)' (\(op)): \(message)"
        case let .invalidTopology(m): return "invalid graph: \(m)"
        case let .invalidConstant(m): return "invalid constant: \(m)"
        case let .invalidAttribute(op, attribute, expected, found):
            return "op '\(op)': attribute '\(attribute)' should be \(expected), found \(found); the file is damaged or was written by another mlconv version"
        }
    }
}
