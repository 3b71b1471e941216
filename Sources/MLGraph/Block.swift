/// A nested block of nodes owned by a control-flow node (`Node.blocks`): MIL's `Block`, with
/// the names its owner binds (`inputs`), its nodes in topological order, and the names of the
/// tensors it yields (`outputs`).
///
/// Blocks are closed: a block's nodes read only the block's inputs and tensors produced earlier
/// in the same block (no implicit capture of outer tensors). An importer of MIL programs, whose
/// blocks may read outer values, passes those values as explicit operands of the owning op (extra
/// `cond` operands, extra `whileLoop` loop variables that the body passes through). Tensor names
/// are scoped to the block: they may repeat names of the outer graph or of other blocks.
/// Types of a block's tensors are not recorded in `Graph.tensorTypes`; they follow from the
/// types the owner binds (see `inferOutputTypes(inputs:owner:label:)`).
public struct Block: Hashable, Sendable, Codable {
    /// Names bound by the owning op, in order (e.g. the loop variables of a `whileLoop`).
    public var inputs: [String]
    public var nodes: [Node]
    /// Names of the tensors the block yields, in order (a block input may be yielded directly).
    public var outputs: [String]

    public init(inputs: [String], nodes: [Node], outputs: [String]) {
        self.inputs = inputs; self.nodes = nodes; self.outputs = outputs
    }

    private enum CodingKeys: String, CodingKey { case inputs, nodes, outputs }

    /// Decodes a block; first checks every weight header of its nodes (shape and quantization
    /// parameters, `ConstantHeader.checkLimits`) so that no value from a file reaches
    /// `ConstantTensor` unchecked (the bundle reader checks the top-level nodes' weights itself).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        struct ProbeNode: Decodable {
            var name: String
            var weights: [String: ConstantHeader]?
        }
        for node in try c.decode([ProbeNode].self, forKey: .nodes) {
            for (key, w) in node.weights ?? [:] { try w.checkLimits("weight '\(key)' of node '\(node.name)'") }
        }
        self.init(inputs: try c.decode([String].self, forKey: .inputs), nodes: try c.decode([Node].self, forKey: .nodes),
                  outputs: try c.decode([String].self, forKey: .outputs))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(inputs, forKey: .inputs)
        try c.encode(nodes, forKey: .nodes)
        try c.encode(outputs, forKey: .outputs)
    }

    /// The types of the block's outputs when its inputs have `inputTypes`: runs each node's
    /// shape rule (recursing into nested blocks), checking structure as `Graph.verify` does
    /// (unique node names, each tensor produced once, read after it is produced, outputs exist).
    /// - Throws: `GraphError.invalidNode` naming `owner` and `label` (e.g. "body"), with the
    ///   inner error.
    public func inferOutputTypes(inputs inputTypes: [TensorType], owner: Node, label: String) throws -> [TensorType] {
        try inferTypes(inputs: inputTypes, owner: owner, label: label).outputs
    }

    /// The output types and the type of every tensor of the block (inputs included), by name.
    public func inferTypes(inputs inputTypes: [TensorType], owner: Node, label: String) throws
        -> (outputs: [TensorType], types: [String: TensorType]) {
        func fail(_ m: String) -> GraphError { owner.fail("\(label) block: \(m)") }
        guard inputs.count == inputTypes.count else {
            throw fail("binds \(inputs.count) input name(s), but the op gives it \(inputTypes.count) value(s)")
        }
        var types: [String: TensorType] = [:]
        for (name, t) in zip(inputs, inputTypes) {
            guard types.updateValue(t, forKey: name) == nil else { throw fail("input name '\(name)' is bound twice") }
        }
        var nodeNames = Set<String>()
        for node in nodes {
            guard nodeNames.insert(node.name).inserted else { throw fail("two nodes are named '\(node.name)'") }
            guard !node.outputs.isEmpty else { throw fail("node '\(node.name)' has no outputs") }
            var ins: [TensorType] = []
            for name in node.inputs {
                guard let t = types[name] else {
                    throw fail("node '\(node.name)' (\(node.op.name)) reads tensor '\(name)', which no earlier node or block input produces (blocks are closed: pass outer values as operands of the op)")
                }
                ins.append(t)
            }
            let outs: [TensorType]
            do { outs = try node.inferOutputTypes(ins) } catch { throw fail("\(error)") }
            guard outs.count == node.outputs.count else {
                throw fail("node '\(node.name)' produces \(outs.count) outputs, but \(node.outputs.count) output names are given")
            }
            for (name, t) in zip(node.outputs, outs) {
                if let problem = t.shapeProblem { throw fail("output '\(name)' of node '\(node.name)' would have shape \(formatShape(t.shape)): \(problem)") }
                guard types.updateValue(t, forKey: name) == nil else { throw fail("tensor '\(name)' is produced twice (again by node '\(node.name)')") }
            }
        }
        let outs = try outputs.map { name -> TensorType in
            guard let t = types[name] else { throw fail("output '\(name)' is not produced by any node or block input") }
            return t
        }
        return (outs, types)
    }
}

