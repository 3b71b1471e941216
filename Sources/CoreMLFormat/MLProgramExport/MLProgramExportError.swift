// Errors of the ML program writer (blob file, package, IR → MIL export, compression).
import Diagnostics

/// A failure of writing an ML program. Every case names what was being written (file, op, tensor),
/// what was expected and found, and what to do.
public enum MLProgramExportError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A value does not fit the blob data type it is written as (sub-byte ranges: int4 −8…7,
    /// uintN 0…2ⁿ−1), or a blob is larger than the format's 64-bit sizes.
    case blobValueOutOfRange(dataType: String, index: Int, value: Int, range: ClosedRange<Int>)
    /// The blob data type is not one a writer entry point takes (e.g. `append(subByte:)` with
    /// `.float32`).
    case unsupportedBlobDataType(String, reason: String)
    /// A file or directory of the package could not be written. `cause`: the underlying error
    /// (`AtomicFileError`, a Foundation error), kept as a value; `reason` is then empty.
    case cannotWrite(path: String, reason: String, cause: DiagnosticCause? = nil)
    /// An IR node has no ML program (MIL) lowering; `reason` says why and what to do.
    case unsupportedOp(node: String, op: String, reason: String)
    /// The graph or option is not expressible at the requested deployment target.
    case unsupportedTarget(what: String, target: String, minimum: String)
    /// A graph or model property the exporter relies on is missing or inconsistent.
    case invalidGraph(what: String, expected: String, found: String)
    /// A compression request that cannot be applied (bad bit width, group size, sparsity, …).
    case invalidCompression(what: String, expected: String, found: String)

    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        switch self {
        case let .blobValueOutOfRange(t, i, v, r):
            return "weight blob (\(t)): element \(i) is \(v), outside \(r.lowerBound)…\(r.upperBound); "
                + "quantize to the type's range before writing"
        case let .unsupportedBlobDataType(t, reason):
            return "weight blob: data type \(t) \(reason)"
        case let .cannotWrite(path, reason, cause):
            let detail = includingCause ? cause.appended(to: reason) : reason
            return "\(path): cannot write\(detail.isEmpty ? "" : ": " + detail). Check that the parent directory exists and is writable."
        case let .unsupportedOp(node, op, reason):
            return "node '\(node)' (\(op)): no ML program lowering: \(reason)"
        case let .unsupportedTarget(what, target, minimum):
            return "\(what) needs --target \(minimum) or later; the requested target is \(target)"
        case let .invalidGraph(what, expected, found):
            return "\(what): expected \(expected), found \(found)"
        case let .invalidCompression(what, expected, found):
            return "\(what): expected \(expected), found \(found)"
        }
    }
}
