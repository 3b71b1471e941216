import Diagnostics
import MLGraph

/// What a kernel factory sees of the node it must run, with every shape resolved.
public struct KernelContext {
    /// The node: op, attributes, weights, tensor names.
    public let node: Node
    /// Static types of `node.inputs`, in order.
    public let inputTypes: [TensorType]
    /// Static types of `node.outputs`, in order.
    public let outputTypes: [TensorType]
    /// Maximum threads the kernel may use (from `Model.Configuration.threadCount`).
    public let threadCount: Int
    /// Scratch memory shared with the other kernels of the same plan (`ScratchArena`).
    public let scratch: ScratchArena

    /// A context for `node` with the given resolved types; `scratch` defaults to an arena of
    /// this kernel's own (an execution plan passes one arena to all its kernels).
    public init(node: Node, inputTypes: [TensorType], outputTypes: [TensorType], threadCount: Int,
                scratch: ScratchArena = ScratchArena()) {
        self.node = node; self.inputTypes = inputTypes; self.outputTypes = outputTypes; self.threadCount = threadCount
        self.scratch = scratch
    }
}

/// A prepared, immutable implementation of one node (TFLite Prepare/Eval split):
/// the factory validates and packs weights once at load and may throw; `run` only computes,
/// never throws and never allocates tensors. `run` may be called concurrently from several
/// threads with different buffers, so kernels hold no per-call mutable state.
///
/// Buffers are float32 (kernels of other element types adopt `TypedKernel`), dense row-major in the IR layout (NHWC etc.), sized exactly
/// `inputTypes[i].elementCount` / `outputTypes[i].elementCount`. An output buffer never aliases
/// an input buffer unless the kernel declares `supportsInPlace`.
public protocol Kernel: AnyObject {
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>])

    /// Whether output 0 may share the buffer of input 0 (`outputs[0] == inputs[0]`): true only
    /// when output element i depends on input-0 element i alone and on no other input-0 element
    /// (elementwise kernels whose input 0 has the output's shape). Default false. The memory plan
    /// uses it to reuse input 0's buffer when input 0 is not read after this node.
    var supportsInPlace: Bool { get }

    // MARK: residual add fusion (issue 12)
    /// The input whose buffer output 0 may take when `supportsInPlace` (default 0). A convolution
    /// with a fused residual sum (oneDNN `sum` post-op) writes over its residual, input 1.
    var inPlaceInputIndex: Int { get }
}

extension Kernel {
    /// Default: false (outputs get their own buffers).
    public var supportsInPlace: Bool { false }
    /// Default: 0.
    public var inPlaceInputIndex: Int { 0 }
}

/// A kernel whose computation can fail at run time (custom layers, whose `evaluate` throws).
/// `Model` calls `runThrowing` instead of `run` and reports the error as
/// `RuntimeError.kernelFailure` naming the node.
protocol ThrowingKernel: Kernel {
    func runThrowing(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) throws
}

/// Builds a kernel for a node, or returns nil when this implementation does not cover the node's
/// configuration (the registry then tries the next one). Throws for invalid nodes.
public typealias KernelFactory = (KernelContext) throws -> Kernel?

/// Errors from loading or running a model. Messages name the model, node or input, expected and
/// found values, and what to do.
public enum RuntimeError: Error, CustomStringConvertible, Equatable {
    /// No kernel table covers the node's op or configuration (thrown by `Model.init`).
    case unsupportedOp(node: String, op: String, message: String)
    /// The graph uses custom layer class `className` (in the listed layers), and no implementation
    /// is registered in `CustomLayerRegistry` (thrown by `Model.init`).
    case missingCustomLayer(className: String, layers: [String])
    /// A custom layer implementation failed at load (init, weights, or output shapes that disagree
    /// with the graph) — thrown by `Model.init`. `cause`: the implementation's error, kept as a
    /// value (issue 13); `message` then says which step failed.
    case customLayerFailure(node: String, className: String, message: String, cause: DiagnosticCause? = nil)
    /// `prediction(from:)` was not given the model input `name`.
    case missingInput(name: String, expected: [String])
    /// `prediction(from:)` was given `name`, which is not a model input.
    case unknownInput(name: String, expected: [String])
    /// An input array's shape is neither the input's shape nor that shape without its leading
    /// batch dimension of 1.
    case shapeMismatch(input: String, expected: [Int], found: [Int])
    /// An `NDArray` was built with an invalid shape or a scalar count that does not match it.
    case invalidArray(shape: [Int], elementCount: Int, message: String)
    /// A kernel failed: at load (invalid weights or attributes) or, for custom layers, at run time.
    /// `cause`: the kernel's own error, kept as a value (issue 13); `message` is then empty or
    /// names the op.
    case kernelFailure(node: String, message: String, cause: DiagnosticCause? = nil)
    /// A node's kernel computes in `expected` (float32 for every kernel that is not a
    /// `TypedKernel`), but its tensor `tensor` has element type `found` (thrown by `Model.init`).
    /// (`indirect`: boxed, so the five-field payload does not grow every `RuntimeError` value.)
    indirect case elementTypeMismatch(node: String, op: String, tensor: String, expected: ElementType, found: ElementType)
    /// A `whileLoop` ran its body more than `limit` times in one prediction
    /// (`Model.Configuration.maximumLoopIterations`): its condition never became false.
    case iterationLimitExceeded(node: String, limit: Int)
    // MARK: flexible shapes
    /// A flexible input (`Model.Feature.shapeFlexibility`) was given shape `found`, which is
    /// neither its default shape nor one its flexibility allows (`allowed`).
    indirect case shapeNotAllowed(input: String, found: [Int], defaultShape: [Int], allowed: ShapeFlexibility)
    /// Input shapes that the flexibility allows do not go through the graph: a node's shape rule
    /// refuses them (`message` or `cause`, the IR's error, names it). `shapes` lists every
    /// input's shape, e.g. "image (1, 7, 9, 3)".
    case shapeResolutionFailed(shapes: String, message: String, cause: DiagnosticCause? = nil)

