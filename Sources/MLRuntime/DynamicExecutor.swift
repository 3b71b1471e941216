import Foundation
import Diagnostics
import MLGraph

// The dynamic executor of `Model`: graphs with control flow (`cond`, `whileLoop`), tensor lists,
// or dimensions known only at prediction time (docs/ARCHITECTURE.md, "Control flow and dynamic
// shapes"). Buffers are allocated per run at the actual shapes; blocks run recursively; other ops
// run their usual kernels, built for the actual shapes on first use and cached by shape.

/// A tensor of the dynamic executor: concrete shape, element type, 64-byte aligned bytes (zeroed).
final class DynamicTensor {
    let type: TensorType
    let data: UnsafeMutableRawPointer
    let byteCount: Int

    init(_ type: TensorType) {
        self.type = type
        byteCount = type.elementCount * type.elementType.byteSize
        data = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(64, (byteCount + 63) / 64 * 64), alignment: 64)
        data.initializeMemory(as: UInt8.self, repeating: 0, count: Swift.max(64, (byteCount + 63) / 64 * 64))
    }

    convenience init(_ array: NDArray) {
        self.init(TensorType(array.shape, array.elementType))
        array.withUnsafeBytes { if let p = $0.baseAddress { data.copyMemory(from: p, byteCount: Swift.min($0.count, byteCount)) } }
    }

    deinit { data.deallocate() }

    var elementCount: Int { type.elementCount }

    /// Element `i` as an integer: int32 / int64 exactly, float32 truncated toward zero (NaN and
    /// out-of-range values give nil), bool as 0 / 1.
    func integer(_ i: Int) -> Int? {
        switch type.elementType {
        case .int32: return Int(data.load(fromByteOffset: i * 4, as: Int32.self))
        case .int64: return Int(data.load(fromByteOffset: i * 8, as: Int64.self))
        case .bool: return data.load(fromByteOffset: i, as: UInt8.self) != 0 ? 1 : 0
        case .float32:
            let f = data.load(fromByteOffset: i * 4, as: Float.self)
            return f.isFinite && abs(f) < 1e15 ? Int(f) : nil
        case .float16:
            let f = Float(data.load(fromByteOffset: i * 2, as: Float16.self))
            return f.isFinite ? Int(f) : nil
        }
    }

    /// Truth of a one-element predicate: non-zero (NaN is true, as C and NumPy's bool()).
    var truth: Bool {
        switch type.elementType {
        case .float32: return data.load(as: Float.self) != 0
        case .float16: return Float(data.load(as: Float16.self)) != 0
        default: return (integer(0) ?? 0) != 0
        }
    }

    func ndarray() throws -> NDArray {
        if type.elementType == .float32 {
            return try NDArray(shape: type.shape, scalars: Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: elementCount)))
        }
        return try NDArray(shape: type.shape, elementType: type.elementType, bytes: Array(UnsafeRawBufferPointer(start: data, count: byteCount)))
    }
}

/// A tensor list value (MIL `List`): elements of one element type; `elementShape` may hold
/// unknown dimensions; nil elements were never written (they read as zeros when the element
/// shape is known).
struct TensorList {
    var elementShape: [Int]
    var elementType: ElementType
    var dynamicLength: Bool
    var items: [DynamicTensor?]
}

/// A value of the dynamic executor.
enum DynamicValue {
    case tensor(DynamicTensor)
    case list(TensorList)
}

/// Runs a verified, typed graph with per-run buffers (see the file comment). Thread-safe: the
/// kernel cache is guarded by a lock; values are per run.
final class DynamicExecutor: @unchecked Sendable {
    let graph: Graph
    let referenceOnly: Bool
    let threadCount: Int
    /// Scratch memory shared by the kernels this executor makes (`ScratchArena`).
    private let scratch = ScratchArena()
    let maximumLoopIterations: Int

    private struct KernelKey: Hashable {
        let path: [Int]
        let inputs: [TensorType]
    }
    private let lock = NSLock()
    private var kernels: [KernelKey: (kernel: Kernel, outputs: [TensorType])] = [:]
    /// Entries kept before the cache is emptied (shapes that change every run).
    static let maximumCachedKernels = 4096

    init(graph: Graph, referenceOnly: Bool, threadCount: Int, maximumLoopIterations: Int) {
        self.graph = graph; self.referenceOnly = referenceOnly
        self.threadCount = threadCount; self.maximumLoopIterations = maximumLoopIterations
    }

