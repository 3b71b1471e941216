import Foundation
import Diagnostics
import MLGraph

// Static execution plans of `Model`, one per distinct input-shape signature: the default shapes'
// plan built at load, and plans for the other shapes a flexible-shape input allows
// (`FeatureDescription.shapeFlexibility`, docs/FLEXIBLE_SHAPES.md), built on first use and kept
// in a bounded, lock-guarded cache.

/// Kernels, memory plan and arena pool for one set of input shapes. Immutable once built except
/// for its pool (which has its own lock), so predictions share it across threads.
final class ExecutionPlan: @unchecked Sendable {
    /// The input shapes (in `Graph.inputs` order) this plan runs.
    let inputShapes: [[Int]]
    /// Every tensor's type at these shapes.
    let tensorTypes: [String: TensorType]
    let steps: [Model.Step]
    let memoryPlan: MemoryPlan
    let inputByteCounts: [Int]
    let pool: ArenaPool

    /// Prepares one kernel per node of `typed` (verified and typed at the plan's shapes) and
    /// plans its memory.
    /// - Throws: what `KernelRegistry.makeKernel` throws (`RuntimeError`).
    init(graph typed: Graph, referenceOnly: Bool, threadCount: Int, pooledArenas: Int) throws {
        var kernels: [Kernel] = []
        let scratch = ScratchArena()  // kernels run one at a time: one scratch for all (peak RSS)
        for node in typed.nodes {
            let ctx = KernelContext(node: node, inputTypes: node.inputs.map { typed.tensorTypes[$0]! },
                                    outputTypes: node.outputs.map { typed.tensorTypes[$0]! }, threadCount: threadCount,
                                    scratch: scratch)
            kernels.append(try KernelRegistry.makeKernel(ctx, referenceOnly: referenceOnly))
        }
        let plan = MemoryPlan(graph: typed, inPlace: { kernels[$0].supportsInPlace },
                              inPlaceInput: { kernels[$0].inPlaceInputIndex })
        try ExecutionPlan.checkMemoryLimit(plan, graph: typed)  // MARK: errors (issue 13): --max-memory
        memoryPlan = plan
        steps = zip(typed.nodes, kernels).map { node, kernel in
            Model.Step(node: node.name, kernel: kernel, throwing: kernel as? ThrowingKernel, typed: kernel as? TypedKernel,
                       inputs: node.inputs.map { plan.locations[$0]! }, outputs: node.outputs.map { plan.locations[$0]! })
        }
        inputByteCounts = typed.inputs.map { $0.type.elementCount * $0.type.elementType.byteSize }
        inputShapes = typed.inputs.map(\.type.shape)
        tensorTypes = typed.tensorTypes
        pool = ArenaPool(capacity: Swift.max(0, pooledArenas))
    }
}

/// What the shape-plan cache of a `Model` has done (`Model.shapePlanStatistics`).
public struct ShapePlanStatistics: Sendable, Hashable {
    /// Plans built for non-default input shapes since load (each distinct shape signature is built
    /// once while it stays cached; an evicted one is built again when it returns).
    public var plansBuilt: Int
    /// Predictions at non-default shapes that reused a cached plan.
    public var cacheHits: Int
    /// Plans currently cached (≤ `Model.Configuration.maximumCachedShapePlans`).
    public var cachedPlans: Int
    /// The cached signatures, least recently used first: one shape per input, in input order.
    public var cachedShapes: [[[Int]]]
}

