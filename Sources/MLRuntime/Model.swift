import Foundation
import Diagnostics
import MLGraph

/// A loaded model, ready to run on the CPU (Core ML's `MLModel`).
///
/// Built from a verified `MLGraph.Graph` (from a converter, or from an `.mlbundle` whose weights
/// are memory-mapped): `init` verifies and types the graph, prepares one kernel per node
/// (oneDNN when available, else the reference kernel), and plans memory once (`MemoryPlan`).
///
/// Tensors have the element type the graph gives them (float32, float16, int32, int64, bool):
/// float kernels compute in float32, typed kernels (`TypedKernel`: casts, comparisons, gathers…)
/// in any type, and a float kernel given a tensor of another type is refused at load
/// (`RuntimeError.elementTypeMismatch`). Arrays are row-major in the IR layout (channels-last,
/// batch first: images are [1, H, W, C]).
///
/// Thread safety: `prediction(from:)` may be called concurrently from any number of threads.
/// Each call borrows a private set of buffers (an arena) from a small pool guarded by a lock;
/// kernels and weights are shared and immutable.
public final class Model: @unchecked Sendable {
    /// Load options.
    public struct Configuration: Sendable, Hashable {
        /// Maximum threads for the optimized (oneDNN, OpenMP) kernels, ≥ 1 (smaller values are
        /// treated as 1). Default: every active core. Passed to each kernel as
        /// `KernelContext.threadCount`; the oneDNN kernels set the OpenMP thread count of the
        /// calling thread for the duration of each run. Reference kernels are single-threaded.
        public var threadCount: Int
        /// Use only the reference kernels (the plain-Swift oracle), never oneDNN, and run the
        /// graph exactly as given (no inference rewrites: `PassPipeline.inference` is skipped).
        public var referenceOnly: Bool
        /// Names of `PassPipeline.inference` passes not to run at load (e.g.
        /// "fuse_pad_into_conv"; `mlconv predict --disable-pass`). Default: none. A name that is
        /// not in the pipeline makes `init` throw `GraphError.unknownPass`.
        public var disabledPasses: Set<String>
        /// How many idle arenas the model keeps for reuse (each about
        /// `MemoryPlan.arenaByteCount` plus input/output bytes); concurrent predictions beyond it
        /// allocate temporary ones. Default 4.
        public var maximumPooledArenas: Int
        /// Most body runs of one `whileLoop` execution before the prediction throws
        /// `RuntimeError.iterationLimitExceeded` (a loop that never ends). Default 10⁷.
        public var maximumLoopIterations: Int
        // MARK: flexible shapes
        /// How many plans (kernels + memory plan) for non-default input shapes of flexible-shape
        /// inputs the model keeps, least recently used evicted first (≥ 1; each costs its
        /// kernels and its pooled arenas). Default 8. See `shapePlanStatistics`.
        public var maximumCachedShapePlans: Int

        /// Options with the defaults documented on each property.
        public init(threadCount: Int = ProcessInfo.processInfo.activeProcessorCount, referenceOnly: Bool = false,
                    maximumPooledArenas: Int = 4, disabledPasses: Set<String> = [], maximumLoopIterations: Int = 10_000_000,
                    maximumCachedShapePlans: Int = 8) {
            self.threadCount = threadCount; self.referenceOnly = referenceOnly
            self.maximumPooledArenas = maximumPooledArenas; self.disabledPasses = disabledPasses
            self.maximumLoopIterations = maximumLoopIterations
            self.maximumCachedShapePlans = maximumCachedShapePlans
        }
    }

    /// One input or output as users see it.
    public struct Feature: Sendable, Hashable {
        /// Tensor name: the key in `prediction(from:)`'s input and output dictionaries.
        public let name: String
        /// Full shape in the IR layout, batch first; −1 (`TensorType.unknown`) for a dimension
        /// known only at prediction time (any size ≥ 1 is accepted; outputs have their actual
        /// shapes). Inputs also accept the shape without a leading batch dimension of 1.
        public let shape: [Int]
        /// Element type: outputs are returned in it; inputs are converted to it.
        public let elementType: ElementType
        /// Free text from the model (Core ML `FeatureDescription.shortDescription`), or "".
        public let shortDescription: String
        /// Set when the feature is an image: the tensor is [1, height, width, channels], 0–255.
        public let image: ImageFeature?
        /// Other shapes an input accepts besides `shape` (IR layout, batch first; nil for fixed
        /// inputs and outputs). See `ShapeFlexibility`, docs/FLEXIBLE_SHAPES.md.
        public var shapeFlexibility: ShapeFlexibility? = nil
    }