extension TensorType {
    /// The most specific type covering `self` and `other`: dimensions that differ become
    /// `TensorType.unknown`; nil when element type, rank or list-ness differ (then no type covers
    /// both). Used for `cond` branches and `whileLoop` loop variables.
    public func joined(with other: TensorType) -> TensorType? {
        guard elementType == other.elementType, rank == other.rank, isList == other.isList else { return nil }
        var t = self
        t.shape = zip(shape, other.shape).map { $0 == $1 ? $0 : TensorType.unknown }
        return t
    }

    /// Whether a value of type `actual` (e.g. a run-time shape) fits this type: same element type,
    /// rank and list-ness, and every known dimension equal.
    public func admits(_ actual: TensorType) -> Bool {
        elementType == actual.elementType && rank == actual.rank && isList == actual.isList
            && zip(shape, actual.shape).allSatisfy { $0 == TensorType.unknown || $0 == $1 }
    }
}

extension ConstantHeader {
    /// Checks a decoded weight header before a `ConstantTensor` is built from it: rank ≤ 32,
    /// dimensions 0…2³¹−1, at most 2⁴⁰ elements, quantization with 1…8 bits, an axis within the
    /// rank, one scale (bias) or one per channel, a table of 2^bits entries.
    /// - Throws: `GraphError.invalidConstant` naming `what`.
    public func checkLimits(_ what: String) throws {
        func fail(_ m: String) -> GraphError { .invalidConstant("\(what): \(m)") }
        guard shape.count <= Node.maxRank else { throw fail("rank \(shape.count) exceeds \(Node.maxRank)") }
        var n = 1
        for d in shape {
            guard d >= 0, d <= Int(Int32.max) else { throw fail("dimension \(d) of shape \(formatShape(shape)) is out of range") }
            let (p, o) = n.multipliedReportingOverflow(by: d)
            guard !o, p <= TensorType.maxElementCount else { throw fail("shape \(formatShape(shape)) has more than 2^40 elements") }
            n = p
        }
        switch encoding {
        case .float32, .float16: break
        case let .linear(q):
            guard (1...8).contains(q.bits) else { throw fail("linear quantization with \(q.bits) bits (must be 1…8)") }
            guard q.axis >= 0, q.axis <= Node.maxRank else { throw fail("quantization axis \(q.axis) is out of range") }
            guard !q.scale.isEmpty || n == 0 else { throw fail("linear quantization has no scale") }
            if q.scale.count > 1 {
                guard q.axis < shape.count, q.scale.count == shape[q.axis] else { throw fail("\(q.scale.count) scales for axis \(q.axis) of shape \(formatShape(shape))") }
            }
            guard q.bias.count <= 1 || q.bias.count == q.scale.count else { throw fail("\(q.bias.count) biases for \(q.scale.count) scales") }
        case let .lookupTable(q):
            guard (1...8).contains(q.bits) else { throw fail("look-up table quantization with \(q.bits) bits (must be 1…8)") }
            guard q.table.count == 1 << q.bits else { throw fail("look-up table has \(q.table.count) entries, \(q.bits)-bit codes need \(1 << q.bits)") }
        // MARK: compressed ML program weights (format 2.1)
        case .blockwise, .palettized, .sparse:
            do { try encoding.validate(shape: shape) } catch let GraphError.invalidConstant(m) { throw fail(m) }
        }
    }
}
