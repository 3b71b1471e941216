// MIL control flow (cond, while_loop) and tensor lists (make_list, list_read, list_write,
// list_gather, list_scatter, list_length) → the IR's cond / whileLoop with closed blocks and its
// list ops. A MIL block reads outer values freely; IR blocks are closed, so an outer run-time
// tensor a block reads is captured: passed as an extra `cond` operand, or as an extra
// `whileLoop` variable that the body passes through unchanged (captures of captures go up
// every enclosing block). Outer constants are re-emitted inside the block.
import MLGraph

/// The state of an enclosing block while a nested one is imported.
struct MILFrame {
    var builder: ImportBuilder
    var constantNodes: [String: String]
    var captures: [(outer: String, inner: String)]
}

extension MILGraphImporter {
    /// The name in the block being imported of IR tensor `t` (defined here or in an enclosing
    /// block, which is then captured as `__cap_<t>`).
    func resolve(_ t: String) throws -> String {
        if b.types[t] != nil { return t }
        let inner = "__cap_" + t
        if b.types[inner] != nil { return inner }
        guard let parent = outerFrames.popLast() else { throw LayerImportFailure("reads tensor '\(t)', which is not defined") }
        let mine = MILFrame(builder: b, constantNodes: constantNodes, captures: captures)
        b = parent.builder; constantNodes = parent.constantNodes; captures = parent.captures
        let outer: String
        do { outer = try resolve(t) } catch {
            outerFrames.append(MILFrame(builder: b, constantNodes: constantNodes, captures: captures))
            b = mine.builder; constantNodes = mine.constantNodes; captures = mine.captures
            throw error
        }
        let type = b.types[outer]
        outerFrames.append(MILFrame(builder: b, constantNodes: constantNodes, captures: captures))
        b = mine.builder; constantNodes = mine.constantNodes; captures = mine.captures
        b.types[inner] = type
        captures.append((outer: outer, inner: inner))
        return inner
    }

    /// Imports `block` as a nested IR block whose inputs have `inputTypes` (bound to the MIL
    /// block inputs): its nodes, input and output names, and the outer tensors it captures.
    /// - Throws: `LayerImportFailure` when an op of the block cannot be imported (the ops' own
    ///   problems are added to the enclosing builder's).
    func nestedBlock(_ block: Spec.MILSpec.Block, inputTypes: [TensorType], label: String)
        throws -> (nodes: [Node], inputs: [String], outputs: [String], captures: [(outer: String, inner: String)]) {
        guard block.inputs.count == inputTypes.count else {
            throw LayerImportFailure("has a \(label) block with \(block.inputs.count) inputs for \(inputTypes.count) values")
        }
        let sub = ImportBuilder(fileName: b.fileName)
        sub.exact = true
        outerFrames.append(MILFrame(builder: b, constantNodes: constantNodes, captures: captures))
        b = sub; constantNodes = [:]; captures = []
        func leave() -> [(outer: String, inner: String)] {
            let mine = captures
            if let parent = outerFrames.popLast() {
                b = parent.builder; constantNodes = parent.constantNodes; captures = parent.captures
            }
            b.problems.append(contentsOf: sub.problems)
            return mine
        }
        var inputs: [String] = []
        var outputs: [String] = []
        do {
            for (input, type) in zip(block.inputs, inputTypes) {
                var t = type
                if let mt = try MILTypes.tensorType(input.type), let s = mt.shape, s.count == t.shape.count {
                    t.shape = zip(t.shape, s).map { $1 < 0 ? TensorType.unknown : $0 }
                }
                sub.types[input.name] = t
                values[input.name] = .tensor(input.name)
                inputs.append(input.name)
            }
            importBlock(block)
            if sub.problems.isEmpty {
                for o in block.outputs {
                    guard let v = values[o] else { throw LayerImportFailure("has a \(label) block output '\(o)' that is not defined") }
                    outputs.append(try tensor(named: o, value: v))
                }
            }
        } catch {
            _ = leave()
            throw error
        }
        let failed = !sub.problems.isEmpty
        let caps = leave()
        if failed { throw LayerImportFailure("has a \(label) block that cannot be imported (see the ops listed)") }
        return (sub.nodes, inputs, outputs, caps)
    }
}

