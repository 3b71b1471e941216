import Foundation
import Diagnostics
import MLGraph

/// An implementation of a custom layer (`Op.custom`), shaped like Core ML's `MLCustomLayer`.
///
/// `Model.init` creates one instance per graph node whose `CustomLayerAttributes.className` is
/// registered in `CustomLayerRegistry`: `init(parameters:)`, then `setWeightData(_:)`, then
/// `outputShapes(forInputShapes:)`, whose answer must equal the output shapes recorded in the
/// graph. Each prediction then calls `evaluate(inputs:outputs:)`.
///
/// Layout: every tensor is float32, dense row-major in the IR layout — channels-last with the batch
/// first ([N, H, W, C] for images, [N, steps, features], [N, features]) — not Core ML's
/// [Seq, Batch, C, H, W]. Shapes include the batch dimension.
///
/// Threading: calls to `evaluate` on one instance are serialized by the runtime (concurrent
/// predictions on one `Model` share the instance), so implementations need no locking of their own.
public protocol CustomLayer: AnyObject {
    /// Creates the layer from the parameters stored in the model (Core ML `CustomLayerParams.parameters`).
    /// - Throws: any error when the parameters are invalid; `Model.init` reports it as
    ///   `RuntimeError.customLayerFailure` naming the node.
    init(parameters: [String: CustomParameterValue]) throws

    /// Receives the layer's weights in model order (node weights "w0", "w1", …), in their stored
    /// encoding (call `ConstantTensor.floats()` for float32 values). Called once, before any
    /// `evaluate`. The tensors stay valid for the lifetime of the layer.
    func setWeightData(_ weights: [ConstantTensor]) throws

    /// The output shapes (batch included) for the given input shapes (batch included).
    func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]]

    /// Computes the outputs. `inputs` and `outputs` are views into the runtime's memory, valid only
    /// during the call; outputs never alias inputs, and every output element must be written.
    /// - Throws: any error; the prediction then fails with `RuntimeError.kernelFailure` naming
    ///   the node.
    func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws
}

extension CustomLayer {
    /// Default: ignores the weights (layers without weights).
    public func setWeightData(_ weights: [ConstantTensor]) throws {}
}

/// The process-wide table from custom layer class names (`CustomLayerAttributes.className`, e.g.
/// "ResCropBlockLambda") to implementations. Thread-safe. Register before creating a `Model` that
/// uses the class: a model binds its implementations at load, so later registrations do not
/// affect it.
///
/// Registered by default: `ResCropBlockLambda` and `RescaleOutputLambda` (the fast style transfer
/// model of *Machine Learning with Core ML*, chapter 6).
public enum CustomLayerRegistry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var table: [String: CustomLayer.Type] = [
        ResCropBlockLambda.className: ResCropBlockLambda.self,
        RescaleOutputLambda.className: RescaleOutputLambda.self,
    ]

    /// Registers `type` for `className`, replacing any previous registration (built-ins included).
    public static func register(className: String, _ type: CustomLayer.Type) {
        lock.lock(); defer { lock.unlock() }
        table[className] = type
    }

    /// Removes the registration of `className`, if any.
    public static func unregister(className: String) {
        lock.lock(); defer { lock.unlock() }
        table[className] = nil
    }

    /// The implementation registered for `className`, or nil.
    public static func implementation(for className: String) -> CustomLayer.Type? {
        lock.lock(); defer { lock.unlock() }
        return table[className]
    }

    /// The registered class names, sorted.
    public static var registeredClassNames: [String] {
        lock.lock(); defer { lock.unlock() }
        return table.keys.sorted()
    }
}

// MARK: - Kernel

/// Runs one `Op.custom` node through its `CustomLayer` instance (key "custom" in the reference
/// table). Evaluations are serialized per instance.
final class CustomLayerKernel: ThrowingKernel {
    let layer: CustomLayer
    let inputShapes: [[Int]]
    let outputShapes: [[Int]]
    private let lock = NSLock()