    /// Whether `graph` needs this executor: a node owns blocks, or a tensor is a list or has an
    /// unknown dimension (list ops, dynamic `fill`, unknown input dimensions).
    static func isNeeded(for graph: Graph) -> Bool {
        graph.nodes.contains { !$0.blocks.isEmpty } || graph.tensorTypes.values.contains { !$0.isFullyKnown }
    }

    /// Op kinds this executor runs itself (not through kernels).
    static let nativeKinds: Set<OpKind> = [.cond, .whileLoop, .makeList, .listRead, .listWrite, .listGather, .listScatter, .listLength, .shape]

    /// Runs the graph on `inputs` (one tensor per graph input, in order, at actual shapes).
    func run(_ inputs: [DynamicTensor]) throws -> [String: NDArray] {
        let values = try run(graph.nodes, names: graph.inputs.map(\.name), values: inputs.map { .tensor($0) },
                             outputs: graph.outputs, path: [])
        var result: [String: NDArray] = [:]
        for (name, v) in zip(graph.outputs, values) {
            guard case let .tensor(t) = v else {
                throw RuntimeError.kernelFailure(node: name, message: "graph output '\(name)' is a tensor list; outputs must be tensors (stack it with listGather)")
            }
            result[name] = try t.ndarray()
        }
        return result
    }

    private func run(_ nodes: [Node], names: [String], values: [DynamicValue], outputs: [String], path: [Int]) throws -> [DynamicValue] {
        var env: [String: DynamicValue] = [:]
        for (n, v) in zip(names, values) { env[n] = v }
        for (i, node) in nodes.enumerated() {
            let ins = try node.inputs.map { name -> DynamicValue in
                guard let v = env[name] else { throw RuntimeError.kernelFailure(node: node.name, message: "tensor '\(name)' has no value") }
                return v
            }
            let outs = try execute(node, ins, path: path + [i])
            for (n, v) in zip(node.outputs, outs) { env[n] = v }
        }
        return try outputs.map { name in
            guard let v = env[name] else { throw RuntimeError.kernelFailure(node: name, message: "output '\(name)' has no value") }
            return v
        }
    }

    private func fail(_ node: Node, _ message: String) -> RuntimeError {
        .kernelFailure(node: node.name, message: "\(node.op.name): \(message)")
    }

    private func tensor(_ v: DynamicValue, _ node: Node, _ what: String) throws -> DynamicTensor {
        guard case let .tensor(t) = v else { throw fail(node, "\(what) is a tensor list, a tensor was expected") }
        return t
    }

    private func list(_ v: DynamicValue, _ node: Node, _ what: String) throws -> TensorList {
        guard case let .list(l) = v else { throw fail(node, "\(what) is a tensor, a tensor list was expected") }
        return l
    }

    /// A one-element index (negative counts from the end when `count` is given).
    private func index(_ t: DynamicTensor, _ i: Int, _ node: Node, _ what: String) throws -> Int {
        guard let v = t.integer(i) else { throw fail(node, "\(what) is not an integer") }
        return v
    }