enum MILControlFlowOps {
    static func whileLoop(_ c: MILOpContext) throws -> [MILValue] {
        let imp = c.importer
        guard c.op.blocks.count == 2 else { throw LayerImportFailure("has \(c.op.blocks.count) blocks; while_loop has a condition and a body") }
        let initial = try c.tensors("loop_vars")
        let types = initial.map { c.b.types[$0] ?? TensorType([]) }
        let cond = try imp.nestedBlock(c.op.blocks[0], inputTypes: types, label: "condition")
        guard cond.outputs.count == 1 else { throw LayerImportFailure("has a condition block with \(cond.outputs.count) outputs") }
        let body = try imp.nestedBlock(c.op.blocks[1], inputTypes: types, label: "body")
        guard body.outputs.count == initial.count else {
            throw LayerImportFailure("has a body yielding \(body.outputs.count) values for \(initial.count) loop variables")
        }
        // Every capture of either block is a loop variable of both.
        var caps: [(outer: String, inner: String)] = []
        for cap in cond.captures + body.captures where !caps.contains(where: { $0.outer == cap.outer }) { caps.append(cap) }
        let condBlock = Block(inputs: cond.inputs + caps.map(\.inner), nodes: cond.nodes, outputs: cond.outputs)
        let bodyBlock = Block(inputs: body.inputs + caps.map(\.inner), nodes: body.nodes, outputs: body.outputs + caps.map(\.inner))
        let outs = c.op.outputs.map(\.name) + caps.map { c.name + "__pass_" + $0.inner }
        let results = try c.b.emitMulti(c.name, .whileLoop, initial + caps.map(\.outer), outputs: outs, blocks: [condBlock, bodyBlock])
        return results.prefix(c.op.outputs.count).map { .tensor($0) }
    }

    static func cond(_ c: MILOpContext) throws -> [MILValue] {
        let imp = c.importer
        guard c.op.blocks.count == 2 else { throw LayerImportFailure("has \(c.op.blocks.count) blocks; cond has a true and a false block") }
        let pred = try c.tensor("pred")
        let a = try imp.nestedBlock(c.op.blocks[0], inputTypes: [], label: "true")
        let bb = try imp.nestedBlock(c.op.blocks[1], inputTypes: [], label: "false")
        var caps: [(outer: String, inner: String)] = []
        for cap in a.captures + bb.captures where !caps.contains(where: { $0.outer == cap.outer }) { caps.append(cap) }
        let thenBlock = Block(inputs: caps.map(\.inner), nodes: a.nodes, outputs: a.outputs)
        let elseBlock = Block(inputs: caps.map(\.inner), nodes: bb.nodes, outputs: bb.outputs)
        let results = try c.b.emitMulti(c.name, .cond, [pred] + caps.map(\.outer), outputs: c.op.outputs.map(\.name), blocks: [thenBlock, elseBlock])
        return results.map { .tensor($0) }
    }

    static func makeList(_ c: MILOpContext) throws -> [MILValue] {
        let dtype = try c.string("dtype", default: "fp32")
        guard let t = MILTypes.dataType(named: dtype), let e = MILTypes.irElementType(t) else { throw LayerImportFailure("makes a list of \(dtype)") }
        var shape: [Int] = []
        for (_, v) in try c.bindings("elem_shape") {
            guard case let .constant(k) = v else { throw LayerImportFailure("needs elem_shape known at import") }
            shape += k.doubles().map { Int(exactly: $0) ?? -1 }
        }
        let dynamic = try c.bool("dynamic_length", default: true)
        if case let .constant(k)? = try c.value("init_length")?.1 {
            let n = Int(exactly: k.doubles().first ?? 1) ?? 1
            return [try c.emit(.makeList(MakeListAttributes(elementShape: shape, elementType: e, length: max(0, n), dynamicLength: dynamic)), [])]
        }
        let len = c.has("init_length") ? [try c.tensor("init_length")] : []
        return [try c.emit(.makeList(MakeListAttributes(elementShape: shape, elementType: e, length: len.isEmpty ? 1 : 0, dynamicLength: dynamic)), len)]
    }

    static var mappers: [String: MILOpMapper] {
        [
            "while_loop": whileLoop,
            "cond": cond,
            "make_list": makeList,
            "list_read": { c in [try c.emit(.listRead, [try c.tensor("ls"), try c.tensor("index")])] },
            "list_write": { c in [try c.emit(.listWrite, [try c.tensor("ls"), try c.tensor("index"), try c.tensor("value")])] },
            "list_gather": { c in [try c.emit(.listGather, [try c.tensor("ls"), try c.tensor("indices")])] },
            "list_scatter": { c in [try c.emit(.listScatter, [try c.tensor("ls"), try c.tensor("indices"), try c.tensor("value")])] },
            "list_length": { c in [try c.emit(.listLength, [try c.tensor("ls")])] },
        ]
    }
}
