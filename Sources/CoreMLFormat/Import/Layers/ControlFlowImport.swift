// Control flow of NeuralNetwork v2 (branch, loop, loopBreak, loopContinue) → the IR's `cond` and
// `whileLoop` with closed blocks (Sources/MLGraph/Block.swift).
//
// Core ML's nested networks share one blob namespace with the enclosing network: they read any
// blob made before them and their writes (also `copy` overwriting an existing blob) are visible
// afterwards. The IR's blocks are closed, so each nested network becomes a block whose inputs are
// the outer blobs it reads or overwrites (found by `scope`, recursing into nested networks) and
// whose outputs are the blobs it writes that exist outside (or, for a branch, that both branches
// write); the owning node's outputs then replace those blobs.
//
// - branch: `cond` on |input| > 1e-6 (the proto: true when the absolute value exceeds 1e-6);
//   a missing elseBranch passes its operands through.
// - loop: `whileLoop` whose loop variables are the iteration counter, the iteration limit (the
//   input, else maxLoopIterations, when the loop has one), the break flag (when the body holds a
//   loopBreak) and the outer blobs the networks read or write. The condition network runs once
//   before the loop (in the enclosing graph) and again at the end of every body run, so
//   conditionVar is a loop variable; the cond block is conditionVar ≠ 0 (|c| > 1e-6) and
//   counter < limit and no break, per the three cases of LoopLayerParams' comment (no
//   condition network and no limit: the body never runs). After a loopBreak the condition
//   network still runs once more (only its own blobs can tell).
// - loopBreak / loopContinue set a flag (a pseudo-blob of the loop body); every layer after one
//   that may set a flag (the flag layer itself or a branch holding one) is wrapped in a `cond`
//   that runs the rest of the body only while neither flag is set. The continue flag is reset at
//   the start of each body run.
import MLGraph

/// The blobs a Core ML (sub)network reads from outside and the blobs it writes.
struct NetworkScope {
    /// Blobs read before the network writes them, in first-use order.
    var reads: [String] = []
    /// Blobs written (layer outputs, nested networks' writes, the loop flags), in order.
    var writes: [String] = []
}

enum ControlFlowImport {
    static let breakFlag = "__mlconv_loop_break"
    static let continueFlag = "__mlconv_loop_continue"
    static let counter = "__mlconv_loop_counter"
    static let limit = "__mlconv_loop_limit"

    /// Reads and writes of `layers` (nested networks included; the flags of a nested loop's own
    /// loopBreak / loopContinue are that loop's and not reported).
    static func scope(_ layers: [Spec.NeuralNetworkLayer]) -> NetworkScope {
        var s = NetworkScope()
        var defined = Set<String>(), readSet = Set<String>(), writeSet = Set<String>()
        func read(_ n: String) { if !defined.contains(n) && readSet.insert(n).inserted { s.reads.append(n) } }
        func write(_ n: String) { defined.insert(n); if writeSet.insert(n).inserted { s.writes.append(n) } }
        for l in layers {
            for i in l.input { read(i) }
            switch l.layer {
            case let .other(.branch(p)):
                let subs = [p.ifBranch, p.elseBranch].compactMap { $0 }.map { scope($0.layers) }
                for sub in subs { sub.reads.forEach(read) }
                for sub in subs { sub.writes.forEach(write) }
            case let .other(.loop(p)):
                let subs = [p.conditionNetwork, p.bodyNetwork].compactMap { $0 }.map { scope($0.layers) }
                let own: Set<String> = [breakFlag, continueFlag]
                for sub in subs { sub.reads.filter { !own.contains($0) }.forEach(read) }
                for sub in subs { sub.writes.filter { !own.contains($0) }.forEach(write) }
            case .other(.loopBreak): write(breakFlag)
            case .other(.loopContinue): write(continueFlag)
            default: break
            }
            for o in l.output { write(o) }
        }
        return s
    }

    /// Whether layer `l` may set the loop's break or continue flag.
    static func mayStop(_ l: Spec.NeuralNetworkLayer) -> Bool {
        switch l.layer {
        case .other(.loopBreak), .other(.loopContinue): return true
        case .other(.branch): return scope([l]).writes.contains { $0 == breakFlag || $0 == continueFlag }
        default: return false
        }
    }