    private func execute(_ node: Node, _ ins: [DynamicValue], path: [Int]) throws -> [DynamicValue] {
        switch node.op {
        case .cond:
            let pred = try tensor(ins[0], node, "the predicate")
            guard pred.elementCount == 1 else { throw fail(node, "the predicate has \(pred.elementCount) elements, expected 1") }
            let b = pred.truth ? 0 : 1
            let block = node.blocks[b]
            return try run(block.nodes, names: block.inputs, values: Array(ins.dropFirst()), outputs: block.outputs, path: path + [b])
        case .whileLoop:
            let c = node.blocks[0], body = node.blocks[1]
            var vars = ins
            var iterations = 0
            while true {
                let p = try tensor(try run(c.nodes, names: c.inputs, values: vars, outputs: c.outputs, path: path + [0])[0], node, "the cond block's output")
                guard p.elementCount == 1 else { throw fail(node, "the cond block yields \(p.elementCount) elements, expected 1") }
                if !p.truth { break }
                iterations += 1
                guard iterations <= maximumLoopIterations else {
                    throw RuntimeError.iterationLimitExceeded(node: node.name, limit: maximumLoopIterations)
                }
                vars = try run(body.nodes, names: body.inputs, values: vars, outputs: body.outputs, path: path + [1])
            }
            return vars
        case let .makeList(a):
            var n = a.length
            if let l = ins.first {
                n = try index(try tensor(l, node, "the length"), 0, node, "the length")
                guard n >= 0, n <= Node.maxCountAttribute else { throw fail(node, "length \(n) is outside 0…\(Node.maxCountAttribute)") }
            }
            return [.list(TensorList(elementShape: a.elementShape, elementType: a.elementType, dynamicLength: a.dynamicLength,
                                     items: Array(repeating: nil, count: n)))]
        case .listRead:
            let l = try list(ins[0], node, "input 0")
            let i = try position(try index(try tensor(ins[1], node, "the index"), 0, node, "the index"), l, node)
            return [.tensor(try element(l, i, node))]
        case .listWrite:
            var l = try list(ins[0], node, "input 0")
            let i = try index(try tensor(ins[1], node, "the index"), 0, node, "the index")
            try write(&l, i, try tensor(ins[2], node, "the value"), node)
            return [.list(l)]
        case .listGather:
            let l = try list(ins[0], node, "input 0")
            let ix = try tensor(ins[1], node, "the indices")
            let items = try (0..<ix.elementCount).map { try element(l, try position(try index(ix, $0, node, "an index"), l, node), node) }
            return [.tensor(try stack(items, elementShape: l.elementShape, elementType: l.elementType, node))]
        case .listScatter:
            var l = try list(ins[0], node, "input 0")
            let ix = try tensor(ins[1], node, "the indices"), v = try tensor(ins[2], node, "the values")
            guard v.type.rank >= 2, v.type.shape[0] == ix.elementCount else {
                throw fail(node, "values of shape \(formatShape(v.type.shape)) do not hold \(ix.elementCount) elements along axis 0")
            }
            let slice = TensorType(Array(v.type.shape.dropFirst()), v.type.elementType)
            let bytes = slice.elementCount * slice.elementType.byteSize
            for k in 0..<ix.elementCount {
                let e = DynamicTensor(slice)
                e.data.copyMemory(from: v.data + k * bytes, byteCount: bytes)
                try write(&l, try index(ix, k, node, "an index"), e, node)
            }
            return [.list(l)]
        case .listLength:
            let l = try list(ins[0], node, "input 0")
            let t = DynamicTensor(TensorType([1], .int32))
            t.data.storeBytes(of: Int32(l.items.count), as: Int32.self)
            return [.tensor(t)]
        case .shape:
            let x = try tensor(ins[0], node, "input 0")
            let t = DynamicTensor(TensorType([x.type.rank], .int32))
            for (i, d) in x.type.shape.enumerated() { t.data.storeBytes(of: Int32(clamping: d), toByteOffset: i * 4, as: Int32.self) }
            return [.tensor(t)]
        case let .fill(a) where !node.inputs.isEmpty:
            let s = try tensor(ins[0], node, "the shape")
            var shape: [Int] = []
            var n = 1
            for i in 0..<s.elementCount {
                let d = try index(s, i, node, "a dimension")
                let (p, o) = n.multipliedReportingOverflow(by: d)
                guard d >= 1, !o, p <= TensorType.maxElementCount else {
                    throw fail(node, "shape \(formatShape(shape + [d])) has a dimension below 1 or more than 2^40 elements")
                }
                n = p; shape.append(d)
            }
            let t = DynamicTensor(TensorType(shape, a.elementType))
            var v = a.value
            let size = a.elementType.byteSize
            withUnsafeBytes(of: &v) { convertElements($0.baseAddress!, .float32, t.data, a.elementType, count: 1) }
            for i in 1..<Swift.max(1, n) { (t.data + i * size).copyMemory(from: t.data, byteCount: size) }
            return [.tensor(t)]
        default:
            return try runKernel(node, ins, path: path)
        }
    }

    /// `i` wrapped once when negative; throws when outside the list.
    private func position(_ i: Int, _ l: TensorList, _ node: Node) throws -> Int {
        let j = i < 0 ? i + l.items.count : i
        guard j >= 0, j < l.items.count else { throw fail(node, "index \(i) is out of range for a list of length \(l.items.count)") }
        return j
    }