    /// What users see of a model (Core ML `MLModelDescription`).
    public struct Description: Sendable, Hashable {
        /// Inputs in model order.
        public let inputs: [Feature]
        /// Outputs in model order.
        public let outputs: [Feature]
        /// Author, license, version, user-defined entries.
        public let metadata: ModelMetadata
        /// Class labels when the model is a classifier.
        public let classLabels: [String]?
        /// Name of the output holding the class probabilities, for classifiers.
        public let probabilitiesOutput: String?
    }

    /// The options the model was loaded with.
    public let configuration: Configuration
    /// Inputs, outputs (names, shapes), metadata.
    public let modelDescription: Description
    /// The verified graph, with every tensor typed.
    public let graph: Graph
    /// Where each tensor lives during a prediction at the inputs' default shapes (other shapes
    /// of flexible inputs get their own plans: `shapePlanStatistics`); empty when the graph runs
    /// in the dynamic executor (control flow, tensor lists or unknown dimensions).
    package let memoryPlan: MemoryPlan
    /// Whether predictions run in the dynamic executor (per-run buffers at actual shapes,
    /// blocks run recursively, kernels built per shape) instead of the static plan.
    public var isDynamic: Bool { dynamic != nil }
    let dynamic: DynamicExecutor?

    struct Step {
        let node: String
        let kernel: Kernel
        let throwing: ThrowingKernel?
        let typed: TypedKernel?
        let inputs: [MemoryPlan.Location]
        let outputs: [MemoryPlan.Location]
    }

    /// The plan at the inputs' default shapes (nil when the graph runs in the dynamic executor).
    let defaultPlan: ExecutionPlan?
    /// Plans at other shapes that flexible inputs allow (ShapePlans.swift).
    let shapePlans: ShapePlanCache
    /// Flexibility of each flexible input, by name.
    let flexibility: [String: ShapeFlexibility]
    private let inputIndex: [String: Int]