    /// The message: names the node or input, expected and found values, what to do, and the
    /// text of the underlying error.
    public var description: String { text(includingCause: true) }

    /// The underlying error, when the case keeps one.
    public var cause: DiagnosticCause? {
        switch self {
        case let .customLayerFailure(_, _, _, c), let .kernelFailure(_, _, c), let .shapeResolutionFailed(_, _, c): return c
        default: return nil
        }
    }

    /// The message; the underlying error's text only when `includingCause`.
    func text(includingCause: Bool) -> String {
        func detail(_ m: String, _ c: DiagnosticCause?) -> String { includingCause ? c.appended(to: m) : m }
        switch self {
        case let .unsupportedOp(node, op, message):
            return "node '\(node)': no kernel for \(op): \(message)"
        case let .missingCustomLayer(className, layers):
            return "custom layer class '\(className)' (used by layer(s) \(layers.joined(separator: ", "))) has no registered implementation; register one with CustomLayerRegistry.register(className:) before loading, or convert with a --lower hook"
        case let .customLayerFailure(node, className, message, cause):
            let d = detail(message, cause)
            return "node '\(node)' (custom layer '\(className)')" + (d.isEmpty ? " failed" : ": " + d)
        case let .missingInput(name, expected):
            return "missing input '\(name)'; the model's inputs are: \(expected.joined(separator: ", "))"
        case let .unknownInput(name, expected):
            return "unknown input '\(name)'; the model's inputs are: \(expected.joined(separator: ", "))"
        case let .shapeMismatch(input, expected, found):
            let count = found.reduce(1, *), want = expected.reduce(1, *)
            let counts = count == want ? "" : " (\(count) elements, expected \(want))"
            return "input '\(input)' should have shape \(formatShape(expected)) (a leading batch 1 may be omitted), found \(formatShape(found))\(counts)"
        case let .invalidArray(shape, elementCount, message):
            return "invalid array of shape \(formatShape(shape)) with \(elementCount) values: \(message)"
        case let .kernelFailure(node, message, cause):
            let d = detail(message, cause)
            return "node '\(node)'" + (d.isEmpty ? ": the kernel failed" : ": " + d)
        case let .elementTypeMismatch(node, op, tensor, expected, found):
            return "node '\(node)' (\(op)): its kernel computes in \(expected), but tensor '\(tensor)' is \(found); insert a cast to \(expected) before the node (or after it, for an output)"
        case let .iterationLimitExceeded(node, limit):
            return "node '\(node)' (whileLoop): the loop ran its body \(limit) times without its condition becoming false; check the loop's inputs, or raise Model.Configuration.maximumLoopIterations"
        case let .shapeNotAllowed(input, found, defaultShape, allowed):
            return "input '\(input)' has shape \(formatShape(found)), which its flexible shape does not allow; allowed: \(formatShape(defaultShape)) (the default) or \(allowed) (a leading batch 1 may be omitted)"
                + RuntimeError.channelOrderHint(found: found, defaultShape: defaultShape, allowed: allowed)
        case let .shapeResolutionFailed(shapes, message, cause):
            let d = detail(message, cause)
            return "the model cannot run at input shapes \(shapes), although the inputs' flexible shapes allow them\(d.isEmpty ? "" : ": " + d); use the default shapes or another allowed shape"
        }
    }
}