    private func element(_ l: TensorList, _ i: Int, _ node: Node) throws -> DynamicTensor {
        if let t = l.items[i] { return t }
        guard !l.elementShape.contains(TensorType.unknown) else {
            throw fail(node, "element \(i) was never written and the element shape \(formatShape(l.elementShape)) is not known")
        }
        return DynamicTensor(TensorType(l.elementShape, l.elementType))
    }

    private func write(_ l: inout TensorList, _ index: Int, _ value: DynamicTensor, _ node: Node) throws {
        guard TensorType(l.elementShape, l.elementType).admits(value.type) else {
            throw fail(node, "the value \(value.type) does not fit the list's elements \(TensorType(l.elementShape, l.elementType))")
        }
        var i = index
        if i < 0 { i += l.items.count }
        guard i >= 0 else { throw fail(node, "index \(index) is out of range for a list of length \(l.items.count)") }
        if i >= l.items.count {
            guard l.dynamicLength, i < Node.maxCountAttribute else {
                throw fail(node, "index \(index) is out of range for a list of fixed length \(l.items.count)")
            }
            l.items += Array(repeating: nil, count: i + 1 - l.items.count)
        }
        l.items[i] = value
    }

    private func stack(_ items: [DynamicTensor], elementShape: [Int], elementType: ElementType, _ node: Node) throws -> DynamicTensor {
        let shape = items.first?.type.shape ?? elementShape
        guard items.allSatisfy({ $0.type.shape == shape }) else {
            throw fail(node, "the elements have different shapes (\(items.map { formatShape($0.type.shape) }.joined(separator: ", "))); they cannot be stacked")
        }
        guard !shape.contains(TensorType.unknown) else { throw fail(node, "no element to gather and the element shape is not known") }
        guard !items.isEmpty else {
            throw fail(node, "gathering no element would give a tensor with a zero dimension, which the IR does not support")
        }
        let out = DynamicTensor(TensorType([items.count] + shape, elementType))
        let bytes = items[0].byteCount
        for (k, t) in items.enumerated() { (out.data + k * bytes).copyMemory(from: t.data, byteCount: bytes) }
        return out
    }

    /// Runs `node`'s kernel on fresh output buffers at the inputs' actual shapes.
    private func runKernel(_ node: Node, _ ins: [DynamicValue], path: [Int]) throws -> [DynamicValue] {
        let tensors = try ins.enumerated().map { try tensor($1, node, "input \($0)") }
        let key = KernelKey(path: path, inputs: tensors.map(\.type))
        lock.lock()
        var entry = kernels[key]
        lock.unlock()
        if entry == nil {
            let outTypes = try node.inferOutputTypes(key.inputs)
            guard outTypes.allSatisfy(\.isFullyKnown) else {
                throw fail(node, "output shapes \(outTypes) are not known for input shapes \(key.inputs)")
            }
            let ctx = KernelContext(node: node, inputTypes: key.inputs, outputTypes: outTypes, threadCount: threadCount,
                                    scratch: scratch)
            let made = (kernel: try KernelRegistry.makeKernel(ctx, referenceOnly: referenceOnly), outputs: outTypes)
            lock.lock()
            if kernels.count >= Self.maximumCachedKernels { kernels.removeAll() }
            kernels[key] = made
            lock.unlock()
            entry = made
        }
        guard let (kernel, outTypes) = entry else { return [] }
        let outs = outTypes.map { DynamicTensor($0) }
        if let t = kernel as? ThrowingKernel {
            do {
                try t.runThrowing(inputs: tensors.map { UnsafePointer($0.data.assumingMemoryBound(to: Float.self)) },
                                  outputs: outs.map { $0.data.assumingMemoryBound(to: Float.self) })
            } catch { throw RuntimeError.kernelFailure(node: node.name, message: "", cause: DiagnosticCause(error)) }
        } else if let t = kernel as? TypedKernel {
            t.run(typedInputs: tensors.map { UnsafeRawPointer($0.data) }, typedOutputs: outs.map(\.data))
        } else {
            kernel.run(inputs: tensors.map { UnsafePointer($0.data.assumingMemoryBound(to: Float.self)) },
                       outputs: outs.map { $0.data.assumingMemoryBound(to: Float.self) })
        }
        withExtendedLifetime(tensors) {}
        return outs.map { .tensor($0) }
    }
}
