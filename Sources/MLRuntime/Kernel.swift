import MLGraph

/// What a kernel factory sees of the node it must run, with every shape resolved.
public struct KernelContext {
    public let node: Node
    /// Static types of `node.inputs`, in order.
    public let inputTypes: [TensorType]
    /// Static types of `node.outputs`, in order.
    public let outputTypes: [TensorType]
    /// Maximum threads the kernel may use (from `Model.Configuration.threadCount`).
    public let threadCount: Int

    public init(node: Node, inputTypes: [TensorType], outputTypes: [TensorType], threadCount: Int) {
        self.node = node; self.inputTypes = inputTypes; self.outputTypes = outputTypes; self.threadCount = threadCount
    }
}

/// A prepared, immutable implementation of one node (TFLite Prepare/Eval split):
/// the factory validates and packs weights once at load and may throw; `run` only computes,
/// never throws and never allocates tensors. `run` may be called concurrently from several
/// threads with different buffers, so kernels hold no per-call mutable state.
///
/// Buffers are float32, dense row-major in the IR layout (NHWC etc.), sized exactly
/// `inputTypes[i].elementCount` / `outputTypes[i].elementCount`. An output buffer never aliases
/// an input buffer unless the kernel declares `supportsInPlace`.
public protocol Kernel: AnyObject {
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>])
}

extension Kernel {
    /// Whether output 0 may share the buffer of input 0 (elementwise kernels).
    public var supportsInPlace: Bool { false }
}

/// Builds a kernel for a node, or returns nil when this implementation does not cover the node's
/// configuration (the registry then tries the next one). Throws for invalid nodes.
public typealias KernelFactory = (KernelContext) throws -> Kernel?

/// Errors from loading or running a model. Messages name the model, node or input, expected and
/// found values, and what to do.
public enum RuntimeError: Error, CustomStringConvertible {
    case unsupportedOp(node: String, op: String, message: String)
    case missingCustomLayer(className: String, layers: [String])
    case missingInput(name: String, expected: [String])
    case unknownInput(name: String, expected: [String])
    case shapeMismatch(input: String, expected: [Int], found: [Int])
    case kernelFailure(node: String, message: String)

    public var description: String {
        switch self {
        case let .unsupportedOp(node, op, message):
            return "node '\(node)': no kernel for \(op): \(message)"
        case let .missingCustomLayer(className, layers):
            return "custom layer class '\(className)' (used by layer(s) \(layers.joined(separator: ", "))) has no registered implementation; register one with CustomLayerRegistry.register(className:) before loading, or convert with a --lower hook"
        case let .missingInput(name, expected):
            return "missing input '\(name)'; the model's inputs are: \(expected.joined(separator: ", "))"
        case let .unknownInput(name, expected):
            return "unknown input '\(name)'; the model's inputs are: \(expected.joined(separator: ", "))"
        case let .shapeMismatch(input, expected, found):
            return "input '\(input)' should have shape \(formatShape(expected)) (a leading batch 1 may be omitted), found \(formatShape(found))"
        case let .kernelFailure(node, message):
            return "node '\(node)': \(message)"
        }
    }
}