/// Plans for non-default input shapes, least recently used evicted beyond `capacity`. Building
/// happens under the lock, so concurrent first predictions at one new shape build it once.
final class ShapePlanCache: @unchecked Sendable {
    private let lock = NSLock()
    private var plans: [[[Int]]: ExecutionPlan] = [:]
    private var order: [[[Int]]] = []  // least recently used first
    private var built = 0
    private var hits = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = Swift.max(1, capacity) }

    /// The plan for `shapes`, built by `make` when absent.
    func plan(for shapes: [[Int]], make: () throws -> ExecutionPlan) throws -> ExecutionPlan {
        lock.lock(); defer { lock.unlock() }
        if let p = plans[shapes] {
            hits += 1
            if let i = order.firstIndex(of: shapes) { order.remove(at: i) }
            order.append(shapes)
            return p
        }
        let p = try make()
        built += 1
        plans[shapes] = p
        order.append(shapes)
        while order.count > capacity { plans[order.removeFirst()] = nil }
        return p
    }

    var statistics: ShapePlanStatistics {
        lock.lock(); defer { lock.unlock() }
        return ShapePlanStatistics(plansBuilt: built, cacheHits: hits, cachedPlans: plans.count, cachedShapes: order)
    }
}

extension Model {
    /// The shape input `input` runs at for an array of shape `found`: the default shape (also for
    /// `found` without its leading batch 1), else `found` (or `[1] + found`) when the input's
    /// flexibility allows it.
    /// - Throws: `RuntimeError.shapeMismatch` for an input without flexibility,
    ///   `.shapeNotAllowed` naming the input, the found shape and the allowed shapes otherwise.
    func resolvedShape(of input: ValueInfo, found: [Int]) throws -> [Int] {
        let s = input.type.shape
        if found == s || (s.first == 1 && found == Array(s.dropFirst())) { return s }
        if dynamic != nil && Model.fits(found, s) && flexibility[input.name] == nil { return found }
        guard let flex = flexibility[input.name] else {
            throw RuntimeError.shapeMismatch(input: input.name, expected: s, found: found)
        }
        if flex.allows(found) { return found }
        if s.first == 1, flex.allows([1] + found) { return [1] + found }
        throw RuntimeError.shapeNotAllowed(input: input.name, found: found, defaultShape: s, allowed: flex)
    }

    /// The execution plan for `shapes` (one per input, in order): the default plan, or a cached
    /// plan for allowed flexible shapes, built on first use (shape inference at the new shapes,
    /// kernels, memory plan).
    /// - Throws: `RuntimeError.shapeResolutionFailed` when the graph cannot run at `shapes` (a
    ///   node's shape rule refuses them), or what preparing a kernel throws.
    func executionPlan(for shapes: [[Int]]) throws -> ExecutionPlan {
        guard let defaultPlan else {
            throw RuntimeError.kernelFailure(node: "(graph)", message: "the model runs in the dynamic executor and has no static plan")
        }
        if shapes == defaultPlan.inputShapes { return defaultPlan }
        return try shapePlans.plan(for: shapes) {
            let named = Dictionary(zip(graph.inputs.map(\.name), shapes), uniquingKeysWith: { a, _ in a })
            let resolved: Graph
            do {
                resolved = try graph.resolvingInputShapes(named)
            } catch {
                throw RuntimeError.shapeResolutionFailed(
                    shapes: graph.inputs.map(\.name).map { "\($0) \(formatShape(named[$0] ?? []))" }.joined(separator: ", "),
                    message: "", cause: DiagnosticCause(error))
            }
            if DynamicExecutor.isNeeded(for: resolved) {
                throw RuntimeError.shapeResolutionFailed(
                    shapes: graph.inputs.map(\.name).map { "\($0) \(formatShape(named[$0] ?? []))" }.joined(separator: ", "),
                    message: "some tensor shapes stay unknown at these input shapes")
            }
            return try ExecutionPlan(graph: resolved, referenceOnly: configuration.referenceOnly,
                                     threadCount: Swift.max(1, configuration.threadCount),
                                     pooledArenas: configuration.maximumPooledArenas)
        }
    }

    /// What the cache of plans for flexible input shapes has done: plans built, cache hits, the
    /// cached shape signatures. All zero for models without flexible inputs, or when every
    /// prediction used the default shapes (which are planned at load and not counted).
    public var shapePlanStatistics: ShapePlanStatistics { shapePlans.statistics }
}