    static func unique(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}

extension LayerImporter {
    /// Imports `layers` in order into this importer's builder; inside a loop body, the layers
    /// after one that may set a flag are wrapped in a `cond` (file comment).
    func importSequence(_ layers: [Spec.NeuralNetworkLayer], loopBody: Bool) {
        for (i, l) in layers.enumerated() {
            importLayer(l, index: i)
            guard loopBody, i + 1 < layers.count, ControlFlowImport.mayStop(l) else { continue }
            let rest = Array(layers[(i + 1)...])
            do {
                try guardRest(rest)
            } catch let e as LayerImportFailure {
                b.problems.append(.init(layer: rest[0].name, type: Self.typeName(rest[0]), reason: e.ownReason, cause: e.cause?.error))
                for o in ControlFlowImport.scope(rest).writes { b.poisoned.insert(o) }
            } catch {
                b.problems.append(.init(layer: rest[0].name, type: Self.typeName(rest[0]), reason: "", cause: error))
            }
            return
        }
    }

    /// Blobs of `names` that exist (and are not poisoned) in this builder, in order.
    private func existing(_ names: [String]) -> [String] {
        ControlFlowImport.unique(names).filter { b.blobs[$0] != nil && b.blobs[$0] != RecurrentImport.absentState && !b.poisoned.contains($0) }
    }

    /// Imports `layers` as a closed block binding the blobs `bound` (their current tensors' types)
    /// and yielding the blobs `yields`; `prepare` runs first in the block's builder.
    private func block(_ layers: [Spec.NeuralNetworkLayer], bound: [String], yields: [String], loopBody: Bool, label: String,
                       prepare: (ImportBuilder) throws -> Void = { _ in },
                       finish: (LayerImporter) throws -> Void = { _ in }) throws -> Block {
        let sub = ImportBuilder(fileName: b.fileName)
        sub.exact = b.exact
        for n in bound {
            let t = try b.blob(n)
            guard let ty = b.types[t] else { throw LayerImportFailure("internal error: blob '\(n)' has no type") }
            sub.inputs.append(ValueInfo(name: n, type: ty))
            sub.types[n] = ty
            sub.blobs[n] = n
            // Inputs of a block that runs once per owner run (not loop variables) keep the
            // values known at import.
            if label != "body" && label != "condition", let v = b.staticValue(t) { sub.knownValues[n] = v }
        }
        try prepare(sub)
        var consumers: [String: [Int]] = [:]
        for (i, l) in layers.enumerated() { for inp in l.input { consumers[inp, default: []].append(i) } }
        let li = LayerImporter(builder: sub, layers: layers, consumers: consumers, description: description)
        li.importSequence(layers, loopBody: loopBody)
        if sub.problems.isEmpty { try finish(li) }
        if !sub.problems.isEmpty {
            throw LayerImportFailure("its \(label) network cannot be imported: "
                + sub.problems.map { "layer '\($0.layer)' (\($0.type)): \($0.reason)" }.joined(separator: "; "))
        }
        b.warnings += sub.warnings
        let outs = try yields.map { y -> String in
            guard let t = sub.blobs[y] else { throw LayerImportFailure("its \(label) network does not produce blob '\(y)'") }
            return t
        }
        return Block(inputs: bound, nodes: sub.nodes, outputs: outs)
    }

    /// A constant [1] node.
    private func scalar(_ v: Float, _ name: String, in builder: ImportBuilder) throws -> String {
        try builder.emit(name, .constant, [], weights: ["value": ConstantTensor(shape: [1], floats: [v])])
    }

    /// |x| > 1e-6 as a bool tensor (Core ML's truth test of branch and loop conditions).
    private func truth(_ x: String, _ name: String, in builder: ImportBuilder) throws -> String {
        let a = try builder.emit(name + "__abs", .unary(UnaryAttributes(.abs)), [x])
        let eps = try scalar(1e-6, name + "__eps", in: builder)
        return try builder.emit(name + "__true", .compare(.greater), [a, eps])
    }