    /// Loads `graph`: verifies it, runs the inference rewrites (`PassPipeline.inference` minus
    /// `configuration.disabledPasses`; none with `referenceOnly`), and prepares the kernels.
    /// Graphs already rewritten by `mlconv keras` / `mlconv compile` are unchanged by the rewrites
    /// (they are idempotent); older bundles get them here.
    /// - Throws: `GraphError` when the graph does not verify, `.unknownPass` for a disabled name
    ///   that is not an inference pass, `.passProducedInvalidGraph` naming a pass whose result
    ///   does not verify; `RuntimeError.missingCustomLayer`
    ///   naming the class and every layer using it when a custom class is not registered in
    ///   `CustomLayerRegistry`; `RuntimeError.customLayerFailure`, `.unsupportedOp` or
    ///   `.kernelFailure` naming the node when a kernel cannot be prepared;
    ///   `.elementTypeMismatch` naming the node, tensor, expected and found element types when a
    ///   float32 kernel would read or write a tensor of another type; `GraphError.invalidTopology`
    ///   naming the input when a flexible shape (`FeatureDescription.shapeFlexibility`) does not
    ///   fit the input's default shape.
    public init(graph: Graph, configuration: Configuration = Configuration()) throws {
        try graph.verify()
        try graph.validateShapeFlexibility()
        try PassPipeline.inference.validate(disabling: configuration.disabledPasses)
        var typed = graph
        // Inference rewrites (the reference-only oracle runs the graph exactly as given).
        if !configuration.referenceOnly {
            try PassPipeline.inference.withConstantEvaluator(ReferenceConstantEvaluator.evaluate)
                .run(on: &typed, disabling: configuration.disabledPasses)
        }
        try typed.inferShapes()
        self.graph = typed
        self.configuration = configuration

        // Unregistered custom classes: report each with every layer that uses it.
        var missing: [(className: String, layers: [String])] = []
        for node in typed.nodes {
            guard case let .custom(a) = node.op, CustomLayerRegistry.implementation(for: a.className) == nil else { continue }
            if let i = missing.firstIndex(where: { $0.className == a.className }) {
                missing[i].layers.append(node.name)
            } else {
                missing.append((a.className, [node.name]))
            }
        }
        if let first = missing.first { throw RuntimeError.missingCustomLayer(className: first.className, layers: first.layers) }

        let threads = Swift.max(1, configuration.threadCount)
        self.shapePlans = ShapePlanCache(capacity: configuration.maximumCachedShapePlans)
        var flexibility: [String: ShapeFlexibility] = [:]
        for i in typed.inputs { if let f = typed.shapeFlexibility(ofInput: i.name) { flexibility[i.name] = f } }
        self.flexibility = flexibility
        self.inputIndex = Dictionary(typed.inputs.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.modelDescription = Model.describe(typed)
        if DynamicExecutor.isNeeded(for: typed) {
            // Control flow, lists or run-time shapes: no static plan (docs/ARCHITECTURE.md).
            try Model.checkDynamicGraph(typed)
            self.memoryPlan = MemoryPlan(graph: Graph(inputs: [], outputs: [], nodes: []))
            self.defaultPlan = nil
            self.dynamic = DynamicExecutor(graph: typed, referenceOnly: configuration.referenceOnly, threadCount: threads,
                                           maximumLoopIterations: Swift.max(0, configuration.maximumLoopIterations))
            return
        }
        self.dynamic = nil
        let plan = try ExecutionPlan(graph: typed, referenceOnly: configuration.referenceOnly, threadCount: threads,
                                     pooledArenas: configuration.maximumPooledArenas)
        self.defaultPlan = plan
        self.memoryPlan = plan.memoryPlan
    }

    private static func describe(_ typed: Graph) -> Description {
        let d = typed.description
        func feature(_ name: String, _ described: [FeatureDescription]) -> Feature {
            let f = described.first { $0.name == name }
            let t = typed.tensorTypes[name]!
            return Feature(name: name, shape: t.shape, elementType: t.elementType,
                           shortDescription: f?.shortDescription ?? "", image: f?.image,
                           shapeFlexibility: typed.inputs.contains { $0.name == name } ? f?.shapeFlexibility : nil)
        }
        return Description(
            inputs: typed.inputs.map { feature($0.name, d.inputs) }, outputs: typed.outputs.map { feature($0, d.outputs) },
            metadata: d.metadata, classLabels: d.classLabels, probabilitiesOutput: d.probabilitiesOutput)
    }

    /// Load-time checks of a graph for the dynamic executor: inputs and outputs are tensors; every
    /// op (in blocks too) has a kernel table or runs natively; custom classes are registered.
    private static func checkDynamicGraph(_ g: Graph) throws {
        for i in g.inputs where i.type.isList {
            throw RuntimeError.unsupportedOp(node: i.name, op: "input", message: "graph input '\(i.name)' is a tensor list; model inputs must be tensors")
        }
        for o in g.outputs where g.tensorTypes[o]?.isList == true {
            throw RuntimeError.unsupportedOp(node: o, op: "output", message: "graph output '\(o)' is a tensor list; stack it with listGather")
        }
        func check(_ nodes: [Node]) throws {
            for n in nodes {
                if case let .custom(a) = n.op, CustomLayerRegistry.implementation(for: a.className) == nil {
                    throw RuntimeError.missingCustomLayer(className: a.className, layers: [n.name])
                }
                guard DynamicExecutor.nativeKinds.contains(n.op.kind) || KernelRegistry.reference[n.op.kind] != nil else {
                    throw RuntimeError.unsupportedOp(node: n.name, op: n.op.name, message: "no kernel table has this op")
                }
                for b in n.blocks { try check(b.nodes) }
            }
        }
        try check(g.nodes)
    }

    /// Runs the model.
    /// - Parameter inputs: one array per model input, by name, with the input's shape
    ///   (`modelDescription.inputs[i].shape`) or that shape without its leading batch 1, or, for
    ///   a flexible input (`Feature.shapeFlexibility`), any shape it allows (with or without the
    ///   leading batch 1). Shapes, kernels and the memory plan are resolved once per distinct
    ///   set of input shapes and cached (`Configuration.maximumCachedShapePlans`).
    ///   NaN and infinite values are allowed and propagate as IEEE arithmetic says. An array whose
    ///   element type differs from the input's is converted to it (MIL `cast` semantics: float →
    ///   integer truncates toward zero), so float arrays holding integers feed integer inputs.
    /// - Returns: one array per model output, by name, with the output's full shape and element
    ///   type (`modelDescription.outputs[i].elementType`).
    /// - Throws: `RuntimeError.unknownInput` for a name that is not an input,
    ///   `.missingInput` for an absent input, `.shapeMismatch` naming the input, expected and found
    ///   shapes; `.shapeNotAllowed` naming a flexible input, the found shape and the allowed
    ///   shapes; `.shapeResolutionFailed` when an allowed shape does not go through the graph (a
    ///   node's shape rule refuses it); `.kernelFailure` naming the node when a custom layer's
    ///   `evaluate` throws.
    public func prediction(from inputs: [String: NDArray]) throws -> [String: NDArray] {
        try run(inputs, timings: nil)
    }

    /// Time spent in one node during `profiledPrediction(from:)`.
    public struct NodeTiming: Sendable {
        /// Node name and op (`Op.name`).
        public let node: String
        public let op: String
        /// The kernel type that ran it (e.g. "DNNLConvolutionKernel", "ReferenceConv2D").
        public let kernel: String
        /// Wall-clock milliseconds.
        public let milliseconds: Double
    }

    /// Runs the model like `prediction(from:)` and also returns the time of every node, in
    /// execution order (for `mlconv predict --profile`; timing adds a little overhead).
    /// - Throws: as `prediction(from:)`.
    public func profiledPrediction(from inputs: [String: NDArray]) throws -> ([String: NDArray], [NodeTiming]) {
        var timings: [NodeTiming] = []
        let out = try run(inputs, timings: &timings)
        return (out, timings)
    }

    private func run(_ inputs: [String: NDArray], timings: UnsafeMutablePointer<[NodeTiming]>?) throws -> [String: NDArray] {
        let names = graph.inputs.map(\.name)
        for name in inputs.keys.sorted() where inputIndex[name] == nil {
            throw RuntimeError.unknownInput(name: name, expected: names)
        }
        var arrays: [NDArray] = []
        var shapes: [[Int]] = []
        for input in graph.inputs {
            guard let a = inputs[input.name] else { throw RuntimeError.missingInput(name: input.name, expected: names) }
            shapes.append(try resolvedShape(of: input, found: a.shape))
            arrays.append(a.converted(to: input.type.elementType))
        }
        if let dynamic {
            // Per-run buffers at the actual shapes (a leading batch 1 restored where omitted).
            let tensors = zip(arrays, graph.inputs).map { a, input -> DynamicTensor in
                let t = DynamicTensor(a)
                guard t.type.rank + 1 == input.type.rank else { return t }
                let full = DynamicTensor(TensorType([1] + a.shape, a.elementType))
                full.data.copyMemory(from: t.data, byteCount: t.byteCount)
                return full
            }
            let t0 = DispatchTime.now().uptimeNanoseconds
            let out = try dynamic.run(tensors)
            timings?.pointee.append(NodeTiming(node: "(graph)", op: "dynamic", kernel: "DynamicExecutor",
                                               milliseconds: Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6))
            return out
        }

        let plan = try executionPlan(for: shapes)
        let steps = plan.steps
        let arena = plan.pool.acquire() ?? Arena(plan: plan)
        defer { plan.pool.release(arena) }
        for (i, a) in arrays.enumerated() {
            a.withUnsafeBytes { if let p = $0.baseAddress { arena.inputs[i].copyMemory(from: p, byteCount: $0.count) } }
        }
        for (s, step) in steps.enumerated() {
            let t0 = timings == nil ? 0 : DispatchTime.now().uptimeNanoseconds
            defer {
                if let timings {
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
                    let op = graph.nodes[s].op.name
                    timings.pointee.append(NodeTiming(node: step.node, op: op, kernel: String(describing: type(of: step.kernel)), milliseconds: ms))
                }
            }
            if let t = step.throwing {
                do { try t.runThrowing(inputs: arena.stepInputs[s], outputs: arena.stepOutputs[s]) } catch {
                    throw RuntimeError.kernelFailure(node: step.node, message: "", cause: DiagnosticCause(error))
                }
            } else if let t = step.typed {
                t.run(typedInputs: arena.stepRawInputs[s], typedOutputs: arena.stepRawOutputs[s])
            } else {
                step.kernel.run(inputs: arena.stepInputs[s], outputs: arena.stepOutputs[s])
            }
        }
        var result: [String: NDArray] = [:]
        for name in graph.outputs {
            // A verified graph's outputs are typed and placed by the plan; say so if one is not.
            guard let t = plan.tensorTypes[name], let location = plan.memoryPlan.locations[name] else {
                throw RuntimeError.kernelFailure(node: name, message: "graph output '\(name)' has no type or buffer in the execution plan; please report this model")
            }
            let p = arena.pointer(location)
            if t.elementType == .float32 {
                let f = p.assumingMemoryBound(to: Float.self)
                result[name] = try NDArray(shape: t.shape, scalars: Array(UnsafeBufferPointer(start: f, count: t.elementCount)))
            } else {
                let bytes = Array(UnsafeRawBufferPointer(start: p, count: t.elementCount * t.elementType.byteSize))
                result[name] = try NDArray(shape: t.shape, elementType: t.elementType, bytes: bytes)
            }
        }
        return result
    }
}

extension Model {
    /// Whether `found` fits `expected` where −1 means any size ≥ 1 (a leading batch 1 may be omitted).
    static func fits(_ found: [Int], _ expected: [Int]) -> Bool {
        func same(_ f: [Int], _ e: [Int]) -> Bool {
            f.count == e.count && zip(f, e).allSatisfy { $1 == TensorType.unknown ? $0 >= 1 : $0 == $1 }
        }
        return same(found, expected) || (expected.first == 1 && same(found, Array(expected.dropFirst())))
    }
}

/// The buffers of one prediction: graph inputs, graph outputs, and the shared arena (sizes and
/// offsets in bytes, 64-byte aligned), plus each step's resolved pointers (so that running
/// allocates nothing). The memory is bound to Float (float kernels use it as such); typed kernels
/// read and write it through raw pointers.
final class Arena {
    let inputs: [UnsafeMutableRawPointer]
    let outputs: UnsafeMutableRawPointer
    let arena: UnsafeMutableRawPointer
    private(set) var stepInputs: [[UnsafePointer<Float>]] = []
    private(set) var stepOutputs: [[UnsafeMutablePointer<Float>]] = []
    private(set) var stepRawInputs: [[UnsafeRawPointer]] = []
    private(set) var stepRawOutputs: [[UnsafeMutableRawPointer]] = []