    /// - Throws: `RuntimeError.missingCustomLayer` when the class is not registered;
    ///   `RuntimeError.customLayerFailure` when the layer's init, weights or output shapes fail.
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .custom(a) = ctx.node.op else { return nil }
        guard let type = CustomLayerRegistry.implementation(for: a.className) else {
            throw RuntimeError.missingCustomLayer(className: a.className, layers: [ctx.node.name])
        }
        func failure(_ what: String, _ error: Error) -> RuntimeError {
            .customLayerFailure(node: ctx.node.name, className: a.className, message: what, cause: DiagnosticCause(error))
        }
        let layer: CustomLayer
        do { layer = try type.init(parameters: a.parameters) } catch { throw failure("init(parameters:) failed", error) }
        // Weights "w0", "w1", … in numeric order.
        let weights = ctx.node.weights.sorted { lhs, rhs in
            let l = Int(lhs.key.dropFirst()) ?? Int.max, r = Int(rhs.key.dropFirst()) ?? Int.max
            return l != r ? l < r : lhs.key < rhs.key
        }.map(\.value)
        do { try layer.setWeightData(weights) } catch { throw failure("setWeightData failed", error) }
        let ins = ctx.inputTypes.map(\.shape), outs = ctx.outputTypes.map(\.shape)
        let declared: [[Int]]
        do { declared = try layer.outputShapes(forInputShapes: ins) } catch { throw failure("outputShapes(forInputShapes:) failed", error) }
        guard declared == outs else {
            throw RuntimeError.customLayerFailure(
                node: ctx.node.name, className: a.className,
                message: "the implementation gives output shapes \(declared.map(formatShape)) for inputs \(ins.map(formatShape)), but the graph records \(outs.map(formatShape))")
        }
        return CustomLayerKernel(layer: layer, inputShapes: ins, outputShapes: outs)
    }

    private init(layer: CustomLayer, inputShapes: [[Int]], outputShapes: [[Int]]) {
        self.layer = layer; self.inputShapes = inputShapes; self.outputShapes = outputShapes
    }

    func runThrowing(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) throws {
        let ins = zip(inputShapes, inputs).map { NDArrayView(shape: $0, baseAddress: $1) }
        let outs = zip(outputShapes, outputs).map { NDArrayMutableView(shape: $0, baseAddress: $1) }
        lock.lock(); defer { lock.unlock() }
        try layer.evaluate(inputs: ins, outputs: outs)
    }

    /// Non-throwing entry point of `Kernel`; an error leaves the outputs as NaN. `Model` calls
    /// `runThrowing` instead, so errors reach the caller.
    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        do { try runThrowing(inputs: inputs, outputs: outputs) } catch {
            for (p, s) in zip(outputs, outputShapes) { p.update(repeating: .nan, count: s.reduce(1, *)) }
        }
    }
}

// MARK: - Built-in custom layers

/// Errors of the built-in custom layers.
public struct CustomLayerError: Error, CustomStringConvertible {
    /// What went wrong, naming the layer class and the offending shapes or values.
    public let message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// Built-in `ResCropBlockLambda` (Keras Lambda `x[:, 2:-2, 2:-2]`): removes 2 pixels from every
/// spatial border, [N, H, W, C] → [N, H−4, W−4, C]. One input, one output, no parameters or weights.
public final class ResCropBlockLambda: CustomLayer {
    /// The registered class name, "ResCropBlockLambda".
    public static let className = "ResCropBlockLambda"
    static let border = 2

    /// Ignores the parameters (the layer has none).
    public init(parameters: [String: CustomParameterValue]) throws {}

    /// - Throws: `CustomLayerError` unless there is one rank-4 input with H and W above 4.
    public func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]] {
        guard inputShapes.count == 1, inputShapes[0].count == 4, inputShapes[0][1] > 2 * Self.border,
              inputShapes[0][2] > 2 * Self.border else {
            throw CustomLayerError("ResCropBlockLambda expects one [N, H, W, C] input with H, W > 4, found \(inputShapes.map(formatShape))")
        }
        let s = inputShapes[0]
        return [[s[0], s[1] - 2 * Self.border, s[2] - 2 * Self.border, s[3]]]
    }

    /// Copies the inner (H−4)×(W−4) window, one contiguous output row at a time.
    public func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws {
        let s = inputs[0].shape, b = Self.border
        let (n, h, w, c) = (s[0], s[1], s[2], s[3])
        let rowCount = (w - 2 * b) * c  // one output row is contiguous in the input too
        var dst = outputs[0].baseAddress
        for ni in 0..<n {
            for y in b..<(h - b) {
                dst.update(from: inputs[0].baseAddress + ((ni * h + y) * w + b) * c, count: rowCount)
                dst += rowCount
            }
        }
    }
}

/// Built-in `RescaleOutputLambda` (Keras Lambda `(x + 1) * 127.5`, mapping tanh's [−1, 1] to
/// [0, 255]): elementwise, any shape. One input, one output, no parameters or weights.
public final class RescaleOutputLambda: CustomLayer {
    /// The registered class name, "RescaleOutputLambda".
    public static let className = "RescaleOutputLambda"

    /// Ignores the parameters (the layer has none).
    public init(parameters: [String: CustomParameterValue]) throws {}

    /// - Throws: `CustomLayerError` unless there is exactly one input.
    public func outputShapes(forInputShapes inputShapes: [[Int]]) throws -> [[Int]] {
        guard inputShapes.count == 1 else {
            throw CustomLayerError("RescaleOutputLambda expects one input, found \(inputShapes.count)")
        }
        return inputShapes
    }

    /// y = (x + 1)·127.5, eight values per SIMD step.
    public func evaluate(inputs: [NDArrayView], outputs: [NDArrayMutableView]) throws {
        let n = inputs[0].count
        let src = inputs[0].baseAddress, dst = outputs[0].baseAddress
        typealias V = SIMD8<Float>
        let one = V(repeating: 1), k = V(repeating: 127.5)
        var i = 0
        while i + V.scalarCount <= n {
            let x = UnsafeRawPointer(src + i).loadUnaligned(as: V.self)
            UnsafeMutableRawPointer(dst + i).storeBytes(of: (x + one) * k, as: V.self)
            i += V.scalarCount
        }
        while i < n { dst[i] = (src[i] + 1) * 127.5; i += 1 }
    }
}