    /// The rest of a loop body after a layer that may set a flag: runs only while no flag is set.
    private func guardRest(_ rest: [Spec.NeuralNetworkLayer]) throws {
        let name = rest[0].name + "__unless_stopped"
        let flags = existing([ControlFlowImport.breakFlag, ControlFlowImport.continueFlag])
        guard !flags.isEmpty else { importSequence(rest, loopBody: true); return }
        var sum = try b.blob(flags[0])
        if flags.count == 2 { sum = try b.emit(name + "__flags", .elementwise(.add), [sum, try b.blob(flags[1])]) }
        let zero = try scalar(0, name + "__zero", in: b)
        let go = try b.emit(name + "__go", .compare(.equal), [sum, zero])
        let sc = ControlFlowImport.scope(rest)
        let operands = existing(sc.reads + sc.writes + flags)
        let yields = existing(sc.writes)
        let then = try block(rest, bound: operands, yields: yields, loopBody: true, label: "loop body")
        let els = Block(inputs: operands, nodes: [], outputs: yields)
        let outs = try b.emitMulti(name, .cond, [go] + operands.map { try b.blob($0) }, outputs: yields.map { $0 + "__guarded" },
                                   blocks: [then, els])
        for (y, t) in zip(yields, outs) { b.blobs[y] = t }
    }

    /// branch → `cond` (file comment).
    func branch(_ p: Spec.BranchLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer) throws -> [String] {
        guard ins.count == 1 else { throw LayerImportFailure("branch takes one input (the condition), found \(ins.count)") }
        guard let ifNet = p.ifBranch else { throw LayerImportFailure("branch has no ifBranch network") }
        let nets = [ifNet.layers, p.elseBranch?.layers ?? []]
        if let v = b.staticValue(ins[0]), v.count == 1 {
            // A predicate known at import: only the taken network is imported, inline.
            let taken = abs(v[0]) > 1e-6 ? nets[0] : nets[1]
            let before = b.problems.count
            let li = LayerImporter(builder: b, layers: taken, consumers: [:], description: description)
            li.importSequence(taken, loopBody: b.blobs[ControlFlowImport.breakFlag] != nil || b.blobs[ControlFlowImport.continueFlag] != nil)
            if b.problems.count > before {
                throw LayerImportFailure("its \(abs(v[0]) > 1e-6 ? "if" : "else") network (taken: the condition is \(v[0]) at import) cannot be imported")
            }
            return []
        }
        let scopes = nets.map(ControlFlowImport.scope)
        let operands = existing(scopes.flatMap(\.reads) + scopes.flatMap(\.writes))
        let yields = ControlFlowImport.unique(scopes.flatMap(\.writes)).filter { w in
            operands.contains(w) || scopes.allSatisfy { $0.writes.contains(w) }
        }
        let blocks = try zip(nets, ["if", "else"]).map { layers, label in
            try block(layers, bound: operands, yields: yields, loopBody: false, label: label)
        }
        let pred = try truth(ins[0], layer.name, in: b)
        let outs = try b.emitMulti(layer.name, .cond, [pred] + operands.map { try b.blob($0) }, outputs: yields.map { $0 + "__branch" },
                                   blocks: blocks)
        for (y, t) in zip(yields, outs) { b.blobs[y] = t }
        return []
    }

    /// loopBreak / loopContinue: set the flag of the enclosing loop body.
    func loopFlag(_ flag: String, layer: Spec.NeuralNetworkLayer) throws -> [String] {
        guard b.blobs[flag] != nil else {
            throw LayerImportFailure("\(layer.layer.typeName) must be inside a loop's body network")
        }
        b.blobs[flag] = try scalar(1, layer.name, in: b)
        return []
    }