    private static func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let floats = Swift.max(1, (byteCount + 3) / 4)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: floats * MemoryLayout<Float>.size, alignment: 64)
        raw.initializeMemory(as: Float.self, repeating: 0, count: floats)
        return raw
    }

    init(plan: ExecutionPlan) {
        inputs = plan.inputByteCounts.map { Arena.allocate($0) }
        outputs = Arena.allocate(plan.memoryPlan.outputByteCount)
        arena = Arena.allocate(plan.memoryPlan.arenaByteCount)
        stepRawInputs = plan.steps.map { $0.inputs.map { UnsafeRawPointer(pointer($0)) } }
        stepRawOutputs = plan.steps.map { $0.outputs.map { pointer($0) } }
        stepInputs = stepRawInputs.map { $0.map { $0.assumingMemoryBound(to: Float.self) } }
        stepOutputs = stepRawOutputs.map { $0.map { $0.assumingMemoryBound(to: Float.self) } }
    }

    func pointer(_ location: MemoryPlan.Location) -> UnsafeMutableRawPointer {
        switch location {
        case let .input(i): return inputs[i]
        case let .output(offset): return outputs + offset
        case let .arena(offset): return arena + offset
        }
    }

    deinit {
        for p in inputs { p.deallocate() }
        outputs.deallocate()
        arena.deallocate()
    }
}

/// Idle arenas kept for reuse, guarded by a lock.
final class ArenaPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Arena] = []
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// An idle arena, or nil when none is free (the caller then makes one).
    func acquire() -> Arena? {
        lock.lock(); defer { lock.unlock() }
        return idle.popLast()
    }

    func release(_ arena: Arena) {
        lock.lock(); defer { lock.unlock() }
        if idle.count < capacity { idle.append(arena) }
    }
}