    /// loop → `whileLoop` (file comment).
    func loop(_ p: Spec.LoopLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer) throws -> [String] {
        let name = layer.name
        guard ins.count <= 1 else { throw LayerImportFailure("loop takes no input or one (the iteration count), found \(ins.count)") }
        guard let body = p.bodyNetwork else { throw LayerImportFailure("loop has no bodyNetwork") }
        let condLayers = p.conditionNetwork?.layers ?? []
        let hasCond = p.conditionNetwork != nil && !p.conditionVar.isEmpty
        if !condLayers.isEmpty && p.conditionVar.isEmpty { throw LayerImportFailure("loop has a conditionNetwork but no conditionVar") }
        if hasCond {
            // The condition before the first iteration, in the enclosing graph.
            let before = b.problems.count
            let li = LayerImporter(builder: b, layers: condLayers, consumers: [:], description: description)
            li.importSequence(condLayers, loopBody: false)
            if b.problems.count > before { throw LayerImportFailure("its condition network cannot be imported (see the layers above)") }
            guard b.blobs[p.conditionVar] != nil else { throw LayerImportFailure("its condition network does not produce conditionVar '\(p.conditionVar)'") }
        }
        // Loop variables.
        var vars: [(String, String)] = []  // (name in the blocks, initial tensor)
        vars.append((ControlFlowImport.counter, try scalar(0, name + "__counter0", in: b)))
        var limited = false
        if let n = ins.first {
            vars.append((ControlFlowImport.limit, n)); limited = true
        } else if p.maxLoopIterations > 0 {
            let m = Float(Swift.min(p.maxLoopIterations, UInt64(1) << 40))
            vars.append((ControlFlowImport.limit, try scalar(m, name + "__limit", in: b))); limited = true
        }
        let bodyScope = ControlFlowImport.scope(body.layers)
        let breaks = bodyScope.writes.contains(ControlFlowImport.breakFlag)
        if breaks { vars.append((ControlFlowImport.breakFlag, try scalar(0, name + "__break0", in: b))) }
        let condScope = ControlFlowImport.scope(condLayers)
        let special: Set<String> = [ControlFlowImport.breakFlag, ControlFlowImport.continueFlag, ControlFlowImport.counter, ControlFlowImport.limit]
        let state = existing(bodyScope.reads + bodyScope.writes + condScope.reads + condScope.writes + (hasCond ? [p.conditionVar] : []))
            .filter { !special.contains($0) }
        for s in state { vars.append((s, try b.blob(s))) }
        let names = vars.map(\.0)
        // Blocks bind the loop variables by name; the enclosing builder sees them under those
        // names only inside the blocks, so bind through temporary blob entries.
        let saved = names.map { b.blobs[$0] }
        for (n, t) in vars { b.blobs[n] = t }
        func restoreSpecials() { for (n, old) in zip(names, saved) where special.contains(n) { b.blobs[n] = old } }
        do {
        let condBlock = try block([], bound: names, yields: ["__pred"], loopBody: false, label: "condition", finish: { li in
            let s = li.b
            var preds: [String] = []
            if limited { preds.append(try s.emit("counter_below_limit", .compare(.less), [ControlFlowImport.counter, ControlFlowImport.limit])) }
            if hasCond { preds.append(try self.truth(p.conditionVar, "condition", in: s)) }
            if breaks {
                let zero = try self.scalar(0, "no_break__zero", in: s)
                preds.append(try s.emit("no_break", .compare(.equal), [ControlFlowImport.breakFlag, zero]))
            }
            if preds.isEmpty {
                let zero = try self.scalar(0, "never", in: s)
                preds.append(try s.emit("never__false", .compare(.greater), [zero, zero]))
            }
            var pr = preds[0]
            for (i, q) in preds.dropFirst().enumerated() { pr = try s.emit("all\(i)", .logical(.and), [pr, q]) }
            s.blobs["__pred"] = pr
        })

        let continues = bodyScope.writes.contains(ControlFlowImport.continueFlag)
        let bodyBlock = try block(body.layers, bound: names, yields: names, loopBody: true, label: "body", prepare: { s in
            if continues { s.blobs[ControlFlowImport.continueFlag] = try self.scalar(0, "continue__reset", in: s) }
        }, finish: { li in
            let s = li.b
            s.blobs[ControlFlowImport.counter] = try s.emit("counter__next", .activation(.linear(alpha: 1, beta: 1)), [try s.blob(ControlFlowImport.counter)])
            if hasCond {
                li.importSequence(condLayers, loopBody: false)
            }
        })
        let outs = try b.emitMulti(name, .whileLoop, vars.map(\.1), outputs: names.map { "\(name)__\($0)" }, blocks: [condBlock, bodyBlock])
        for (i, n) in names.enumerated() where !special.contains(n) { b.blobs[n] = outs[i] }
        restoreSpecials()
        return []
        } catch {
            restoreSpecials()
            throw error
        }
    }
}

extension ImportBuilder {
    /// The value of `tensor` (row-major) when it follows from constants and static shapes alone,
    /// through a few shape-arithmetic ops (constant, shape, cast, reshapes, 1-D slices and
    /// reductions, comparisons, add / subtract / multiply, linear activations); nil otherwise.
    /// coremltools' TensorFlow lowering guards list growth with branches whose predicate is such
    /// arithmetic, and whose untaken side need not even be well-typed.
    func staticValue(_ tensor: String, depth: Int = 0) -> [Double]? {
        if let v = knownValues[tensor] { return v }
        guard depth < 64, let node = nodes.last(where: { $0.outputs.contains(tensor) }), node.outputs.count == 1 else { return nil }
        func arg(_ i: Int) -> [Double]? { i < node.inputs.count ? staticValue(node.inputs[i], depth: depth + 1) : nil }
        func pair() -> ([Double], [Double])? {
            guard let x = arg(0) else { return nil }
            if let y = node.inputs.count > 1 ? arg(1) : node.weights["y"].map({ $0.floats().map(Double.init) }) { return (x, y) }
            return nil
        }
        func zipped(_ f: (Double, Double) -> Double) -> [Double]? {
            guard let p = pair() else { return nil }
            let (x, y) = p
            if x.count == y.count { return zip(x, y).map(f) }
            if y.count == 1 { return x.map { f($0, y[0]) } }
            if x.count == 1 { return y.map { f(x[0], $0) } }
            return nil
        }
        switch node.op {
        case .constant:
            guard let w = node.weights["value"], w.shape.reduce(1, *) <= 4096 else { return nil }
            return w.floats().map(Double.init)
        case .shape:
            let s = shape(node.inputs[0])
            return s.allSatisfy({ $0 >= 0 }) ? s.map(Double.init) : nil
        case .cast, .identity, .reshapeND, .reshape, .squeeze, .expandDims:
            return arg(0)
        case let .sliceByIndex(a):
            guard let v = arg(0), shape(node.inputs[0]).count == 1, let ax = a.resolve([v.count])?.first else { return nil }
            return (0..<ax.count).map { v[ax.start + $0 * ax.step] }
        case let .reduce(a):
            guard let v = arg(0), !v.isEmpty, shape(node.inputs[0]).count <= 1 else { return nil }
            switch a.function {
            case .max: return v.max().map { [$0] }
            case .min: return v.min().map { [$0] }
            case .sum: return [v.reduce(0, +)]
            case .prod: return [v.reduce(1, *)]
            case .mean: return [v.reduce(0, +) / Double(v.count)]
            default: return nil
            }
        case let .compare(f):
            return zipped { x, y in
                let r: Bool
                switch f {
                case .equal: r = x == y
                case .notEqual: r = x != y
                case .less: r = x < y
                case .lessEqual: r = x <= y
                case .greater: r = x > y
                case .greaterEqual: r = x >= y
                }
                return r ? 1 : 0
            }
        case let .binary(f):
            switch f {
            case .add: return zipped(+)
            case .sub: return zipped(-)
            case .mul: return zipped(*)
            default: return nil
            }
        case let .elementwise(k) where node.inputs.count == 2:
            switch k {
            case .add: return zipped(+)
            case .subtract: return zipped(-)
            case .multiply: return zipped(*)
            default: return nil
            }
        case let .activation(.linear(alpha, beta)):
            return arg(0).map { $0.map { Double(alpha) * $0 + Double(beta) } }
        default:
            return nil
        }
    }
}

extension ImportBuilder {
    /// The elements of the rank-1 tensor `tensor` where known at import (nil where only known at
    /// run time), e.g. a shape vector concatenated from a run-time length and a constant element
    /// shape; nil when not even the length is static.
    func staticElements(_ tensor: String, depth: Int = 0) -> [Double?]? {
        if let v = staticValue(tensor) { return v }
        let s = shape(tensor)
        guard depth < 64, s.count == 1, s[0] >= 0 else { return nil }
        let unknown = [Double?](repeating: nil, count: s[0])
        guard let node = nodes.last(where: { $0.outputs.contains(tensor) }), node.outputs.count == 1 else { return unknown }
        switch node.op {
        case .cast, .identity, .reshapeND:
            return shape(node.inputs[0]).count == 1 ? staticElements(node.inputs[0], depth: depth + 1) ?? unknown : unknown
        case let .concat(axis) where axis == 0 || axis == -1:
            var out: [Double?] = []
            for i in node.inputs {
                guard let e = staticElements(i, depth: depth + 1) else { return unknown }
                out += e
            }
            return out.count == s[0] ? out : unknown
        default:
            return unknown
        }
    }
}
